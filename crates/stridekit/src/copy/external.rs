//! Copies ordered on a stream that stridekit did not create: a raw `CUstream` from C, or
//! a framework's stream from Python.

use super::CopyOptions;
use crate::device::Device;
use crate::dlpack::{ExchangeStream, StreamRef};
use crate::error::{check, Error, Result};
use crate::memory::MemoryKind;
use crate::view::access::Access;
use crate::view::{StridedMemoryViewBase, StridedMemoryViewMut};
use cudarc::driver::{sys, CudaStream};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// stridekit's own stream on `ordinal`, made once per process.
pub(crate) fn own_stream(op: &'static str, ordinal: usize) -> Result<Arc<CudaStream>> {
    static STREAMS: OnceLock<Mutex<HashMap<usize, Arc<CudaStream>>>> = OnceLock::new();
    let map = STREAMS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut m = map.lock().map_err(|_| Error::Invalid {
        op,
        rule: "the stream cache lock was poisoned by a panic in another thread".into(),
    })?;
    if let Some(s) = m.get(&ordinal) {
        return Ok(s.clone());
    }
    let s = Device::open(ordinal)?.new_stream()?;
    m.insert(ordinal, s.clone());
    Ok(s)
}

/// The device of a stream handle (through its context).
fn device_of_stream(op: &'static str, s: StreamRef) -> Result<Option<usize>> {
    let StreamRef::Handle(h) = s else {
        return Ok(None);
    };
    crate::driver::ensure(op)?;
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: the driver is loaded; valid out-pointer; the handle is a live stream (caller).
    check(op, "cuStreamGetCtx", unsafe {
        sys::cuStreamGetCtx(h as sys::CUstream, &mut ctx)
    })?;
    // SAFETY: `ctx` is a live context.
    check(op, "cuCtxPushCurrent", unsafe {
        sys::cuCtxPushCurrent_v2(ctx)
    })?;
    let mut dev: sys::CUdevice = 0;
    // SAFETY: a context is current; valid out-pointer.
    let got = check(op, "cuCtxGetDevice", unsafe {
        sys::cuCtxGetDevice(&mut dev)
    });
    let mut popped: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: pops the context pushed above.
    check(op, "cuCtxPopCurrent", unsafe {
        sys::cuCtxPopCurrent_v2(&mut popped)
    })?;
    got.map(|_| Some(dev as usize))
}

impl StridedMemoryViewMut<'_> {
    /// [`copy_from_with`](Self::copy_from_with) ordered on a stream given by a protocol
    /// value or a raw handle ([`ExchangeStream`]): the copy runs on stridekit's own stream
    /// of the views' device, which first waits for the work already queued on `stream`;
    /// `stream` then waits for the copy. [`ExchangeStream::NoSync`] runs the copy and
    /// waits for it. Copies between pageable host views run at once on the CPU.
    ///
    /// # Safety
    /// A [`StreamRef::Handle`] in `stream` must be a live `CUstream`.
    pub unsafe fn copy_from_on_stream<B: Access>(
        &mut self,
        src: &StridedMemoryViewBase<'_, B>,
        stream: ExchangeStream,
        opts: &CopyOptions<'_>,
    ) -> Result<()> {
        const OP: &str = "copy (external stream)";
        if self.kind() == MemoryKind::Host && src.kind() == MemoryKind::Host {
            return self.copy_from_with(src, None, opts);
        }
        let from_views = [self.as_view(), src.as_view()]
            .iter()
            .filter(|v| matches!(v.kind(), MemoryKind::Device | MemoryKind::Managed))
            .find_map(|v| v.device_ordinal());
        let from_stream = match stream {
            ExchangeStream::Stream(s) => device_of_stream(OP, s)?,
            ExchangeStream::NoSync => None,
        };
        let ordinal = from_views.or(from_stream).unwrap_or(0);
        // SAFETY: the caller's promise about `stream`.
        unsafe {
            crate::dlpack::with_ordered_stream(stream, ordinal, |own| {
                self.copy_from_with(src, Some(own), opts)
            })
        }
    }
}
