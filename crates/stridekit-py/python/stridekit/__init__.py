"""stridekit: strided GPU memory on CUDA, with cuda.core's names.

Port code from ``cuda.core`` by changing the import::

    from stridekit import StridedMemoryView, StridedLayout, args_viewable_as_strided_memory

CUDA is loaded at run time: the package imports on machines without a GPU, and GPU
calls there raise :class:`CUDAError`.
"""

import functools

from ._stridekit import (
    Buffer,
    CUDAError,
    DeviceMemoryResource,
    ManagedMemoryResource,
    MemoryResource,
    PinnedMemoryResource,
    StridedLayout,
    StridedMemoryView,
    TensorMapDescriptor,
    __version__,
    cuda_available,
    discard,
    discard_prefetch,
    prefetch,
)

CUDAError.code = None  # set per instance: the driver's CUresult, or None

__all__ = [
    "Buffer",
    "CUDAError",
    "DeviceMemoryResource",
    "ManagedMemoryResource",
    "MemoryResource",
    "PinnedMemoryResource",
    "StridedLayout",
    "StridedMemoryView",
    "TensorMapDescriptor",
    "args_viewable_as_strided_memory",
    "Host",
    "cuda_available",
    "discard",
    "discard_prefetch",
    "prefetch",
]


class Host:
    """Host memory as a managed-memory location; ``numa_id`` picks a NUMA node (None:
    any). Devices are given by ordinal, or by any object with ``device_id``."""

    __slots__ = ("numa_id",)

    def __init__(self, numa_id=None):
        self.numa_id = numa_id

    def __repr__(self):
        return "Host()" if self.numa_id is None else f"Host(numa_id={self.numa_id})"


class _ViewableArg:
    """An argument of a function decorated with ``args_viewable_as_strided_memory``:
    ``.view(stream_ptr)`` gives its ``StridedMemoryView``."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def view(self, stream_ptr=None):
        return StridedMemoryView(self.obj, stream_ptr)


def args_viewable_as_strided_memory(arg_indices):
    """Decorator: the positional arguments at ``arg_indices`` reach the function wrapped
    in an object whose ``.view(stream_ptr)`` returns a :class:`StridedMemoryView`, so the
    function decides which stream the view is ordered on."""
    indices = tuple(arg_indices)

    def wrap(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            args = list(args)
            for i in indices:
                if i >= len(args) or i < -len(args):
                    raise TypeError(f"{func.__name__}: argument {i} was not given")
                args[i] = _ViewableArg(args[i])
            return func(*args, **kwargs)

        return wrapped

    return wrap
