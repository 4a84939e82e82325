//! First copies on a machine whose kernel cache is empty: each class runs at once on the
//! fallback kernel shipped inside the library while its own kernels compile on background
//! threads, then on its own kernels; byte for byte against the host reference both times
//! (poisoned destinations, random sources). Its own process: the kernel cache is a new
//! directory, set before the first copy.

mod common;

use common::{
    copy_between, dense_c as c, filled, naive_copy, permuted_c, random_bytes, read, required,
};
use std::sync::Arc;
use stridekit::{
    s, CudaStream, DeviceMemoryResource, Order, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
};

/// One layout of each class a new machine meets first: tiled transposes, word transposes,
/// multi-axis tiles of every element size, channel layouts, reversed rows, gathered rows,
/// a schedule of two kernels.
fn classes() -> Vec<(&'static str, StridedLayout, StridedLayout)> {
    let t = permuted_c;
    vec![
        (
            "f32 transpose",
            t(&[768, 1024], 4, &[1, 0]),
            c(&[1024, 768], 4),
        ),
        (
            "u8 transpose",
            t(&[768, 1024], 1, &[1, 0]),
            c(&[1024, 768], 1),
        ),
        (
            "u16 [::2] into F order, multi-axis tiles",
            c(&[64, 64, 64], 2).sliced(s![..;2]).unwrap(),
            StridedLayout::dense(&[32, 64, 64], 2, Order::F).unwrap(),
        ),
        (
            "(31,3,2,13,91,21) u16: two kernels",
            t(&[31, 3, 2, 13, 91, 21], 2, &[4, 0, 5, 2, 1, 3]),
            c(&[91, 31, 21, 2, 3, 13], 2),
        ),
        (
            "5-D f64 permutation",
            t(&[6, 5, 7, 4, 6], 8, &[4, 3, 2, 1, 0]),
            c(&[6, 4, 7, 5, 6], 8),
        ),
        (
            "16-byte elements, 4-D permutation",
            t(&[9, 33, 17, 20], 16, &[2, 0, 3, 1]),
            c(&[17, 9, 20, 33], 16),
        ),
        (
            "RGB interleaved -> planar, u8",
            t(&[480, 640, 3], 1, &[2, 0, 1]),
            c(&[3, 480, 640], 1),
        ),
        (
            "reversed rows, u8",
            c(&[300, 1000], 1).sliced(s![.., ..;-1]).unwrap(),
            c(&[300, 1000], 1),
        ),
        (
            "f16 [1:, 1:]",
            c(&[1025, 1027], 2).sliced(s![1.., 1..]).unwrap(),
            c(&[1024, 1026], 2),
        ),
    ]
}

/// Copies `sl` onto `dl`, two overlapping views of one buffer of random bytes; `None`
/// when the buffer then holds what a copy of the source taken first would give.
fn run_overlapping(
    mr: &DeviceMemoryResource,
    stream: &Arc<CudaStream>,
    sl: &StridedLayout,
    dl: &StridedLayout,
    seed: u64,
) -> Option<String> {
    let n = required(sl).max(required(dl));
    let data = random_bytes(n, seed);
    let b = filled(mr, &data, stream);
    // SAFETY: both views cover `b`, which outlives them; they overlap on purpose (the copy
    // is defined as if the source were read first) and nothing else touches it.
    let src = unsafe { StridedMemoryView::from_foreign(b.ptr(), n, sl.clone(), None, ()) };
    // SAFETY: as above.
    let dst = unsafe { StridedMemoryViewMut::from_foreign_mut(b.ptr(), n, dl.clone(), None, ()) };
    if let Err(e) = dst.unwrap().copy_from(&src.unwrap(), Some(stream)) {
        return Some(format!("{sl} -> {dl}: {e}"));
    }
    stream.synchronize().unwrap();
    let want = naive_copy(&data, dl, &data, sl);
    (read(&b, stream) != want).then(|| format!("{sl} -> {dl}: wrong bytes"))
}

/// Overlapping views of one buffer: rows shifted in independent groups (the group kernel),
/// and rows a row on (the ordered kernel).
fn overlapping() -> Vec<(&'static str, StridedLayout, StridedLayout)> {
    let rows = c(&[250, 400], 4);
    vec![
        (
            "x[:, 1:] = x[:, :-1], f32",
            rows.sliced(s![.., ..-1]).unwrap(),
            rows.sliced(s![.., 1..]).unwrap(),
        ),
        (
            "x[1:] = x[:-1], f32",
            rows.sliced(s![..-1, ..]).unwrap(),
            rows.sliced(s![1.., ..]).unwrap(),
        ),
    ]
}

/// One test, so that nothing else in this process compiles or caches a kernel first.
#[test]
#[ignore = "needs a CUDA device"]
fn first_copies_run_at_once_then_on_their_own_kernels() {
    let cache = std::env::temp_dir().join(format!("stridekit-first-copies-{}", std::process::id()));
    // Before anything reads it: this process's kernel cache is new and empty.
    std::env::set_var("STRIDEKIT_KERNEL_CACHE", &cache);
    stridekit::set_background_compile(true);
    let dev = stridekit::Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let mut failures = vec![];
    let mut deferred = 0;
    for (i, (name, sl, dl)) in classes().iter().enumerate() {
        let before = stridekit::kernels_compiled_in_background();
        let t = std::time::Instant::now();
        if let Some(e) = copy_between(&mr, &mr, &stream, sl, dl, i as u64 + 1) {
            failures.push(format!("{name}, first copy: {e}"));
        }
        let first = t.elapsed();
        if stridekit::kernels_compiled_in_background() > before {
            deferred += 1;
        }
        stridekit::wait_for_kernels();
        let t = std::time::Instant::now();
        if let Some(e) = copy_between(&mr, &mr, &stream, sl, dl, i as u64 + 101) {
            failures.push(format!("{name}, on its own kernels: {e}"));
        }
        println!(
            "{name}: first copy {first:.2?}, the next {:.2?} (each with its transfers)",
            t.elapsed()
        );
    }
    for (i, (name, sl, dl)) in overlapping().iter().enumerate() {
        let before = stridekit::kernels_compiled_in_background();
        if let Some(e) = run_overlapping(&mr, &stream, sl, dl, i as u64 + 201) {
            failures.push(format!("{name}, first copy (through a temporary): {e}"));
        }
        if stridekit::kernels_compiled_in_background() > before {
            deferred += 1;
        }
        stridekit::wait_for_kernels();
        if let Some(e) = run_overlapping(&mr, &stream, sl, dl, i as u64 + 301) {
            failures.push(format!("{name}, on its own kernel: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let count = classes().len() + overlapping().len();
    // Every class's first copy handed a kernel to the background (so the fallback copied
    // it): none of them was compiled before in this process, and the cache was empty.
    assert_eq!(deferred, count, "first copies that went to the background");
    // The background threads filled the disk cache.
    let entries = std::fs::read_dir(&cache).map(|d| d.count()).unwrap_or(0);
    assert!(
        entries >= count,
        "{entries} cache entries for {count} classes"
    );

    // Off: a first copy waits for its own kernel (none is handed to a thread) and copies
    // the same bytes. A class none of the above copies (RGB -> BGR).
    stridekit::set_background_compile(false);
    let before = stridekit::kernels_compiled_in_background();
    let sl = c(&[480, 640, 3], 1).sliced(s![.., .., ..;-1]).unwrap();
    let dl = c(&[480, 640, 3], 1);
    if let Some(e) = copy_between(&mr, &mr, &stream, &sl, &dl, 7) {
        failures.push(format!("background compiles off: {e}"));
    }
    stridekit::set_background_compile(true);
    assert_eq!(stridekit::kernels_compiled_in_background(), before);
    let after = std::fs::read_dir(&cache).map(|d| d.count()).unwrap_or(0);
    assert!(after > entries, "the waiting copy compiled its kernel here");

    // On, but captured into a graph: the copy waits for its own kernel (a graph keeps the
    // kernels it holds), and the graph replays it exactly. A class none of the above copies.
    let sl = c(&[3, 480, 640], 1).permuted(&[1, 2, 0]).unwrap();
    let dl = c(&[480, 640, 3], 1);
    let data = random_bytes(required(&sl), 77);
    let poison = random_bytes(required(&dl), 78);
    let sbuf = filled(&mr, &data, &stream);
    let mut dbuf = filled(&mr, &poison, &stream);
    stream.synchronize().unwrap();
    let before = stridekit::kernels_compiled_in_background();
    {
        let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).unwrap();
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None).unwrap();
        let mut g = stridekit::graph::CopyGraph::capture(&stream).unwrap();
        g.copy(&mut dst, &src).unwrap();
        let graph = g.finish().unwrap();
        for _ in 0..3 {
            graph.launch().unwrap();
        }
    }
    stream.synchronize().unwrap();
    assert_eq!(
        stridekit::kernels_compiled_in_background(),
        before,
        "captured: no deferral"
    );
    if read(&dbuf, &stream) != naive_copy(&poison, &dl, &data, &sl) {
        failures.push("RGB planar -> interleaved captured into a graph: wrong bytes".into());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&cache);
}
