//! What the driver and the devices must offer before a managed-memory call is made.

use super::Location;
use crate::driver::{ensure, require_symbol};
use crate::error::{check, Error, Result};
use cudarc::driver::sys;

/// The entry points for advice and single prefetches with a `CUmemLocation` (CUDA 12.2+).
pub(crate) const ADVISE_V2: &str = "cuMemAdvise_v2";
pub(crate) const PREFETCH_V2: &str = "cuMemPrefetchAsync_v2";
/// The batched entry points (CUDA 13.0+).
pub(crate) const PREFETCH_BATCH: &str = "cuMemPrefetchBatchAsync";
pub(crate) const DISCARD_BATCH: &str = "cuMemDiscardBatchAsync";
pub(crate) const DISCARD_AND_PREFETCH_BATCH: &str = "cuMemDiscardAndPrefetchBatchAsync";

/// Loads the driver, checks for `symbol`, and returns the number of devices.
pub(crate) fn prepare(op: &'static str, symbol: &str) -> Result<usize> {
    ensure(op)?;
    require_symbol(op, symbol)?;
    let mut n = 0;
    // SAFETY: the driver is loaded (ensure); `n` is a valid out-pointer.
    check(op, "cuDeviceGetCount", unsafe {
        sys::cuDeviceGetCount(&mut n)
    })?;
    Ok(n.max(0) as usize)
}

/// Fails with [`Error::Unsupported`] unless device `ordinal` can access managed memory
/// concurrently with the host; without that, the driver cannot migrate or advise pages
/// while kernels may run (for example under Windows WDDM).
pub(crate) fn require_concurrent_access(op: &'static str, ordinal: usize) -> Result<()> {
    let mut dev = 0;
    let mut v = 0;
    // SAFETY: the driver is loaded (prepare ran first); valid out-pointers.
    check(op, "cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal as i32)
    })?;
    // SAFETY: as above; `dev` is a valid device handle.
    check(op, "cuDeviceGetAttribute", unsafe {
        sys::cuDeviceGetAttribute(
            &mut v,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
            dev,
        )
    })?;
    concurrent_access_verdict(op, ordinal, v)
}

/// The decision on a device's `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS` value.
pub(crate) fn concurrent_access_verdict(
    op: &'static str,
    ordinal: usize,
    value: i32,
) -> Result<()> {
    if value == 0 {
        return Err(Error::Unsupported {
            op,
            reason: format!(
                "device {ordinal} has no concurrent managed access \
                 (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0), so the driver cannot \
                 honour managed-memory advice or prefetches there"
            ),
        });
    }
    Ok(())
}

/// Checks concurrent managed access for the device a location names, if any.
pub(crate) fn require_location_access(op: &'static str, loc: Location) -> Result<()> {
    match loc {
        Location::Device(d) => require_concurrent_access(op, d),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_without_concurrent_access_are_unsupported() {
        assert!(concurrent_access_verdict("managed::prefetch", 0, 1).is_ok());
        let e = concurrent_access_verdict("managed::prefetch", 1, 0).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }));
        assert_eq!(
            e.to_string(),
            "managed::prefetch: not supported here: device 1 has no concurrent managed access \
             (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0), so the driver cannot honour \
             managed-memory advice or prefetches there"
        );
    }
}
