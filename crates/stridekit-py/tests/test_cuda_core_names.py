"""cuda.core's names and signatures: the snippets in snippets.py run against stridekit
(here, on any machine) and, on a GPU with cuda.core installed, against cuda.core too,
with the same results."""

import sys
from typing import Any

import numpy as np
import pytest

import stridekit
import stridekit.utils

sys.path.insert(0, __import__("os").path.dirname(__file__))
import snippets  # noqa: E402


def test_cpu_snippets_give_cuda_cores_results() -> None:
    got = snippets.cpu(stridekit)
    assert got["array_interface"] == (True, (4, 3), (6, 2), "float32", 12, -1, False, False)
    assert got["dlpack"] == (True, (4, 3), (6, 2), "float32")
    assert got["contiguous_array_interface"] == ((2, 3), None)
    c = stridekit.StridedMemoryView.from_array_interface(np.zeros((2, 3), np.int64))
    assert c.layout.strides == (3, 1)  # a stridekit layout always has its strides
    assert got["any"] == ((4, 3), (6, 2), True)
    assert got["zero_d"] == got["zero_d_dlpack"] == ((), None, 1)
    assert got["readonly"] is True
    assert got["view_dtype"] == ("int32", (4, 3), (6, 2))
    assert got["layout"] == ((1, 2, 6), (6, 1, 2), (2, 3, 4), (1, 2, 3, 4), (1, -2, 6), (12, 4, 1),
                             (1, 2, 6), "not C", 24, 96)
    assert got["decorator"] == ("x", (2, 5))


def test_utils_has_cuda_core_utils_names() -> None:
    for name in ["StridedMemoryView", "args_viewable_as_strided_memory", "prefetch_batch",
                 "discard_batch", "discard_prefetch_batch"]:
        assert getattr(stridekit.utils, name) is getattr(stridekit, name)


def test_single_protocol_constructors_refuse_other_protocols() -> None:
    a = np.arange(6, dtype=np.int32)

    class OnlyInterface:
        __array_interface__ = a.__array_interface__

    with pytest.raises(BufferError, match="DLPack"):
        stridekit.StridedMemoryView.from_dlpack(OnlyInterface())
    with pytest.raises(BufferError, match="CUDA Array Interface"):
        stridekit.StridedMemoryView.from_cuda_array_interface(a)
    with pytest.raises(BufferError, match="array interface"):
        stridekit.StridedMemoryView.from_array_interface(object())
    v = stridekit.StridedMemoryView.from_array_interface(OnlyInterface())
    assert (v.shape, v.size, str(v.dtype)) == ((6,), 6, "int32")


def test_from_buffer_takes_shape_strides_itemsize_and_dtype() -> None:
    a = np.arange(24, dtype=np.float32)
    buf = stridekit.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    v = stridekit.StridedMemoryView.from_buffer(buf, (4, 6), dtype=np.float32)
    # No strides given: C-contiguous, and `strides` None as in cuda.core.
    assert (v.shape, v.strides, v.layout.strides, str(v.dtype)) == ((4, 6), None, (6, 1), "float32")
    t = stridekit.StridedMemoryView.from_buffer(buf, (6, 4), (1, 6), itemsize=4, is_readonly=True)
    assert (t.shape, t.strides, t.dtype, t.readonly) == ((6, 4), (1, 6), None, True)
    # Neither itemsize nor dtype: a ValueError, as cuda.core's own tests expect.
    with pytest.raises(ValueError, match="itemsize or dtype must be specified"):
        stridekit.StridedMemoryView.from_buffer(buf, (4, 6))
    with pytest.raises(ValueError, match="itemsize 8 differs"):
        stridekit.StridedMemoryView.from_buffer(buf, (4, 6), itemsize=8, dtype=np.float32)
    with pytest.raises(ValueError):
        stridekit.StridedMemoryView.from_buffer(buf, (5, 6), dtype=np.float32)  # too big


def test_from_buffer_takes_another_librarys_buffer() -> None:
    class Foreign:  # what cuda.core's Buffer offers: handle and size
        def __init__(self, a: np.ndarray) -> None:
            self.a, self.handle, self.size = a, a.ctypes.data, a.nbytes

    a = np.arange(12, dtype=np.int32)
    f = Foreign(a)
    v = stridekit.StridedMemoryView.from_buffer(f, (3, 4), dtype=np.int32)
    assert v.exporting_obj is f and v.ptr == a.ctypes.data
    assert np.asarray(v).tolist() == a.reshape(3, 4).tolist()
    with pytest.raises(TypeError, match="handle"):
        stridekit.StridedMemoryView.from_buffer(object(), (3,), dtype=np.int32)


def test_record_and_padded_element_types_are_viewed_sliced_and_copied() -> None:
    rec_t = np.dtype([("a", "<i4"), ("b", "i1")])  # 5 bytes, no stridekit type
    src = np.zeros(12, rec_t)
    src["a"] = np.arange(12) * 7
    src["b"] = np.arange(12) - 6
    buf = stridekit.Buffer.from_handle(src.ctypes.data, src.nbytes, owner=src)
    v = stridekit.StridedMemoryView.from_buffer(buf, (3, 4), dtype=rec_t)
    assert (v.shape, v.layout.itemsize, v.dtype) == ((3, 4), 5, rec_t)
    back = np.asarray(v)
    assert back.dtype == rec_t and back.tobytes() == src.tobytes()
    # Sliced: the record type carries over.
    s = v.view(v.layout[1:, ::2])
    assert s.dtype == rec_t and np.asarray(s).tolist() == src.reshape(3, 4)[1:, ::2].tolist()
    # Copied as bytes into another record view, transposed.
    dst = np.zeros(12, rec_t)
    dbuf = stridekit.Buffer.from_handle(dst.ctypes.data, dst.nbytes, owner=dst)
    d = stridekit.StridedMemoryView.from_buffer(dbuf, (4, 3), dtype=rec_t)
    d.copy_from(v.view(v.layout.permuted((1, 0))))
    assert dst.reshape(4, 3).tolist() == src.reshape(3, 4).T.tolist()
    # A padded 12-byte type through the array interface is V12, as in cuda.core.
    padded = np.zeros(4, np.dtype({"names": ["x"], "formats": ["<i4"], "itemsize": 12}))
    p = stridekit.StridedMemoryView(padded)
    assert p.dtype == np.dtype("V12") and p.layout.itemsize == 12
    # The itemsize must agree with the layout's; object arrays are refused.
    with pytest.raises(ValueError, match="itemsize"):
        stridekit.StridedMemoryView.from_buffer(buf, (3, 4), itemsize=4, dtype=rec_t)
    with pytest.raises(TypeError):
        stridekit.StridedMemoryView.from_buffer(buf, (2,), dtype=object)


def test_buffer_from_handle_returns_memory_to_its_resource() -> None:
    freed = []

    class Resource:
        def deallocate(self, ptr: int, size: int, *, stream: Any) -> None:
            freed.append((ptr, size, stream))

    a = np.zeros(64, np.uint8)
    b = stridekit.Buffer.from_handle(a.ctypes.data, 64, mr=Resource(), stream="s")
    v = stridekit.StridedMemoryView.from_buffer(b, (64,), dtype=np.uint8)
    del b
    assert freed == []  # the view still holds the buffer
    del v
    import gc

    gc.collect()
    assert freed == [(a.ctypes.data, 64, "s")]
    with pytest.raises(TypeError, match="mr or owner"):
        stridekit.Buffer.from_handle(a.ctypes.data, 64, mr=Resource(), owner=a)
    with pytest.raises(TypeError, match="deallocate"):
        stridekit.Buffer.from_handle(a.ctypes.data, 64, mr=object())


def test_tensor_map_options_are_checked_before_any_gpu_call() -> None:
    v = stridekit.StridedMemoryView(np.zeros((64, 64), np.float32))
    with pytest.raises(TypeError, match="not both"):
        v.as_tensor_map((8, 8), options=stridekit.TensorMapDescriptorOptions(box_dim=(8, 8)))
    with pytest.raises(TypeError, match="box_dim is required"):
        v.as_tensor_map()
    with pytest.raises(ValueError, match="swizzle value 7"):
        v.as_tensor_map((8, 8), swizzle=7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a TensorMapSwizzle"):
        stridekit.TensorMapDescriptorOptions(box_dim=(8, 8), swizzle=3)  # type: ignore[arg-type]
    assert int(stridekit.TensorMapSwizzle.SWIZZLE_128B) == 3
    assert int(stridekit.TensorMapDataType.BFLOAT16) == 9


def test_memory_resources_are_classes() -> None:
    for cls in (stridekit.DeviceMemoryResource, stridekit.PinnedMemoryResource,
                stridekit.ManagedMemoryResource):
        assert isinstance(cls, type) and issubclass(cls, stridekit.MemoryResource)
    with pytest.raises(TypeError, match="options are not supported"):
        stridekit.DeviceMemoryResource(0, options=object())  # type: ignore[arg-type]


def test_device_compares_with_ordinals_and_device_ids() -> None:
    d = stridekit.Device(1)
    assert d == 1 and d == stridekit.Device(1) and d != 0 and hash(d) == hash(1)
    assert [10, 11][d] == 11


def test_get_include_has_the_header_and_the_pxd() -> None:
    import os

    inc = stridekit.get_include()
    for f in ("stridekit.h", "dlpack.h", "stridekit.pxd"):
        assert os.path.isfile(os.path.join(inc, f)), f
    with open(os.path.join(inc, "stridekit.h")) as h:
        assert "typedef struct sk_view {" in h.read()


def test_a_view_of_a_view_keeps_its_flags_and_dtype() -> None:
    a = np.arange(12, dtype=np.float32)
    buf = stridekit.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    ro = stridekit.StridedMemoryView.from_buffer(buf, (3, 4), dtype=np.float32, is_readonly=True)
    for make in (stridekit.StridedMemoryView, stridekit.StridedMemoryView.from_dlpack):
        w = make(ro, -1)
        assert (w.readonly, w.exporting_obj is ro, w.shape, w.ptr) == (True, True, (3, 4), ro.ptr)
        assert w.dtype == np.dtype(np.float32)
    rw = stridekit.StridedMemoryView(a, -1)
    again = stridekit.StridedMemoryView(rw, -1)
    assert not again.readonly and np.asarray(again).tolist() == a.tolist()
    rec = np.zeros(4, dtype=[("a", "<i4"), ("b", "i1")])
    v = stridekit.StridedMemoryView(rec)
    assert stridekit.StridedMemoryView(v, -1).dtype == np.dtype("V5")


def test_layout_objects_are_kept_and_reach_cuda_cores_private_name() -> None:
    a = np.arange(35, dtype=np.int16).reshape(5, 7)
    v = stridekit.StridedMemoryView(a, -1)
    assert v.layout is v.layout and v._layout is v.layout
    sl = v.layout[:-2, 3:]
    s = v.view(sl)
    # cuda.core's `_layout` is the layout the view was made from, offset included.
    assert s._layout is sl and s._layout.slice_offset == 3 and s.ptr == v.ptr + 3 * 2
    assert s.layout.slice_offset == 0  # stridekit's `layout` is relative to `ptr`
    buf = stridekit.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    dense = stridekit.StridedLayout.dense((5, 7), 2)
    assert stridekit.StridedMemoryView.from_buffer(buf, dense, dtype=np.int16)._layout is dense


def test_zero_d_views_from_a_buffer_keep_the_strides_given() -> None:
    b = np.zeros(4, np.uint8)
    buf = stridekit.Buffer.from_handle(b.ctypes.data, 4, owner=b)
    assert stridekit.StridedMemoryView.from_buffer(buf, (), (), dtype=np.uint8).strides == ()
    assert stridekit.StridedMemoryView.from_buffer(buf, (), dtype=np.uint8).strides is None
