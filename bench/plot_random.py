"""Plots of `random_bench` runs: sector-exact efficiency of every case, sorted, for each
full run given, and case by case for a pair of runs of the same cases in one call.

    python3 bench/plot_random.py OUT.svg --full LABEL=RUN.txt ... --pair LABEL=RUN.txt LABEL=RUN.txt
    python3 bench/plot_random.py OUT.svg --full LABEL=RUN.txt --by-size RUN.txt

`--by-size` puts every case of one run beside its element size instead of the pair,
marked by the schedule's first step (multi-axis tiles, elementwise, another kernel).

RUN.txt is the text `random_bench` prints (its "case N: eff ... (sector-exact X" lines).
"""

import sys

import matplotlib

import random_runs

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    """Sector-exact efficiency by case."""
    return {c: r.efficiency for c, r in random_runs.load(path).items()}


def by_size(ax, runs):
    """Each case at its element size (jittered), marked by its schedule's first step."""
    kinds = [("tiled", "multi-axis tiles", "o"), ("elementwise", "elementwise", "s"), ("", "other kernels", "^")]
    sizes = [1, 2, 4, 8, 16]
    for prefix, label, marker in kinds:
        xs, ys = [], []
        for c, r in sorted(runs.items()):
            first = r.steps.split("+")[0]
            taken = [k for k, _, _ in kinds[:-1] if first.startswith(k)]
            if (taken[0] if taken else "") != prefix:
                continue
            xs.append(sizes.index(r.itemsize) + ((c * 37) % 21 - 10) / 30)
            ys.append(r.efficiency)
        ax.scatter(xs, ys, s=12, marker=marker, label=label, alpha=0.8)
    ax.axhline(0.85, color="gray", ls=":", lw=1)
    ax.axhline(0.65, color="gray", ls=":", lw=1)
    ax.set_xticks(range(len(sizes)), [f"{s} B" for s in sizes])
    ax.set_xlabel("element size")
    ax.set_title("Each case by element size")
    ax.legend(fontsize=8)


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    full, pair, mode = [], [], None
    sized = None
    for a in args:
        if a in ("--full", "--pair", "--by-size"):
            mode = a
            continue
        if mode == "--by-size":
            sized = random_runs.load(a)
            continue
        label, path = a.split("=", 1)
        (full if mode == "--full" else pair).append((label, load(path)))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ax = axes[0]
    for label, runs in full:
        v = sorted(runs.values())
        ax.plot(range(len(v)), v, label=f"{label} (median {v[len(v) // 2]:.2f})")
    ax.axhline(0.85, color="gray", ls=":", lw=1)
    ax.axhline(0.65, color="gray", ls=":", lw=1)
    ax.set_xlabel("case, sorted by efficiency")
    ax.set_ylabel("sector-exact efficiency")
    ax.set_title("All random layouts")
    ax.legend(fontsize=8)
    if len(pair) == 2:
        ax = axes[1]
        (la, a), (lb, b) = pair
        cases = sorted(set(a) & set(b), key=lambda c: a[c])
        x = range(len(cases))
        ax.scatter(x, [a[c] for c in cases], s=14, label=la)
        ax.scatter(x, [b[c] for c in cases], s=14, marker="^", label=lb)
        for i, c in enumerate(cases):
            ax.plot([i, i], [a[c], b[c]], color="lightgray", lw=1, zorder=0)
        ax.set_xlabel("case, sorted by the first run")
        ax.set_title("The same cases, one call")
        ax.legend(fontsize=8)
    if sized is not None:
        by_size(axes[1], sized)
    fig.tight_layout()
    fig.savefig(out)


if __name__ == "__main__":
    main()
