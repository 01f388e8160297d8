"""strobe_build.py — owns building and installing the strobe package
(python/strobe) for pip: a PEP 517 build backend (pyproject.toml) that needs
only the standard library and the C compiler the interpreter was built with
(sysconfig's CC and LDSHARED), so `pip install ./python` works offline, with
build isolation, without setuptools or the wheel package. It compiles
strobe._strobe (and strobe._server when libstrobe_server is there) against
the libstrobe.so of an installation or a build, found in this order:
STROBE_PREFIX (`make install PREFIX=...`), pkg-config's strobe.pc, then
STROBE_BUILD_DIR (default: the checkout's build/, made by `make build`), and
records that directory as the modules' run path.

Must never: write into the source tree (everything is built in a temporary
directory, so an install leaves no build/ or egg-info behind), build its own
copy of libstrobe (Python spans must land in the same rings as the
process's C scopes), or reach the network.

Also `python3 strobe_build.py --inplace` builds the modules beside the
sources (for running from the checkout without installing).
"""
import base64
import hashlib
import io
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
MODULES = (("_strobe", "strobe/_strobe.c", ["strobe"]), ("_server", "strobe/_server.c", ["strobe_server", "strobe"]))


def _fail(message):
    raise SystemExit(f"strobe: {message}")


def _library():
    """(include dirs, library dir) of the libstrobe to link."""
    prefix = os.environ.get("STROBE_PREFIX")
    if prefix:
        libdir = next((d for d in (os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"))
                       if os.path.exists(os.path.join(d, "libstrobe.so"))), None)
        if not libdir:
            _fail(f"no libstrobe.so under STROBE_PREFIX={prefix} (make install PREFIX={prefix})")
        return [os.path.join(prefix, "include")], libdir
    build = os.environ.get("STROBE_BUILD_DIR")
    if not build:
        try:
            words = shlex.split(subprocess.run(["pkg-config", "--cflags-only-I", "--libs-only-L", "strobe"],
                                               check=True, capture_output=True, text=True).stdout)
            libdirs = [w[2:] for w in words if w.startswith("-L")]
            if libdirs:
                return [w[2:] for w in words if w.startswith("-I")], libdirs[0]
        except (OSError, subprocess.CalledProcessError):
            pass
        build = os.path.join(CHECKOUT, "build")
    build = os.path.abspath(build)
    if not os.path.exists(os.path.join(build, "libstrobe.so")):
        _fail(f"no libstrobe.so in {build}: run `make build` in the checkout first, or set STROBE_BUILD_DIR "
              "(a build directory) or STROBE_PREFIX (an installed prefix)")
    return [d for d in (os.path.join(CHECKOUT, "include"), os.path.join(HERE, "include")) if os.path.isdir(d)], build


def _version(includes):
    for d in includes:
        path = os.path.join(d, "strobe", "strobe.h")
        if os.path.exists(path):
            with open(path) as f:
                return f.read().split('#define STROBE_VERSION_STRING "')[1].split('"')[0]
    _fail(f"no strobe/strobe.h in {includes}")


def _compile(out_dir):
    """Builds the extension modules into out_dir/strobe; returns their paths."""
    includes, libdir = _library()
    cfg = sysconfig.get_config_vars()
    cc = shlex.split(cfg["CC"]) + shlex.split(cfg.get("CFLAGS") or "") + shlex.split(cfg.get("CCSHARED") or "")
    ld = shlex.split(cfg["LDSHARED"])
    incs = ["-I" + d for d in includes + [sysconfig.get_paths()["include"]]]
    os.makedirs(os.path.join(out_dir, "strobe"), exist_ok=True)
    built = []
    for name, source, libs in MODULES:
        if name == "_server" and not os.path.exists(os.path.join(libdir, "libstrobe_server.so")):
            continue  # a libstrobe without its server: strobe.serve says so
        obj = os.path.join(out_dir, name + ".o")
        target = os.path.join(out_dir, "strobe", name + cfg["EXT_SUFFIX"])
        subprocess.run(cc + ["-std=c11", "-D_GNU_SOURCE"] + incs + ["-c", os.path.join(HERE, source), "-o", obj],
                       check=True)
        subprocess.run(ld + [obj, "-L" + libdir, "-Wl,-rpath," + libdir] + ["-l" + lib for lib in libs] +
                       ["-o", target], check=True)
        built.append(target)
    return built, _version(includes)


def _tag():
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    return f"{impl}-{impl}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: strobe\nVersion: {version}\n"
            "Summary: Strobe's in-process profiler for Python code: spans, sessions, call tracing, web middleware\n"
            "Requires-Python: >=3.11\n")


def _wheel_files(built, version):
    """(archive name, bytes) of every file of the wheel but RECORD."""
    files = []
    for entry in sorted(os.listdir(os.path.join(HERE, "strobe"))):
        if entry.endswith(".py"):
            with open(os.path.join(HERE, "strobe", entry), "rb") as f:
                files.append(("strobe/" + entry, f.read()))
    for path in built:
        with open(path, "rb") as f:
            files.append(("strobe/" + os.path.basename(path), f.read()))
    info = f"strobe-{version}.dist-info"
    files.append((f"{info}/METADATA", _metadata(version).encode()))
    files.append((f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: strobe_build\nRoot-Is-Purelib: false\n"
                                   f"Tag: {_tag()}\n".encode()))
    files.append((f"{info}/top_level.txt", b"strobe\n"))
    return files, info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: the wheel of this interpreter, built in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="strobe-build-") as tmp:
        built, version = _compile(tmp)
        files, info = _wheel_files(built, version)
        name = f"strobe-{version}-{_tag()}.whl"
        record = io.StringIO()
        with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
            for arcname, data in files:
                whl.writestr(arcname, data)
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                record.write(f"{arcname},sha256={digest},{len(data)}\n")
            record.write(f"{info}/RECORD,,\n")
            whl.writestr(f"{info}/RECORD", record.getvalue())
    return name


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: the package's sources and the public headers it compiles against."""
    includes, _ = _library()
    version = _version(includes)
    base = f"strobe-{version}"
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for entry in ("pyproject.toml", "strobe_build.py", "README.md", "strobe"):
            tar.add(os.path.join(HERE, entry), arcname=f"{base}/{entry}",
                    filter=lambda t: None if "__pycache__" in t.name or t.name.endswith(".so") else t)
        header_dir = next(d for d in includes if os.path.isdir(os.path.join(d, "strobe")))
        tar.add(os.path.join(header_dir, "strobe"), arcname=f"{base}/include/strobe")
        pkg_info = _metadata(version).encode()
        member = tarfile.TarInfo(f"{base}/PKG-INFO")
        member.size = len(pkg_info)
        tar.addfile(member, io.BytesIO(pkg_info))
    return name


if __name__ == "__main__":
    if sys.argv[1:] != ["--inplace"]:
        raise SystemExit("usage: python3 strobe_build.py --inplace")
    with tempfile.TemporaryDirectory(prefix="strobe-build-") as tmp:
        for path in _compile(tmp)[0]:
            shutil.copy(path, os.path.join(HERE, "strobe", os.path.basename(path)))
