#!/usr/bin/env python3
"""Per set of an overhead_phases.py --cycle run: its ON/OFF ratio, and its ratio to the last set (the
floor) per round; median over rounds, and a 95% bootstrap interval of that median
(docs/PERFORMANCE.md). With --detach the OFF phases ran without CUPTI, so ON/OFF is the cost over
a bare process.

  python3 bench/phases_ci.py DIR/phases_TAG.json [more.json ...]
"""
import json
import random
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        for preset, row in json.load(open(path)).items():
            cyc = row.get("cycle")
            if not cyc:
                continue
            sets = list(cyc)
            floor = cyc[sets[-1]]["ratios"]
            off = "OFF (no CUPTI: --detach)" if row.get("traced", {}).get("detached") else "OFF"
            for s in sets:
                print(f"{path}: {preset} [{s}] vs {off} {interval(cyc[s]['ratios'])}")
            for s in sets[:-1]:
                r = [a / b for a, b in zip(cyc[s]["ratios"], floor)]
                print(f"{path}: {preset} [{s}] vs [{sets[-1]}] {interval(r)}")


def interval(r):
    """The median of the ratios and a 95% bootstrap interval of it."""
    rnd = random.Random(0)  # the same interval whatever else is printed
    boot = sorted(statistics.median(rnd.choices(r, k=len(r))) for _ in range(2000))
    return f"{statistics.median(r):.3f} (95% CI {boot[50]:.3f}-{boot[1949]:.3f}, {len(r)} rounds)"


if __name__ == "__main__":
    main()
