#!/usr/bin/env python3
"""make-fuzz-seeds.py — writes the seed corpus of fuzz/fuzz_capture_reader.c.

Owns an encoder of the capture format (docs/capture-format.md) written from
the spec alone, independent of src/format/, so the seeds also check the C
reader against a second reading of the spec (tests/test_capture_reader.c reads
them). Blocks are stored raw (codec 0); the C tests cover zstd.

Each seed is named <expected end>-<what>.strb, where the expected end is what
strobe_capture_next finally returns: ok (0), etruncated, ecorrupt or erange.
Must never write outside the output directory.

With --mutants it is the damaged-file generator instead (>>mutants): it
takes valid captures (default: the ok-* seeds of fuzz/corpus/fuzz_capture_reader)
and writes structured mutants of them, deterministically from --seed: varints
of a block set to boundary values or moved by one (lengths, counts, offsets,
ids), bits flipped with the CRC fixed (so the decoder, not the checksum, meets
them) or left stale, payloads cut or grown, block headers' lengths, codec and
type changed, blocks duplicated, dropped, swapped or moved to the end, header
fields set to extremes, and files cut; each mutant aims at one block kind, in
turn over every kind its base holds (SITES, EVENTS, OPS, DEVICE for GPU and
producer spans, SAMPLES, TREE, ATTACH, DEEP, MERGE, ORIGIN, CRASH, FOOTER, ...).
zstd blocks are first rewritten raw with the zstd command (--zstd), when it is
there, so their payloads can be mutated too. The fuzzer reads them as extra
seeds (fuzz/CMakeLists.txt) and tests/cli/cli_test.py's case mutants runs every
CLI command on them.

usage: scripts/make-fuzz-seeds.py [outdir]   (default fuzz/corpus/fuzz_capture_reader)
       scripts/make-fuzz-seeds.py --mutants OUTDIR [--count N] [--seed S] [--zstd BIN] [BASE...]

Contents: >>encoder >>seeds >>mutants
"""
import os
import random
import shutil
import struct
import subprocess
import sys

# >>encoder
MAGIC = b"\x89STRB\r\n\x1a"
SITES, THREAD, EVENTS, THREAD_END, CLOCK, LOST, FOOTER, OPS, LABELS = range(1, 10)


def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
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
    def alloc(self, t, s, addr, size): self._ev(t, varint(15 << 2 | 2) + varint(s) + varint(addr) + varint(size))
    def free(self, t, s, addr): self._ev(t, varint(17 << 2 | 2) + varint(s) + varint(addr))
    def message(self, t, s): self._ev(t, varint(19 << 2 | 2) + varint(s))

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


# >>seeds
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

    # Version 5, allocations and messages (docs/memory.md): pool sites of kinds alloc (9) and free (10), a
    # message site (11, its name the text; flagged interned: run-time content), three allocations of 64, 128 and
    # 4096 bytes, two frees (one of an address never allocated here), two messages. An ALLOC naming a site of
    # another kind is corrupt.
    v5 = bytearray(header(version=5))
    v5 += block(SITES, site(1, 1, "frame", unit=0, flags=0) + site(2, 9, "heap", unit=0, flags=0) +
                site(3, 10, "heap", unit=0, flags=0) + site(4, 11, "cache warmed", unit=0, flags=0) +
                site(5, 11, "loaded 42 items", unit=0, flags=1))
    v5 += block(THREAD, varint(0) + varint(11) + string("main"))
    e = Events(0, 100)
    e.begin(100, 1)
    e.alloc(101, 2, 0x7f0000001000, 64)
    e.alloc(102, 2, 0x7f0000002000, 128)
    e.message(103, 4)
    e.free(104, 3, 0x7f0000001000)
    e.alloc(105, 2, 0x7f0000003000, 4096)
    e.free(106, 3, 0x7f00000ff000)
    e.message(107, 5)
    e.end(110)
    v5 += e.block()
    yield "ok-v5-memory.strb", bytes(v5)
    bad = bytearray(header(version=5)) + block(SITES, site(1, 1, "frame", unit=0, flags=0))
    bad += block(THREAD, varint(0) + varint(11) + string("main"))
    e = Events(0, 100)
    e.alloc(101, 1, 0x1000, 64)
    yield "ecorrupt-v5-alloc-on-scope.strb", bytes(bad + e.block())
    # Before version 5 those site kinds do not exist.
    yield "ecorrupt-v4-alloc-site.strb", header(version=4) + block(SITES, site(1, 1, "frame", unit=0, flags=0) +
                                                                   site(2, 9, "heap", unit=0, flags=0))

    # Timestamps going backwards and a thread that ends with scopes open.
    e = Events(0, 1 << 40)
    e.begin((1 << 40) + 10, 1)
    e.end(5)
    e.begin(7, 1)
    yield "ok-backwards.strb", base + e.block() + block(THREAD_END, varint(0))


# >>mutants
BOUNDARY = [0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 2**31 - 1, 2**32 - 1, 2**32, 2**53, 2**62,
            2**63 - 1, 2**64 - 1]
BLOCK_NAMES = {1: "sites", 2: "thread", 3: "events", 4: "thread_end", 5: "clock", 6: "lost", 7: "footer", 8: "ops",
               9: "labels", 10: "drain", 11: "device", 12: "sample_funcs", 13: "samples", 14: "sampler", 18: "tree",
               19: "tree_totals", 20: "calls", 21: "attach", 22: "deep", 23: "content_totals", 24: "clock_offsets",
               25: "merge", 26: "origin", 43: "crash"}
KNOWN_TYPES = sorted(BLOCK_NAMES)


def parse(data):
    """(header bytes, [[type, codec, flags, stored payload, raw_len]]); None when the framing is not whole."""
    if len(data) < 16 or data[:8] != MAGIC:
        return None
    _, flen = struct.unpack_from("<II", data, 8)
    p = 16 + flen
    head, blocks = data[:p], []
    while p < len(data):
        if p + 16 > len(data):
            return None
        btype, codec, flags, stored_len, raw_len = struct.unpack_from("<BBHII", data, p)
        if p + 16 + stored_len > len(data):
            return None
        blocks.append([btype, codec, flags, data[p + 16:p + 16 + stored_len], raw_len])
        p += 16 + stored_len
    return head, blocks


def frame(btype, codec, flags, stored, raw_len, stored_len=None, crc=None):
    """One block as written, its lengths and CRC computed unless given."""
    h = struct.pack("<BBHII", btype, codec, flags, len(stored) if stored_len is None else stored_len, raw_len)
    return h + struct.pack("<I", crc32c(stored, crc32c(h)) if crc is None else crc) + stored


def encode(head, blocks):
    return head + b"".join(frame(t, c, f, p, len(p) if c == 0 else r) for t, c, f, p, r in blocks)


def normalize(blocks, zstd):
    """zstd blocks rewritten raw (zstd -d), so their payloads can be mutated; left as they are without zstd."""
    for b in blocks:
        if b[1] != 1 or not zstd:
            continue
        p = subprocess.run([zstd, "-d", "-c", "-q"], input=b[3], capture_output=True, timeout=60)
        if p.returncode == 0 and len(p.stdout) == b[4]:
            b[1], b[3] = 0, p.stdout


def varint_starts(payload):
    """Offsets where a varint may start: the first byte, and every byte after one without the continuation bit."""
    return [i for i in range(len(payload)) if i == 0 or payload[i - 1] < 0x80]


def set_varint(payload, at, value):
    end = at
    while end < len(payload) - 1 and payload[end] >= 0x80:
        end += 1
    return payload[:at] + varint(value & 0xFFFFFFFFFFFFFFFF) + payload[end + 1:]


def read_varint(payload, at):
    v, shift = 0, 0
    while at < len(payload) and shift < 64:
        v |= (payload[at] & 0x7F) << shift
        if payload[at] < 0x80:
            break
        at, shift = at + 1, shift + 7
    return v


def mutate_payload(rng, op, payload):
    if not payload:
        return bytes([rng.randrange(256)])
    if op == "varint":
        at = rng.choice(varint_starts(payload))
        return set_varint(payload, at, rng.choice(BOUNDARY))
    if op == "nudge":
        at = rng.choice(varint_starts(payload))
        return set_varint(payload, at, read_varint(payload, at) + rng.choice((-1, 1)))
    if op == "flip":
        at = rng.randrange(len(payload))
        return payload[:at] + bytes([payload[at] ^ (1 << rng.randrange(8))]) + payload[at + 1:]
    if op == "cut":
        return payload[:rng.randrange(len(payload))]
    if op == "grow":
        return payload + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
    at, n = rng.randrange(len(payload)), rng.randrange(1, 9)  # splice: a slice repeated
    return payload[:at] + payload[at:at + n] * 2 + payload[at + n:]


PAYLOAD_OPS = ["varint", "varint", "varint", "nudge", "nudge", "flip", "cut", "grow", "splice"]
FRAME_OPS = ["stale_crc", "lengths", "codec", "type", "dup", "drop", "swap", "to_end"]


def mutant(rng, head, blocks, kind, op):
    """One mutant aimed at the blocks of type `kind` (a block index list is chosen among them)."""
    blocks = [list(b) for b in blocks]
    at = rng.choice([i for i, b in enumerate(blocks) if b[0] == kind])
    b = blocks[at]
    if op in PAYLOAD_OPS:
        b[3] = mutate_payload(rng, op, b[3])
        if b[1] == 1:  # still zstd: the frame is damaged, the lengths follow it
            b[4] = len(b[3])
        return encode(head, blocks)
    if op in ("dup", "drop", "swap", "to_end"):
        if op == "dup":
            blocks.insert(at, list(b))
        elif op == "drop":
            del blocks[at]
        elif op == "swap" and at + 1 < len(blocks):
            blocks[at], blocks[at + 1] = blocks[at + 1], blocks[at]
        else:
            blocks.append(blocks.pop(at))
        return encode(head, blocks)
    out = bytearray(encode(head, blocks[:at]))
    t, c, f, p, r = b
    if op == "stale_crc":
        p = mutate_payload(rng, "flip", p)
        out += frame(t, c, f, p, len(p) if c == 0 else r, crc=crc32c(b[3]))
    elif op == "lengths":
        out += frame(t, c, f, p, rng.choice(BOUNDARY) & 0xFFFFFFFF)
    elif op == "codec":
        out += frame(t, rng.choice((1, 2, 255)) if c == 0 else 0, f, p, r)
    else:  # type
        out += frame(rng.choice([k for k in KNOWN_TYPES if k != t]), c, f, p, len(p) if c == 0 else r)
    return bytes(out) + encode(b"", blocks[at + 1:])


def header_mutant(rng, head, blocks):
    """A header field's value set to extremes (epochs near 2^63, ns per tick 0, NaN, huge), or its length broken."""
    fields, p = [], 16
    while p + 4 <= len(head):
        tag, n = struct.unpack_from("<HH", head, p)
        fields.append((p, tag, n))
        p += 4 + n
    p, tag, n = rng.choice(fields)
    h = bytearray(head)
    if n == 8 and rng.random() < 0.5:
        h[p + 4:p + 12] = rng.choice([struct.pack("<Q", 2**63 - rng.randrange(1, 4096)), struct.pack("<Q", 2**64 - 1),
                                       struct.pack("<d", 0.0), struct.pack("<d", float("nan")),
                                       struct.pack("<d", 1e300), struct.pack("<d", -1.0)])
    elif rng.random() < 0.5:
        struct.pack_into("<H", h, p + 2, rng.choice((0, n + 1, 0xFFFF)))
    else:
        h[p + 4 + rng.randrange(max(n, 1)) if n else p + 3] ^= 1 << rng.randrange(8)
    return bytes(h) + encode(b"", blocks)


def mutants(bases, count, seed, zstd=None):
    """count mutants of the bases (name, bytes): each block kind in turn, in a base holding it, by an operation
    drawn from the seeded generator."""
    rng = random.Random(seed)
    parsed = []
    for name, data in bases:
        pb = parse(data)
        if pb:
            normalize(pb[1], zstd)
            parsed.append((name, pb[0], pb[1], sorted({b[0] for b in pb[1]})))
    ops = PAYLOAD_OPS + FRAME_OPS
    every_kind = sorted({k for _, _, _, kinds in parsed for k in kinds})
    for i in range(count):
        kind = every_kind[i % len(every_kind)]  # each kind in turn, in a base that holds it
        name, head, blocks, _ = rng.choice([p for p in parsed if kind in p[3]])
        op = rng.choice(ops)
        if i % 23 == 0:
            data, what = header_mutant(rng, head, blocks), "header"
        elif i % 29 == 0:
            whole = encode(head, blocks)
            data, what = whole[:rng.randrange(len(whole))], "file-cut"
        else:
            data, what = mutant(rng, head, blocks, kind, op), f"{op}-{BLOCK_NAMES.get(kind, kind)}"
        yield f"mutant-{i:04d}-{os.path.splitext(name)[0]}-{what}.strb", data


def default_bases():
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus", "fuzz_capture_reader")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.startswith("ok-")]


def main_mutants(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="make-fuzz-seeds.py --mutants")
    ap.add_argument("--mutants", required=True, metavar="OUTDIR")
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--zstd", default=shutil.which("zstd"))
    ap.add_argument("bases", nargs="*")
    a = ap.parse_args(argv)
    os.makedirs(a.mutants, exist_ok=True)
    bases = [(os.path.basename(p), open(p, "rb").read()) for p in (a.bases or default_bases())]
    n = 0
    for name, data in mutants(bases, a.count, a.seed, a.zstd):
        with open(os.path.join(a.mutants, name), "wb") as f:
            f.write(data)
        n += 1
    print(f"{n} mutants of {len(bases)} captures in {a.mutants}")


def main():
    if "--mutants" in sys.argv:
        return main_mutants(sys.argv[1:])
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus", "fuzz_capture_reader")
    os.makedirs(outdir, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
