"""Every dtype NumPy and ml_dtypes have comes in with its name, and out the same way;
foreign byte orders and object types are refused, never misread."""

from typing import Any

import numpy as np
import pytest

from stridekit import StridedMemoryView

ML_NAMES = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
            "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
COMPLEX32 = np.dtype([("real", "<f2"), ("imag", "<f2")])


def random_array(dtype: Any, shape: Any, seed: int) -> Any:
    dt = np.dtype(dtype)
    raw = np.random.default_rng(seed).integers(1, 255, size=int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape)


@pytest.mark.parametrize("name", ML_NAMES)
def test_ml_dtypes_arrays_keep_their_dtype_and_copy_byte_exact(name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dt = np.dtype(getattr(ml_dtypes, name))
    a = random_array(dt, (6, 5), 3)
    for x in (a, a.T, a[::-2, 1:]):
        v = StridedMemoryView(x)
        assert v.dtype == dt and v.shape == x.shape, (name, v.dtype)
        out = np.full(x.shape, 0xA5A5 & ((1 << (8 * dt.itemsize)) - 1), f"u{dt.itemsize}").view(dt)  # poison
        StridedMemoryView(out).copy_from(v)
        assert out.tobytes() == np.ascontiguousarray(x).tobytes()
    # Named on the way in too: a view of raw bytes as this type.
    raw = StridedMemoryView(np.zeros(4, f"u{dt.itemsize}")).view(dtype=dt)
    assert raw.dtype == dt


def test_complex32_is_a_record_of_two_halves() -> None:
    a = random_array(COMPLEX32, (4, 3), 4)
    v = StridedMemoryView(a)
    assert v.dtype == COMPLEX32 and v.layout.itemsize == 4
    b = StridedMemoryView(np.zeros(4, np.uint32)).view(dtype=COMPLEX32)
    assert b.dtype == COMPLEX32 and b.shape == (4,)
    with pytest.raises(ValueError, match="dtypes must match"):
        StridedMemoryView(np.zeros((4, 3), np.float32)).copy_from(v)


def test_foreign_byte_order_dtypes_are_refused_as_targets() -> None:
    v = StridedMemoryView(np.zeros(4, np.int32))
    with pytest.raises(TypeError, match="foreign byte order"):
        v.view(dtype=np.dtype(">i4"))
    assert v.view(dtype=np.dtype("<i4")).dtype == np.int32


def test_every_named_dtype_round_trips_through_dlpack_export() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dt in [np.dtype(getattr(ml_dtypes, n)) for n in ML_NAMES] + [COMPLEX32, np.dtype(np.float16)]:
        v = StridedMemoryView(np.zeros(16, f"u{dt.itemsize}")).view(dtype=dt)
        again = StridedMemoryView(v)  # through v.__dlpack__
        assert again.dtype == dt, dt

