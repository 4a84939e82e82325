//! Strided copy benchmark: `cargo run --release --example copy_bench` on a GPU machine.
//!
//! Prints, per case, the bytes moved (read + written), the median time of 20 runs timed
//! with CUDA events, the bandwidth, and the ratio to a contiguous device memcpy of 1 GiB
//! measured in the same run (host transfers: to the contiguous transfer of the same size).

use std::sync::Arc;
use stridekit::cudarc::driver::sys::CUevent_flags;
use stridekit::{
    s, Buffer, CudaStream, Device, DeviceMemoryResource, HostMemoryResource, MemoryResource, Order,
    PinnedMemoryResource, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

type R<T> = Result<T, stridekit::Error>;

fn time_ms(stream: &Arc<CudaStream>, mut f: impl FnMut() -> R<()>) -> R<f64> {
    for _ in 0..3 {
        f()?;
    }
    let ev = |s: &Arc<CudaStream>| {
        s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| stridekit::Error::Invalid {
                op: "bench",
                rule: e.to_string(),
            })
    };
    let mut times = vec![];
    for _ in 0..20 {
        let a = ev(stream)?;
        f()?;
        let b = ev(stream)?;
        times.push(a.elapsed_ms(&b).map_err(|e| stridekit::Error::Invalid {
            op: "bench",
            rule: e.to_string(),
        })? as f64);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(times[times.len() / 2])
}

struct Case {
    name: String,
    src: StridedLayout,
    dst: StridedLayout,
    src_host: bool,
    dst_host: bool,
    /// The host side is pageable (else pinned).
    pageable: bool,
}

fn dense(shape: &[i64], isz: usize) -> StridedLayout {
    StridedLayout::dense(shape, isz, Order::C).expect("layout")
}

fn main() -> R<()> {
    if !stridekit::cuda_available() {
        println!("copy_bench needs a CUDA device");
        return Ok(());
    }
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let pinned = PinnedMemoryResource::new(&dev);
    println!("device: {}", dev.name()?);

    let alloc = |host: bool, pageable: bool, l: &StridedLayout| -> R<Buffer> {
        let bytes = l.required_size_in_bytes()?;
        let mut b = if host && pageable {
            HostMemoryResource.allocate(bytes, &stream)?
        } else if host {
            pinned.allocate(bytes, &stream)?
        } else {
            mr.allocate(bytes, &stream)?
        };
        b.fill(0x5A, &stream)?;
        Ok(b)
    };
    // Ceiling: contiguous device-to-device memcpy of 1 GiB.
    let gib = dense(&[1 << 28], 4);
    let (a, mut b) = (alloc(false, false, &gib)?, alloc(false, false, &gib)?);
    let memcpy_ms = {
        let src = StridedMemoryView::from_buffer(&a, gib.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, gib.clone(), None)?;
        time_ms(&stream, || dst.copy_from(&src, Some(&stream)))?
    };
    let memcpy_gbs = 2.0 * (1u64 << 30) as f64 / memcpy_ms / 1e6;
    println!("contiguous device memcpy: {memcpy_gbs:.0} GB/s (read + write)\n");
    drop((a, b));

    let mut cases = vec![];
    for isz in [1usize, 2, 4, 8] {
        cases.push(Case {
            name: format!("transpose 8192x8192 itemsize {isz}"),
            src: dense(&[8192, 8192], isz).permuted(&[1, 0])?,
            dst: dense(&[8192, 8192], isz),
            src_host: false,
            dst_host: false,
            pageable: false,
        });
    }
    for p in [[2i64, 0, 1], [1, 0, 2], [0, 2, 1]] {
        let src = dense(&[512, 512, 256], 4).permuted(&p)?;
        cases.push(Case {
            name: format!("(512,512,256) f32 permute {p:?}"),
            dst: dense(src.shape(), 4),
            src,
            src_host: false,
            dst_host: false,
            pageable: false,
        });
    }
    for (isz, t) in [(4usize, "f32"), (2, "f16")] {
        let src = dense(&[64, 256, 64, 64], isz).permuted(&[0, 2, 3, 1])?;
        cases.push(Case {
            name: format!("NCHW->NHWC (64,256,64,64) {t}"),
            dst: dense(src.shape(), isz),
            src,
            src_host: false,
            dst_host: false,
            pageable: false,
        });
    }
    let sl = dense(&[8192, 16384], 4).sliced(s![.., ..;2])?;
    cases.push(Case {
        name: "[:, ::2] of (8192,16384) f32".into(),
        dst: dense(sl.shape(), 4),
        src: sl,
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    let bc = dense(&[1, 16384], 4).broadcast_to(&[8192, 16384])?;
    cases.push(Case {
        name: "broadcast (1,16384)->(8192,16384) f32".into(),
        dst: dense(bc.shape(), 4),
        src: bc,
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    let t64 = dense(&[4096, 4096], 4).permuted(&[1, 0])?;
    cases.push(Case {
        name: "H2D 64 MiB transposed pinned f32".into(),
        src: t64.clone(),
        dst: dense(&[4096, 4096], 4),
        src_host: true,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "D2H 64 MiB transposed to pinned f32".into(),
        src: t64.clone(),
        dst: dense(&[4096, 4096], 4),
        src_host: false,
        dst_host: true,
        pageable: false,
    });
    // Pageable host memory: staged through pinned chunks, packed on every CPU thread.
    cases.push(Case {
        name: "H2D 64 MiB transposed pageable f32".into(),
        src: t64.clone(),
        dst: dense(&[4096, 4096], 4),
        src_host: true,
        dst_host: false,
        pageable: true,
    });
    cases.push(Case {
        name: "D2H 64 MiB transposed to pageable f32".into(),
        src: t64.clone(),
        dst: t64,
        src_host: false,
        dst_host: true,
        pageable: true,
    });
    cases.push(Case {
        name: "H2D 64 MiB from [::3] of pageable f32".into(),
        src: dense(&[12288, 4096], 4).sliced(s![..;3, ..])?,
        dst: dense(&[4096, 4096], 4),
        src_host: true,
        dst_host: false,
        pageable: true,
    });
    cases.push(Case {
        name: "D2H 64 MiB into [::2] of pageable f32".into(),
        src: dense(&[4096, 4096], 4),
        dst: dense(&[8192, 4096], 4).sliced(s![..;2, ..])?,
        src_host: false,
        dst_host: true,
        pageable: true,
    });

    println!(
        "{:<42} {:>10} {:>10} {:>9} {:>8}",
        "case", "MB moved", "time ms", "GB/s", "ratio"
    );
    for c in &cases {
        let sbuf = alloc(c.src_host, c.pageable, &c.src)?;
        let mut dbuf = alloc(c.dst_host, c.pageable, &c.dst)?;
        let moved = 2 * c.dst.volume() * c.dst.itemsize();
        let base_gbs = if c.src_host || c.dst_host {
            // The contiguous transfer of the same bytes, same direction.
            let flat = dense(&[c.dst.volume() as i64], c.dst.itemsize());
            let src = StridedMemoryView::from_buffer(&sbuf, flat.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, flat, None)?;
            let ms = time_ms(&stream, || dst.copy_from(&src, Some(&stream)))?;
            moved as f64 / ms / 1e6
        } else {
            memcpy_gbs
        };
        let src = StridedMemoryView::from_buffer(&sbuf, c.src.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, c.dst.clone(), None)?;
        let ms = time_ms(&stream, || dst.copy_from(&src, Some(&stream)))?;
        let gbs = moved as f64 / ms / 1e6;
        println!(
            "{:<42} {:>10.1} {:>10.3} {:>9.0} {:>8.2}",
            c.name,
            moved as f64 / 1e6,
            ms,
            gbs,
            gbs / base_gbs
        );
    }
    Ok(())
}
