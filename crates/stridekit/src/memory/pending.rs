//! The GPU work queued on a piece of memory, so that nothing frees, reuses or reads it
//! before that work is done (as cudarc's `CudaSlice` does with its read and write events).
//!
//! Every use of the memory on a stream first makes that stream wait for the last recorded
//! use (unless it ran on the same stream, which orders them already), then records
//! itself: uses on different streams are ordered one after another, so the last event
//! stands for all of them. A release waits for it on the releasing stream (or on the
//! host, for memory whose free is not stream-ordered); a host read waits for it on the
//! host. Events come from the device runtime's pool, so a use costs one
//! `cuEventRecord` (and one `cuStreamWaitEvent` when the stream changes).

use crate::error::{driver, Error, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::{Arc, Mutex, MutexGuard};

/// An event recorded at the end of some work on a stream; its event goes back to the
/// device's pool when the last holder drops it.
#[derive(Debug)]
pub(crate) struct Mark {
    event: Option<CudaEvent>,
    /// The stream it was recorded on: (context, stream) handles.
    stream: (usize, usize),
    runtime: Arc<Runtime>,
}

impl Mark {
    /// The event (recorded when the mark was made; cudarc may record it again).
    pub(crate) fn event(&self) -> Result<&CudaEvent> {
        self.event.as_ref().ok_or_else(|| Error::Internal {
            op: "pending work",
            what: "a recorded event was taken before its mark was dropped".into(),
        })
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        if let Some(e) = self.event.take() {
            self.runtime.recycle_event(e);
        }
    }
}

fn identity(stream: &CudaStream) -> (usize, usize) {
    (
        stream.context().cu_ctx() as usize,
        stream.cu_stream() as usize,
    )
}

/// The last GPU use of some memory.
#[derive(Debug, Default)]
pub(crate) struct PendingWork {
    last: Mutex<Option<Arc<Mark>>>,
}

impl PendingWork {
    fn lock(&self, op: &'static str) -> Result<MutexGuard<'_, Option<Arc<Mark>>>> {
        self.last.lock().map_err(|_| Error::Internal {
            op,
            what: "a buffer's pending-work lock was poisoned by a panic in another thread".into(),
        })
    }

    /// The last recorded use, if any.
    fn last(&self, op: &'static str) -> Result<Option<Arc<Mark>>> {
        Ok(self.lock(op)?.clone())
    }

    /// Orders `stream` after every use recorded so far.
    pub(crate) fn order_before(&self, op: &'static str, stream: &CudaStream) -> Result<()> {
        match self.last(op)? {
            Some(m) if m.stream != identity(stream) => stream
                .wait(m.event()?)
                .map_err(driver(op, "cuStreamWaitEvent")),
            _ => Ok(()),
        }
    }

    /// Records `mark` (just recorded on the stream of a use) as the last use.
    pub(crate) fn record(&self, op: &'static str, mark: &Arc<Mark>) -> Result<()> {
        *self.lock(op)? = Some(mark.clone());
        Ok(())
    }

    /// Folds `other` (a use recorded elsewhere, for instance by cudarc) into the record:
    /// `stream` waits for it and for the last use, then records the new last use. Held
    /// under the lock, so concurrent merges never lose one another.
    pub(crate) fn merge(&self, op: &'static str, other: &Mark, stream: &CudaStream) -> Result<()> {
        let mut last = self.lock(op)?;
        stream
            .wait(other.event()?)
            .map_err(driver(op, "cuStreamWaitEvent"))?;
        if let Some(l) = last.as_ref() {
            stream
                .wait(l.event()?)
                .map_err(driver(op, "cuStreamWaitEvent"))?;
        }
        *last = Some(mark(op, stream)?);
        Ok(())
    }

    /// Blocks the calling thread until every recorded use is done.
    pub(crate) fn wait_host(&self, op: &'static str) -> Result<()> {
        match self.last(op)? {
            Some(m) => m
                .event()?
                .synchronize()
                .map_err(driver(op, "cuEventSynchronize")),
            None => Ok(()),
        }
    }
}

/// Records the end of the work just queued on `stream`, as one mark to store in every
/// piece of memory it used.
pub(crate) fn mark(op: &'static str, stream: &CudaStream) -> Result<Arc<Mark>> {
    let runtime = Runtime::of_stream(op, stream)?;
    let event = runtime.event(op)?;
    event.record(stream).map_err(driver(op, "cuEventRecord"))?;
    Ok(Arc::new(Mark {
        event: Some(event),
        stream: identity(stream),
        runtime,
    }))
}
