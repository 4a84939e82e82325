//! Checks of `stridekit::dist` shared by the transports' test files: every check runs
//! the ranks of a world on threads, moves random layouts of every itemsize, and compares
//! each receiver's bytes with the host reference (poisoned destinations, random data).
#![allow(dead_code)]

use super::random_set::{stepped, Rng};
use super::{filled, naive_copy, random_bytes, random_layout, read};
use std::sync::Arc;
use stridekit::dist::{self, Batch, Communicator, Split};
use stridekit::{
    CudaStream, Device, DeviceMemoryResource, HostMemoryResource, Order, SliceArg, StridedLayout,
    StridedMemoryView, StridedMemoryViewMut,
};

/// Fails the test with every failure line, if there are any.
pub fn assert_none(fails: Vec<String>) {
    assert!(
        fails.is_empty(),
        "{} failures:\n{}",
        fails.len(),
        fails.join("\n")
    );
}

/// Runs `f` on every rank of `world`, each on a thread of its own with a new stream of its
/// device; returns what each rank returned, in rank order.
pub fn on_ranks<C: Communicator, R: Send>(
    world: Vec<C>,
    f: impl Fn(&C, &Arc<CudaStream>) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|t| {
        let f = &f;
        let handles: Vec<_> = world
            .into_iter()
            .map(|c| {
                t.spawn(move || {
                    let dev = Device::open(c.device()).unwrap();
                    let s = dev.new_stream().unwrap();
                    let r = f(&c, &s);
                    s.synchronize().unwrap();
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

const ITEMSIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// Transfer `k` of a check seeded `seed`, as both ranks derive it: the shape, itemsize,
/// the sender's layout, memory and data, the receiver's layout and poison. Every fifth
/// case is dense row-major on both sides (travels in place); every fifth other case
/// sends from pageable host memory.
pub struct Case {
    pub isz: usize,
    pub sl: StridedLayout,
    pub sdata: Vec<u8>,
    pub host_src: bool,
    pub dl: StridedLayout,
    pub poison: Vec<u8>,
}

pub fn case(seed: u64, k: u64) -> Case {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k + 1) | 1);
    let isz = ITEMSIZES[(k % 5) as usize];
    let nd = 1 + rng.below(4) as usize;
    let shape: Vec<i64> = (0..nd).map(|_| 1 + rng.below(37) as i64).collect();
    let (sl, sbytes, dl, dbytes) = if k % 5 == 2 {
        let l = StridedLayout::dense(&shape, isz, Order::C).unwrap();
        let n = l.required_size_in_bytes().unwrap();
        (l.clone(), n, l, n)
    } else if k % 5 == 3 {
        // Only the receiver dense: it receives in place (and the transfer moves whole).
        let (sl, sb) = random_layout(&mut rng, &shape, isz, true);
        let dl = StridedLayout::dense(&shape, isz, Order::C).unwrap();
        let n = dl.required_size_in_bytes().unwrap();
        (sl, sb, dl, n)
    } else if k % 5 == 1 {
        // Only the sender dense: it sends in place, piece by piece when cut.
        let sl = StridedLayout::dense(&shape, isz, Order::C).unwrap();
        let n = sl.required_size_in_bytes().unwrap();
        let (dl, db) = random_layout(&mut rng, &shape, isz, false);
        (sl, n, dl, db)
    } else {
        let (sl, sb) = random_layout(&mut rng, &shape, isz, true);
        let (dl, db) = random_layout(&mut rng, &shape, isz, false);
        (sl, sb, dl, db)
    };
    Case {
        isz,
        sdata: random_bytes(sbytes.max(1), seed ^ (k << 20) ^ 0x51),
        poison: random_bytes(dbytes.max(1), seed ^ (k << 20) ^ 0xd5),
        host_src: k % 5 == 4,
        sl,
        dl,
    }
}

impl Case {
    pub fn want(&self) -> Vec<u8> {
        naive_copy(&self.poison, &self.dl, &self.sdata, &self.sl)
    }
}

fn device_mr(c: &impl Communicator) -> DeviceMemoryResource {
    DeviceMemoryResource::new(&Device::open(c.device()).unwrap()).unwrap()
}

/// The checks of one world: each returns the failures it saw, one line each.
/// Rank 0 sends `cases` transfers to rank `size - 1` (itself in a world of one) in one
/// batch; the receiver reads its bytes on another stream without waiting, so that a
/// transfer not recorded on its buffers would be read too early.
/// With `through_transport`, transfers of a rank to itself go through the transport too.
pub fn send_recv<C: Communicator>(
    world: Vec<C>,
    seed: u64,
    cases: u64,
    through_transport: bool,
) -> Vec<String> {
    send_recv_in_pieces(
        world,
        seed,
        cases,
        through_transport,
        dist::DEFAULT_PIECE_BYTES,
    )
}

/// [`send_recv`] with transfers cut into pieces of at least `piece_bytes`. The receiver
/// also reads its bytes with a plain driver copy after waiting for its own stream alone
/// (no record consulted), as a foreign consumer ordered on that stream would: pieces
/// unpacked on the pipeline stream must be done by then.
pub fn send_recv_in_pieces<C: Communicator>(
    world: Vec<C>,
    seed: u64,
    cases: u64,
    through_transport: bool,
    piece_bytes: usize,
) -> Vec<String> {
    on_ranks(world, |c, s| {
        let (me, last) = (c.rank(), c.size() - 1);
        let mut fails = Vec::new();
        let dmr = device_mr(c);
        let cs: Vec<Case> = (0..cases).map(|k| case(seed, k)).collect();
        let sbufs: Vec<_> = if me == 0 {
            cs.iter()
                .map(|x| {
                    if x.host_src {
                        filled(&HostMemoryResource, &x.sdata, s)
                    } else {
                        filled(&dmr, &x.sdata, s)
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut dbufs: Vec<_> = if me == last {
            cs.iter().map(|x| filled(&dmr, &x.poison, s)).collect()
        } else {
            Vec::new()
        };
        {
            let srcs: Vec<_> = sbufs
                .iter()
                .zip(&cs)
                .map(|(b, x)| StridedMemoryView::from_buffer(b, x.sl.clone(), None).unwrap())
                .collect();
            let mut dsts: Vec<_> = dbufs
                .iter_mut()
                .zip(&cs)
                .map(|(b, x)| StridedMemoryViewMut::from_buffer_mut(b, x.dl.clone(), None).unwrap())
                .collect();
            let mut b = Batch::new(c);
            b.self_through_transport(through_transport)
                .piece_bytes(piece_bytes)
                .unwrap();
            for v in &srcs {
                b.send(v, last).unwrap();
            }
            for v in &mut dsts {
                b.recv(v, 0).unwrap();
            }
            if let Err(e) = b.run(s) {
                fails.push(format!("rank {me}: {e}"));
                return fails;
            }
        }
        if me == last {
            s.synchronize().unwrap();
            let unrecorded: Vec<Vec<u8>> = dbufs.iter().map(|b| read_unrecorded(b, s)).collect();
            let other = Device::open(c.device()).unwrap().new_stream().unwrap();
            for (k, (b, x)) in dbufs.iter().zip(&cs).enumerate() {
                if unrecorded[k] != x.want() {
                    fails.push(format!(
                        "transfer {k} ({} -> {}): not done when the caller's stream was",
                        x.sl, x.dl
                    ));
                }
                if read(b, &other) != x.want() {
                    fails.push(format!(
                        "transfer {k} (itemsize {}, {} -> {}{}): bytes differ",
                        x.isz,
                        x.sl,
                        x.dl,
                        if x.host_src { ", host source" } else { "" }
                    ));
                }
            }
        }
        fails
    })
    .concat()
}

/// `b`'s bytes by a synchronous driver copy, consulting no record (the caller waited for
/// the stream it wants the bytes ordered after).
fn read_unrecorded(b: &stridekit::Buffer, s: &Arc<CudaStream>) -> Vec<u8> {
    use stridekit::cudarc::driver::sys;
    let mut out = vec![0u8; b.size()];
    s.context().bind_to_thread().unwrap();
    // SAFETY: `b` is device memory of `s`'s device of `b.size()` bytes; `out` holds as many.
    let r = unsafe { sys::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), b.ptr(), b.size()) };
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
    out
}

/// Every rank sends case `r * n + p` to rank `p` and receives case `p * n + r` from it.
pub fn all_to_all<C: Communicator>(world: Vec<C>, seed: u64) -> Vec<String> {
    all_to_all_in_pieces(world, seed, dist::DEFAULT_PIECE_BYTES)
}

/// [`all_to_all`] with transfers cut into pieces of at least `piece_bytes`.
pub fn all_to_all_in_pieces<C: Communicator>(
    world: Vec<C>,
    seed: u64,
    piece_bytes: usize,
) -> Vec<String> {
    on_ranks(world, |c, s| {
        let (n, me) = (c.size() as u64, c.rank() as u64);
        let dmr = device_mr(c);
        let sends: Vec<Case> = (0..n).map(|p| case(seed, me * n + p)).collect();
        let recvs: Vec<Case> = (0..n).map(|p| case(seed, p * n + me)).collect();
        let sbufs: Vec<_> = sends.iter().map(|x| filled(&dmr, &x.sdata, s)).collect();
        let mut dbufs: Vec<_> = recvs.iter().map(|x| filled(&dmr, &x.poison, s)).collect();
        {
            let srcs: Vec<_> = sbufs
                .iter()
                .zip(&sends)
                .map(|(b, x)| StridedMemoryView::from_buffer(b, x.sl.clone(), None).unwrap())
                .collect();
            let mut dsts: Vec<_> = dbufs
                .iter_mut()
                .zip(&recvs)
                .map(|(b, x)| StridedMemoryViewMut::from_buffer_mut(b, x.dl.clone(), None).unwrap())
                .collect();
            let run = dist::all_to_all_batch(c, &srcs, &mut dsts).and_then(|mut b| {
                b.piece_bytes(piece_bytes)?;
                b.run(s)
            });
            if let Err(e) = run {
                return vec![format!("rank {me}: {e}")];
            }
        }
        let mut fails = Vec::new();
        for (p, (b, x)) in dbufs.iter().zip(&recvs).enumerate() {
            if read(b, s) != x.want() {
                fails.push(format!(
                    "rank {me} from rank {p}: {} -> {}: bytes differ",
                    x.sl, x.dl
                ));
            }
        }
        fails
    })
    .concat()
}

/// A random layout of `shape` (dense row-major when an extent is 0, which
/// `random_layout` does not make), with the bytes its memory needs.
fn any_layout(rng: &mut Rng, shape: &[i64], isz: usize) -> (StridedLayout, usize) {
    if shape.contains(&0) {
        let l = StridedLayout::dense(shape, isz, Order::C).unwrap();
        let n = l.required_size_in_bytes().unwrap();
        return (l, n);
    }
    random_layout(rng, shape, isz, false)
}

/// A rank's part of the global tensor `g` (dense row-major of `shape`) under `split`, as
/// dense row-major bytes.
fn part_of(g: &[u8], shape: &[i64], isz: usize, split: &Split, rank: usize) -> Vec<u8> {
    let origin = split.origin(shape, rank).unwrap();
    let local = split.local_shape(shape, rank).unwrap();
    let args: Vec<SliceArg> = origin
        .iter()
        .zip(local.iter())
        .map(|(&o, &e)| stepped(o, e, 1))
        .collect();
    let whole = StridedLayout::dense(shape, isz, Order::C).unwrap();
    let dense = StridedLayout::dense(&local, isz, Order::C).unwrap();
    let n = dense.volume() * isz;
    naive_copy(&vec![0u8; n], &dense, g, &whole.sliced(&args).unwrap())
}

/// One random redistribution of a world: a random shape and itemsize, a random split
/// before and after (the same axis or another), each rank's parts in random layouts.
pub fn redistribute<C: Communicator>(world: Vec<C>, seed: u64) -> Vec<String> {
    redistribute_in_pieces(world, seed, dist::DEFAULT_PIECE_BYTES)
}

/// [`redistribute`] with transfers cut into pieces of at least `piece_bytes`.
pub fn redistribute_in_pieces<C: Communicator>(
    world: Vec<C>,
    seed: u64,
    piece_bytes: usize,
) -> Vec<String> {
    let n = world.len();
    let mut rng = Rng(seed | 1);
    let nd = 1 + rng.below(4) as usize;
    let shape: Vec<i64> = (0..nd)
        .map(|_| rng.below(3 * n as u64 + 9) as i64)
        .collect();
    let isz = ITEMSIZES[rng.below(5) as usize];
    let from = Split::new(rng.below(nd as u64) as usize, n).unwrap();
    let to = Split::new(rng.below(nd as u64) as usize, n).unwrap();
    let volume: i64 = shape.iter().product();
    let g = random_bytes((volume as usize * isz).max(1), seed ^ 0x6);
    let results = on_ranks(world, |c, s| {
        let me = c.rank();
        let mut rng = Rng((seed ^ (me as u64 + 1) << 32) | 1);
        let dmr = device_mr(c);
        let src_shape = from.local_shape(&shape, me).unwrap();
        let dst_shape = to.local_shape(&shape, me).unwrap();
        let (sl, sbytes) = any_layout(&mut rng, &src_shape, isz);
        let (dl, dbytes) = any_layout(&mut rng, &dst_shape, isz);
        let src_dense = StridedLayout::dense(&src_shape, isz, Order::C).unwrap();
        let dst_dense = StridedLayout::dense(&dst_shape, isz, Order::C).unwrap();
        let sdata = naive_copy(
            &random_bytes(sbytes.max(1), seed ^ me as u64),
            &sl,
            &part_of(&g, &shape, isz, &from, me),
            &src_dense,
        );
        let poison = random_bytes(dbytes.max(1), seed ^ 0xff ^ me as u64);
        let want = naive_copy(&poison, &dl, &part_of(&g, &shape, isz, &to, me), &dst_dense);
        let sbuf = filled(&dmr, &sdata, s);
        let mut dbuf = filled(&dmr, &poison, s);
        {
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).unwrap();
            let mut dst =
                StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None).unwrap();
            let run = dist::redistribute_batch(c, &shape, &from, &to, &src, &mut dst).and_then(
                |mut b| {
                    b.piece_bytes(piece_bytes)?;
                    b.run(s)
                },
            );
            if let Err(e) = run {
                return Some(format!("rank {me}: {e}"));
            }
        }
        (read(&dbuf, s) != want).then(|| {
            format!("rank {me}: {shape:?} itemsize {isz}, {from:?} -> {to:?}, {sl} -> {dl}: bytes differ")
        })
    });
    results.into_iter().flatten().collect()
}

/// What goes wrong when ranks disagree: every rank gets an error naming it (never a
/// hang), nothing is moved, and the world still works afterwards. Needs a world of one or
/// two ranks (rank 0 sends to rank `size - 1`).
pub fn mismatches<C: Communicator>(world: Vec<C>) -> Vec<String> {
    on_ranks(world, |c, s| {
        let (me, last) = (c.rank(), c.size() - 1);
        let dmr = device_mr(c);
        let mut fails = Vec::new();
        let data = random_bytes(4 * 24, 7);
        let a = filled(&dmr, &data, s);
        let mut b = filled(&dmr, &random_bytes(4 * 24, 8), s);
        let f32_ = Some(stridekit::DType::F32);
        let i32_ = Some(stridekit::DType::I32);
        // (what, send shape, send dtype, recv shape, recv dtype, extra sends, want)
        let trials = [
            (
                "extents",
                [4i64, 6],
                f32_,
                [6i64, 4],
                f32_,
                0usize,
                Some("extents differ"),
            ),
            (
                "dtype",
                [4, 6],
                f32_,
                [4, 6],
                i32_,
                0,
                Some("element type differ"),
            ),
            ("count", [4, 6], f32_, [4, 6], f32_, 1, Some("do not match")),
            (
                "bytes only meets a type",
                [4, 6],
                None,
                [4, 6],
                f32_,
                0,
                None,
            ),
            ("agreeing", [4, 6], f32_, [4, 6], f32_, 0, None),
        ];
        for (what, ss, sd, rs, rd, extra, want) in trials {
            let before = read(&b, s);
            let res = {
                let sv = StridedMemoryView::from_buffer(
                    &a,
                    StridedLayout::dense(&ss, 4, Order::F).unwrap(),
                    sd,
                )
                .unwrap();
                let mut rv = StridedMemoryViewMut::from_buffer_mut(
                    &mut b,
                    StridedLayout::dense(&rs, 4, Order::C).unwrap(),
                    rd,
                )
                .unwrap();
                let mut g = Batch::new(c);
                if me == 0 {
                    for _ in 0..=extra {
                        g.send(&sv, last).unwrap();
                    }
                }
                if me == last {
                    g.recv(&mut rv, 0).unwrap();
                }
                g.run(s)
            };
            match (res, want) {
                (Ok(()), None) => {}
                (Err(e), Some(w)) if e.to_string().contains(w) => {
                    if read(&b, s) != before {
                        fails.push(format!("rank {me}, {what}: refused, but bytes moved"));
                    }
                }
                (r, w) => fails.push(format!("rank {me}, {what}: got {r:?}, wanted {w:?}")),
            }
        }
        fails
    })
    .concat()
}
