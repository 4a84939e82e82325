"""Usage written from cuda.core's documentation and stubs, run against a namespace ``m``
that is either stridekit or cuda.core: the code is the same, only the import differs.
Each snippet returns plain values, so the two implementations can be compared."""

from typing import Any, Dict

import numpy as np


def cpu(m: Any) -> Dict[str, Any]:
    """Host arrays and layouts (no GPU needed for stridekit)."""
    out: Dict[str, Any] = {}
    SMV = m.StridedMemoryView
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    v = SMV.from_array_interface(a)
    out["array_interface"] = (v.ptr == a.ctypes.data, v.shape, v.strides, str(v.dtype), v.size,
                              v.device_id, v.is_device_accessible, v.readonly)
    c = SMV.from_array_interface(np.arange(6, dtype=np.int64).reshape(2, 3))
    out["contiguous_array_interface"] = (c.shape, c.strides)
    v = SMV.from_dlpack(a, stream_ptr=-1)
    out["dlpack"] = (v.ptr == a.ctypes.data, v.shape, v.strides, str(v.dtype))
    v = SMV.from_any_interface(a, stream_ptr=-1)
    out["any"] = (v.shape, v.strides, v.exporting_obj is a)
    z = SMV.from_array_interface(np.array(3.0))
    out["zero_d"] = (z.shape, z.strides, z.size)
    z = SMV.from_dlpack(np.array(3.0), stream_ptr=-1)
    out["zero_d_dlpack"] = (z.shape, z.strides, z.size)
    ro = np.arange(6, dtype=np.int16)
    ro.flags.writeable = False
    out["readonly"] = SMV.from_array_interface(ro).readonly
    w = v.view(dtype=np.int32)
    out["view_dtype"] = (str(w.dtype), w.shape, w.strides)

    L = m.StridedLayout
    lay = L.dense((2, 3, 4), 4, stride_order="F")
    out["layout"] = (
        lay.strides,
        lay.permuted(axis_order=(2, 0, 1)).strides,
        lay.flattened(start_axis=1, end_axis=2).shape,
        lay.unsqueezed(axis=0).shape,
        lay.sliced((slice(None), slice(None, None, -1))).strides,
        L.dense_like(lay, stride_order="C").strides,
        lay.to_dense(stride_order="K").strides,
        lay.reshaped((6, 4)).shape if lay.is_contiguous_c else "not C",
        lay.volume,
        lay.required_size_in_bytes(),
    )

    @m.args_viewable_as_strided_memory((1,))  # type: ignore[untyped-decorator]
    def my_func(arg0: Any, arg1: Any) -> Any:
        view = arg1.view(-1)
        assert isinstance(view, SMV)
        return (arg0, view.shape)

    out["decorator"] = my_func("x", np.zeros((2, 5), np.uint8))
    return out


def gpu(m: Any, core: Any) -> Dict[str, Any]:
    """Buffers, memory resources, descriptors and managed memory, on device 0; ``core``
    is cuda.core (its Device and streams are what cuda.core's users hold)."""
    out: Dict[str, Any] = {}
    dev = core.Device(0)
    dev.set_current()
    s = dev.create_stream()
    mr = m.DeviceMemoryResource(dev)
    out["isinstance"] = (isinstance(mr, m.MemoryResource), mr.is_device_accessible)
    buf = mr.allocate(64 * 48 * 4, stream=s)
    v = m.StridedMemoryView.from_buffer(buf, (64, 48), dtype=np.dtype(np.float32))
    out["from_buffer"] = (v.shape, v.strides, str(v.dtype), v.ptr == int(buf.handle), v.device_id)
    t = m.StridedMemoryView.from_buffer(buf, (48, 64), (1, 48), itemsize=4)
    out["from_buffer_strides"] = (t.shape, t.strides, t.dtype is None)
    desc = v.as_tensor_map(
        box_dim=(32, 32),
        swizzle=m.TensorMapSwizzle.SWIZZLE_128B,
        oob_fill=m.TensorMapOOBFill.NAN_REQUEST_ZERO_FMA,
    )
    out["tensor_map"] = (len(bytes(desc)) if hasattr(desc, "__bytes__") else 128, desc.device.device_id)
    opts = m.TensorMapDescriptorOptions(box_dim=(16, 16), data_type=np.float32,
                                        l2_promotion=m.TensorMapL2Promotion.L2_128B)
    out["tensor_map_options"] = v.as_tensor_map(options=opts).device.device_id
    mmr = m.ManagedMemoryResource()
    out["managed_isinstance"] = isinstance(mmr, m.MemoryResource)
    bufs = [mmr.allocate(1 << 20, stream=s) for _ in range(2)]
    m.prefetch_batch(s, bufs, dev)
    m.discard_prefetch_batch(s, bufs, [dev, dev])
    m.discard_batch(s, bufs)
    s.sync()
    wrapped = m.Buffer.from_handle(int(buf.handle), 256, owner=buf)
    out["from_handle"] = (wrapped.size, int(wrapped.handle) == int(buf.handle))
    return out
