"""What `random_bench` prints, read back: one record per case (its first line; the ten
worst repeat at the end), for the scripts that compare and plot runs."""

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
    out = {}
    for path in paths.split(","):
        for c, rec in load(path).items():
            best = out.get(c)
            wrong = rec.wrong or (best is not None and best.wrong)
            if best is None or rec.ms < best.ms:
                best = rec
            out[c] = best._replace(wrong=wrong)
    return out


def ab_args(doc, load_run):
    """The two runs and the threshold an A/B script is given (`OLD NEW [THRESHOLD]`, default
    0.02), each run read by `load_run`; prints `doc` and exits 2 without two runs."""
    import sys

    if len(sys.argv) < 3:
        print(doc)
        sys.exit(2)
    threshold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    return load_run(sys.argv[1]), load_run(sys.argv[2]), threshold
