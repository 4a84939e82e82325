//! CUDA devices, built on cudarc's `CudaContext`.

use crate::driver::{self, types::CUdevice_attribute};
use crate::error::{driver, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaContext, CudaStream};
use std::fmt;
use std::sync::Arc;

/// One CUDA device and its primary context.
///
/// Cloning is cheap (an `Arc`). Everything allocated on a device keeps its context alive,
/// so no buffer can outlive the context it belongs to.
#[derive(Clone)]
pub struct Device {
    ctx: Arc<CudaContext>,
}

impl Device {
    /// How many CUDA devices are visible. Fails with [`Error::NoDriver`](crate::Error::NoDriver) without a driver.
    pub fn count() -> Result<usize> {
        driver::device_count("Device::count")
    }

    /// Opens device `ordinal` (retaining its primary context).
    pub fn open(ordinal: usize) -> Result<Device> {
        let rt = Runtime::get("Device::open", ordinal)?;
        Ok(Device {
            ctx: rt.context().clone(),
        })
    }

    /// Wraps a cudarc context, for code already written on cudarc.
    pub fn from_context(ctx: Arc<CudaContext>) -> Device {
        Device { ctx }
    }

    /// The cudarc context, for code written on cudarc.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> Result<String> {
        self.ctx
            .name()
            .map_err(driver("Device::name", "cuDeviceGetName"))
    }

    /// Compute capability as (major, minor), e.g. (9, 0) for Hopper.
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        self.ctx
            .compute_capability()
            .map_err(driver("Device::compute_capability", "cuDeviceGetAttribute"))
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> Result<usize> {
        Ok(
            Runtime::get("Device::sm_count", self.ordinal())?.sm_count("Device::sm_count")?
                as usize,
        )
    }

    /// Any device attribute, for what this type does not name.
    pub fn attribute(&self, attr: CUdevice_attribute) -> Result<i32> {
        self.ctx
            .attribute(attr)
            .map_err(driver("Device::attribute", "cuDeviceGetAttribute"))
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> Result<usize> {
        self.ctx
            .total_mem()
            .map_err(driver("Device::total_memory", "cuDeviceTotalMem"))
    }

    /// Free device memory in bytes, as the driver sees it now.
    pub fn free_memory(&self) -> Result<usize> {
        self.ctx
            .mem_get_info()
            .map(|(free, _)| free)
            .map_err(driver("Device::free_memory", "cuMemGetInfo"))
    }

    /// The legacy default stream of this device's context.
    pub fn default_stream(&self) -> Arc<CudaStream> {
        self.ctx.default_stream()
    }

    /// A new non-blocking stream.
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx
            .new_stream()
            .map_err(driver("Device::new_stream", "cuStreamCreate"))
    }

    /// stridekit's own non-blocking stream on this device, made once per process and
    /// shared: the stream that work ordered on a foreign stream runs on (copies from C
    /// and Python, allocations for them), after an event wait.
    pub fn library_stream(&self) -> Result<Arc<CudaStream>> {
        const OP: &str = "Device::library_stream";
        Runtime::get(OP, self.ordinal())?.library_stream(OP)
    }

    /// Waits for all work on the device's context.
    pub fn synchronize(&self) -> Result<()> {
        self.ctx
            .synchronize()
            .map_err(driver("Device::synchronize", "cuCtxSynchronize"))
    }

    /// Makes this device's context current on the calling thread.
    pub(crate) fn bind(&self, op: &'static str) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(driver(op, "cuCtxSetCurrent"))
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.ordinal())
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.ordinal() == other.ordinal()
    }
}
impl Eq for Device {}
