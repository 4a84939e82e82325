"""Two `random_bench` runs of the same cases, side by side: each case's sector-exact
efficiency in both and the time ratio (old / new: above 1 is faster), then how many moved.
Run both binaries in one call on the same machine, e.g.

    OLD/random_bench --cases 6,8,106 > old.txt; NEW/random_bench --cases 6,8,106 > new.txt
    python3 bench/random_ab.py old.txt new.txt [THRESHOLD]

OLD and NEW may each name several runs, comma-separated (`old.txt,old_2.txt`): each case
then counts with its shortest time over them (`scripts/gpu-test ab` with AB_REPEAT=2 runs
the sides new, old, old, new, so that a drift over the call falls on both).

THRESHOLD (default 0.02): ratios within 1 +- THRESHOLD count as unchanged. Then the
cases whose steps differ between the runs (where a planning change acts) on their own,
beside the spread of those whose steps are the same. A case that copied wrong bytes in
either run is marked and makes the script exit non-zero.
"""

import sys

from random_runs import ab_args, geomean, load_runs


def main():
    old, new, threshold = ab_args(__doc__, load_runs)
    faster = slower = wrong = 0
    print(f"{'case':>5} {'isz':>3} {'old':>5} {'new':>5} {'speedup':>8}  steps (new)")
    for c in sorted(set(old) & set(new)):
        (oe, oms, ow, _, isz), (ne, nms, nw, steps, _) = old[c], new[c]  # random_runs.Case
        ratio = oms / nms
        faster += ratio > 1 + threshold
        slower += ratio < 1 - threshold
        wrong += ow or nw
        mark = "  WRONG BYTES" if ow or nw else ""
        print(f"{c:5d} {isz:3d} {oe:5.2f} {ne:5.2f} {ratio:8.3f}  {steps}{mark}")
    n = len(set(old) & set(new))
    print(f"{n} cases: {faster} faster, {slower} slower, {n - faster - slower} within {threshold:.0%}")
    by_class(old, new)
    # The cases the change planned otherwise: where it acts (the others measure the
    # spread between two runs of the same steps).
    moved = [(old[c].ms / new[c].ms, c) for c in sorted(set(old) & set(new)) if old[c].steps != new[c].steps]
    if moved:
        geo = geomean([r for r, _ in moved])
        up = sum(r > 1 + threshold for r, _ in moved)
        down = sum(r < 1 - threshold for r, _ in moved)
        print(f"{len(moved)} cases with other steps: {up} faster, {down} slower, geomean {geo:.3f}: "
              + ", ".join(f"{c} {r:.2f}x" for r, c in sorted(moved)))
        same = [old[c].ms / new[c].ms for c in sorted(set(old) & set(new)) if old[c].steps == new[c].steps]
        if same:
            print(f"the {len(same)} others (same steps) span {min(same):.2f}-{max(same):.2f}x")
    else:
        print("no case planned otherwise")
    if wrong:
        print(f"{wrong} cases copied wrong bytes")
        sys.exit(1)


def by_class(old, new):
    """Geometric mean of the ratios over all cases, then per class (the kind of the new
    side's first step, and the element size): a change to one kernel shows in its rows,
    the others give the spread of the call."""
    groups = {}
    for c in sorted(set(old) & set(new)):
        kind = new[c].steps.split("(")[0]
        groups.setdefault((kind, new[c].itemsize), []).append((old[c].ms / new[c].ms, c))
    everything = [r for g in groups.values() for r, _ in g]
    if not everything:
        return
    print(f"geomean {geomean(everything):.3f} over {len(everything)} cases; by first step and element bytes:")
    for (kind, isz), g in sorted(groups.items()):
        lo, hi = min(g), max(g)
        print(f"  {kind:<14} {isz:>2} B {len(g):>3} cases  geomean {geomean([r for r, _ in g]):.3f}"
              f"  slowest {lo[0]:.3f} (case {lo[1]})  fastest {hi[0]:.3f} (case {hi[1]})")


if __name__ == "__main__":
    main()
