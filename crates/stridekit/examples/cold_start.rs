//! A fresh process's first copies, and the host time of small copies:
//! `cargo run --release --example cold_start` on a GPU machine. Run it twice with the
//! same `STRIDEKIT_KERNEL_CACHE` directory (cold, then warm) and once with it `off`;
//! `cold_start u8` makes the byte transpose the first copy. Last, the host time of the
//! random set's multi-axis tiled copies at 1-2 MiB (the median over them).
//!
//! A new machine also has an empty driver JIT cache (NVRTC's PTX is compiled to the GPU's
//! code by the driver, which keeps the result in `CUDA_CACHE_PATH`, by default
//! `~/.nv/ComputeCache`): for its first copies, run with `CUDA_CACHE_PATH` set to an
//! empty directory too. With a kernel pack (`precompile DIR`, then
//! `STRIDEKIT_KERNEL_PACKS=DIR`), a new machine's first copies load their kernels from it.
//! Without one, first copies run on the fallback kernel while their own compile on
//! background threads (then timed again on their own), unless
//! `STRIDEKIT_BACKGROUND_COMPILE=0` makes them wait for their kernels.

use std::time::Instant;
use stridekit::cudarc::driver::PushKernelArg;
use stridekit::{
    Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
};

#[path = "../tests/common/random_set.rs"]
mod random_set;

type R<T> = Result<T, stridekit::Error>;

fn err(e: impl std::fmt::Display) -> stridekit::Error {
    stridekit::Error::Invalid {
        op: "cold_start",
        rule: e.to_string(),
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() -> R<()> {
    if !stridekit::cuda_available() {
        println!("cold_start needs a CUDA device");
        return Ok(());
    }
    let t = Instant::now();
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let mut a = mr.allocate(64 << 20, &stream)?;
    let mut b = mr.allocate(64 << 20, &stream)?;
    a.fill(1, &stream)?;
    b.fill(2, &stream)?;
    stream
        .synchronize()
        .map_err(|e| stridekit::Error::Invalid {
            op: "cold_start",
            rule: e.to_string(),
        })?;
    println!("device, stream, pool, 2 x 64 MiB: {:.1} ms", ms(t));
    let sync = |s: &std::sync::Arc<stridekit::CudaStream>| {
        s.synchronize().map_err(|e| stridekit::Error::Invalid {
            op: "cold_start",
            rule: e.to_string(),
        })
    };
    // Kernel variants in turn: a tiled f32 transpose, a tiled u8 transpose, multi-axis
    // u16 tiles, then a copy whose schedule needs two new kernels (compiled side by side).
    let cases: Vec<(&str, StridedLayout, StridedLayout)> = vec![
        (
            "first copy: transpose 4096x4096 f32",
            StridedLayout::dense(&[4096, 4096], 4, Order::C)?.permuted(&[1, 0])?,
            StridedLayout::dense(&[4096, 4096], 4, Order::C)?,
        ),
        (
            "another variant: transpose 8192x8192 u8",
            StridedLayout::dense(&[8192, 8192], 1, Order::C)?.permuted(&[1, 0])?,
            StridedLayout::dense(&[8192, 8192], 1, Order::C)?,
        ),
        (
            "another variant: (64,64,64) u16 [::2] into F order, multi-axis tiles",
            StridedLayout::dense(&[64, 64, 128], 2, Order::C)?
                .sliced(stridekit::s![.., .., ..;2])?,
            StridedLayout::dense(&[64, 64, 64], 2, Order::F)?,
        ),
        (
            "a class of two kernels: (31,3,2,13,91,21) u16 tiles, 2- and 4-byte writes",
            StridedLayout::dense(&[31, 3, 2, 13, 91, 21], 2, Order::C)?,
            StridedLayout::dense(&[31, 3, 2, 13, 91, 21], 2, Order::Axes(&[4, 0, 5, 2, 1, 3]))?,
        ),
    ];
    let mut cases = cases;
    if std::env::args().nth(1).as_deref() == Some("u8") {
        // `cold_start u8`: the process's first copy is the byte transpose.
        cases.swap(0, 1);
    }
    // Each case copied once more, its time printed after `label` (the case's name without
    // its prefix where `label` is not empty).
    let mut time_cases = |label: &str| -> R<()> {
        for (name, sl, dl) in &cases {
            let t = Instant::now();
            {
                let src = StridedMemoryView::from_buffer(&a, sl.clone(), None)?;
                let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl.clone(), None)?;
                dst.copy_from(&src, Some(&stream))?;
            }
            sync(&stream)?;
            match name.split_once(": ") {
                Some((_, short)) if !label.is_empty() => {
                    println!("  {label}, {short}: {:.2} ms", ms(t))
                }
                _ => println!("{name}: {:.2} ms", ms(t)),
            }
        }
        Ok(())
    };
    time_cases("")?;
    // With background compiles (the default), the copies above ran on the fallback kernel
    // while their own kernels compiled: the fallback's own time (again at once, while they
    // still compile), how long they took, and the copies on them.
    let background = stridekit::kernels_compiled_in_background();
    if background > 0 {
        time_cases("again while they compile")?;
        let t = Instant::now();
        stridekit::wait_for_kernels();
        println!(
            "kernels compiled in the background: {background}, done {:.1} ms after that",
            ms(t)
        );
        time_cases("then on its own kernels")?;
    }
    // Host time of small copies (non-blocking device-to-device), after warm-up.
    let small: Vec<(&str, StridedLayout, StridedLayout)> = vec![
        (
            "contiguous 4 KiB",
            StridedLayout::dense(&[1024], 4, Order::C)?,
            StridedLayout::dense(&[1024], 4, Order::C)?,
        ),
        (
            "256x256 f32 transpose",
            StridedLayout::dense(&[256, 256], 4, Order::C)?.permuted(&[1, 0])?,
            StridedLayout::dense(&[256, 256], 4, Order::C)?,
        ),
        (
            "(8, 6, 10, 70) u16 into axis order (3, 1, 0, 2), multi-axis tiles",
            StridedLayout::dense(&[8, 6, 10, 70], 2, Order::C)?,
            StridedLayout::dense(&[8, 6, 10, 70], 2, Order::Axes(&[3, 1, 0, 2]))?,
        ),
    ];
    // Timed in batches of 100 calls (the stream's queue never fills, so the GPU's own
    // speed never throttles submission), synchronized between batches.
    let host_us = |f: &mut dyn FnMut() -> R<()>| -> R<f64> {
        for _ in 0..200 {
            f()?;
        }
        // Timed on the copies' own kernels, not the fallback.
        stridekit::wait_for_kernels();
        for _ in 0..10 {
            f()?;
        }
        sync(&stream)?;
        let mut per = vec![];
        for _ in 0..101 {
            let t = Instant::now();
            for _ in 0..100 {
                f()?;
            }
            per.push(t.elapsed().as_secs_f64() * 1e6 / 100.0);
            sync(&stream)?;
        }
        per.sort_by(|x, y| x.total_cmp(y));
        Ok(per[50])
    };
    for (name, sl, dl) in &small {
        let src = StridedMemoryView::from_buffer(&a, sl.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl.clone(), None)?;
        let us = host_us(&mut || dst.copy_from(&src, Some(&stream)))?;
        println!("small copy host time, {name}: {us:.2} µs per call (median of 101 x 100)");
    }
    // The driver's own floor, same run: the bare calls each small copy makes.
    let (pa, pb) = (a.ptr(), b.ptr());
    let memcpy_4k = || -> R<()> {
        stream.context().bind_to_thread().map_err(err)?;
        // SAFETY: two live 64 MiB device buffers; 4 KiB stays inside both.
        let r = unsafe {
            stridekit::cudarc::driver::sys::cuMemcpyAsync(pb, pa, 4096, stream.cu_stream())
        };
        r.result().map_err(err)
    };
    let memcpy_us = host_us(&mut || memcpy_4k())?;
    let empty = dev
        .compile_module(
            "cold_start_empty",
            "extern \"C\" __global__ void empty(const float* a, float* b) {}",
        )?
        .load_function("empty")
        .map_err(err)?;
    let launch_us = host_us(&mut || {
        let mut l = stream.launch_builder(&empty);
        l.arg(&pa).arg(&pb);
        // SAFETY: the kernel takes two pointers and touches neither.
        unsafe {
            l.launch(stridekit::cudarc::driver::LaunchConfig {
                grid_dim: (8, 8, 1),
                block_dim: (32, 8, 1),
                shared_mem_bytes: 0,
            })
        }
        .map(|_| ())
        .map_err(err)
    })?;
    println!("driver floor, same run: cuMemcpyAsync 4 KiB {memcpy_us:.2} µs, cuLaunchKernel (empty kernel, via cudarc) {launch_us:.2} µs");
    // The other calls a small copy makes, each alone: the capture query, the event that
    // records the copy on both views' memory, and the plan with its schedule.
    let capture_query = || -> R<()> {
        let mut status =
            stridekit::cudarc::driver::sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: a live stream of the current context; `status` is written only.
        unsafe {
            stridekit::cudarc::driver::sys::cuStreamIsCapturing(stream.cu_stream(), &mut status)
        }
        .result()
        .map_err(err)
    };
    let capture_us = host_us(&mut || capture_query())?;
    let event = stream.context().new_event(None).map_err(err)?;
    let record_us = host_us(&mut || event.record(&stream).map_err(err))?;
    // The pair every recorded small copy makes: the copy, then the event behind it on the
    // same stream (the record's event may cost more after queued work than alone).
    let pair_us = host_us(&mut || {
        memcpy_4k()?;
        event.record(&stream).map_err(err)
    })?;
    // The same pair in the order and with the calls a small copy makes them: the capture
    // query first, and each copy's event a different one (the engine records each copy
    // on an event from its pool, not on the last one again).
    let events = (0..8)
        .map(|_| stream.context().new_event(None).map_err(err))
        .collect::<R<Vec<_>>>()?;
    let mut turn = 0usize;
    let engine_order_us = host_us(&mut || {
        capture_query()?;
        memcpy_4k()?;
        turn = (turn + 1) % events.len();
        events[turn].record(&stream).map_err(err)
    })?;
    println!(
        "the pair as a small copy makes it (capture query, copy, a pooled event of 8 in turn): {engine_order_us:.2} µs"
    );
    // The small-copy target's figure: the contiguous 4 KiB copy against those same driver
    // calls made bare, in alternating batches of one loop, so that the host's and the
    // driver's drift between measurements (up to 2 µs between processes, 1 µs within one)
    // falls on both alike; the gap is the median of each round's difference.
    {
        let (_, sl, dl) = &small[0];
        let src = StridedMemoryView::from_buffer(&a, sl.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, dl.clone(), None)?;
        let mut copy = || dst.copy_from(&src, Some(&stream));
        let mut bare = || -> R<()> {
            capture_query()?;
            memcpy_4k()?;
            turn = (turn + 1) % events.len();
            events[turn].record(&stream).map_err(err)
        };
        let batch = |f: &mut dyn FnMut() -> R<()>| -> R<f64> {
            let t = Instant::now();
            for _ in 0..100 {
                f()?;
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / 100.0;
            sync(&stream)?;
            Ok(us)
        };
        for _ in 0..10 {
            batch(&mut copy)?;
            batch(&mut bare)?;
        }
        let (mut copies, mut bares, mut gaps) = (vec![], vec![], vec![]);
        for round in 0..101 {
            // Which goes first alternates too.
            let (c, d) = if round % 2 == 0 {
                let c = batch(&mut copy)?;
                (c, batch(&mut bare)?)
            } else {
                let d = batch(&mut bare)?;
                (batch(&mut copy)?, d)
            };
            copies.push(c);
            bares.push(d);
            gaps.push(c - d);
        }
        for v in [&mut copies, &mut bares, &mut gaps] {
            v.sort_by(|x, y| x.total_cmp(y));
        }
        println!(
            "small copy against its driver calls, alternating batches (101 rounds of 100 calls each): copy {:.2} µs, bare driver calls {:.2} µs, difference median {:.2} µs (10th to 90th percentile {:.2} to {:.2})",
            copies[50], bares[50], gaps[50], gaps[10], gaps[90]
        );
    }
    // Planning alone (the engine plans each copy, and keeps the schedules of copies it
    // makes again): the contiguous copy, and the multi-axis tiles.
    let plan_alone = |(_, sl, dl): &(&str, StridedLayout, StridedLayout)| {
        host_us(&mut || {
            let plan = stridekit::CopyPlan::new(dl, sl)?;
            std::hint::black_box(plan.schedule(pb, pa));
            Ok(())
        })
    };
    let (plan_us, tiles_plan_us) = (plan_alone(&small[0])?, plan_alone(&small[2])?);
    println!(
        "the other calls of a small copy, each alone: cuStreamIsCapturing {capture_us:.2} µs, cuEventRecord (via cudarc) {record_us:.2} µs, plan and schedule {plan_us:.2} µs (the multi-axis tiles: {tiles_plan_us:.2} µs)"
    );
    println!(
        "driver floor of a recorded copy: cuMemcpyAsync 4 KiB then cuEventRecord on its stream {pair_us:.2} µs (the event after the copy: {:.2} µs)",
        pair_us - memcpy_us
    );
    // A peer: cudarc's own safe device-to-device copy, which also records its read and
    // write on the slices' events.
    let ca = stream.alloc_zeros::<u8>(4096).map_err(err)?;
    let mut cb = stream.alloc_zeros::<u8>(4096).map_err(err)?;
    let cudarc_us = host_us(&mut || stream.memcpy_dtod(&ca, &mut cb).map_err(err))?;
    println!("cudarc's CudaStream::memcpy_dtod, 4 KiB between two CudaSlices: {cudarc_us:.2} µs");
    // The random set at 1-2 MiB a case, its copies with multi-axis tiles: host time per
    // call (median of 11 batches of 50, synchronized between batches), and planning alone.
    let mut rng = random_set::Rng(random_set::SEED);
    let (mut set_copy_us, mut set_plan_us) = (vec![], vec![]);
    for _ in 0..200 {
        let c = random_set::next_case(&mut rng, 1);
        let sbuf = mr.allocate(c.src_bytes, &stream)?;
        let mut dbuf = mr.allocate(c.dst_bytes, &stream)?;
        let (sp, dp) = (sbuf.ptr(), dbuf.ptr());
        let plan = stridekit::CopyPlan::new(&c.dst, &c.src)?;
        if !plan
            .schedule(dp, sp)
            .iter()
            .any(|s| matches!(s, stridekit::CopyStep::Tiled(_)))
        {
            continue;
        }
        let src = StridedMemoryView::from_buffer(&sbuf, c.src.clone(), None)?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, c.dst.clone(), None)?;
        dst.copy_from(&src, Some(&stream))?;
        stridekit::wait_for_kernels();
        let mut batches = vec![];
        for _ in 0..12 {
            let t = Instant::now();
            for _ in 0..50 {
                dst.copy_from(&src, Some(&stream))?;
            }
            batches.push(t.elapsed().as_secs_f64() * 1e6 / 50.0);
            sync(&stream)?;
        }
        // The first batch plans and warms up.
        batches.remove(0);
        batches.sort_by(|x, y| x.total_cmp(y));
        set_copy_us.push(batches[5]);
        let t = Instant::now();
        for _ in 0..50 {
            let p = stridekit::CopyPlan::new(&c.dst, &c.src)?;
            std::hint::black_box(p.schedule(dp, sp));
        }
        set_plan_us.push(t.elapsed().as_secs_f64() * 1e6 / 50.0);
    }
    set_copy_us.sort_by(|x, y| x.total_cmp(y));
    set_plan_us.sort_by(|x, y| x.total_cmp(y));
    if let (Some(c), Some(p)) = (
        set_copy_us.get(set_copy_us.len() / 2),
        set_plan_us.get(set_plan_us.len() / 2),
    ) {
        println!(
            "the random set at 1-2 MiB, its {} copies with multi-axis tiles: host time per call {c:.2} µs, planning alone {p:.2} µs (medians)",
            set_copy_us.len()
        );
    }
    Ok(())
}
