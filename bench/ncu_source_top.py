"""The SASS lines where a kernel's warps stall most, from `ncu --page source --print-source
sass --csv` (`PROFILE_SOURCE=1 bench/profile.sh ...` writes it):

    python3 bench/ncu_source_top.py OUTDIR/CASE.source.csv [N]

For each kernel in the file (each header row starts one): its total warp stall samples,
instructions executed and stall reasons (the `stall_*` columns, kernel-wide shares), then
the N lines (default 25) with the most stall samples, each with its share of the kernel's
samples, its instructions executed, its SASS and its two commonest stall reasons.
Columns are found by name; a file without them is an error that lists the columns it has.
"""
import csv
import sys

STALLS = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def blocks(rows):
    """(header, data rows) per kernel: a row holding the stall column starts a block."""
    header, data = None, []
    for row in rows:
        if STALLS in row or any(c.startswith("Warp Stall Sampling") for c in row):
            if header is not None:
                yield header, data
            header, data = row, []
        elif header is not None and len(row) == len(header):
            data.append(row)
    if header is not None:
        yield header, data


def column(header, name):
    for i, c in enumerate(header):
        if c == name or c.startswith(name):
            return i
    return None


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    with open(sys.argv[1], newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    found = False
    for k, (header, data) in enumerate(blocks(rows)):
        s, e = column(header, STALLS), column(header, EXECUTED)
        src = column(header, "Source")
        if s is None or src is None:
            sys.exit(f"kernel {k}: no '{STALLS}' or 'Source' column; columns: {header}")
        found = True
        total = sum(number(r[s]) for r in data) or 1.0
        executed = sum(number(r[e]) for r in data) if e is not None else float("nan")
        print(f"## kernel {k}: {len(data)} SASS lines, {total:.0f} stall samples, "
              f"{executed:.0f} warp instructions")
        # Stall reasons: the per-reason columns (not their "Not Issued" halves).
        reasons = [(i, c[len("stall_"):]) for i, c in enumerate(header)
                   if c.startswith("stall_") and "Not Issued" not in c]
        if reasons:
            sums = sorted(((sum(number(r[i]) for r in data), name) for i, name in reasons), reverse=True)
            print("stall reasons: " + ", ".join(f"{name} {v / total:.0%}" for v, name in sums if v > 0)[:400])
        print(f"{'share':>6} {'samples':>8} {'executed':>10}  sass  [top stall reasons]")
        for r in sorted(data, key=lambda r: -number(r[s]))[:top]:
            ex = f"{number(r[e]):.0f}" if e is not None else "-"
            why = sorted(((number(r[i]), name) for i, name in reasons), reverse=True)[:2]
            tag = ", ".join(f"{name} {v:.0f}" for v, name in why if v > 0)
            print(f"{number(r[s]) / total:6.1%} {number(r[s]):8.0f} {ex:>10}  {r[src].strip()}  [{tag}]")
        print()
    if not found:
        sys.exit("no source-counter table in the file (ncu --page source --csv)")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # `... | head`: the reader has what it wanted
        sys.stderr.close()
