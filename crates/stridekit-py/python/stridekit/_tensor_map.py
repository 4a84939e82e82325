"""Options of TMA descriptors, with CUDA's values (``CUtensorMap*`` enums), under
cuda.core's names."""

import dataclasses
import enum
from typing import Any, Optional, Tuple


class TensorMapDataType(enum.IntEnum):
    """The element type a descriptor moves (``CUtensorMapDataType``)."""

    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12


class TensorMapInterleave(enum.IntEnum):
    """``CUtensorMapInterleave``."""

    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2


class TensorMapSwizzle(enum.IntEnum):
    """``CUtensorMapSwizzle``."""

    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3


class TensorMapL2Promotion(enum.IntEnum):
    """``CUtensorMapL2promotion``."""

    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class TensorMapOOBFill(enum.IntEnum):
    """``CUtensorMapFloatOOBfill``: what out-of-bounds loads of floats read."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


@dataclasses.dataclass
class TensorMapDescriptorOptions:
    """The options of :meth:`StridedMemoryView.as_tensor_map`, bundled.

    ``box_dim`` is the tile in elements per dimension; ``data_type`` overrides the type
    (a :class:`TensorMapDataType`, or a NumPy / ml_dtypes dtype)."""

    box_dim: Tuple[int, ...]
    element_strides: Optional[Tuple[int, ...]] = None
    data_type: Any = None
    interleave: TensorMapInterleave = TensorMapInterleave.NONE
    swizzle: TensorMapSwizzle = TensorMapSwizzle.NONE
    l2_promotion: TensorMapL2Promotion = TensorMapL2Promotion.NONE
    oob_fill: TensorMapOOBFill = TensorMapOOBFill.NONE

    def __post_init__(self) -> None:
        self.box_dim = tuple(int(b) for b in self.box_dim)
        if self.element_strides is not None:
            self.element_strides = tuple(int(e) for e in self.element_strides)
        for name, kind in (
            ("interleave", TensorMapInterleave),
            ("swizzle", TensorMapSwizzle),
            ("l2_promotion", TensorMapL2Promotion),
            ("oob_fill", TensorMapOOBFill),
        ):
            value = getattr(self, name)
            if not isinstance(value, kind):
                raise TypeError(f"TensorMapDescriptorOptions: {name} must be a {kind.__name__}, not {value!r}")
