"""test_runner.py — `python -m strobe` (python/README.md §Whole scripts):
records a whole script under call tracing with no change to it (its argv,
its exit status), functions named by code object; runs a module with -m;
and says the loss at trace time on stderr, its final line giving exactly
the capture's own count of lost events."""
import os
import re
import subprocess
import sys

import strobe
from conftest import qual

SCRIPT = '''
import sys

def leaf(i):
    return i * 2

def work(n):
    return sum(leaf(i) for i in range(n))

if __name__ == "__main__":
    print("argv", sys.argv[1:], work(10))
    sys.exit(3)
'''

HEAVY = '''
def f(i):
    return i + 1

t = 0
for i in range(300000):
    t += f(i)
'''


def run(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "strobe", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def lost_said(stderr):
    said = re.findall(r"(\d+) lost", stderr.splitlines()[-1])
    assert len(said) == 1, stderr
    return int(said[0])


def test_a_script_is_recorded_whole(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    out = tmp_path / "run.strobe"
    done = run(tmp_path, "-o", str(out), str(script), "a", "--b")
    assert done.returncode == 3, done.stderr
    assert "argv ['a', '--b'] 90" in done.stdout
    threads, records, totals = strobe.read_capture(str(out))
    ends = [r for r in records if r[0] == "end"]
    work = [r for r in ends if qual(r[2]) == "work"]
    assert len(work) == 1 and work[0][2] == f"work ({script}:7)"
    leaves = [r for r in ends if qual(r[2]) == "leaf"]
    gen = [r for r in ends if qual(r[2]) == "work.<locals>.<genexpr>"]
    assert len(leaves) == 10 and len(gen) == 1  # the generator expression runs on a lane of its own
    assert all(r[1] == gen[0][1] and r[3] == gen[0][3] + 1 for r in leaves)
    assert [r for r in ends if qual(r[2]) == "<module>" and str(script) in r[2]]
    assert lost_said(done.stderr) == totals["lost"] == 0
    assert (totals["unbalanced"], totals["end_without_begin"]) == (0, 0)


def test_a_module_runs_with_dash_m(tmp_path):
    data = tmp_path / "data.json"
    data.write_text('{"b": 1}')
    out = tmp_path / "mod.strobe"
    done = run(tmp_path, "-o", str(out), "-m", "json.tool", str(data))
    assert done.returncode == 0 and '"b": 1' in done.stdout, done.stderr
    _, records, _ = strobe.read_capture(str(out))
    assert any(r[0] == "end" and qual(r[2]) == "main" and "json/tool.py" in r[2] for r in records)


def test_loss_is_said_at_trace_time(tmp_path):
    script = tmp_path / "heavy.py"
    script.write_text(HEAVY)
    out = tmp_path / "heavy.strobe"
    # A 1,024-event ring that drops when full: call tracing fills it faster than the writer empties it.
    done = run(tmp_path, "-o", str(out), "--overflow", "drop", "--ring-events", "1024", str(script))
    assert done.returncode == 0, done.stderr
    _, _, totals = strobe.read_capture(str(out))
    assert totals["lost"] > 0
    assert lost_said(done.stderr) == totals["lost"]
    assert len(done.stderr.strip().splitlines()) >= 2  # libstrobe's own line while it was losing, then the total


def test_bad_arguments(tmp_path):
    assert run(tmp_path).returncode == 2
    assert run(tmp_path, "--ring-events", "1000", "x.py").returncode != 0
