//! Streams: one type, one rule for stream values, foreign handles checked at the edge.
//!
//! All GPU work in stridekit is ordered on cudarc's [`CudaStream`] (`Arc<CudaStream>`),
//! whether stridekit made the stream or another library did. Integers that name streams
//! (DLPack's `stream=` argument, the CUDA Array Interface's `stream` entry, the Python
//! package's `stream_ptr`, the C ABI's `stream`) follow one rule, the DLPack / array-API
//! meaning, decoded by [`StreamValue::decode`]:
//!
//! | value | meaning |
//! | --- | --- |
//! | -1 | no ordering: the caller orders the work; stridekit runs it on its own stream and waits |
//! | 0 | the legacy default stream, as CUDA reads a NULL handle (code written for cuda.core passes it); handed to a DLPack producer as 1 |
//! | 1 | the legacy default stream |
//! | 2 | the per-thread default stream |
//! | other positive | a `CUstream` handle |
//! | below -1 | refused |
//!
//! A handle is a pointer to a driver object, and the driver does not validate it: on
//! driver 580 a forged or destroyed handle crashes every stream query
//! (`cuStreamGetCtx`, `cuStreamGetId`, `cuStreamGetFlags`, `cuStreamQuery`,
//! `cuStreamGetDevice`) with SIGSEGV — measured by `tools/probe/stream_probe.c`. So a
//! handle becomes a stream only through [`StreamValue::resolve_handle`], which is
//! `unsafe`: the caller vouches that the handle is live, as every CUDA API asks. It still
//! refuses what cannot be a handle (the first page, misaligned values), asks the driver
//! which context owns the stream, and requires that context to be the device's primary
//! context. The safe [`StreamValue::resolve`] takes every value but a handle.

use crate::driver::{self, check, context::RestoreCurrent, types};
use crate::error::{driver as driver_err, invalid, Error, Result};
use crate::runtime::Runtime;
pub use cudarc::driver::CudaStream;
use std::sync::Arc;

/// A stream value as the protocols pass it, decoded but not yet bound to a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamValue {
    /// -1: no ordering.
    NoSync,
    /// 1: the legacy default stream.
    LegacyDefault,
    /// 2: the per-thread default stream.
    PerThreadDefault,
    /// A `CUstream` handle (unchecked until resolved).
    Handle(usize),
}

/// A stream value bound to a stream: what work is ordered on.
#[derive(Debug, Clone)]
pub enum StreamOrder {
    /// No ordering with the caller's work: stridekit's own stream, waited for.
    Unordered,
    /// Work is ordered on this stream.
    On(Arc<CudaStream>),
}

impl StreamValue {
    /// The one rule for stream integers (see the module docs).
    ///
    /// ```
    /// use stridekit::stream::StreamValue;
    /// assert_eq!(StreamValue::decode(-1)?, StreamValue::NoSync);
    /// assert_eq!(StreamValue::decode(1)?, StreamValue::LegacyDefault);
    /// assert_eq!(StreamValue::decode(0)?, StreamValue::LegacyDefault);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn decode(value: i64) -> Result<StreamValue> {
        const OP: &str = "StreamValue::decode";
        Ok(match value {
            -1 => StreamValue::NoSync,
            // CUDA's NULL stream: the legacy default stream (as cuda.core's callers mean it).
            0 | 1 => StreamValue::LegacyDefault,
            2 => StreamValue::PerThreadDefault,
            v if v < -1 => {
                return Err(invalid(
                    OP,
                    format!("stream {v} is neither a handle nor a stream value (-1, 1, 2)"),
                ))
            }
            h => StreamValue::Handle(h as usize),
        })
    }

    /// DLPack's `stream` argument of `__dlpack__`: absent means the legacy default stream.
    pub fn from_dlpack_arg(value: Option<i64>) -> Result<StreamValue> {
        value.map_or(Ok(StreamValue::LegacyDefault), StreamValue::decode)
    }

    /// The CUDA Array Interface's `stream` entry: absent means no ordering is needed; 0
    /// is refused, as the interface (version 3) disallows it in a producer's dictionary.
    pub fn from_cuda_array_interface(value: Option<i64>) -> Result<StreamValue> {
        match value {
            None => Ok(StreamValue::NoSync),
            Some(0) => Err(invalid(
                "StreamValue::from_cuda_array_interface",
                "the interface's stream is 0, which the CUDA Array Interface disallows (1 names the legacy default stream)",
            )),
            Some(v) => StreamValue::decode(v),
        }
    }

    /// The stream of a value that names no handle; `device` says whose default streams.
    /// A handle is refused here: use [`resolve_handle`](Self::resolve_handle).
    pub fn resolve(self, device: usize) -> Result<StreamOrder> {
        const OP: &str = "StreamValue::resolve";
        let rt = || Runtime::get(OP, device);
        Ok(match self {
            StreamValue::NoSync => StreamOrder::Unordered,
            StreamValue::LegacyDefault => StreamOrder::On(rt()?.context().default_stream()),
            StreamValue::PerThreadDefault => StreamOrder::On(rt()?.context().per_thread_stream()),
            StreamValue::Handle(h) => {
                return Err(invalid(
                    OP,
                    format!("stream {h:#x} is a raw handle, which no safe call can check; use StreamValue::resolve_handle"),
                ))
            }
        })
    }

    /// [`resolve`](Self::resolve), accepting handles too (see the module docs for what is
    /// checked).
    ///
    /// # Safety
    /// A [`StreamValue::Handle`] must be a live `CUstream` that stays live while the
    /// returned stream (or anything holding it) is used.
    pub unsafe fn resolve_handle(self, device: usize) -> Result<StreamOrder> {
        match self {
            // SAFETY: the caller's promise.
            StreamValue::Handle(h) => Ok(StreamOrder::On(unsafe { borrow_raw_stream(h)? })),
            v => v.resolve(device),
        }
    }
}

/// A foreign stream handle as a cudarc stream, after the checks in the module docs. The
/// caller's current context is left as it was.
///
/// # Safety
/// `handle` is a live `CUstream` that stays live while the result is used.
pub unsafe fn borrow_raw_stream(handle: usize) -> Result<Arc<CudaStream>> {
    const OP: &str = "borrow_raw_stream";
    if handle < 4096 || !handle.is_multiple_of(8) {
        return Err(invalid(
            OP,
            format!("{handle:#x} is not a stream handle: a handle points to a driver object (8-byte aligned, above the first page)"),
        ));
    }
    driver::ensure(OP)?;
    let raw = handle as types::CUstream;
    let mut ctx: types::CUcontext = std::ptr::null_mut();
    // SAFETY: the caller's promise that the handle is live.
    check(OP, "cuStreamGetCtx", unsafe {
        driver::stream::context_of(raw, &mut ctx)
    })?;
    let ordinal = {
        // SAFETY: the driver is loaded (ensure).
        let _restore = unsafe { RestoreCurrent::save() }
            .map_err(|e| driver_err(OP, "cuCtxGetCurrent")(cudarc::driver::DriverError(e)))?;
        // SAFETY: `ctx` owns a live stream, so it is live.
        check(OP, "cuCtxSetCurrent", unsafe {
            driver::context::set_current(ctx)
        })?;
        let mut dev = 0;
        // SAFETY: `ctx` is current.
        check(OP, "cuCtxGetDevice", unsafe {
            driver::stream::current_device(&mut dev)
        })?;
        dev as usize
    };
    let rt = Runtime::get(OP, ordinal)?;
    if rt.context().cu_ctx() != ctx {
        return Err(Error::Unsupported {
            op: OP,
            reason: format!("stream {handle:#x} belongs to a context of device {ordinal} other than its primary context; stridekit orders work in primary contexts (the CUDA runtime's)"),
        });
    }
    // SAFETY: the caller's promise; the stream belongs to this context (checked).
    Ok(unsafe { rt.context().wrap_borrowed_stream(raw) })
}

/// Makes `consumer` wait for the work queued so far on `producer` (an event, no host
/// wait). Nothing happens when both are the same stream. The calling thread's current
/// context is left as it was.
pub fn wait_for_producer(producer: &CudaStream, consumer: &CudaStream) -> Result<()> {
    const OP: &str = "wait_for_producer";
    if producer == consumer {
        return Ok(());
    }
    driver::ensure(OP)?;
    // SAFETY: the driver is loaded (ensure).
    let _restore = unsafe { RestoreCurrent::save() }
        .map_err(|e| driver_err(OP, "cuCtxGetCurrent")(cudarc::driver::DriverError(e)))?;
    consumer
        .join(producer)
        .map_err(driver_err(OP, "cuStreamWaitEvent"))
}

/// Runs `work` ordered as `order` says: on the caller's stream, or (unordered) on
/// stridekit's own stream of `device`, waited for before returning.
pub fn run_ordered<T>(
    order: &StreamOrder,
    device: usize,
    work: impl FnOnce(&Arc<CudaStream>) -> Result<T>,
) -> Result<T> {
    const OP: &str = "run_ordered";
    match order {
        StreamOrder::On(s) => work(s),
        StreamOrder::Unordered => {
            let own = Runtime::get(OP, device)?.library_stream(OP)?;
            let out = work(&own)?;
            own.synchronize()
                .map_err(driver_err(OP, "cuStreamSynchronize"))?;
            Ok(out)
        }
    }
}

/// The device of the calling thread's current context, or `None` when no context is
/// current (or no driver is loaded). The CUDA Array Interface places memory on this
/// device when the pointer cannot say (a zero-size array's null pointer).
pub fn current_device() -> Result<Option<usize>> {
    const OP: &str = "current_device";
    if driver::ensure(OP).is_err() {
        return Ok(None);
    }
    let mut ctx: types::CUcontext = std::ptr::null_mut();
    // SAFETY: the driver is loaded (ensure); valid out-pointer.
    check(OP, "cuCtxGetCurrent", unsafe {
        driver::context::get_current(&mut ctx)
    })?;
    if ctx.is_null() {
        return Ok(None);
    }
    let mut dev = 0;
    // SAFETY: a context is current (checked above).
    check(OP, "cuCtxGetDevice", unsafe {
        driver::stream::current_device(&mut dev)
    })?;
    Ok(usize::try_from(dev).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_stream_values() {
        assert_eq!(StreamValue::decode(-1).unwrap(), StreamValue::NoSync);
        assert_eq!(StreamValue::decode(1).unwrap(), StreamValue::LegacyDefault);
        assert_eq!(
            StreamValue::decode(2).unwrap(),
            StreamValue::PerThreadDefault
        );
        assert_eq!(
            StreamValue::decode(0x7f00).unwrap(),
            StreamValue::Handle(0x7f00)
        );
        assert_eq!(StreamValue::decode(0).unwrap(), StreamValue::LegacyDefault);
        assert!(StreamValue::decode(-5).is_err());
        assert_eq!(
            StreamValue::from_dlpack_arg(None).unwrap(),
            StreamValue::LegacyDefault
        );
        assert_eq!(
            StreamValue::from_cuda_array_interface(None).unwrap(),
            StreamValue::NoSync
        );
        assert!(StreamValue::from_cuda_array_interface(Some(0)).is_err());
    }

    #[test]
    fn a_handle_needs_the_unsafe_resolve() {
        let e = StreamValue::Handle(0x7f0000)
            .resolve(0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is a raw handle, which no safe call can check"),
            "{e}"
        );
        assert!(matches!(
            StreamValue::NoSync.resolve(0),
            Ok(StreamOrder::Unordered)
        ));
    }

    #[test]
    fn values_that_cannot_be_handles_are_refused_before_the_driver() {
        for forged in [0x3usize, 0x1234, 0x7f00_0000_0004] {
            // SAFETY: refused before any driver call (the point of the test).
            let e = unsafe { borrow_raw_stream(forged) }
                .unwrap_err()
                .to_string();
            assert!(e.contains("is not a stream handle"), "{e}");
        }
    }
}
