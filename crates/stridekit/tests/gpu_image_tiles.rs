//! The image tile kernel (byte tiles moved in aligned words through a
//! shared-memory image) on a real GPU: byte for byte against the host reference at every
//! phase of both sides, on the layouts it is for; where its loads would leave the source's
//! memory, where it is switched off, and inside a graph capture.
//!
//! One test: the kernel's launch counter and its switch are the process's, so the checks
//! run in order on one thread.

mod common;

use common::{copy_between_padded, naive_copy, random_bytes, read};
use std::sync::Arc;
use stridekit::graph::CopyGraph;
use stridekit::{
    image_tile_launches, set_image_tiles, set_small_copy_elements, CudaStream, Device,
    DeviceMemoryResource, MemoryResource, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

fn at(shape: &[i64], strides: &[i64], offset: i64) -> StridedLayout {
    StridedLayout::with_offset(shape, strides, 1, offset).unwrap()
}

/// Random-set case 106 with `n` in place of 21287: runs of 3 source bytes gathered into
/// one dense destination run a tile; `sp`, `dp` shift each side's phase.
fn case_106(n: i64, sp: i64, dp: i64) -> (StridedLayout, StridedLayout) {
    let shape = [49, 3, n, 3, 9];
    (
        at(&shape, &[27, 1, 4131, -1377, 3], 2754 + sp),
        at(&shape, &[1, -147, 3969, 49, 441], 294 + dp),
    )
}

/// Random-set case 101 with `n` in place of 2527718: runs of 3 source bytes gathered into
/// long destination runs.
fn case_101(n: i64, sp: i64, dp: i64) -> (StridedLayout, StridedLayout) {
    let shape = [3, n, 3, 3];
    (
        at(&shape, &[36 * n, 6, -12 * n, -1], 24 * n + 2 + sp),
        at(&shape, &[-1, 3, 18 * n, 3 * n], 2 + dp),
    )
}

fn bytes(l: &StridedLayout) -> usize {
    (l.max_offset() + 1) as usize
}

/// Copies `sl` into `dl` in buffers of their elements' bytes plus `pad` (random source,
/// poisoned destination); `None` when every destination byte is the host reference's.
fn copy(
    mr: &DeviceMemoryResource,
    stream: &Arc<CudaStream>,
    (sl, dl): &(StridedLayout, StridedLayout),
    pad: usize,
    seed: u64,
) -> Option<String> {
    copy_between_padded(mr, mr, stream, (sl, dl), seed, pad)
}

#[test]
#[ignore = "needs a CUDA device"]
fn byte_tiles_through_the_image_are_exact() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    // Tiles at any size (the engine copies layouts this small another way by default).
    set_small_copy_elements(0);
    set_image_tiles(true);
    let mut failures = vec![];
    type Case = fn(i64, i64, i64) -> (StridedLayout, StridedLayout);
    // 1.2 and 10.8 MB: past the kernel's 1 MiB threshold.
    let cases: [(&str, Case, i64); 2] = [("106", case_106, 300), ("101", case_101, 400_000)];

    // 1. Every phase pair of both sides, in memory that holds the aligned words around
    //    the source's bytes: every copy takes the kernel.
    for (name, case, n) in cases {
        for sp in 0..4 {
            for dp in 0..4 {
                let before = image_tile_launches();
                if let Some(e) = copy(&mr, &stream, &case(n, sp, dp), 8, (1 + 4 * sp + dp) as u64) {
                    failures.push(format!("case {name}, phases {sp} {dp}: {e}"));
                }
                if image_tile_launches() == before {
                    failures.push(format!(
                        "case {name}, phases {sp} {dp}: not on the image tile kernel"
                    ));
                }
            }
        }
    }

    // 2. The source's last byte at its memory's end, one past an aligned word: the kernel
    //    would load 3 bytes past the memory, so the copy runs on the tile kernel.
    let edge = case_106(300, 0, 0);
    assert_eq!(bytes(&edge.0) % 4, 2, "the source ends mid-word");
    let before = image_tile_launches();
    if let Some(e) = copy(&mr, &stream, &edge, 0, 99) {
        failures.push(format!("source at its memory's end: {e}"));
    }
    if image_tile_launches() != before {
        failures.push("source at its memory's end: loads past it on the image kernel".into());
    }

    // 3. Switched off: the same copies, exact, none on the kernel.
    set_image_tiles(false);
    let before = image_tile_launches();
    for (name, case, n) in cases {
        if let Some(e) = copy(&mr, &stream, &case(n, 1, 2), 8, 7) {
            failures.push(format!("case {name}, switched off: {e}"));
        }
    }
    if image_tile_launches() != before {
        failures.push("switched off, a copy still took the image kernel".into());
    }
    set_image_tiles(true);

    // 4. A capture: a tile shape whose table exists (made by the copies above) is captured
    //    on the kernel and replays exactly; a new one (101 at another size: other strides)
    //    has no table and no upload may join the capture, so it is captured on the tile
    //    kernel, also exactly.
    for (name, (sl, dl), fresh) in [
        ("106", case_106(300, 3, 1), false),
        ("101 new", case_101(400_004, 1, 3), true),
    ] {
        let data = random_bytes(bytes(&sl) + 8, 5);
        let poison = random_bytes(bytes(&dl) + 8, 6);
        let mut sbuf = mr.allocate(data.len(), &stream).unwrap();
        let mut dbuf = mr.allocate(poison.len(), &stream).unwrap();
        sbuf.copy_from_host(&data, &stream).unwrap();
        dbuf.copy_from_host(&poison, &stream).unwrap();
        stream.synchronize().unwrap();
        let before = image_tile_launches();
        {
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).unwrap();
            let mut dst =
                StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None).unwrap();
            let mut g = CopyGraph::capture(&stream).unwrap();
            g.copy(&mut dst, &src).unwrap();
            let graph = g.finish().unwrap();
            for _ in 0..20 {
                graph.launch().unwrap();
            }
        }
        stream.synchronize().unwrap();
        let captured_on_image = image_tile_launches() > before;
        if captured_on_image == fresh {
            failures.push(format!(
                "capture of {name}: on the image kernel: {captured_on_image}"
            ));
        }
        if read(&dbuf, &stream) != naive_copy(&poison, &dl, &data, &sl) {
            failures.push(format!("capture of {name}: replays differ"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
