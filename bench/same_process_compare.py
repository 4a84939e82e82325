#!/usr/bin/env python3
"""stridekit beside PyTorch in one process, the two timed alternately.

`random_compare.py` and `small_compare.py` set PyTorch's times beside the ones the Rust
examples wrote in another process; at a few microseconds a copy, two processes' times of
the *same* call differ by several percent (allocations at other addresses, clocks). Here
both libraries copy between the same PyTorch tensors in one process, through stridekit's
Python package, their timings interleaved round by round; PyTorch is also timed against
itself (two interleaved series of the same call), which shows how far apart two
measurements of one copy fall in this method: the noise band.

Run on the GPU machine with the stridekit wheel on PYTHONPATH, after the examples wrote
their cases:

    python3 bench/same_process_compare.py cases.jsonl [small.jsonl ...]

`cases.jsonl` from `random_bench` (layouts PyTorch can express: no negative strides),
`small.jsonl` from `small_bench` (the permutes). Every stridekit copy is checked byte for
byte against PyTorch's into a second destination poisoned alike (gaps included). Per
case: stridekit's and PyTorch's time (median over rounds of the median of 7 runs, CUDA
events, each run queued behind an L2 flush), stridekit / PyTorch speed, and PyTorch /
PyTorch; then the summary.
"""
import json
import math
import statistics
import sys

import torch

import stridekit
from timing import gpu_ms

DTYPES = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.complex128}
ROUNDS = 5


def random_pair(c, dev):
    """Source and destination views of one `random_bench` case (None: not expressible)."""
    if min(c["src_strides"] + c["dst_strides"], default=0) < 0:
        return None
    dt, isz = DTYPES[c["itemsize"]], c["itemsize"]
    sbase = torch.empty(-(-c["src_bytes"] // isz), dtype=dt, device=dev)
    sbase.view(torch.uint8).random_(0, 256)
    src = sbase.as_strided(c["shape"], c["src_strides"], c["src_offset"])
    nd = -(-c["dst_bytes"] // isz)
    dst = lambda base: base.as_strided(c["shape"], c["dst_strides"], c["dst_offset"])
    return src, dst, (nd, dt), f"case {c['case']:3} itemsize {isz:2}"


def permute_pair(c, dev):
    """Source and destination of one `small_bench` permute."""
    dt = DTYPES[c["itemsize"]]
    x = torch.empty(c["shape"], dtype=dt, device=dev)
    x.view(torch.uint8).random_(0, 256)
    src = x.permute(c["axes"])
    n = math.prod(c["shape"])
    dst = lambda base: base.view(src.shape)
    return src, dst, (n, dt), f"{c['shape']} {c['axes']} itemsize {c['itemsize']}"


def checked_copies(src, dst_of, base_spec, s):
    """The two copies of a case, stridekit's and PyTorch's, each into its own destination
    poisoned alike (gaps included), as calls; run once each and checked byte for byte
    against each other first. None where PyTorch refuses the copy."""
    n, dt = base_spec
    dev = src.device
    bases = [torch.empty(n, dtype=dt, device=dev) for _ in range(2)]
    for b in bases:
        b.view(torch.uint8).fill_(0x5A)
    d_sk, d_th = dst_of(bases[0]), dst_of(bases[1])
    try:
        d_th.copy_(src)
    except RuntimeError:
        return None
    vs, vd = stridekit.StridedMemoryView(src, -1), stridekit.StridedMemoryView(d_sk, -1)
    sk = lambda: vd.copy_from(vs, stream=s)
    th = lambda: d_th.copy_(src)
    sk()
    torch.cuda.synchronize()
    if not torch.equal(bases[0].view(torch.uint8), bases[1].view(torch.uint8)):
        raise SystemExit("stridekit copied other bytes than PyTorch")
    return sk, th


def compare(src, dst_of, base_spec, s):
    """(stridekit ms, PyTorch ms, PyTorch ms again), or None where PyTorch refuses."""
    copies = checked_copies(src, dst_of, base_spec, s)
    if copies is None:
        return None
    sk, th = copies
    t_sk, t_th, t_th2 = [], [], []
    for _ in range(ROUNDS):
        t_sk.append(gpu_ms(sk, reps=7, warmup=1))
        t_th.append(gpu_ms(th, reps=7, warmup=1))
        t_th2.append(gpu_ms(th, reps=7, warmup=1))
    return statistics.median(t_sk), statistics.median(t_th), statistics.median(t_th2)


def summary(label, rows):
    if not rows:
        return
    speed = sorted(r[2] / r[1] for r in rows)
    noise = sorted(r[2] / r[3] for r in rows)
    geo = math.exp(sum(map(math.log, speed)) / len(speed))
    band = max(abs(1 - x) for x in noise)
    print(f"{label}: {len(rows)} cases; stridekit / PyTorch median {statistics.median(speed):.2f}, "
          f"geomean {geo:.2f}, min {speed[0]:.2f}; below 1.00: {sum(x < 1 for x in speed)}, "
          f"below 0.97: {sum(x < 0.97 for x in speed)}; PyTorch / PyTorch {noise[0]:.2f}-{noise[-1]:.2f} "
          f"(widest {band:.1%})")
    for name, sk, th, th2 in sorted(rows, key=lambda r: r[2] / r[1])[:8]:
        print(f"  slowest: {name}: {th / sk:.2f}x ({sk * 1e3:.1f} against {th * 1e3:.1f} us)")


def main():
    dev = torch.device("cuda")
    s = torch.cuda.current_stream()
    for path in sys.argv[1:]:
        cases = [json.loads(line) for line in open(path)]
        rows, skipped = [], 0
        print(f"\n{path}")
        print(f"{'case':<48} {'stridekit us':>12} {'PyTorch us':>10} {'speed':>6} {'PyT/PyT':>7}")
        for c in cases:
            pair = permute_pair(c, dev) if "axes" in c else random_pair(c, dev)
            if pair is None:
                skipped += 1
                continue
            src, dst_of, spec, name = pair
            got = compare(src, dst_of, spec, s)
            if got is None:
                skipped += 1
                continue
            sk, th, th2 = got
            rows.append((name, sk, th, th2))
            print(f"{name:<48} {sk * 1e3:>12.1f} {th * 1e3:>10.1f} {th / sk:>6.2f} {th / th2:>7.2f}")
            del src, dst_of
            torch.cuda.empty_cache()
        print(f"(skipped {skipped}: negative strides or refused by PyTorch)")
        summary(path, rows)
    print("same_process_compare: every stridekit copy byte-exact against PyTorch's")


if __name__ == "__main__":
    main()
