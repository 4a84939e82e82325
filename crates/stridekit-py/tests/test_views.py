"""StridedMemoryView over NumPy arrays (no GPU needed): every dtype, slices, copies into
transposed and negative-stride arrays, DLPack both ways, the C view, every rejection."""

from typing import Any
import ctypes

import numpy as np
import pytest

import stridekit
from stridekit import StridedLayout, StridedMemoryView

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


def rand(shape: Any, dtype: Any, seed: Any) -> Any:
    rng = np.random.default_rng(seed)
    raw = rng.integers(1, 255, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_views_of_every_dtype(dtype: Any) -> None:
    a = rand((6, 5, 4), dtype, 1)
    v = StridedMemoryView(a, stream_ptr=-1)
    assert v.shape == (6, 5, 4)
    assert v.strides == tuple(s // a.itemsize for s in a.strides)
    assert v.dtype == np.dtype(dtype)
    assert v.ptr == a.ctypes.data
    assert (v.device_id, v.is_device_accessible, v.readonly) == (-1, False, False)
    assert v.exporting_obj is a
    assert v.layout == StridedLayout.dense((6, 5, 4), a.itemsize)
    s = a[1:5, ::-2, 3]
    sv = StridedMemoryView(s)
    assert sv.shape == s.shape and sv.strides == tuple(x // a.itemsize for x in s.strides)
    assert sv.ptr == s.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_copies_into_transposed_and_flipped_arrays(dtype: Any) -> None:
    src = rand((7, 9), dtype, 2)
    for make in (lambda: np.zeros((9, 7), dtype).T,
                 lambda: np.zeros((7, 9), dtype)[::-1, ::-1],
                 lambda: np.zeros((14, 18), dtype)[::2, 1::2]):
        dst = make()
        dst[...] = rand(dst.shape, dtype, 3)  # poison
        StridedMemoryView(dst).copy_from(StridedMemoryView(src))
        assert dst.tobytes() == np.ascontiguousarray(src).tobytes()
    out = np.zeros((9, 7), dtype)
    StridedMemoryView(src.T).copy_to(StridedMemoryView(out))
    assert out.tobytes() == np.ascontiguousarray(src.T).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_round_trips(dtype: Any) -> None:
    a = rand((4, 6), dtype, 4)[:, ::-1]
    v = StridedMemoryView(a)
    b = np.from_dlpack(v)
    assert b.dtype == a.dtype and b.shape == a.shape and b.tobytes() == a.tobytes()
    assert b.__array_interface__["data"][0] == a.__array_interface__["data"][0]
    assert v.__dlpack_device__() == (1, 0)
    again = StridedMemoryView(b)
    assert again.strides == v.strides


def test_read_only_arrays_give_read_only_views() -> None:
    a = np.arange(10, dtype=np.int32)
    a.flags.writeable = False
    v = StridedMemoryView(a)
    assert v.readonly
    with pytest.raises(ValueError, match="read-only"):
        v.copy_from(StridedMemoryView(np.zeros(10, np.int32)))
    b = np.from_dlpack(v)
    assert not b.flags.writeable


def test_views_of_buffers_and_relayouts() -> None:
    a = np.arange(24, dtype=np.float32)
    buf = stridekit.Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    assert (buf.size, buf.memory_kind, buf.device_id) == (96, "host", -1)
    v = StridedMemoryView.from_buffer(buf, StridedLayout.dense((4, 6), 4), dtype=np.float32)
    t = v.view(v.layout.permuted((1, 0)))
    assert t.shape == (6, 4) and t.dtype == np.float32
    out = np.zeros((6, 4), np.float32)
    StridedMemoryView(out).copy_from(t)
    assert np.array_equal(out, a.reshape(4, 6).T)
    ro = StridedMemoryView.from_buffer(buf, StridedLayout.dense((24,), 4), is_readonly=True)
    assert ro.readonly and ro.exporting_obj is buf
    with pytest.raises(ValueError, match="reaches element offset 24"):
        StridedMemoryView.from_buffer(buf, StridedLayout.dense((25,), 4))
    with pytest.raises(ValueError, match="itemsize"):
        StridedMemoryView.from_buffer(buf, StridedLayout.dense((24,), 4), dtype=np.float64)


class SkView(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_size_t), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("itemsize", ctypes.c_int64), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("device_id", ctypes.c_int32),
                ("device_accessible", ctypes.c_bool), ("readonly", ctypes.c_bool), ("owner", ctypes.c_void_p)]


def test_the_c_view_has_plain_fields() -> None:
    a = np.zeros((3, 5), np.float64)[:, ::2]
    cap = StridedMemoryView(a).as_c_view()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    v = SkView.from_address(get(cap, b"stridekit.sk_view"))
    assert v.ptr == a.ctypes.data and v.ndim == 2 and v.itemsize == 8
    assert [v.shape[i] for i in range(2)] == [3, 3] and [v.strides[i] for i in range(2)] == [5, 2]
    assert (v.code, v.bits, v.lanes, v.device_id, v.readonly) == (2, 64, 1, -1, False)
    del cap  # releases the C view


def test_rejections() -> None:
    with pytest.raises(BufferError):
        StridedMemoryView(object())
    v = StridedMemoryView(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"source shape \(3,2\) and destination shape \(2,3\) differ"):
        v.copy_from(StridedMemoryView(np.zeros((3, 2), np.float32)))
    with pytest.raises(ValueError, match=r"float64 and the destination float32; .* the dtypes must match \(pass bits=True") as e:
        v.copy_from(StridedMemoryView(np.zeros((2, 3), np.float64)))
    assert "CopyOptions" not in str(e.value)
    with pytest.raises(ValueError, match="itemsize"):
        v.copy_from(StridedMemoryView(np.zeros((2, 3), np.float64)), bits=True)
    with pytest.raises(TypeError, match="is not a stream"):
        v.copy_from(StridedMemoryView(np.zeros((2, 3), np.float32)), stream="s")
    with pytest.raises(BufferError, match="copy=True"):
        v.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="not \\(2, 0\\)"):
        v.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError):
        v.as_tensor_map([2, 2], swizzle=5)  # type: ignore[arg-type]
    v.copy_from(v)  # onto itself: nothing to do
    bcast = np.broadcast_to(np.zeros(3, np.float32), (2, 3))
    with pytest.raises(ValueError, match="read-only|two elements|unique"):
        StridedMemoryView(np.zeros((2, 3), np.float32)).copy_to(StridedMemoryView(bcast))


def test_gpu_calls_without_a_gpu_raise_cuda_error() -> None:
    if stridekit.cuda_available:
        pytest.skip("a GPU is present")
    with pytest.raises(stridekit.CUDAError) as e:
        stridekit.DeviceMemoryResource(0)
    assert "no CUDA driver" in str(e.value) and e.value.code is None


def test_the_decorator_hands_out_views() -> None:
    @stridekit.args_viewable_as_strided_memory((0, 2))
    def f(x: Any, scale: Any, y: Any) -> Any:
        return x.view(-1).shape, scale, y.view(-1).dtype

    assert f(np.zeros((2, 3)), 3, np.zeros(4, np.int16)) == ((2, 3), 3, np.dtype(np.int16))
    with pytest.raises(TypeError):
        f(np.zeros(1), 2)  # type: ignore[call-arg]


def test_copies_never_reinterpret_unless_bits_is_asked() -> None:
    src = np.array([1, 2, 3, 0x3F800000], dtype=np.int32)
    out = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match="the source is int32 and the destination float32"):
        StridedMemoryView(out).copy_from(StridedMemoryView(src))
    assert out.tobytes() == bytes(16)
    StridedMemoryView(out).copy_from(StridedMemoryView(src), bits=True)
    assert out.tobytes() == src.tobytes()
    flags = np.zeros(4, dtype=np.bool_)
    with pytest.raises(ValueError, match="the source is uint8 and the destination bool"):
        StridedMemoryView(np.array([7, 0, 1, 255], np.uint8)).copy_to(StridedMemoryView(flags))
    assert not flags.any()


def test_stream_values_follow_one_rule() -> None:
    a = np.arange(6, dtype=np.float32)
    # 0 is CUDA's NULL stream, the legacy default stream, as code written for cuda.core
    # passes it.
    assert StridedMemoryView(a, stream_ptr=0).shape == (6,)
    with pytest.raises(ValueError, match="neither a handle nor a stream value"):
        StridedMemoryView(a, stream_ptr=-7)
    # -1 (no ordering) and a stream object whose CUDA handle is NULL are fine.
    assert StridedMemoryView(a, stream_ptr=-1).shape == (6,)

    class NullStream:
        def __cuda_stream__(self: Any) -> Any:
            return (0, 0)

    assert StridedMemoryView(a, stream_ptr=NullStream()).shape == (6,)


def test_read_only_views_never_leave_as_legacy_dlpack() -> None:
    a = np.arange(6, dtype=np.float32)
    a.flags.writeable = False
    v = StridedMemoryView(a, -1)
    assert v.readonly
    with pytest.raises(ValueError, match="cannot be exported as legacy DLPack"):
        v.__dlpack__(max_version=None)
    assert np.from_dlpack(v).tobytes() == a.tobytes()


class Iface:
    """An object that offers only the array interface (no DLPack), holding the array."""

    def __init__(self: Any, a: Any, **changes: Any) -> None:
        self.a = a
        d = dict(a.__array_interface__)
        d.update(changes)
        self.__array_interface__ = d


def test_typestrs_are_read_completely() -> None:
    # Objects: their bytes are references; copying them uncounted would crash later.
    objs = np.array([object(), "x", 3], dtype=object)
    with pytest.raises(TypeError, match="Python objects"):
        StridedMemoryView(Iface(objs))
    with pytest.raises(TypeError, match="Python objects"):
        StridedMemoryView(objs)  # NumPy's DLPack refuses; the interface says why
    with pytest.raises(TypeError, match="Python objects"):
        StridedMemoryView(Iface(np.zeros(2, np.int64), typestr="|O8"))
    # Records with an object field anywhere, nested too.
    rec = np.zeros(3, dtype=[("a", "<i4"), ("b", [("c", "O")])])
    with pytest.raises(TypeError, match="Python objects"):
        StridedMemoryView(Iface(rec))
    # Foreign byte order: refused, never misread.
    big = np.arange(4, dtype=">i4")
    with pytest.raises(TypeError, match="misread"):
        StridedMemoryView(Iface(big))
    with pytest.raises(TypeError, match="misread"):
        StridedMemoryView(big)
    # Exact itemsizes: unicode is 4 bytes a character.
    u = np.array(["abc", "de"], dtype="<U3")
    v = StridedMemoryView(Iface(u))
    # Elements stridekit has no type for are V<itemsize>, as in cuda.core.
    assert (v.dtype, v.layout.strides, v.strides, v.shape) == (np.dtype("V12"), (1,), None, (2,))
    assert v.layout.itemsize == 12
    # Plain records keep their size.
    r = np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")])
    rv = StridedMemoryView(Iface(r))
    assert rv.layout.itemsize == r.itemsize and rv.dtype == np.dtype("V12")
    for bad in ["<f", "<f0", "!f4", "<q4", ""]:
        with pytest.raises(ValueError, match="typestr"):
            StridedMemoryView(Iface(np.zeros(2, np.float32), typestr=bad))


def test_interface_versions_are_checked() -> None:
    a = np.zeros(4, np.float32)
    assert StridedMemoryView(Iface(a, version=3)).shape == (4,)
    for v in [2, 4, "3"]:
        with pytest.raises(ValueError, match="version"):
            StridedMemoryView(Iface(a, version=v))

    class Cai:
        def __init__(self: Any, **d: Any) -> None:
            self.__cuda_array_interface__ = dict(
                shape=(0,), typestr="<f4", data=(0, False), strides=None, **d
            )

    with pytest.raises(ValueError, match="no version"):
        StridedMemoryView(Cai(), stream_ptr=-1)
    with pytest.raises(ValueError, match="version 9"):
        StridedMemoryView(Cai(version=9), stream_ptr=-1)
    # A zero-size CUDA array stays on a device (the current one; 0 when none is current).
    z = StridedMemoryView(Cai(version=3), stream_ptr=-1)
    assert (z.device_id, z.is_device_accessible, z.shape) == (0, True, (0,))


def test_views_are_shared_between_threads() -> None:
    import threading

    dst = np.zeros((256, 257), np.float64)
    dv = StridedMemoryView(dst, stream_ptr=-1)
    sources = [np.full((257, 256), float(i)).T for i in range(4)]
    errors = []
    start = threading.Barrier(6)

    def copier(i: Any) -> Any:
        try:
            start.wait()
            sv = StridedMemoryView(sources[i], stream_ptr=-1)
            for _ in range(50):
                dv.copy_from(sv)
        except BaseException as e:  # a PanicException is a BaseException
            errors.append(e)

    def reader() -> Any:
        try:
            start.wait()
            for _ in range(2000):
                assert dv.shape == (256, 257) and dv.strides == (257, 1) and dv.ptr == dst.ctypes.data
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=copier, args=(i,)) for i in range(4)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # Copies ran one at a time: the result is one source whole, never a mix.
    assert len(np.unique(dst)) == 1 and dst[0, 0] in (0.0, 1.0, 2.0, 3.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_host_views_leave_through_the_array_interface_without_a_copy(dtype: Any) -> None:
    a = rand((7, 9, 4), dtype, 5)
    for x in (a, a.transpose(2, 0, 1), a[::2, ::-3, 1:3], a[:, 2], a[3]):
        v = StridedMemoryView(x)
        out = np.asarray(v)
        assert out.dtype == x.dtype and out.shape == x.shape and out.strides == x.strides
        assert out.tobytes() == x.tobytes()
        assert np.shares_memory(out, x) and out.__array_interface__["data"][0] == v.ptr
    # C-contiguous: strides None, as the protocol allows.
    assert StridedMemoryView(a).__array_interface__["strides"] is None
    # Read-only stays read-only; writable writes through.
    ro = a.copy()
    ro.setflags(write=False)
    assert not np.asarray(StridedMemoryView(ro)).flags.writeable
    w = np.zeros((3, 4), dtype)
    np.asarray(StridedMemoryView(w))[1, 2] = a.flat[1]
    assert w[1, 2] == a.flat[1] or (np.isnan(w[1, 2]) and np.isnan(a.flat[1]))


def test_views_without_a_dtype_leave_as_their_bytes() -> None:
    rec = np.zeros(5, dtype=[("a", "<i4"), ("b", "<f2")])
    rec["a"] = np.arange(5)
    v = StridedMemoryView(rec)
    assert v.dtype == np.dtype("V6")  # a record through the array interface: V6, as in cuda.core
    assert v.__array_interface__["typestr"] == "|V6"
    out = np.asarray(v)
    assert out.dtype == np.dtype("V6") and out.tobytes() == rec.tobytes()
    # DLPack needs a dtype: BufferError, as cuda.core raises.
    with pytest.raises(BufferError, match="no dtype"):
        v.__dlpack__()


def test_host_views_have_no_cuda_array_interface() -> None:
    v = StridedMemoryView(np.zeros(4, np.float32))
    assert not hasattr(v, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="pageable host memory"):
        v.__cuda_array_interface__


class Producer:
    """A DLPack producer that records the keywords of each `__dlpack__` call and, when
    `legacy`, takes no `max_version` (as producers before DLPack 1.0)."""

    def __init__(self: Any, a: Any, legacy: bool) -> None:
        self.a = a
        self.legacy = legacy
        self.calls: list[dict[str, Any]] = []

    def __dlpack_device__(self: Any) -> Any:
        return self.a.__dlpack_device__()

    def __dlpack__(self: Any, **kw: Any) -> Any:
        self.calls.append(kw)
        if self.legacy and "max_version" in kw:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        return self.a.__dlpack__(**kw)


@pytest.mark.parametrize("legacy", [False, True])
def test_dlpack_producers_get_the_keywords_the_protocol_names(legacy: bool) -> None:
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    p = Producer(a, legacy)
    v = StridedMemoryView.from_dlpack(p, -1)
    assert (v.shape, v.strides, v.ptr) == ((3, 4), (4, 1), a.ctypes.data)
    # A CPU array gets no stream; DLPack 1.x is asked for first, then (a TypeError) not.
    want: list[dict[str, Any]] = [{"max_version": (1, 3)}]
    if legacy:
        want.append({})
    assert p.calls == want
    p.calls.clear()
    assert StridedMemoryView(p).shape == (3, 4)
    assert p.calls == want


def test_views_report_the_same_before_and_after_their_rust_view_is_made() -> None:
    """A DLPack view is checked when made and built on first use: what it reports before
    (from the tensor's checked description) is what it reports after (from the view)."""
    base = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
    cases: list[np.ndarray[Any, Any]] = [
        base,
        base.transpose(2, 0, 1),
        base[::-1, 1:5:2, ::-2],
        base[2:3, 3, 4].reshape(()),
        base[:0],
        np.arange(7, dtype=np.int16)[::3],
        np.zeros(3, dtype=[("a", np.int32), ("b", np.int8)]),
    ]
    attrs = ["ptr", "shape", "strides", "dtype", "size", "device_id", "is_device_accessible", "readonly"]
    for a in cases:
        fresh = StridedMemoryView(a, stream_ptr=-1)
        made = StridedMemoryView(a, stream_ptr=-1)
        layout = made.layout  # makes the view
        for name in attrs:
            assert getattr(fresh, name) == getattr(made, name), (a.shape, a.strides, name)
        assert fresh.__dlpack_device__() == made.__dlpack_device__()
        assert tuple(layout.shape) == tuple(fresh.shape)
        if fresh.strides is not None:
            assert tuple(layout.strides) == tuple(fresh.strides)
        # A view made after its attributes were read copies what they describe.
        out = np.zeros_like(a)
        StridedMemoryView(out, stream_ptr=-1).copy_from(fresh)
        assert out.tobytes() == np.ascontiguousarray(a).tobytes()


def test_each_attribute_read_first_alone_reports_what_all_read_together_do() -> None:
    """Each of ptr, shape, strides and dtype is made on its own first read: read alone
    first, in any order, it is what a view whose attributes were all read reports, and a
    second read returns the same object."""
    base = np.arange(5 * 7, dtype=np.float16).reshape(5, 7)
    arrays: list[np.ndarray[Any, Any]] = [
        base,
        base[::-1, 1::3],
        np.zeros(4, dtype=[("a", np.int32), ("b", np.int8)]),
    ]
    names = ["ptr", "shape", "strides", "dtype"]
    for a in arrays:
        reference = StridedMemoryView(a, stream_ptr=-1)
        want = {n: getattr(reference, n) for n in names}
        for first in names:
            order = [first] + [n for n in names if n != first]
            v = StridedMemoryView(a, stream_ptr=-1)
            for n in order:
                got = getattr(v, n)
                assert got == want[n], (a.shape, a.strides, order, n)
                if got is not None:
                    assert getattr(v, n) is got, (order, n)
