//! Finding the CUDA driver, and entry points that older drivers may lack.

use crate::error::{check, Error, Result};
use cudarc::driver::sys;
use std::sync::OnceLock;

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

/// Makes sure the calling thread has a current context, binding `ordinal`'s primary
/// context if it has none. Some driver calls (managed-memory advice among them) fail with
/// CUDA_ERROR_INVALID_CONTEXT on a thread that never touched CUDA. The primary context is
/// retained for the rest of the process, as the CUDA runtime does, so that it cannot be
/// destroyed while it is current somewhere.
pub(crate) fn ensure_current_context(op: &'static str, ordinal: usize) -> Result<()> {
    use cudarc::driver::CudaContext;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    ensure(op)?;
    let mut cur: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the driver is loaded; valid out-pointer.
    check(op, "cuCtxGetCurrent", unsafe {
        sys::cuCtxGetCurrent(&mut cur)
    })?;
    if !cur.is_null() {
        return Ok(());
    }
    static PRIMARY: OnceLock<Mutex<HashMap<usize, Arc<CudaContext>>>> = OnceLock::new();
    let map = PRIMARY.get_or_init(|| Mutex::new(HashMap::new()));
    let ctx = {
        let mut m = map.lock().map_err(|_| Error::Invalid {
            op,
            rule: "the primary-context cache lock was poisoned by a panic in another thread".into(),
        })?;
        match m.get(&ordinal) {
            Some(c) => c.clone(),
            None => {
                let c = CudaContext::new(ordinal)
                    .map_err(crate::error::driver(op, "cuDevicePrimaryCtxRetain"))?;
                m.insert(ordinal, c.clone());
                c
            }
        }
    };
    ctx.bind_to_thread()
        .map_err(crate::error::driver(op, "cuCtxSetCurrent"))
}

/// Waits for all work of the calling thread's current context (binding `ordinal`'s
/// primary context when the thread has none): orders a host read of pinned or managed
/// memory after the GPU work that may write it.
pub(crate) fn synchronize_current(op: &'static str, ordinal: usize) -> Result<()> {
    ensure_current_context(op, ordinal)?;
    // SAFETY: a context is current on this thread (ensured above).
    check(op, "cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
}

/// Attribute `attr` of device `ordinal`, asked by ordinal (no context needed).
pub(crate) fn device_attribute(
    op: &'static str,
    ordinal: usize,
    attr: sys::CUdevice_attribute,
) -> Result<i32> {
    ensure(op)?;
    let (mut dev, mut v) = (0, 0);
    // SAFETY: the driver is loaded; valid out-pointer.
    check(op, "cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal as i32)
    })?;
    // SAFETY: valid out-pointer and device handle.
    check(op, "cuDeviceGetAttribute", unsafe {
        sys::cuDeviceGetAttribute(&mut v, attr, dev)
    })?;
    Ok(v)
}

/// Makes the context of `stream` current on the calling thread, as stream calls need.
pub(crate) fn bind_stream(op: &'static str, stream: &cudarc::driver::CudaStream) -> Result<()> {
    stream
        .context()
        .bind_to_thread()
        .map_err(crate::error::driver(op, "cuCtxSetCurrent"))
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
