"""One case's copy, stridekit's and PyTorch's, under Nsight Compute.

Sets up a case as `same_process_compare.py` does (the same tensors for both libraries),
copies once each to warm up (kernels compiled, loaded), checks the bytes alike, then
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

import stridekit
from same_process_compare import permute_pair, random_pair


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
    src, dst_of, (n, dt), name = pair
    bases = [torch.empty(n, dtype=dt, device=dev) for _ in range(2)]
    for b in bases:
        b.view(torch.uint8).fill_(0x5A)
    d_sk, d_th = dst_of(bases[0]), dst_of(bases[1])
    vs, vd = stridekit.StridedMemoryView(src, -1), stridekit.StridedMemoryView(d_sk, -1)
    s = torch.cuda.current_stream()
    vd.copy_from(vs, stream=s)
    d_th.copy_(src)
    torch.cuda.synchronize()
    if not torch.equal(bases[0].view(torch.uint8), bases[1].view(torch.uint8)):
        raise SystemExit("profile_case: stridekit copied other bytes than PyTorch")
    torch.cuda.profiler.start()
    vd.copy_from(vs, stream=s)
    d_th.copy_(src)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    print(f"profile_case: {name}: stridekit's copy profiled first, then PyTorch's")


if __name__ == "__main__":
    main()
