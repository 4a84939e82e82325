//! Small many-axis permutes, where a copy's launches and round trips weigh more than its
//! bytes: `cargo run --release --example small_bench [FILE]` on a GPU. Each case (5-D and
//! 6-D permutes of f32, 4-D of halfwords and bytes, 5-D of f64 and 16-byte elements, from
//! a few KiB to about 100 MiB) is copied as the engine plans it and again with every copy
//! kept on multi-axis tiles and gathered rows (`set_small_copy_elements(0)`), each checked
//! byte for byte, then timed as `copy_bench` times (median device time, queued behind an
//! L2 flush). With FILE, each case is written there as a JSON line for
//! `bench/small_compare.py`, which times PyTorch on the same permutes.

use stridekit::{
    CopyPlan, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout,
    StridedMemoryView, StridedMemoryViewMut,
};

#[path = "../tests/common/pattern_check.rs"]
mod pattern_check;
#[path = "common/timing.rs"]
mod timing;

type R<T> = Result<T, stridekit::Error>;

/// The permutes: (shape, axes, itemsize).
fn cases() -> Vec<(Vec<i64>, Vec<i64>, usize)> {
    let five = vec![4, 2, 0, 3, 1];
    let mut v = vec![];
    for n in [6, 8, 10, 12, 14, 16, 20, 24, 32] {
        v.push((vec![n; 5], five.clone(), 4));
    }
    for n in [4, 6, 8, 10, 12, 16] {
        v.push((vec![n; 6], vec![5, 3, 1, 4, 2, 0], 4));
    }
    for n in [16, 24, 32, 48, 64, 96] {
        v.push((vec![n; 4], vec![3, 1, 0, 2], 2));
    }
    for k in [1, 2, 3, 4] {
        v.push((
            vec![6 * k, 10 * k, 3, 12 * k, 9 * k],
            vec![3, 1, 4, 0, 2],
            8,
        ));
    }
    for n in [16, 32, 48, 64, 96] {
        v.push((vec![n; 4], vec![3, 1, 0, 2], 1));
    }
    for n in [8, 12, 16, 24] {
        v.push((vec![n; 5], five.clone(), 16));
    }
    v
}

fn main() -> R<()> {
    if !stridekit::cuda_available() {
        println!("small_bench needs a CUDA device");
        return Ok(());
    }
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let timer = timing::Timer::new(&dev, &stream)?;
    let mut lines = String::new();
    println!(
        "{:<44} {:>10} {:>10} {:>10} {:>8}",
        "permute", "elements", "planned us", "tiles us", "speedup"
    );
    let mut wrong = 0;
    for (shape, axes, isz) in cases() {
        let sl = StridedLayout::dense(&shape, isz, Order::C)?.permuted(&axes)?;
        let dl = StridedLayout::dense(sl.shape(), isz, Order::C)?;
        let plan = CopyPlan::new(&dl, &sl)?;
        let bytes = plan.volume * isz;
        let pattern: Vec<u8> = (0..bytes as u64).map(pattern_check::pattern).collect();
        let mut sbuf = mr.allocate(bytes, &stream)?;
        sbuf.copy_from_host(&pattern, &stream)?;
        let mut dbuf = mr.allocate(bytes, &stream)?;
        let mut time = |small: usize| -> R<(f64, bool)> {
            stridekit::set_small_copy_elements(small);
            dbuf.fill(pattern_check::POISON, &stream)?;
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None)?;
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)?;
            dst.copy_from(&src, Some(&stream))?;
            let mut got = vec![0u8; bytes];
            drop(dst);
            dbuf.copy_to_host(&mut got, &stream)?;
            let ok = pattern_check::exact(&got, &plan);
            let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)?;
            let ms = timer.device(30, || dst.copy_from(&src, Some(&stream)))?.ms;
            Ok((ms, ok))
        };
        let (tiles_ms, ok_tiles) = time(0)?;
        let (ms, ok) = time(stridekit::SMALL_COPY)?;
        if !(ok && ok_tiles) {
            wrong += 1;
        }
        let name = format!("{shape:?} {axes:?} itemsize {isz}");
        println!(
            "{name:<44} {:>10} {:>10.1} {:>10.1} {:>8.2}{}",
            plan.volume,
            ms * 1e3,
            tiles_ms * 1e3,
            tiles_ms / ms,
            if ok && ok_tiles { "" } else { "  WRONG BYTES" }
        );
        lines += &format!(
            "{{\"shape\":{shape:?},\"axes\":{axes:?},\"itemsize\":{isz},\"ms\":{ms},\"tiles_ms\":{tiles_ms},\"exact\":{}}}\n",
            ok && ok_tiles
        );
    }
    println!("cases: {}, wrong bytes: {wrong}", cases().len());
    if let Some(path) = std::env::args().nth(1) {
        std::fs::write(&path, lines).map_err(|e| stridekit::Error::Invalid {
            op: "small_bench",
            rule: format!("writing {path}: {e}"),
        })?;
    }
    Ok(())
}
