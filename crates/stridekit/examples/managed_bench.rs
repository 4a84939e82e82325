//! Batched against single prefetches of managed memory:
//! `cargo run --release --example managed_bench` on a GPU machine.
//!
//! 64 managed ranges of 64 KiB each travel host -> device -> host, either with one
//! `prefetch_batch` call per direction or with 64 `prefetch` calls. Prints the median
//! host-side time per API call sequence and the stream time (CUDA events), and the ratio
//! of singles to batch measured in the same run.

use std::sync::Arc;
use std::time::Instant;
use stridekit::cudarc::driver::sys::CUevent_flags;
use stridekit::managed::{self, Location};
use stridekit::{CudaStream, Device, ManagedBuffer, ManagedMemoryResource, ManagedRange};

type R<T> = Result<T, stridekit::Error>;

const RANGES: usize = 64;
const BYTES: usize = 64 << 10;
const ROUNDS: usize = 50;

fn bench_err(e: impl std::fmt::Display) -> stridekit::Error {
    stridekit::Error::Invalid {
        op: "managed_bench",
        rule: e.to_string(),
    }
}

/// Median (host µs, stream µs) of `prefetch(to)` over ROUNDS rounds; every round first
/// moves the ranges to `from` (untimed) so that each timed call migrates pages.
fn measure(
    stream: &Arc<CudaStream>,
    from: Location,
    to: Location,
    mut prefetch: impl FnMut(Location) -> R<()>,
) -> R<(f64, f64)> {
    let (mut host, mut gpu) = (vec![], vec![]);
    for _ in 0..ROUNDS {
        prefetch(from)?;
        stream.synchronize().map_err(bench_err)?;
        let a = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(bench_err)?;
        let t = Instant::now();
        prefetch(to)?;
        host.push(t.elapsed().as_secs_f64() * 1e6);
        let b = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(bench_err)?;
        stream.synchronize().map_err(bench_err)?;
        gpu.push(a.elapsed_ms(&b).map_err(bench_err)? as f64 * 1e3);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    Ok((med(&mut host), med(&mut gpu)))
}

fn main() -> R<()> {
    if !stridekit::cuda_available() {
        println!("managed_bench needs a CUDA device");
        return Ok(());
    }
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let mr = ManagedMemoryResource::new(&dev)?;
    let bufs: Vec<ManagedBuffer> = (0..RANGES)
        .map(|_| mr.allocate(BYTES, &stream))
        .collect::<R<_>>()?;
    for b in &bufs {
        // SAFETY: host-accessible managed memory, nothing else uses it yet.
        unsafe { std::ptr::write_bytes(b.ptr() as *mut u8, 0xA5, b.size()) };
    }
    let ranges: Vec<ManagedRange> = bufs.iter().map(|b| b.range()).collect();
    println!(
        "{RANGES} managed ranges of {} KiB, median of {ROUNDS} rounds, device: {}",
        BYTES >> 10,
        dev.name()?
    );
    println!(
        "{:<18} {:>14} {:>14} {:>14} {:>14} {:>10} {:>10}",
        "direction",
        "batch host µs",
        "64x host µs",
        "batch GPU µs",
        "64x GPU µs",
        "host x",
        "GPU x"
    );
    for (name, from, to) in [
        ("host -> device", Location::Host, Location::Device(0)),
        ("device -> host", Location::Device(0), Location::Host),
    ] {
        let (bh, bg) = measure(&stream, from, to, |l| {
            managed::prefetch_batch(&ranges, l, &stream)
        })?;
        let (sh, sg) = measure(&stream, from, to, |l| {
            ranges
                .iter()
                .try_for_each(|r| managed::prefetch(*r, l, &stream))
        })?;
        println!(
            "{name:<18} {bh:>14.1} {sh:>14.1} {bg:>14.1} {sg:>14.1} {:>10.2} {:>10.2}",
            sh / bh,
            sg / bg
        );
    }
    // Host-side cost of one call that moves nothing (pages already there).
    managed::prefetch_batch(&ranges, Location::Device(0), &stream)?;
    stream.synchronize().map_err(bench_err)?;
    let t = Instant::now();
    for _ in 0..100 {
        managed::prefetch(ranges[0], Location::Device(0), &stream)?;
    }
    let single = t.elapsed().as_secs_f64() * 1e6 / 100.0;
    stream.synchronize().map_err(bench_err)?;
    println!("one prefetch call, pages already resident: {single:.2} µs host-side");
    Ok(())
}
