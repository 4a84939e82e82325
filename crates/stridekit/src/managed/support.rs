//! What the driver and the devices must offer before a managed-memory call is made.

use super::Location;
use crate::driver::{require_symbol, types::CUdevice_attribute};
use crate::error::{Error, Result};
use crate::runtime::Runtime;

/// The entry points for advice and single prefetches with a `CUmemLocation` (CUDA 12.2+).
pub(crate) const ADVISE_V2: &str = "cuMemAdvise_v2";
pub(crate) const PREFETCH_V2: &str = "cuMemPrefetchAsync_v2";
/// The batched entry points (CUDA 13.0+).
pub(crate) const PREFETCH_BATCH: &str = "cuMemPrefetchBatchAsync";
pub(crate) const DISCARD_BATCH: &str = "cuMemDiscardBatchAsync";
pub(crate) const DISCARD_AND_PREFETCH_BATCH: &str = "cuMemDiscardAndPrefetchBatchAsync";

/// Loads the driver, checks for `symbol`, and returns the number of devices.
pub(crate) fn prepare(op: &'static str, symbol: &'static str) -> Result<usize> {
    require_symbol(op, symbol)?;
    crate::Device::count()
}

/// Fails with [`Error::Unsupported`] unless device `ordinal` can access managed memory
/// concurrently with the host; without that, the driver cannot migrate or advise pages
/// while kernels may run (for example under Windows WDDM).
pub(crate) fn require_concurrent_access(op: &'static str, ordinal: usize) -> Result<()> {
    let v = Runtime::get(op, ordinal)?.attribute(
        op,
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
    )?;
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
