#!/usr/bin/env python3
"""stridekit's Python package against cuda.core 1.2 and PyTorch, in one run.

Run on the GPU machine with the stridekit wheel installed: python3 bench/py_compare.py
- host time per call (median of 21 batches of 1000 calls): StridedMemoryView creation
  from a PyTorch tensor, attribute access (ptr, shape, strides, dtype), and a tiled TMA
  descriptor (1024 x 1024 f32, box (64, 32), 128-byte swizzle);
- copy_from between PyTorch tensors against torch.Tensor.copy_ on the cases of
  examples/copy_bench.rs (CUDA events, median of 20).
"""
import time

import numpy as np
import torch

from timing import gpu_ms

import stridekit

try:
    from cuda.core import Device
    from cuda.core.utils import StridedMemoryView as CoreView

    try:
        from cuda.core import TensorMapSwizzle
    except ImportError:
        from cuda.core._tensor_map import TensorMapSwizzle
    Device(0).set_current()
except ImportError:  # pragma: no cover
    CoreView = None


def per_call_us(f, n=1000):
    v = []
    for _ in range(21):
        t = time.perf_counter()
        for _ in range(n):
            f()
        v.append((time.perf_counter() - t) / n * 1e6)
    v.sort()
    return v[len(v) // 2]


def host_times():
    t = torch.zeros((1024, 1024), dtype=torch.float32, device="cuda")
    rows = []
    sk = lambda: stridekit.StridedMemoryView(t, -1)  # noqa: E731
    v = sk()
    attrs = lambda v=v: (v.ptr, v.shape, v.strides, v.dtype)  # noqa: E731
    tmap = lambda: v.as_tensor_map([64, 32], swizzle=stridekit.TensorMapSwizzle.SWIZZLE_128B)  # noqa: E731
    core = cattrs = ctmap = None
    if CoreView is not None:
        mk = (lambda: CoreView.from_dlpack(t, stream_ptr=-1)) if hasattr(CoreView, "from_dlpack") else (lambda: CoreView(t, -1))
        cv = mk()
        sw = TensorMapSwizzle.SWIZZLE_128B if hasattr(TensorMapSwizzle, "SWIZZLE_128B") else TensorMapSwizzle.B128
        core = per_call_us(mk)
        cattrs = per_call_us(lambda: (cv.ptr, cv.shape, cv.strides, cv.dtype))
        ctmap = per_call_us(lambda: cv.as_tensor_map((64, 32), swizzle=sw))
    rows.append(("StridedMemoryView(torch tensor)", per_call_us(sk), core))
    rows.append(("ptr, shape, strides, dtype", per_call_us(attrs), cattrs))
    rows.append(("as_tensor_map (64, 32), 128B swizzle", per_call_us(tmap), ctmap))
    # What one driver query of a pointer (cuPointerGetAttributes) costs, for reference.
    rows.append(("(Buffer.from_handle: one pointer query)", per_call_us(lambda: stridekit.Buffer.from_handle(t.data_ptr(), 4)), None))
    print(f"{'host time per call':<40} {'stridekit µs':>12} {'cuda.core µs':>13} {'ratio':>6}")
    for name, a, b in rows:
        core_s = "" if b is None else f"{b:.2f}"
        ratio_s = "" if b is None else f"{b / a:.1f}x"
        print(f"{name:<40} {a:>12.2f} {core_s:>13} {ratio_s:>6}")


def copies():
    dev = torch.device("cuda")
    x = torch.empty(1 << 28, dtype=torch.float32, device=dev).random_()
    y = torch.empty_like(x)
    ceiling = 2 * (1 << 30) / gpu_ms(lambda: y.copy_(x)) / 1e6
    del x, y
    print(f"\ncontiguous 1 GiB device copy: {ceiling:.0f} GB/s (read + write)")
    dt = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64}
    cases = [(f"transpose 8192x8192 itemsize {i}", (8192, 8192), dt[i], lambda t: t.t()) for i in (1, 2, 4, 8)]
    for p in ((2, 0, 1), (1, 0, 2), (0, 2, 1)):
        cases.append((f"(512,512,256) f32 permute {list(p)}", (512, 512, 256), torch.float32, lambda t, p=p: t.permute(p)))
    for t_, n in ((torch.float32, "f32"), (torch.float16, "f16")):
        cases.append((f"NCHW->NHWC (64,256,64,64) {n}", (64, 256, 64, 64), t_, lambda t: t.permute(0, 2, 3, 1)))
    cases.append(("[:, ::2] of (8192,16384) f32", (8192, 16384), torch.float32, lambda t: t[:, ::2]))
    cases.append(("broadcast (1,16384)->(8192,16384) f32", (1, 16384), torch.float32, lambda t: t.expand(8192, 16384)))
    print(f"{'copy_from between torch tensors':<42} {'stridekit GB/s':>14} {'torch GB/s':>11} {'vs torch':>9}")
    s = torch.cuda.current_stream()
    for name, shape, dtype, view in cases:
        base = torch.empty(shape, dtype=dtype, device=dev)
        base.view(torch.uint8 if dtype.itemsize == 1 else dtype).random_(0, 100)
        src = view(base)
        out = torch.empty(src.shape, dtype=dtype, device=dev)
        vs, vd = stridekit.StridedMemoryView(src, -1), stridekit.StridedMemoryView(out, -1)
        bytes_ = 2 * src.numel() * dtype.itemsize
        sk = gpu_ms(lambda: vd.copy_from(vs, stream=s))
        assert torch.equal(out.view(torch.uint8) if dtype.itemsize == 1 else out, src.contiguous()), name
        th = gpu_ms(lambda: out.copy_(src))
        print(f"{name:<42} {bytes_ / sk / 1e6:>14.0f} {bytes_ / th / 1e6:>11.0f} {th / sk:>8.2f}x")


if __name__ == "__main__":
    host_times()
    copies()
