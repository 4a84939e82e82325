"""cuda.core.utils' names: ``from stridekit.utils import StridedMemoryView`` ports code
written against ``from cuda.core.utils import StridedMemoryView``."""

from . import (
    StridedMemoryView,
    args_viewable_as_strided_memory,
    discard_batch,
    discard_prefetch_batch,
    prefetch_batch,
)

__all__ = [
    "StridedMemoryView",
    "args_viewable_as_strided_memory",
    "discard_batch",
    "discard_prefetch_batch",
    "prefetch_batch",
]
