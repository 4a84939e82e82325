//! Where a copy's device temporaries come from when the caller names no allocator.
//!
//! Each device gets one dedicated memory pool for them, which keeps up to
//! [`KEEP_BYTES`] of freed memory reserved instead of returning it to the system at every
//! synchronization (the default pool's behaviour, which makes a repeated overlapping or
//! host-staged copy map its temporary anew each time). [`release_copy_temporaries`] gives
//! that memory back at once.

use crate::device::Device;
use crate::error::{invalid, Result};
use crate::memory::{DeviceMemoryResource, DevicePoolOptions};
use std::sync::{Mutex, OnceLock};

/// Freed temporaries each device's pool keeps reserved (1 GiB).
pub const KEEP_BYTES: u64 = 1 << 30;

static POOLS: OnceLock<Mutex<Vec<Option<DeviceMemoryResource>>>> = OnceLock::new();

/// The temporaries pool of `device`, made on first use.
pub(crate) fn pool(device: &Device) -> Result<DeviceMemoryResource> {
    const OP: &str = "copy temporaries";
    let mut pools = POOLS
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .map_err(|_| invalid(OP, "the temporaries table was poisoned by a panic"))?;
    let i = device.ordinal();
    if pools.len() <= i {
        pools.resize(i + 1, None);
    }
    if let Some(p) = &pools[i] {
        return Ok(p.clone());
    }
    let p = DeviceMemoryResource::with_options(
        device,
        DevicePoolOptions {
            dedicated: true,
            release_threshold: Some(KEEP_BYTES),
        },
    )?;
    pools[i] = Some(p.clone());
    Ok(p)
}

/// Gives the idle memory that copies of `device` keep for their temporaries back to the
/// system (up to [`KEEP_BYTES`] stay reserved after copies that needed a temporary:
/// overlapping copies, strided host transfers, copies between devices).
///
/// ```no_run
/// # fn main() -> stridekit::Result<()> {
/// let dev = stridekit::Device::open(0)?;
/// stridekit::release_copy_temporaries(&dev)?;
/// # Ok(()) }
/// ```
pub fn release_copy_temporaries(device: &Device) -> Result<()> {
    const OP: &str = "release_copy_temporaries";
    let pool = {
        let pools = match POOLS.get() {
            Some(p) => p,
            None => return Ok(()),
        };
        let pools = pools
            .lock()
            .map_err(|_| invalid(OP, "the temporaries table was poisoned by a panic"))?;
        pools.get(device.ordinal()).cloned().flatten()
    };
    match pool {
        Some(p) => p.trim_to(0),
        None => Ok(()),
    }
}
