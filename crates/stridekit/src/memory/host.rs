//! Ordinary pageable host memory, so host views need no special allocation.

use super::{Buffer, MemoryKind, MemoryResource};
use crate::error::Result;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// 64-byte aligned storage, so any element type (up to 64-byte alignment) fits.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Pageable host memory from the Rust allocator, 64-byte aligned and zero-initialised.
/// Needs no CUDA driver.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostMemoryResource;

impl MemoryResource for HostMemoryResource {
    fn allocate(&self, size: usize, _stream: &Arc<CudaStream>) -> Result<Buffer> {
        Ok(HostMemoryResource::allocate_host(size))
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::Host
    }

    fn device_ordinal(&self) -> Option<usize> {
        None
    }
}

impl HostMemoryResource {
    /// Allocates `size` zeroed bytes; no stream or driver is involved.
    pub fn allocate_host(size: usize) -> Buffer {
        if size == 0 {
            return Buffer::empty(MemoryKind::Host, None);
        }
        let mut lines = vec![Line([0; 64]); size.div_ceil(64)].into_boxed_slice();
        let ptr = lines.as_mut_ptr() as u64;
        Buffer::from_owned_host(ptr, size, lines)
    }
}
