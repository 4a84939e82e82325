"""Which cap on the tile kernel's blocks an SM suits which tile launch: the runs of
`scripts/gpu-test tile-blocks CASES OUT` (OUT/blocksN.txt, OUT/blocksN_2.txt, ... for each
limit N; 0 is the engine's own rule), read back and grouped by the first tile launch's
variant (element, read and write bytes, as `random_bench` labels it).

    python3 bench/tile_blocks_rule.py OUT

For each variant and limit: the geometric mean of (time under the engine's rule) / (time
under the limit) over the variant's cases (above 1: the limit is faster), and the limit
that is best for the most cases. Each case counts with its shortest time over the rounds.
A case that copied wrong bytes under any limit is named and makes the script exit 1.
"""

import glob
import os
import re
import sys
from collections import defaultdict

from random_runs import geomean, load_runs

RUN = re.compile(r"blocks(\d+)(?:_\d+)?\.txt$")
TILE = re.compile(r"tiled\(v\d+,r(\d+),w(\d+)\)")


def runs_by_limit(out):
    """Limit -> its runs' files, comma-separated (`random_runs.load_runs`' form)."""
    files = defaultdict(list)
    for path in sorted(glob.glob(os.path.join(out, "blocks*.txt"))):
        m = RUN.search(os.path.basename(path))
        if m:
            files[int(m.group(1))].append(path)
    return {n: ",".join(paths) for n, paths in sorted(files.items())}


def variant(case):
    """`eb:read:write` of the case's first tile launch, or None without one."""
    m = TILE.search(case.steps)
    return f"{case.itemsize}:{m.group(1)}:{m.group(2)}" if m else None


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    runs = {n: load_runs(paths) for n, paths in runs_by_limit(sys.argv[1]).items()}
    if 0 not in runs or len(runs) < 2:
        print(f"{sys.argv[1]}: needs the runs of limit 0 (the engine's rule) and another")
        sys.exit(2)
    base = runs[0]
    limits = [n for n in runs if n != 0]
    cases = sorted(set(base).intersection(*(set(runs[n]) for n in limits)))
    wrong = [c for c in cases if any(runs[n][c].wrong for n in runs)]
    groups = defaultdict(list)
    for c in cases:
        v = variant(base[c])
        if v is not None:
            groups[v].append(c)
    head = "".join(f"{'<=' + str(n):>8}" for n in limits)
    print(f"{'variant':>9} {'cases':>5}{head}   best (cases)")
    for v in sorted(groups, key=lambda v: [int(x) for x in v.split(":")]):
        cs = groups[v]
        means = [geomean([base[c].ms / runs[n][c].ms for c in cs]) for n in limits]
        # Per case the fastest of every limit, the engine's rule included.
        best = defaultdict(int)
        for c in cs:
            best[min(runs, key=lambda n: runs[n][c].ms)] += 1
        tally = ", ".join(f"{'rule' if n == 0 else '<=' + str(n)}: {k}" for n, k in sorted(best.items()))
        print(f"{v:>9} {len(cs):5d}" + "".join(f"{m:8.3f}" for m in means) + f"   {tally}")
    print(f"{len(cases)} cases under every limit ({', '.join(map(str, [0] + limits))})")
    if wrong:
        print(f"copied wrong bytes: cases {wrong}")
        sys.exit(1)


if __name__ == "__main__":
    main()
