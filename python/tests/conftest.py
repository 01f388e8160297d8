"""conftest.py — owns the fixtures the binding's tests share: a capture
recorded around a test's code and read back (records, threads, totals) with
strobe.read_capture, libstrobe's own reader."""
import collections
import importlib.util

import pytest

import strobe


def qual(name):
    """A traced function's qualified name, without the "(file:line)" that
    tells functions of one name apart."""
    return name.split(" (", 1)[0]


def load_module(tmp_path, name, source):
    """A module of `source` imported from its own file (trace_all matches a module by its file)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Capture:
    """What one recording holds: lanes by index, records, totals."""

    def __init__(self, path):
        self.threads, self.records, self.totals = strobe.read_capture(str(path))
        self.lane_names = {t[0]: t[2] for t in self.threads}
        self.fibers = {t[0] for t in self.threads if t[3]}

    def ends(self, name=None, lane=None):
        return [r for r in self.records if r[0] == "end" and (name is None or r[2] == name)
                and (lane is None or r[1] == lane)]

    def lanes_of(self, name):
        return collections.Counter(r[1] for r in self.ends(name))

    def lane(self, lane_name):
        """The one lane of that name with records (a capture also lists idle
        threads and fibers of earlier tasks not yet collected)."""
        busy = {r[1] for r in self.records}
        found = [i for i, n in self.lane_names.items() if n == lane_name and i in busy]
        assert len(found) == 1, (lane_name, self.lane_names)
        return found[0]

    def clean(self):
        """Nothing unwound, lost, left open or misused."""
        t = self.totals
        return (t["unwound"], t["lost"], t["unfinished"], t["unbalanced"], t["end_without_begin"]) == (0, 0, 0, 0, 0)


@pytest.fixture
def record(tmp_path):
    """record() -> a context manager recording a capture; .capture after it."""
    class Recording:
        def __init__(self):
            self.path = tmp_path / "test.strobe"
            self.capture = None

        def __enter__(self):
            self.rec = strobe.Recorder(str(self.path))
            return self

        def __exit__(self, *exc):
            self.rec.stop()
            self.capture = Capture(self.path)
            return False

    return Recording
