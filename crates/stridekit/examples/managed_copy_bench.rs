//! Copies out of managed memory the CPU has just written, with and without prefetching it
//! to the GPU first: `cargo run --release --example managed_copy_bench` on a GPU machine.
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
    CudaStream, DType, Device, DeviceMemoryResource, ManagedMemoryResource, MemoryResource, Order,
    StridedLayout, StridedMemoryView, StridedMemoryViewMut,
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
        "{:<10} {:<10} {:>12} {:>12} {:>12} {:>12} {:>7} {:>12} {:>12}",
        "bytes",
        "layout",
        "plain ms",
        "plain GB/s",
        "prefetch ms",
        "prefetch GB/s",
        "gain",
        "resident ms",
        "device ms"
    );
    for shift in [16u32, 18, 20, 22, 24, 26, 28] {
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
            let mut times = [vec![], vec![]];
            for round in 0..ROUNDS {
                for (k, prefetch) in [false, true].into_iter().enumerate() {
                    // The CPU writes the source: its pages are on the host now.
                    // SAFETY: host-accessible managed memory; nothing else uses it (the
                    // stream is idle: synchronised below after every copy).
                    unsafe {
                        std::ptr::write_bytes(
                            src_buf.ptr() as *mut u8,
                            (round * 2 + k) as u8,
                            bytes,
                        )
                    };
                    let t = Instant::now();
                    if prefetch {
                        managed::prefetch(&src_buf, Location::Device(0), &stream)?;
                    }
                    let src =
                        StridedMemoryView::from_buffer(&src_buf, src_l.clone(), Some(DType::U32))?;
                    let mut dst = StridedMemoryViewMut::from_buffer_mut(
                        &mut dst_buf,
                        dst_l.clone(),
                        Some(DType::U32),
                    )?;
                    dst.copy_from(&src, Some(&stream))?;
                    stream.synchronize().map_err(bench_err)?;
                    times[k].push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let med = |v: &mut Vec<f64>| {
                v.sort_by(|a, b| a.total_cmp(b));
                v[v.len() / 2]
            };
            // The source already on the GPU (prefetched there, not touched since): the
            // same copy out of managed memory and out of device memory, back to back.
            let dev_src = dmr.allocate(bytes, &stream)?;
            managed::prefetch(&src_buf, Location::Device(0), &stream)?;
            stream.synchronize().map_err(bench_err)?;
            let mut resident = [vec![], vec![]];
            for _ in 0..ROUNDS {
                for (k, from) in [&*src_buf, &dev_src].into_iter().enumerate() {
                    let src =
                        StridedMemoryView::from_buffer(from, src_l.clone(), Some(DType::U32))?;
                    let mut dst = StridedMemoryViewMut::from_buffer_mut(
                        &mut dst_buf,
                        dst_l.clone(),
                        Some(DType::U32),
                    )?;
                    let t = Instant::now();
                    dst.copy_from(&src, Some(&stream))?;
                    stream.synchronize().map_err(bench_err)?;
                    resident[k].push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
            let (res_managed, res_device) = (med(&mut resident[0]), med(&mut resident[1]));
            let (plain, pre) = (med(&mut times[0]), med(&mut times[1]));
            let moved = (side * side * 4) as f64;
            let moved = if transposed { moved } else { bytes as f64 };
            println!(
                "{:<10} {:<10} {:>12.3} {:>12.1} {:>12.3} {:>12.1} {:>7.2} {:>12.3} {:>12.3}",
                bytes,
                if transposed { "transpose" } else { "dense" },
                plain,
                moved / plain / 1e6,
                pre,
                moved / pre / 1e6,
                plain / pre,
                res_managed,
                res_device
            );
        }
    }
    Ok(())
}
