//! The GPU work queued on a piece of memory, so that nothing frees, reuses or reads it
//! before that work is done (as cudarc's `CudaSlice` does with its read and write events).
//!
//! Every use of the memory on a stream first makes that stream wait for the last recorded
//! use, then records itself: uses on different streams are ordered one after another, so
//! the last event stands for all of them. A release waits for it on the releasing stream
//! (or on the host, for memory whose free is not stream-ordered); a host read waits for
//! it on the host.

use crate::error::{driver, Error, Result};
use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::{Arc, Mutex, MutexGuard};

/// The last GPU use of some memory.
#[derive(Debug, Default)]
pub(crate) struct PendingWork {
    last: Mutex<Option<Arc<CudaEvent>>>,
}

impl PendingWork {
    fn lock(&self, op: &'static str) -> Result<MutexGuard<'_, Option<Arc<CudaEvent>>>> {
        self.last.lock().map_err(|_| Error::Internal {
            op,
            what: "a buffer's pending-work lock was poisoned by a panic in another thread"
                .into(),
        })
    }

    /// The last recorded use, if any.
    pub(crate) fn last(&self, op: &'static str) -> Result<Option<Arc<CudaEvent>>> {
        Ok(self.lock(op)?.clone())
    }

    /// Orders `stream` after every use recorded so far.
    pub(crate) fn order_before(&self, op: &'static str, stream: &CudaStream) -> Result<()> {
        match self.last(op)? {
            Some(ev) => stream.wait(&ev).map_err(driver(op, "cuStreamWaitEvent")),
            None => Ok(()),
        }
    }

    /// Records `event` (just recorded on the stream of a use) as the last use.
    pub(crate) fn record(&self, op: &'static str, event: &Arc<CudaEvent>) -> Result<()> {
        *self.lock(op)? = Some(event.clone());
        Ok(())
    }

    /// Blocks the calling thread until every recorded use is done.
    pub(crate) fn wait_host(&self, op: &'static str) -> Result<()> {
        match self.last(op)? {
            Some(ev) => ev
                .synchronize()
                .map_err(driver(op, "cuEventSynchronize")),
            None => Ok(()),
        }
    }
}

/// Records the end of the work just queued on `stream`, as one event to store in every
/// piece of memory it used.
pub(crate) fn mark(op: &'static str, stream: &CudaStream) -> Result<Arc<CudaEvent>> {
    stream
        .record_event(None)
        .map(Arc::new)
        .map_err(driver(op, "cuEventRecord"))
}
