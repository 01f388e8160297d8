"""test_suspension.py — spans and traced calls that stay open across a
suspension (docs/exploration.md §Python, Suspension): a generator's and a
coroutine's scopes keep their own frame while suspended, so their durations
are wall time, the time away is a "suspended" child (never self time), an
end that is not the innermost scope's is counted and never re-paired, and
traced functions are told apart by code object (file and first line)."""
import asyncio
import threading
import time

import strobe
from conftest import qual

SLEEP_MS = 20.0


def held_gen():
    with strobe.span("held"):
        yield 1
        yield 2


def consume():
    for _ in held_gen():
        time.sleep(SLEEP_MS / 1000)


async def held_coro():
    with strobe.span("held_async"):
        await asyncio.sleep(SLEEP_MS / 1000)


def run_coro():
    asyncio.run(held_coro())


def parent_of(c, end):
    """The name of the scope an END record's scope ran inside (its lane, one level up), or None."""
    start = end[4] - end[5]
    for e in c.ends(lane=end[1]):
        if e[3] == end[3] - 1 and e[4] - e[5] <= start and end[4] <= e[4]:
            return qual(e[2])
    return None


def lane_tree(c, lane):
    """(name, depth, duration_ms) of a lane's scopes, in end order."""
    return [(qual(e[2]), e[3], e[5] / 1e6) for e in c.ends(lane=lane)]


def test_generator_holds_its_span_across_yields(record):
    before = strobe.stats()["mismatched"]
    with record() as r:
        strobe.trace_calls(consume)()
    c = r.capture
    assert c.clean() and strobe.stats()["mismatched"] == before
    gen_lane = {e[1] for e in c.ends() if qual(e[2]) == "held_gen"}
    assert len(gen_lane) == 1
    lane = gen_lane.pop()
    assert lane in c.fibers
    tree = lane_tree(c, lane)
    # held_gen [held [suspended, suspended]]: one frame for the whole life.
    assert [(n, d) for n, d, _ in tree] == [("suspended", 3), ("suspended", 3), ("held", 2), ("held_gen", 1)]
    (_, _, s1), (_, _, s2), (_, _, held), (_, _, gen) = tree
    assert s1 >= SLEEP_MS and s2 >= SLEEP_MS
    assert held >= s1 + s2 and gen >= held
    consumer = [(qual(e[2]), e[5] / 1e6) for e in c.ends() if qual(e[2]) == "consume"]
    assert len(consumer) == 1 and consumer[0][1] >= 2 * SLEEP_MS
    # While the generator runs on its lane, its consumer's frame holds a
    # generator_step: the generator's work is not the consumer's self time.
    steps = c.ends("generator_step")
    assert len(steps) == 3 and all(parent_of(c, e) == "consume" for e in steps)


def test_coroutine_holds_its_span_across_awaits(record):
    before = strobe.stats()["mismatched"]
    with record() as r:
        strobe.trace_calls(run_coro)()
    c = r.capture
    assert c.clean() and strobe.stats()["mismatched"] == before
    lane = {e[1] for e in c.ends() if qual(e[2]) == "held_coro"}.pop()
    tree = [t for t in lane_tree(c, lane) if t[0] in ("held_coro", "held_async", "sleep", "suspended")]
    # held_coro [held_async [sleep [suspended]]]: the awaited sleep suspends the chain.
    assert [(n, d) for n, d, _ in tree] == [("suspended", 4), ("sleep", 3), ("held_async", 2), ("held_coro", 1)]
    durations = {n: ms for n, _, ms in tree}
    assert durations["suspended"] >= SLEEP_MS
    # The loop's Handle._run holds a task_step while the task runs on its
    # lane: the task's work is not the loop's self time.
    steps = c.ends("task_step")
    assert len(steps) >= 2 and all(parent_of(c, e) == "Handle._run" for e in steps)
    assert all(e[1] not in c.fibers for e in steps)
    assert durations["held_coro"] >= durations["held_async"] >= durations["sleep"] >= durations["suspended"]


async def step(i):
    await asyncio.sleep(SLEEP_MS / 1000)
    return i


def test_tasks_under_trace_all_measure_wall_time(record):
    async def main():
        return await asyncio.gather(*(step(i) for i in range(5)))

    with record() as r:
        strobe.trace_all(step)
        try:
            assert asyncio.run(main()) == list(range(5))
        finally:
            strobe.trace_all_stop()
    c = r.capture
    steps = [e for e in c.ends() if qual(e[2]) == "step"]
    assert len(steps) == 5 and len({e[1] for e in steps}) == 5  # one per task, each on its lane
    assert all(e[5] / 1e6 >= SLEEP_MS for e in steps)
    suspended = [e for e in c.ends("suspended")]
    assert sorted(e[1] for e in suspended) == sorted(e[1] for e in steps)
    assert c.clean()


def pair(tag):
    with strobe.span(tag):
        yield tag
        yield tag


def test_interleaved_generators_keep_their_own_frames(record):
    before = strobe.stats()["mismatched"]

    def zipped():
        return list(zip(pair("left"), pair("right")))

    with record() as r:
        assert strobe.trace_calls(zipped)() == [("left", "right")] * 2
    c = r.capture
    assert c.clean() and strobe.stats()["mismatched"] == before
    left, right = c.lanes_of("left"), c.lanes_of("right")
    assert len(left) == len(right) == 1 and set(left) != set(right)
    for lane in (*left, *right):
        assert [(n, d) for n, d, _ in lane_tree(c, lane)] == [
            ("suspended", 3), ("suspended", 3), ("left" if lane in left else "right", 2), ("pair", 1)]


def test_an_end_out_of_order_is_counted_not_repaired(record):
    before = strobe.stats()["mismatched"]

    def misuse():  # no hook: the generator's span sits on the thread's stack
        it = pair("held_out")
        next(it)
        with strobe.span("outer"):
            next(it)
            next(it, None)  # ends held_out while outer is the innermost scope

    with record() as r:
        t = threading.Thread(target=misuse)  # the scope left open dies with the thread
        t.start()
        t.join()
    c = r.capture
    assert strobe.stats()["mismatched"] == before + 1
    assert c.ends("held_out") == [] and len(c.ends("outer")) == 1


OTHER = "def helper(n):\n    return n + 1\n"


def helper(n):
    return n * 2


def test_functions_of_one_name_stay_apart(record):
    namespace = {}
    exec(compile(OTHER, "other_module.py", "exec"), namespace)

    def both():
        return helper(1) + namespace["helper"](1)

    with record() as r:
        assert strobe.trace_calls(both)() == 4
    names = sorted(e[2] for e in r.capture.ends() if qual(e[2]) == "helper")
    assert len(names) == 2 and names[0] != names[1]
    assert any(n.endswith("(other_module.py:1)") for n in names)
    assert any(n.endswith(f"({__file__}:{helper.__code__.co_firstlineno})") for n in names)


def joined(xs):
    return ",".join(sorted(xs, key=lambda x: len(x)))


def test_c_calls_on_request(record):
    with record() as r:
        assert strobe.trace_calls(c_calls=True)(joined)(["bb", "a"]) == "a,bb"
        strobe.trace_calls(joined)(["a"])  # without: no C function
    c = r.capture
    assert c.clean()
    ends = [(e[2], e[3]) for e in c.ends()]
    first, second = ends[:ends.index(next(e for e in ends if qual(e[0]) == "joined")) + 1], ends[len(ends) - 2:]
    assert [n for n, d in first if n.endswith("(built-in)")] == [
        "builtins.len (built-in)", "builtins.len (built-in)", "builtins.sorted (built-in)", "str.join (built-in)"]
    depth = dict((n, d) for n, d in first)
    assert depth["builtins.sorted (built-in)"] == depth["str.join (built-in)"] == 2
    assert depth["builtins.len (built-in)"] == 4  # in the key function, called by sorted
    assert [qual(n) for n, _ in second] == ["joined.<locals>.<lambda>", "joined"]


def test_trace_all_stop_while_another_thread_runs_a_traced_generator(record):
    paused, resume = threading.Event(), threading.Event()

    def gen():
        with strobe.span("held_elsewhere"):
            yield 1
            paused.set()
            resume.wait()  # trace_all_stop runs on the main thread meanwhile
            yield 2

    def worker():
        assert list(gen()) == [1, 2]

    with record() as r:
        strobe.trace_all(gen)
        t = threading.Thread(target=worker)
        t.start()
        paused.wait()
        strobe.trace_all_stop()  # the running generator's state is kept until it ends
        resume.set()
        t.join()
    c = r.capture
    assert c.clean() and len(c.ends("held_elsewhere")) == 1
    assert strobe.stats()["generators_followed"] == 0  # forgotten at its end
