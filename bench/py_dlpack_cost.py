#!/usr/bin/env python3
"""What a DLPack exchange costs on each side, host time per call (µs): the producer's
calls alone (PyTorch's and CuPy's ``__dlpack_device__``, ``__dlpack__`` with and without
``max_version``, ``__cuda_array_interface__``) beside whole views from stridekit and
cuda.core (``from_dlpack``, the constructor / ``from_any_interface``,
``from_cuda_array_interface``), to see how much of a view is the producer's and how much
each consumer's. Medians of 15 batches of 2000 calls, the rows' batches interleaved
(`py_view_bench.medians`). Run on the GPU machine from the repository root with the
wheel installed: ``python3 bench/py_dlpack_cost.py``."""
import sys

import cupy as cp
import torch

import stridekit
from cuda.core import Device
from cuda.core.utils import StridedMemoryView as CoreView

sys.path.insert(0, "bench")
from py_view_bench import medians  # noqa: E402

Device().set_current()
SkView = stridekit.StridedMemoryView
for label, x in [("torch", torch.empty((64, 64), device="cuda")), ("cupy", cp.empty((64, 64), dtype=cp.float32))]:
    fs = {
        "__dlpack_device__": lambda: x.__dlpack_device__(),
        "__dlpack__(stream=-1, max_version=(1,3))": lambda: x.__dlpack__(stream=-1, max_version=(1, 3)),
        "__dlpack__(stream=-1)": lambda: x.__dlpack__(stream=-1),
        "__dlpack__()": lambda: x.__dlpack__(),
        "sk from_dlpack": lambda: SkView.from_dlpack(x, -1),
        "sk ctor": lambda: SkView(x, -1),
        "core from_dlpack": lambda: CoreView.from_dlpack(x, stream_ptr=-1),
        "core from_any": lambda: CoreView.from_any_interface(x, stream_ptr=-1),
        "sk from_cai": lambda: SkView.from_cuda_array_interface(x, -1),
        "core from_cai": lambda: CoreView.from_cuda_array_interface(x, stream_ptr=-1),
        "x.__cuda_array_interface__": lambda: x.__cuda_array_interface__,
    }
    m = medians(list(fs.values()), n=2000, batches=15)
    for k, v in zip(fs, m):
        print(f"{label:6s} {k:45s} {v:.3f} µs")
