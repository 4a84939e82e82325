//! Page-locked host memory that kernels can reach.

use super::{free_after_stream, Buffer, Deallocate, MemoryKind, MemoryResource};
use crate::device::Device;
use crate::driver::{check, memory as dmem};
use crate::error::Result;
use cudarc::driver::CudaStream;
use std::sync::Arc;

struct Pinned {
    device: Device,
}

impl Deallocate for Pinned {
    fn deallocate(&self, ptr: u64, _size: usize, stream: &CudaStream) -> Result<()> {
        // cuMemFreeHost is not stream-ordered: let queued work finish first.
        free_after_stream(
            "free pinned memory",
            "cuMemFreeHost",
            &self.device,
            stream,
            || {
                // SAFETY: `ptr` came from cuMemHostAlloc and is freed once.
                unsafe { dmem::host_free(ptr as *mut std::ffi::c_void) }
            },
        )
    }
}

/// Page-locked host memory (`cuMemHostAlloc`, portable and mapped): the CPU and kernels
/// of every device can read it, and copies from it run at full bus speed.
#[derive(Clone)]
pub struct PinnedMemoryResource {
    inner: Arc<Pinned>,
}

impl PinnedMemoryResource {
    /// Pinned memory registered through `device`'s context.
    pub fn new(device: &Device) -> Self {
        Self {
            inner: Arc::new(Pinned {
                device: device.clone(),
            }),
        }
    }
}

impl MemoryResource for PinnedMemoryResource {
    fn allocate(&self, size: usize, stream: &Arc<CudaStream>) -> Result<Buffer> {
        const OP: &str = "PinnedMemoryResource::allocate";
        if size == 0 {
            return Ok(Buffer::empty(
                MemoryKind::PinnedHost,
                Some(self.inner.device.ordinal()),
            ));
        }
        self.inner.device.bind(OP)?;
        let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: the device's context is current (bound above).
        check(OP, "cuMemHostAlloc", unsafe {
            dmem::host_alloc(&mut p, size)
        })?;
        Ok(Buffer::from_resource(
            p as u64,
            size,
            MemoryKind::PinnedHost,
            Some(self.inner.device.ordinal()),
            self.inner.clone(),
            stream.clone(),
        ))
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::PinnedHost
    }

    /// The device whose context registered the memory (kernels of every device can
    /// still read it: it is portable).
    fn device_ordinal(&self) -> Option<usize> {
        Some(self.inner.device.ordinal())
    }
}
