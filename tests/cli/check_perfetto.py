#!/usr/bin/env python3
"""check_perfetto.py — decodes `strobe export --format perfetto` output with
`protoc --decode` against tests/cli/perfetto_subset.proto (written from
Perfetto's published field numbers) and replays it the way a trace reader
does: sequences, incremental state, interned names, the sequence-scoped
incremental clock, track descriptors, slice begin/end stacks, counters and
instants. Compressed packets (zstd_compressed_packets, compressed_packets)
are decompressed (the zstd command, Python's zlib) and their contents decoded
with protoc in turn.

Every rule of the format the exporter relies on is checked here and a
violation raises Bad: a packet without a sequence id, a packet before its
sequence's SEQ_INCREMENTAL_STATE_CLEARED, a later packet without
SEQ_NEEDS_INCREMENTAL_STATE, an iid used before it was interned on its
sequence, a timestamp on an undefined clock, a slice that ends before it
begins, slices of one track that overlap partly once sorted by time, an END
on a track with no open slice, an event on an undescribed track, a field
the subset does not know.

Used by cli_test.py (import); alone: check_perfetto.py FILE --protoc BIN
prints a summary.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "perfetto_subset.proto")
CLEARED, NEEDS = 1, 2
INCR_CLOCK, MONOTONIC = 64, 3


class Bad(Exception):
    pass


# >>text format: protoc --decode prints messages as `name: value` lines and
# `name {` ... `}` blocks; strings are C-escaped.
_LINE = re.compile(r'^\s*([A-Za-z_0-9]+)(?::\s*(.*)|\s*\{)$')


def _unescape(s):
    out = bytearray()
    i = 0
    raw = s.encode("utf-8")
    while i < len(raw):
        c = raw[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        n = raw[i + 1]
        simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord('"'): 34, ord("'"): 39, ord("\\"): 92,
                  ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11, ord("?"): 63}
        if n in simple:
            out.append(simple[n])
            i += 2
        elif 0x30 <= n <= 0x37:
            j = i + 1
            while j < len(raw) and j < i + 4 and 0x30 <= raw[j] <= 0x37:
                j += 1
            out.append(int(raw[i + 1:j], 8))
            i = j
        elif n == ord("x"):
            j = i + 2
            while j < len(raw) and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j], 16) & 0xFF)
            i = j
        else:
            raise Bad(f"unknown escape in {s!r}")
    return bytes(out)


def _value(v):
    if v.startswith('"'):
        if not v.endswith('"'):
            raise Bad(f"unterminated string {v!r}")
        return _unescape(v[1:-1])
    if v in ("true", "false"):
        return v == "true"
    try:
        return int(v)
    except ValueError:
        return float(v)


def parse_text(text):
    """Messages as dicts of lists: {field: [value or dict, ...]}."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.strip() == "}":
            stack.pop()
            continue
        m = _LINE.match(line)
        if not m:
            raise Bad(f"cannot parse protoc output line {line!r}")
        key = m.group(1)
        if key.isdigit():
            raise Bad(f"field {key} is not in the subset (the exporter wrote something unexpected): {line.strip()}")
        if m.group(2) is None:
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
        else:
            stack[-1].setdefault(key, []).append(_value(m.group(2)))
    if len(stack) != 1:
        raise Bad("unbalanced protoc output")
    return root


def protoc_decode(data, protoc):
    p = subprocess.run([protoc, "-I", HERE, "--decode=strobe.perfetto_subset.Trace", os.path.basename(PROTO)],
                       input=data, capture_output=True, cwd=HERE, timeout=300)
    if p.returncode != 0:
        raise Bad(f"protoc --decode failed ({p.returncode}): {p.stderr.decode(errors='replace')[:2000]}")
    return parse_text(p.stdout.decode("utf-8"))


def one(msg, key, default=None):
    v = msg.get(key)
    if not v:
        return default
    if len(v) != 1:
        raise Bad(f"{key} appears {len(v)} times in one message")
    return v[0]


def packets(path, protoc, zstd="zstd"):
    """Every TracePacket in order, compressed ones replaced by their contents.
    Also returns how the file was compressed ({'zstd': n, 'deflate': n, 'plain': n})."""
    with open(path, "rb") as f:
        data = f.read()
    kinds = {"zstd": 0, "deflate": 0, "plain": 0}
    out = []
    for p in protoc_decode(data, protoc).get("packet", []):
        if "zstd_compressed_packets" in p or "compressed_packets" in p:
            if len(p) != 1:
                raise Bad(f"a compressed packet carries other fields: {sorted(p)}")
            if "zstd_compressed_packets" in p:
                blob = one(p, "zstd_compressed_packets")
                d = subprocess.run([zstd, "-d", "-q", "-c"], input=blob, capture_output=True, timeout=60)
                if d.returncode != 0:
                    raise Bad(f"zstd -d failed: {d.stderr[:500]}")
                inner, kind = d.stdout, "zstd"
            else:
                inner, kind = zlib.decompress(one(p, "compressed_packets")), "deflate"
            if len(inner) + 16 > 512 * 1024:
                raise Bad(f"a compressed packet holds {len(inner)} bytes: Perfetto wants them under 512 KB")
            kinds[kind] += 1
            for q in protoc_decode(inner, protoc).get("packet", []):
                if "zstd_compressed_packets" in q or "compressed_packets" in q:
                    raise Bad("compressed packets nested in compressed packets")
                out.append(q)
        else:
            kinds["plain"] += 1
            out.append(p)
    return out, kinds


class Seq:
    def __init__(self):
        self.cleared = False
        self.names, self.cats, self.dnames = {}, {}, {}
        self.clock = None          # the incremental clock's current value
        self.default_clock = None
        self.default_track = None


def _name(msg, table, what):
    """A message's name: interned (name_iid, looked up in table) or inline (name)."""
    if "name_iid" in msg:
        iid = one(msg, "name_iid")
        if iid not in table:
            raise Bad(f"{what} iid {iid} used before it was interned on its sequence")
        return table[iid]
    return (one(msg, "name") or b"").decode()


def _annotations(te, seq):
    args = {}
    for a in te.get("debug_annotations", []):
        name = _name(a, seq.dnames, "debug annotation name")
        vals = [k for k in ("bool_value", "uint_value", "double_value", "string_value") if k in a]
        if len(vals) != 1:
            raise Bad(f"annotation {name} has values {vals}")
        v = one(a, vals[0])
        args[name] = v.decode() if isinstance(v, bytes) else v
    return args


def replay(pkts):
    """What a trace reader sees: tracks, slices (closed and still open),
    instants and counter samples, with absolute timestamps in ns."""
    seqs = {}
    tracks = {}
    stacks = {}
    slices, instants, counters = [], [], []
    for n, p in enumerate(pkts):
        where = f"packet {n}"
        seq_id = one(p, "trusted_packet_sequence_id")
        if not seq_id:
            raise Bad(f"{where}: no trusted_packet_sequence_id")
        flags = one(p, "sequence_flags", 0)
        s = seqs.get(seq_id)
        if flags & CLEARED:
            s = seqs[seq_id] = Seq()
            s.cleared = True
        elif s is None or not s.cleared:
            raise Bad(f"{where}: sequence {seq_id} used before SEQ_INCREMENTAL_STATE_CLEARED")
        elif not flags & NEEDS:
            raise Bad(f"{where}: a packet after the sequence's defaults lacks SEQ_NEEDS_INCREMENTAL_STATE")
        cs = one(p, "clock_snapshot")
        if cs:
            if one(cs, "primary_trace_clock") != MONOTONIC:
                raise Bad(f"{where}: primary trace clock is not MONOTONIC")
            for c in cs.get("clocks", []):
                cid = one(c, "clock_id")
                if cid == INCR_CLOCK:
                    if not one(c, "is_incremental") or one(c, "unit_multiplier_ns", 1) != 1:
                        raise Bad(f"{where}: clock 64 is not an incremental ns clock")
                    s.clock = one(c, "timestamp")
                elif cid != MONOTONIC:
                    raise Bad(f"{where}: unexpected clock {cid}")
        d = one(p, "trace_packet_defaults")
        ts = None
        if "timestamp" in p:
            cid = one(p, "timestamp_clock_id") or s.default_clock
            if cid == INCR_CLOCK:
                if s.clock is None:
                    raise Bad(f"{where}: timestamp on clock 64 before its snapshot")
                s.clock += one(p, "timestamp")
                ts = s.clock
            elif cid == MONOTONIC:
                ts = one(p, "timestamp")
            else:
                raise Bad(f"{where}: timestamp on clock {cid}")
        if d:
            s.default_clock = one(d, "timestamp_clock_id")
            ted = one(d, "track_event_defaults")
            s.default_track = one(ted, "track_uuid") if ted else None
        idata = one(p, "interned_data")
        if idata:
            for key, table in (("event_names", s.names), ("event_categories", s.cats),
                               ("debug_annotation_names", s.dnames)):
                for e in idata.get(key, []):
                    iid, name = one(e, "iid"), one(e, "name").decode()
                    if not iid or (iid in table and table[iid] != name):
                        raise Bad(f"{where}: {key} iid {iid} redefined or zero")
                    table[iid] = name
        td = one(p, "track_descriptor")
        if td:
            uuid = one(td, "uuid")
            tracks[uuid] = {
                "uuid": uuid, "parent": one(td, "parent_uuid"),
                "name": (one(td, "name") or b"").decode(),
                "process": one(td, "process"), "thread": one(td, "thread"), "counter": one(td, "counter"),
            }
            th = tracks[uuid]["thread"]
            if th:
                tracks[uuid]["name"] = one(th, "thread_name").decode()
        te = one(p, "track_event")
        if te:
            if ts is None:
                raise Bad(f"{where}: track event without timestamp")
            track = one(te, "track_uuid") or s.default_track
            if track not in tracks:
                raise Bad(f"{where}: event on track {track} before its descriptor")
            name = _name(te, s.names, f"{where}: event name")
            cats = []
            for c in te.get("category_iids", []):
                if c not in s.cats:
                    raise Bad(f"{where}: category iid {c} used before it was interned")
                cats.append(s.cats[c])
            args = _annotations(te, s)
            kind = one(te, "type")
            st = stacks.setdefault(track, [])
            if kind == 1:
                st.append({"track": track, "name": name, "cat": ",".join(cats), "begin": ts, "end": None,
                           "depth": len(st), "args": args, "end_args": {}})
            elif kind == 2:
                if not st:
                    raise Bad(f"{where}: slice end on track {track} with no open slice")
                sl = st.pop()
                if ts < sl["begin"]:
                    raise Bad(f"{where}: slice {sl['name']} ends before it begins")
                sl["end"], sl["end_args"] = ts, args
                slices.append(sl)
            elif kind == 3:
                instants.append({"track": track, "name": name, "ts": ts, "args": args})
            elif kind == 4:
                counters.append({"track": track, "ts": ts, "value": one(te, "double_counter_value")})
            else:
                raise Bad(f"{where}: event type {kind}")
    # A reader orders events by time, not by file position (the operations'
    # sequence is written in end order): each track's slices, sorted by time,
    # must nest or lie apart, never overlap partly.
    by_track = {}
    for sl in slices:
        by_track.setdefault(sl["track"], []).append(sl)
    for track, sls in by_track.items():
        stack = []
        for sl in sorted(sls, key=lambda sl: (sl["begin"], -sl["end"])):
            while stack and stack[-1]["end"] <= sl["begin"] and not (stack[-1]["begin"] == sl["begin"]):
                stack.pop()
            if stack and sl["end"] > stack[-1]["end"]:
                raise Bad(f"slices {stack[-1]['name']} and {sl['name']} overlap partly on track {track}")
            stack.append(sl)
    open_slices = [sl for st in stacks.values() for sl in st]
    return {"tracks": tracks, "slices": slices, "open": open_slices, "instants": instants, "counters": counters}


def load(path, protoc, zstd="zstd"):
    pkts, kinds = packets(path, protoc, zstd)
    r = replay(pkts)
    r["kinds"] = kinds
    r["packets"] = len(pkts)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--zstd", default="zstd")
    a = ap.parse_args()
    try:
        r = load(a.file, a.protoc, a.zstd)
    except Bad as e:
        print(f"check_perfetto: {a.file}: {e}", file=sys.stderr)
        return 1
    print(f"{r['packets']} packets ({r['kinds']}), {len(r['tracks'])} tracks, {len(r['slices'])} slices, "
          f"{len(r['open'])} never ended, {len(r['instants'])} instants, {len(r['counters'])} counter samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
