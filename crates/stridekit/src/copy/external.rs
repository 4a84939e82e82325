//! Copies ordered as a stream value says: on the caller's stream (stridekit's own or a
//! foreign one wrapped at the edge), or unordered.

use super::CopyOptions;
use crate::error::Result;
use crate::memory::MemoryKind;
use crate::stream::{run_ordered, StreamOrder, StreamValue};
use crate::view::access::Access;
use crate::view::{StridedMemoryViewBase, StridedMemoryViewMut};

impl StridedMemoryViewMut<'_> {
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
