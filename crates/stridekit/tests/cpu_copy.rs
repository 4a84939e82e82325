//! Host-to-host copies against the element-by-element reference, and every rejection.

mod common;

use common::{naive_copy, random_bytes, random_layout, Rng};
use stridekit::{
    DType, HostMemoryResource, MemoryKind, Order, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
};

#[test]
fn host_to_host_matches_the_naive_loop_over_random_layouts() {
    let mut rng = Rng(0x5eed);
    for case in 0..3000 {
        let nd = rng.below(7) as usize;
        let cap = if nd >= 5 { 3 } else { 4 };
        let shape: Vec<i64> = (0..nd).map(|_| 1 + rng.below(cap) as i64).collect();
        let isz = [1usize, 2, 4, 8, 16][rng.below(5) as usize];
        let bcast = rng.below(4) == 0;
        let (sl, sbytes) = random_layout(&mut rng, &shape, isz, bcast);
        let (dl, dbytes) = random_layout(&mut rng, &shape, isz, false);
        let src = random_bytes(sbytes, case);
        let poison = random_bytes(dbytes, case + 1_000_000);
        let mut dst = poison.clone();
        let want = naive_copy(&poison, &dl, &src, &sl);
        {
            let src_view = bytes_view(&src, sl.clone());
            let mut dst_view = bytes_view_mut(&mut dst, dl.clone());
            dst_view.copy_from(&src_view, None).unwrap();
        }
        assert!(dst == want, "case {case}: {sl} -> {dl}");
    }
}

/// A view of raw bytes with an element layout of any itemsize.
fn bytes_view(data: &[u8], layout: StridedLayout) -> StridedMemoryView<'_> {
    let u8_layout = StridedLayout::dense(&[data.len() as i64], 1, Order::C).unwrap();
    StridedMemoryView::from_slice_with_layout(data, u8_layout)
        .unwrap()
        .without_dtype()
        .view(layout, None)
        .unwrap()
}

fn bytes_view_mut(data: &mut [u8], layout: StridedLayout) -> StridedMemoryViewMut<'_> {
    let u8_layout = StridedLayout::dense(&[data.len() as i64], 1, Order::C).unwrap();
    StridedMemoryViewMut::from_slice_mut(data, u8_layout)
        .unwrap()
        .without_dtype()
        .into_view_mut(layout, None)
        .unwrap()
}

#[test]
fn overlapping_host_copies_behave_as_if_the_source_were_copied_first() {
    let mut data: Vec<u32> = (0..64).collect();
    let orig = data.clone();
    let ptr = data.as_mut_ptr() as u64;
    let all = StridedLayout::dense(&[64], 4, Order::C).unwrap();
    let src_l = all.sliced(stridekit::s![0..63]).unwrap();
    let dst_l = all.sliced(stridekit::s![1..64]).unwrap();
    // SAFETY: both views cover `data`, which outlives them; nothing else touches it meanwhile.
    let src =
        unsafe { StridedMemoryView::from_foreign(ptr, 256, src_l, Some(DType::U32), ()) }.unwrap();
    // SAFETY: as above.
    let mut dst =
        unsafe { StridedMemoryViewMut::from_foreign_mut(ptr, 256, dst_l, Some(DType::U32), ()) }
            .unwrap();
    dst.copy_from(&src, None).unwrap();
    assert_eq!(data[0], 0);
    assert_eq!(&data[1..], &orig[..63]);
    // Reverse in place.
    let mut data: Vec<u32> = (0..64).collect();
    let ptr = data.as_mut_ptr() as u64;
    let rev = all.sliced(stridekit::s![..;-1]).unwrap();
    // SAFETY: as above.
    let src =
        unsafe { StridedMemoryView::from_foreign(ptr, 256, rev, Some(DType::U32), ()) }.unwrap();
    // SAFETY: as above.
    let mut dst = unsafe {
        StridedMemoryViewMut::from_foreign_mut(ptr, 256, all.clone(), Some(DType::U32), ())
    }
    .unwrap();
    dst.copy_from(&src, None).unwrap();
    assert_eq!(data, (0..64).rev().collect::<Vec<u32>>());
}

#[test]
fn rejections_before_any_work() {
    let a = vec![1.0f32; 12];
    let mut b = vec![0.0f32; 12];
    let src = StridedMemoryView::from_slice(&a, &[3, 4]).unwrap();
    {
        let mut dst = StridedMemoryViewMut::from_slice_mut(
            &mut b,
            StridedLayout::dense(&[4, 3], 4, Order::C).unwrap(),
        )
        .unwrap();
        let e = dst.copy_from(&src, None).unwrap_err().to_string();
        assert!(
            e.contains("source shape (3,4) and destination shape (4,3) differ"),
            "{e}"
        );
    }
    {
        let l2 = StridedLayout::dense(&[3, 4], 2, Order::C).unwrap();
        let mut dst = StridedMemoryViewMut::from_slice_mut(
            &mut b,
            StridedLayout::dense(&[3, 4], 4, Order::C).unwrap(),
        )
        .unwrap()
        .without_dtype()
        .into_view_mut(l2, None)
        .unwrap();
        let e = dst.copy_from(&src, None).unwrap_err().to_string();
        assert!(
            e.contains("source itemsize 4 and destination itemsize 2 differ"),
            "{e}"
        );
    }
    {
        let bcast = StridedLayout::dense(&[1, 4], 4, Order::C)
            .unwrap()
            .broadcast_to(&[3, 4])
            .unwrap();
        let mut dst = StridedMemoryViewMut::from_slice_mut(&mut b, bcast).unwrap();
        let e = dst.copy_from(&src, None).unwrap_err().to_string();
        assert!(e.contains("a destination must be unique"), "{e}");
    }
    assert!(b.iter().all(|&x| x == 0.0), "a rejected copy wrote");
}

#[test]
fn views_are_validated_against_their_memory() {
    let buf = HostMemoryResource::allocate_host(48).unwrap();
    assert_eq!(buf.kind(), MemoryKind::Host);
    let ok = StridedMemoryView::from_buffer(
        &buf,
        StridedLayout::dense(&[3, 4], 4, Order::C).unwrap(),
        Some(DType::F32),
    );
    assert!(ok.is_ok());
    let too_big = StridedLayout::dense(&[4, 4], 4, Order::C).unwrap();
    let e = StridedMemoryView::from_buffer(&buf, too_big, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("(64 bytes) but the memory has 48 bytes"), "{e}");
    let neg = StridedLayout::new(&[2], &[-1], 4).unwrap();
    let e = StridedMemoryView::from_buffer(&buf, neg, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("min_offset must be >= 0"), "{e}");
    let l = StridedLayout::dense(&[3, 4], 4, Order::C).unwrap();
    let e = StridedMemoryView::from_buffer(&buf, l.clone(), Some(DType::F64))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dtype F64 has itemsize 8 but the layout's itemsize is 4"),
        "{e}"
    );
    let v = StridedMemoryView::from_buffer(&buf, l, Some(DType::F32)).unwrap();
    assert!(v.is_read_only() && v.device_id() == -1 && v.is_host_accessible());
    assert!(v
        .view(StridedLayout::dense(&[13], 4, Order::C).unwrap(), None)
        .is_err());
    let e = v.to_vec::<f64>().unwrap_err().to_string();
    assert!(
        e.contains("has 8 bytes but the layout's itemsize is 4"),
        "{e}"
    );
    let e = v.to_vec::<i32>().unwrap_err().to_string();
    assert!(e.contains("typed access never reinterprets"), "{e}");
}

#[test]
fn owned_and_borrowed_host_views_round_trip() {
    let src = StridedMemoryViewMut::from_vec((0..24u16).collect(), &[2, 3, 4]).unwrap();
    let t = src
        .view(src.layout().permuted(&[2, 0, 1]).unwrap(), None)
        .unwrap();
    let mut out = vec![0u16; 24];
    let mut dst = StridedMemoryViewMut::from_slice_mut(
        &mut out,
        StridedLayout::dense(&[4, 2, 3], 2, Order::C).unwrap(),
    )
    .unwrap();
    dst.copy_from(&t, None).unwrap();
    assert_eq!(dst.to_vec::<u16>().unwrap(), t.to_vec::<u16>().unwrap());
    assert_eq!(&out[..6], &[0, 4, 8, 12, 16, 20]);
    // 0-d and empty.
    let one = StridedMemoryViewMut::from_vec(vec![7u8], &[]).unwrap();
    assert_eq!(one.to_vec::<u8>().unwrap(), vec![7]);
    let none = StridedMemoryViewMut::from_vec(Vec::<u8>::new(), &[0, 5]).unwrap();
    assert!(none.to_vec::<u8>().unwrap().is_empty());
}

#[test]
fn host_copies_need_no_stream() {
    if common::driver_present() {
        return; // The GPU tests cover the device paths.
    }
    // Without a driver a device view cannot even be made; host views never need a stream.
    let mut a = [0u8; 4];
    let b = [1u8; 4];
    let mut d = StridedMemoryViewMut::from_slice_mut(
        &mut a,
        StridedLayout::dense(&[4], 1, Order::C).unwrap(),
    )
    .unwrap();
    d.copy_from(&StridedMemoryView::from_slice(&b, &[4]).unwrap(), None)
        .unwrap();
    assert_eq!(a, [1; 4]);
}

#[test]
fn copies_never_reinterpret_unless_asked() {
    use stridekit::{DType, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};
    let l = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let ints = [1i32, 2, 3, 0x3f80_0000];
    let mut floats = [0f32; 4];
    let mut dst = StridedMemoryViewMut::from_slice_mut(&mut floats, l.clone()).unwrap();
    let src = StridedMemoryView::from_slice(&ints, &[4]).unwrap();
    let e = dst.copy_from(&src, None).unwrap_err().to_string();
    assert!(
        e.contains("the source is I32 and the destination F32"),
        "{e}"
    );
    assert!(e.contains("copy_bits_from"), "{e}");
    // Nothing was written.
    assert_eq!(dst.as_view().to_vec::<f32>().unwrap(), [0.0; 4]);
    dst.copy_bits_from(&src, None).unwrap();
    drop(dst);
    assert_eq!(floats[3], 1.0);
    assert_eq!(floats[0].to_bits(), 1);

    // uint8 -> bool would store invalid bools: refused.
    let bytes = [7u8, 0, 1, 255];
    let mut flags = [0u8; 4];
    let l1 = StridedLayout::dense(&[4], 1, Order::C).unwrap();
    let mut b = StridedMemoryViewMut::from_slice_mut(&mut flags, l1.clone())
        .unwrap()
        .into_view_mut(l1.clone(), Some(DType::Bool))
        .unwrap();
    let e = b
        .copy_from(&StridedMemoryView::from_slice(&bytes, &[4]).unwrap(), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("U8") && e.contains("Bool"), "{e}");
    drop(b);
    assert_eq!(flags, [0; 4]);

    // A view without a dtype copies bytes.
    let src_untyped = StridedMemoryView::from_slice(&ints, &[4])
        .unwrap()
        .without_dtype()
        .view(l.clone(), None)
        .unwrap();
    let mut out = [0f32; 4];
    let mut dst = StridedMemoryViewMut::from_slice_mut(&mut out, l.clone()).unwrap();
    dst.copy_from(&src_untyped, None).unwrap();
    assert_eq!(dst.dtype(), Some(DType::F32));
    drop(dst);
    assert_eq!(out[3], 1.0);
}

/// `random_bench`'s parallel byte-exact check (`common::pattern_check::exact`) takes what
/// the plain reference copy makes (`naive_copy`, element by element from the layouts
/// themselves, not the plan the check walks) and refuses it with one byte of an element
/// changed, or one byte that no element reaches: the first 8 cases of two random sets at
/// 1-2 MiB.
#[test]
fn the_random_bench_check_takes_exact_copies_and_refuses_changed_bytes() {
    use common::pattern_check::{exact, pattern, POISON};
    use stridekit::CopyPlan;
    for seed in [common::random_set::SEED, 0x1234_5678] {
        let mut rng = Rng(seed);
        let mut gaps = 0;
        for case in 0..8 {
            let c = common::random_set::next_case(&mut rng, 1);
            let plan = CopyPlan::new(&c.dst, &c.src).unwrap();
            let source: Vec<u8> = (0..c.src_bytes as u64).map(pattern).collect();
            let mut got = naive_copy(&vec![POISON; c.dst_bytes], &c.dst, &source, &c.src);
            assert!(
                exact(&got, &plan),
                "seed {seed:#x} case {case}: refused the reference"
            );
            let mut reached = vec![false; got.len()];
            for o in common::byte_offsets(&c.dst) {
                reached[o as usize..o as usize + c.dst.itemsize()].fill(true);
            }
            let element = reached.iter().rposition(|&r| r).unwrap();
            got[element] ^= 0x5a;
            assert!(
                !exact(&got, &plan),
                "seed {seed:#x} case {case}: took a changed element byte"
            );
            got[element] ^= 0x5a;
            if let Some(gap) = reached.iter().position(|&r| !r) {
                got[gap] ^= 0x5a;
                assert!(
                    !exact(&got, &plan),
                    "seed {seed:#x} case {case}: took a changed gap byte"
                );
                gaps += 1;
            }
        }
        // Most of the set's destinations leave bytes between elements.
        assert!(
            gaps >= 3,
            "seed {seed:#x}: only {gaps} of 8 cases had gaps to test"
        );
    }
}
