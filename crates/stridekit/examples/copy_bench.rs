//! Strided copy benchmark: `cargo run --release --example copy_bench` on a GPU machine.
//!
//! Prints, per case, the bytes moved (read + written), the median device time of 20 runs
//! (`examples/common/timing.rs`: each run queued behind an L2-evicting read pass, so the
//! host's work never shows as idle GPU time), the host time of the call, the bandwidth,
//! and the ratio to a contiguous device memcpy of 1 GiB measured in the same run (host
//! transfers: timed alone, against the contiguous transfer of the same size). Device
//! cases also get their efficiency against two rooflines at that memcpy's rate:
//! "sectors", the sector-exact one (the 32-byte sectors the reads touch, each written
//! sector, and a partially written sector twice: DRAM reads, merges and writes it back),
//! the primary figure; "alone", the same ratio for the copy timed alone on an idle GPU
//! (host planning and launch included); "bytes", the sectors read plus the bytes
//! written; and "pairs", the sector-exact one with reads counted in 64-byte sector pairs
//! (what the DRAM serves a lone sector's read at; `roofline::pair_traffic`). Given a path (`copy_bench traffic.jsonl`), it writes each case's sector-exact
//! traffic there, for `bench/compare.py` to rate PyTorch and CuPy on the same roofline.
//! `--only SUBSTRING` keeps the cases whose name holds it; `--profile` runs each kept
//! case's copy once and nothing else, for Nsight Compute (`bench/profile.sh`).

#[path = "common/roofline.rs"]
mod roofline;
#[path = "common/timing.rs"]
mod timing;

use std::sync::Arc;
use stridekit::{
    s, Buffer, CudaStream, Device, DeviceMemoryResource, HostMemoryResource, MemoryResource, Order,
    PinnedMemoryResource, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

type R<T> = Result<T, stridekit::Error>;

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
    let args = Args::parse();
    let timer = timing::Timer::new(&dev, &stream)?;
    // Ceiling: contiguous device-to-device memcpy of 1 GiB.
    let memcpy_gbs = if args.profile {
        0.0
    } else {
        let gib = dense(&[1 << 28], 4);
        let (a, mut b) = (alloc(false, false, &gib)?, alloc(false, false, &gib)?);
        let ms = {
            let src = StridedMemoryView::from_buffer(&a, gib.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, gib.clone(), None)?;
            timer.device(20, || dst.copy_from(&src, Some(&stream)))?.ms
        };
        let gbs = 2.0 * (1u64 << 30) as f64 / ms / 1e6;
        println!("contiguous device memcpy: {gbs:.0} GB/s (read + write)\n");
        gbs
    };

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
    // Many-axis permutations (the first three also timed with LibreTT:
    // bench/librett_compare.cu), then small ones: 16 to 512 tiles, a few microseconds.
    for (shape, perm, isz) in [
        (vec![32i64, 32, 32, 32, 32], vec![4i64, 2, 0, 3, 1], 4usize),
        (vec![16, 16, 16, 16, 16, 16], vec![5, 3, 1, 4, 2, 0], 4),
        (vec![24, 40, 3, 50, 36], vec![3, 1, 4, 0, 2], 8),
        (vec![8, 8, 8, 8, 8], vec![4, 2, 0, 3, 1], 4),
        (vec![12, 12, 12, 12, 12], vec![4, 2, 0, 3, 1], 4),
        (vec![16, 16, 16, 16, 16], vec![4, 2, 0, 3, 1], 4),
        (vec![6, 6, 6, 6, 6, 6], vec![5, 3, 1, 4, 2, 0], 4),
        (vec![16, 16, 16, 16], vec![3, 1, 0, 2], 2),
        (vec![6, 10, 3, 12, 9], vec![3, 1, 4, 0, 2], 8),
    ] {
        let src = dense(&shape, isz).permuted(&perm)?;
        cases.push(Case {
            name: format!(
                "{}-D {:?} {} permute {perm:?}",
                shape.len(),
                shape,
                match isz {
                    2 => "f16",
                    4 => "f32",
                    8 => "f64",
                    _ => "bytes",
                }
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
    for (isz, name) in [(1usize, "u8"), (2, "f16")] {
        cases.push(Case {
            name: format!("inner flip [:, ::-1] of (8192,8192) {name}"),
            src: dense(&[8192, 8192], isz).sliced(s![.., ..;-1])?,
            dst: dense(&[8192, 8192], isz),
            src_host: false,
            dst_host: false,
            pageable: false,
        });
    }
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
    // A case between two device layouts.
    let device = |name: &str, src: StridedLayout, dst: StridedLayout| Case {
        name: name.into(),
        src,
        dst,
        src_host: false,
        dst_host: false,
        pageable: false,
    };
    // Short patterns repeated into a contiguous destination (`expand(...).contiguous()`,
    // fills): the repeat kernel.
    for (rows, cols, isz, t) in [
        (1i64 << 26, 3i64, 1usize, "u8"),
        (1 << 20, 75, 2, "f16"),
        (32768, 1000, 4, "f32"),
        (8192, 8192, 4, "f32"),
    ] {
        let row = if cols == 8192 { 1 } else { cols };
        let src = dense(&[1, row], isz).broadcast_to(&[rows, cols])?;
        let dst = dense(src.shape(), isz);
        cases.push(device(
            &format!("broadcast (1,{row})->({rows},{cols}) {t}"),
            src,
            dst,
        ));
    }
    // The byte and halfword classes: odd transposes, channel layouts, batched small
    // matrices, misaligned starts.
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
    // One channel picked out of interleaved pixels into a fresh array.
    cases.push(device(
        "red channel [..., 0] of (4096,4096,3) u8",
        dense(&[4096, 4096, 3], 1).sliced(s![.., .., 0])?,
        dense(&[4096, 4096], 1),
    ));
    cases.push(device(
        "left channel [:, 0] of (2^24,2) i16 stereo",
        dense(&[1 << 24, 2], 2).sliced(s![.., 0])?,
        dense(&[1 << 24], 2),
    ));
    // A transposed slice into a fresh dense array: rows start at odd bytes in the source,
    // 16-byte aligned in the destination.
    for (isz, t) in [(1usize, "u8"), (2, "f16")] {
        cases.push(device(
            &format!("transposed [1:, 1:] of (8193,8193) {t}"),
            dense(&[8193, 8193], isz)
                .sliced(s![1.., 1..])?
                .permuted(&[1, 0])?,
            dense(&[8192, 8192], isz),
        ));
    }
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

    cases.retain(|c| {
        args.only
            .as_ref()
            .is_none_or(|o| c.name.contains(o.as_str()))
    });
    if args.profile {
        // One copy per case and nothing else on the GPU: for `ncu`, which profiles every
        // kernel of the process (fills are memsets, not kernels).
        for c in &cases {
            let sbuf = alloc(c.src_host, c.pageable, &c.src)?;
            let mut dbuf = alloc(c.dst_host, c.pageable, &c.dst)?;
            let src = StridedMemoryView::from_buffer(&sbuf, c.src.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, c.dst.clone(), None)?;
            dst.copy_from(&src, Some(&stream))?;
            stream
                .synchronize()
                .map_err(|e| stridekit::Error::Invalid {
                    op: "bench",
                    rule: e.to_string(),
                })?;
            println!("profiled: {}", c.name);
        }
        for o in overlaps() {
            if args.only.as_ref().is_some_and(|w| o.0.contains(w.as_str())) {
                overlap_case(&mr, &stream, &timer, 0.0, true, &o)?;
            }
        }
        return Ok(());
    }
    println!(
        "{:<58} {:>9} {:>9} {:>9} {:>8} {:>7} {:>8} {:>7} {:>7} {:>7}",
        "case",
        "MB moved",
        "time ms",
        "host us",
        "GB/s",
        "ratio",
        "sectors",
        "alone",
        "bytes",
        "pairs"
    );
    // Each case's sector-exact traffic, for bench/compare.py to rate PyTorch and CuPy on.
    let mut traffic_lines = String::new();
    for c in &cases {
        let sbuf = alloc(c.src_host, c.pageable, &c.src)?;
        let mut dbuf = alloc(c.dst_host, c.pageable, &c.dst)?;
        let moved = 2 * c.dst.volume() * c.dst.itemsize();
        let host_side = c.src_host || c.dst_host;
        let base_gbs = if host_side {
            // The contiguous transfer of the same bytes, same direction.
            let flat = dense(&[c.dst.volume() as i64], c.dst.itemsize());
            let src = StridedMemoryView::from_buffer(&sbuf, flat.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, flat, None)?;
            let ms = timer.alone(20, || dst.copy_from(&src, Some(&stream)))?;
            moved as f64 / ms / 1e6
        } else {
            memcpy_gbs
        };
        let src = StridedMemoryView::from_buffer(&sbuf, c.src.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, c.dst.clone(), None)?;
        let t = timer.device(20, || dst.copy_from(&src, Some(&stream)))?;
        // Transfers over PCIe and CPU staging are timed alone: their host work is part of
        // the copy.
        let alone = timer.alone(20, || dst.copy_from(&src, Some(&stream)))?;
        let ms = if host_side { alone } else { t.ms };
        let gbs = moved as f64 / ms / 1e6;
        // Efficiency against the sector-exact roofline (sectors read, sectors written,
        // partially written ones twice) and against the bytes-only one (sectors read plus
        // bytes written), at the ceiling's rate (device cases only); "alone": the
        // sector-exact ratio of the copy timed alone on an idle GPU.
        let (sectors, alone_txt, bytes, pairs) = if host_side {
            let dash = || "-".to_string();
            (dash(), dash(), dash(), dash())
        } else {
            let exact = roofline::sector_exact_traffic(&c.src, &c.dst);
            traffic_lines.push_str(&format!(
                "{{\"case\":{:?},\"sector_traffic\":{exact},\"bytes_traffic\":{}}}\n",
                c.name,
                roofline::traffic(&c.src)
            ));
            (
                format!("{:.2}", exact as f64 / base_gbs / 1e6 / ms),
                format!("{:.2}", exact as f64 / base_gbs / 1e6 / alone),
                format!(
                    "{:.2}",
                    roofline::traffic(&c.src) as f64 / base_gbs / 1e6 / ms
                ),
                roofline::pair_traffic(&c.src, &c.dst).map_or("-".to_string(), |p| {
                    format!("{:.2}", p as f64 / base_gbs / 1e6 / ms)
                }),
            )
        };
        println!(
            "{:<58} {:>9.1} {:>9.3} {:>9.1} {:>8.0} {:>7.2} {:>8} {:>7} {:>7} {:>7}",
            c.name,
            moved as f64 / 1e6,
            ms,
            t.host_us,
            gbs,
            gbs / base_gbs,
            sectors,
            alone_txt,
            bytes,
            pairs
        );
    }
    for o in overlaps() {
        if args.only.as_ref().is_none_or(|w| o.0.contains(w.as_str())) {
            let exact = overlap_case(&mr, &stream, &timer, memcpy_gbs, false, &o)?;
            traffic_lines.push_str(&format!(
                "{{\"case\":{:?},\"sector_traffic\":{exact},\"bytes_traffic\":{exact}}}\n",
                o.0
            ));
        }
    }
    if let Some(path) = args.traffic {
        if let Err(e) = std::fs::write(&path, traffic_lines) {
            eprintln!("copy_bench: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
    Ok(())
}

/// Overlapping copies: (name, shape, itemsize, source and destination slices of one
/// buffer). The first three split into independent rows; the last is one shifted run, in
/// ordered chunks. Each is one pass.
type Overlap = (
    &'static str,
    [i64; 2],
    usize,
    Vec<stridekit::SliceArg>,
    Vec<stridekit::SliceArg>,
);

fn overlaps() -> Vec<Overlap> {
    vec![
        (
            "overlapping x[:, 1:] = x[:, :-1] (8192,8192) f32",
            [8192, 8192],
            4,
            s![.., ..8191].to_vec(),
            s![.., 1..].to_vec(),
        ),
        (
            "overlapping x[:, :] = x[:, ::-1] (8192,8192) f32",
            [8192, 8192],
            4,
            s![.., ..;-1].to_vec(),
            s![.., ..].to_vec(),
        ),
        (
            "overlapping x[:, 1:] = x[:, :-1] (16384,16384) u8",
            [16384, 16384],
            1,
            s![.., ..16383].to_vec(),
            s![.., 1..].to_vec(),
        ),
        (
            "overlapping x[1:] = x[:-1] (8192,8192) f32",
            [8192, 8192],
            4,
            s![..8191, ..].to_vec(),
            s![1.., ..].to_vec(),
        ),
    ]
}

/// One overlapping copy: source and destination share one buffer. Returns its
/// sector-exact traffic.
fn overlap_case(
    mr: &DeviceMemoryResource,
    stream: &Arc<CudaStream>,
    timer: &timing::Timer,
    memcpy_gbs: f64,
    profile: bool,
    (name, shape, isz, from, to): &Overlap,
) -> R<u64> {
    let x = dense(shape, *isz);
    let (sl, dl) = (x.sliced(from)?, x.sliced(to)?);
    let mut b = mr.allocate(x.required_size_in_bytes()?, stream)?;
    b.fill(0x5A, stream)?;
    let (ptr, size) = (b.ptr(), b.size());
    // SAFETY: both views cover `b`, which outlives them; they overlap on purpose (a copy
    // reads as if the source were copied first) and nothing else uses `b` meanwhile.
    let src = unsafe { StridedMemoryView::from_foreign(ptr, size, sl.clone(), None, ()) }?;
    // SAFETY: as above.
    let mut dst =
        unsafe { StridedMemoryViewMut::from_foreign_mut(ptr, size, dl.clone(), None, ()) }?;
    if profile {
        dst.copy_from(&src, Some(stream))?;
        stream
            .synchronize()
            .map_err(|e| stridekit::Error::Invalid {
                op: "bench",
                rule: e.to_string(),
            })?;
        return Ok(0);
    }
    let moved = 2 * sl.volume() * isz;
    let t = timer.device(20, || dst.copy_from(&src, Some(stream)))?;
    let alone = timer.alone(20, || dst.copy_from(&src, Some(stream)))?;
    let exact = roofline::sector_exact_traffic(&sl, &dl);
    let gbs = moved as f64 / t.ms / 1e6;
    println!(
        "{:<58} {:>9.1} {:>9.3} {:>9.1} {:>8.0} {:>7.2} {:>8.2} {:>7.2} {:>7}",
        name,
        moved as f64 / 1e6,
        t.ms,
        t.host_us,
        gbs,
        gbs / memcpy_gbs,
        exact as f64 / memcpy_gbs / 1e6 / t.ms,
        exact as f64 / memcpy_gbs / 1e6 / alone,
        "-"
    );
    Ok(exact)
}

/// `copy_bench [traffic.jsonl] [--only SUBSTRING] [--profile]`.
struct Args {
    traffic: Option<String>,
    only: Option<String>,
    profile: bool,
}

impl Args {
    fn parse() -> Self {
        let mut a = Args {
            traffic: None,
            only: None,
            profile: false,
        };
        let mut it = std::env::args().skip(1);
        while let Some(x) = it.next() {
            match x.as_str() {
                "--only" => a.only = it.next(),
                "--profile" => a.profile = true,
                _ => a.traffic = Some(x),
            }
        }
        a
    }
}
