//! Fuzzing host copies: random layouts (negative, zero and overlapping strides, offsets
//! anywhere) over buffers of random size. A view either is refused when made or copies
//! exactly what the element-by-element reference copies; a copy either is refused or
//! matches the reference, and never touches a byte outside the destination's elements.
//! `PROPTEST_CASES=N` runs more cases (the CI default is 256).

mod common;

use proptest::prelude::*;
use stridekit::{StridedLayout, StridedMemoryView, StridedMemoryViewMut};

fn layout_parts() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, i64)> {
    (0usize..4).prop_flat_map(|nd| {
        (
            prop::collection::vec(0i64..5, nd),
            prop::collection::vec(-9i64..10, nd),
            -4i64..40,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn host_copies_are_refused_or_exact(
        (shape, sstr, soff) in layout_parts(),
        dstr in prop::collection::vec(-9i64..10, 4),
        doff in -4i64..40,
        isz in prop::sample::select(vec![1usize, 2, 4, 8]),
        src_len in 0usize..400,
        dst_len in 0usize..400,
        seed in any::<u64>(),
    ) {
        let nd = shape.len();
        let src_bytes = common::random_bytes(src_len * isz, seed);
        let dst_orig = common::random_bytes(dst_len * isz, seed ^ 0xabcdef);
        let mut dst_bytes = dst_orig.clone();
        let Ok(sl) = StridedLayout::with_offset(&shape, &sstr, isz, soff) else { return Ok(()) };
        let Ok(dl) = StridedLayout::with_offset(&shape, &dstr[..nd], isz, doff) else { return Ok(()) };
        // The views see the bytes as u8 elements of `isz` bytes: the layouts carry isz.
        let src = StridedMemoryView::from_slice_with_layout(&src_bytes, StridedLayout::dense(&[src_bytes.len() as i64], 1, stridekit::Order::C).unwrap());
        let src = match src.and_then(|v| v.without_dtype().view(sl.clone(), None)) {
            Ok(v) => v,
            Err(_) => {
                // Refused: the layout must really not fit.
                prop_assert!(sl.volume() > 0 && (sl.min_offset() < 0 || sl.required_size_in_bytes().map_or(true, |n| n > src_bytes.len())));
                return Ok(());
            }
        };
        let whole = StridedLayout::dense(&[dst_bytes.len() as i64], 1, stridekit::Order::C).unwrap();
        let dst_fits = dl.volume() == 0 || (dl.min_offset() >= 0 && dl.required_size_in_bytes().is_ok_and(|n| n <= dst_bytes.len()));
        let result = StridedMemoryViewMut::from_slice_mut(&mut dst_bytes, whole)
            .and_then(|v| v.without_dtype().into_view_mut(dl.clone(), None))
            .and_then(|mut d| d.copy_from(&src, None));
        match result {
            Ok(()) => {
                prop_assert!(dst_fits);
                prop_assert!(dl.is_unique() || dl.volume() <= 1);
                let want = common::naive_copy(&dst_orig, &dl, &src_bytes, &sl);
                prop_assert_eq!(dst_bytes, want);
            }
            Err(_) => {
                prop_assert!(!dst_fits || !dl.is_unique(), "refused a copy that fits: {dl} <- {sl}");
                prop_assert_eq!(dst_bytes, dst_orig, "a refused copy wrote");
            }
        }
    }
}
