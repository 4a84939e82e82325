//! Copies ordered as a stream value says: on the caller's stream (stridekit's own or a
//! foreign one wrapped at the edge), or unordered.

use super::CopyOptions;
use crate::error::Result;
use crate::memory::MemoryKind;
use crate::stream::{run_ordered, StreamOrder};
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
        let device = [self.as_view(), src.as_view()]
            .iter()
            .filter(|v| matches!(v.kind(), MemoryKind::Device | MemoryKind::Managed))
            .find_map(|v| v.device_ordinal())
            .unwrap_or(0);
        run_ordered(order, device, |s| self.copy_from_with(src, Some(s), opts))
    }
}
