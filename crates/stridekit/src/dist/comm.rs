//! `Communicator`: what every transport of `dist` offers (rank, size, device), and the
//! sealed byte-moving interface the transfers are built on.

use crate::error::{Error, Result};
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// A group of ranks that move bytes between their devices: [`NcclComm`](super::NcclComm)
/// (feature `nccl`) or [`LocalComm`](super::LocalComm) (ranks of one process). Every
/// transfer of [`dist`](super) takes one; the packing, checks and records are the same
/// whatever moves the bytes. Not `Sync`: a communicator is used by one thread at a time.
pub trait Communicator: Send + wire::Wire {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// The ordinal of the device this rank's memory and streams belong to.
    fn device(&self) -> usize;
}

pub(crate) mod wire {
    use super::*;

    /// How a transport moves bytes: sends and receives of device memory, queued on a
    /// stream and matched in order per pair of ranks, optionally inside a group (all of a
    /// group's transfers may progress together, so they cannot deadlock on each other).
    /// Sealed: only stridekit's transports implement it.
    pub trait Wire {
        /// Fails when the transport can no longer move bytes (aborted after a failure).
        fn check_usable(&self, op: &'static str) -> Result<()>;
        /// Starts a group.
        fn group_start(&self, op: &'static str) -> Result<()>;
        /// Ends a group: its transfers are queued on their streams.
        fn group_end(&self, op: &'static str) -> Result<()>;
        /// Queues a send of `len` bytes at `ptr` to `peer` on `stream`.
        ///
        /// # Safety
        /// `ptr..ptr + len` is device memory of this rank's device, valid and unwritten
        /// until the work queued on `stream` is done; `stream` belongs to that device.
        unsafe fn send_bytes(
            &self,
            op: &'static str,
            ptr: u64,
            len: usize,
            peer: usize,
            stream: &Arc<CudaStream>,
        ) -> Result<()>;
        /// Queues a receive of `len` bytes into `ptr` from `peer` on `stream`.
        ///
        /// # Safety
        /// As for [`send_bytes`](Self::send_bytes), and nothing else reads or writes the
        /// memory until the work is done.
        unsafe fn recv_bytes(
            &self,
            op: &'static str,
            ptr: u64,
            len: usize,
            peer: usize,
            stream: &Arc<CudaStream>,
        ) -> Result<()>;
        /// After a transfer failed: aborts the transport so that no peer waits for it
        /// forever, and returns the error to report.
        fn fail(&self, op: &'static str, error: Error) -> Error;
    }
}

/// Fails unless `stream` belongs to the communicator's device.
pub(crate) fn check_stream<C: Communicator + ?Sized>(
    op: &'static str,
    comm: &C,
    stream: &CudaStream,
) -> Result<()> {
    let s = stream.context().ordinal();
    if s == comm.device() {
        Ok(())
    } else {
        Err(crate::error::invalid(
            op,
            format!(
                "the stream belongs to device {s} but rank {}'s communicator to device {}; give a stream of device {}",
                comm.rank(),
                comm.device(),
                comm.device()
            ),
        ))
    }
}

/// Fails unless `peer` is a rank of the communicator.
pub(crate) fn check_peer<C: Communicator + ?Sized>(
    op: &'static str,
    comm: &C,
    peer: usize,
) -> Result<()> {
    if peer < comm.size() {
        Ok(())
    } else {
        Err(crate::error::invalid(
            op,
            format!(
                "peer {peer} is not a rank of this communicator (ranks 0..{})",
                comm.size()
            ),
        ))
    }
}
