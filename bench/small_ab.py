"""Two `small_bench` runs of the same permutes, side by side: each permute's time as
planned in both and the ratio (old / new: above 1 is faster), then how many moved. Run
both binaries in one call on the same machine, e.g.

    OLD/small_bench old.jsonl; NEW/small_bench new.jsonl
    python3 bench/small_ab.py old.jsonl new.jsonl [THRESHOLD]

OLD and NEW may each name several runs, comma-separated (`old.jsonl,old_2.jsonl`): each
permute then counts with its shortest time over them.

THRESHOLD (default 0.02): ratios within 1 +- THRESHOLD count as unchanged. A permute
that copied wrong bytes in either run makes the script exit non-zero.
"""

import json
import sys

from random_runs import ab_args, geomean, shortest


def load_run(path):
    with open(path) as f:
        return {(tuple(c["shape"]), tuple(c["axes"]), c["itemsize"]): c for c in map(json.loads, f)}


def load(paths):
    """Permute -> record, over one run or several (`a.jsonl,b.jsonl`): each permute at its
    shortest time, exact only if it copied exactly in every run."""
    return shortest(paths, load_run, lambda c: c["ms"], lambda c: not c["exact"], lambda c: dict(c, exact=False))


def main():
    old, new, threshold = ab_args(__doc__, load)
    keys = [k for k in old if k in new]
    ratios = []
    print(f"{'permute':<46} {'old us':>8} {'new us':>8} {'speedup':>8}")
    for k in keys:
        o, n = old[k], new[k]
        r = o["ms"] / n["ms"]
        ratios.append(r)
        name = f"{list(k[0])} {list(k[1])} itemsize {k[2]}"
        print(f"{name:<46} {o['ms'] * 1e3:>8.1f} {n['ms'] * 1e3:>8.1f} {r:>8.3f}")
    up = sum(r > 1 + threshold for r in ratios)
    down = sum(r < 1 - threshold for r in ratios)
    geo = geomean(ratios)
    print(f"{len(ratios)} permutes: {up} faster, {down} slower, geomean {geo:.3f}")
    if not all(old[k]["exact"] and new[k]["exact"] for k in keys):
        sys.exit("a permute copied wrong bytes")


if __name__ == "__main__":
    main()
