//! Copy entry points of views: `copy_from` / `copy_to` on a stream, ordered as a stream
//! value says, or unordered. The engine (`crate::copy`) does the work on the views'
//! operands.

use super::access::Access;
use super::{StridedMemoryViewBase, StridedMemoryViewMut};
use crate::copy::{copy_into, CopyOptions};
use crate::error::Result;
use crate::memory::MemoryKind;
use crate::stream::{run_ordered, StreamOrder, StreamValue};
use cudarc::driver::CudaStream;
use std::sync::Arc;

impl StridedMemoryViewMut<'_> {
    /// Copies `src` into this view, element by element in logical order, on `stream`
    /// (`None` is enough when both views are in pageable host memory). See [`CopyOptions`]
    /// for the defaults.
    ///
    /// Rejected before any work: different shapes or itemsizes, a destination that maps
    /// two elements to one address, views on different devices, a stream of another device.
    pub fn copy_from<B: Access>(
        &mut self,
        src: &StridedMemoryViewBase<'_, B>,
        stream: Option<&Arc<CudaStream>>,
    ) -> Result<()> {
        self.copy_from_with(src, stream, &CopyOptions::default())
    }

    /// [`copy_from`](Self::copy_from) of the bytes as they are, when the two views carry
    /// different dtypes of one itemsize: an explicit reinterpretation (int32 bits into a
    /// float32 view, say). `copy_from` refuses such pairs.
    ///
    /// ```
    /// use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};
    /// let ints = [0x3f80_0000i32; 4];
    /// let mut floats = [0f32; 4];
    /// let l = StridedLayout::dense(&[4], 4, Order::C)?;
    /// let mut dst = StridedMemoryViewMut::from_slice_mut(&mut floats, l)?;
    /// let src = StridedMemoryView::from_slice(&ints, &[4])?;
    /// assert!(dst.copy_from(&src, None).is_err());
    /// dst.copy_bits_from(&src, None)?;
    /// drop(dst);
    /// assert_eq!(floats, [1.0; 4]);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn copy_bits_from<B: Access>(
        &mut self,
        src: &StridedMemoryViewBase<'_, B>,
        stream: Option<&Arc<CudaStream>>,
    ) -> Result<()> {
        let opts = CopyOptions {
            bits: true,
            ..CopyOptions::default()
        };
        self.copy_from_with(src, stream, &opts)
    }

    /// [`copy_from`](Self::copy_from) with options.
    pub fn copy_from_with<B: Access>(
        &mut self,
        src: &StridedMemoryViewBase<'_, B>,
        stream: Option<&Arc<CudaStream>>,
        opts: &CopyOptions<'_>,
    ) -> Result<()> {
        copy_into(&self.operand("copy")?, &src.operand("copy")?, stream, opts)
    }

    /// [`copy_from_with`](Self::copy_from_with) ordered as `order` says: on its stream,
    /// or ([`StreamOrder::Unordered`]) on stridekit's own stream of the views' device,
    /// waited for. Copies between pageable host views run at once on the CPU.
    pub fn copy_from_ordered<B: Access>(
        &mut self,
        src: &StridedMemoryViewBase<'_, B>,
        order: &StreamOrder,
        opts: &CopyOptions<'_>,
    ) -> Result<()> {
        if self.kind() == MemoryKind::Host && src.kind() == MemoryKind::Host {
            return self.copy_from_with(src, None, opts);
        }
        let device = gpu_of(self, src);
        run_ordered(order, device, |s| self.copy_from_with(src, Some(s), opts))
    }

    /// [`copy_from_ordered`](Self::copy_from_ordered) with the stream given as a protocol
    /// value ([`StreamValue`]): the default streams are those of the views' device. The
    /// C ABI and the Python package copy through this.
    ///
    /// # Safety
    /// A [`StreamValue::Handle`] must be a live `CUstream` (see
    /// [`StreamValue::resolve_handle`]).
    pub unsafe fn copy_from_stream_value<B: Access>(
        &mut self,
        src: &StridedMemoryViewBase<'_, B>,
        stream: StreamValue,
        opts: &CopyOptions<'_>,
    ) -> Result<()> {
        if self.kind() == MemoryKind::Host && src.kind() == MemoryKind::Host {
            return self.copy_from_with(src, None, opts);
        }
        // SAFETY: the caller's promise.
        let order = unsafe { stream.resolve_handle(gpu_of(self, src))? };
        self.copy_from_ordered(src, &order, opts)
    }
}

impl<A: Access> StridedMemoryViewBase<'_, A> {
    /// Copies this view into `dst`; see [`StridedMemoryViewMut::copy_from`].
    pub fn copy_to(
        &self,
        dst: &mut StridedMemoryViewMut<'_>,
        stream: Option<&Arc<CudaStream>>,
    ) -> Result<()> {
        dst.copy_from(self, stream)
    }
}

/// The device whose default streams order a copy between `a` and `b`: the first one's
/// device or managed memory, else device 0.
fn gpu_of<A: Access, B: Access>(
    a: &StridedMemoryViewBase<'_, A>,
    b: &StridedMemoryViewBase<'_, B>,
) -> usize {
    [a.as_view(), b.as_view()]
        .iter()
        .filter(|v| matches!(v.kind(), MemoryKind::Device | MemoryKind::Managed))
        .find_map(|v| v.device_ordinal())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use crate::{Error, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

    #[test]
    fn copies_between_devices_need_a_stream_and_are_checked_before_any_work() {
        let mut a = vec![0u32; 4];
        let b = vec![0u32; 4];
        let l = StridedLayout::dense(&[4], 4, Order::C).unwrap();
        let mut dst = StridedMemoryViewMut::from_slice_mut(&mut a, l.clone())
            .unwrap()
            .on_fake_device(0);
        let src = StridedMemoryView::from_slice_with_layout(&b, l)
            .unwrap()
            .on_fake_device(1);
        let e = dst.copy_from(&src, None).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }));
        assert!(
            e.to_string()
                .contains("a copy between two devices runs on the GPU and needs a stream"),
            "{e}"
        );
    }
}
