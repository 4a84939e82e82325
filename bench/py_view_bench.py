#!/usr/bin/env python3
"""View creation, attribute access and TMA descriptors from Python: stridekit against
cuda.core, in one process, on PyTorch and CuPy arrays.

Run on the GPU machine with the stridekit wheel installed:
    python3 bench/py_view_bench.py [--json out.json]
Each figure is the median over 31 batches of 2000 calls of host time per call (µs);
the two libraries' batches alternate, so drift in the machine's speed hits both alike,
and the table is measured twice, the first pass discarded.
"""
import json
import sys
import time

import cupy as cp
import numpy as np
import torch

import stridekit
from cuda.core import Device
from cuda.core.utils import StridedMemoryView as CoreView

try:
    from cuda.core import TensorMapSwizzle as CoreSwizzle
except ImportError:  # pragma: no cover
    from cuda.core._tensor_map import TensorMapSwizzle as CoreSwizzle

SkView = stridekit.StridedMemoryView


def medians(fs, n=2000, batches=31):
    """Per-call host time (µs) of each function in `fs`, batches interleaved."""
    times = [[] for _ in fs]
    for f in fs:  # warm up
        for _ in range(n):
            f()
    for _ in range(batches):
        for k, f in enumerate(fs):
            t = time.perf_counter()
            for _ in range(n):
                f()
            times[k].append((time.perf_counter() - t) / n * 1e6)
    return [sorted(t)[len(t) // 2] for t in times]


def rows_for(label, x, stream_ptr):
    sk = lambda: SkView(x, stream_ptr)  # noqa: E731
    core = lambda: CoreView.from_any_interface(x, stream_ptr=stream_ptr)  # noqa: E731
    sk_dl = lambda: SkView.from_dlpack(x, stream_ptr)  # noqa: E731
    core_dl = lambda: CoreView.from_dlpack(x, stream_ptr=stream_ptr)  # noqa: E731
    v = sk()
    try:
        c = core()
    except Exception as e:  # cuda.core may refuse an argument stridekit takes
        print(f"{label}: cuda.core refuses: {e}")
        (a,) = medians([sk])
        return [(f"{label}: view (constructor / from_any_interface)", a, float("nan"))]
    assert (v.ptr, v.shape) == (c.ptr, c.shape), label
    attrs = lambda: (v.ptr, v.shape, v.strides, v.dtype)  # noqa: E731
    cattrs = lambda: (c.ptr, c.shape, c.strides, c.dtype)  # noqa: E731
    tm = lambda: v.as_tensor_map((64, 32), swizzle=stridekit.TensorMapSwizzle.SWIZZLE_128B)  # noqa: E731
    ctm = lambda: c.as_tensor_map((64, 32), swizzle=CoreSwizzle.SWIZZLE_128B)  # noqa: E731
    # A view made to hand its address on: the first read of an attribute included.
    sk_ptr = lambda: SkView.from_dlpack(x, stream_ptr).ptr  # noqa: E731
    core_ptr = lambda: CoreView.from_dlpack(x, stream_ptr=stream_ptr).ptr  # noqa: E731
    a, b, c1, d, e, f, g, h, i, j = medians([sk, core, sk_dl, core_dl, attrs, cattrs, tm, ctm, sk_ptr, core_ptr])
    return [
        (f"{label}: view (constructor / from_any_interface)", a, b),
        (f"{label}: view (from_dlpack)", c1, d),
        (f"{label}: view (from_dlpack), then its ptr", i, j),
        (f"{label}: ptr, shape, strides, dtype", e, f),
        (f"{label}: as_tensor_map (64, 32), 128B swizzle", g, h),
    ]


def main():
    Device(0).set_current()
    t = torch.rand((1024, 1024), device="cuda")
    c = cp.random.rand(1024, 1024, dtype=cp.float32)
    torch.cuda.synchronize()
    ts = torch.cuda.current_stream().cuda_stream
    cs = cp.cuda.get_current_stream().ptr
    # The whole table is measured twice and the second pass reported: the first blocks
    # of a fresh process run slower (clocks, caches, allocators), whatever is measured.
    for _ in range(2):
        rows = []
        rows += rows_for("PyTorch, stream_ptr=-1", t, -1)
        rows += rows_for("PyTorch, its current stream", t, ts if ts else 1)
        rows += rows_for("PyTorch, stream_ptr=None", t, None)
        rows += rows_for("CuPy, stream_ptr=-1", c, -1)
        rows += rows_for("CuPy, its current stream", c, cs if cs else 1)
    print(f"stridekit {stridekit.__version__}, cuda.core {__import__('cuda.core').core.__version__}, "
          f"torch {torch.__version__}, cupy {cp.__version__}")
    print(f"{'case':58s} {'stridekit µs':>13s} {'cuda.core µs':>13s} {'ratio':>6s}")
    for name, s, k in rows:
        print(f"{name:58s} {s:13.3f} {k:13.3f} {s / k:6.2f}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump([{"case": n, "stridekit_us": s, "cuda_core_us": k} for n, s, k in rows], f, indent=1)


if __name__ == "__main__":
    main()
