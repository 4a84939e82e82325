"""stridekit: strided GPU memory on CUDA, with cuda.core's names.

Port code from ``cuda.core`` by changing the import::

    from stridekit import StridedMemoryView, StridedLayout, args_viewable_as_strided_memory

CUDA is loaded at run time: the package imports on machines without a GPU, and GPU
calls there raise :class:`CUDAError`.
"""

import functools
import os
import sys
from typing import Any, Callable, Optional, Sequence, TypeVar

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
    _add_nvrtc_search_dirs,
    add_kernel_pack,
    cuda_available,
    discard,
    discard_prefetch,
    kernels_compiled_in_background,
    precompile_kernels,
    prefetch,
    set_background_compile,
    wait_for_kernels,
)
from ._tensor_map import (
    TensorMapDataType,
    TensorMapDescriptorOptions,
    TensorMapInterleave,
    TensorMapL2Promotion,
    TensorMapOOBFill,
    TensorMapSwizzle,
)

# NVRTC compiles the kernels at run time; pip installs it (the nvidia-cuda-nvrtc wheel,
# `stridekit[cu13]`) into a folder the loader does not search.
_add_nvrtc_search_dirs([p for p in sys.path if p])


def _add_package_pack(package_dir: str) -> Optional[str]:
    """Adds the kernel pack shipped inside the package (``kernels/``, written by
    ``scripts/build-kernel-pack`` before the wheel was built), if there is one; its path."""
    pack = os.path.join(package_dir, "kernels")
    if not os.path.isdir(pack):
        return None
    add_kernel_pack(pack)
    return pack


_add_package_pack(os.path.dirname(os.path.abspath(__file__)))

CUDAError.code = None  # set per instance: the driver's CUresult, or None

__all__ = [
    "Buffer",
    "CUDAError",
    "Device",
    "DeviceMemoryResource",
    "Host",
    "ManagedMemoryResource",
    "MemoryResource",
    "PinnedMemoryResource",
    "StridedLayout",
    "StridedMemoryView",
    "TensorMapDataType",
    "TensorMapDescriptor",
    "TensorMapDescriptorOptions",
    "TensorMapInterleave",
    "TensorMapL2Promotion",
    "TensorMapOOBFill",
    "TensorMapSwizzle",
    "add_kernel_pack",
    "args_viewable_as_strided_memory",
    "cuda_available",
    "discard",
    "discard_batch",
    "discard_prefetch",
    "discard_prefetch_batch",
    "get_include",
    "kernels_compiled_in_background",
    "precompile_kernels",
    "prefetch",
    "prefetch_batch",
    "set_background_compile",
    "wait_for_kernels",
]


def get_include() -> str:
    """The folder holding ``stridekit.h`` (with ``dlpack.h``) and ``stridekit.pxd``: pass
    it to the compiler (``include_dirs``) of a C or Cython extension that reads views
    through :meth:`StridedMemoryView.as_c_view`."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


class Device:
    """A GPU by ordinal, where cuda.core gives a ``Device``: ``device_id``, and equal to
    its ordinal and to any object with the same ``device_id``."""

    __slots__ = ("device_id",)

    def __init__(self, device_id: int = 0) -> None:
        self.device_id = int(device_id)

    def __index__(self) -> int:
        return self.device_id

    def __int__(self) -> int:
        return self.device_id

    def __eq__(self, other: object) -> bool:
        if isinstance(other, int):
            return other == self.device_id
        other_id = getattr(other, "device_id", None)
        return isinstance(other_id, int) and other_id == self.device_id

    def __hash__(self) -> int:
        return hash(self.device_id)

    def __repr__(self) -> str:
        return f"Device({self.device_id})"


def prefetch_batch(stream: Any, buffers: Sequence[Buffer], locations: Any) -> None:
    """Prefetches managed buffers to ``locations`` (one for all, or one per buffer),
    ordered on ``stream``, as one batched driver call (cuda.core's argument order)."""
    prefetch(list(buffers), _locations(locations), stream=stream)


def discard_batch(stream: Any, buffers: Sequence[Buffer]) -> None:
    """Discards managed buffers' contents, ordered on ``stream``; nothing may read them
    until they are written again."""
    discard(list(buffers), stream=stream)


def discard_prefetch_batch(stream: Any, buffers: Sequence[Buffer], locations: Any) -> None:
    """Discards managed buffers' contents and prefetches them to ``locations``, ordered
    on ``stream``."""
    discard_prefetch(list(buffers), _locations(locations), stream=stream)


def _locations(locations: Any) -> Any:
    # A single location stays one; any other sequence becomes a list (one per buffer).
    if isinstance(locations, (int, str, Device, Host)) or hasattr(locations, "device_id"):
        return locations
    if hasattr(locations, "numa_id"):
        return locations
    return list(locations)


class Host:
    """Host memory as a managed-memory location; ``numa_id`` picks a NUMA node (None:
    any). Devices are given by ordinal, or by any object with ``device_id``."""

    __slots__ = ("numa_id",)

    def __init__(self, numa_id: Optional[int] = None) -> None:
        self.numa_id = numa_id

    def __repr__(self) -> str:
        return "Host()" if self.numa_id is None else f"Host(numa_id={self.numa_id})"


class _ViewableArg:
    """An argument of a function decorated with ``args_viewable_as_strided_memory``:
    ``.view(stream_ptr)`` gives its ``StridedMemoryView``."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def view(self, stream_ptr: Any = None) -> StridedMemoryView:
        return StridedMemoryView(self.obj, stream_ptr)


_F = TypeVar("_F", bound=Callable[..., Any])


def args_viewable_as_strided_memory(arg_indices: Sequence[int]) -> Callable[[_F], _F]:
    """Decorator: the positional arguments at ``arg_indices`` reach the function wrapped
    in an object whose ``.view(stream_ptr)`` returns a :class:`StridedMemoryView`, so the
    function decides which stream the view is ordered on."""
    indices = tuple(arg_indices)

    def wrap(func: _F) -> _F:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            given = list(args)
            for i in indices:
                if i >= len(given) or i < -len(given):
                    raise TypeError(f"{func.__name__}: argument {i} was not given")
                given[i] = _ViewableArg(given[i])
            return func(*given, **kwargs)

        return wrapped  # type: ignore[return-value]

    return wrap


from . import dist as dist  # noqa: E402  (after StridedMemoryView, which it imports)
