//! Contexts: the calling thread's current context, and peer access between contexts.

use cudarc::driver::sys;

/// The calling thread's current context, or null.
///
/// # Safety
/// The driver library is loaded and initialised (`driver::ensure`).
pub(crate) unsafe fn get_current(out: &mut sys::CUcontext) -> sys::CUresult {
    // SAFETY: `out` is a valid out-pointer; the caller loaded the driver.
    unsafe { sys::cuCtxGetCurrent(out) }
}

/// Makes `ctx` (or no context, for null) current on the calling thread.
///
/// # Safety
/// `ctx` is null or a live context.
pub(crate) unsafe fn set_current(ctx: sys::CUcontext) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuCtxSetCurrent(ctx) }
}

/// Whether device `accessor` can reach device `owner`'s memory.
///
/// # Safety
/// Both are device handles from `cuDeviceGet`.
pub(crate) unsafe fn can_access_peer(
    out: &mut i32,
    accessor: sys::CUdevice,
    owner: sys::CUdevice,
) -> sys::CUresult {
    // SAFETY: the caller's promise; valid out-pointer.
    unsafe { sys::cuDeviceCanAccessPeer(out, accessor, owner) }
}

/// Enables (or disables) the current context's access to `peer`'s memory.
///
/// # Safety
/// A context is current; `peer` is a live context of another device.
pub(crate) unsafe fn set_peer_access(peer: sys::CUcontext, on: bool) -> sys::CUresult {
    // SAFETY: the caller's promise; flags must be 0.
    unsafe {
        if on {
            sys::cuCtxEnablePeerAccess(peer, 0)
        } else {
            sys::cuCtxDisablePeerAccess(peer)
        }
    }
}

/// Restores the calling thread's current context when dropped: driver calls that need a
/// context of their own leave the caller's binding as they found it.
pub(crate) struct RestoreCurrent {
    previous: sys::CUcontext,
}

impl RestoreCurrent {
    /// Remembers the current context.
    ///
    /// # Safety
    /// The driver library is loaded and initialised.
    pub(crate) unsafe fn save() -> Result<RestoreCurrent, sys::CUresult> {
        let mut previous: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the caller's promise; valid out-pointer.
        match unsafe { get_current(&mut previous) } {
            sys::CUresult::CUDA_SUCCESS => Ok(RestoreCurrent { previous }),
            e => Err(e),
        }
    }
}

impl Drop for RestoreCurrent {
    fn drop(&mut self) {
        // SAFETY: `previous` was current when saved; a context current on a thread is
        // retained by whoever made it current, so it is still live (or null).
        let _ = unsafe { set_current(self.previous) };
    }
}
