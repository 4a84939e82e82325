//! The stream rules of DLPack and the CUDA Array Interface, as one piece: decode the
//! protocols' stream values, and make a consumer stream wait for a producer's.

use crate::error::{check, invalid, Result};
use cudarc::driver::{sys, CudaStream};

/// A CUDA stream named by a protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamRef {
    /// The legacy default stream (protocol value 1).
    LegacyDefault,
    /// The per-thread default stream (protocol value 2).
    PerThreadDefault,
    /// A stream handle (`CUstream` as an integer).
    Handle(usize),
}

impl StreamRef {
    /// The stream of a cudarc stream (its handle, or the legacy default for the null one).
    pub fn of(stream: &CudaStream) -> StreamRef {
        match stream.cu_stream() as usize {
            0 => StreamRef::LegacyDefault,
            h => StreamRef::Handle(h),
        }
    }

    fn raw(self) -> sys::CUstream {
        match self {
            StreamRef::LegacyDefault => 0x1 as sys::CUstream,
            StreamRef::PerThreadDefault => 0x2 as sys::CUstream,
            StreamRef::Handle(h) => h as sys::CUstream,
        }
    }
}

/// What one side of an exchange says about streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExchangeStream {
    /// No synchronisation: the caller orders the work itself (DLPack `stream=-1`, a CUDA
    /// Array Interface without a `stream` entry, or stridekit's `stream_ptr=-1`).
    NoSync,
    /// Work is ordered on this stream.
    Stream(StreamRef),
}

impl ExchangeStream {
    fn from_int(op: &'static str, v: i64, protocol: &str) -> Result<Self> {
        Ok(match v {
            -1 => ExchangeStream::NoSync,
            0 => {
                return Err(invalid(
                    op,
                    format!("stream 0 is ambiguous and {protocol} disallows it; use 1 for the legacy default stream or 2 for the per-thread default stream"),
                ))
            }
            1 => ExchangeStream::Stream(StreamRef::LegacyDefault),
            2 => ExchangeStream::Stream(StreamRef::PerThreadDefault),
            h if h < -1 => {
                return Err(invalid(
                    op,
                    format!("stream {h} is neither a handle nor a protocol value (-1, 1, 2)"),
                ))
            }
            h => ExchangeStream::Stream(StreamRef::Handle(h as usize)),
        })
    }

    /// The consumer's `stream` argument of `__dlpack__` for a CUDA tensor: `None` means
    /// the legacy default stream, -1 no synchronisation, 1 and 2 the default streams,
    /// anything else a handle; 0 is refused.
    pub fn from_dlpack_arg(v: Option<i64>) -> Result<Self> {
        match v {
            None => Ok(ExchangeStream::Stream(StreamRef::LegacyDefault)),
            Some(v) => Self::from_int("ExchangeStream::from_dlpack_arg", v, "DLPack"),
        }
    }

    /// The `stream` entry of a CUDA Array Interface (v3): absent or `None` means no
    /// synchronisation is needed, 1 and 2 the default streams, anything else a handle;
    /// 0 is refused.
    pub fn from_cuda_array_interface(v: Option<i64>) -> Result<Self> {
        match v {
            None => Ok(ExchangeStream::NoSync),
            Some(v) => Self::from_int(
                "ExchangeStream::from_cuda_array_interface",
                v,
                "the CUDA Array Interface",
            ),
        }
    }
}

/// Makes `consumer` wait for the work queued so far on `producer` (an event recorded on
/// the producer, waited on by the consumer; neither host thread blocks). Nothing happens
/// when either side is [`ExchangeStream::NoSync`] or both are the same stream.
/// `device` is the device whose primary context is bound when the calling thread has no
/// current context (default-stream values need one).
pub fn wait_for_producer(
    producer: ExchangeStream,
    consumer: ExchangeStream,
    device: usize,
) -> Result<()> {
    const OP: &str = "wait_for_producer";
    let (p, c) = match (producer, consumer) {
        (ExchangeStream::Stream(p), ExchangeStream::Stream(c)) => (p, c),
        _ => return Ok(()),
    };
    if p == c {
        return Ok(());
    }
    crate::driver::ensure_current_context(OP, device)?;
    if let StreamRef::Handle(_) = p {
        // Record in the producer stream's own context.
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the driver is loaded (ensure_current_context); valid out-pointer; the
        // handle is a live stream (the protocol's contract).
        check(OP, "cuStreamGetCtx", unsafe {
            sys::cuStreamGetCtx(p.raw(), &mut ctx)
        })?;
        // SAFETY: `ctx` is the live context that owns the producer's stream.
        check(OP, "cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(ctx) })?;
    }
    let mut ev: sys::CUevent = std::ptr::null_mut();
    // SAFETY: a context is current; valid out-pointer; a documented flag.
    check(OP, "cuEventCreate", unsafe {
        sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
    })?;
    // SAFETY: `ev` was just created; both streams are live (protocol contract).
    let recorded = check(OP, "cuEventRecord", unsafe {
        sys::cuEventRecord(ev, p.raw())
    })
    .and_then(|_| {
        // SAFETY: as above.
        check(OP, "cuStreamWaitEvent", unsafe {
            sys::cuStreamWaitEvent(c.raw(), ev, 0)
        })
    });
    // SAFETY: `ev` is ours; a wait already enqueued keeps its meaning after the destroy.
    let destroyed = check(OP, "cuEventDestroy", unsafe { sys::cuEventDestroy_v2(ev) });
    recorded.and(destroyed)
}

/// Runs `work` on stridekit's own stream of `device` ([`Device::library_stream`]) so that
/// it is ordered after what is already queued on `stream`, and what is queued on `stream`
/// afterwards is ordered after it (event waits both ways; the host does not block). With
/// [`ExchangeStream::NoSync`] the work runs and is waited for.
///
/// [`Device::library_stream`]: crate::Device::library_stream
///
/// # Safety
/// A [`StreamRef::Handle`] in `stream` must be a live `CUstream`.
pub unsafe fn with_ordered_stream<T>(
    stream: ExchangeStream,
    device: usize,
    work: impl FnOnce(&std::sync::Arc<CudaStream>) -> Result<T>,
) -> Result<T> {
    const OP: &str = "with_ordered_stream";
    let own = crate::Device::open(device)?.library_stream()?;
    let mine = ExchangeStream::Stream(StreamRef::of(&own));
    wait_for_producer(stream, mine, device)?;
    let out = work(&own)?;
    match stream {
        ExchangeStream::NoSync => own
            .synchronize()
            .map_err(crate::error::driver(OP, "cuStreamSynchronize"))?,
        s => wait_for_producer(mine, s, device)?,
    }
    Ok(out)
}
