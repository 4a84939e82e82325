"""Types of stridekit's native module (re-exported by ``stridekit``)."""

import os
from typing import Any, ClassVar, Dict, List, Optional, Sequence, SupportsIndex, Tuple, Union

import numpy

from ._tensor_map import (
    TensorMapDataType,
    TensorMapDescriptorOptions,
    TensorMapInterleave,
    TensorMapL2Promotion,
    TensorMapOOBFill,
    TensorMapSwizzle,
)

__version__: str
cuda_available: bool

def _add_nvrtc_search_dirs(site_dirs: list[str]) -> None: ...
def precompile_kernels(
    path: str | os.PathLike[str], compute_capability: Optional[Tuple[int, int]] = None
) -> Dict[str, Any]:
    """Compiles the copy engine's common kernels for GPUs of ``compute_capability``
    (major, minor; None: device 0's) with NVRTC into the kernel pack ``path`` (no GPU
    needed when the capability is given), so that first copies load their kernels
    instead of compiling them. Returns ``{"kernels": int, "bytes": int, "failed":
    list[str]}``."""
def add_kernel_pack(path: str | os.PathLike[str]) -> None:
    """Adds ``path`` to the kernel packs searched (after the disk cache and
    ``$STRIDEKIT_KERNEL_PACKS``) before NVRTC compiles a kernel."""
def set_background_compile(enabled: bool) -> None:
    """Whether a copy whose kernels are not compiled yet runs at once on the fallback
    kernel shipped in the library while they compile on background threads (True, the
    default) or waits for them (False). Overrides ``$STRIDEKIT_BACKGROUND_COMPILE``."""
def wait_for_kernels() -> None:
    """Waits until every kernel being compiled in the background is done, so that the
    copies after it run on their own kernels (call it after warming up a benchmark)."""
def kernels_compiled_in_background() -> int:
    """How many kernels this process has handed to background threads."""

#: A stream argument: None (the legacy default stream), an int by stridekit's one rule
#: (-1: no ordering, 1: legacy default, 2: per-thread default, other: a handle), or an
#: object with ``__cuda_stream__``, ``cuda_stream``, ``ptr`` or ``handle``.
StreamLike = Any
#: A memory location: a device ordinal, "host", a ``Device`` or a ``Host``.
LocationLike = Any
#: A dtype: a ``numpy.dtype``, a type or a string NumPy reads (ml_dtypes' types too).
DTypeLike = Any
_Slice = Union[int, slice]

class CUDAError(RuntimeError):
    """A driver call failed; ``code`` is its CUresult (None when not from the driver)."""

    code: Optional[int]

class StridedLayout:
    """Shape, strides (in elements) and itemsize of a strided array, with cuda.core's
    layout algebra."""

    def __init__(
        self,
        shape: Sequence[int],
        strides: Optional[Sequence[int]],
        itemsize: int,
        divide_strides: bool = False,
    ) -> None: ...
    @staticmethod
    def dense(
        shape: Sequence[int], itemsize: int, stride_order: Union[str, Sequence[int], None] = None
    ) -> StridedLayout: ...
    @staticmethod
    def dense_like(
        other: StridedLayout, stride_order: Union[str, Sequence[int], None] = None
    ) -> StridedLayout: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def strides(self) -> Tuple[int, ...]: ...
    @property
    def strides_in_bytes(self) -> Tuple[int, ...]: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def ndim(self) -> int: ...
    @property
    def volume(self) -> int: ...
    @property
    def slice_offset(self) -> int: ...
    @property
    def slice_offset_in_bytes(self) -> int: ...
    @property
    def offset_bounds(self) -> Tuple[int, int]: ...
    @property
    def min_offset(self) -> int: ...
    @property
    def max_offset(self) -> int: ...
    @property
    def stride_order(self) -> Tuple[int, ...]: ...
    @property
    def is_unique(self) -> bool: ...
    @property
    def is_contiguous_c(self) -> bool: ...
    @property
    def is_contiguous_f(self) -> bool: ...
    @property
    def is_contiguous_any(self) -> bool: ...
    @property
    def is_dense(self) -> bool: ...
    def required_size_in_bytes(self) -> int: ...
    def flattened_axis_mask(self) -> int: ...
    def reshaped(self, shape: Sequence[int]) -> StridedLayout: ...
    def permuted(self, axis_order: Sequence[int]) -> StridedLayout: ...
    def flattened(
        self, start_axis: Optional[int] = None, end_axis: Optional[int] = None, mask: Optional[int] = None
    ) -> StridedLayout: ...
    def squeezed(self) -> StridedLayout: ...
    def unsqueezed(self, axis: Union[int, Sequence[int]]) -> StridedLayout: ...
    def broadcast_to(self, shape: Sequence[int]) -> StridedLayout: ...
    def repacked(
        self, itemsize: int, data_ptr: int = 0, axis: int = -1, keep_dim: bool = True
    ) -> StridedLayout: ...
    def max_compatible_itemsize(self, max_itemsize: int = 16, data_ptr: int = 0, axis: int = -1) -> int: ...
    def to_dense(self, stride_order: Union[str, Sequence[int], None] = None) -> StridedLayout: ...
    def sliced(self, slices: Union[_Slice, Tuple[_Slice, ...]]) -> StridedLayout: ...
    def __getitem__(self, key: Union[_Slice, Tuple[_Slice, ...]]) -> StridedLayout: ...
    def __hash__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

class Buffer:
    """A span of device, pinned, managed or host memory, released when the last
    reference (and every view of it) is gone, after the GPU work queued on it."""

    @staticmethod
    def from_handle(
        ptr: Union[int, SupportsIndex],
        size: int,
        mr: Optional[Any] = None,
        owner: Optional[object] = None,
        *,
        stream: StreamLike = None,
    ) -> Buffer: ...
    @property
    def ptr(self) -> int: ...
    @property
    def handle(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def device_id(self) -> int: ...
    @property
    def is_device_accessible(self) -> bool: ...
    @property
    def is_host_accessible(self) -> bool: ...
    @property
    def memory_kind(self) -> str: ...
    read_mostly: bool
    preferred_location: Optional[Any]
    accessed_by: Any
    def prefetch(self, location: LocationLike, stream: StreamLike = None) -> None: ...
    def discard(self, stream: StreamLike = None) -> None: ...
    def discard_prefetch(self, location: LocationLike, stream: StreamLike = None) -> None: ...

class MemoryResource:
    """The base of stridekit's memory resources (for ``isinstance``)."""

    def allocate(self, size: int, stream: StreamLike = None) -> Buffer: ...
    @property
    def device_id(self) -> int: ...
    @property
    def is_device_accessible(self) -> bool: ...
    @property
    def is_host_accessible(self) -> bool: ...

class DeviceMemoryResource(MemoryResource):
    """The device's memory pool: stream-ordered allocations."""

    def __init__(self, device_id: Union[int, Any], options: None = None) -> None: ...

class PinnedMemoryResource(MemoryResource):
    """Page-locked host memory, readable by the CPU and by kernels."""

    def __init__(self, options: None = None, *, device_id: Union[int, Any, None] = None) -> None: ...

class ManagedMemoryResource(MemoryResource):
    """Managed (unified) memory."""

    def __init__(self, options: None = None, *, device_id: Union[int, Any, None] = None) -> None: ...
    @property
    def is_managed(self) -> bool: ...

class TensorMapDescriptor:
    """A ``CUtensorMap``: pass ``bytes(desc)`` to a kernel's ``const __grid_constant__
    CUtensorMap`` parameter. It keeps the memory it describes alive."""

    def __bytes__(self) -> bytes: ...
    @property
    def device_id(self) -> int: ...
    @property
    def device(self) -> Any: ...
    @property
    def address(self) -> int: ...
    def replace_address(self, view: StridedMemoryView) -> None: ...

class StridedMemoryView:
    """A strided view of another library's array or of a :class:`Buffer`."""

    __dlpack_c_exchange_api__: ClassVar[Any]
    """DLPack 1.3's C exchange API: a capsule named "dlpack_exchange_api"."""
    __c_dlpack_exchange_api__: ClassVar[Any]

    def __init__(self, obj: object, stream_ptr: StreamLike = None) -> None: ...
    @staticmethod
    def from_dlpack(obj: object, stream_ptr: StreamLike = None) -> StridedMemoryView: ...
    @staticmethod
    def from_cuda_array_interface(obj: object, stream_ptr: StreamLike = None) -> StridedMemoryView: ...
    @staticmethod
    def from_array_interface(obj: object) -> StridedMemoryView: ...
    @staticmethod
    def from_any_interface(obj: object, stream_ptr: StreamLike = None) -> StridedMemoryView: ...
    @staticmethod
    def from_buffer(
        buffer: Any,
        shape: Union[Sequence[int], StridedLayout],
        strides: Optional[Sequence[int]] = None,
        *,
        itemsize: Optional[int] = None,
        dtype: DTypeLike = None,
        is_readonly: bool = False,
    ) -> StridedMemoryView: ...
    def view(self, layout: Optional[StridedLayout] = None, dtype: DTypeLike = None) -> StridedMemoryView: ...
    @property
    def ptr(self) -> int: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def strides(self) -> Optional[Tuple[int, ...]]: ...
    @property
    def size(self) -> int: ...
    @property
    def dtype(self) -> Optional[numpy.dtype[Any]]: ...
    @property
    def device_id(self) -> int: ...
    @property
    def is_device_accessible(self) -> bool: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def exporting_obj(self) -> Any: ...
    @property
    def layout(self) -> StridedLayout: ...
    @property
    def _layout(self) -> StridedLayout:
        """cuda.core's name: the layout the view was made from, else ``layout``."""
    def copy_from(
        self,
        other: StridedMemoryView,
        stream: StreamLike = None,
        allocator: Optional[MemoryResource] = None,
        blocking: Optional[bool] = None,
        *,
        bits: bool = False,
    ) -> None: ...
    def copy_to(
        self,
        other: StridedMemoryView,
        stream: StreamLike = None,
        allocator: Optional[MemoryResource] = None,
        blocking: Optional[bool] = None,
        *,
        bits: bool = False,
    ) -> None: ...
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]: ...
    @property
    def __array_interface__(self) -> Dict[str, Any]: ...
    def as_tensor_map(
        self,
        box_dim: Optional[Sequence[int]] = None,
        *,
        options: Optional[TensorMapDescriptorOptions] = None,
        element_strides: Optional[Sequence[int]] = None,
        data_type: Union[TensorMapDataType, DTypeLike, None] = None,
        interleave: Optional[TensorMapInterleave] = None,
        swizzle: Optional[TensorMapSwizzle] = None,
        l2_promotion: Optional[TensorMapL2Promotion] = None,
        oob_fill: Optional[TensorMapOOBFill] = None,
    ) -> TensorMapDescriptor: ...
    def as_c_view(self) -> Any: ...

def prefetch(buffers: Union[Buffer, Sequence[Buffer]], locations: Any, stream: StreamLike = None) -> None: ...
def discard(buffers: Union[Buffer, Sequence[Buffer]], stream: StreamLike = None) -> None: ...
def discard_prefetch(
    buffers: Union[Buffer, Sequence[Buffer]], locations: Any, stream: StreamLike = None
) -> None: ...

class Communicator:
    def __init__(self, unique_id: bytes, rank: int, size: int, device_id: int = 0) -> None: ...
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def device_id(self) -> int: ...

def nccl_unique_id() -> bytes: ...
def nccl_version() -> Tuple[int, int, int]: ...
def local_world(devices: Sequence[int]) -> List[Communicator]: ...
def batch(
    comm: Communicator,
    sends: Sequence[Tuple[StridedMemoryView, int]],
    recvs: Sequence[Tuple[StridedMemoryView, int]],
    stream: StreamLike = None,
    self_through_transport: bool = False,
    collective: bool = False,
    piece_bytes: Optional[int] = None,
) -> None: ...
def redistribute(
    comm: Communicator,
    shape: Sequence[int],
    from_axis: int,
    to_axis: int,
    src: StridedMemoryView,
    dst: StridedMemoryView,
    stream: StreamLike = None,
    piece_bytes: Optional[int] = None,
) -> None: ...
