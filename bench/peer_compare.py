#!/usr/bin/env python3
"""PyTorch beside examples/peer_bench.rs: `.to('cuda:1')` then `.contiguous()` (the usual
two-step move + transpose) for the same cases, median of 20 wall-clock runs that end
when both devices are idle.

Run on a two-GPU machine: python3 bench/peer_compare.py
"""
import time

import torch


def sync():
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)


def ms(fn, reps=20):
    """Wall-clock milliseconds from an idle start until both devices are done."""
    for _ in range(3):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


torch.cuda.set_device(0)
cases = [
    ("contiguous 1 GiB f32", lambda t: t, (1 << 28,)),
    ("transpose 8192x8192 f32", lambda t: t.t(), (8192, 8192)),
    ("NCHW->NHWC (64,256,64,64) f32", lambda t: t.permute(0, 2, 3, 1), (64, 256, 64, 64)),
]
print(f"{'case':<32} {'torch .to + .contiguous ms':>28}")
for name, view, shape in cases:
    x = torch.empty(shape, device="cuda:0").random_()
    src = view(x)
    t = ms(lambda: src.to("cuda:1").contiguous())
    print(f"{name:<32} {t:>28.3f}")
