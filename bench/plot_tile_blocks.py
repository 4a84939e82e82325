"""A plot of `scripts/gpu-test tile-blocks` runs over several sets: for each case whose
first tile launch reads bytes or halfwords in 4-byte words, its speed at each cap
against the engine's rule (blocks0), one column per cap, the cases marked by the size
of their written words.

    python3 bench/plot_tile_blocks.py OUT.svg LABEL=DIR [LABEL=DIR ...] [--caps 3,4]

DIR is a tile-blocks OUT folder (`blocks0.txt`, `blocks3.txt`, ... as `random_bench`
prints them); LABEL names its set (a seed). A case that copied wrong bytes under any
limit makes the script exit non-zero.
"""

import re
import sys

import matplotlib

import random_runs

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FIRST_TILE = re.compile(r"^tiled\(v\d+,r(\d+),w(\d+)\)")


def word_reads(runs):
    """(case, written bytes) of the cases whose first step is a tile launch reading
    elements of 1 or 2 bytes in 4-byte words."""
    out = []
    for case, c in sorted(runs.items()):
        m = FIRST_TILE.match(c.steps)
        if m and c.itemsize <= 2 and int(m.group(1)) == 4:
            out.append((case, int(m.group(2))))
    return out


def main():
    args = sys.argv[1:]
    caps = [3, 4]
    if "--caps" in args:
        i = args.index("--caps")
        caps = [int(x) for x in args[i + 1].split(",")]
        del args[i : i + 2]
    if len(args) < 2 or any("=" not in a for a in args[1:]):
        sys.exit(__doc__)
    out, sets = args[0], [a.split("=", 1) for a in args[1:]]
    fig, axes = plt.subplots(1, len(caps), figsize=(5 * len(caps), 4.5), sharey=True, squeeze=False)
    wrong = 0
    for k, cap in enumerate(caps):
        ax = axes[0][k]
        same, other = [], []
        for x, (label, folder) in enumerate(sets):
            rule = random_runs.load(f"{folder}/blocks0.txt")
            capped = random_runs.load(f"{folder}/blocks{cap}.txt")
            for case, written in word_reads(rule):
                if case not in capped:
                    continue
                wrong += rule[case].wrong or capped[case].wrong
                point = (x, rule[case].ms / capped[case].ms, case)
                (same if written == 4 else other).append(point)
        for points, marker, name in [
            (other, "o", "written in 1-, 2- or 8-byte words"),
            (same, "x", "written in 4-byte words"),
        ]:
            if points:
                ax.scatter([p[0] for p in points], [p[1] for p in points], marker=marker, label=name)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(sets)), [label for label, _ in sets])
        ax.set_title(f"at most {cap} blocks an SM")
        ax.set_xlabel("set (random_bench seed)")
        if k == 0:
            ax.set_ylabel("speed against the engine's rule (8 blocks)")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=2, fontsize="small")
    fig.suptitle("Tiles of bytes and halfwords read in 4-byte words: fewer blocks an SM")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(out)
    print(f"wrote {out}")
    if wrong:
        sys.exit(f"{wrong} runs copied wrong bytes")


if __name__ == "__main__":
    main()
