"""The DLPack C exchange API of StridedMemoryView, called as a C consumer would (ctypes).

Host views need no GPU; the PyTorch test at the end needs one.
"""
import ctypes

import numpy as np
import pytest

import stridekit
from stridekit import StridedMemoryView


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
# The functions that take Python objects run with the GIL held: PYFUNCTYPE.
ALLOCATOR = ctypes.PYFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)), ctypes.c_void_p, SET_ERROR
)
MANAGED_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
MANAGED_TO = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned), ctypes.POINTER(ctypes.py_object))
DLTENSOR_FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
CURRENT_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class API(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("prev_api", ctypes.c_void_p),
        ("allocator", ALLOCATOR),
        ("managed_from", MANAGED_FROM),
        ("managed_to", MANAGED_TO),
        ("dltensor_from", DLTENSOR_FROM),
        ("current_work_stream", CURRENT_STREAM),
    ]


def api() -> API:
    cap = type(StridedMemoryView(np.zeros(1, np.float32), -1)).__dlpack_c_exchange_api__
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return API.from_address(get(cap, b"dlpack_exchange_api"))


def test_the_table_is_a_class_attribute_under_both_names() -> None:
    assert StridedMemoryView.__dlpack_c_exchange_api__ is not None
    assert StridedMemoryView.__c_dlpack_exchange_api__ is StridedMemoryView.__dlpack_c_exchange_api__
    a = api()
    assert (a.major, a.minor) == (1, 3)
    assert a.prev_api is None


def test_dltensor_of_a_host_view() -> None:
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)[:, ::2, 1:]
    v = StridedMemoryView(x, -1)
    t = DLTensor()
    assert api().dltensor_from(v, ctypes.byref(t)) == 0
    assert t.data == v.ptr
    assert (t.device.device_type, t.device.device_id) == (1, 0)  # kDLCPU
    assert t.ndim == 3
    assert [t.shape[i] for i in range(3)] == list(x.shape)
    assert [t.strides[i] for i in range(3)] == [s // 4 for s in x.strides]
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 32, 1)  # kDLFloat
    assert t.byte_offset == 0


def test_an_owning_tensor_round_trips_into_a_view() -> None:
    x = np.arange(12, dtype=np.int16).reshape(3, 4).T
    v = StridedMemoryView(x, -1)
    a = api()
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    assert a.managed_from(v, ctypes.byref(out)) == 0
    assert (out.contents.major, out.contents.dl_tensor.data) == (1, v.ptr)
    back = ctypes.py_object()
    assert a.managed_to(out, ctypes.byref(back)) == 0  # takes the tensor over
    w = back.value
    assert isinstance(w, StridedMemoryView)
    assert (w.ptr, w.shape, w.strides, w.dtype) == (v.ptr, v.shape, v.strides, v.dtype)
    assert np.from_dlpack(w).tolist() == x.tolist()


def test_a_view_without_a_dtype_is_a_buffer_error() -> None:
    rec = np.zeros(5, dtype=[("a", "<i4"), ("b", "<f2")])
    untyped = StridedMemoryView(rec)  # a record: opaque V6 elements, no DLPack type
    assert untyped.dtype == np.dtype("V6")
    with pytest.raises(BufferError):
        api().dltensor_from(untyped, ctypes.byref(DLTensor()))


def test_other_objects_are_refused() -> None:
    with pytest.raises(BufferError):
        api().dltensor_from(np.zeros(3), ctypes.byref(DLTensor()))


# Producer tables must outlive every view taken through them (the exchange API's
# contract: a table is static); the tests' tables live as long as the module.
_PRODUCERS: list[tuple[object, ...]] = []
_CAPSULE_NAME = b"dlpack_exchange_api"


def _producer(attr: str, x: np.ndarray) -> tuple[type, list[object]]:
    """A type that offers `x` only through an exchange table under `attr` (its
    `__dlpack__` raises), and the list its fill function appends to when called."""
    calls: list[object] = []
    shape = (ctypes.c_int64 * x.ndim)(*x.shape)
    strides = (ctypes.c_int64 * x.ndim)(*(s // x.itemsize for s in x.strides))

    @DLTENSOR_FROM
    def fill(obj, out):  # type: ignore[no-untyped-def]
        calls.append(obj)
        t = out.contents
        t.data = x.ctypes.data
        t.device = DLDevice(1, 0)  # kDLCPU
        t.ndim = x.ndim
        t.dtype = DLDataType(0, 8 * x.itemsize, 1)  # kDLInt
        t.shape = shape
        t.strides = strides
        t.byte_offset = 0
        return 0

    table = API(1, 3, None, ALLOCATOR(), MANAGED_FROM(), MANAGED_TO(), fill, CURRENT_STREAM())
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = new(ctypes.addressof(table), _CAPSULE_NAME, None)

    def no_protocol(self, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the Python protocol was used")

    cls = type("Producer", (), {attr: capsule, "__dlpack__": no_protocol})
    _PRODUCERS.append((x, shape, strides, fill, table, capsule, cls))
    return cls, calls


@pytest.mark.parametrize("attr", ["__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"])
def test_a_producer_table_under_either_name_is_read_without_the_python_protocol(attr: str) -> None:
    x = np.arange(24, dtype=np.int32).reshape(4, 6)[::2, 1::2]
    cls, calls = _producer(attr, x)
    obj = cls()
    v = StridedMemoryView(obj, -1)
    assert len(calls) == 1 and calls[0] is obj
    assert (v.ptr, v.shape, v.strides, v.dtype) == (x.ctypes.data, (2, 3), (12, 2), np.dtype(np.int32))
    assert np.from_dlpack(v).tolist() == x.tolist()
    w = StridedMemoryView.from_dlpack(obj, -1)
    assert len(calls) == 2 and w.ptr == v.ptr


def test_current_work_stream_is_the_legacy_default_stream() -> None:
    s = ctypes.c_void_p(12345)
    assert api().current_work_stream(2, 0, ctypes.byref(s)) == 0
    assert s.value is None


def test_the_allocator_makes_host_tensors_and_reports_errors() -> None:
    shape = (ctypes.c_int64 * 2)(3, 4)
    proto = DLTensor(None, DLDevice(1, 0), 2, DLDataType(2, 32, 1), shape, None, 0)
    errors: "list[tuple[str, str]]" = []

    @SET_ERROR
    def set_error(ctx, kind, msg):  # type: ignore[no-untyped-def]
        errors.append((kind.decode(), msg.decode()))

    a = api()
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    assert a.allocator(ctypes.byref(proto), ctypes.byref(out), None, set_error) == 0
    back = ctypes.py_object()
    assert a.managed_to(out, ctypes.byref(back)) == 0
    assert back.value.shape == (3, 4) and back.value.dtype == np.float32
    proto.device = DLDevice(4, 0)  # OpenCL
    assert a.allocator(ctypes.byref(proto), ctypes.byref(out), None, set_error) == -1
    assert errors and errors[-1][0] == "BufferError"


@pytest.mark.skipif(not stridekit.cuda_available, reason="needs a CUDA device")
def test_torch_takes_a_device_view_without_a_copy() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    x = torch.randn(64, 48, device="cuda")
    v = StridedMemoryView(x.t(), -1)
    t = torch.from_dlpack(v)
    assert t.data_ptr() == x.data_ptr()
    assert t.shape == (48, 64) and t.stride() == (1, 48)
    assert torch.equal(t, x.t())
    # The allocator on the device, and the round trip through a view.
    a = api()
    shape = (ctypes.c_int64 * 1)(1000)
    proto = DLTensor(None, DLDevice(2, 0), 1, DLDataType(2, 32, 1), shape, None, 0)
    out = ctypes.POINTER(DLManagedTensorVersioned)()
    assert a.allocator(ctypes.byref(proto), ctypes.byref(out), None, SET_ERROR()) == 0
    back = ctypes.py_object()
    assert a.managed_to(out, ctypes.byref(back)) == 0
    assert back.value.device_id == 0 and back.value.shape == (1000,)
