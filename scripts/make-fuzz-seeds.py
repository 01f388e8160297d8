#!/usr/bin/env python3
"""make-fuzz-seeds.py — writes the seed corpus of fuzz/fuzz_capture_reader.c.

Owns an encoder of the capture format (docs/capture-format.md) written from
the spec alone, independent of src/format/, so the seeds also check the C
reader against a second reading of the spec (tests/test_capture_reader.c reads
them). Blocks are stored raw (codec 0); the C tests cover zstd.

Each seed is named <expected end>-<what>.strb, where the expected end is what
strobe_capture_next finally returns: ok (0), etruncated, ecorrupt or erange.
Must never write outside the output directory.

usage: scripts/make-fuzz-seeds.py [outdir]   (default fuzz/corpus/fuzz_capture_reader)
"""
import os
import struct
import sys

MAGIC = b"\x89STRB\r\n\x1a"
SITES, THREAD, EVENTS, THREAD_END, CLOCK, LOST, FOOTER, OPS, LABELS = range(1, 10)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(d):
    return ((d << 1) ^ (d >> 63)) & 0xFFFFFFFFFFFFFFFF


def string(s):
    b = s.encode()
    return varint(len(b)) + b


def header(ns_per_tick=1.0, epoch=0, version=1):
    def field(tag, value):
        return struct.pack("<HH", tag, len(value)) + value

    fields = b"".join([
        field(1, b"tsc"),
        field(2, b"\x01"),
        field(3, struct.pack("<d", ns_per_tick)),
        field(4, struct.pack("<Q", epoch)),
        field(5, struct.pack("<Q", 123456789)),
        field(6, struct.pack("<Q", epoch)),
        field(7, struct.pack("<d", 12.5)),
        field(8, b"0.1.0"),
        field(9, b"linux"),
        field(10, b"x86_64"),
        field(11, b"zstd profiling"),
        field(12, b"\x00"),
        field(13, struct.pack("<Q", 4242)),
        field(14, struct.pack("<I", 262144)),
        field(15, struct.pack("<I", 100)),
        field(16, b"file"),
    ])
    return MAGIC + struct.pack("<II", version, len(fields)) + fields


def block(btype, payload, codec=0):
    stored = zstd_frame(payload) if codec == 1 else payload
    head = struct.pack("<BBHII", btype, codec, 0, len(stored), len(payload))
    return head + struct.pack("<I", crc32c(stored, crc32c(head))) + stored


def zstd_frame(data):
    """A valid zstd frame (RFC 8878) of one Raw_Block, for data < 64 KiB + 256:
    no compression, but it exercises the reader's zstd path."""
    assert len(data) < 65536 + 256
    if len(data) < 256:  # Single_Segment, 1-byte Frame_Content_Size
        head = bytes([0x20, len(data)])
    else:  # Single_Segment, 2-byte Frame_Content_Size (stored minus 256)
        head = bytes([0x60]) + struct.pack("<H", len(data) - 256)
    block_header = (len(data) << 3) | 1  # Last_Block, Block_Type 0 (Raw)
    return b"\x28\xb5\x2f\xfd" + head + struct.pack("<I", block_header)[:3] + data


def site(sid, kind, name, line=1, cat="", parent="", unit=None, flags=None):
    """A SITES entry; version 2 captures give every site a unit (0 none, 1 count, 2 bytes, 3 ns, 4 ms, 5 percent),
    version 3 ones flags after it."""
    return (varint(sid) + varint(kind) + varint(line) + string(name) + string(cat) + string("app.c") +
            string("fn") + string(parent) + (b"" if unit is None else varint(unit)) +
            (b"" if flags is None else varint(flags)))


def op_end(collector, op_id, flags, window, frame_id, duration, counters, kinds=None):
    """An OPS END entry's body (no stages): counters are (label id, value); kinds, when given, the
    trailing kind labels of counters by kind (docs/capture-format.md, OPS payload)."""
    body = (varint(collector) + varint(op_id) + varint(flags) + varint(window) + varint(frame_id) +
            varint(zigzag(duration)) + varint(0) + varint(0) + varint(0) + varint(len(counters)) +
            b"".join(varint(label) + struct.pack("<d", v) for label, v in counters))
    if kinds is not None:
        body += varint(len(kinds)) + b"".join(varint(k) for k in kinds)
    return body


def ops_block(thread, base, entries):
    """An OPS block: entries are (sub, ticks, body), times relative to the previous entry."""
    out, prev = bytearray(), base
    for sub, ticks, body in entries:
        out += varint(sub) + varint(zigzag(ticks - prev)) + varint(len(body)) + body
        prev = ticks
    return block(OPS, varint(thread) + varint(len(entries)) + varint(base) + bytes(out))


class Events:
    """One EVENTS block: ops and time deltas, every event with one delta."""

    def __init__(self, thread, base):
        self.thread, self.base, self.prev = thread, base, base
        self.ops, self.times, self.count = bytearray(), bytearray(), 0

    def _ev(self, ticks, op):
        self.ops += op
        self.times += varint(zigzag(ticks - self.prev))
        self.prev = ticks
        self.count += 1

    def begin(self, t, s): self._ev(t, varint(s << 2))
    def end(self, t): self._ev(t, varint(1))
    def value(self, t, s, v): self._ev(t, varint(3 << 2 | 2) + varint(s) + struct.pack("<d", v))
    def counter(self, t, s, v): self._ev(t, varint(4 << 2 | 2) + varint(s) + struct.pack("<d", v))
    def gauge(self, t, s, v): self._ev(t, varint(5 << 2 | 2) + varint(s) + struct.pack("<d", v))
    def frame(self, t, s): self._ev(t, varint(6 << 2 | 2) + varint(s))
    def cumulative(self, t, s, n, total, lo, hi):
        self._ev(t, varint(7 << 2 | 2) + varint(s) + varint(n) + varint(total) + varint(lo) + varint(hi))
    def lost(self, t, n, depth): self._ev(t, varint(8 << 2 | 2) + varint(n) + varint(depth))

    def block(self, codec=0):
        p = varint(self.thread) + varint(self.count) + varint(self.base) + varint(len(self.ops))
        return block(EVENTS, p + bytes(self.ops) + bytes(self.times), codec)


def full_capture():
    """Every record type; returns (bytes, offset of the FOOTER block)."""
    out = bytearray(header(ns_per_tick=0.4, epoch=1000))
    out += block(SITES, site(1, 1, "frame_update", 10, "engine") + site(2, 1, "physics", 20) +
                 site(3, 2, "bodies", 30) + site(4, 4, "allocs", 40) + site(5, 5, "queue_len", 50) +
                 site(6, 6, "frame", 60) + site(7, 3, "solver_iter", 70) +
                 site(8, 7, "decode", 80, parent="request"))
    out += block(THREAD, varint(0) + varint(31337) + string("main"))
    out += block(THREAD, varint(1) + varint(31338) + string(""))
    out += block(CLOCK, varint(5000) + varint(2000))
    e = Events(0, 1000)
    e.end(1000)                       # orphan
    e.begin(1010, 1)
    e.begin(1020, 2)
    e.value(1030, 3, 128.0)
    e.cumulative(1040, 7, 12, 600, 20, 90)
    e.end(1100)
    e.counter(1110, 4, 1.5)
    e.gauge(1120, 5, -3.0)
    e.frame(1130, 6)
    e.end(1200)
    e.begin(1300, 1)
    e.begin(1310, 2)
    e.lost(1320, 7, 1)                # closes site 2 as lost; counted by a LOST block
    e.end(1330)
    e.begin(1400, 1)                  # unfinished at end of file
    out += e.block()
    e = Events(1, 900)
    e.begin(900, 2)
    e.begin(950, 1)
    out += e.block()
    out += block(LOST, varint(1) + varint(2))
    out += block(THREAD_END, varint(1))          # two unfinished
    out += block(LOST, varint(0) + varint(7))    # the drops thread 0's LOST op marked
    out += block(99, b"future block type")     # skipped
    out += block(THREAD, varint(0) + varint(31337) + string("main-renamed"))
    footer_at = len(out)
    out += block(FOOTER, varint(2000) + varint(2) + varint(0) + varint(15) + varint(7) +
                 varint(1) + varint(2) + varint(2) + b"".join(varint(i) for i in range(6)))
    return bytes(out), footer_at


def seeds():
    full, footer_at = full_capture()
    yield "ok-full.strb", full
    yield "ok-nofooter.strb", full[:footer_at]
    yield "etruncated-midblock.strb", full[:footer_at - 5]

    bad_crc = bytearray(full)
    bad_crc[footer_at - 3] ^= 0x40
    yield "ecorrupt-crc.strb", bytes(bad_crc)

    base = header() + block(SITES, site(1, 1, "a")) + block(THREAD, varint(0) + varint(1) + string("t"))
    e = Events(0, 0)
    e.begin(5, 1)
    e.begin(6, 2)  # site 2 is not defined
    yield "erange-undefined-site.strb", base + e.block()

    e = Events(0, 0)
    for i in range(257):
        e.begin(i, 1)
    yield "erange-depth.strb", base + e.block()

    yield "ecorrupt-site-kind.strb", base + block(SITES, site(2, 9, "bad kind"))

    # The same kinds of blocks as zstd frames.
    z = bytearray(header(ns_per_tick=2.0, epoch=50))
    z += block(SITES, site(1, 1, "zscope") + site(2, 5, "zgauge"), codec=1)
    z += block(THREAD, varint(0) + varint(77) + string("zthread"), codec=1)
    e = Events(0, 100)
    e.begin(100, 1)
    e.gauge(110, 2, 0.5)
    e.end(120)
    z += e.block(codec=1)
    z += block(FOOTER, varint(120) + varint(1) + varint(0) + varint(3) + varint(0) + bytes(6), codec=1)
    yield "ok-zstd.strb", bytes(z)

    # Version 2: sites carry their unit (one this reader has no name for is kept); an entry
    # cut before its unit is corrupt.
    v2 = bytearray(header(version=2))
    v2 += block(SITES, site(1, 1, "frame", unit=0) + site(2, 2, "rows", unit=1) + site(3, 5, "heap", unit=2) +
                site(4, 4, "sent", unit=2) + site(5, 2, "wait", unit=3) + site(6, 5, "load", unit=5) +
                site(7, 2, "future_unit", unit=77))
    v2 += block(THREAD, varint(0) + varint(5) + string("main"))
    e = Events(0, 10)
    e.begin(10, 1)
    e.value(11, 2, 12.0)
    e.value(12, 5, 712.0)
    e.value(13, 7, 1.0)
    e.gauge(14, 3, 1536.0)
    e.counter(15, 4, 4096.0)
    e.gauge(16, 6, 99.5)
    e.end(20)
    v2 += e.block()
    yield "ok-v2-units.strb", bytes(v2)
    yield "ecorrupt-v2-site-without-unit.strb", header(version=2) + block(SITES, site(1, 1, "frame", unit=0) +
                                                                          site(2, 5, "heap"))

    # Version 3, counters and gauges by kind (docs/recording.md, Counters and gauges by kind): counter and
    # gauge sites whose category is their kind in the family their name gives, and an operation's counters
    # with their kind labels after everything an older reader reads.
    v3 = bytearray(header(version=3))
    v3 += block(SITES, site(1, 4, "draw_calls", 10, cat="quads", unit=1, flags=0) +
                site(2, 4, "draw_calls", 11, cat="text", unit=1, flags=0) +
                site(3, 5, "gpu_memory", 12, cat="textures", unit=2, flags=0) +
                site(4, 4, "draw_calls", 13, unit=1, flags=0))
    v3 += block(LABELS, varint(1) + string("main") + varint(2) + string("draw_calls") + varint(3) +
                string("quads") + varint(4) + string("text") + varint(5) + string("encoded_bytes"))
    v3 += block(THREAD, varint(0) + varint(9) + string("main"))
    e = Events(0, 100)
    e.counter(110, 1, 12.0)
    e.counter(111, 2, 30.0)
    e.counter(112, 4, 42.0)
    e.gauge(113, 3, 4194304.0)
    v3 += e.block()
    pass_done = 1 | 256 | 1024  # a pass, committed, with its counters
    v3 += ops_block(0, 100, [(2, 120, op_end(1, 1, pass_done, 1, 7, 20, [(2, 12.0), (2, 30.0), (5, 9.0)],
                                             kinds=[3, 4, 0]))])
    yield "ok-v3-kinds.strb", bytes(v3)
    # One kind label per counter, or the entry is corrupt.
    bad = bytearray(header(version=3)) + block(LABELS, varint(1) + string("main") + varint(2) + string("n"))
    bad += block(THREAD, varint(0) + varint(9) + string("main"))
    bad += ops_block(0, 100, [(2, 120, op_end(1, 1, pass_done, 1, 7, 20, [(2, 1.0), (2, 2.0)], kinds=[2]))])
    yield "ecorrupt-op-kinds-count.strb", bytes(bad)

    # Timestamps going backwards and a thread that ends with scopes open.
    e = Events(0, 1 << 40)
    e.begin((1 << 40) + 10, 1)
    e.end(5)
    e.begin(7, 1)
    yield "ok-backwards.strb", base + e.block() + block(THREAD_END, varint(0))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus", "fuzz_capture_reader")
    os.makedirs(outdir, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
