"""python -m strobe — owns the whole-script runner (python/README.md, Whole
scripts): records a capture of a script run under call tracing, with no
change to the script, as `python -m cProfile` does for its profiler.

    python -m strobe [-o FILE] [--overflow drop|grow|wait] [--ring-events N] [--c-calls] [--no-trace] script.py [args...]
    python -m strobe [-o FILE] ... -m module [args...]

Every Python call on the main thread and the threads the script starts is a
scope (trace_all over every file; functions named "qualname (file:line)").
Losses are said on stderr while they happen (libstrobe's own run-time line),
and once more at the end with the capture's totals.

Must never: change what the script sees (sys.argv, __main__, its exit
status and exceptions), or exit before the capture is complete on disk.
"""
import argparse
import os
import runpy
import sys
import threading

from . import Error, _strobe, event_stats, setup, stats
from ._strobe import Recorder


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m strobe", description="Record a Python script with Strobe.")
    parser.add_argument("-o", "--output", default="strobe.out.strobe", help="the capture file (default %(default)s)")
    parser.add_argument("--overflow", choices=("drop", "grow", "wait"), default="grow",
                        help="what a full ring does: drop events (counted), grow the ring (default), or wait "
                             "for the writer (no loss, slower)")
    parser.add_argument("--ring-events", type=int, default=0,
                        help="events per thread ring, a power of two (default: libstrobe's, 262144)")
    parser.add_argument("--c-calls", action="store_true",
                        help="record the C functions Python calls too (str.join, sorted), as cProfile does")
    parser.add_argument("--no-trace", action="store_true",
                        help="no call tracing: only the script's own spans, stages and operations")
    parser.add_argument("-m", dest="module", help="run a library module as a script")
    parser.add_argument("script", nargs="?", help="the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    opts = parser.parse_args(argv)
    if opts.module:
        opts.args = ([opts.script] if opts.script else []) + opts.args
    elif not opts.script:
        parser.error("give a script (or -m module) to run")
    return opts


def _report(path, before):
    after = event_stats()
    written = after["events_written"] - before["events_written"]
    lost = after["events_lost"] - before["events_lost"]
    share = f" ({100.0 * lost / (written + lost):.1f} % of the events)" if lost else ""
    s = stats()
    print(f"strobe: wrote {path}: {written} events, {lost} lost{share}; "
          f"{s['mismatched']} mismatched ends, {s['profile_cut']} calls past the depth bound",
          file=sys.stderr)


def main(argv=None):
    opts = _parse(sys.argv[1:] if argv is None else argv)
    try:
        setup(overflow=opts.overflow, ring_events=opts.ring_events)
    except Error as e:  # something recorded already (a sitecustomize that imports and uses strobe)
        print(f"strobe: --overflow {opts.overflow} not applied: {e}", file=sys.stderr)
    before = event_stats()
    recorder = Recorder(opts.output)
    code = 0
    try:
        if not opts.no_trace:
            _strobe._trace_c_calls(opts.c_calls)
            _strobe._trace_all_set(True, None, None)  # every file's code, as cProfile traces
            threading.setprofile(lambda *_: _strobe._profile_thread())
        if opts.module:
            sys.argv = [opts.module] + opts.args
            runpy.run_module(opts.module, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [opts.script] + opts.args
            sys.path[0] = os.path.dirname(os.path.abspath(opts.script))
            runpy.run_path(opts.script, run_name="__main__")
    except SystemExit as e:
        code = e.code
    finally:
        _strobe._trace_all_set(None, None, None)
        _strobe._trace_c_calls(False)
        threading.setprofile(None)
        recorder.stop()
        _report(opts.output, before)
    return code


if __name__ == "__main__":
    sys.exit(main())
