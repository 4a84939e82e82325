//! `Batch`: sends and receives of views of any layout, checked against the peers' and
//! moved in one group. Views that are dense in row-major order on the communicator's
//! device travel in place; any other is packed into (or unpacked from) a dense
//! temporary by the copy engine in one pass, on the caller's stream.

use super::comm::{check_peer, check_stream, Communicator};
use super::handshake::{agree, Posted};
use crate::copy::{copy_into, temporaries_pool, CopyOptions, Operand};
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{invalid, Result};
use crate::memory::{finish, Buffer, MemoryKind, MemoryResource, Usage, Use};
use crate::view::access::Access;
use crate::view::{StridedMemoryViewBase, StridedMemoryViewMut};
use cudarc::driver::CudaStream;
use std::sync::Arc;
use stridekit_layout::dist::Header;
use stridekit_layout::{Order, StridedLayout};

/// Transfers posted together and moved in one group: each send to a peer meets, in
/// order, a receive of that peer from this rank. [`run`](Batch::run) first swaps a small
/// header with every peer (extents, itemsize, element type of each transfer): a
/// mismatch is an error on both ranks and nothing moves.
///
/// ```no_run
/// # fn main() -> stridekit::Result<()> {
/// use stridekit::dist::{local_world, Batch};
/// use stridekit::{Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout};
/// use stridekit::{StridedMemoryView, StridedMemoryViewMut};
/// let mut world = local_world(&[0, 0])?; // two ranks of this process on GPU 0
/// let (r1, r0) = (world.pop().unwrap(), world.pop().unwrap());
/// let dev = Device::open(0)?;
/// let (s0, s1) = (dev.new_stream()?, dev.new_stream()?);
/// let mr = DeviceMemoryResource::new(&dev)?;
/// let (a, mut b) = (mr.allocate(4 * 64, &s0)?, mr.allocate(4 * 64, &s1)?);
/// let src = StridedMemoryView::from_buffer(&a, StridedLayout::dense(&[8, 8], 4, Order::F)?, None)?;
/// let mut dst =
///     StridedMemoryViewMut::from_buffer_mut(&mut b, StridedLayout::dense(&[8, 8], 4, Order::C)?, None)?;
/// std::thread::scope(|t| {
///     let rank1 = t.spawn(move || {
///         let mut g = Batch::new(&r1);
///         g.recv(&mut dst, 0)?; // a column-major 8x8 arrives row-major
///         g.run(&s1)
///     });
///     let mut g = Batch::new(&r0);
///     g.send(&src, 1)?;
///     g.run(&s0)?;
///     rank1.join().expect("rank 1 panicked")
/// })?;
/// # Ok(()) }
/// ```
pub struct Batch<'a, C: Communicator + ?Sized> {
    comm: &'a C,
    ops: Vec<Op<'a>>,
    collective: bool,
    self_through_transport: bool,
}

struct Op<'a> {
    peer: usize,
    send: bool,
    operand: Operand<'a>,
    header: Header,
}

/// The bytes one transfer moves: in place in the view's memory, or in a temporary.
enum Wire {
    InPlace { ptr: u64, len: usize },
    Temporary(Buffer),
    Empty,
}

const OP: &str = "dist";

impl<'a, C: Communicator + ?Sized> Batch<'a, C> {
    /// An empty batch on `comm`.
    pub fn new(comm: &'a C) -> Self {
        Batch {
            comm,
            ops: Vec::new(),
            collective: false,
            self_through_transport: false,
        }
    }

    /// A batch every rank of `comm` runs: the header swap includes every rank, so a
    /// rank that posted nothing to another still checks with it.
    pub(crate) fn collective(comm: &'a C) -> Self {
        Batch {
            collective: true,
            ..Batch::new(comm)
        }
    }

    /// Whether transfers of this rank to itself go through the transport (NCCL's send to
    /// oneself) instead of one pass of the copy engine from the send's view into the
    /// receive's (the default, `false`: the fastest way, and what a rank's own part of an
    /// all-to-all or a redistribution takes). `true` measures or tests the transport.
    pub fn self_through_transport(&mut self, on: bool) -> &mut Self {
        self.self_through_transport = on;
        self
    }

    /// Posts a send of `view` (any layout, any memory the copy engine reaches) to `peer`.
    pub fn send<A: Access>(
        &mut self,
        view: &'a StridedMemoryViewBase<'_, A>,
        peer: usize,
    ) -> Result<()> {
        let operand = view.operand(OP)?.read_only();
        self.push(peer, true, operand)
    }

    /// Posts a receive from `peer` into `view` (any layout without two elements at one
    /// address).
    pub fn recv(&mut self, view: &'a mut StridedMemoryViewMut<'_>, peer: usize) -> Result<()> {
        let operand = view.operand(OP)?;
        self.push(peer, false, operand)
    }

    pub(crate) fn push(&mut self, peer: usize, send: bool, operand: Operand<'a>) -> Result<()> {
        check_peer(OP, self.comm, peer)?;
        if !send && !operand.layout().is_unique() {
            return Err(invalid(
                OP,
                "the receiving view maps two elements to one address; a receive writes each element once",
            ));
        }
        let header = Header::new(
            operand.shape(),
            operand.layout().itemsize(),
            dtype_code(operand.dtype()),
        )?;
        self.ops.push(Op {
            peer,
            send,
            operand,
            header,
        });
        Ok(())
    }

    /// Checks the transfers with the peers, then moves them on `stream` (a stream of the
    /// communicator's device), ordered after the recorded work on every view and recorded
    /// on them: later uses, reads on the host and releases wait for the transfers.
    /// Returns once they are queued (after the header swap, which waits for the peers).
    pub fn run(self, stream: &Arc<CudaStream>) -> Result<()> {
        self.check(stream)?.run(stream)
    }

    /// Checks the transfers with the peers (the header swap of [`run`](Self::run)) once,
    /// for a batch that runs many times: every rank runs its [`Checked`] the same number
    /// of times. The views stay borrowed, so what was checked cannot change.
    pub fn check(self, stream: &Arc<CudaStream>) -> Result<Checked<'a, C>> {
        self.comm.check_usable(OP)?;
        check_stream(OP, self.comm, stream)?;
        let posted: Vec<Posted<'_>> = self
            .ops
            .iter()
            .map(|o| Posted {
                peer: o.peer,
                send: o.send,
                header: &o.header,
            })
            .collect();
        agree(OP, self.comm, &posted, self.collective, stream)?;
        Ok(Checked {
            comm: self.comm,
            ops: self.ops,
            direct: !self.self_through_transport,
        })
    }
}

/// A [`Batch`] its peers have agreed to: [`run`](Checked::run) moves the bytes again each
/// time, without the header swap.
pub struct Checked<'a, C: Communicator + ?Sized> {
    comm: &'a C,
    ops: Vec<Op<'a>>,
    /// Transfers to oneself are copies.
    direct: bool,
}

impl<C: Communicator + ?Sized> Checked<'_, C> {
    /// Packs, moves and unpacks the checked transfers on `stream` (see [`Batch::run`]).
    pub fn run(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.comm.check_usable(OP)?;
        check_stream(OP, self.comm, stream)?;
        // A send to oneself meets, in order, a receive from oneself: one copy.
        let me = self.comm.rank();
        let mut skip = vec![false; self.ops.len()];
        if self.direct {
            let mine = |send: bool| {
                self.ops
                    .iter()
                    .enumerate()
                    .filter(move |(_, o)| o.peer == me && o.send == send)
                    .map(|(i, _)| i)
            };
            for (si, ri) in mine(true).zip(mine(false)).collect::<Vec<_>>() {
                let (s, r) = (&self.ops[si].operand, &self.ops[ri].operand);
                copy_into(r, s, Some(stream), &CopyOptions::default())?;
                skip[si] = true;
                skip[ri] = true;
            }
        }

        // Pack what does not travel in place.
        let device = self.comm.device();
        let pool = temporaries_pool(&Device::open(device)?)?;
        let mut wires = Vec::with_capacity(self.ops.len());
        for (o, &skipped) in self.ops.iter().zip(&skip) {
            let bytes = o.operand.layout().volume() * o.operand.layout().itemsize();
            let w = if bytes == 0 || skipped {
                Wire::Empty
            } else if travels_in_place(&o.operand, device) {
                let (lo, hi) = o.operand.byte_span();
                Wire::InPlace {
                    ptr: lo,
                    len: (hi - lo) as usize,
                }
            } else {
                let buf = pool.allocate(bytes, stream)?;
                if o.send {
                    let packed = dense(&buf, &o.operand)?;
                    copy_into(&packed, &o.operand, Some(stream), &CopyOptions::default())?;
                }
                Wire::Temporary(buf)
            };
            wires.push(w);
        }

        // Move the bytes, recorded on the memory they touch.
        let mut uses: Vec<(&crate::memory::PendingWork, Use)> = Vec::new();
        for (o, w) in self.ops.iter().zip(&wires) {
            let usage = if o.send { Usage::Read } else { Usage::Write };
            let pending = match w {
                Wire::InPlace { .. } => o.operand.pending(),
                Wire::Temporary(b) => Some(b.pending()),
                Wire::Empty => None,
            };
            if let Some(p) = pending {
                uses.push((p, p.begin(OP, usage, stream)?));
            }
        }
        let moved = self.move_bytes(&wires, stream);
        let recorded = finish(OP, stream, uses);
        moved?;
        recorded?;

        // Unpack what arrived in temporaries.
        for (o, w) in self.ops.iter().zip(&wires) {
            if let (false, Wire::Temporary(buf)) = (o.send, w) {
                let packed = dense(buf, &o.operand)?;
                copy_into(&o.operand, &packed, Some(stream), &CopyOptions::default())?;
            }
        }
        Ok(())
    }

    fn move_bytes(&self, wires: &[Wire], stream: &Arc<CudaStream>) -> Result<()> {
        let comm = self.comm;
        comm.group_start(OP)?;
        let mut queued = Ok(());
        for (o, w) in self.ops.iter().zip(wires) {
            let (ptr, len) = match w {
                Wire::InPlace { ptr, len } => (*ptr, *len),
                Wire::Temporary(b) => (b.ptr(), b.size()),
                Wire::Empty => continue,
            };
            // SAFETY: device memory of the communicator's device (`travels_in_place`, or
            // a temporary of its pool) holding `len` bytes; the views are borrowed and
            // the temporaries alive until the work is recorded on them (above), and their
            // releases wait for it. A receiving view is written by nothing else: it is
            // borrowed mutably, and its parts posted here are disjoint.
            let r = unsafe {
                if o.send {
                    comm.send_bytes(OP, ptr, len, o.peer, stream)
                } else {
                    comm.recv_bytes(OP, ptr, len, o.peer, stream)
                }
            };
            if let Err(e) = r {
                queued = Err(e);
                break;
            }
        }
        let ended = comm.group_end(OP);
        queued.and(ended).map_err(|e| comm.fail(OP, e))
    }
}

/// Whether `o`'s elements lie densely in row-major order in plain device memory of
/// `device` (not memory cudarc tracks, whose own records the copy engine keeps).
fn travels_in_place(o: &Operand<'_>, device: usize) -> bool {
    o.kind() == MemoryKind::Device
        && o.device_ordinal() == Some(device)
        && o.cudarc().is_none()
        && o.layout().is_contiguous_c()
}

/// A dense row-major operand of `o`'s shape and dtype over the temporary `buf`.
fn dense<'b>(buf: &'b Buffer, o: &Operand<'_>) -> Result<Operand<'b>> {
    let layout = StridedLayout::dense(o.shape(), o.layout().itemsize(), Order::C)?;
    Operand::of_buffer(OP, buf, layout, o.dtype())
}

/// The number a header carries for a dtype: 0 for none (bytes only), else 1 + the DLPack
/// `(code, bits, lanes)` packed in one word.
pub(crate) fn dtype_code(d: Option<DType>) -> u32 {
    match d {
        None => 0,
        Some(d) => {
            let (code, bits, lanes) = d.dlpack();
            1 + ((code as u32) << 24 | (bits as u32) << 16 | lanes as u32)
        }
    }
}
