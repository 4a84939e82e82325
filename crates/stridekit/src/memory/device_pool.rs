//! Stream-ordered device memory from a memory pool.

use super::{Buffer, Deallocate, MemoryKind, MemoryResource};
use crate::device::Device;
use crate::error::{check, invalid, Result};
use cudarc::driver::{sys, CudaStream};
use std::sync::Arc;

/// Options for [`DeviceMemoryResource::with_options`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DevicePoolOptions {
    /// Use a pool of our own instead of the device's default pool.
    pub dedicated: bool,
    /// Bytes the pool may keep reserved after frees before giving memory back to the
    /// system at a synchronisation (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`); `None` keeps
    /// the driver's default (0). `u64::MAX` keeps everything.
    pub release_threshold: Option<u64>,
}

struct Pool {
    device: Device,
    pool: sys::CUmemoryPool,
    owned: bool,
}

// SAFETY: a CUmemoryPool handle may be used from any thread; the driver synchronises it.
unsafe impl Send for Pool {}
// SAFETY: as above; no interior state on our side.
unsafe impl Sync for Pool {}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.owned {
            crate::peer::unregister_pool(self.device.ordinal(), self.pool);
        }
        if self.owned && self.device.bind("drop pool").is_ok() {
            // SAFETY: we created this pool; every buffer from it holds an Arc to this Pool,
            // so none is outstanding when it drops.
            let _ = unsafe { sys::cuMemPoolDestroy(self.pool) };
        }
    }
}

impl Deallocate for Pool {
    fn deallocate(&self, ptr: u64, _size: usize, stream: &CudaStream) -> Result<()> {
        const OP: &str = "free device memory";
        self.device.bind(OP)?;
        // SAFETY: `ptr` came from cuMemAllocFromPoolAsync on this pool and is freed once.
        check(OP, "cuMemFreeAsync", unsafe {
            sys::cuMemFreeAsync(ptr, stream.cu_stream())
        })
    }
}

/// Device memory allocated and freed in stream order from a memory pool
/// (`cuMemAllocFromPoolAsync` / `cuMemFreeAsync`).
#[derive(Clone)]
pub struct DeviceMemoryResource {
    pool: Arc<Pool>,
}

impl DeviceMemoryResource {
    /// Uses the device's default memory pool.
    pub fn new(device: &Device) -> Result<Self> {
        Self::with_options(device, DevicePoolOptions::default())
    }

    /// Uses the default or a dedicated pool, with an optional release threshold.
    pub fn with_options(device: &Device, opts: DevicePoolOptions) -> Result<Self> {
        const OP: &str = "DeviceMemoryResource::new";
        crate::driver::require_symbol(OP, "cuMemAllocFromPoolAsync")?;
        device.bind(OP)?;
        if device.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)?
            == 0
        {
            return Err(crate::Error::Unsupported {
                op: OP,
                reason: format!("device {} does not support memory pools", device.ordinal()),
            });
        }
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        if opts.dedicated {
            // SAFETY: zeroed is a valid CUmemPoolProps (plain C struct of ints and pointers).
            let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
            props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
            props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            props.location.id = device.ordinal() as i32;
            // SAFETY: valid out-pointer and props.
            check(OP, "cuMemPoolCreate", unsafe {
                sys::cuMemPoolCreate(&mut pool, &props)
            })?;
        } else {
            // SAFETY: valid out-pointer and a device handle from the context.
            check(OP, "cuDeviceGetDefaultMemPool", unsafe {
                sys::cuDeviceGetDefaultMemPool(&mut pool, device.context().cu_device())
            })?;
        }
        let pool = Arc::new(Pool {
            device: device.clone(),
            pool,
            owned: opts.dedicated,
        });
        if opts.dedicated {
            // Peer access already enabled towards this device covers the new pool too.
            crate::peer::register_pool(device.ordinal(), pool.pool)?;
        }
        if let Some(mut threshold) = opts.release_threshold {
            // SAFETY: the attribute takes a cuuint64_t value.
            check(OP, "cuMemPoolSetAttribute", unsafe {
                sys::cuMemPoolSetAttribute(
                    pool.pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&mut threshold as *mut u64).cast(),
                )
            })?;
        }
        Ok(Self { pool })
    }

    /// The device this resource allocates on.
    pub fn device(&self) -> &Device {
        &self.pool.device
    }
}

impl MemoryResource for DeviceMemoryResource {
    fn allocate(&self, size: usize, stream: &Arc<CudaStream>) -> Result<Buffer> {
        const OP: &str = "DeviceMemoryResource::allocate";
        let ordinal = self.pool.device.ordinal();
        if stream.context().ordinal() != ordinal {
            return Err(invalid(
                OP,
                format!(
                    "stream belongs to device {} but the pool to device {ordinal}; they must match",
                    stream.context().ordinal()
                ),
            ));
        }
        if size == 0 {
            return Ok(Buffer::empty(MemoryKind::Device, Some(ordinal)));
        }
        self.pool.device.bind(OP)?;
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; pool and stream belong to this device's context.
        check(OP, "cuMemAllocFromPoolAsync", unsafe {
            sys::cuMemAllocFromPoolAsync(&mut ptr, size, self.pool.pool, stream.cu_stream())
        })?;
        Ok(Buffer::from_resource(
            ptr,
            size,
            MemoryKind::Device,
            Some(ordinal),
            self.pool.clone(),
            stream.clone(),
        ))
    }

    fn kind(&self) -> MemoryKind {
        MemoryKind::Device
    }

    fn device_ordinal(&self) -> Option<usize> {
        Some(self.pool.device.ordinal())
    }
}
