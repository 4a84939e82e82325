"""One case's copy, stridekit's and PyTorch's, under Nsight Compute.

Sets up a case as `same_process_compare.py` does (`checked_copies`: the same source for
both libraries, destinations poisoned alike), copies once each to warm up (kernels
compiled, loaded) and checks the bytes alike, then
copies once each between `cudaProfilerStart` and `cudaProfilerStop`, so that with
`--profile-from-start off` Nsight Compute profiles exactly those two launches (stridekit's
first). Run on the GPU machine with the stridekit wheel on PYTHONPATH:

    ncu --profile-from-start off --section SpeedOfLight --section LaunchStats \\
        --section MemoryWorkloadAnalysis python3 bench/profile_case.py CASE

CASE is `FILE:N` (case N of a `random_bench` JSON-lines file, or line N of a
`small_bench` one) or one case's JSON object inline, e.g. the random set's case 92:
'{"case": 92, "shape": [6792321], "src_strides": [0], "dst_strides": [2],
"src_offset": 0, "dst_offset": 0, "itemsize": 2, "src_bytes": 2, "dst_bytes": 27169284}'.
"""
import json
import sys

import torch

from same_process_compare import checked_copies, permute_pair, random_pair


def load(arg):
    """The case named by `arg` (see the module's doc)."""
    if arg.lstrip().startswith("{"):
        return json.loads(arg)
    path, n = arg.rsplit(":", 1)
    cases = [json.loads(line) for line in open(path)]
    if "axes" in cases[0]:
        return cases[int(n)]
    found = [c for c in cases if c["case"] == int(n)]
    if not found:
        raise SystemExit(f"profile_case: no case {n} in {path}")
    return found[0]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    c = load(sys.argv[1])
    dev = torch.device("cuda")
    pair = permute_pair(c, dev) if "axes" in c else random_pair(c, dev)
    if pair is None:
        raise SystemExit("profile_case: PyTorch cannot express this case (negative strides)")
    src, dst_of, spec, name = pair
    copies = checked_copies(src, dst_of, spec, torch.cuda.current_stream())
    if copies is None:
        raise SystemExit("profile_case: PyTorch refuses this copy")
    sk, th = copies
    torch.cuda.profiler.start()
    sk()
    th()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"profile_case: {name}: stridekit's copy profiled first, then PyTorch's")


if __name__ == "__main__":
    main()
