//! Peer access between devices: whether one device's kernels may read and write another
//! device's memory. Enabled once per ordered pair and remembered; copies across devices
//! use it when it is on, and stage through pinned host memory when it is not.
//!
//! Memory from stream-ordered pools is not covered by context peer access: every pool of
//! the owning device (its default pool, and each pool a `DeviceMemoryResource` made) is
//! given the same access, now and when a pool is made later.

use crate::device::Device;
use crate::error::{check, Error, Result};
use cudarc::driver::sys;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// What stridekit knows of each (accessor, owner) pair: Some(true) enabled, Some(false)
/// off (unsupported, or disabled by the caller), None not yet asked.
fn state() -> &'static Mutex<HashMap<(usize, usize), bool>> {
    static STATE: OnceLock<Mutex<HashMap<(usize, usize), bool>>> = OnceLock::new();
    STATE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn lock(op: &'static str) -> Result<std::sync::MutexGuard<'static, HashMap<(usize, usize), bool>>> {
    state().lock().map_err(|_| Error::Invalid {
        op,
        rule: "the peer-access table lock was poisoned by a panic in another thread".into(),
    })
}

/// The memory pools of each device (`CUmemoryPool` as integers), default pools excluded.
fn pools() -> &'static Mutex<HashMap<usize, Vec<usize>>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Vec<usize>>>> = OnceLock::new();
    POOLS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn set_pool_access(
    op: &'static str,
    pool: sys::CUmemoryPool,
    accessor: usize,
    on: bool,
) -> Result<()> {
    // SAFETY: zeroed is a valid CUmemAccessDesc (plain C struct of enums and ints).
    let mut d: sys::CUmemAccessDesc = unsafe { std::mem::zeroed() };
    d.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = accessor as i32;
    d.flags = if on {
        sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    } else {
        sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE
    };
    // SAFETY: `pool` is a live pool of another device than `accessor`; one descriptor.
    check(op, "cuMemPoolSetAccess", unsafe {
        sys::cuMemPoolSetAccess(pool, &d, 1)
    })
}

/// Every pool of `owner`: its default pool and the registered ones.
fn pools_of(op: &'static str, owner: usize) -> Result<Vec<sys::CUmemoryPool>> {
    let dev = Device::open(owner)?;
    let mut default: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: valid out-pointer and a device handle from an opened device.
    check(op, "cuDeviceGetDefaultMemPool", unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut default, dev.context().cu_device())
    })?;
    let mut all = vec![default];
    if let Ok(p) = pools().lock() {
        all.extend(
            p.get(&owner)
                .into_iter()
                .flatten()
                .map(|&h| h as sys::CUmemoryPool),
        );
    }
    Ok(all)
}

/// Records a pool of `owner` made by a `DeviceMemoryResource`, and gives it the peer
/// access already enabled towards `owner`.
pub(crate) fn register_pool(owner: usize, pool: sys::CUmemoryPool) -> Result<()> {
    const OP: &str = "DeviceMemoryResource::new";
    let enabled: Vec<usize> = lock(OP)?
        .iter()
        .filter(|(&(a, o), &on)| on && o == owner && a != owner)
        .map(|(&(a, _), _)| a)
        .collect();
    for a in enabled {
        set_pool_access(OP, pool, a, true)?;
    }
    if let Ok(mut p) = pools().lock() {
        p.entry(owner).or_default().push(pool as usize);
    }
    Ok(())
}

/// Forgets a destroyed pool.
pub(crate) fn unregister_pool(owner: usize, pool: sys::CUmemoryPool) {
    if let Ok(mut p) = pools().lock() {
        if let Some(v) = p.get_mut(&owner) {
            v.retain(|&h| h != pool as usize);
        }
    }
}

/// Whether the hardware lets `accessor`'s kernels reach `owner`'s memory.
pub fn can_access_peer(accessor: usize, owner: usize) -> Result<bool> {
    const OP: &str = "peer::can_access_peer";
    let (a, o) = (Device::open(accessor)?, Device::open(owner)?);
    let mut can = 0;
    // SAFETY: both device handles come from opened devices; valid out-pointer.
    check(OP, "cuDeviceCanAccessPeer", unsafe {
        sys::cuDeviceCanAccessPeer(&mut can, a.context().cu_device(), o.context().cu_device())
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
    let mut m = lock(OP)?;
    let known = m.get(&(accessor, owner)).copied();
    if known == Some(on) {
        return Ok(on);
    }
    if on && !can_access_peer(accessor, owner)? {
        m.insert((accessor, owner), false);
        return Ok(false);
    }
    let (a, o) = (Device::open(accessor)?, Device::open(owner)?);
    a.bind(OP)?;
    // SAFETY: the accessor's context is current; the owner's context is a live primary context.
    let r = unsafe {
        if on {
            sys::cuCtxEnablePeerAccess(o.context().cu_ctx(), 0)
        } else {
            sys::cuCtxDisablePeerAccess(o.context().cu_ctx())
        }
    };
    match r {
        sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
        | sys::CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED => {}
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
    for pool in pools_of(OP, owner)? {
        set_pool_access(OP, pool, accessor, on)?;
    }
    m.insert((accessor, owner), on);
    Ok(on)
}

/// Whether copies may let `accessor`'s kernels touch `owner`'s memory: enables access
/// the first time a pair is used, unless the caller turned it off.
pub(crate) fn usable(accessor: usize, owner: usize) -> Result<bool> {
    if accessor == owner {
        return Ok(true);
    }
    let known = lock("peer access")?.get(&(accessor, owner)).copied();
    match known {
        Some(on) => Ok(on),
        None => enable_peer_access(accessor, owner),
    }
}
