//! Stream-ordered device memory from a memory pool.

use super::{Buffer, Deallocate, MemoryKind, MemoryResource};
use crate::device::Device;
use crate::driver::{check, memory as dmem, types::CUmemoryPool};
use crate::error::{invalid, Result};
use crate::runtime::Runtime;
use cudarc::driver::CudaStream;
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
    pool: CUmemoryPool,
    owned: bool,
}

// SAFETY: a CUmemoryPool handle may be used from any thread; the driver synchronises it.
unsafe impl Send for Pool {}
// SAFETY: as above; no interior state on our side.
unsafe impl Sync for Pool {}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.owned {
            if let Ok(rt) = Runtime::get("drop pool", self.device.ordinal()) {
                let _ = rt.unregister_pool("drop pool", self.pool);
            }
        }
        if self.owned && self.device.bind("drop pool").is_ok() {
            // SAFETY: we created this pool; every buffer from it holds an Arc to this Pool,
            // so none is outstanding when it drops.
            let _ = unsafe { dmem::pool_destroy(self.pool) };
        }
    }
}

impl Deallocate for Pool {
    fn deallocate(&self, ptr: u64, _size: usize, stream: &CudaStream) -> Result<()> {
        const OP: &str = "free device memory";
        self.device.bind(OP)?;
        // SAFETY: `ptr` came from cuMemAllocFromPoolAsync on this pool and is freed once.
        check(OP, "cuMemFreeAsync", unsafe {
            dmem::free_async(ptr, stream.cu_stream())
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
        if device.attribute(
            crate::driver::types::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
        )? == 0
        {
            return Err(crate::Error::Unsupported {
                op: OP,
                reason: format!("device {} does not support memory pools", device.ordinal()),
            });
        }
        let mut pool: CUmemoryPool = std::ptr::null_mut();
        if opts.dedicated {
            // SAFETY: the driver is loaded (the device is open); a valid ordinal.
            check(OP, "cuMemPoolCreate", unsafe {
                dmem::pool_create(&mut pool, device.ordinal() as i32)
            })?;
        } else {
            // SAFETY: a device handle from the open device's context.
            check(OP, "cuDeviceGetDefaultMemPool", unsafe {
                dmem::default_pool(&mut pool, device.context().cu_device())
            })?;
        }
        let pool = Arc::new(Pool {
            device: device.clone(),
            pool,
            owned: opts.dedicated,
        });
        if opts.dedicated {
            // Peer access already enabled towards this device covers the new pool too.
            Runtime::get(OP, device.ordinal())?.register_pool(OP, pool.pool)?;
        }
        if let Some(threshold) = opts.release_threshold {
            // SAFETY: a live pool (made or looked up above).
            check(OP, "cuMemPoolSetAttribute", unsafe {
                dmem::pool_set_release_threshold(pool.pool, threshold)
            })?;
        }
        Ok(Self { pool })
    }

    /// The device this resource allocates on.
    pub fn device(&self) -> &Device {
        &self.pool.device
    }

    /// Gives the pool's idle memory beyond `keep` bytes back to the system now
    /// (`cuMemPoolTrimTo`); memory of live buffers is never released.
    pub fn trim_to(&self, keep: usize) -> Result<()> {
        const OP: &str = "DeviceMemoryResource::trim_to";
        self.pool.device.bind(OP)?;
        // SAFETY: a live pool (this resource holds it).
        check(OP, "cuMemPoolTrimTo", unsafe {
            dmem::pool_trim_to(self.pool.pool, keep)
        })
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
        let mut ptr = 0u64;
        // SAFETY: the device's context is current (bound above); pool and stream belong
        // to it (checked above).
        check(OP, "cuMemAllocFromPoolAsync", unsafe {
            dmem::alloc_from_pool(&mut ptr, size, self.pool.pool, stream.cu_stream())
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
