//! Managed (unified) memory.

use crate::device::Device;
use crate::driver::{check, memory as dmem};
use crate::error::Result;
use crate::managed::ManagedBuffer;
use crate::memory::{free_after_stream, Buffer, Deallocate, MemoryKind, MemoryResource};
use cudarc::driver::CudaStream;
use std::sync::Arc;

struct Managed {
    device: Device,
}

impl Deallocate for Managed {
    fn deallocate(&self, ptr: u64, _size: usize, stream: &CudaStream) -> Result<()> {
        free_after_stream(
            "free managed memory",
            "cuMemFree",
            &self.device,
            stream,
            || {
                // SAFETY: `ptr` came from cuMemAllocManaged and is freed once.
                unsafe { dmem::free(ptr) }
            },
        )
    }
}

/// Managed memory (`cuMemAllocManaged`, attached globally): one address valid on the
/// host and on every device, migrated by the driver on demand.
#[derive(Clone)]
pub struct ManagedMemoryResource {
    inner: Arc<Managed>,
}

impl ManagedMemoryResource {
    /// Managed memory allocated through `device`'s context.
    pub fn new(device: &Device) -> Result<Self> {
        const OP: &str = "ManagedMemoryResource::new";
        if device.attribute(
            crate::driver::types::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
        )? == 0
        {
            return Err(crate::Error::Unsupported {
                op: OP,
                reason: format!(
                    "device {} does not support managed memory",
                    device.ordinal()
                ),
            });
        }
        Ok(Self {
            inner: Arc::new(Managed {
                device: device.clone(),
            }),
        })
    }

    /// Allocates `size` bytes of managed memory (`cuMemAllocManaged`, attached globally)
    /// as a [`ManagedBuffer`], ready for advice and prefetches. The memory is released,
    /// ordered on `stream`, when the buffer is dropped. A size of 0 gives an empty buffer.
    ///
    /// This inherent method is what `resource.allocate(..)` calls; through the
    /// [`MemoryResource`] trait the same allocation comes as a plain [`Buffer`].
    pub fn allocate(&self, size: usize, stream: &Arc<CudaStream>) -> Result<ManagedBuffer> {
        const OP: &str = "ManagedMemoryResource::allocate";
        let ordinal = self.inner.device.ordinal();
        if size == 0 {
            return Ok(ManagedBuffer::from_buffer_unchecked(Buffer::empty(
                MemoryKind::Managed,
                Some(ordinal),
            )));
        }
        self.inner.device.bind(OP)?;
        let mut ptr = 0u64;
        // SAFETY: the device's context is current (bound above).
        check(OP, "cuMemAllocManaged", unsafe {
            dmem::managed_alloc(&mut ptr, size)
        })?;
        Ok(ManagedBuffer::from_buffer_unchecked(Buffer::from_resource(
            ptr,
            size,
            MemoryKind::Managed,
            Some(ordinal),
            self.inner.clone(),
            stream.clone(),
        )))
    }
}

impl MemoryResource for ManagedMemoryResource {
    fn allocate(&self, size: usize, stream: &Arc<CudaStream>) -> Result<Buffer> {
        ManagedMemoryResource::allocate(self, size, stream).map(Buffer::from)
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::Managed
    }

    fn device_ordinal(&self) -> Option<usize> {
        Some(self.inner.device.ordinal())
    }
}
