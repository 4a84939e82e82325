//! candle interop (cargo feature `candle`): CPU tensors in place for the length of a
//! call (candle's storage read lock held, so nothing writes them meanwhile), owned copies
//! in, and new tensors out (candle tensors own their storage: a copy).

use super::*;
use crate::memory::HostMemoryResource;
use ::candle_core::{CpuStorage, DType as CandleDType, Device as CandleDevice, Storage, Tensor};

/// stridekit's dtype of a candle dtype, and back; `None` where either side lacks it.
fn to_stridekit(d: CandleDType) -> Option<DType> {
    Some(match d {
        CandleDType::U8 => DType::U8,
        CandleDType::U32 => DType::U32,
        CandleDType::I16 => DType::I16,
        CandleDType::I32 => DType::I32,
        CandleDType::I64 => DType::I64,
        CandleDType::BF16 => DType::BF16,
        CandleDType::F16 => DType::F16,
        CandleDType::F32 => DType::F32,
        CandleDType::F64 => DType::F64,
        _ => return None,
    })
}

fn to_candle(d: DType) -> Option<CandleDType> {
    [
        CandleDType::U8,
        CandleDType::U32,
        CandleDType::I16,
        CandleDType::I32,
        CandleDType::I64,
        CandleDType::BF16,
        CandleDType::F16,
        CandleDType::F32,
        CandleDType::F64,
    ]
    .into_iter()
    .find(|&c| to_stridekit(c) == Some(d))
}

/// The bytes of a CPU storage, if stridekit has its element type.
fn cpu_bytes(s: &CpuStorage) -> Option<&[u8]> {
    Some(match s {
        CpuStorage::U8(v) => v,
        CpuStorage::U32(v) => bytemuck::cast_slice(v),
        CpuStorage::I16(v) => bytemuck::cast_slice(v),
        CpuStorage::I32(v) => bytemuck::cast_slice(v),
        CpuStorage::I64(v) => bytemuck::cast_slice(v),
        CpuStorage::BF16(v) => bytemuck::cast_slice(v),
        CpuStorage::F16(v) => bytemuck::cast_slice(v),
        CpuStorage::F32(v) => bytemuck::cast_slice(v),
        CpuStorage::F64(v) => bytemuck::cast_slice(v),
        _ => return None,
    })
}

fn candle_err(op: &'static str) -> impl FnOnce(::candle_core::Error) -> crate::Error {
    move |e| invalid(op, format!("candle: {e}"))
}

impl StridedMemoryView<'_> {
    /// Runs `f` on a read-only view of a CPU candle tensor, in place (any layout candle
    /// makes: strided, offset, broadcast). candle's storage read lock is held for the
    /// call, so no candle operation writes the tensor meanwhile.
    ///
    /// ```
    /// use candle_core::{Device, Tensor};
    /// use stridekit::StridedMemoryView;
    /// let t = Tensor::arange(0f32, 12., &Device::Cpu).unwrap().reshape((3, 4)).unwrap().t().unwrap();
    /// let firsts = StridedMemoryView::with_candle(&t, |v| {
    ///     assert_eq!(v.layout().strides(), &[1, 4]);
    ///     Ok(v.to_vec::<f32>()?[..3].to_vec())
    /// })?;
    /// assert_eq!(firsts, [0.0, 4.0, 8.0]);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn with_candle<R>(
        tensor: &Tensor,
        f: impl FnOnce(&StridedMemoryView<'_>) -> Result<R>,
    ) -> Result<R> {
        const OP: &str = "StridedMemoryView::with_candle";
        let dtype = to_stridekit(tensor.dtype()).ok_or_else(|| {
            invalid(
                OP,
                format!("candle dtype {:?} has no stridekit dtype", tensor.dtype()),
            )
        })?;
        let (storage, layout) = tensor.storage_and_layout();
        let bytes = match &*storage {
            Storage::Cpu(cpu) => cpu_bytes(cpu),
            #[allow(unreachable_patterns)]
            _ => None,
        }
        .ok_or_else(|| {
            invalid(
                OP,
                "only CPU tensors are viewed (copy device tensors to the CPU first)",
            )
        })?;
        let to_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
        let l = StridedLayout::with_offset(
            &to_i64(layout.dims()),
            &to_i64(layout.stride()),
            dtype.itemsize(),
            layout.start_offset() as i64,
        )?;
        let all = StridedLayout::dense(&[bytes.len() as i64], 1, Order::C)?;
        let view = StridedMemoryView::from_slice_with_layout(bytes, all)?.view(l, Some(dtype))?;
        f(&view)
    }

    /// A new candle CPU tensor holding this host view's elements in row-major order (a
    /// copy: candle tensors own their storage). The view needs a dtype candle has.
    pub fn to_candle(&self) -> Result<Tensor> {
        const OP: &str = "StridedMemoryView::to_candle";
        let dtype = self
            .dtype()
            .ok_or_else(|| invalid(OP, "the view has no dtype; give it one candle has"))?;
        let cd = to_candle(dtype).ok_or_else(|| invalid(OP, format!("candle has no {dtype:?}")))?;
        self.wait_for_host_access(OP)?;
        let bytes = self.operand(OP)?.to_vec_bytes()?;
        let shape: Vec<usize> = self.shape().iter().map(|&e| e as usize).collect();
        Tensor::from_raw_buffer(&bytes, cd, &shape, &CandleDevice::Cpu).map_err(candle_err(OP))
    }
}

impl StridedMemoryViewMut<'static> {
    /// An owned, row-major copy of a CPU candle tensor's elements, writable (64-byte
    /// aligned host memory).
    pub fn from_candle(tensor: &Tensor) -> Result<Self> {
        const OP: &str = "StridedMemoryViewMut::from_candle";
        StridedMemoryView::with_candle(tensor, |v| {
            let layout = StridedLayout::dense(v.shape(), v.layout().itemsize(), Order::C)?;
            let buf = HostMemoryResource::allocate_host(layout.required_size_in_bytes()?)?;
            let mut out = StridedMemoryViewMut::from_owned_buffer(buf, layout, v.dtype())?;
            out.copy_from(v, None)?;
            Ok(out)
        })
        .map_err(|e| match e {
            crate::Error::Invalid { rule, .. } => invalid(OP, rule),
            other => other,
        })
    }
}
