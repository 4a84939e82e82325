"""The image tile kernel against the tile kernel by a byte tile's edge share: each case the
kernel took in an `on` run, its time ratio (off / on: above 1 is faster) against the
largest edge share among its byte tiles (`random_bench` labels them `edges X`). Usage:

    python3 bench/image_edge_plot.py OUT.svg OFF.txt ON.txt [OFF2.txt ON2.txt ...]

Each OFF/ON pair is one set's runs (RANDOM_IMAGE_TILES=0 and the default; runs of the same
set may be comma-separated, each case at its shortest time).
"""

import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from random_runs import load_runs  # noqa: E402


def shares(path):
    out = {}
    for line in open(path):
        m = re.match(r"case\s+(\d+):.*\[(.*)\] src", line)
        if m and "image tiles" in m.group(2):
            e = [float(x) for x in re.findall(r"edges ([0-9.]+)", m.group(2))]
            if e:
                out[int(m.group(1))] = max(e)
    return out


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        sys.exit(__doc__)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for k in range(2, len(sys.argv), 2):
        off, on = load_runs(sys.argv[k]), load_runs(sys.argv[k + 1])
        edge = {}
        for p in sys.argv[k + 1].split(","):
            edge.update(shares(p))
        xs, ys = [], []
        for c, e in sorted(edge.items()):
            if c in off and c in on:
                xs.append(e)
                ys.append(off[c].ms / on[c].ms)
                ax.annotate(str(c), (xs[-1], ys[-1]), fontsize=7, xytext=(3, 2), textcoords="offset points")
        ax.scatter(xs, ys, label=os.path.basename(sys.argv[k + 1].split(",")[0]))
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axvline(1 / 8, color="tab:red", lw=0.8, ls="--", label="rule: at most 1/8")
    ax.set_xlabel("edge words / written words (largest byte tile)")
    ax.set_ylabel("tile kernel time / image kernel time")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[1])


if __name__ == "__main__":
    main()
