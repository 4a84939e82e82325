//! Memory resources and the buffers they hand out.

mod buffer;
mod cudarc_buffer;
mod cudarc_use;
mod device_pool;
mod host;
mod pending;
mod pinned;
mod region;

pub use buffer::Buffer;
pub(crate) use buffer::{copy_bytes_across_devices_unchecked, copy_bytes_unchecked, raw_copy};
pub use cudarc_buffer::{CudarcBuffer, CudarcBufferMut};
pub(crate) use cudarc_use::CudarcUse;
pub use device_pool::{DeviceMemoryResource, DevicePoolOptions};
pub(crate) use host::try_zeroed;
pub use host::HostMemoryResource;
pub(crate) use pending::{around, finish, PendingWork, Usage, Use};
pub use pinned::PinnedMemoryResource;
pub(crate) use region::{check_element_alignment, span_at, span_base, validate_layout, Region};

use crate::error::Result;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// Where a buffer's bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// Device memory: kernels only.
    Device,
    /// Page-locked host memory, readable by the CPU and by kernels.
    PinnedHost,
    /// Managed (unified) memory, migrating between host and devices.
    Managed,
    /// Ordinary pageable host memory: the CPU only (copies through the driver still work).
    Host,
}

impl MemoryKind {
    /// Whether the CPU may read and write it.
    pub fn is_host_accessible(self) -> bool {
        !matches!(self, MemoryKind::Device)
    }

    /// Whether kernels may read and write it.
    pub fn is_device_accessible(self) -> bool {
        !matches!(self, MemoryKind::Host)
    }

    /// The device ordinal a view of memory of this kind on `device` reports: -1 for
    /// memory that belongs to no device (pageable host memory, and pinned memory whose
    /// device the driver did not report).
    pub(crate) fn device_id(self, device: Option<usize>) -> i32 {
        match (device, self) {
            (Some(d), MemoryKind::Device | MemoryKind::Managed | MemoryKind::PinnedHost) => {
                d as i32
            }
            _ => -1,
        }
    }
}

/// Something that hands out [`Buffer`]s; each buffer is released through the resource
/// that made it, ordered on a stream.
pub trait MemoryResource: Send + Sync {
    /// Allocates `size` bytes, ordered on `stream` (resources that cannot order an
    /// allocation on a stream allocate at once). A size of 0 gives an empty buffer.
    fn allocate(&self, size: usize, stream: &Arc<CudaStream>) -> Result<Buffer>;

    /// The kind of memory this resource hands out.
    fn kind(&self) -> MemoryKind;

    /// The device the memory belongs to, if any.
    fn device_ordinal(&self) -> Option<usize>;
}

/// How a buffer gives its memory back: implemented by each resource's shared state.
pub(crate) trait Deallocate: Send + Sync {
    /// Frees `ptr` (of `size` bytes, from this resource) once `stream`'s work is done.
    fn deallocate(&self, ptr: u64, size: usize, stream: &CudaStream) -> Result<()>;
}

/// Frees memory whose free call is not stream-ordered: waits until the work queued on
/// `stream` (which may still use the memory) is done, makes `device` current, then runs
/// `free`, the driver call named `call`.
pub(crate) fn free_after_stream(
    op: &'static str,
    call: &'static str,
    device: &crate::device::Device,
    stream: &CudaStream,
    free: impl FnOnce() -> crate::driver::types::CUresult,
) -> Result<()> {
    stream
        .synchronize()
        .map_err(crate::error::driver(op, "cuStreamSynchronize"))?;
    device.bind(op)?;
    crate::driver::check(op, call, free())
}
