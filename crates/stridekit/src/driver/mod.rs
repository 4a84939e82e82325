//! The driver layer: the only module that calls `cudarc::driver::sys`.
//!
//! Each entry point stridekit needs has one `unsafe fn` here, grouped by area, with its
//! contract in a `# Safety` section (as cudarc's `result` module does); code above this
//! module is safe code over these calls and cudarc's safe types. This file finds the
//! driver, looks up entry points that older drivers may lack, and converts statuses.

pub(crate) mod context;
pub(crate) mod managed;
pub(crate) mod memory;
#[cfg(feature = "nccl")]
pub(crate) mod nccl;
pub(crate) mod nvrtc_cubin;
pub(crate) mod nvrtc_lib;
pub(crate) mod pointer;
pub(crate) mod stream;
pub(crate) mod tensor_map;

use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::sync::OnceLock;

/// The driver's types that code above this layer names (values, not calls).
pub(crate) mod types {
    pub use cudarc::driver::sys::{
        CUcontext, CUdevice_attribute, CUmemLocation, CUmemLocationType, CUmem_advise,
        CUmem_range_attribute, CUmemoryPool, CUresult, CUstream, CUtensorMap, CUtensorMapDataType,
        CUtensorMapFloatOOBfill, CUtensorMapIm2ColWideMode, CUtensorMapInterleave,
        CUtensorMapL2promotion, CUtensorMapSwizzle,
    };
}

/// Whether the driver library loads and initialises. Asked once per process.
fn driver_state() -> Result<(), &'static str> {
    static STATE: OnceLock<Result<(), &'static str>> = OnceLock::new();
    *STATE.get_or_init(|| {
        // SAFETY: only tries to dlopen the driver library; no driver function is called.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcuda not found");
        }
        // SAFETY: the library is present (checked above), so cuInit resolves; flags must be 0.
        match unsafe { sys::cuInit(0) } {
            sys::CUresult::CUDA_SUCCESS => Ok(()),
            _ => Err("cuInit failed"),
        }
    })
}

/// Fails with [`Error::NoDriver`] unless the CUDA driver is loaded and initialised.
/// Every GPU entry point calls this first, so none can panic for want of a driver.
pub(crate) fn ensure(op: &'static str) -> Result<()> {
    driver_state().map_err(|_| Error::NoDriver { op })
}

/// True when a CUDA driver loads and reports at least one device. Never panics.
///
/// ```
/// if !stridekit::cuda_available() {
///     println!("no GPU: running the CPU parts only");
/// }
/// ```
pub fn cuda_available() -> bool {
    crate::Device::count().map(|n| n > 0).unwrap_or(false)
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
pub fn driver_version() -> Result<(i32, i32)> {
    const OP: &str = "driver_version";
    ensure(OP)?;
    let mut v = 0;
    // SAFETY: the driver is loaded (ensure); `v` is a valid out-pointer.
    check(OP, "cuDriverGetVersion", unsafe {
        sys::cuDriverGetVersion(&mut v)
    })?;
    Ok((v / 1000, (v % 1000) / 10))
}

/// Whether the loaded driver exports `symbol`. Calls that only newer drivers have are
/// looked up with this first, so that an older driver gives [`Error::Unsupported`].
/// Each symbol is looked up once per process.
pub(crate) fn has_symbol(symbol: &'static str) -> bool {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static SEEN: OnceLock<Mutex<HashMap<&'static str, bool>>> = OnceLock::new();
    if driver_state().is_err() {
        return false;
    }
    let seen = SEEN.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(&known) = seen
        .lock()
        .ok()
        .and_then(|m| m.get(symbol).copied())
        .as_ref()
    {
        return known;
    }
    // SAFETY: the library is loaded (driver_state); we only look a symbol up, without calling it.
    let present = unsafe {
        sys::culib()
            .get::<unsafe extern "C" fn()>(symbol.as_bytes())
            .is_ok()
    };
    if let Ok(mut m) = seen.lock() {
        m.insert(symbol, present);
    }
    present
}

/// For tests that need NVRTC (no GPU): whether the NVRTC library loads. Without it the
/// test says so and passes, unless `STRIDEKIT_REQUIRE_NVRTC` is set (as CI sets it), when
/// it fails.
#[cfg(test)]
pub(crate) fn nvrtc_present() -> bool {
    let present = nvrtc_lib::locate().is_ok();
    assert!(
        present || std::env::var_os("STRIDEKIT_REQUIRE_NVRTC").is_none(),
        "NVRTC is required (STRIDEKIT_REQUIRE_NVRTC) but libnvrtc could not be loaded"
    );
    if !present {
        eprintln!("libnvrtc is not on the loader path: this test compiled nothing");
    }
    present
}

/// Fails with [`Error::Unsupported`] when the driver lacks `symbol`.
pub(crate) fn require_symbol(op: &'static str, symbol: &'static str) -> Result<()> {
    ensure(op)?;
    if has_symbol(symbol) {
        Ok(())
    } else {
        let (maj, min) = driver_version().unwrap_or((0, 0));
        Err(Error::Unsupported {
            op,
            reason: format!("the CUDA driver ({maj}.{min}) has no entry point {symbol}"),
        })
    }
}

/// Whether the calling thread has a current context.
pub(crate) fn has_current_context(op: &'static str) -> Result<bool> {
    ensure(op)?;
    let mut cur: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the driver is loaded (ensure).
    check(op, "cuCtxGetCurrent", unsafe {
        context::get_current(&mut cur)
    })?;
    Ok(!cur.is_null())
}

/// How many devices the driver reports.
pub(crate) fn device_count(op: &'static str) -> Result<usize> {
    ensure(op)?;
    let n = cudarc::driver::CudaContext::device_count()
        .map_err(crate::error::driver(op, "cuDeviceGetCount"))?;
    Ok(n.max(0) as usize)
}

/// Makes the context of `stream` current on the calling thread, as stream calls need.
pub(crate) fn bind_stream(op: &'static str, stream: &cudarc::driver::CudaStream) -> Result<()> {
    stream
        .context()
        .bind_to_thread()
        .map_err(crate::error::driver(op, "cuCtxSetCurrent"))
}

/// Converts a raw driver status into a `Result`, naming the operation and the call.
pub(crate) fn check(op: &'static str, call: &'static str, status: sys::CUresult) -> Result<()> {
    status
        .result()
        .map_err(|source| Error::Driver { op, call, source })
}

/// A block of page-locked host memory that frees itself (after binding its context).
pub(crate) struct PinnedBlock {
    ptr: u64,
    size: usize,
    ctx: std::sync::Arc<cudarc::driver::CudaContext>,
}

impl PinnedBlock {
    /// Allocates `size` bytes in `ctx` (made current on the calling thread).
    pub(crate) fn new(
        op: &'static str,
        ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
        size: usize,
    ) -> Result<PinnedBlock> {
        ensure(op)?;
        ctx.bind_to_thread()
            .map_err(crate::error::driver(op, "cuCtxSetCurrent"))?;
        let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: `ctx` is current (bound above); valid out-pointer.
        check(op, "cuMemHostAlloc", unsafe {
            memory::host_alloc(&mut p, size)
        })?;
        Ok(PinnedBlock {
            ptr: p as u64,
            size,
            ctx: ctx.clone(),
        })
    }

    /// The host address.
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Bytes.
    pub(crate) fn size(&self) -> usize {
        self.size
    }
}

impl Drop for PinnedBlock {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by `new`, freed once; its owner synchronized every stream
            // that used it before giving it up.
            let status = unsafe { memory::host_free(self.ptr as *mut std::ffi::c_void) };
            if status != sys::CUresult::CUDA_SUCCESS {
                crate::error::report_drop_failure(
                    "free a pinned staging block",
                    &format!("{status:?}"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_entry_point_is_unsupported() {
        let r = require_symbol("probe", "cuNoSuchEntryPointInAnyDriver");
        if ensure("probe").is_ok() {
            match r {
                Err(Error::Unsupported { reason, .. }) => {
                    assert!(
                        reason.contains("has no entry point cuNoSuchEntryPointInAnyDriver"),
                        "{reason}"
                    );
                }
                other => panic!("expected Unsupported, got {other:?}"),
            }
            assert!(has_symbol("cuInit"));
            assert!(
                !has_symbol("cuNoSuchEntryPointInAnyDriver"),
                "cached answer"
            );
        } else {
            assert!(matches!(r, Err(Error::NoDriver { op: "probe" })));
            assert!(!has_symbol("cuInit"));
        }
    }
}
