//! Ordinary pageable host memory, so host views need no special allocation.

use super::{Buffer, MemoryKind, MemoryResource};
use crate::error::{Error, Result};
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// Alignment of every host allocation, so any element type (up to 64-byte alignment) fits.
const HOST_ALIGN: usize = 64;

/// The unit host memory is allocated in. Its 16-byte alignment is what the system
/// allocator serves from `calloc`, which leaves untouched pages unmapped; asking the
/// allocator for 64-byte alignment directly would make it zero every page by hand (a
/// terabyte request on an overcommitting machine would then be killed, not refused).
type Word = u128;

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
        const OP: &str = "HostMemoryResource::allocate_host";
        let word = std::mem::size_of::<Word>();
        // Slack of HOST_ALIGN - word bytes, so a 64-byte boundary lies inside with `size`
        // bytes after it.
        let words = size
            .checked_add(HOST_ALIGN - word)
            .map(|b| b.div_ceil(word))
            .ok_or(Error::OutOfMemory {
                op: OP,
                bytes: size,
            })?;
        let mut storage: Vec<Word> = try_zeroed(OP, words)?;
        let base = storage.as_mut_ptr() as usize;
        let ptr = base.next_multiple_of(HOST_ALIGN) as u64;
        Ok(Buffer::from_owned_host(
            ptr,
            size,
            storage.into_boxed_slice(),
        ))
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
