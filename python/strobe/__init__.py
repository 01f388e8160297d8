"""strobe — Strobe's profiler for Python code (python/README.md).

Owns the Python-level parts of the binding: the decorator forms
(@strobe.traced, @strobe.span("name"), @strobe.cumulative("name")),
trace_calls and trace_all (which set the C profiling hook of _strobe),
strobe.Session (a profiling session whose reports come back as dicts), and
the names exported from the C extension _strobe, which does the recording.
Must never record anything itself: every event goes through _strobe into
libstrobe, so Python spans land in the same captures, flight recorder and
live streams as the process's C scopes.
"""
import functools
import inspect
import json
import threading
import types

from . import _strobe
from ._strobe import (Error, FlightRecorder, Recorder, Window, cumulative, current_span, event_stats, library_version,
                      op_counter, operation, read_capture, recording, set_process, setup, span, stage, stats, value)

__all__ = [
    "span", "traced", "cumulative", "value", "trace_calls", "trace_all", "trace_all_stop", "Recorder",
    "FlightRecorder", "read_capture", "recording", "stats", "library_version", "Session", "Window", "operation",
    "stage", "op_counter", "set_process", "Error", "current_span", "serve", "event_stats", "setup",
]


def _wrap_span(kind, name, fn):
    """fn, with every call inside kind(name) (a span or a cumulative)."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def traced_coroutine(*args, **kwargs):
            with kind(name):
                return await fn(*args, **kwargs)
        return traced_coroutine

    @functools.wraps(fn)
    def traced_function(*args, **kwargs):
        with kind(name):
            return fn(*args, **kwargs)
    return traced_function


_strobe._set_wrap(_wrap_span)


def traced(fn=None, *, name=None):
    """@strobe.traced: every call of the function is a span named after its
    qualified name (or `name`). Works on coroutine functions too: the span
    covers the whole await, in the task's own lane."""
    if fn is None:
        return lambda f: traced(f, name=name)
    if not callable(fn):
        raise TypeError("strobe.traced decorates a function")
    return _wrap_span(span, name if name is not None else fn.__qualname__, fn)


def trace_calls(fn=None, *, c_calls=False):
    """@strobe.trace_calls: while the function runs, every Python call it
    makes, at any depth, is a span named after the callee (the interpreter's
    profiling hook, on this thread only). With c_calls=True
    (@strobe.trace_calls(c_calls=True)), every C function those calls make
    too ("str.join (built-in)"). For exploring: it costs every call inside,
    so replace it with spans where the time is."""
    if fn is None:
        return lambda f: trace_calls(f, c_calls=c_calls)
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError("strobe.trace_calls traces a plain function; "
                        "use trace_all for coroutines (a task's steps interleave with others')")
    if not callable(fn):
        raise TypeError("strobe.trace_calls decorates a function")

    @functools.wraps(fn)
    def traced_region(*args, **kwargs):
        was = _strobe._trace_c_calls(True) if c_calls else None
        _strobe._trace_region(True)
        try:
            return fn(*args, **kwargs)
        finally:
            _strobe._trace_region(False)
            if c_calls:
                _strobe._trace_c_calls(was)
    return traced_region


_all_files = set()
_all_codes = set()
_all_excluded = set()


def _codes_of(obj, into):
    """The code objects of a function, method or class's functions."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        for f in (obj.fget, obj.fset, obj.fdel):
            if f is not None:
                _codes_of(f, into)
        return
    obj = inspect.unwrap(obj) if callable(obj) else obj
    code = getattr(obj, "__code__", None)
    if isinstance(code, types.CodeType):
        into.add(code)


def _thread_start_hook(*_):
    # threading.setprofile's function runs once per new thread: it hands the
    # thread to the C hook, which replaces it.
    _strobe._profile_thread()


def _traced_function(fn):
    """fn in a span named after its qualified name, or fn itself when it is
    None, already traced, or a generator function (its body runs in its
    consumer's turns: a span per call would time its creation only)."""
    if (fn is None or getattr(fn, "__strobe_traced__", False) or inspect.isgeneratorfunction(fn)
            or inspect.isasyncgenfunction(fn)):
        return fn
    wrapper = _wrap_span(span, fn.__qualname__, fn)
    wrapper.__strobe_traced__ = True
    return wrapper


def _wrapped_member(attr, member):
    """A class member with its functions traced, or None when nothing of it is
    (data, nested classes, special methods but __init__ and __call__)."""
    if attr.startswith("__") and attr.endswith("__") and attr not in ("__init__", "__call__"):
        return None
    if isinstance(member, (staticmethod, classmethod)):
        fn = _traced_function(member.__func__)
        return None if fn is member.__func__ else type(member)(fn)
    if isinstance(member, property):
        fns = [_traced_function(f) for f in (member.fget, member.fset, member.fdel)]
        if fns == [member.fget, member.fset, member.fdel]:
            return None
        return property(*fns, member.__doc__)
    if isinstance(member, types.FunctionType):
        fn = _traced_function(member)
        return None if fn is member else fn
    return None


def _trace_class(cls, exclude):
    unknown = exclude - set(vars(cls))
    if unknown:
        raise ValueError(f"trace_all: {cls.__qualname__} has no member {sorted(unknown)[0]!r} to exclude")
    members = [(attr, _wrapped_member(attr, m)) for attr, m in vars(cls).items() if attr not in exclude]
    members = [(attr, m) for attr, m in members if m is not None]
    if not members and not any(getattr(m, "__strobe_traced__", False) for m in vars(cls).values()):
        raise TypeError(f"class {cls.__qualname__} has no methods to trace")
    for attr, m in members:
        setattr(cls, attr, m)
    return cls


def trace_all(target=None, *, exclude=(), c_calls=False):
    """Traces every call of a class's methods, a module's functions or one
    function, each call a span named after its qualified name.

    A class (`@strobe.trace_all` or `@strobe.trace_all(exclude=["helper"])`)
    has its methods wrapped in place and is returned: methods, classmethods,
    staticmethods, properties' getters, setters and deleters, and async
    methods (the span covers the whole await); not generator methods nor
    special methods but __init__ and __call__. The wrapping costs what a
    span costs, and nothing else; trace_all_stop() does not undo it.

    A module (every function whose code comes from its file) or a function
    is traced through the interpreter's profiling hook, on the calling thread
    and threads started afterwards, until trace_all_stop(); it is returned.

    exclude: names of members (a class) or functions (a module) left out;
    with no target, trace_all(exclude=[...]) returns the decorator.
    c_calls=True (a module or function): the C functions their calls make are
    spans too ("str.join (built-in)"), until trace_all_stop()."""
    if isinstance(exclude, str):
        raise TypeError("trace_all(exclude=...) takes a list of names, not one str")
    exclude = set(exclude)
    if any(not isinstance(n, str) for n in exclude):
        raise TypeError("trace_all(exclude=...) takes names (str)")
    if target is None:
        return lambda t: trace_all(t, exclude=exclude, c_calls=c_calls)
    if isinstance(target, type):
        if c_calls:
            raise TypeError("trace_all(c_calls=True) is for a module or a function (a class is wrapped, not hooked)")
        return _trace_class(target, exclude)
    if isinstance(target, types.ModuleType):
        path = getattr(target, "__file__", None)
        if not path:
            raise TypeError(f"module {target.__name__} has no source file to trace")
        unknown = [n for n in exclude if not callable(getattr(target, n, None))]
        if unknown:
            raise ValueError(f"trace_all: module {target.__name__} has no function {sorted(unknown)[0]!r} to exclude")
        for n in exclude:
            _codes_of(getattr(target, n), _all_excluded)
        _all_files.add(path)
    elif callable(target):
        if exclude:
            raise TypeError("trace_all(exclude=...) is for a class or a module")
        before = len(_all_codes)
        _codes_of(target, _all_codes)
        if len(_all_codes) == before:
            raise TypeError(f"{target!r} has no Python code to trace")
    else:
        raise TypeError("trace_all takes a module, a class or a function")
    if c_calls:
        _strobe._trace_c_calls(True)
    _strobe._trace_all_set(frozenset(_all_files), frozenset(_all_codes), frozenset(_all_excluded))
    threading.setprofile(_thread_start_hook)
    return target


def trace_all_stop():
    """Ends every trace_all, on the calling thread and for threads started
    afterwards (other threads keep the hook until their traced calls stop
    being recorded: it then finds nothing to trace)."""
    _all_files.clear()
    _all_codes.clear()
    _all_excluded.clear()
    _strobe._trace_c_calls(False)
    _strobe._trace_all_set(None, None, None)
    threading.setprofile(None)


class Session:
    """A profiling session on the process's default collector (docs/sessions.md):
    it admits whole operations (strobe.operation) that start after it started
    and end while it runs, with their stages (strobe.stage) and counters.
    read() returns the report so far, stop() (or the with block's end) the
    final one, also kept as .report; both are the content-free JSON report
    (docs/report-schema.json) as a dict. kinds: operation kinds admitted
    ("pass", "rebuild", "input", "request"), default every kind.
    max_samples: 1..240 samples kept (default 120). Raises strobe.Error when
    the collector refuses (8 sessions already active: .name "STROBE_ELIMIT")."""

    def __init__(self, max_samples=0, kinds=None, include_devtools=False):
        if isinstance(kinds, str):
            kinds = (kinds,)
        self.report = None
        self.id = _strobe._session_start(max_samples, include_devtools, kinds)

    def read(self):
        """The report so far (the session keeps running)."""
        return json.loads(_strobe._session_read(self.id))

    def stop(self):
        """Ends the session and returns its final report (later calls return it again)."""
        if self.report is None:
            self.report = json.loads(_strobe._session_stop(self.id))
        return self.report

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def serve(port=0, bind=None, token=None, token_file=None, quiet=False):
    """Starts the embedded server (docs/server.md) on the default collector:
    the HTTP API, MCP (an agent profiles this process through sessions) and
    the live viewer, on `bind` (default 127.0.0.1) and `port` (default 0: the
    OS picks one, read it from .port). Every request needs the bearer token:
    `token` (16-512 visible ASCII bytes), else $STROBE_TOKEN, else a random one
    written to a 0600 file (.token_file). Returns the strobe.Server, running
    until stop() or the with block's end. Raises RuntimeError when this build
    has no libstrobe_server, OSError when it cannot start (port taken)."""
    try:
        from ._server import Server
    except ModuleNotFoundError as e:
        raise RuntimeError("strobe.serve: this strobe was built without libstrobe_server "
                           "(STROBE_BUILD_SERVER=OFF or libmicrohttpd-dev missing)") from e
    except ImportError as e:  # built, but it does not load: say why, never "not built"
        raise RuntimeError(f"strobe.serve: libstrobe_server does not load: {e}") from e
    return Server(port=port, bind=bind, token=token, token_file=token_file, quiet=quiet)
