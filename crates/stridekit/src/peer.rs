//! Peer access between devices: whether one device's kernels may read and write another
//! device's memory. Enabled once per ordered pair and remembered (in the owner's
//! runtime); copies across devices use it when it is on, and stage through pinned host
//! memory when it is not.
//!
//! Memory from stream-ordered pools is not covered by context peer access: every pool of
//! the owning device (its default pool, and each pool a `DeviceMemoryResource` made) is
//! given the same access, now and when a pool is made later.

use crate::driver::{self, check, types::CUresult};
use crate::error::Result;
use crate::runtime::Runtime;

/// Whether the hardware lets `accessor`'s kernels reach `owner`'s memory.
pub fn can_access_peer(accessor: usize, owner: usize) -> Result<bool> {
    const OP: &str = "peer::can_access_peer";
    let (a, o) = (Runtime::get(OP, accessor)?, Runtime::get(OP, owner)?);
    let mut can = 0;
    // SAFETY: both device handles come from live primary contexts; valid out-pointer.
    check(OP, "cuDeviceCanAccessPeer", unsafe {
        driver::context::can_access_peer(&mut can, a.context().cu_device(), o.context().cu_device())
    })?;
    Ok(can != 0)
}

/// Enables `accessor`'s access to `owner`'s memory (once; later calls only look it up).
/// Answers whether access is on: false when the hardware cannot, or when
/// [`disable_peer_access`] turned it off (call this again to turn it back on).
pub fn enable_peer_access(accessor: usize, owner: usize) -> Result<bool> {
    set(accessor, owner, true)
}

/// Turns `accessor`'s access to `owner`'s memory off; copies between the two then stage
/// through pinned host memory.
pub fn disable_peer_access(accessor: usize, owner: usize) -> Result<()> {
    set(accessor, owner, false).map(|_| ())
}

fn set(accessor: usize, owner: usize, on: bool) -> Result<bool> {
    const OP: &str = "peer access";
    if accessor == owner {
        return Ok(true);
    }
    let (a, o) = (Runtime::get(OP, accessor)?, Runtime::get(OP, owner)?);
    o.set_peer_state(OP, accessor, |known| {
        if known == Some(on) {
            return Ok(on);
        }
        if on && !can_access_peer(accessor, owner)? {
            return Ok(false);
        }
        a.bind(OP)?;
        // SAFETY: the accessor's context is current; the owner's primary context is live.
        let r = unsafe { driver::context::set_peer_access(o.context().cu_ctx(), on) };
        match r {
            CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
            | CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED => {}
            other => check(
                OP,
                if on {
                    "cuCtxEnablePeerAccess"
                } else {
                    "cuCtxDisablePeerAccess"
                },
                other,
            )?,
        }
        for pool in o.pools(OP)? {
            // SAFETY: a live pool of `owner`, another device as accessor.
            check(OP, "cuMemPoolSetAccess", unsafe {
                driver::memory::pool_set_access(pool, accessor as i32, on)
            })?;
        }
        Ok(on)
    })
}

/// Whether copies may let `accessor`'s kernels touch `owner`'s memory: enables access
/// the first time a pair is used, unless the caller turned it off.
pub(crate) fn usable(accessor: usize, owner: usize) -> Result<bool> {
    const OP: &str = "peer access";
    if accessor == owner {
        return Ok(true);
    }
    match Runtime::get(OP, owner)?.peer_state(OP, accessor)? {
        Some(on) => Ok(on),
        None => enable_peer_access(accessor, owner),
    }
}
