//! The transfers built on [`Batch`]: one send or receive, all-to-all, and the
//! redistribution of a tensor split along one axis into a split along another.

use super::batch::Batch;
use super::comm::Communicator;
use crate::error::{invalid, Result};
use crate::view::access::Access;
use crate::view::{StridedMemoryView, StridedMemoryViewBase, StridedMemoryViewMut};
use cudarc::driver::CudaStream;
use std::sync::Arc;
use stridekit_layout::dist::{redistribution, Split};

/// Sends `view` (any layout) to `peer`, which receives it with [`recv`] into a view of the
/// same shape, itemsize and element type (checked on both ranks first). On `stream`;
/// returns once queued.
pub fn send<C: Communicator + ?Sized, A: Access>(
    comm: &C,
    view: &StridedMemoryViewBase<'_, A>,
    peer: usize,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let mut b = Batch::new(comm);
    b.send(view, peer)?;
    b.run(stream)
}

/// Receives from `peer` into `view` (any layout); see [`send`].
pub fn recv<C: Communicator + ?Sized>(
    comm: &C,
    view: &mut StridedMemoryViewMut<'_>,
    peer: usize,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let mut b = Batch::new(comm);
    b.recv(view, peer)?;
    b.run(stream)
}

/// Every rank sends `sends[r]` to rank `r` and receives rank `r`'s into `recvs[r]`
/// (one view per rank on each side, any layouts; each pair checked first). Every rank
/// of `comm` must call it. [`all_to_all_batch`] gives the batch, to check once and run
/// many times.
pub fn all_to_all<C: Communicator + ?Sized>(
    comm: &C,
    sends: &[StridedMemoryView<'_>],
    recvs: &mut [StridedMemoryViewMut<'_>],
    stream: &Arc<CudaStream>,
) -> Result<()> {
    all_to_all_batch(comm, sends, recvs)?.run(stream)
}

/// The transfers of [`all_to_all`] posted in a [`Batch`] of every rank, not yet run.
pub fn all_to_all_batch<'a, C: Communicator + ?Sized>(
    comm: &'a C,
    sends: &'a [StridedMemoryView<'_>],
    recvs: &'a mut [StridedMemoryViewMut<'_>],
) -> Result<Batch<'a, C>> {
    const OP: &str = "dist::all_to_all";
    let n = comm.size();
    if sends.len() != n || recvs.len() != n {
        return Err(invalid(
            OP,
            format!(
                "{} send views and {} receive views for {n} ranks; give one of each per rank",
                sends.len(),
                recvs.len()
            ),
        ));
    }
    let mut b = Batch::collective(comm);
    for (r, v) in sends.iter().enumerate() {
        b.send(v, r)?;
    }
    for (r, v) in recvs.iter_mut().enumerate() {
        b.recv(v, r)?;
    }
    Ok(b)
}

/// A tensor of global `shape` split over the ranks along one axis (`from`) becomes the
/// same tensor split along another (`to`; or the same axis cut otherwise): `src` is this
/// rank's part before ([`Split::local_shape`] of `from`), `dst` its part after, both
/// in any layout. Each box that moves is packed from `src` in one pass of the copy
/// engine (the permute fused into the pack), moved, and unpacked into `dst` in one
/// pass (or received in place where the box is dense in `dst`); the box a rank keeps is
/// one copy. Every rank of `comm` must call it, with the same `shape`, splits and
/// element type (checked first). [`redistribute_batch`] gives the batch, to check once
/// and run many times.
pub fn redistribute<C: Communicator + ?Sized, A: Access>(
    comm: &C,
    shape: &[i64],
    from: &Split,
    to: &Split,
    src: &StridedMemoryViewBase<'_, A>,
    dst: &mut StridedMemoryViewMut<'_>,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    redistribute_batch(comm, shape, from, to, src, dst)?.run(stream)
}

/// The transfers of [`redistribute`] posted in a [`Batch`] of every rank, not yet run.
pub fn redistribute_batch<'a, C: Communicator + ?Sized, A: Access>(
    comm: &'a C,
    shape: &[i64],
    from: &Split,
    to: &Split,
    src: &'a StridedMemoryViewBase<'_, A>,
    dst: &'a mut StridedMemoryViewMut<'_>,
) -> Result<Batch<'a, C>> {
    const OP: &str = "dist::redistribute";
    let (n, me) = (comm.size(), comm.rank());
    if from.ranks != n || to.ranks != n {
        return Err(invalid(
            OP,
            format!(
                "the splits are over {} and {} ranks, the communicator has {n}",
                from.ranks, to.ranks
            ),
        ));
    }
    let (src_shape, dst_shape) = (from.local_shape(shape, me)?, to.local_shape(shape, me)?);
    if src.shape() != src_shape.as_slice() || dst.shape() != dst_shape.as_slice() {
        return Err(invalid(
            OP,
            format!(
                "rank {me}'s parts of a {shape:?} tensor are {:?} before and {:?} after; the views are {:?} and {:?}",
                src_shape.as_slice(),
                dst_shape.as_slice(),
                src.shape(),
                dst.shape()
            ),
        ));
    }
    let (src_origin, dst_origin) = (from.origin(shape, me)?, to.origin(shape, me)?);
    let s = src.operand(OP)?.read_only();
    let d = dst.operand(OP)?;
    let mut b = Batch::collective(comm);
    for t in redistribution(shape, from, to)? {
        if t.from == me {
            let l = t.in_local(s.layout(), &src_origin)?;
            b.push(t.to, true, s.relayout(OP, l)?)?;
        }
        if t.to == me {
            let l = t.in_local(d.layout(), &dst_origin)?;
            b.push(t.from, false, d.relayout(OP, l)?)?;
        }
    }
    Ok(b)
}
