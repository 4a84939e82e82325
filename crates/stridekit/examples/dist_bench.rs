//! `stridekit::dist` on one GPU: `cargo run --release --example dist_bench --features nccl`.
//!
//! 1. A rank of an NCCL communicator of one sends 256 MiB (8192 x 8192 f32) to itself:
//!    dense row-major on both sides (NCCL's own contiguous transfer, the ceiling), and
//!    transposed on one or both sides (packed and unpacked by the copy engine), through
//!    NCCL's send to oneself whole (`piece_bytes(usize::MAX)`) and in pieces (the
//!    default), and as the one copy a batch makes of a transfer to oneself by default. Median of 20 runs of a checked batch (the header swap done once), each
//!    alone on the GPU, between CUDA events; and the host time of a whole `Batch::run` of
//!    4 KiB (header swap included).
//! 2. `redistribute` of a (8192, 16384) f32 tensor (512 MiB) from rows to columns over
//!    four in-process ranks on the one GPU (threads), parts dense or column-major: wall
//!    time from a barrier to every rank's stream done, median of 10; of the whole call
//!    (header swap included) and of a checked `redistribute_batch` run again. `bench/dist_compare.py`
//!    times PyTorch's permute-copy-permute of the same parts on the same GPU.
//! 3. With two GPUs (skipped, saying so, on one): two NCCL ranks on threads, one GPU each.
//!    A 1 GiB f32 tensor (16384 x 16384) sent from GPU 0 to GPU 1 dense (NCCL's own
//!    contiguous send/recv: the ceiling) and transposed on one or both sides; and the
//!    rows -> columns redistribution of a 1 GiB tensor over the two, each whole
//!    (`piece_bytes(usize::MAX)`) and in pieces (the default). Wall time from a
//!    barrier to both streams done, median of 10. `bench/dist_compare.py --two-gpus` times
//!    PyTorch's `.contiguous()` + `all_to_all_single` of the same on the same GPUs.

#[path = "common/timing.rs"]
mod timing;

use std::sync::{Arc, Barrier};
use std::time::Instant;
use stridekit::dist::{self, nccl_version, Batch, Communicator, NcclComm, Split};
use stridekit::{
    CudaStream, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout,
    StridedMemoryView, StridedMemoryViewMut,
};

type R<T> = Result<T, stridekit::Error>;

fn filled(mr: &DeviceMemoryResource, bytes: usize, s: &Arc<CudaStream>) -> R<stridekit::Buffer> {
    let mut b = mr.allocate(bytes, s)?;
    let mut x = 0x9e37_79b9_u32;
    let data: Vec<u32> = (0..bytes / 4)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect();
    b.copy_from_host(&data, s)?;
    Ok(b)
}

/// Waits for `s`.
/// Milliseconds of `step` from a barrier of every rank to this rank's stream done, for 10
/// runs after 2 warm-up runs.
fn timed_runs(s: &CudaStream, barrier: &Barrier, mut step: impl FnMut() -> R<()>) -> R<Vec<f64>> {
    let mut out = vec![];
    for rep in 0..12 {
        sync(s)?;
        barrier.wait();
        let t0 = Instant::now();
        step()?;
        sync(s)?;
        barrier.wait();
        if rep >= 2 {
            out.push(t0.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(out)
}

fn sync(s: &CudaStream) -> R<()> {
    s.synchronize().map_err(|e| stridekit::Error::Invalid {
        op: "dist_bench",
        rule: e.to_string(),
    })
}

fn order(f: bool) -> Order<'static> {
    if f {
        Order::F
    } else {
        Order::C
    }
}

fn main() -> R<()> {
    let dev = Device::open(0)?;
    let s = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let (ma, mi, pa) = nccl_version()?;
    println!("# {} | NCCL {ma}.{mi}.{pa}", dev.name()?);
    let timer = timing::Timer::new(&dev, &s)?;
    let comm = NcclComm::single(&dev)?;

    let n = 8192i64;
    let bytes = (n * n * 4) as usize;
    let a = filled(&mr, bytes, &s)?;
    let mut b = mr.allocate(bytes, &s)?;
    println!("\n## self-send of 256 MiB f32 through NCCL (one rank)\n");
    println!("| source -> destination | through NCCL whole, ms | vs contiguous NCCL | in pieces (default), ms | vs contiguous NCCL | as one copy (default to itself), ms | vs contiguous NCCL |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut base = None;
    for (name, sf, df) in [
        ("row-major -> row-major (NCCL in place)", false, false),
        ("transposed -> row-major (pack)", true, false),
        ("row-major -> transposed (unpack)", false, true),
        ("transposed -> transposed (pack + unpack)", true, true),
    ] {
        let sl = StridedLayout::dense(&[n, n], 4, order(sf))?;
        let dl = StridedLayout::dense(&[n, n], 4, order(df))?;
        let src = StridedMemoryView::from_buffer(&a, sl, None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl, None)?;
        let mut time = |through: bool, piece: usize| -> R<f64> {
            let mut g = Batch::new(&comm);
            g.self_through_transport(through).piece_bytes(piece)?;
            g.send(&src, 0)?;
            g.recv(&mut dst, 0)?;
            let checked = g.check(&s)?;
            timer.alone(20, || checked.run(&s))
        };
        let (nccl, pieces, copy) = (
            time(true, usize::MAX)?,
            time(true, dist::DEFAULT_PIECE_BYTES)?,
            time(false, dist::DEFAULT_PIECE_BYTES)?,
        );
        let base_ms = *base.get_or_insert(nccl);
        println!(
            "| {name} | {nccl:.3} | {:.2} | {pieces:.3} | {:.2} | {copy:.3} | {:.2} |",
            base_ms / nccl,
            base_ms / pieces,
            base_ms / copy
        );
    }
    // The header swap's price: a whole run of a 4 KiB transfer, host time.
    let small_a = filled(&mr, 4096, &s)?;
    let mut small_b = mr.allocate(4096, &s)?;
    let l = StridedLayout::dense(&[1024], 4, Order::C)?;
    let mut host = vec![];
    for _ in 0..50 {
        let src = StridedMemoryView::from_buffer(&small_a, l.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut small_b, l.clone(), None)?;
        let t = Instant::now();
        let mut g = Batch::new(&comm);
        g.send(&src, 0)?;
        g.recv(&mut dst, 0)?;
        g.run(&s)?;
        sync(&s)?;
        host.push(t.elapsed().as_secs_f64() * 1e6);
    }
    host.sort_by(f64::total_cmp);
    println!("\nA whole `Batch::run` of 4 KiB to itself (header swap included), host time: {:.0} µs median", host[25]);

    println!(
        "\n## redistribute rows -> columns, (8192, 16384) f32, 4 in-process ranks on one GPU\n"
    );
    println!("| parts before -> after | redistribute, ms | GB/s (tensor bytes once) | checked batch run, ms | GB/s |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let shape = [8192i64, 16384];
    let (from, to) = (Split::new(0, 4)?, Split::new(1, 4)?);
    for (name, sf, df) in [
        ("row-major -> row-major", false, false),
        ("column-major -> row-major", true, false),
        ("row-major -> column-major", false, true),
    ] {
        let world = dist::local_world(&[0; 4])?;
        let barrier = Barrier::new(4);
        let times: Vec<R<(Vec<f64>, Vec<f64>)>> = std::thread::scope(|t| {
            let hs: Vec<_> = world
                .into_iter()
                .map(|c| {
                    let barrier = &barrier;
                    t.spawn(move || -> R<(Vec<f64>, Vec<f64>)> {
                        let dev = Device::open(0)?;
                        let s = dev.new_stream()?;
                        let mr = DeviceMemoryResource::new(&dev)?;
                        let me = c.rank();
                        let sshape = from.local_shape(&shape, me)?;
                        let dshape = to.local_shape(&shape, me)?;
                        let sl = StridedLayout::dense(&sshape, 4, order(sf))?;
                        let dl = StridedLayout::dense(&dshape, 4, order(df))?;
                        let a = filled(&mr, sl.required_size_in_bytes()?, &s)?;
                        let mut b = mr.allocate(dl.required_size_in_bytes()?, &s)?;
                        let src = StridedMemoryView::from_buffer(&a, sl, None)?;
                        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl, None)?;
                        let whole = timed_runs(&s, barrier, || {
                            dist::redistribute(&c, &shape, &from, &to, &src, &mut dst, &s)
                        })?;
                        let checked =
                            dist::redistribute_batch(&c, &shape, &from, &to, &src, &mut dst)?
                                .check(&s)?;
                        let moved = timed_runs(&s, barrier, || checked.run(&s))?;
                        Ok((whole, moved))
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Ok((vec![], vec![]))))
                .collect()
        });
        let (whole, moved) = times.into_iter().next().unwrap_or(Ok((vec![], vec![])))?;
        let med = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
        };
        let (w, m) = (med(whole), med(moved));
        let gb = (shape[0] * shape[1] * 4) as f64 / 1e6;
        println!(
            "| {name} | {w:.3} | {:.0} | {m:.3} | {:.0} |",
            gb / w,
            gb / m
        );
    }
    two_gpus()
}

/// Part 3: two NCCL ranks, one GPU each.
fn two_gpus() -> R<()> {
    let n = Device::count()?;
    if n < 2 {
        println!("\n## two GPUs: skipped ({n} GPU visible)");
        return Ok(());
    }
    println!("\n## two GPUs, NCCL, 1 GiB f32 (16384 x 16384)\n");
    println!("Whole: every transfer in one NCCL group after its pack (`piece_bytes(usize::MAX)`); in pieces: the default (64 MiB, at most 8), packs and unpacks beside the moves.\n");
    println!("| case | whole, ms | GB/s (bytes once) | vs contiguous NCCL | in pieces, ms | GB/s | vs contiguous NCCL |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let id = dist::UniqueId::new()?;
    let side = 16384i64;
    let bytes = (side * side * 4) as usize;
    let barrier = Barrier::new(2);
    // (name, sender's order, receiver's order; None: a redistribution instead)
    let cases: [(&str, Option<(bool, bool)>); 5] = [
        (
            "send row-major -> row-major (NCCL in place)",
            Some((false, false)),
        ),
        ("send transposed -> row-major", Some((true, false))),
        ("send row-major -> transposed", Some((false, true))),
        ("send transposed -> transposed", Some((true, true))),
        ("redistribute rows -> columns, row-major parts", None),
    ];
    let times: Vec<R<Vec<f64>>> = std::thread::scope(|t| {
        let hs: Vec<_> = (0..2usize)
            .map(|rank| {
                let (barrier, cases) = (&barrier, &cases);
                t.spawn(move || -> R<Vec<f64>> {
                    let dev = Device::open(rank)?;
                    let comm = NcclComm::init(&dev, &id, rank, 2)?;
                    let s = dev.new_stream()?;
                    let mr = DeviceMemoryResource::new(&dev)?;
                    let a = filled(&mr, bytes, &s)?;
                    let mut b = mr.allocate(bytes, &s)?;
                    let mut medians = vec![];
                    for (_, case) in cases.iter() {
                        let shape = [side, side];
                        let (from, to) = (Split::new(0, 2)?, Split::new(1, 2)?);
                        let (sl, dl) = match case {
                            Some((sf, df)) => (
                                StridedLayout::dense(&shape, 4, order(*sf))?,
                                StridedLayout::dense(&shape, 4, order(*df))?,
                            ),
                            None => (
                                StridedLayout::dense(
                                    &from.local_shape(&shape, rank)?,
                                    4,
                                    Order::C,
                                )?,
                                StridedLayout::dense(&to.local_shape(&shape, rank)?, 4, Order::C)?,
                            ),
                        };
                        let src = StridedMemoryView::from_buffer(&a, sl, None)?;
                        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl, None)?;
                        // The same transfers whole, then in pieces (the default).
                        for piece in [usize::MAX, dist::DEFAULT_PIECE_BYTES] {
                            let mut g = match case {
                                Some(_) => {
                                    let mut g = Batch::new(&comm);
                                    if rank == 0 {
                                        g.send(&src, 1)?;
                                    } else {
                                        g.recv(&mut dst, 0)?;
                                    }
                                    g
                                }
                                None => dist::redistribute_batch(
                                    &comm, &shape, &from, &to, &src, &mut dst,
                                )?,
                            };
                            g.piece_bytes(piece)?;
                            let checked = g.check(&s)?;
                            let mut ms = timed_runs(&s, barrier, || checked.run(&s))?;
                            ms.sort_by(f64::total_cmp);
                            medians.push(ms[ms.len() / 2]);
                        }
                    }
                    Ok(medians)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Ok(vec![])))
            .collect()
    });
    let ms = times.into_iter().next().unwrap_or(Ok(vec![]))?;
    let base = ms.first().copied().unwrap_or(f64::NAN);
    for ((name, _), m) in cases.iter().zip(ms.chunks(2)) {
        let (w, p) = (m[0], m.get(1).copied().unwrap_or(f64::NAN));
        println!(
            "| {name} | {w:.3} | {:.0} | {:.2} | {p:.3} | {:.0} | {:.2} |",
            bytes as f64 / w / 1e6,
            base / w,
            bytes as f64 / p / 1e6,
            base / p
        );
    }
    Ok(())
}
