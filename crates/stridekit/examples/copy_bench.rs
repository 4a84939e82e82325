//! Strided copy benchmark: `cargo run --release --example copy_bench` on a GPU machine.
//!
//! Prints, per case, the bytes moved (read + written), the median time of 20 runs timed
//! with CUDA events, the bandwidth, and the ratio to a contiguous device memcpy of 1 GiB
//! measured in the same run (host transfers: to the contiguous transfer of the same size).
//! Device cases also get their efficiency against two rooflines at that memcpy's rate:
//! "sectors", the sector-exact one (the 32-byte sectors the reads touch, each written
//! sector, and a partially written sector twice: DRAM reads, merges and writes it back),
//! the primary figure; and "bytes", the sectors read plus the bytes written. Given a path
//! (`copy_bench traffic.jsonl`), it writes each case's sector-exact traffic there, for
//! `bench/compare.py` to rate PyTorch and CuPy on the same roofline.

#[path = "common/roofline.rs"]
mod roofline;

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
    // Many-axis permutations (also timed with LibreTT: bench/librett_compare.cu).
    for (shape, perm, isz) in [
        (vec![32i64, 32, 32, 32, 32], vec![4i64, 2, 0, 3, 1], 4usize),
        (vec![16, 16, 16, 16, 16, 16], vec![5, 3, 1, 4, 2, 0], 4),
        (vec![24, 40, 3, 50, 36], vec![3, 1, 4, 0, 2], 8),
    ] {
        let src = dense(&shape, isz).permuted(&perm)?;
        cases.push(Case {
            name: format!(
                "{}-D {:?} {} permute {perm:?}",
                shape.len(),
                shape,
                if isz == 4 { "f32" } else { "f64" }
            ),
            dst: dense(src.shape(), isz),
            src,
            src_host: false,
            dst_host: false,
            pageable: false,
        });
    }
    // Layouts a new user tries: odd extents, short inner axes, flips, misalignment.
    for (isz, t) in [(4usize, "f32"), (2, "f16"), (1, "u8")] {
        let src = dense(&[3001, 4097], isz).permuted(&[1, 0])?;
        cases.push(Case {
            name: format!("transpose 4097x3001 {t}"),
            dst: dense(src.shape(), isz),
            src,
            src_host: false,
            dst_host: false,
            pageable: false,
        });
    }
    let rgb = dense(&[4096, 4096, 3], 1);
    cases.push(Case {
        name: "RGB interleaved -> planar (4096,4096,3) u8".into(),
        src: rgb.permuted(&[2, 0, 1])?,
        dst: dense(&[3, 4096, 4096], 1),
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "RGB planar -> interleaved (4096,4096,3) u8".into(),
        src: dense(&[3, 4096, 4096], 1),
        dst: rgb.permuted(&[2, 0, 1])?,
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "NCHW->NHWC (256,3,224,224) u8".into(),
        src: dense(&[256, 3, 224, 224], 1),
        dst: dense(&[256, 224, 224, 3], 1).permuted(&[0, 3, 1, 2])?,
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "inner flip [:, ::-1] of (8192,8192) f32".into(),
        src: dense(&[8192, 8192], 4).sliced(s![.., ..;-1])?,
        dst: dense(&[8192, 8192], 4),
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "misaligned [1:, 1:] of (8193,8193) f16".into(),
        src: dense(&[8193, 8193], 2).sliced(s![1.., 1..])?,
        dst: dense(&[8192, 8192], 2),
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "both strided [::2, ::2] -> [::2, ::2] (8192,16384) f32".into(),
        src: dense(&[8192, 16384], 4).sliced(s![..;2, ..;2])?,
        dst: dense(&[8192, 16384], 4)
            .sliced(s![..;2, ..;2])?
            .permuted(&[0, 1])?,
        src_host: false,
        dst_host: false,
        pageable: false,
    });
    cases.push(Case {
        name: "batched 32x8 transposes (262144,32,8) f16".into(),
        src: dense(&[262144, 32, 8], 2).permuted(&[0, 2, 1])?,
        dst: dense(&[262144, 8, 32], 2),
        src_host: false,
        dst_host: false,
        pageable: false,
    });
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
    // The byte and halfword classes: odd transposes, channel layouts, batched small
    // matrices, misaligned starts.
    let device = |name: &str, src: StridedLayout, dst: StridedLayout| Case {
        name: name.into(),
        src,
        dst,
        src_host: false,
        dst_host: false,
        pageable: false,
    };
    let transposed = |rows: i64, cols: i64, isz: usize| -> R<(StridedLayout, StridedLayout)> {
        let src = dense(&[cols, rows], isz).permuted(&[1, 0])?;
        let dst = dense(src.shape(), isz);
        Ok((src, dst))
    };
    let (s1, d1) = transposed(5000, 7001, 1)?;
    cases.push(device("transpose 5000x7001 u8", s1, d1));
    let (s2, d2) = transposed(6007, 2049, 2)?;
    cases.push(device("transpose 6007x2049 bf16", s2, d2));
    let m = 1i64 << 24;
    cases.push(device(
        "RGBA (M,4)->(4,M) u8, M=2^24",
        dense(&[m, 4], 1).permuted(&[1, 0])?,
        dense(&[4, m], 1),
    ));
    cases.push(device(
        "RGB->BGR [..., ::-1] (64,512,512,3) u8",
        dense(&[64, 512, 512, 3], 1).sliced(s![.., .., .., ..;-1])?,
        dense(&[64, 512, 512, 3], 1),
    ));
    cases.push(device(
        "NHWC->NCHW (128,96,96,3) u8",
        dense(&[128, 96, 96, 3], 1).permuted(&[0, 3, 1, 2])?,
        dense(&[128, 3, 96, 96], 1),
    ));
    cases.push(device(
        "video NHWC->NCHW (360,1080,1920,3) u8",
        dense(&[360, 1080, 1920, 3], 1).permuted(&[0, 3, 1, 2])?,
        dense(&[360, 3, 1080, 1920], 1),
    ));
    cases.push(device(
        "batched 16x48 transposes (8192,16,48) u8",
        dense(&[8192, 16, 48], 1).permuted(&[0, 2, 1])?,
        dense(&[8192, 48, 16], 1),
    ));
    cases.push(device(
        "batched 16x16 transposes (65536,16,16) f32",
        dense(&[65536, 16, 16], 4).permuted(&[0, 2, 1])?,
        dense(&[65536, 16, 16], 4),
    ));
    cases.push(device(
        "misaligned [3:, 5:] of (7000,7000) u8",
        dense(&[7000, 7000], 1).sliced(s![3.., 5..])?,
        dense(&[6997, 6995], 1),
    ));
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
        src: dense(&[4096, 4096], 4),
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
        "{:<58} {:>10} {:>10} {:>9} {:>8} {:>9} {:>9}",
        "case", "MB moved", "time ms", "GB/s", "ratio", "sectors", "bytes"
    );
    // Each case's sector-exact traffic, for bench/compare.py to rate PyTorch and CuPy on.
    let mut traffic_lines = String::new();
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
        // Efficiency against the sector-exact roofline (sectors read, sectors written,
        // partially written ones twice) and against the bytes-only one (sectors read plus
        // bytes written), at the ceiling's rate (device cases only).
        let (sectors, bytes) = if c.src_host || c.dst_host {
            ("-".to_string(), "-".to_string())
        } else {
            let exact = roofline::sector_exact_traffic(&c.src, &c.dst);
            traffic_lines.push_str(&format!(
                "{{\"case\":{:?},\"sector_traffic\":{exact},\"bytes_traffic\":{}}}\n",
                c.name,
                roofline::traffic(&c.src)
            ));
            (
                format!("{:.2}", exact as f64 / base_gbs / 1e6 / ms),
                format!(
                    "{:.2}",
                    roofline::traffic(&c.src) as f64 / base_gbs / 1e6 / ms
                ),
            )
        };
        println!(
            "{:<58} {:>10.1} {:>10.3} {:>9.0} {:>8.2} {:>9} {:>9}",
            c.name,
            moved as f64 / 1e6,
            ms,
            gbs,
            gbs / base_gbs,
            sectors,
            bytes
        );
    }
    if let Some(path) = std::env::args().nth(1) {
        if let Err(e) = std::fs::write(&path, traffic_lines) {
            eprintln!("copy_bench: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
    Ok(())
}
