"""Static SASS instructions of a kernel pack's kernels, summed by kernel family.

A kernel pack (`examples/precompile DIR`, or `STRIDEKIT_KERNEL_CACHE`'s folder) holds one
file per compiled kernel: a short header, then the CUBIN. This prints, for every family
named on the command line (default: the elementwise and run kernels), how many kernels the
pack holds and their instructions in all (NOPs left out), so that a change to a kernel's
source can be weighed across every variant the engine compiles, without a GPU:

    python3 bench/kernel_lab/pack_sass_count.py PACK_BEFORE PACK_AFTER [FAMILY ...]

Needs `cuobjdump` on PATH (the nvidia-cuda-cuobjdump wheel has it).
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def count(pack, families):
    """{family: (kernels, instructions)} of the pack in folder `pack`."""
    name = re.compile(r"stridekit_(%s)_\d+-" % "|".join(map(re.escape, families)))
    totals = collections.defaultdict(lambda: [0, 0])
    for f in sorted(os.listdir(pack)):
        m = name.match(f)
        if not m:
            continue
        data = open(os.path.join(pack, f), "rb").read()
        elf = data.find(b"\x7fELF")
        if elf < 0:
            raise SystemExit(f"pack_sass_count: no CUBIN in {f}")
        with tempfile.NamedTemporaryFile(suffix=".cubin") as t:
            t.write(data[elf:])
            t.flush()
            sass = subprocess.run(["cuobjdump", "-sass", t.name], capture_output=True, text=True, check=True).stdout
        n = len(re.findall(r"^\s+/\*[0-9a-f]{4}\*/\s+(?!NOP)\S", sass, re.M))
        totals[m.group(1)][0] += 1
        totals[m.group(1)][1] += n
    return totals


def main():
    packs = [a for a in sys.argv[1:] if os.path.isdir(a)]
    families = [a for a in sys.argv[1:] if not os.path.isdir(a)] or ["strided_copy", "element_runs"]
    if not packs:
        raise SystemExit(__doc__)
    results = [count(p, families) for p in packs]
    for fam in families:
        cells = [f"{r[fam][0]} kernels, {r[fam][1]} instructions" for r in results]
        line = f"{fam:16s} " + " | ".join(cells)
        if len(results) == 2 and results[0][fam][1]:
            line += f"  ({results[1][fam][1] / results[0][fam][1] - 1:+.1%})"
        print(line)


if __name__ == "__main__":
    main()
