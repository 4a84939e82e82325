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


def ab_args(doc, load_run):
    """The two runs and the threshold an A/B script is given (`OLD NEW [THRESHOLD]`, default
    0.02), each run read by `load_run`; prints `doc` and exits 2 without two runs."""
    import sys

    if len(sys.argv) < 3:
        print(doc)
        sys.exit(2)
    threshold = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    return load_run(sys.argv[1]), load_run(sys.argv[2]), threshold
