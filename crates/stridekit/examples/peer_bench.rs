//! Copies from GPU 0 to GPU 1: `cargo run --release --example peer_bench` on a two-GPU
//! machine. Per case: the median of 20 runs (CUDA events on a device-0 stream) of
//! stridekit's `copy_from`, and of `cuMemcpyPeerAsync` of the same bytes in the same run;
//! with peer access on, then off (staged through pinned host memory).

use std::sync::Arc;
use stridekit::cudarc::driver::sys::{self, CUevent_flags};
use stridekit::{
    peer, CudaStream, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout,
    StridedMemoryView, StridedMemoryViewMut,
};

type R<T> = Result<T, stridekit::Error>;

fn bench_err(e: impl std::fmt::Display) -> stridekit::Error {
    stridekit::Error::Invalid {
        op: "peer_bench",
        rule: e.to_string(),
    }
}

fn time_ms(stream: &Arc<CudaStream>, mut f: impl FnMut() -> R<()>) -> R<f64> {
    for _ in 0..3 {
        f()?;
    }
    let mut times = vec![];
    for _ in 0..20 {
        let a = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(bench_err)?;
        f()?;
        let b = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(bench_err)?;
        times.push(a.elapsed_ms(&b).map_err(bench_err)? as f64);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(times[times.len() / 2])
}

fn main() -> R<()> {
    if Device::count().unwrap_or(0) < 2 {
        println!("peer_bench needs two CUDA devices");
        return Ok(());
    }
    let (d0, d1) = (Device::open(0)?, Device::open(1)?);
    let s0 = d0.new_stream()?;
    let (m0, m1) = (
        DeviceMemoryResource::new(&d0)?,
        DeviceMemoryResource::new(&d1)?,
    );
    let dense = |s: &[i64]| StridedLayout::dense(s, 4, Order::C);
    let cases: Vec<(&str, StridedLayout, StridedLayout)> = vec![
        (
            "contiguous 1 GiB f32",
            dense(&[1 << 28])?,
            dense(&[1 << 28])?,
        ),
        (
            "transpose 8192x8192 f32",
            dense(&[8192, 8192])?.permuted(&[1, 0])?,
            dense(&[8192, 8192])?,
        ),
        (
            "NCHW->NHWC (64,256,64,64) f32",
            dense(&[64, 256, 64, 64])?.permuted(&[0, 2, 3, 1])?,
            dense(&[64, 64, 64, 256])?,
        ),
    ];
    println!(
        "peer access 0<->1 possible: {}",
        peer::can_access_peer(0, 1)?
    );
    println!(
        "{:<32} {:>6} {:>12} {:>12} {:>14} {:>7}",
        "case", "peer", "GiB", "stridekit ms", "memcpyPeer ms", "ratio"
    );
    for peer_on in [true, false] {
        if peer_on {
            peer::enable_peer_access(0, 1)?;
            peer::enable_peer_access(1, 0)?;
        } else {
            peer::disable_peer_access(0, 1)?;
            peer::disable_peer_access(1, 0)?;
        }
        for (name, sl, dl) in &cases {
            let bytes = sl.volume() * 4;
            let mut a = m0.allocate(bytes, &s0)?;
            a.fill(0x3c, &s0)?;
            let b_stream = d1.new_stream()?;
            let mut b = m1.allocate(bytes, &b_stream)?;
            b_stream.synchronize().map_err(bench_err)?;
            let (ap, bp) = (a.ptr(), b.ptr());
            let src = StridedMemoryView::from_buffer(&a, sl.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl.clone(), None)?;
            let ms = time_ms(&s0, || dst.copy_from(&src, Some(&s0)))?;
            let raw = time_ms(&s0, || {
                d0.context().bind_to_thread().map_err(bench_err)?;
                // SAFETY: both allocations hold `bytes`; the contexts are live primary contexts.
                let r = unsafe {
                    sys::cuMemcpyPeerAsync(
                        bp,
                        d1.context().cu_ctx(),
                        ap,
                        d0.context().cu_ctx(),
                        bytes,
                        s0.cu_stream(),
                    )
                };
                if r == sys::CUresult::CUDA_SUCCESS {
                    Ok(())
                } else {
                    Err(bench_err(format!("{r:?}")))
                }
            })?;
            println!(
                "{name:<32} {:>6} {:>12.2} {ms:>12.3} {raw:>14.3} {:>7.2}",
                if peer_on { "on" } else { "off" },
                bytes as f64 / (1u64 << 30) as f64,
                raw / ms
            );
        }
    }
    Ok(())
}
