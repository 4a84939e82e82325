//! Streams and events given as raw handles (the edge where foreign streams come in).

use cudarc::driver::sys;

/// The context that owns `stream`.
///
/// # Safety
/// `stream` is a live stream handle. The driver does not validate handles: a forged or
/// destroyed one is dereferenced (driver 580 ends the process with SIGSEGV; see
/// `tools/probe/stream_probe.c`).
pub(crate) unsafe fn context_of(stream: sys::CUstream, out: &mut sys::CUcontext) -> sys::CUresult {
    // SAFETY: the caller's promise; valid out-pointer.
    unsafe { sys::cuStreamGetCtx(stream, out) }
}

/// The device of the current context.
///
/// # Safety
/// A context is current on the calling thread.
pub(crate) unsafe fn current_device(out: &mut sys::CUdevice) -> sys::CUresult {
    // SAFETY: the caller's promise; valid out-pointer.
    unsafe { sys::cuCtxGetDevice(out) }
}

/// Whether `stream` is being captured into a graph (`CU_STREAM_CAPTURE_STATUS_ACTIVE`;
/// an invalidated capture counts as capturing: work queued on it fails).
///
/// # Safety
/// `stream` is a live stream handle of a context current on the calling thread.
pub(crate) unsafe fn is_capturing(stream: sys::CUstream, out: &mut bool) -> sys::CUresult {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: the caller's promise; valid out-pointer.
    let r = unsafe { sys::cuStreamIsCapturing(stream, &mut status) };
    *out = status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    r
}
