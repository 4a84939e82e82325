"""What `random_bench` prints, read back: one record per case (its first line; the ten
worst repeat at the end), for the scripts that compare and plot runs."""

import math
import re
from typing import NamedTuple

CASE = re.compile(
    r"case\s+(\d+): eff [\d.]+ \(sector-exact ([\d.]+).*?; ([\d.]+) ms.*?(WRONG BYTES)? ?\[(.*?)\].*?itemsize=(\d+)"
)


class Case(NamedTuple):
    efficiency: float  # sector-exact
    ms: float
    wrong: bool  # copied wrong bytes
    steps: str
    itemsize: int


def load(path):
    """Case number -> `Case`, from the first line of each case."""
    out = {}
    with open(path) as f:
        for line in f:
            m = CASE.match(line)
            if m and int(m.group(1)) not in out:
                out[int(m.group(1))] = Case(
                    float(m.group(2)), float(m.group(3)), bool(m.group(4)), m.group(5), int(m.group(6))
                )
    return out


def load_runs(paths):
    """`load` over one run or several of the same cases (`a.txt,b.txt`): per case the
    record with the shortest time (a copy that wrote wrong bytes in any run is marked)."""
    return shortest(paths, load, lambda r: r.ms, lambda r: r.wrong, lambda r: r._replace(wrong=True))


def shortest(paths, load_one, ms, wrong, mark):
    """One run or several of the same cases (`a,b`), each read by `load_one` (key ->
    record): per key the record of shortest `ms(record)`, passed through `mark` if
    `wrong(record)` held in any run."""
    out, bad = {}, set()
    for path in paths.split(","):
        for k, rec in load_one(path).items():
            if wrong(rec):
                bad.add(k)
            if k not in out or ms(rec) < ms(out[k]):
                out[k] = rec
    return {k: mark(r) if k in bad else r for k, r in out.items()}


def geomean(xs):
    """Geometric mean of positive ratios (1.0 for none)."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 1.0


def ab_args(doc, load_run):
    """The two runs and the threshold an A/B script is given (`OLD NEW [THRESHOLD]`, default
    0.02), each run read by `load_run`; prints `doc` and exits 2 without two runs."""
    import sys

    if len(sys.argv) < 3:
        print(doc)
        sys.exit(2)
    threshold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    return load_run(sys.argv[1]), load_run(sys.argv[2]), threshold
