//! Copies captured into CUDA graphs: replayed many times byte-exact, every launch on the
//! record of the views' memory, and copies a graph cannot hold refused with an error
//! that leaves the capture usable.

mod common;

use common::{dense_c as c, naive_copy, random_bytes, read};
use std::sync::Arc;
use stridekit::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use stridekit::graph::CopyGraph;
use stridekit::{
    s, Buffer, CudaStream, Device, DeviceMemoryResource, Error, MemoryResource,
    PinnedMemoryResource, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

fn upload(b: &mut Buffer, bytes: &[u8], stream: &Arc<CudaStream>) {
    b.copy_from_host(bytes, stream).unwrap();
}

/// Three copies of different classes in one graph (a 4-byte transpose, a byte channel
/// deinterleave, a misaligned byte slice), launched 100 times; then a copy on another
/// stream reads the last destination without any host synchronization: it must wait
/// for the recorded launches.
#[test]
#[ignore = "needs a CUDA device"]
fn a_graph_of_copies_replays_exactly_and_its_launches_are_recorded() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let other = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    // Large enough (16 MiB) that 100 launches take milliseconds.
    let t_src = c(&[2048, 2048], 4).permuted(&[1, 0]).unwrap();
    let t_dst = c(&[2048, 2048], 4);
    let ch_src = c(&[1 << 20, 3], 1).permuted(&[1, 0]).unwrap();
    let ch_dst = c(&[3, 1 << 20], 1);
    let sl_src = c(&[1001, 1003], 1).sliced(s![3.., 5..]).unwrap();
    let sl_dst = c(&[998, 998], 1);
    let bytes = |l: &StridedLayout| l.required_size_in_bytes().unwrap();
    let (ta, ca, sa) = (
        random_bytes(bytes(&t_src), 1),
        random_bytes(bytes(&ch_src), 2),
        random_bytes(bytes(&sl_src), 3),
    );
    let mut bufs: Vec<Buffer> = [&t_src, &t_dst, &ch_src, &ch_dst, &sl_src, &sl_dst]
        .iter()
        .map(|l| mr.allocate(bytes(l), &stream).unwrap())
        .collect();
    upload(&mut bufs[0], &ta, &stream);
    upload(&mut bufs[2], &ca, &stream);
    upload(&mut bufs[4], &sa, &stream);
    for i in [1, 3, 5] {
        bufs[i].fill(0xA5, &stream).unwrap();
    }
    stream.synchronize().unwrap();
    let poisoned: Vec<Vec<u8>> = [1, 3, 5].iter().map(|&i| read(&bufs[i], &stream)).collect();
    let mut probe = mr.allocate(bytes(&t_dst), &stream).unwrap();
    probe.fill(0x5A, &stream).unwrap();
    stream.synchronize().unwrap();
    {
        let [b0, b1, b2, b3, b4, b5] = &mut bufs[..] else {
            unreachable!()
        };
        let v0 = StridedMemoryView::from_buffer(b0, t_src.clone(), None).unwrap();
        let mut v1 = StridedMemoryViewMut::from_buffer_mut(b1, t_dst.clone(), None).unwrap();
        let v2 = StridedMemoryView::from_buffer(b2, ch_src.clone(), None).unwrap();
        let mut v3 = StridedMemoryViewMut::from_buffer_mut(b3, ch_dst.clone(), None).unwrap();
        let v4 = StridedMemoryView::from_buffer(b4, sl_src.clone(), None).unwrap();
        let mut v5 = StridedMemoryViewMut::from_buffer_mut(b5, sl_dst.clone(), None).unwrap();
        let mut g = CopyGraph::capture(&stream).unwrap();
        g.copy(&mut v1, &v0).unwrap();
        g.copy(&mut v3, &v2).unwrap();
        g.copy(&mut v5, &v4).unwrap();
        let graph = g.finish().unwrap();
        // Capturing ran nothing.
        stream.synchronize().unwrap();
        for _ in 0..100 {
            graph.launch().unwrap();
        }
        // Another stream reads the transposed destination at once: the record orders it
        // after the launches still queued.
        drop(graph);
        drop(v1);
        let src_view = StridedMemoryView::from_buffer(&*b1, t_dst.clone(), None).unwrap();
        let mut p = StridedMemoryViewMut::from_buffer_mut(&mut probe, t_dst.clone(), None).unwrap();
        p.copy_from(&src_view, Some(&other)).unwrap();
    }
    other.synchronize().unwrap();
    stream.synchronize().unwrap();
    let want_t = naive_copy(&poisoned[0], &t_dst, &ta, &t_src);
    assert!(read(&bufs[1], &stream) == want_t, "transpose");
    assert!(
        read(&probe, &other) == want_t,
        "the other stream read before the launches were done"
    );
    assert!(
        read(&bufs[3], &stream) == naive_copy(&poisoned[1], &ch_dst, &ca, &ch_src),
        "channels"
    );
    assert!(
        read(&bufs[5], &stream) == naive_copy(&poisoned[2], &sl_dst, &sa, &sl_src),
        "slice"
    );
}

/// A graph captured directly with cudarc over views without a record (foreign views),
/// replayed with new data and a poisoned destination before every launch.
#[test]
#[ignore = "needs a CUDA device"]
fn a_raw_capture_replays_with_new_data_every_time() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let sl = c(&[64, 300, 7], 2).permuted(&[2, 0, 1]).unwrap();
    let dl = c(&[7, 64, 300], 2);
    let n = sl.required_size_in_bytes().unwrap();
    let mut a = mr.allocate(n, &stream).unwrap();
    let mut b = mr.allocate(n, &stream).unwrap();
    a.fill(1, &stream).unwrap();
    b.fill(2, &stream).unwrap();
    stream.synchronize().unwrap();
    // SAFETY: `a` and `b` outlive the views and the graph; the graph's launches are
    // ordered on `stream`, as are the uploads and fills between them.
    let src = unsafe { StridedMemoryView::from_foreign(a.ptr(), n, sl.clone(), None, ()) }.unwrap();
    // SAFETY: as above.
    let mut dst =
        unsafe { StridedMemoryViewMut::from_foreign_mut(b.ptr(), n, dl.clone(), None, ()) }
            .unwrap();
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .unwrap();
    dst.copy_from(&src, Some(&stream)).unwrap();
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .unwrap()
        .unwrap();
    for round in 0..20u64 {
        let data = random_bytes(n, 100 + round);
        a.copy_from_host(&data, &stream).unwrap();
        b.fill(0xA5, &stream).unwrap();
        graph.launch().unwrap();
        stream.synchronize().unwrap();
        let want = naive_copy(&vec![0xA5; n], &dl, &data, &sl);
        assert!(read(&b, &stream) == want, "round {round}");
    }
}

/// Copies a graph cannot hold are refused, and the capture stays usable: the graph
/// made of the copies before them runs.
#[test]
#[ignore = "needs a CUDA device"]
fn copies_a_graph_cannot_hold_are_refused_and_the_capture_survives() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let pinned = PinnedMemoryResource::new(&dev);
    let l = c(&[256, 256], 4);
    let n = l.required_size_in_bytes().unwrap();
    let mut a = mr.allocate(n, &stream).unwrap();
    let mut b = mr.allocate(n, &stream).unwrap();
    let mut h = pinned.allocate(n, &stream).unwrap();
    let data = random_bytes(n, 9);
    a.copy_from_host(&data, &stream).unwrap();
    b.fill(0xA5, &stream).unwrap();
    stream.synchronize().unwrap();
    {
        let src = StridedMemoryView::from_buffer(&a, l.permuted(&[1, 0]).unwrap(), None).unwrap();
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, l.clone(), None).unwrap();
        let mut host = StridedMemoryViewMut::from_buffer_mut(&mut h, l.clone(), None).unwrap();
        let mut g = CopyGraph::capture(&stream).unwrap();
        g.copy(&mut dst, &src).unwrap();
        // Pinned host memory: refused, the capture goes on.
        let e = g.copy(&mut host, &src).unwrap_err();
        assert!(
            matches!(e, Error::Unsupported { .. }) && e.to_string().contains("host memory"),
            "{e}"
        );
        let graph = g.finish().unwrap();
        for _ in 0..3 {
            graph.launch().unwrap();
        }
    }
    stream.synchronize().unwrap();
    let want = naive_copy(&vec![0xA5; n], &l, &data, &l.permuted(&[1, 0]).unwrap());
    assert!(read(&b, &stream) == want);

    // A source with GPU work still queued on another stream: refused, not waited for.
    let busy = dev.new_stream().unwrap();
    let big = c(&[4096, 4096], 4);
    let bn = big.required_size_in_bytes().unwrap();
    let mut x = mr.allocate(bn, &busy).unwrap();
    let mut y = mr.allocate(bn, &busy).unwrap();
    x.fill(3, &busy).unwrap();
    {
        let xs = StridedMemoryView::from_buffer(&x, big.permuted(&[1, 0]).unwrap(), None).unwrap();
        let mut ys = StridedMemoryViewMut::from_buffer_mut(&mut y, big.clone(), None).unwrap();
        for _ in 0..20 {
            ys.copy_from(&xs, Some(&busy)).unwrap();
        }
    }
    {
        let xs = StridedMemoryView::from_buffer(&y, big.clone(), None).unwrap();
        let mut xd = StridedMemoryViewMut::from_buffer_mut(&mut x, big.clone(), None).unwrap();
        let mut g = CopyGraph::capture(&stream).unwrap();
        match g.copy(&mut xd, &xs) {
            // The queued copies may have finished already on a fast GPU: then it is taken.
            Ok(()) => {}
            Err(e) => assert!(
                matches!(e, Error::Invalid { .. }) && e.to_string().contains("outside the capture"),
                "{e}"
            ),
        }
        drop(g);
    }
    busy.synchronize().unwrap();
    // A default stream cannot be captured.
    let legacy = dev.default_stream();
    assert!(CopyGraph::capture(&legacy).is_err());
}

/// Inside a raw capture: overlapping views that need a temporary, a blocking copy and
/// a view of a cudarc slice are each refused with `Unsupported`, move nothing, and leave
/// the capture usable: the copy captured after them replays exactly.
#[test]
#[ignore = "needs a CUDA device"]
fn overlapping_blocking_and_cudarc_copies_are_refused_inside_a_capture() {
    use stridekit::CopyOptions;
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let l = c(&[128, 129], 4);
    let n = l.required_size_in_bytes().unwrap();
    let mut a = mr.allocate(n, &stream).unwrap();
    let mut b = mr.allocate(n, &stream).unwrap();
    let data = random_bytes(n, 77);
    upload(&mut a, &data, &stream);
    b.fill(0x5A, &stream).unwrap();
    let words: Vec<u32> = bytemuck::pod_collect_to_vec(&data);
    let slice = stream.clone_htod(&words).unwrap();
    stream.synchronize().unwrap();
    // SAFETY: `a` and `b` outlive the views and the graph; every use is ordered on
    // `stream`.
    let src = unsafe { StridedMemoryView::from_foreign(a.ptr(), n, l.clone(), None, ()) }.unwrap();
    // SAFETY: as above; the shifted view overlaps `src` (same memory, one row on: one run
    // of 127 rows, too long for the independent groups a captured overlap needs).
    let mut shifted = unsafe {
        StridedMemoryViewMut::from_foreign_mut(a.ptr(), n, l.sliced(s![1.., ..]).unwrap(), None, ())
    }
    .unwrap();
    let narrow = l.sliced(s![..-1, ..]).unwrap();
    // SAFETY: as above.
    let mut dst =
        unsafe { StridedMemoryViewMut::from_foreign_mut(b.ptr(), n, l.clone(), None, ()) }.unwrap();
    let from_cudarc = StridedMemoryView::from_cudarc(&slice, l.clone()).unwrap();
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .unwrap();
    let overlap = {
        let narrow_src = src.view(narrow.clone(), None).unwrap();
        shifted.copy_from(&narrow_src, Some(&stream)).unwrap_err()
    };
    let blocking = dst
        .copy_from_with(
            &src,
            Some(&stream),
            &CopyOptions {
                blocking: Some(true),
                ..CopyOptions::default()
            },
        )
        .unwrap_err();
    let cudarc = dst.copy_from(&from_cudarc, Some(&stream)).unwrap_err();
    let again = src.view(l.clone(), None).unwrap();
    dst.copy_from(&again, Some(&stream)).unwrap();
    let graph = stream
        .end_capture(CUgraphInstantiate_flags(0))
        .unwrap()
        .unwrap();
    for (e, words) in [
        (&overlap, "overlapping views"),
        (&blocking, "blocking copy"),
        (&cudarc, "cudarc slice"),
    ] {
        assert!(
            matches!(e, Error::Unsupported { .. }) && e.to_string().contains(words),
            "{e}"
        );
    }
    // Nothing moved while capturing; the captured copy replays.
    assert!(read(&a, &stream) == data);
    assert!(read(&b, &stream) == vec![0x5A; n]);
    graph.launch().unwrap();
    stream.synchronize().unwrap();
    assert!(read(&b, &stream) == data);
}

/// Overlapping views that split into independent groups (`x[:, 1:] = x[:, :-1]`, each row
/// read whole before it is written) are one kernel, which a graph holds: captured once,
/// replayed 50 times, each replay shifting every row one element further.
#[test]
#[ignore = "needs a CUDA device"]
fn an_overlapping_copy_in_independent_groups_is_captured_and_replays_exactly() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let l = c(&[300, 1000], 4);
    let n = l.required_size_in_bytes().unwrap();
    let mut a = mr.allocate(n, &stream).unwrap();
    let data = random_bytes(n, 91);
    upload(&mut a, &data, &stream);
    stream.synchronize().unwrap();
    let (sl, dl) = (
        l.sliced(s![.., ..-1]).unwrap(),
        l.sliced(s![.., 1..]).unwrap(),
    );
    // SAFETY: `a` outlives the views and the graph's launches (synchronized below); the
    // views overlap on purpose, and every use is ordered on `stream`.
    let src = unsafe { StridedMemoryView::from_foreign(a.ptr(), n, sl.clone(), None, ()) }.unwrap();
    // SAFETY: as above.
    let mut dst =
        unsafe { StridedMemoryViewMut::from_foreign_mut(a.ptr(), n, dl.clone(), None, ()) }
            .unwrap();
    let mut g = CopyGraph::capture(&stream).unwrap();
    g.copy(&mut dst, &src).unwrap();
    let graph = g.finish().unwrap();
    stream.synchronize().unwrap();
    // Capturing moved nothing.
    assert!(read(&a, &stream) == data);
    let mut want = data;
    for _ in 0..50 {
        graph.launch().unwrap();
        want = naive_copy(&want, &dl, &want, &sl);
    }
    stream.synchronize().unwrap();
    assert!(read(&a, &stream) == want);
}
