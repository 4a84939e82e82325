//! `Batch`: sends and receives of views of any layout, checked against the peers' and
//! moved in one group. Views that are dense in row-major order on the communicator's
//! device travel in place; any other is packed into (or unpacked from) a dense
//! temporary by the copy engine in one pass, on the caller's stream. A large transfer
//! whose receiver unpacks it moves in pieces, one group each, packed and unpacked on
//! the device's pipeline stream beside the moves ([`Batch::piece_bytes`]).

use super::comm::{check_peer, check_stream, Communicator};
use super::handshake::{agree, Posted};
use crate::copy::{copy_into, temporaries_pool, CopyOptions, Operand};
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{invalid, Result};
use crate::memory::{finish, Buffer, MemoryKind, MemoryResource, Usage, Use};
use crate::runtime::Runtime;
use crate::stream::wait_for_producer;
use crate::view::access::Access;
use crate::view::{StridedMemoryViewBase, StridedMemoryViewMut};
use cudarc::driver::CudaStream;
use std::sync::Arc;
use stridekit_layout::dist::{Header, Pieces};
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
    piece_bytes: u64,
}

/// The least bytes of a piece a transfer is cut into by default
/// ([`Batch::piece_bytes`]): transfers under twice this move whole.
pub const DEFAULT_PIECE_BYTES: usize = 64 << 20;

struct Op<'a> {
    peer: usize,
    send: bool,
    operand: Operand<'a>,
    header: Header,
    /// Whether the transfer moves in the view's own memory ([`travels_in_place`]); its
    /// header tells the peer so (`unpacks`), and its wire follows it.
    in_place: bool,
}

/// The bytes one transfer moves: in place in the view's memory, or in temporaries, one
/// a piece.
enum Wire {
    InPlace { ptr: u64 },
    Temporary(Vec<Buffer>),
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
            piece_bytes: DEFAULT_PIECE_BYTES as u64,
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

    /// The least bytes of a piece (default [`DEFAULT_PIECE_BYTES`], 64 MiB). A transfer
    /// of at least twice this whose receiver unpacks it (its view is not dense row-major
    /// in device memory) moves in up to [`MAX_PIECES`](stridekit_layout::dist::MAX_PIECES)
    /// pieces along its first axis of extent 2 or more ([`Pieces`]), one group each,
    /// and the receiver unpacks each piece on the device's pipeline stream while the
    /// next arrives: on two H200s over NVLink a 1 GiB f32 received transposed took 0.93
    /// of NCCL's contiguous transfer instead of 0.85. Other transfers move whole (a
    /// sender's pack gained nothing from pieces). Both ranks of a transfer must set the
    /// same value (the piece count is in the header they compare). `usize::MAX` moves
    /// every transfer whole; 0 is refused.
    pub fn piece_bytes(&mut self, bytes: usize) -> Result<&mut Self> {
        if bytes == 0 {
            return Err(invalid(
                "dist::Batch::piece_bytes",
                "a piece of 0 bytes; pieces are at least one byte (usize::MAX: whole transfers)",
            ));
        }
        self.piece_bytes = bytes as u64;
        Ok(self)
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
        let in_place = travels_in_place(&operand, self.comm.device());
        self.ops.push(Op {
            peer,
            send,
            operand,
            header,
            in_place,
        });
        Ok(())
    }

    /// Checks the transfers with the peers, then moves them on `stream` (a stream of the
    /// communicator's device), ordered after the recorded work on every view and recorded
    /// on them: later uses, reads on the host and releases wait for the transfers.
    /// Returns once they are queued (after the header swap, which waits for the peers).
    /// A failure after the header swap (a temporary that cannot be allocated, say) aborts
    /// the communicator, so that the peers get errors instead of waiting for this rank.
    pub fn run(self, stream: &Arc<CudaStream>) -> Result<()> {
        self.check(stream)?.run(stream)
    }

    /// Checks the transfers with the peers (the header swap of [`run`](Self::run)) once,
    /// for a batch that runs many times: every rank runs its [`Checked`] the same number
    /// of times. The views stay borrowed, so what was checked cannot change.
    pub fn check(mut self, stream: &Arc<CudaStream>) -> Result<Checked<'a, C>> {
        self.comm.check_usable(OP)?;
        check_stream(OP, self.comm, stream)?;
        let mut pieces = Vec::with_capacity(self.ops.len());
        for o in &mut self.ops {
            let (shape, itemsize) = (o.operand.shape(), o.operand.layout().itemsize());
            let p = Pieces::new(shape, itemsize, self.piece_bytes)?;
            // At most MAX_PIECES.
            o.header.pieces = p.count() as u32;
            o.header.unpacks = !o.send && !o.in_place;
            pieces.push(p);
        }
        let posted: Vec<Posted<'_>> = self
            .ops
            .iter()
            .map(|o| Posted {
                peer: o.peer,
                send: o.send,
                header: &o.header,
            })
            .collect();
        let theirs = agree(OP, self.comm, &posted, self.collective, stream)?;
        // A transfer whose receiver does not unpack moves whole.
        for ((o, p), t) in self.ops.iter().zip(&mut pieces).zip(&theirs) {
            if o.header.pieces_with(t) == 1 {
                *p = Pieces::new(o.operand.shape(), o.operand.layout().itemsize(), u64::MAX)?;
            }
        }
        Ok(Checked {
            comm: self.comm,
            ops: self.ops,
            pieces,
            direct: !self.self_through_transport,
        })
    }
}

/// A [`Batch`] its peers have agreed to: [`run`](Checked::run) moves the bytes again each
/// time, without the header swap.
pub struct Checked<'a, C: Communicator + ?Sized> {
    comm: &'a C,
    ops: Vec<Op<'a>>,
    /// How each op is cut.
    pieces: Vec<Pieces>,
    /// Transfers to oneself are copies.
    direct: bool,
}

impl<C: Communicator + ?Sized> Checked<'_, C> {
    /// Packs, moves and unpacks the checked transfers on `stream` (see [`Batch::run`]).
    pub fn run(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.comm.check_usable(OP)?;
        check_stream(OP, self.comm, stream)?;
        // Past the checks every peer posts its transfers: a rank that fails to post its
        // own (a temporary it cannot allocate, a pack that fails) aborts the transport,
        // so that its peers get errors instead of waiting for it forever.
        self.pack_move_unpack(stream)
            .map_err(|e| self.comm.fail(OP, e))
    }

    fn pack_move_unpack(&self, stream: &Arc<CudaStream>) -> Result<()> {
        let skip = self.copy_to_self(stream)?;
        let device = self.comm.device();
        let wires = self.wires(device, &skip, stream)?;
        // Transfers in several pieces pack and unpack on the device's pipeline stream,
        // ordered after the caller's work and the temporaries' allocations, so that a
        // received piece is unpacked while the next arrives.
        let pipelined = wires
            .iter()
            .any(|w| matches!(w, Wire::Temporary(bufs) if bufs.len() > 1));
        let lane = match pipelined {
            true => Some(Lane::open(device, stream)?),
            false => None,
        };
        let packer = lane.as_ref().map_or(stream, |l| &l.stream);
        let moved = self.move_pieces(&wires, stream, packer);
        // The caller's stream waits for the last pack or unpack, whatever happened.
        let joined = lane.map_or(Ok(()), |l| l.join(stream));
        moved.and(joined)
    }

    /// Transfers of this rank to itself, as one copy each from the send's view into the
    /// receive's (a send to oneself meets, in order, a receive from oneself); the ops
    /// they took.
    fn copy_to_self(&self, stream: &Arc<CudaStream>) -> Result<Vec<bool>> {
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
        Ok(skip)
    }

    /// The bytes each transfer moves: in place, or in temporaries (one a piece)
    /// allocated on `stream`.
    fn wires(&self, device: usize, skip: &[bool], stream: &Arc<CudaStream>) -> Result<Vec<Wire>> {
        let pool = temporaries_pool(&Device::open(device)?)?;
        let mut wires = Vec::with_capacity(self.ops.len());
        for ((o, pieces), &skipped) in self.ops.iter().zip(&self.pieces).zip(skip) {
            let bytes = o.operand.layout().volume() * o.operand.layout().itemsize();
            let w = if bytes == 0 || skipped {
                Wire::Empty
            } else if o.in_place {
                Wire::InPlace {
                    ptr: o.operand.byte_span().0,
                }
            } else {
                let mut bufs = Vec::with_capacity(pieces.count());
                for i in 0..pieces.count() {
                    let (lo, hi) = piece_bytes(pieces, i)?;
                    bufs.push(pool.allocate((hi - lo) as usize, stream)?);
                }
                Wire::Temporary(bufs)
            };
            wires.push(w);
        }
        Ok(wires)
    }

    /// Packs every send's pieces on `packer`, then moves the pieces one group at a time
    /// on `mover` (group `i` holds piece `i` of every transfer that has one), unpacking
    /// each received piece on `packer` once it has arrived, beside the next piece's move.
    fn move_pieces(
        &self,
        wires: &[Wire],
        mover: &Arc<CudaStream>,
        packer: &Arc<CudaStream>,
    ) -> Result<()> {
        let groups = self.pieces.iter().map(Pieces::count).max().unwrap_or(0);
        for i in 0..groups {
            self.repack(wires, true, i, packer)?;
        }
        for i in 0..groups {
            self.move_group(wires, i, mover)?;
            self.repack(wires, false, i, packer)?;
        }
        Ok(())
    }

    /// Packs piece `i` of every send (`send`) or unpacks piece `i` of every receive
    /// that travels in temporaries, on `stream`.
    fn repack(&self, wires: &[Wire], send: bool, i: usize, stream: &Arc<CudaStream>) -> Result<()> {
        for (o, (w, pieces)) in self.ops.iter().zip(wires.iter().zip(&self.pieces)) {
            let (Wire::Temporary(bufs), true) = (w, o.send == send) else {
                continue;
            };
            let Some(buf) = bufs.get(i) else {
                continue;
            };
            // A transfer in one piece is the operand itself (no second check of it).
            let owned;
            let part = match pieces.count() {
                1 => &o.operand,
                _ => {
                    owned = o
                        .operand
                        .relayout(OP, pieces.part_of(o.operand.layout(), i)?)?;
                    &owned
                }
            };
            let packed = dense(buf, part)?;
            let (dst, src) = if send {
                (&packed, part)
            } else {
                (part, &packed)
            };
            copy_into(dst, src, Some(stream), &CopyOptions::default())?;
        }
        Ok(())
    }

    /// Moves piece `i` of every transfer that has one, in one group, recorded on the
    /// memory it touches.
    fn move_group(&self, wires: &[Wire], i: usize, stream: &Arc<CudaStream>) -> Result<()> {
        let mut spans = Vec::new();
        let mut uses: Vec<(&crate::memory::PendingWork, Use)> = Vec::new();
        for (k, (o, w)) in self.ops.iter().zip(wires).enumerate() {
            let (span, pending) = match w {
                Wire::InPlace { ptr } if i < self.pieces[k].count() => {
                    let (lo, hi) = piece_bytes(&self.pieces[k], i)?;
                    ((ptr + lo, (hi - lo) as usize), o.operand.pending())
                }
                Wire::Temporary(bufs) => match bufs.get(i) {
                    Some(b) => ((b.ptr(), b.size()), Some(b.pending())),
                    None => continue,
                },
                _ => continue,
            };
            spans.push((k, span));
            if let Some(p) = pending {
                let usage = if o.send { Usage::Read } else { Usage::Write };
                uses.push((p, p.begin(OP, usage, stream)?));
            }
        }
        let moved = self.move_bytes(&spans, stream);
        let recorded = finish(OP, stream, uses);
        moved.and(recorded)
    }

    /// Sends and receives `spans` (`(op, (ptr, len))`) in one group.
    fn move_bytes(&self, spans: &[(usize, (u64, usize))], stream: &Arc<CudaStream>) -> Result<()> {
        let comm = self.comm;
        comm.group_start(OP)?;
        let mut queued = Ok(());
        for &(k, (ptr, len)) in spans {
            let o = &self.ops[k];
            // SAFETY: device memory of the communicator's device (`travels_in_place`, or
            // a temporary of its pool) holding `len` bytes; the views are borrowed and
            // the temporaries alive until the work is recorded on them (`move_group`),
            // and their releases wait for it. A receiving view is written by nothing
            // else: it is borrowed mutably, and its parts posted here are disjoint.
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

/// The byte range of piece `i` of a transfer.
fn piece_bytes(pieces: &Pieces, i: usize) -> Result<(u64, u64)> {
    pieces
        .byte_range(i)
        .ok_or_else(|| invalid(OP, format!("piece {i} of {}", pieces.count())))
}

/// The device's pipeline stream, ordered after the caller's stream when it opens.
struct Lane {
    stream: Arc<CudaStream>,
}

impl Lane {
    fn open(device: usize, caller: &Arc<CudaStream>) -> Result<Lane> {
        let stream = Runtime::get(OP, device)?.pipeline_stream(OP)?;
        wait_for_producer(caller, &stream)?;
        Ok(Lane { stream })
    }

    /// `caller` waits for the work queued on the lane.
    fn join(self, caller: &Arc<CudaStream>) -> Result<()> {
        wait_for_producer(&self.stream, caller)
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
