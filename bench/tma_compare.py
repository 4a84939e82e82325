"""cuda.core's descriptor creation time, to print beside examples/tma_bench.rs.

Run on the GPU machine: python3 bench/tma_compare.py
Same case: 1024 x 1024 float32 CuPy matrix, box (64, 32), 128-byte swizzle; median of
21 batches of 1000 calls.
"""
import time

import cupy as cp
from cuda.core import Device
from cuda.core.utils import StridedMemoryView

try:
    from cuda.core import TensorMapSwizzle
except ImportError:  # older layouts of the package
    from cuda.core._tensor_map import TensorMapSwizzle

dev = Device(0)
dev.set_current()
a = cp.zeros((1024, 1024), dtype=cp.float32)
b = cp.zeros((1024, 1024), dtype=cp.float32)
va = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
vb = StridedMemoryView.from_dlpack(b, stream_ptr=-1)
sw = TensorMapSwizzle.SWIZZLE_128B if hasattr(TensorMapSwizzle, "SWIZZLE_128B") else TensorMapSwizzle.B128


def med(f):
    v = []
    for _ in range(21):
        t = time.perf_counter()
        for _ in range(1000):
            f()
        v.append((time.perf_counter() - t) * 1e3)  # µs per call
    v.sort()
    return v[len(v) // 2]


create = med(lambda: va.as_tensor_map((64, 32), swizzle=sw))
d = va.as_tensor_map((64, 32), swizzle=sw)
replace = med(lambda: d.replace_address(vb))
print(f"cuda.core StridedMemoryView.as_tensor_map: {create:.2f} µs")
print(f"cuda.core TensorMapDescriptor.replace_address: {replace:.2f} µs")
