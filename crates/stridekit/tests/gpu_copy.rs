//! Strided copies between every pair of memory kinds, on a real GPU, against the
//! element-by-element host reference, byte for byte (gaps included).

mod common;

use common::{filled, naive_copy, random_bytes, random_layout, read, Rng};
use std::sync::Arc;
use stridekit::{
    CudaStream, DType, Device, DeviceMemoryResource, Error, HostMemoryResource,
    ManagedMemoryResource, MemoryResource, Order, PinnedMemoryResource, StridedLayout,
    StridedMemoryView, StridedMemoryViewMut,
};

struct Kinds {
    all: Vec<(&'static str, Box<dyn MemoryResource>)>,
}

fn kinds(dev: &Device) -> Kinds {
    Kinds {
        all: vec![
            ("pageable", Box::new(HostMemoryResource)),
            ("pinned", Box::new(PinnedMemoryResource::new(dev))),
            (
                "managed",
                Box::new(ManagedMemoryResource::new(dev).unwrap()),
            ),
            ("device", Box::new(DeviceMemoryResource::new(dev).unwrap())),
        ],
    }
}

/// One random copy; returns a description when it fails.
fn one_case(
    rng: &mut Rng,
    case: u64,
    max_extent: u64,
    src_kind: &(&str, Box<dyn MemoryResource>),
    dst_kind: &(&str, Box<dyn MemoryResource>),
    stream: &Arc<CudaStream>,
) -> Result<(), String> {
    // Large extents only in few dimensions, so that every case stays a few MB.
    let nd = if max_extent > 5 {
        rng.below(4)
    } else {
        rng.below(7)
    } as usize;
    let cap = if nd >= 5 { 3 } else { max_extent };
    let shape: Vec<i64> = (0..nd).map(|_| 1 + rng.below(cap) as i64).collect();
    let isz = [1usize, 2, 4, 8, 16][rng.below(5) as usize];
    let bcast = rng.below(4) == 0;
    let (sl, sbytes) = random_layout(rng, &shape, isz, bcast);
    let (dl, dbytes) = random_layout(rng, &shape, isz, false);
    let src_data = random_bytes(sbytes, case);
    let poison = random_bytes(dbytes, case ^ 0xdead_beef);
    let sbuf = filled(src_kind.1.as_ref(), &src_data, stream);
    let mut dbuf = filled(dst_kind.1.as_ref(), &poison, stream);
    {
        let src =
            StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).map_err(|e| e.to_string())?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)
            .map_err(|e| e.to_string())?;
        dst.copy_from(&src, Some(stream))
            .map_err(|e| e.to_string())?;
    }
    stream.synchronize().unwrap();
    let got = read(&dbuf, stream);
    let want = naive_copy(&poison, &dl, &src_data, &sl);
    if got != want {
        let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        return Err(format!(
            "case {case} {} -> {}: {bad} of {} bytes differ; src {sl} dst {dl}",
            src_kind.0,
            dst_kind.0,
            want.len()
        ));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn random_copies_between_every_pair_of_memory_kinds() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let k = kinds(&dev);
    let mut rng = Rng(0xC0FFEE);
    let mut failures = vec![];
    let mut n = 0;
    for round in 0..40u64 {
        for (si, s) in k.all.iter().enumerate() {
            for (di, d) in k.all.iter().enumerate() {
                let case = round * 16 + (si * 4 + di) as u64;
                let max_extent = if round % 5 == 4 { 40 } else { 5 };
                n += 1;
                if let Err(e) = one_case(&mut rng, case, max_extent, s, d, &stream) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} copies wrong:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn large_transposes_through_every_path() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let k = kinds(&dev);
    let (r, c) = (1000i64, 777i64);
    for isz in [1usize, 4, 16] {
        let bytes = (r * c) as usize * isz;
        let src_l = StridedLayout::dense(&[r, c], isz, Order::C)
            .unwrap()
            .permuted(&[1, 0])
            .unwrap();
        let dst_l = StridedLayout::dense(&[c, r], isz, Order::C).unwrap();
        let data = random_bytes(bytes, isz as u64);
        let want = naive_copy(&random_bytes(bytes, 99), &dst_l, &data, &src_l);
        for s in &k.all {
            for d in &k.all {
                let sbuf = filled(s.1.as_ref(), &data, &stream);
                let mut dbuf = filled(d.1.as_ref(), &random_bytes(bytes, 99), &stream);
                {
                    let src = StridedMemoryView::from_buffer(&sbuf, src_l.clone(), None).unwrap();
                    let mut dst =
                        StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dst_l.clone(), None)
                            .unwrap();
                    src.copy_to(&mut dst, Some(&stream)).unwrap();
                }
                stream.synchronize().unwrap();
                assert!(
                    read(&dbuf, &stream) == want,
                    "transpose itemsize {isz} {} -> {}",
                    s.0,
                    d.0
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn overlapping_device_copies_behave_as_if_the_source_were_copied_first() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let n = 100_000i64;
    let data = random_bytes(n as usize * 4, 5);
    for mr in [
        Box::new(DeviceMemoryResource::new(&dev).unwrap()) as Box<dyn MemoryResource>,
        Box::new(ManagedMemoryResource::new(&dev).unwrap()),
    ] {
        let buf = filled(mr.as_ref(), &data, &stream);
        let all = StridedLayout::dense(&[n], 4, Order::C).unwrap();
        let cases = [
            (
                all.sliced(stridekit::s![0..n - 3]).unwrap(),
                all.sliced(stridekit::s![3..n]).unwrap(),
            ),
            (all.sliced(stridekit::s![..;-1]).unwrap(), all.clone()),
            (
                all.sliced(stridekit::s![1..]).unwrap(),
                all.sliced(stridekit::s![..n - 1]).unwrap(),
            ),
        ];
        // Copies that split into independent groups (rows read whole before they are
        // written, one kernel), and one that looks alike but does not (a temporary).
        let rows = StridedLayout::dense(&[250, 400], 4, Order::C).unwrap();
        let planes = StridedLayout::dense(&[10, 25, 400], 4, Order::C).unwrap();
        let halves = StridedLayout::dense(&[200, 1000], 2, Order::C).unwrap();
        let bytes = StridedLayout::dense(&[400, 1000], 1, Order::C).unwrap();
        let flat_bytes = StridedLayout::dense(&[400_000], 1, Order::C).unwrap();
        let wide = StridedLayout::dense(&[25_000], 16, Order::C).unwrap();
        let odd_bytes = StridedLayout::dense(&[401, 997], 1, Order::C).unwrap();
        let odd_halves = StridedLayout::dense(&[199, 1003], 2, Order::C).unwrap();
        let pair = |l: &StridedLayout, a: &[stridekit::SliceArg], b: &[stridekit::SliceArg]| {
            (l.sliced(a).unwrap(), l.sliced(b).unwrap())
        };
        use stridekit::s;
        let grouped = [
            // x[:, 1:] = x[:, :-1] (every row moves right), and back.
            pair(&rows, s![.., ..-1], s![.., 1..]),
            pair(&rows, s![.., 1..], s![.., ..-1]),
            // Each row reversed in place.
            pair(&rows, s![.., ..;-1], s![.., ..]),
            pair(&planes, s![.., .., ..-3], s![.., .., 3..]),
            pair(&halves, s![.., 5..], s![.., ..-5]),
            pair(&bytes, s![.., ..-1], s![.., 1..]),
            pair(&bytes, s![.., ..;-1], s![.., ..]),
            pair(&rows, s![..;2, ..-1], s![..;2, 1..]),
            // A row on from the row before: one run too long for a group, in ordered
            // chunks (the source below: from the top down).
            pair(&rows, s![..-1, ..], s![1.., ..]),
            // One run shifted by a byte either way, by more than a chunk (80 KB) either
            // way, and runs of 16-byte elements.
            pair(&flat_bytes, s![..-1], s![1..]),
            pair(&flat_bytes, s![1..], s![..-1]),
            pair(&all, s![..-20_000], s![20_000..]),
            pair(&all, s![20_000..], s![..-20_000]),
            // Rows of odd lengths: their runs start at every alignment.
            pair(&odd_bytes, s![.., 3..], s![.., ..-3]),
            pair(&odd_bytes, s![.., ..-2], s![.., 2..]),
            pair(&odd_halves, s![.., ..-1], s![.., 1..]),
            pair(&wide, s![..-3], s![3..]),
            pair(&wide, s![7..], s![..-7]),
        ];
        let cases = cases.into_iter().chain(grouped);
        for (sl, dl) in cases {
            let dtype = match sl.itemsize() {
                1 => Some(DType::U8),
                2 => Some(DType::U16),
                4 => Some(DType::U32),
                _ => None,
            };
            let mut b = filled(mr.as_ref(), &data, &stream);
            let before = read(&b, &stream);
            {
                let ptr = b.ptr();
                // SAFETY: both views cover `b`, which outlives them; they overlap on purpose (the
                // copy is defined as if the source were read first) and nothing else touches it.
                let src = unsafe {
                    StridedMemoryView::from_foreign(ptr, b.size(), sl.clone(), dtype, ())
                }
                .unwrap();
                // SAFETY: as above.
                let mut dst = unsafe {
                    StridedMemoryViewMut::from_foreign_mut(ptr, b.size(), dl.clone(), dtype, ())
                }
                .unwrap();
                dst.copy_from(&src, Some(&stream)).unwrap();
            }
            stream.synchronize().unwrap();
            let want = naive_copy(&before, &dl, &before, &sl);
            assert!(read(&b, &stream) == want, "overlap {sl} -> {dl}");
            b.fill(0, &stream).unwrap();
        }
        drop(buf);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_copy_rejections() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let a = mr.allocate(64, &stream).unwrap();
    let mut b = mr.allocate(64, &stream).unwrap();
    let l = StridedLayout::dense(&[16], 4, Order::C).unwrap();
    let src = StridedMemoryView::from_buffer(&a, l.clone(), Some(DType::F32)).unwrap();
    assert_eq!(src.device_id(), 0);
    let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, l.clone(), None).unwrap();
    let e = dst.copy_from(&src, None).unwrap_err();
    assert!(
        matches!(e, Error::Invalid { .. }) && e.to_string().contains("needs a stream"),
        "{e}"
    );
    let e =
        StridedMemoryView::from_buffer(&a, StridedLayout::dense(&[17], 4, Order::C).unwrap(), None)
            .unwrap_err();
    assert!(e.to_string().contains("but the memory has 64 bytes"), "{e}");
    let e = src.to_vec::<f32>().unwrap_err();
    assert!(e.to_string().contains("which the CPU cannot read"), "{e}");
    // Empty copies do nothing and succeed.
    let empty = StridedLayout::dense(&[0, 3], 4, Order::C).unwrap();
    let s0 = StridedMemoryView::from_buffer(&a, empty.clone(), None).unwrap();
    let mut d0 = StridedMemoryViewMut::from_buffer_mut(&mut b, empty, None).unwrap();
    d0.copy_from(&s0, Some(&stream)).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn tiled_transposes_with_batches_edges_and_negative_strides() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    // (source base shape, permutation of the source, reversed source axis if any)
    let cases: Vec<(Vec<i64>, Vec<i64>, Option<usize>)> = vec![
        (vec![33, 47], vec![1, 0], None),
        (vec![3, 50, 70], vec![0, 2, 1], Some(0)),
        (vec![70, 3, 50], vec![2, 1, 0], Some(1)),
        (vec![17, 40, 5, 36], vec![2, 3, 0, 1], None),
        (vec![70000, 16, 17], vec![0, 2, 1], None),
        (vec![64, 16], vec![1, 0], Some(1)),
        // Word-aligned strides: 1- and 2-byte elements take the packed kernel, with
        // partial tiles at both edges and a reversed batch axis.
        (vec![3, 132, 200], vec![0, 2, 1], Some(0)),
        (vec![256, 300], vec![1, 0], None),
        (vec![2, 32, 64, 72], vec![0, 2, 3, 1], None),
    ];
    for (shape, perm, rev) in cases {
        for isz in [1usize, 2, 4, 8, 16] {
            let base = StridedLayout::dense(&shape, isz, Order::C).unwrap();
            let mut sl = base.permuted(&perm).unwrap();
            if let Some(ax) = rev {
                let mut args = vec![
                    stridekit::SliceArg::Range {
                        start: None,
                        stop: None,
                        step: 1
                    };
                    sl.ndim()
                ];
                args[ax] = stridekit::SliceArg::Range {
                    start: None,
                    stop: None,
                    step: -1,
                };
                sl = sl.sliced(&args).unwrap();
            }
            let dl = StridedLayout::dense(sl.shape(), isz, Order::C).unwrap();
            if let Some((a, l)) = stridekit::CopyPlan::new(&dl, &sl)
                .unwrap()
                .tiled_transpose_axes()
            {
                assert_ne!(a, l);
            } else {
                panic!("{sl} -> {dl} should take the tiled path");
            }
            let sbytes = base.required_size_in_bytes().unwrap();
            let dbytes = dl.required_size_in_bytes().unwrap();
            let data = random_bytes(sbytes, isz as u64 * 31 + shape[0] as u64);
            let poison = random_bytes(dbytes, 7);
            let sbuf = filled(&mr, &data, &stream);
            let mut dbuf = filled(&mr, &poison, &stream);
            {
                let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).unwrap();
                let mut dst =
                    StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None).unwrap();
                dst.copy_from(&src, Some(&stream)).unwrap();
            }
            stream.synchronize().unwrap();
            let want = naive_copy(&poison, &dl, &data, &sl);
            assert!(read(&dbuf, &stream) == want, "{sl} -> {dl}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn layouts_of_more_than_eight_axes_use_the_large_parameter_block() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let mut rng = Rng(0x10d);
    for (case, isz) in [1usize, 2, 4, 8, 16].into_iter().enumerate() {
        // Ten axes that cannot merge: a permuted source, a differently permuted destination.
        let shape = [3i64, 2, 3, 2, 3, 2, 3, 2, 3, 2];
        let sl = StridedLayout::dense(&shape, isz, Order::Axes(&rng.perm(10))).unwrap();
        let dl = StridedLayout::dense(&shape, isz, Order::Axes(&rng.perm(10))).unwrap();
        let bytes = sl.required_size_in_bytes().unwrap();
        let data = random_bytes(bytes, case as u64 + 77);
        let poison = random_bytes(bytes, case as u64 + 99);
        let sbuf = filled(&mr, &data, &stream);
        let mut dbuf = filled(&mr, &poison, &stream);
        {
            let src = StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).unwrap();
            let mut dst =
                StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None).unwrap();
            dst.copy_from(&src, Some(&stream)).unwrap();
        }
        stream.synchronize().unwrap();
        assert!(
            read(&dbuf, &stream) == naive_copy(&poison, &dl, &data, &sl),
            "itemsize {isz}"
        );
    }
}

/// Copies each permute (a dense C source permuted by the axes, into a dense C
/// destination; each must plan as one elementwise step) and the first `random` cases of
/// the random set of `seed` at `mib` MiB, against the host reference byte for byte (gaps
/// included).
fn elementwise_copies_exact(
    permutes: &[(&[i64], &[i64], usize)],
    seed: u64,
    mib: u64,
    random: usize,
) {
    use common::random_set::{next_case, Rng as SetRng};
    use common::{copy_between, dense_c, permuted_c};
    use stridekit::{CopyPlan, CopyStep};
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let mut cases = vec![];
    for &(shape, perm, isz) in permutes {
        let src = permuted_c(shape, isz, perm);
        let dst = dense_c(src.shape(), isz);
        let steps = CopyPlan::new(&dst, &src).unwrap().schedule(0, 0);
        assert!(
            matches!(steps[..], [CopyStep::Elementwise(_)]),
            "{shape:?} {isz}: {steps:?}"
        );
        cases.push((src, dst));
    }
    let mut rng = SetRng(seed);
    for _ in 0..random {
        let c = next_case(&mut rng, mib);
        cases.push((c.src, c.dst));
    }
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, (sl, dl))| {
            copy_between(&mr, &mr, &stream, sl, dl, i as u64).map(|e| format!("case {i}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Small copies by default ([`stridekit::SMALL_COPY`], 2^20 elements): one elementwise
/// launch where larger copies take multi-axis tiles, element by element where larger ones
/// gather rows, with at least a block an SM. Many-axis permutes of every element size
/// (the benchmarks' small ones among them) and the random set's kinds of layouts at 1-2
/// MiB, against the host reference byte for byte (gaps included).
#[test]
#[ignore = "needs a CUDA device"]
fn small_copies_run_elementwise_exactly() {
    assert_eq!(stridekit::small_copy_elements(), stridekit::SMALL_COPY);
    let five = [4, 2, 0, 3, 1];
    let permutes: [(&[i64], &[i64], usize); 8] = [
        (&[8; 5], &five, 4),
        (&[12; 5], &five, 4),
        (&[16; 5], &five, 4),
        (&[6; 6], &[5, 3, 1, 4, 2, 0], 4),
        (&[16; 4], &[3, 1, 0, 2], 2),
        (&[16; 4], &[3, 1, 0, 2], 1),
        (&[6, 10, 3, 12, 9], &[3, 1, 4, 0, 2], 8),
        (&[8; 5], &five, 16),
    ];
    elementwise_copies_exact(&permutes, common::random_set::SEED, 1, 40);
}

/// Mid-size copies (2^20 to 2^22 elements) that would take tiles but run elementwise:
/// warps that share sectors (pixels of 3 f64 channels into planes), tiles that would leave
/// a slab of tiles of its own (an f32 (B, 24, 24, 5) permute), and the random set's kinds
/// of layouts at 8-16 MiB (another seed than the benchmark's), against the host reference
/// byte for byte (gaps included).
#[test]
#[ignore = "needs a CUDA device"]
fn mid_copies_run_elementwise_exactly() {
    let permutes: [(&[i64], &[i64], usize); 2] = [
        (&[256, 64, 64, 3], &[0, 3, 1, 2], 8),
        (&[1024, 24, 24, 5], &[0, 3, 2, 1], 4),
    ];
    for (shape, _, _) in permutes {
        assert!(shape.iter().product::<i64>() > stridekit::SMALL_COPY as i64);
    }
    elementwise_copies_exact(&permutes, 0x4444, 8, 24);
}
