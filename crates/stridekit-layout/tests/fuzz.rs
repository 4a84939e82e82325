//! Fuzzing every layout operation, copy planning and scheduling with wild inputs:
//! extreme extents, strides, offsets and itemsizes. Nothing may panic (this crate's
//! tests run with overflow checks), and every result must be a layout whose offsets fit,
//! or an error. The named tests are the inputs fuzzing found; the property runs more
//! cases with `PROPTEST_CASES=N` (the CI default is 256).

use proptest::prelude::*;
use stridekit_layout::{CopyPlan, Order, RepackOptions, SliceArg, StridedLayout};

const E: i64 = 6_000_000_000_000_000_000;

#[test]
fn repack_of_a_minimal_stride_with_a_wrapping_itemsize() {
    let l = StridedLayout::with_offset(&[4, 1, 3], &[1, i64::MIN, -3], 1, 5).unwrap();
    let opts = RepackOptions {
        axis: 0,
        ..RepackOptions::default()
    };
    assert!(l.repacked_with(usize::MAX, opts).is_err());
    assert!(l
        .repacked_with(usize::MAX, RepackOptions::default())
        .is_err());
}

#[test]
fn plan_with_a_minimal_destination_stride() {
    let dst = StridedLayout::new(&[1, 3], &[i64::MIN, 1], 1);
    if let Ok(dst) = dst {
        let src = StridedLayout::dense(&[1, 3], 1, Order::C).unwrap();
        let plan = CopyPlan::new(&dst, &src).unwrap();
        // The extent-1 axis is never stepped: three pairs, in order.
        assert_eq!(plan.volume, 3);
    }
    // Stepped along: a stride of i64::MIN cannot be flipped; an error, not a panic or a
    // wrong plan.
    let dst = StridedLayout::new(&[2, 3], &[i64::MIN, 1], 1).unwrap();
    let src = StridedLayout::dense(&[2, 3], 1, Order::C).unwrap();
    match CopyPlan::new(&dst, &src) {
        Ok(p) => panic!("planned {p:?}"),
        Err(e) => assert!(e.to_string().contains("overflows"), "{e}"),
    }
}

#[test]
fn reshape_whose_merge_test_overflows() {
    let l = StridedLayout::with_offset(&[3, 2], &[7, E], 1, 2);
    if let Ok(l) = l {
        assert!(l.reshaped(&[6]).is_err());
    }
}

#[test]
fn reshape_whose_new_strides_overflow() {
    let l = StridedLayout::new(&[2], &[E], 1).unwrap();
    let r = l.reshaped(&[1, 2]).unwrap();
    assert_eq!(r.shape(), &[1, 2]);
    assert_eq!(r.strides()[1], E);
}

#[test]
fn flatten_of_an_empty_layout_with_huge_extents() {
    let l = StridedLayout::new(&[0, 5, (1 << 62) - 1], &[5, 0, 0], 2).unwrap();
    match l.flattened_all() {
        Ok(f) => assert_eq!(f.volume(), 0, "{f}"),
        Err(e) => assert!(e.to_string().contains("overflows"), "{e}"),
    }
}

fn wild_i64() -> impl Strategy<Value = i64> {
    prop_oneof![
        -20i64..20,
        Just(i64::MIN),
        Just(i64::MIN + 1),
        Just(i64::MAX),
        Just(i64::MAX - 1),
        Just(1 << 31),
        Just(1 << 32),
        Just(1 << 62),
        Just(E),
        Just(-E),
        any::<i64>(),
    ]
}

fn wild_extent() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0i64..6,
        1 => Just(1 << 31),
        1 => Just(1 << 32),
        1 => Just((1 << 62) - 1),
        1 => Just(i64::MAX),
        1 => Just(-1),
        1 => any::<i64>(),
    ]
}

fn wild_itemsize() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => prop::sample::select(vec![1usize, 2, 3, 4, 8, 16]),
        1 => Just(0usize),
        1 => Just(usize::MAX),
        1 => Just(1usize << 62),
        1 => any::<usize>(),
    ]
}

fn wild_layout() -> impl Strategy<Value = (Vec<i64>, Vec<i64>, usize, i64)> {
    (0usize..5).prop_flat_map(|nd| {
        (
            prop::collection::vec(wild_extent(), nd),
            prop::collection::vec(wild_i64(), nd),
            wild_itemsize(),
            wild_i64(),
        )
    })
}

/// Every offset of a valid layout, in bytes, fits in i64.
fn check(l: &StridedLayout) {
    let (lo, hi) = l.offset_bounds();
    let isz = l.itemsize() as i128;
    assert!(i128::from(lo) * isz >= i128::from(i64::MIN), "{l}");
    assert!((i128::from(hi) + 1) * isz <= i128::from(i64::MAX), "{l}");
    let _ = l.byte_span();
    let _ = l.required_size_in_bytes();
    // Rebased in place or afresh: the same layout, or the same error.
    match (l.rebased(), l.clone().into_rebased()) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "{l}");
            assert_eq!(a.offset_bounds(), b.offset_bounds(), "{l}");
            assert_eq!(a.slice_offset(), b.slice_offset(), "{l}");
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("{l}: rebased {a:?} but into_rebased {b:?}"),
    }
    let _ = l.is_unique();
    let _ = l.is_contiguous_any();
    let _ = l.is_dense();
    let _ = l.stride_order();
}

fn exercise(l: &StridedLayout, args: &[i64], isz: usize, other: &StridedLayout) {
    check(l);
    let nd = l.ndim() as i64;
    let a = |k: usize| args[k % args.len()];
    let results = [
        l.reshaped(&args[..(a(0).rem_euclid(4) as usize).min(args.len())]),
        l.reshaped(&[l.volume() as i64]),
        l.permuted(&(0..nd).rev().collect::<Vec<_>>()),
        l.permuted(&args[..l.ndim().min(args.len())]),
        l.flattened_all(),
        l.flattened(a(1), a(2)),
        Ok(l.squeezed()),
        l.unsqueezed(&[a(3)]),
        l.broadcast_to(&args[..(a(4).rem_euclid(5) as usize).min(args.len())]),
        l.repacked_with(
            isz,
            RepackOptions {
                data_ptr: a(5) as u64,
                axis: a(6),
                keep_dim: a(7) % 2 == 0,
            },
        ),
        l.repacked(isz),
        l.sliced(&[
            SliceArg::Range {
                start: Some(a(8)),
                stop: Some(a(9)),
                step: a(10),
            },
            SliceArg::Index(a(11)),
        ]),
        l.sliced(&[SliceArg::Index(a(12))]),
        l.to_dense(Order::K),
        l.to_dense(Order::Axes(&args[..l.ndim().min(args.len())])),
        StridedLayout::dense_like(l, Order::F),
    ];
    for r in results.iter().flatten() {
        check(r);
    }
    let _ = l.max_compatible_itemsize(isz, a(13) as u64, a(14));
    for (d, s) in [(l, other), (other, l), (l, l)] {
        if let Ok(p) = CopyPlan::new(d, s) {
            if let Ok((db, sb)) = p.byte_bounds() {
                assert!(db.start <= db.end && sb.start <= sb.end, "{p:?}");
            }
            let _ = p.tiled_transpose_axes();
            let _ = p.is_contiguous();
            for (dp, sp) in [(0u64, 0u64), (a(15) as u64, a(16) as u64), (u64::MAX, 7)] {
                if p.volume < (1 << 24) {
                    let _ = p.schedule(dp, sp);
                    let _ = p.vectorized(dp, sp);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn no_layout_operation_panics(
        (shape, strides, isz, off) in wild_layout(),
        (shape2, strides2, isz2, off2) in wild_layout(),
        args in prop::collection::vec(wild_i64(), 17),
        new_isz in wild_itemsize(),
    ) {
        let _ = StridedLayout::from_byte_strides(&shape, &strides, isz);
        let _ = StridedLayout::dense(&shape, isz, Order::C);
        let _ = StridedLayout::dense(&shape, isz, Order::Axes(&args[..shape.len()]));
        let other = StridedLayout::with_offset(&shape2, &strides2, isz2, off2)
            .or_else(|_| StridedLayout::dense(&shape, isz.clamp(1, 16), Order::C));
        if let (Ok(l), Ok(o)) = (StridedLayout::with_offset(&shape, &strides, isz, off), other) {
            exercise(&l, &args, new_isz, &o);
        }
        // Small, valid layouts reach the deeper paths more often.
        let small: Vec<i64> = shape.iter().map(|e| e.rem_euclid(4)).collect();
        let sstr: Vec<i64> = strides.iter().map(|s| s.rem_euclid(25) - 12).collect();
        if let Ok(l) = StridedLayout::with_offset(&small, &sstr, isz.clamp(1, 16), off.rem_euclid(64)) {
            let o = StridedLayout::dense(&small, l.itemsize(), Order::F).unwrap();
            exercise(&l, &args, new_isz, &o);
        }
    }
}

#[test]
fn byte_span_and_schedule_of_a_span_past_i64() {
    let l = StridedLayout::new(&[2, 2], &[-(1 << 59), 1 << 59], 8).unwrap();
    assert_eq!(l.byte_span(), (-(1 << 62), (1usize << 63) + 8));
    // Moved to offset 0, its highest byte would pass i64: an error, not a wrap.
    assert!(l.rebased().is_err());
    assert!(l.clone().into_rebased().is_err());
    let dst = StridedLayout::dense(&[2, 2], 8, Order::C).unwrap();
    let plan = CopyPlan::new(&dst, &l).unwrap();
    let steps = plan.schedule(0, 0);
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert!(matches!(
        steps[0],
        stridekit_layout::CopyStep::Elementwise(_)
    ));
}
