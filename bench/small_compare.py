#!/usr/bin/env python3
"""PyTorch on the small many-axis permutes of `small_bench`, beside stridekit's times from
the same run.

Run on the GPU machine after `small_bench small.jsonl`:

    python3 bench/small_compare.py small.jsonl

For each permute, times `out.copy_(x.permute(axes))` (median of 30, CUDA events, queued
behind an L2 flush as the example's times are) and prints stridekit's time as planned,
its time on multi-axis tiles, PyTorch's, and stridekit / PyTorch speed.
"""
import json
import math
import sys

import torch

from timing import gpu_ms

DTYPES = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64, 16: torch.complex128}


def main():
    cases = [json.loads(line) for line in open(sys.argv[1])]
    print(f"{'permute':<44} {'stridekit us':>12} {'tiles us':>9} {'PyTorch us':>10} {'speed':>6}")
    ratios = []
    for c in cases:
        x = torch.empty(c["shape"], dtype=DTYPES[c["itemsize"]], device="cuda")
        y = x.permute(c["axes"])
        out = torch.empty(y.shape, dtype=x.dtype, device="cuda")
        ms = gpu_ms(lambda: out.copy_(y), reps=30)
        r = ms / c["ms"]
        ratios.append(r)
        name = f"{c['shape']} {c['axes']} itemsize {c['itemsize']}"
        print(f"{name:<44} {c['ms'] * 1e3:>12.1f} {c['tiles_ms'] * 1e3:>9.1f} {ms * 1e3:>10.1f} {r:>6.2f}")
        del x, y, out
    slower = [r for r in ratios if r < 1]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"stridekit / PyTorch speed: geomean {geo:.2f}, min {min(ratios):.2f}, cases below 1: {len(slower)}")
    if not all(c["exact"] for c in cases):
        sys.exit("small_bench reported wrong bytes")


if __name__ == "__main__":
    main()
