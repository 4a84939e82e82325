//! Ordinary pageable host memory, so host views need no special allocation.

use super::{Buffer, MemoryKind, MemoryResource};
use crate::error::{Error, Result};
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// 64-byte aligned storage, so any element type (up to 64-byte alignment) fits.
#[derive(Clone, Copy, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Pageable host memory from the Rust allocator, 64-byte aligned and zero-initialised.
/// Needs no CUDA driver.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostMemoryResource;

impl MemoryResource for HostMemoryResource {
    fn allocate(&self, size: usize, _stream: &Arc<CudaStream>) -> Result<Buffer> {
        HostMemoryResource::allocate_host(size)
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::Host
    }

    fn device_ordinal(&self) -> Option<usize> {
        None
    }
}

impl HostMemoryResource {
    /// Allocates `size` zeroed bytes; no stream or driver is involved. A size the
    /// system cannot give is [`Error::OutOfMemory`](crate::Error::OutOfMemory), never an
    /// abort.
    ///
    /// ```
    /// use stridekit::{Error, HostMemoryResource};
    /// assert_eq!(HostMemoryResource::allocate_host(100)?.size(), 100);
    /// assert!(matches!(HostMemoryResource::allocate_host(usize::MAX), Err(Error::OutOfMemory { .. })));
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn allocate_host(size: usize) -> Result<Buffer> {
        if size == 0 {
            return Ok(Buffer::empty(MemoryKind::Host, None));
        }
        let mut lines: Vec<Line> =
            try_zeroed("HostMemoryResource::allocate_host", size.div_ceil(64))?;
        let ptr = lines.as_mut_ptr() as u64;
        Ok(Buffer::from_owned_host(ptr, size, lines.into_boxed_slice()))
    }
}

/// A vector of `n` zeroed values (calloc-backed: pages are not touched), or
/// [`Error::OutOfMemory`] (no abort, no panic, whatever `n`).
pub(crate) fn try_zeroed<T: bytemuck::Zeroable>(op: &'static str, n: usize) -> Result<Vec<T>> {
    bytemuck::allocation::try_zeroed_vec(n).map_err(|_| Error::OutOfMemory {
        op,
        bytes: n.saturating_mul(std::mem::size_of::<T>()),
    })
}
