//! Properties checked against brute force: every element's offset is enumerated before and
//! after each transform.

mod common;

use common::offsets;
use proptest::prelude::*;
use std::collections::HashSet;
use stridekit_layout::{CopyPlan, Order, RepackOptions, SliceArg, StridedLayout};

/// Offsets of all elements in row-major index order.
fn all_permutations(n: usize) -> Vec<Vec<i64>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = vec![];
    for p in all_permutations(n - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, (n - 1) as i64);
            out.push(q);
        }
    }
    out
}

fn layout() -> impl Strategy<Value = StridedLayout> {
    (0usize..5)
        .prop_flat_map(|nd| {
            (
                prop::collection::vec(0i64..5, nd),
                prop::collection::vec(-12i64..12, nd),
                prop::sample::select(vec![1usize, 2, 4, 8]),
                0i64..30,
            )
        })
        .prop_map(|(shape, strides, isz, off)| {
            StridedLayout::with_offset(&shape, &strides, isz, off).expect("small layouts are valid")
        })
}

fn slice_arg(extent: i64) -> impl Strategy<Value = SliceArg> {
    let e = extent.max(1);
    prop_oneof![
        (-e - 1..e + 1).prop_map(SliceArg::Index),
        (
            prop::option::of(-e - 2..e + 2),
            prop::option::of(-e - 2..e + 2),
            prop::sample::select(vec![1i64, 2, 3, -1, -2, -3])
        )
            .prop_map(|(start, stop, step)| SliceArg::Range { start, stop, step }),
    ]
}

/// Python's `range(*slice(start, stop, step).indices(n))`.
fn py_indices(start: Option<i64>, stop: Option<i64>, step: i64, n: i64) -> Vec<i64> {
    let norm = |v: i64, lo: i64, hi: i64| (if v < 0 { v + n } else { v }).clamp(lo, hi);
    let (a, b) = if step > 0 {
        (
            start.map_or(0, |v| norm(v, 0, n)),
            stop.map_or(n, |v| norm(v, 0, n)),
        )
    } else {
        (
            start.map_or(n - 1, |v| norm(v, -1, n - 1)),
            stop.map_or(-1, |v| norm(v, -1, n - 1)),
        )
    };
    let mut out = vec![];
    let mut i = a;
    while (step > 0 && i < b) || (step < 0 && i > b) {
        out.push(i);
        i += step;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn offset_bounds_and_required_size_match_enumeration(l in layout()) {
        let offs = offsets(&l);
        prop_assert_eq!(offs.len(), l.volume());
        if offs.is_empty() {
            prop_assert_eq!(l.offset_bounds(), (0, -1));
        } else {
            let (lo, hi) = (*offs.iter().min().unwrap(), *offs.iter().max().unwrap());
            prop_assert_eq!(l.offset_bounds(), (lo, hi));
            match l.required_size_in_bytes() {
                Ok(n) => prop_assert_eq!(n as i64, (hi + 1) * l.itemsize() as i64),
                Err(_) => prop_assert!(lo < 0),
            }
        }
    }

    #[test]
    fn predicates_agree_with_enumeration(l in layout()) {
        let offs = offsets(&l);
        let set: HashSet<i64> = offs.iter().copied().collect();
        let unique = set.len() == offs.len();
        if l.is_unique() {
            prop_assert!(unique, "is_unique but offsets repeat: {:?}", l);
        }
        let (lo, hi) = l.offset_bounds();
        let gap_free = offs.is_empty() || (unique && hi - lo + 1 == offs.len() as i64);
        let c_order = |l: &StridedLayout| offsets(l).windows(2).all(|w| w[1] == w[0] + 1);
        // Contiguous in some order: some permutation of the axes walks memory in steps of +1.
        let any_order = all_permutations(l.ndim())
            .iter()
            .any(|p| c_order(&l.permuted(p).unwrap()));
        prop_assert_eq!(l.is_contiguous_any(), any_order, "{:?}", l);
        if any_order {
            prop_assert!(gap_free);
        }
        prop_assert_eq!(l.is_contiguous_c(), c_order(&l), "{:?}", l);
        let rev: Vec<i64> = (0..l.ndim() as i64).rev().collect();
        prop_assert_eq!(l.is_contiguous_f(), c_order(&l.permuted(&rev).unwrap()), "{:?}", l);
        prop_assert_eq!(l.is_dense(), any_order && l.slice_offset() == 0, "{:?}", l);
        if l.is_contiguous_any() {
            prop_assert!(l.is_unique());
        }
    }

    #[test]
    fn permute_keeps_the_set_of_offsets(l in layout(), seed in any::<u64>()) {
        let mut perm: Vec<i64> = (0..l.ndim() as i64).collect();
        let mut s = seed;
        for i in (1..perm.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        let p = l.permuted(&perm).unwrap();
        let mut a = offsets(&l);
        let mut b = offsets(&p);
        a.sort_unstable();
        b.sort_unstable();
        prop_assert_eq!(a, b);
        for (i, &ax) in perm.iter().enumerate() {
            prop_assert_eq!(p.shape()[i], l.shape()[ax as usize]);
        }
    }

    #[test]
    fn reshape_keeps_row_major_sequence(l in layout(), split in 0usize..4) {
        let v = l.volume() as i64;
        // A few shapes of the same volume.
        let candidates: Vec<Vec<i64>> = vec![
            vec![v], vec![1, v], vec![v, 1], vec![-1],
            if v % 2 == 0 && v > 0 { vec![2, v / 2] } else { vec![v, 1, 1] },
            if v % 3 == 0 && v > 0 { vec![v / 3, 1, 3] } else { vec![1, v] },
        ];
        let shape = &candidates[split % candidates.len()];
        if let Ok(r) = l.reshaped(shape) {
            prop_assert_eq!(offsets(&r), offsets(&l));
        }
        let seq = l.flattened_all().unwrap();
        prop_assert_eq!(offsets(&seq), offsets(&l));
        if l.is_contiguous_c() && l.volume() > 0 {
            prop_assert!(l.reshaped(shape).is_ok(), "contiguous {:?} -> {:?}", l, shape);
        }
    }

    #[test]
    fn squeeze_and_unsqueeze_keep_sequence(l in layout(), at in 0i64..5) {
        let sq = l.squeezed();
        if l.volume() > 0 {
            prop_assert_eq!(offsets(&sq), offsets(&l));
        }
        let ax = at % (l.ndim() as i64 + 1);
        let un = l.unsqueezed(&[ax]).unwrap();
        prop_assert_eq!(un.ndim(), l.ndim() + 1);
        prop_assert_eq!(offsets(&un), offsets(&l));
    }

    #[test]
    fn slicing_picks_exactly_the_right_elements(
        (l, args) in layout().prop_flat_map(|l| {
            let ext: Vec<i64> = l.shape().to_vec();
            let n = ext.len();
            (Just(l), (0..=n).prop_flat_map(move |k| {
                ext[..k].iter().map(|&e| slice_arg(e)).collect::<Vec<_>>()
            }))
        })
    ) {
        let got = l.sliced(&args);
        // Brute force: the index lists per axis, then every combination in row-major order.
        let mut per_axis: Vec<(Vec<i64>, bool)> = vec![];
        let mut bad = false;
        for (ax, &e) in l.shape().iter().enumerate() {
            match args.get(ax) {
                None => per_axis.push(((0..e).collect(), true)),
                Some(SliceArg::Index(i)) => {
                    let p = if *i < 0 { i + e } else { *i };
                    if p < 0 || p >= e { bad = true; break; }
                    per_axis.push((vec![p], false));
                }
                Some(SliceArg::Range { start, stop, step }) => {
                    per_axis.push((py_indices(*start, *stop, *step, e), true));
                }
            }
        }
        if bad {
            prop_assert!(got.is_err());
            return Ok(());
        }
        let got = got.unwrap();
        let kept: Vec<i64> = per_axis.iter().filter(|(_, k)| *k).map(|(v, _)| v.len() as i64).collect();
        prop_assert_eq!(got.shape(), &kept[..]);
        let mut expected = vec![];
        let total: usize = per_axis.iter().map(|(v, _)| v.len()).product();
        for flat in 0..total {
            let mut rem = flat;
            let mut off = l.slice_offset();
            for (ax, (v, _)) in per_axis.iter().enumerate().rev() {
                off += v[rem % v.len()] * l.strides()[ax];
                rem /= v.len();
            }
            expected.push(off);
        }
        prop_assert_eq!(offsets(&got), expected);
    }

    #[test]
    fn broadcast_maps_each_index_to_its_source(l in layout(), lead in 0i64..3) {
        let target: Vec<i64> = std::iter::once(lead)
            .chain(l.shape().iter().map(|&e| if e == 1 { 3 } else { e }))
            .collect();
        let b = l.broadcast_to(&target).unwrap();
        let src = offsets(&l);
        let got = offsets(&b);
        // Row-major: the source index of a target index drops the lead axis and maps
        // stretched axes to 0.
        let mut expected = vec![];
        let n = l.ndim();
        let tot: i64 = target.iter().product();
        for flat in 0..tot {
            let mut rem = flat;
            let mut src_flat = 0i64;
            let mut mul = 1i64;
            for ax in (0..n).rev() {
                let t = target[ax + 1];
                let i = rem % t;
                rem /= t;
                let si = if l.shape()[ax] == 1 { 0 } else { i };
                src_flat += si * mul;
                mul *= l.shape()[ax];
            }
            expected.push(src[src_flat as usize]);
        }
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn repack_along_last_axis_keeps_the_byte_sequence(l in layout(), new in prop::sample::select(vec![1usize, 2, 4, 8, 16])) {
        let bytes = |l: &StridedLayout| -> Vec<i64> {
            offsets(l).iter().flat_map(|&o| {
                let b = o * l.itemsize() as i64;
                b..b + l.itemsize() as i64
            }).collect()
        };
        if let Ok(r) = l.repacked_with(new, RepackOptions::default()) {
            prop_assert_eq!(r.volume() * r.itemsize(), l.volume() * l.itemsize());
            prop_assert_eq!(bytes(&r), bytes(&l));
        }
        if l.ndim() > 0 {
            let m = l.max_compatible_itemsize(16, 0, -1).unwrap();
            if l.strides()[l.ndim() - 1] == 1 && l.shape()[l.ndim() - 1] > 0 && m >= l.itemsize() {
                prop_assert!(l.repacked(m).is_ok(), "max_compatible_itemsize {} rejected for {:?}", m, l);
            }
        }
    }

    #[test]
    fn to_dense_is_dense_with_the_same_shape(l in layout()) {
        for o in [stridekit_layout::Order::K, stridekit_layout::Order::C, stridekit_layout::Order::F] {
            let d = l.to_dense(o).unwrap();
            prop_assert_eq!(d.shape(), l.shape());
            prop_assert!(d.is_dense());
            prop_assert_eq!(d.required_size_in_bytes().unwrap(), l.volume() * l.itemsize());
        }
    }
}

fn any_i64() -> impl Strategy<Value = i64> {
    prop_oneof![
        -4i64..6,
        any::<i64>(),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(1i64 << 62),
        Just(-(1i64 << 62)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Absurd inputs to every operation return Ok or Err; none panics.
    #[test]
    fn no_operation_panics(
        shape in prop::collection::vec(any_i64(), 0..7),
        strides in prop::collection::vec(any_i64(), 0..7),
        off in any_i64(),
        isz in prop_oneof![Just(0usize), 1usize..20, Just(usize::MAX)],
        args in prop::collection::vec(any_i64(), 0..7),
        a in any_i64(), b in any_i64(), n in any::<usize>(), mask in any::<u64>(), ptr in any::<u64>(), keep in any::<bool>(),
    ) {
        let _ = StridedLayout::from_byte_strides(&shape, &strides, isz);
        let _ = StridedLayout::dense(&shape, isz, stridekit_layout::Order::Axes(&args));
        let _ = StridedLayout::dense(&shape, isz, stridekit_layout::Order::F);
        if let Ok(l) = StridedLayout::with_offset(&shape, &strides, isz, off) {
            let _ = (l.is_unique(), l.is_contiguous_any(), l.is_dense(), l.required_size_in_bytes());
            let _ = (l.stride_order(), l.strides_in_bytes(), l.slice_offset_in_bytes(), l.flattened_axis_mask());
            let _ = l.reshaped(&args);
            let _ = l.permuted(&args);
            let _ = l.flattened(a, b);
            let _ = l.flattened_by_mask(mask);
            let _ = l.squeezed();
            let _ = l.unsqueezed(&args);
            let _ = l.broadcast_to(&args);
            let _ = l.repacked_with(n, RepackOptions { data_ptr: ptr, axis: a, keep_dim: keep });
            let _ = l.max_compatible_itemsize(n, ptr, a);
            let sl: Vec<SliceArg> = args.iter().map(|&x| if x % 2 == 0 {
                SliceArg::Index(x)
            } else {
                SliceArg::Range { start: Some(a), stop: Some(b), step: x }
            }).collect();
            let _ = l.sliced(&sl);
            for o in [stridekit_layout::Order::K, stridekit_layout::Order::C, stridekit_layout::Order::Axes(&args)] {
                let _ = l.to_dense(o);
            }
            let _ = format!("{l} {l:?}");
        }
    }
}

/// Every (destination offset, source offset) pair of a copy, in row-major order.
fn pairs(dst: &StridedLayout, src: &StridedLayout) -> Vec<(i64, i64)> {
    offsets(dst).into_iter().zip(offsets(src)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The planned copy moves exactly the same element pairs as the two layouts describe.
    #[test]
    fn copy_plan_preserves_every_element_pair(
        (dst, src) in (0usize..5).prop_flat_map(|nd| {
            (prop::collection::vec(1i64..5, nd), any::<u64>(), any::<u64>(), 0i64..2, prop::collection::vec(any::<bool>(), nd))
        }).prop_map(|(shape, seed_a, seed_b, bcast, flips)| {
            let perm = |seed: u64| {
                let mut p: Vec<i64> = (0..shape.len() as i64).collect();
                let mut s = seed;
                for i in (1..p.len()).rev() {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                    p.swap(i, (s >> 33) as usize % (i + 1));
                }
                p
            };
            let dst = StridedLayout::dense(&shape, 4, stridekit_layout::Order::Axes(&perm(seed_a))).unwrap();
            let mut src = StridedLayout::dense(&shape, 4, stridekit_layout::Order::Axes(&perm(seed_b))).unwrap();
            // Flip some axes of the source and broadcast one.
            let sl: Vec<SliceArg> = flips.iter().map(|&f| if f { SliceArg::stepped(.., -1) } else { SliceArg::ALL }).collect();
            src = src.sliced(&sl).unwrap();
            if bcast == 1 && !shape.is_empty() {
                let mut one = shape.clone();
                one[0] = 1;
                let b = StridedLayout::dense(&one, 4, stridekit_layout::Order::C).unwrap();
                src = b.broadcast_to(&shape).unwrap();
            }
            let dst = dst.sliced(&flips.iter().map(|&f| if f { SliceArg::ALL } else { SliceArg::stepped(.., -1) }).collect::<Vec<_>>()).unwrap();
            (dst, src)
        })
    ) {
        let plan = stridekit_layout::CopyPlan::new(&dst, &src).unwrap();
        let planned_dst = StridedLayout::with_offset(&plan.shape, &plan.dst_strides, 4, plan.dst_offset).unwrap();
        let planned_src = StridedLayout::with_offset(&plan.shape, &plan.src_strides, 4, plan.src_offset).unwrap();
        let mut want = pairs(&dst, &src);
        let mut got = pairs(&planned_dst, &planned_src);
        want.sort_unstable();
        got.sort_unstable();
        prop_assert_eq!(got, want);
        prop_assert!(plan.dst_strides.iter().all(|&s| s > 0));
        prop_assert!(plan.dst_strides.windows(2).all(|w| w[0] > w[1]));
        if dst.is_contiguous_c() && src.is_contiguous_c() {
            prop_assert!(plan.is_contiguous(), "{:?}", plan);
        }
        // Widening keeps the byte pairs.
        let v = plan.vectorized(0, 0);
        prop_assert_eq!(v.volume * v.itemsize, plan.volume * plan.itemsize);
    }
}

#[test]
fn copy_plan_rejections() {
    let a = StridedLayout::dense(&[2, 3], 4, stridekit_layout::Order::C).unwrap();
    let b = StridedLayout::dense(&[3, 2], 4, stridekit_layout::Order::C).unwrap();
    let e = stridekit_layout::CopyPlan::new(&a, &b)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("source shape (3,2) and destination shape (2,3) differ"),
        "{e}"
    );
    let c = StridedLayout::dense(&[2, 3], 2, stridekit_layout::Order::C).unwrap();
    let e = stridekit_layout::CopyPlan::new(&a, &c)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("source itemsize 2 and destination itemsize 4 differ"),
        "{e}"
    );
    let bcast = StridedLayout::dense(&[1, 3], 4, stridekit_layout::Order::C)
        .unwrap()
        .broadcast_to(&[2, 3])
        .unwrap();
    let e = stridekit_layout::CopyPlan::new(&bcast, &a)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a destination must be unique"), "{e}");
    // A broadcast source is fine, and a transposed copy keeps two axes.
    assert!(stridekit_layout::CopyPlan::new(&a, &bcast).is_ok());
    let t = stridekit_layout::CopyPlan::new(&a, &b.permuted(&[1, 0]).unwrap()).unwrap();
    assert_eq!(
        (t.shape.as_slice(), t.src_strides.as_slice()),
        (&[2, 3][..], &[1, 2][..])
    );
    // Empty and 0-d.
    let e0 = StridedLayout::dense(&[0, 3], 4, stridekit_layout::Order::C).unwrap();
    assert_eq!(stridekit_layout::CopyPlan::new(&e0, &e0).unwrap().volume, 0);
    let z = StridedLayout::dense(&[], 4, stridekit_layout::Order::C).unwrap();
    let p = stridekit_layout::CopyPlan::new(&z, &z).unwrap();
    assert!(p.is_contiguous() && p.volume == 1 && p.ndim() == 0);
}

#[test]
fn contiguous_layouts_reshape_whatever_their_unit_axis_strides() {
    // Found by the property above: extent-1 axes with unrelated strides inside a group.
    let l = StridedLayout::new(&[2, 1, 2, 1], &[2, 3, 1, 0], 1).unwrap();
    assert!(l.is_contiguous_c());
    let r = l.reshaped(&[4]).unwrap();
    assert_eq!(r.strides(), &[1]);
    assert_eq!(offsets(&r), offsets(&l));
    let l = StridedLayout::new(&[4, 5, 1, 4], &[20, 4, 20, 1], 3).unwrap();
    let r = l.reshaped(&[1, 1, 1, 4, 20]).unwrap();
    assert_eq!(offsets(&r), offsets(&l));
    // A real gap still blocks the merge.
    let l = StridedLayout::new(&[2, 1, 2], &[4, 7, 1], 1).unwrap();
    assert!(l.reshaped(&[4]).is_err());
}

#[test]
fn tiled_transpose_axes_pick_the_coalescing_pair() {
    let c = |s: &[i64]| StridedLayout::dense(s, 4, Order::C).unwrap();
    let plan = |d: &StridedLayout, s: &StridedLayout| CopyPlan::new(d, s).unwrap();
    // A plain 2-D transpose.
    let src = c(&[40, 30]).permuted(&[1, 0]).unwrap();
    assert_eq!(
        plan(&c(&[30, 40]), &src).tiled_transpose_axes(),
        Some((0, 1))
    );
    // Same order on both sides: no transpose.
    assert_eq!(
        plan(&c(&[30, 40]), &c(&[30, 40])).tiled_transpose_axes(),
        None
    );
    // Too short for tiles.
    let src = c(&[40, 8]).permuted(&[1, 0]).unwrap();
    assert_eq!(plan(&c(&[8, 40]), &src).tiled_transpose_axes(), None);
    // Batched: NCHW -> NHWC, the source's contiguous W pairs with the destination's C.
    let src = c(&[2, 64, 20, 24]).permuted(&[0, 2, 3, 1]).unwrap();
    let p = plan(&c(&[2, 20, 24, 64]), &src);
    let (a, l) = p.tiled_transpose_axes().unwrap();
    assert_eq!((p.src_strides[a], p.dst_strides[l]), (1, 1));
    assert_eq!(l, p.ndim() - 1);
}

#[test]
fn an_empty_layout_keeps_its_itemsize_as_the_most_compatible() {
    let l = StridedLayout::dense(&[0], 2, Order::C).unwrap();
    assert_eq!(l.max_compatible_itemsize(8, 0, -1).unwrap(), 2);
    let l = StridedLayout::dense(&[3, 0], 4, Order::C).unwrap();
    assert_eq!(l.max_compatible_itemsize(16, 64, -1).unwrap(), 4);
    // A non-empty one still widens.
    let l = StridedLayout::dense(&[4], 2, Order::C).unwrap();
    assert_eq!(l.max_compatible_itemsize(8, 0, -1).unwrap(), 8);
}
