"""On a GPU (skipped elsewhere): PyTorch and CuPy tensors of every dtype they have, sliced
and transposed; copies between them both ways and through pinned host tensors; a producer
still writing when the view is taken; a TMA descriptor used by a CuPy RawKernel; managed
prefetch; views handed on to CuPy, PyTorch, JAX, Numba and cuda.core."""

from typing import Any
import numpy as np
import pytest

import stridekit
from stridekit import StridedLayout, StridedMemoryView
from required import required


def gpu_lib(name: str) -> Any:
    """The array library or consumer `name`: with STRIDEKIT_REQUIRE_GPU_LIBS=1 (the GPU
    machine's runs) a missing one fails instead of skipping, so that a pass there proves
    every consumer ran."""
    return required(name, "STRIDEKIT_REQUIRE_GPU_LIBS")


pytestmark = pytest.mark.skipif(not stridekit.cuda_available, reason="needs a CUDA device")
torch: Any = gpu_lib("torch") if stridekit.cuda_available else None
cp: Any = gpu_lib("cupy") if stridekit.cuda_available else None

TORCH_DTYPES = [n for n in ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16",
                            "float32", "float64", "complex64", "complex128", "uint16", "uint32", "uint64",
                            "float8_e4m3fn", "float8_e5m2", "complex32", "float8_e4m3fnuz",
                            "float8_e5m2fnuz", "float8_e8m0fnu"] if hasattr(torch, n)] if torch else []


def rand_torch(shape: Any, dtype: Any, seed: Any) -> Any:
    g = torch.Generator().manual_seed(seed)
    n = int(np.prod(shape)) * torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(1, 255, (n,), dtype=torch.uint8, generator=g)
    if dtype == torch.bool:
        raw = raw % 2  # only 0 and 1 are bools
    return raw.view(dtype).reshape(shape).cuda()


SAME_SIZE_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"} if torch else {}


def host_bytes(t: Any) -> Any:
    """The bytes of a tensor in logical (row-major) order (read as integers of the same
    size, so no float kernel of the tensor's own type is needed)."""
    if isinstance(t, torch.Tensor):
        size = t.element_size()
        if size in SAME_SIZE_INT:
            t = t.view(getattr(torch, SAME_SIZE_INT[size]))
        return t.contiguous().cpu().view(torch.uint8).numpy().tobytes()
    return cp.asnumpy(cp.ascontiguousarray(t)).tobytes()


@pytest.mark.parametrize("name", TORCH_DTYPES)
def test_torch_tensors_of_every_dtype(name: Any) -> None:
    dtype = getattr(torch, name)
    t = rand_torch((8, 6, 4), dtype, 1)
    # Dense, transposed, sliced with steps, a dropped axis, and broadcast (stride 0).
    for x in (t, t.transpose(0, 2), t[1:7:2, ::2], t[:, 3], t[:, :1].expand(8, 6, 4)):
        v = StridedMemoryView(x, stream_ptr=torch.cuda.current_stream())
        assert v.ptr == x.data_ptr() and v.shape == tuple(x.shape) and v.strides == tuple(x.stride())
        # Every PyTorch dtype has a name here (ml_dtypes' where NumPy has none).
        assert v.dtype is not None and v.dtype.itemsize == x.element_size(), (name, v.dtype)
        if name == "complex32":
            assert v.dtype.names == ("real", "imag")
        elif name.startswith(("float8", "bfloat")):
            assert v.dtype.name == name, (name, v.dtype)
        assert (v.device_id, v.is_device_accessible, v.readonly) == (0, True, False)
        out = torch.empty(x.shape, dtype=dtype, device="cuda")
        out.view(torch.uint8).fill_(0xA5)  # poison
        StridedMemoryView(out, -1).copy_from(v, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        assert host_bytes(out) == host_bytes(x), name


def test_torch_and_cupy_copy_both_ways_and_through_pinned_tensors() -> None:
    src = rand_torch((129, 67), torch.float32, 2)
    dst = cp.full((67, 129), -1, dtype=cp.float32).T  # a transposed CuPy destination
    StridedMemoryView(dst, -1).copy_from(StridedMemoryView(src, -1))
    cp.cuda.Device().synchronize()
    assert host_bytes(dst) == host_bytes(src)
    back = torch.full((129, 67), -2.0, device="cuda").t().contiguous().t()  # F order
    StridedMemoryView(back, -1).copy_from(StridedMemoryView(dst, -1))
    torch.cuda.synchronize()
    assert host_bytes(back) == host_bytes(src)
    pinned = torch.empty((67, 129), dtype=torch.float32, pin_memory=True).t()
    pinned.fill_(3.0)
    pv = StridedMemoryView(pinned, -1)
    assert pv.is_device_accessible
    pv.copy_from(StridedMemoryView(src, -1))
    assert host_bytes(pinned) == host_bytes(src)
    again = torch.zeros((129, 134), device="cuda")[:, 1::2]
    StridedMemoryView(again, -1).copy_from(pv)
    torch.cuda.synchronize()
    assert host_bytes(again) == host_bytes(src)


def test_a_producer_still_writing_is_waited_for() -> None:
    n = 1 << 22
    for how in ("dlpack", "cai"):
        x = torch.zeros(n, device="cuda")
        producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
        out = torch.full((n,), -1.0, device="cuda")
        with torch.cuda.stream(producer):
            torch.cuda._sleep(200_000_000)  # ~0.1 s of spinning, then the writes
            x.fill_(7.0)
            if how == "dlpack":
                v = StridedMemoryView(x, stream_ptr=consumer.cuda_stream)
            else:
                class CAI:
                    __cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (x.data_ptr(), False),
                                                "strides": None, "version": 3, "stream": producer.cuda_stream}
                v = StridedMemoryView(CAI(), stream_ptr=consumer.cuda_stream)
        StridedMemoryView(out, -1).copy_from(v, stream=consumer)
        consumer.synchronize()
        assert bool((out == 7.0).all()), how
        torch.cuda.synchronize()


def test_views_export_to_torch_and_cupy_without_a_copy() -> None:
    mr = stridekit.DeviceMemoryResource(0)
    buf = mr.allocate(64 * 48 * 4)
    v = StridedMemoryView.from_buffer(buf, StridedLayout.dense((64, 48), 4), dtype=np.float32)
    t = torch.from_dlpack(v)
    assert t.data_ptr() == buf.ptr and t.shape == (64, 48) and t.device.type == "cuda"
    t.copy_(torch.arange(64 * 48, dtype=torch.float32, device="cuda").reshape(64, 48))
    c = cp.from_dlpack(v.view(v.layout.permuted((1, 0))))
    assert c.data.ptr == buf.ptr and c.shape == (48, 64)
    torch.cuda.synchronize()
    assert float(c[5, 3]) == 3 * 48 + 5
    ro = StridedMemoryView.from_buffer(buf, StridedLayout.dense((64 * 48,), 4), dtype=np.float32, is_readonly=True)
    assert cp.from_dlpack(ro).shape == (64 * 48,)


TMA_KERNEL = r"""
struct __align__(64) TensorMap { unsigned long long opaque[16]; };
extern "C" __global__ void tile(const __grid_constant__ TensorMap tmap, float* out, int x, int y) {
    __shared__ __align__(128) float smem[32 * 64];
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar), dst = (unsigned)__cvta_generic_to_shared(smem);
    unsigned long long map = reinterpret_cast<unsigned long long>(&tmap);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(32 * 64 * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                     :: "r"(dst), "l"(map), "r"(b), "r"(x), "r"(y) : "memory");
    }
    __syncthreads();
    unsigned ok = 0;
    while (!ok) {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(ok) : "r"(b) : "memory");
    }
    for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x) out[i] = smem[i];
}
"""


def test_a_tma_descriptor_feeds_a_cupy_kernel() -> None:
    if cp.cuda.Device().compute_capability < "90":
        pytest.skip("TMA needs compute capability 9.0")
    a = cp.arange(256 * 128, dtype=cp.float32).reshape(256, 128)
    desc = StridedMemoryView(a, -1).as_tensor_map([32, 64])
    assert len(bytes(desc)) == 128 and desc.address == a.data.ptr
    arg = np.frombuffer(bytes(desc), dtype=np.dtype([("opaque", np.uint64, (16,))]))[0]
    out = cp.full(32 * 64, -1, dtype=cp.float32)
    k = cp.RawKernel(TMA_KERNEL, "tile", options=("-arch=sm_90a",))
    k((1,), (128,), (arg, out, np.int32(64), np.int32(96)))  # innermost coordinate first
    want = a[96:128, 64:128].ravel()
    assert bool((out == want).all())
    with pytest.raises(ValueError, match="permuted by \\[1, 0\\]"):
        StridedMemoryView(a.T, -1).as_tensor_map([32, 32])


def test_managed_prefetch_and_a_copy_through_managed_memory() -> None:
    mr = stridekit.ManagedMemoryResource(device_id=0)
    bufs = [mr.allocate(1 << 20) for _ in range(3)]
    s = torch.cuda.Stream()
    stridekit.prefetch(bufs[0], 0, stream=s)
    stridekit.prefetch(bufs, [0, "host", 0], stream=s.cuda_stream)
    stridekit.prefetch(bufs[1:], "host")
    s.synchronize()
    v = StridedMemoryView.from_buffer(bufs[0], (512, 512), dtype=np.float32)
    src = rand_torch((512, 512), torch.float32, 9)
    v.copy_from(StridedMemoryView(src.t(), -1), stream=s)
    s.synchronize()
    host = np.full((512, 512), -1, np.float32)
    StridedMemoryView(host).copy_from(v)
    assert host.tobytes() == host_bytes(src.t())
    with pytest.raises(ValueError):
        stridekit.prefetch(bufs[0], "moon")


def test_replace_address_points_a_descriptor_at_another_tensor() -> None:
    a = cp.arange(256 * 128, dtype=cp.float32).reshape(256, 128)
    b = cp.arange(256 * 128, dtype=cp.float32).reshape(256, 128) * -1
    desc = StridedMemoryView(a, -1).as_tensor_map([32, 64])
    before = bytes(desc)
    desc.replace_address(StridedMemoryView(b, -1))
    assert desc.address == b.data.ptr and bytes(desc) != before
    with pytest.raises(ValueError, match="must match"):
        desc.replace_address(StridedMemoryView(cp.zeros((128, 256), cp.float32), -1))
    arg = np.frombuffer(bytes(desc), dtype=np.dtype([("opaque", np.uint64, (16,))]))[0]
    out = cp.full(32 * 64, 0, dtype=cp.float32)
    cp.RawKernel(TMA_KERNEL, "tile", options=("-arch=sm_90a",))((1,), (128,), (arg, out, np.int32(0), np.int32(0)))
    assert bool((out == b[0:32, 0:64].ravel()).all())


def test_managed_advice_and_discard_through_python() -> None:
    mr = stridekit.ManagedMemoryResource(device_id=0)
    buf = mr.allocate(1 << 20)
    buf.read_mostly = True
    assert buf.read_mostly
    buf.read_mostly = False
    buf.preferred_location = 0
    assert buf.preferred_location == 0
    buf.preferred_location = None
    assert buf.preferred_location is None
    buf.accessed_by = [0, stridekit.Host()]
    assert buf.accessed_by == frozenset({0, "host"})
    buf.accessed_by = []
    assert buf.accessed_by == frozenset()
    s = torch.cuda.Stream()
    buf.prefetch(0, stream=s)
    buf.discard_prefetch(0, stream=s)
    buf.discard(stream=s)
    other = mr.allocate(1 << 16)
    stridekit.discard_prefetch([buf, other], [0, "host"], stream=s)
    s.synchronize()
    with pytest.raises(ValueError):
        stridekit.DeviceMemoryResource(0).allocate(64).read_mostly = True


def test_jax_arrays_when_present() -> None:
    jax = gpu_lib("jax")
    jnp = jax.numpy
    x = jnp.arange(24, dtype=jnp.float32).reshape(4, 6)
    x.block_until_ready()
    v = StridedMemoryView(x, -1)
    assert v.shape == (4, 6) and v.device_id >= 0
    out = torch.zeros((6, 4), device="cuda").t()
    StridedMemoryView(out, -1).copy_from(v)
    torch.cuda.synchronize()
    assert out.cpu().numpy().tobytes() == np.asarray(x).tobytes()


def rand_cupy(shape: Any, dtype: Any, seed: Any) -> Any:
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.random.default_rng(seed).integers(1, 255, n, dtype=np.uint8)
    if np.dtype(dtype) == np.bool_:
        raw = raw % 2  # only 0 and 1 are bools
    return cp.asarray(raw).view(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                   "uint64", "float16", "float32", "float64", "complex64", "complex128"])
def test_cupy_negative_zero_and_broadcast_strides_both_protocols(dtype: Any) -> None:
    a = rand_cupy((6, 8), dtype, 3)
    cases = [a[::-1], a[:, ::-2], a.T[::-1, 1:], a[2:5, 7:0:-3], cp.broadcast_to(a[1], (6, 8)), a[::-1][0]]
    for x in cases:
        isz = x.itemsize

        class CAI:
            __cuda_array_interface__ = x.__cuda_array_interface__

        for obj in (x, CAI()):
            v = StridedMemoryView(obj, stream_ptr=-1)
            assert v.shape == x.shape and v.layout.strides == tuple(s // isz for s in x.strides), (dtype, x.strides)
            assert (v.device_id, v.is_device_accessible) == (0, True)
            out = cp.empty(x.shape, dtype)
            out.view(cp.uint8).fill(0xA5)  # poison
            StridedMemoryView(out, -1).copy_from(v)
            cp.cuda.Device().synchronize()
            assert host_bytes(out) == host_bytes(x), (dtype, x.strides)
        # And back out: CuPy reads a view of a flipped array through DLPack.
        back = cp.from_dlpack(StridedMemoryView(x, stream_ptr=-1))
        assert host_bytes(back) == host_bytes(x)


def test_zero_size_device_arrays_keep_their_device() -> None:
    for z in (cp.zeros((0, 4), cp.float32), torch.zeros((3, 0), device="cuda")):
        class CAI:
            __cuda_array_interface__ = z.__cuda_array_interface__

        for obj in (z, CAI()):
            v = StridedMemoryView(obj, stream_ptr=-1)
            assert (v.device_id, v.is_device_accessible) == (0, True), type(obj)


JAX_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "float16", "bfloat16", "float32",
              "complex64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e4m3b11fnuz"]


@pytest.mark.parametrize("name", JAX_DTYPES)
def test_jax_arrays_of_every_dtype_come_in_named_and_byte_exact(name: str) -> None:
    jax = gpu_lib("jax")
    jnp = jax.numpy
    if not hasattr(jnp, name):
        pytest.skip(f"this JAX has no {name}")
    dt = np.dtype(getattr(jnp, name))
    raw = np.random.default_rng(11).integers(1, 255, 7 * 5 * dt.itemsize, dtype=np.uint8)
    if dt == np.bool_:
        raw = raw % 2
    host = raw.view(dt).reshape(7, 5)
    x = jax.device_put(host, jax.devices("gpu")[0])
    x.block_until_ready()
    for obj in (x, x[1:6]):
        v = StridedMemoryView(obj, -1)
        assert v.dtype == dt and v.shape == obj.shape and v.device_id >= 0, (name, v.dtype)
        out = np.full(obj.shape, 0x5A if dt.itemsize == 1 else 0x5A5A, f"u{dt.itemsize}").view(dt)
        StridedMemoryView(out).copy_from(v)
        assert out.tobytes() == np.asarray(obj).tobytes(), name


def test_zero_d_arrays_have_no_strides() -> None:
    for x in (torch.tensor(3.5, device="cuda"), cp.asarray(np.float32(2.0))):
        v = StridedMemoryView(x, -1)
        assert (v.shape, v.strides, v.size) == ((), None, 1)
        out = torch.zeros((), device="cuda")
        StridedMemoryView(out, -1).copy_from(v)
        torch.cuda.synchronize()
        assert out.item() in (3.5, 2.0)


def test_cuda_core_snippets_give_the_same_results_on_both() -> None:
    core = gpu_lib("cuda.core")
    import sys as _sys
    import os as _os

    _sys.path.insert(0, _os.path.dirname(__file__))
    import snippets

    cu = importlib_names(core)
    core.Device(0).set_current()  # cuda.core reads even host arrays in a current context
    for mine, theirs in ((snippets.cpu(stridekit), snippets.cpu(cu)),
                         (snippets.gpu(stridekit, core), snippets.gpu(cu, core))):
        for key in mine:
            if key in DIFFERENT_ON_PURPOSE:
                print(f"{key}: stridekit {mine[key]}, cuda.core {theirs[key]} ({DIFFERENT_ON_PURPOSE[key]})")
                continue
            assert mine[key] == theirs[key], (key, mine[key], theirs[key])


#: Snippet results that differ from cuda.core 1.2 on purpose (README: "Differences from
#: cuda.core"); everything else must match.
DIFFERENT_ON_PURPOSE = {
    "array_interface": "host memory belongs to no device: device_id -1, as cuda.core documents",
}


def importlib_names(core: Any) -> Any:
    """cuda.core's names, gathered as ``from cuda.core import ...`` would give them."""
    from types import SimpleNamespace
    import cuda.core.utils as cu_utils

    try:
        from cuda.core._layout import _StridedLayout as layout
    except ImportError:  # pragma: no cover
        layout = None
    import cuda.core._tensor_map as cu_tma  # cuda.core 1.2 exports its TMA enums nowhere else

    names = {n: getattr(core, n) for n in dir(core) if not n.startswith("_")}
    names.update({n: getattr(cu_utils, n) for n in dir(cu_utils) if not n.startswith("_")})
    names.update({n: getattr(cu_tma, n) for n in dir(cu_tma) if n.startswith("TensorMap")})
    names["StridedLayout"] = layout
    return SimpleNamespace(**names)


def test_a_buffer_outlives_the_stream_object_it_was_allocated_on() -> None:
    # The stream object dies (CuPy and cuda.core destroy the CUDA stream with it) before
    # the buffer, which is released on that stream: the buffer keeps the stream object
    # alive until then. Run apart: the failure this guards against is a segfault.
    import subprocess
    import sys as _sys

    code = """
import gc
import cupy as cp
import stridekit
from stridekit import StridedMemoryView

for _ in range(20):
    s = cp.cuda.Stream(non_blocking=True)
    buf = stridekit.DeviceMemoryResource(0).allocate(1 << 22, stream=s)
    v = StridedMemoryView.from_buffer(buf, (1 << 20,), dtype="float32")
    v.copy_from(StridedMemoryView(cp.ones(1 << 20, cp.float32), -1), stream=s)
    del s
    gc.collect()
    del buf, v
    gc.collect()
cp.cuda.Device().synchronize()
print("ok")
"""
    r = subprocess.run([_sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr[-2000:])


def test_views_leave_for_jax_through_dlpack() -> None:
    jax = gpu_lib("jax")
    src = rand_torch((7, 5), torch.float32, 13)
    for x in (src, src.t()):
        got = jax.numpy.from_dlpack(StridedMemoryView(x, -1))
        assert np.asarray(got).tobytes() == x.cpu().numpy().tobytes()


def test_two_reader_threads_on_two_streams_and_a_writer_lose_no_reader() -> None:
    """One view of a PyTorch tensor read by two threads on two streams at once (one
    stream held back by a sleeping kernel), then written through the same view on a
    third stream: the write waits for both readers, so both destinations hold the
    tensor's bytes as they were."""
    import threading

    n = 1 << 20
    held, other, owner = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    for i in range(10):
        src = rand_torch((1024, n // 1024), torch.int32, 100 + i)
        want = host_bytes(src.t())
        torch.cuda.synchronize()
        v = StridedMemoryView(src, stream_ptr=-1)
        fill = StridedMemoryView(torch.full_like(src, -1), stream_ptr=-1)
        outs = [torch.zeros((n // 1024, 1024), dtype=torch.int32, device="cuda") for _ in range(2)]
        torch.cuda.synchronize()
        with torch.cuda.stream(held):
            torch.cuda._sleep(200_000_000)  # about 0.1 s: the held-back read is still queued
        gate = threading.Barrier(2)

        def read(out: Any, stream: Any) -> None:
            dst = StridedMemoryView(out, stream_ptr=-1)
            gate.wait()
            # A transposed view of the same view: it shares the view's record.
            dst.copy_from(v.view(StridedLayout.dense(v.shape, 4).permuted((1, 0))), stream=stream.cuda_stream)

        threads = [threading.Thread(target=read, args=(o, s)) for o, s in zip(outs, (held, other))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        v.copy_from(fill, stream=owner.cuda_stream)
        torch.cuda.synchronize()
        for name, out in zip(("held-back", "other"), outs):
            assert host_bytes(out) == want, f"iteration {i}: the {name} reader's destination changed"



def test_device_views_leave_through_the_cuda_array_interface_without_a_copy() -> None:
    t = rand_torch((6, 8, 5), torch.float32, 9)
    for x in (t, t.transpose(0, 2), t[::2, 1:7:3], t[:, 3]):
        v = StridedMemoryView(x, stream_ptr=-1)
        cai = v.__cuda_array_interface__
        assert cai["version"] == 3 and cai["stream"] == 1 and cai["data"] == (x.data_ptr(), False)
        c = cp.asarray(v)
        assert c.data.ptr == x.data_ptr() and c.shape == tuple(x.shape)
        assert c.strides == tuple(s * 4 for s in x.stride())
        assert host_bytes(c) == host_bytes(x)
        back = torch.as_tensor(v, device="cuda")
        assert back.data_ptr() == x.data_ptr() and back.stride() == x.stride()
    # Writes through the consumer land in the producer's memory.
    v = StridedMemoryView(t, stream_ptr=-1)
    cp.asarray(v)[0, 0, 0] = 7.0
    assert float(t[0, 0, 0]) == 7.0
    assert not hasattr(v, "__array_interface__")


def test_numba_takes_device_views_without_a_copy_and_as_kernel_arguments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`numba.cuda.as_cuda_array` of a view aliases the producer's memory (same address,
    shape and byte strides, same bytes), and a view passed straight to a Numba kernel is
    written in place: the elements it covers change, the others do not."""
    nb_cuda: Any = gpu_lib("numba.cuda")
    # numba-cuda (0.30 and earlier) registers an overload of `numpy.row_stack` when its
    # kernel compiler first loads, an alias of `numpy.vstack` that newer NumPy removed;
    # without it no Numba kernel compiles at all. The alias is put back for this test only.
    if not hasattr(np, "row_stack"):
        monkeypatch.setattr(np, "row_stack", np.vstack, raising=False)
    t = rand_torch((64, 48), torch.int32, 51)
    for x in (t, t.t(), t[::3, 5:41:2], t[:, 7]):
        v = StridedMemoryView(x, stream_ptr=-1)
        a = nb_cuda.as_cuda_array(v)
        assert a.__cuda_array_interface__["data"][0] == x.data_ptr()
        assert a.shape == tuple(x.shape) and a.strides == tuple(s * 4 for s in x.stride())
        assert a.copy_to_host().tobytes() == x.cpu().numpy().tobytes()

    @nb_cuda.jit  # type: ignore[untyped-decorator]
    def add_one(m: Any) -> None:
        i, j = nb_cuda.grid(2)
        if i < m.shape[0] and j < m.shape[1]:
            m[i, j] += 1

    want = t.cpu()
    want[::2, 1::3] += 1  # int32 wraps alike on both sides
    add_one[(4, 2), (16, 16)](StridedMemoryView(t[::2, 1::3], stream_ptr=-1))
    nb_cuda.synchronize()
    assert host_bytes(t) == host_bytes(want.cuda())


def test_a_cuda_array_interface_consumer_sees_copies_queued_on_another_stream() -> None:
    """A stridekit copy into the view, queued behind a sleeping kernel on its own stream,
    is done before a consumer of the view's CUDA Array Interface reads (the interface's
    stream waits for it)."""
    src = rand_torch((1024, 1024), torch.int32, 21)
    dst = torch.zeros((1024, 1024), dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)
    v = StridedMemoryView(dst, stream_ptr=-1)
    v.copy_from(StridedMemoryView(src.t(), stream_ptr=-1), stream=side.cuda_stream)
    with cp.cuda.Stream(null=True):
        got = cp.asarray(v).copy()  # on the legacy default stream, ordered after `stream`
    assert host_bytes(got) == host_bytes(src.t())


def test_a_release_that_waits_for_gpu_work_lets_other_threads_run() -> None:
    """The last view of a PyTorch tensor goes away while a copy into it is still queued
    (behind a sleeping kernel): its release waits for the copy without the GIL, so a
    second thread keeps running meanwhile."""
    import threading
    import time

    src = rand_torch((2048, 2048), torch.int32, 31)
    dst = torch.zeros_like(src)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    v_src = StridedMemoryView(src.t(), stream_ptr=-1)
    ticks = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1

    th = threading.Thread(target=spin)
    th.start()
    time.sleep(0.05)
    rate = ticks[0] / 0.05  # the spinning thread's pace alone (roughly)
    with torch.cuda.stream(side):
        torch.cuda._sleep(400_000_000)  # about 0.2 s
    before, t0 = ticks[0], time.perf_counter()
    # The temporary destination view is released at the end of this statement.
    StridedMemoryView(dst, stream_ptr=-1).copy_from(v_src, stream=side.cuda_stream)
    waited, during = time.perf_counter() - t0, ticks[0] - before
    stop.set()
    th.join()
    assert waited > 0.05, f"the release did not wait for the queued copy ({waited:.3f} s)"
    assert during > 0.2 * rate * waited, f"the other thread ran {during} ticks in {waited:.3f} s (alone: {rate:.0f}/s)"
    assert host_bytes(dst) == host_bytes(src.t())


def test_stream_zero_is_the_legacy_default_stream() -> None:
    """Code written for cuda.core passes stream_ptr=0 (CUDA's NULL stream): every
    constructor takes it as the legacy default stream."""
    t = rand_torch((64, 32), torch.float32, 41)
    c = cp.asarray(t)
    for v in (StridedMemoryView(t, stream_ptr=0), StridedMemoryView.from_dlpack(c, stream_ptr=0),
              StridedMemoryView.from_cuda_array_interface(c, stream_ptr=0),
              StridedMemoryView.from_any_interface(t, stream_ptr=0)):
        assert v.ptr == t.data_ptr() and v.shape == (64, 32)
    out = torch.zeros_like(t)
    StridedMemoryView(out, stream_ptr=0).copy_from(StridedMemoryView(t, stream_ptr=0), stream=0)
    torch.cuda.synchronize()
    assert host_bytes(out) == host_bytes(t)
