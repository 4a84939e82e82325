#!/usr/bin/env python3
"""Times PyTorch and CuPy on the cases of `cargo run --release --example copy_bench`.

Run on the GPU machine: python3 bench/compare.py [traffic.jsonl]. Bytes moved count read
+ write; ratios are against a contiguous 1 GiB device copy measured in the same run (host
transfers: the contiguous transfer of the same bytes and direction). Given the file that
`copy_bench traffic.jsonl` writes, device cases also get their efficiency against the
sector-exact roofline ("sectors": the 32-byte sectors read, each written sector, a
partially written one twice), at this run's contiguous copy rate.
"""
import json
import sys

import torch

from timing import gpu_ms as bench

try:
    import cupy as cp
except ImportError:  # pragma: no cover
    cp = None


def main():
    dev = torch.device("cuda")
    x = torch.empty(1 << 28, dtype=torch.float32, device=dev).random_()
    y = torch.empty_like(x)
    ms = bench(lambda: y.copy_(x))
    ceiling = 2 * (1 << 30) / ms / 1e6
    print(f"contiguous device copy: {ceiling:.0f} GB/s (read + write)\n")
    del x, y
    dt = {1: torch.uint8, 2: torch.float16, 4: torch.float32, 8: torch.float64}
    cases = []
    for isz in (1, 2, 4, 8):
        cases.append((f"transpose 8192x8192 itemsize {isz}", (8192, 8192), dt[isz], lambda t: t.t(), "cuda", "cuda"))
    for p in ((2, 0, 1), (1, 0, 2), (0, 2, 1)):
        cases.append((f"(512,512,256) f32 permute {list(p)}", (512, 512, 256), torch.float32, lambda t, p=p: t.permute(p), "cuda", "cuda"))
    for t_, name in ((torch.float32, "f32"), (torch.float16, "f16")):
        cases.append((f"NCHW->NHWC (64,256,64,64) {name}", (64, 256, 64, 64), t_, lambda t: t.permute(0, 2, 3, 1), "cuda", "cuda"))
    # Many-axis permutes, then small ones (16 to 512 tiles, a few microseconds).
    for shape, perm, dtype in (((32,) * 5, (4, 2, 0, 3, 1), torch.float32), ((16,) * 6, (5, 3, 1, 4, 2, 0), torch.float32),
                               ((24, 40, 3, 50, 36), (3, 1, 4, 0, 2), torch.float64),
                               ((8,) * 5, (4, 2, 0, 3, 1), torch.float32), ((12,) * 5, (4, 2, 0, 3, 1), torch.float32),
                               ((16,) * 5, (4, 2, 0, 3, 1), torch.float32), ((6,) * 6, (5, 3, 1, 4, 2, 0), torch.float32),
                               ((16,) * 4, (3, 1, 0, 2), torch.float16), ((6, 10, 3, 12, 9), (3, 1, 4, 0, 2), torch.float64)):
        tname = {torch.float16: "f16", torch.float32: "f32", torch.float64: "f64"}[dtype]
        cases.append((f"{len(shape)}-D {list(shape)} {tname} permute {list(perm)}", shape, dtype, lambda t, p=perm: t.permute(p), "cuda", "cuda"))
    for dtype, name in ((torch.float32, "f32"), (torch.float16, "f16"), (torch.uint8, "u8")):
        cases.append((f"transpose 4097x3001 {name}", (3001, 4097), dtype, lambda t: t.t(), "cuda", "cuda"))
    cases.append(("RGB interleaved -> planar (4096,4096,3) u8", (4096, 4096, 3), torch.uint8, lambda t: t.permute(2, 0, 1), "cuda", "cuda"))
    cases.append(("RGB planar -> interleaved (4096,4096,3) u8", (3, 4096, 4096), torch.uint8, lambda t: t.permute(1, 2, 0), "cuda", "cuda"))
    cases.append(("NCHW->NHWC (256,3,224,224) u8", (256, 3, 224, 224), torch.uint8, lambda t: t.permute(0, 2, 3, 1), "cuda", "cuda"))
    for dtype, name in ((torch.uint8, "u8"), (torch.float16, "f16")):
        cases.append((f"inner flip [:, ::-1] of (8192,8192) {name}", (8192, 8192), dtype, lambda t: t, "cuda", "flip"))
    cases.append(("misaligned [1:, 1:] of (8193,8193) f16", (8193, 8193), torch.float16, lambda t: t[1:, 1:], "cuda", "cuda"))
    cases.append(("both strided [::2, ::2] -> [::2, ::2] (8192,16384) f32", (8192, 16384), torch.float32, lambda t: t[::2, ::2], "cuda", "strided"))
    cases.append(("batched 32x8 transposes (262144,32,8) f16", (262144, 32, 8), torch.float16, lambda t: t.permute(0, 2, 1), "cuda", "cuda"))
    cases.append(("[:, ::2] of (8192,16384) f32", (8192, 16384), torch.float32, lambda t: t[:, ::2], "cuda", "cuda"))
    cases.append(("broadcast (1,16384)->(8192,16384) f32", (1, 16384), torch.float32, lambda t: t.expand(8192, 16384), "cuda", "cuda"))
    for rows, cols, dtype, tname in ((1 << 26, 3, torch.uint8, "u8"), (1 << 20, 75, torch.float16, "f16"),
                                     (32768, 1000, torch.float32, "f32"), (8192, 8192, torch.float32, "f32")):
        row = 1 if cols == 8192 else cols
        cases.append((f"broadcast (1,{row})->({rows},{cols}) {tname}", (1, row), dtype,
                      lambda t, r=rows, c=cols: t.expand(r, c), "cuda", "cuda"))
    cases.append(("transpose 5000x7001 u8", (7001, 5000), torch.uint8, lambda t: t.t(), "cuda", "cuda"))
    cases.append(("transpose 6007x2049 bf16", (2049, 6007), torch.bfloat16, lambda t: t.t(), "cuda", "cuda"))
    cases.append(("RGBA (M,4)->(4,M) u8, M=2^24", (1 << 24, 4), torch.uint8, lambda t: t.t(), "cuda", "cuda"))
    cases.append(("RGB->BGR [..., ::-1] (64,512,512,3) u8", (64, 512, 512, 3), torch.uint8, lambda t: t, "cuda", "flip"))
    cases.append(("NHWC->NCHW (128,96,96,3) u8", (128, 96, 96, 3), torch.uint8, lambda t: t.permute(0, 3, 1, 2), "cuda", "cuda"))
    cases.append(("video NHWC->NCHW (360,1080,1920,3) u8", (360, 1080, 1920, 3), torch.uint8, lambda t: t.permute(0, 3, 1, 2), "cuda", "cuda"))
    cases.append(("batched 16x48 transposes (8192,16,48) u8", (8192, 16, 48), torch.uint8, lambda t: t.permute(0, 2, 1), "cuda", "cuda"))
    cases.append(("batched 16x16 transposes (65536,16,16) f32", (65536, 16, 16), torch.float32, lambda t: t.permute(0, 2, 1), "cuda", "cuda"))
    cases.append(("misaligned [3:, 5:] of (7000,7000) u8", (7000, 7000), torch.uint8, lambda t: t[3:, 5:], "cuda", "cuda"))
    cases.append(("red channel [..., 0] of (4096,4096,3) u8", (4096, 4096, 3), torch.uint8, lambda t: t[..., 0], "cuda", "cuda"))
    cases.append(("left channel [:, 0] of (2^24,2) i16 stereo", (1 << 24, 2), torch.int16, lambda t: t[:, 0], "cuda", "cuda"))
    for dtype, name in ((torch.uint8, "u8"), (torch.float16, "f16")):
        cases.append((f"transposed [1:, 1:] of (8193,8193) {name}", (8193, 8193), dtype, lambda t: t[1:, 1:].t(), "cuda", "cuda"))
    cases.append(("H2D 64 MiB transposed pinned f32", (4096, 4096), torch.float32, lambda t: t.t(), "pinned", "cuda"))
    cases.append(("D2H 64 MiB transposed to pinned f32", (4096, 4096), torch.float32, lambda t: t.t(), "cuda", "pinned"))
    cases.append(("H2D 64 MiB transposed pageable f32", (4096, 4096), torch.float32, lambda t: t.t(), "pageable", "cuda"))
    cases.append(("H2D 64 MiB from [::3] of pageable f32", (12288, 4096), torch.float32, lambda t: t[::3], "pageable", "cuda"))
    traffic = {}
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            traffic = {r["case"]: r["sector_traffic"] for r in map(json.loads, f) if r}
    print(f"{'case':<58} {'torch GB/s':>10} {'ratio':>6} {'sectors':>7} {'cupy GB/s':>10} {'ratio':>6} {'sectors':>7}")
    for name, shape, dtype, view, sdev, ddev in cases:
        if sdev == "pinned":
            base = torch.empty(shape, dtype=dtype).pin_memory()
        elif sdev == "pageable":
            base = torch.empty(shape, dtype=dtype)
        else:
            base = torch.empty(shape, dtype=dtype, device=dev)
        base.view(torch.uint8 if dtype.itemsize == 1 else base.dtype).random_(0, 100)
        src = view(base)
        if ddev == "flip":
            # PyTorch has no negative strides: the flip is its own kernel (which allocates
            # through the caching allocator); CuPy reads the reversed view.
            moved = 2 * base.numel() * base.element_size()
            ms = bench(lambda: torch.flip(base, [-1]))
            exact = traffic.get(name)
            cupy = ("-", "-", "-")
            if cp is not None:
                cs = cp.from_dlpack(base)[..., ::-1]
                cupy = cupy_cells(cp.empty(cs.shape, dtype=cs.dtype), cs, moved, ceiling, ceiling, exact)
            print_row(name, moved, ms, ceiling, ceiling, exact, cupy)
            continue
        if ddev == "strided":
            out = torch.empty(shape, dtype=dtype, device=dev)[::2, ::2]
        else:
            out = torch.empty(src.shape, dtype=dtype, device=dev if ddev == "cuda" else "cpu")
        if ddev == "pinned":
            out = out.pin_memory()
        moved = 2 * src.numel() * src.element_size()
        if sdev in ("pinned", "pageable") or ddev == "pinned":
            flat_src = base.reshape(-1)[: src.numel()]
            flat_dst = out.reshape(-1)
            ref = moved / bench(lambda: flat_dst.copy_(flat_src, non_blocking=True), queued=False) / 1e6
        else:
            ref = ceiling
        host_case = sdev in ("pinned", "pageable") or ddev == "pinned"
        ms = bench(lambda: out.copy_(src, non_blocking=True), queued=not host_case)
        exact = traffic.get(name) if sdev == "cuda" and ddev != "pinned" else None
        cupy = ("-", "-", "-")
        if cp is not None and sdev == "cuda" and ddev == "cuda":
            cs = cp.from_dlpack(src) if src.is_contiguous() else cp.lib.stride_tricks.as_strided(
                cp.from_dlpack(base), shape=src.shape, strides=[s * src.element_size() for s in src.stride()])
            cupy = cupy_cells(cp.empty(src.shape, dtype=cs.dtype), cs, moved, ref, ceiling, exact)
        print_row(name, moved, ms, ref, ceiling, exact, cupy)
    overlap(dev, ceiling, traffic)


# Overlapping copies, as in copy_bench: (name, shape, dtype, source of x in PyTorch and
# in CuPy (which has negative strides), destination of x).
OVERLAPS = [
    ("overlapping x[:, 1:] = x[:, :-1] (8192,8192) f32", (8192, 8192), torch.float32,
     lambda x: x[:, :-1], lambda x: x[:, :-1], lambda x: x[:, 1:]),
    ("overlapping x[:, :] = x[:, ::-1] (8192,8192) f32", (8192, 8192), torch.float32,
     lambda x: x.flip(1), lambda x: x[:, ::-1], lambda x: x),
    ("overlapping x[:, 1:] = x[:, :-1] (16384,16384) u8", (16384, 16384), torch.uint8,
     lambda x: x[:, :-1], lambda x: x[:, :-1], lambda x: x[:, 1:]),
    ("overlapping x[1:] = x[:-1] (8192,8192) f32", (8192, 8192), torch.float32,
     lambda x: x[:-1], lambda x: x[:-1], lambda x: x[1:]),
]


def overlap(dev, ceiling, traffic):
    """PyTorch refuses overlapping copy_, so a user clones the source first; CuPy copies
    through its own temporary. (`flip` is itself a copy: PyTorch has no negative strides,
    so its reversed case is one flip into a new tensor, then the copy.)"""
    for name, shape, dtype, src_of, cupy_src_of, dst_of in OVERLAPS:
        x = torch.empty(shape, dtype=dtype, device=dev).random_(0, 100)
        src, dst = src_of(x), dst_of(x)
        moved = 2 * src.numel() * src.element_size()
        ms = bench(lambda: dst.copy_(src_of(x).clone()))
        exact = traffic.get(name)
        cupy = ("-", "-", "-")
        if cp is not None:
            cx = cp.from_dlpack(x)
            cupy = cupy_cells(dst_of(cx), cupy_src_of(cx), moved, ceiling, ceiling, exact)
        print_row(name, moved, ms, ceiling, ceiling, exact, cupy)


def cupy_cells(dst, src, moved, ref, ceiling, exact):
    """CuPy's `dst[...] = src` on PyTorch's stream: GB/s, ratio to `ref` and sector-exact
    ratio (at the memcpy ceiling)."""
    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        cms = bench(lambda: dst.__setitem__(Ellipsis, src))
    c_gbs = moved / cms / 1e6
    return f"{c_gbs:.0f}", f"{c_gbs / ref:.2f}", f"{exact / ceiling / 1e6 / cms:.2f}" if exact else "-"


def print_row(name, moved, ms, ref, ceiling, exact, cupy):
    """One case's row: PyTorch's GB/s, ratio to `ref` and sector-exact ratio, then CuPy's."""
    t_gbs = moved / ms / 1e6
    t_sec = f"{exact / ceiling / 1e6 / ms:.2f}" if exact else "-"
    c_txt, c_ratio, c_sec = cupy
    print(f"{name:<58} {t_gbs:>10.0f} {t_gbs / ref:>6.2f} {t_sec:>7} {c_txt:>10} {c_ratio:>6} {c_sec:>7}")


if __name__ == "__main__":
    main()
