#!/usr/bin/env python3
"""PyTorch on the randomized copy set, beside stridekit's times from the same run.

Run on the GPU machine after `random_bench 200 cases.jsonl` (the example writes every
case's layouts, roofline bytes and time):

    python3 bench/random_compare.py cases.jsonl

For each case PyTorch can express (`as_strided` takes no negative strides), times
`dst.copy_(src)` between `as_strided` views of the same layouts (median of 5, CUDA
events) and prints PyTorch's roofline efficiency and stridekit / PyTorch speed. The
roofline is the one the example computed: sectors read plus bytes written, at the
contiguous 1 GiB copy bandwidth PyTorch reaches in this run.
"""
import json
import statistics
import sys

import torch

from timing import gpu_ms


DTYPES = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.complex128}


def main():
    cases = [json.loads(line) for line in open(sys.argv[1])]
    dev = torch.device("cuda")
    x = torch.empty(1 << 28, dtype=torch.float32, device=dev).random_()
    y = torch.empty_like(x)
    ceiling = 2 * (1 << 30) / gpu_ms(lambda: y.copy_(x), reps=10, warmup=1) / 1e6
    del x, y
    print(f"PyTorch contiguous 1 GiB device copy: {ceiling:.0f} GB/s (read + write)")
    rows = []
    skipped = 0
    for c in cases:
        if min(c["src_strides"] + c["dst_strides"], default=0) < 0:
            skipped += 1
            continue
        dt = DTYPES[c["itemsize"]]
        isz = c["itemsize"]
        sbase = torch.empty(-(-c["src_bytes"] // isz), dtype=dt, device=dev)
        dbase = torch.empty(-(-c["dst_bytes"] // isz), dtype=dt, device=dev)
        src = sbase.as_strided(c["shape"], c["src_strides"], c["src_offset"])
        dst = dbase.as_strided(c["shape"], c["dst_strides"], c["dst_offset"])
        ms = gpu_ms(lambda: dst.copy_(src), reps=5, warmup=1)
        eff = c["traffic"] / ceiling / 1e6 / ms
        rows.append((c["case"], eff, c["eff"], ms, c["ms"]))
        del sbase, dbase, src, dst
        torch.cuda.empty_cache()
    for case, teff, seff, tms, sms in rows:
        print(f"case {case:3}: PyTorch eff {teff:.2f} ({tms:.3f} ms), stridekit eff {seff:.2f} ({sms:.3f} ms), stridekit / PyTorch {tms / sms:.2f}")
    speed = sorted(t / s for _, _, _, t, s in rows)
    print(f"\ncases PyTorch can express: {len(rows)} (skipped {skipped} with negative strides)")
    print(f"PyTorch efficiency: median {statistics.median(r[1] for r in rows):.2f}, 10th percentile {sorted(r[1] for r in rows)[len(rows) // 10]:.2f}")
    print(f"stridekit on the same cases: median {statistics.median(r[2] for r in rows):.2f}, 10th percentile {sorted(r[2] for r in rows)[len(rows) // 10]:.2f}")
    print(f"stridekit / PyTorch speed: median {statistics.median(speed):.2f}, min {speed[0]:.2f}, cases below 1: {sum(1 for s in speed if s < 1)}")
    for case, teff, seff, tms, sms in sorted(rows, key=lambda r: r[3] / r[4])[:10]:
        print(f"  slowest vs PyTorch: case {case}: {tms / sms:.2f}x (PyTorch eff {teff:.2f}, stridekit {seff:.2f})")


if __name__ == "__main__":
    main()
