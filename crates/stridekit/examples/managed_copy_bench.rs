//! Copies out of managed memory the CPU has just written, with and without prefetching it
//! to the GPU first: `cargo run --release --example managed_copy_bench` on a GPU machine.
//! "off": `prefetch_managed: Some(false)`; "auto": the engine's rule (a prefetch of
//! managed sides of at least `MANAGED_PREFETCH_MIN_BYTES`); "explicit": a
//! `managed::prefetch` before a copy with prefetching off.
//!
//! For each size, the CPU writes the managed source (its pages move to the host), then
//! `copy_from` moves it into device memory, either at once (the GPU faults the pages in)
//! or after an explicit `managed::prefetch` to the device on the same stream. Two layouts: a dense copy and a
//! transpose (a kernel that reads the source through page faults). Prints the median host
//! time of the whole sequence (writes excluded, the stream synchronised) over 9 rounds;
//! then, with the source already on the GPU ("resident"), the same copy out of the
//! managed buffer and out of a device buffer ("device"), which tells what a prefetch of
//! pages already there costs.

use std::sync::Arc;
use std::time::Instant;
use stridekit::managed::{self, Location};
use stridekit::{
    CopyOptions, CudaStream, DType, Device, DeviceMemoryResource, ManagedMemoryResource,
    MemoryResource, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

type R<T> = Result<T, stridekit::Error>;

const ROUNDS: usize = 9;

fn bench_err(e: impl std::fmt::Display) -> stridekit::Error {
    stridekit::Error::Invalid {
        op: "managed_copy_bench",
        rule: e.to_string(),
    }
}

fn main() -> R<()> {
    if !stridekit::cuda_available() {
        println!("managed_copy_bench needs a CUDA device");
        return Ok(());
    }
    let dev = Device::open(0)?;
    let stream: Arc<CudaStream> = dev.new_stream()?;
    let mmr = ManagedMemoryResource::new(&dev)?;
    let dmr = DeviceMemoryResource::new(&dev)?;
    println!("device: {}; median of {ROUNDS} rounds", dev.name()?);
    println!(
        "{:<10} {:<10} {:>10} {:>10} {:>10} {:>7} {:>10} {:>10} {:>10}",
        "bytes",
        "layout",
        "off ms",
        "auto ms",
        "explicit",
        "gain",
        "res. off",
        "res. auto",
        "device ms"
    );
    let off = CopyOptions {
        prefetch_managed: Some(false),
        ..CopyOptions::default()
    };
    let auto = CopyOptions::default();
    for shift in [12u32, 14, 16, 18, 20, 22, 24, 26, 28] {
        let bytes = 1usize << shift;
        let side = ((bytes / 4) as f64).sqrt() as i64; // a square of u32 for the transpose
        let src_buf = mmr.allocate(bytes, &stream)?;
        let mut dst_buf = dmr.allocate(bytes, &stream)?;
        for transposed in [false, true] {
            let (src_l, dst_l) = if transposed {
                (
                    StridedLayout::dense(&[side, side], 4, Order::C)?.permuted(&[1, 0])?,
                    StridedLayout::dense(&[side, side], 4, Order::C)?,
                )
            } else {
                let n = (bytes / 4) as i64;
                (
                    StridedLayout::dense(&[n], 4, Order::C)?,
                    StridedLayout::dense(&[n], 4, Order::C)?,
                )
            };
            // 0: no prefetch; 1: the engine's rule; 2: an explicit prefetch first.
            let mut times = [vec![], vec![], vec![]];
            for round in 0..ROUNDS {
                for (k, t_k) in times.iter_mut().enumerate() {
                    // The CPU writes the source: its pages are on the host now.
                    // SAFETY: host-accessible managed memory; nothing else uses it (the
                    // stream is idle: synchronised below after every copy).
                    unsafe {
                        std::ptr::write_bytes(
                            src_buf.ptr() as *mut u8,
                            (round * 3 + k) as u8,
                            bytes,
                        )
                    };
                    let t = Instant::now();
                    if k == 2 {
                        managed::prefetch(&src_buf, Location::Device(0), &stream)?;
                    }
                    let src =
                        StridedMemoryView::from_buffer(&src_buf, src_l.clone(), Some(DType::U32))?;
                    let mut dst = StridedMemoryViewMut::from_buffer_mut(
                        &mut dst_buf,
                        dst_l.clone(),
                        Some(DType::U32),
                    )?;
                    dst.copy_from_with(&src, Some(&stream), if k == 1 { &auto } else { &off })?;
                    stream.synchronize().map_err(bench_err)?;
                    t_k.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let med = |v: &mut Vec<f64>| {
                v.sort_by(|a, b| a.total_cmp(b));
                v[v.len() / 2]
            };
            // The source already on the GPU (prefetched there, not touched since): the
            // copy out of managed memory without and with the engine's prefetch (what a
            // prefetch of pages already there costs), and out of device memory.
            let dev_src = dmr.allocate(bytes, &stream)?;
            managed::prefetch(&src_buf, Location::Device(0), &stream)?;
            stream.synchronize().map_err(bench_err)?;
            let mut resident = [vec![], vec![], vec![]];
            for _ in 0..ROUNDS {
                for (k, r_k) in resident.iter_mut().enumerate() {
                    let from = if k == 2 { &dev_src } else { &*src_buf };
                    let src =
                        StridedMemoryView::from_buffer(from, src_l.clone(), Some(DType::U32))?;
                    let mut dst = StridedMemoryViewMut::from_buffer_mut(
                        &mut dst_buf,
                        dst_l.clone(),
                        Some(DType::U32),
                    )?;
                    let t = Instant::now();
                    dst.copy_from_with(&src, Some(&stream), if k == 1 { &auto } else { &off })?;
                    stream.synchronize().map_err(bench_err)?;
                    r_k.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let (r_off, r_auto, r_dev) = (
                med(&mut resident[0]),
                med(&mut resident[1]),
                med(&mut resident[2]),
            );
            let (t_off, t_auto, t_explicit) =
                (med(&mut times[0]), med(&mut times[1]), med(&mut times[2]));
            println!(
                "{:<10} {:<10} {:>10.3} {:>10.3} {:>10.3} {:>7.2} {:>10.3} {:>10.3} {:>10.3}",
                bytes,
                if transposed { "transpose" } else { "dense" },
                t_off,
                t_auto,
                t_explicit,
                t_off / t_auto,
                r_off,
                r_auto,
                r_dev
            );
        }
    }
    Ok(())
}
