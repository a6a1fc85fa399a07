#!/usr/bin/env python3
"""Makes a large torch.profiler (Kineto) JSON trace by repeating a real one.

  make_big_kineto.py SAMPLE.json[.gz] OUT.json --min-bytes 1100000000

Each repetition k copies every event of SAMPLE's traceEvents byte for byte, in
Kineto's own layout, except:
  * "ts" is shifted by k * SPAN (SPAN = the sample's time extent + 1 ms), as
    exact decimal text, so the repetitions follow one another in time;
  * "correlation", "External id" and flow "id" values are shifted by
    k * ID_STRIDE, so launch -> kernel links stay unique and paired.
Repetitions are added until the output reaches --min-bytes; the other
top-level members (deviceProperties, baseTimeNanoseconds, ...) are copied
once. Prints the number of repetitions and the expected per-category counts.
The output is written as it is produced; memory stays at a few times SAMPLE.
"""
import argparse
import gzip
import json
import re
import sys
from decimal import Decimal

ID_STRIDE = 1_000_000
NUM = r"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
PATTERNS = [("ts", re.compile(r'"ts"\s*:\s*' + NUM)),
            ("id", re.compile(r'"(?:correlation|External id|id)"\s*:\s*' + NUM))]


def open_text(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def split_events(text):
    """Returns (head, [raw event text], tail): head ends with '[' of traceEvents."""
    m = re.search(r'"traceEvents"\s*:\s*\[', text)
    if not m:
        sys.exit("no traceEvents array")
    dec = json.JSONDecoder()
    pos = m.end()
    events = []
    while True:
        while text[pos] in " \t\r\n,":
            pos += 1
        if text[pos] == "]":
            break
        _, end = dec.raw_decode(text, pos)
        events.append(text[pos:end])
        pos = end
    return text[:m.end()], events, text[pos + 1:]


def template(ev):
    """Splits an event's text into literal fragments and (kind, value) slots."""
    spans = []
    for kind, pat in PATTERNS:
        for m in pat.finditer(ev):
            spans.append((m.start(1), m.end(1), kind, m.group(1)))
    spans.sort()
    parts, slots, last = [], [], 0
    for s, e, kind, val in spans:
        parts.append(ev[last:s])
        slots.append((kind, Decimal(val) if kind == "ts" else int(val)))
        last = e
    parts.append(ev[last:])
    return parts, slots


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sample")
    ap.add_argument("out")
    ap.add_argument("--min-bytes", type=int, default=1_100_000_000)
    args = ap.parse_args()
    head, events, tail = split_events(open_text(args.sample))
    parsed = [json.loads(e) for e in events]
    starts = [Decimal(str(e["ts"])) for e in parsed if "ts" in e]
    ends = [Decimal(str(e["ts"])) + Decimal(str(e.get("dur", 0))) for e in parsed if "ts" in e]
    span = (max(ends) - min(starts)) + 1000  # us
    temps = [template(e) for e in events]
    cats = {}
    for e in parsed:
        k = e.get("cat", "ph=" + str(e.get("ph")))
        cats[k] = cats.get(k, 0) + 1
    written = 0
    reps = 0
    with open(args.out, "w", encoding="utf-8", buffering=1 << 22) as out:
        out.write(head)
        written += len(head.encode())
        while written < args.min_bytes:
            shift_ts = span * reps
            shift_id = ID_STRIDE * reps
            chunk = []
            for parts, slots in temps:
                pieces = [parts[0]]
                for i, (kind, val) in enumerate(slots):
                    pieces.append(str(val + shift_ts) if kind == "ts" else str(val + shift_id))
                    pieces.append(parts[i + 1])
                chunk.append("".join(pieces))
            text = ("," if reps else "") + ",".join(chunk)
            out.write(text)
            written += len(text.encode())
            reps += 1
        out.write("\n  ]" + tail)
    print(json.dumps({"repetitions": reps, "events": len(events) * reps,
                      "per_category": {k: v * reps for k, v in sorted(cats.items())}}))


if __name__ == "__main__":
    main()
