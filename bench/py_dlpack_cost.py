#!/usr/bin/env python3
"""What a DLPack exchange costs on each side, host time per call (µs, median of 31
batches of 2000): the producer's calls alone (CuPy's and PyTorch's ``__dlpack_device__``
and ``__dlpack__``, legacy and versioned capsules) against whole views from stridekit and
cuda.core, to see how much of a view is the producer's. Run on the GPU machine."""
import time

import cupy as cp
import torch

import stridekit
from cuda.core import Device
from cuda.core.utils import StridedMemoryView as CoreView


def med(f, n=2000, batches=31):
    for _ in range(n):
        f()
    r = []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(n):
            f()
        r.append((time.perf_counter() - t) / n * 1e6)
    return sorted(r)[batches // 2]


Device(0).set_current()
c = cp.zeros((1024, 1024), cp.float32)
t = torch.zeros((1024, 1024), device="cuda")
rows = [
    ("CuPy __dlpack_device__()", lambda: c.__dlpack_device__()),
    ("CuPy __dlpack__(stream=-1)", lambda: c.__dlpack__(stream=-1)),
    ("CuPy __dlpack__(stream=-1, max_version=(1, 3))", lambda: c.__dlpack__(stream=-1, max_version=(1, 3))),
    ("stridekit StridedMemoryView(cupy, -1)", lambda: stridekit.StridedMemoryView(c, -1)),
    ("cuda.core from_dlpack(cupy, -1)", lambda: CoreView.from_dlpack(c, stream_ptr=-1)),
    ("PyTorch __dlpack__(stream=-1, max_version=(1, 3))", lambda: t.__dlpack__(stream=-1, max_version=(1, 3))),
    ("stridekit StridedMemoryView(torch, -1)", lambda: stridekit.StridedMemoryView(t, -1)),
    ("cuda.core from_dlpack(torch, -1)", lambda: CoreView.from_dlpack(t, stream_ptr=-1)),
]
for name, f in rows:
    print(f"{name:55s} {med(f):7.3f} µs")
