//! Copy schedules simulated on the CPU: every step's index arithmetic (tiles, tables,
//! words, remainder slabs) is replayed byte by byte and must write every destination byte
//! of the copy exactly once, from the right source byte, with aligned words.

use proptest::prelude::*;
use std::collections::HashMap;
use stridekit_layout::{
    CopyPlan, CopyStep, Order, ScheduleBounds, SliceArg, StridedLayout, TilePlan, FEW_TILES,
    FEW_TILES_PER_SM, SCHEDULE_ADDRESS_PERIOD, SMALL_COPY,
};

/// (destination byte, source byte) pairs of the copy, straight from the two layouts.
fn reference(dst: &StridedLayout, src: &StridedLayout) -> HashMap<i64, i64> {
    let isz = dst.itemsize() as i64;
    let mut out = HashMap::new();
    let nd = dst.ndim();
    let mut idx = vec![0i64; nd];
    for _ in 0..dst.volume() {
        let d: i64 = dst.slice_offset() + (0..nd).map(|k| idx[k] * dst.strides()[k]).sum::<i64>();
        let s: i64 = src.slice_offset() + (0..nd).map(|k| idx[k] * src.strides()[k]).sum::<i64>();
        for b in 0..isz {
            out.insert(d * isz + b, s * isz + b);
        }
        for k in (0..nd).rev() {
            idx[k] += 1;
            if idx[k] < dst.shape()[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

fn put(out: &mut HashMap<i64, i64>, isz: usize, d: i64, s: i64) -> Result<(), String> {
    for b in 0..isz as i64 {
        if out.insert(d * isz as i64 + b, s * isz as i64 + b).is_some() {
            return Err(format!(
                "destination byte {} written twice",
                d * isz as i64 + b
            ));
        }
    }
    Ok(())
}

fn plan_pairs(p: &CopyPlan, out: &mut HashMap<i64, i64>) -> Result<(), String> {
    let nd = p.ndim();
    let mut idx = vec![0i64; nd];
    for _ in 0..p.volume {
        let d = p.dst_offset + (0..nd).map(|k| idx[k] * p.dst_strides[k]).sum::<i64>();
        let s = p.src_offset + (0..nd).map(|k| idx[k] * p.src_strides[k]).sum::<i64>();
        put(out, p.itemsize, d, s)?;
        for k in (0..nd).rev() {
            idx[k] += 1;
            if idx[k] < p.shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(())
}

/// Replays a tiled step as the kernel runs it.
fn tile_pairs(
    t: &TilePlan,
    dptr: u64,
    sptr: u64,
    out: &mut HashMap<i64, i64>,
) -> Result<(), String> {
    let v = t.volume();
    let reads = t.read_order();
    let writes = t.write_order();
    let mut seen = vec![false; v];
    for &(_, j) in &reads {
        if j >= v || std::mem::replace(&mut seen[j], true) {
            return Err(format!("read order position {j} out of range or repeated"));
        }
    }
    if !v.is_multiple_of(t.read_word) || !v.is_multiple_of(t.write_word) {
        return Err("words do not divide the tile".into());
    }
    let isz = t.itemsize as i64;
    for tile in 0..t.tiles() {
        let (s0, d0) = t.tile_offsets(tile);
        for w in (0..v).step_by(t.read_word) {
            let first = s0 + reads[w].0;
            if t.read_word > 1
                && (sptr as i64 + first * isz).rem_euclid(t.read_word as i64 * isz) != 0
            {
                return Err(format!("read word at element {first} is misaligned"));
            }
            for e in 0..t.read_word {
                if reads[w + e].0 != reads[w].0 + e as i64 {
                    return Err("a read word is not contiguous".into());
                }
            }
        }
        for w in (0..v).step_by(t.write_word) {
            let first = d0 + writes[w];
            if t.write_word > 1
                && (dptr as i64 + first * isz).rem_euclid(t.write_word as i64 * isz) != 0
            {
                return Err(format!("write word at element {first} is misaligned"));
            }
            for e in 0..t.write_word {
                if writes[w + e] != writes[w] + e as i64 {
                    return Err("a written word is not contiguous".into());
                }
            }
        }
        for &(so, j) in &reads {
            put(out, t.itemsize, d0 + writes[j], s0 + so)?;
        }
    }
    Ok(())
}

fn check(
    dst: &StridedLayout,
    src: &StridedLayout,
    dptr: u64,
    sptr: u64,
) -> Result<Vec<CopyStep>, String> {
    let plan = CopyPlan::new(dst, src).map_err(|e| e.to_string())?;
    let steps = plan.schedule_with_small_copy(dptr, sptr, 0);
    let mut got = HashMap::new();
    for st in &steps {
        match st {
            CopyStep::Memcpy(p) => {
                for i in 0..p.volume as i64 {
                    put(&mut got, p.itemsize, p.dst_offset + i, p.src_offset + i)?;
                }
            }
            CopyStep::Elementwise(p)
            | CopyStep::Transpose { plan: p, .. }
            | CopyStep::Channels { plan: p, .. }
            | CopyStep::ReversedChannels { plan: p, .. }
            | CopyStep::Rows { plan: p }
            | CopyStep::ReversedRows { plan: p }
            | CopyStep::Repeat { plan: p, .. }
            | CopyStep::SmallMatrices { plan: p, .. } => plan_pairs(p, &mut got)?,
            CopyStep::Tiled(t) => tile_pairs(t, dptr, sptr, &mut got)?,
        }
    }
    let want = reference(dst, src);
    if got != want {
        return Err(format!(
            "{} bytes written, {} expected, or wrong sources",
            got.len(),
            want.len()
        ));
    }
    Ok(steps.to_vec())
}

/// A layout of `shape`: dense in the side's axis order inside a block padded by its pads,
/// sliced with its steps (negative: flipped) from the pads.
fn strided(shape: &[i64], isz: usize, (perm, steps, pads): &Side) -> StridedLayout {
    let big: Vec<i64> = (0..shape.len())
        .map(|i| shape[i] * steps[i].abs() + pads[i])
        .collect();
    let base = StridedLayout::dense(&big, isz, Order::Axes(perm)).expect("valid");
    let sl: Vec<SliceArg> = (0..shape.len())
        .map(|i| {
            let n = shape[i] * steps[i].abs();
            if steps[i] > 0 {
                SliceArg::Range {
                    start: Some(pads[i]),
                    stop: Some(pads[i] + n),
                    step: steps[i],
                }
            } else {
                SliceArg::Range {
                    start: Some(pads[i] + n - 1),
                    stop: if pads[i] == 0 {
                        None
                    } else {
                        Some(pads[i] - 1)
                    },
                    step: steps[i],
                }
            }
        })
        .collect();
    base.sliced(&sl).expect("valid slice")
}

fn side(nd: usize) -> impl Strategy<Value = Side> {
    (
        Just((0..nd as i64).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(prop::sample::select(vec![1i64, 1, 1, 2, -1, -2]), nd),
        prop::collection::vec(0i64..3, nd),
    )
}

type Side = (Vec<i64>, Vec<i64>, Vec<i64>);

/// The element sizes the engine copies.
fn itemsize() -> impl Strategy<Value = usize> {
    prop::sample::select(vec![1usize, 2, 4, 8, 16])
}

/// A shape of 1 to 5 axes and at most 60 000 elements, and the axis order, steps and pads
/// of a source and a destination of it.
fn shape_and_sides() -> impl Strategy<Value = (Vec<i64>, Side, Side)> {
    (1usize..6)
        .prop_flat_map(|nd| {
            (
                prop::collection::vec(
                    prop::sample::select(vec![1i64, 2, 3, 5, 7, 16, 33, 40, 70, 130]),
                    nd,
                ),
                side(nd),
                side(nd),
            )
        })
        .prop_filter("at most 60 000 elements", |(shape, _, _)| {
            shape.iter().product::<i64>() <= 60_000
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn schedules_copy_every_byte_once(
        (shape, s, d) in shape_and_sides(),
        isz in itemsize(),
        align in prop::sample::select(vec![0u64, 1, 2, 4, 8, 12]),
        bcast in prop::collection::vec(any::<bool>(), 6),
    ) {
        let src = strided(&shape, isz, &s);
        let mut src_shape = shape.clone();
        for (k, e) in src_shape.iter_mut().enumerate() { if bcast[k] && k % 2 == 0 { *e = 1; } }
        let src = if src_shape != shape {
            strided(&src_shape, isz, &s).broadcast_to(&shape).expect("broadcast")
        } else { src };
        let dst = strided(&shape, isz, &d);
        let src = StridedLayout::with_offset(src.shape(), src.strides(), isz, src.slice_offset() - src.min_offset()).expect("rebased");
        let dst = StridedLayout::with_offset(dst.shape(), dst.strides(), isz, dst.slice_offset() - dst.min_offset()).expect("rebased");
        let base = 1u64 << 20;
        if let Err(e) = check(&dst, &src, base + align * isz as u64 % 16, base) {
            return Err(TestCaseError::fail(format!("{e}: src {src} dst {dst}")));
        }
    }
}

fn c(shape: &[i64], isz: usize) -> StridedLayout {
    StridedLayout::dense(shape, isz, Order::C).expect("valid")
}

#[test]
fn classes_pick_the_expected_kernels() {
    let kinds =
        |dst: &StridedLayout, src: &StridedLayout, dptr: u64, sptr: u64| -> Vec<&'static str> {
            check(dst, src, dptr, sptr)
                .expect("exact")
                .iter()
                .map(|s| match s {
                    CopyStep::Memcpy(_) => "memcpy",
                    CopyStep::Elementwise(_) => "elementwise",
                    CopyStep::Transpose { .. } => "transpose",
                    CopyStep::Tiled(_) => "tiled",
                    CopyStep::Channels { .. } => "channels",
                    CopyStep::ReversedChannels { .. } => "reversed",
                    CopyStep::Rows { .. } => "rows",
                    CopyStep::ReversedRows { .. } => "reversed rows",
                    CopyStep::Repeat { .. } => "repeat",
                    CopyStep::SmallMatrices { .. } => "matrices",
                })
                .collect()
        };
    // Rows that start at different alignments: the shifted-rows kernel, in bytes; the
    // same rows aligned move in 16-byte words elementwise.
    let big = c(&[64, 1001], 1);
    let inner = big.sliced(stridekit_layout::s![.., 3..]).expect("slice");
    assert_eq!(kinds(&c(&[64, 998], 1), &inner, 0, 0), ["rows"]);
    let f16 = c(&[64, 1000], 2)
        .sliced(stridekit_layout::s![.., 1..])
        .expect("slice");
    assert_eq!(kinds(&c(&[64, 999], 2), &f16, 0, 0), ["rows"]);
    let aligned = c(&[64, 1024], 4)
        .sliced(stridekit_layout::s![.., 4..])
        .expect("slice");
    assert_eq!(
        kinds(
            &c(&[64, 1024], 4)
                .sliced(stridekit_layout::s![.., ..1020])
                .expect("slice"),
            &aligned,
            0,
            0
        ),
        ["elementwise"]
    );
    // Rows of bytes and halfwords read backwards, and a whole array reversed: the
    // reversed-rows kernel; 4-byte elements move in words elementwise; 3 channels are the
    // reversed-channel kernel's.
    for isz in [1usize, 2] {
        let x = c(&[64, 1000], isz);
        let flipped = x.sliced(stridekit_layout::s![.., ..;-1]).expect("slice");
        assert_eq!(kinds(&x, &flipped, 0, 0), ["reversed rows"]);
        let all = x.sliced(stridekit_layout::s![..;-1, ..;-1]).expect("slice");
        assert_eq!(kinds(&x, &all, 0, 3), ["reversed rows"]);
    }
    let x4 = c(&[64, 1000], 4);
    let flipped4 = x4.sliced(stridekit_layout::s![.., ..;-1]).expect("slice");
    assert_eq!(kinds(&x4, &flipped4, 0, 0), ["elementwise"]);
    let rgb = c(&[64, 64, 3], 1);
    let bgr = rgb
        .sliced(stridekit_layout::s![.., .., ..;-1])
        .expect("slice");
    assert_eq!(kinds(&rgb, &bgr, 0, 0), ["reversed"]);
    let a = c(&[64, 96], 4);
    assert_eq!(kinds(&a, &a, 0, 0), ["memcpy"]);
    // f32 transpose of two long axes: the 32 x 32 tile kernel.
    let t = c(&[96, 64], 4).permuted(&[1, 0]).expect("permute");
    assert_eq!(kinds(&a, &t, 0, 0), ["transpose"]);
    // The same in bytes: the 32 x 32 tiles of 4-byte words when aligned.
    let a1 = c(&[256, 512], 1);
    let t1 = c(&[512, 256], 1).permuted(&[1, 0]).expect("permute");
    assert_eq!(kinds(&a1, &t1, 0, 0), ["transpose"]);
    // A short destination axis of bytes (8 channels interleaved), and the other way:
    // the channel kernels, whatever the alignment of the bases.
    let t8 = c(&[8, 4096], 1).permuted(&[1, 0]).expect("permute");
    assert_eq!(kinds(&c(&[4096, 8], 1), &t8, 0, 0), ["channels"]);
    assert_eq!(kinds(&c(&[4096, 8], 1), &t8, 4, 2), ["channels"]);
    let planar = c(&[4096, 8], 1).permuted(&[1, 0]).expect("permute");
    assert_eq!(kinds(&c(&[8, 4096], 1), &planar, 4, 2), ["channels"]);
    // The same in 4-byte elements: a warp of the elementwise kernel reads 4 pixels of
    // each of the 8 planes, 8 sectors where 4 would do, and the next warp the rest of
    // them: gathered reads, elementwise.
    let t8w = c(&[8, 4096], 4).permuted(&[1, 0]).expect("permute");
    assert_eq!(kinds(&c(&[4096, 8], 4), &t8w, 0, 0), ["elementwise"]);
    // With 32 planes a warp reads 32 sectors for 4: multi-axis tiles in 4-element words
    // both ways.
    let t32w = c(&[32, 4096], 4).permuted(&[1, 0]).expect("permute");
    let steps = check(&c(&[4096, 32], 4), &t32w, 0, 0).expect("exact");
    match &steps[..] {
        [CopyStep::Tiled(t)] => assert_eq!((t.read_word, t.write_word), (4, 4)),
        other => panic!("{other:?}"),
    }
    // Bytes whose rows start anywhere: the word transpose where its 128 x 128 byte tiles
    // fill; with 57-byte rows they would be 45% full, and multi-axis tiles take it.
    let rows = |n: i64| {
        c(&[n, 4001], 1)
            .sliced(stridekit_layout::s![.., 1..])
            .expect("slice")
            .permuted(&[1, 0])
            .expect("permute")
    };
    assert_eq!(kinds(&c(&[4000, 200], 1), &rows(200), 0, 0), ["transpose"]);
    assert_eq!(kinds(&c(&[4000, 57], 1), &rows(57), 0, 0)[0], "tiled");
    // Planes of f64 interleaved in (n, 3, 3) blocks with gaps: runs of 3 from each plane,
    // a warp's reads gathered from 3 runs.
    let planes = c(&[3, 4000, 3, 3], 8)
        .permuted(&[1, 2, 3, 0])
        .expect("permute");
    let blocks = c(&[4000, 3, 6, 3], 8)
        .sliced(stridekit_layout::s![.., .., ..3, ..])
        .expect("slice");
    assert_eq!(kinds(&blocks, &planes, 0, 0), ["elementwise"]);
    // Two f32 streams interleaved element by element, each read in runs of 8 (a warp:
    // 8 sectors for 4). The second stream's elements share the first's sectors: where
    // the kernel reaches them 32 KiB later (still in L2), elementwise; 3.2 MB later,
    // tiles.
    let pair = |n: i64| c(&[n, 8, 2], 4).permuted(&[2, 0, 1]).expect("permute");
    assert_eq!(
        kinds(&c(&[2, 1000, 8], 4), &pair(1000), 0, 0),
        ["elementwise"]
    );
    assert_eq!(
        kinds(&c(&[2, 100_000, 8], 4), &pair(100_000), 0, 0)[0],
        "tiled"
    );
    assert_eq!(kinds(&a1, &t1, 4, 2), ["transpose"]);
    let word = |dptr: u64, sptr: u64| match &CopyPlan::new(&a1, &t1)
        .expect("plan")
        .schedule_with_small_copy(dptr, sptr, 0)[..]
    {
        [CopyStep::Transpose { word, .. }] => *word,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        (word(0, 0), word(4, 2)),
        (4, 1),
        "4-byte words only where aligned"
    );
    // Odd extents: multi-axis tiles leave remainder slabs (a 5-D permutation of short
    // axes, none of which divides the tile).
    let a2 = c(&[7, 5, 9, 11, 13], 2);
    let t2 = c(&[13, 11, 9, 5, 7], 2)
        .permuted(&[4, 3, 2, 1, 0])
        .expect("permute");
    let k = kinds(&a2, &t2, 0, 0);
    assert_eq!(k[0], "tiled");
    assert!(k.len() > 1, "{k:?}");
    // Rows along a shared fast axis (a slice with a step outside): elementwise.
    let rows = c(&[64, 200], 4)
        .sliced(&[
            SliceArg::Range {
                start: None,
                stop: None,
                step: 2,
            },
            SliceArg::Range {
                start: None,
                stop: None,
                step: 1,
            },
        ])
        .expect("slice");
    assert_eq!(kinds(&c(&[32, 200], 4), &rows, 0, 0), ["elementwise"]);
    // RGB interleaved <-> planar, u8: the channel kernels both ways.
    let hwc = c(&[480, 640, 3], 1).permuted(&[2, 0, 1]).expect("permute");
    assert_eq!(kinds(&c(&[3, 480, 640], 1), &hwc, 0, 0), ["channels"]);
    let chw = c(&[3, 480, 640], 1);
    assert_eq!(kinds(&hwc, &chw, 0, 0), ["channels"]);
    // The same in 4-byte elements: multi-axis tiles, reads over (pixel, channel) pairs,
    // 3 x n elements in a row, in 16-byte words.
    let hwc4 = c(&[480, 640, 3], 4).permuted(&[2, 0, 1]).expect("permute");
    let steps = check(&c(&[3, 480, 640], 4), &hwc4, 0, 0).expect("exact");
    match &steps[0] {
        CopyStep::Tiled(t) => assert_eq!(t.read_word * t.itemsize, 16),
        other => panic!("{other:?}"),
    }
    // A broadcast row into a dense destination: the repeat kernel, up to 8 KiB of
    // pattern (a constant fill too); rows that widen to 16-byte words, or into a strided
    // destination: elementwise (reads hit one row); longer patterns, row by row.
    let odd = c(&[1, 301], 4).broadcast_to(&[50, 301]).expect("broadcast");
    assert_eq!(kinds(&c(&[50, 301], 4), &odd, 0, 0), ["repeat"]);
    let row = c(&[1, 300], 4).broadcast_to(&[50, 300]).expect("broadcast");
    assert_eq!(kinds(&c(&[50, 300], 4), &row, 0, 0), ["elementwise"]);
    let one = c(&[1, 1], 2).broadcast_to(&[999, 37]).expect("broadcast");
    assert_eq!(kinds(&c(&[999, 37], 2), &one, 0, 0), ["repeat"]);
    let cols = c(&[50, 600], 4)
        .sliced(stridekit_layout::s![.., ..300])
        .expect("slice");
    assert_eq!(kinds(&cols, &row, 0, 0), ["elementwise"]);
    let long = c(&[1, 2049], 4)
        .broadcast_to(&[50, 2049])
        .expect("broadcast");
    assert_eq!(kinds(&c(&[50, 2049], 4), &long, 0, 0), ["rows"]);
    // A broadcast in the middle repeats its inner block only where the axes above it move
    // in the source: not one pattern.
    let mid = StridedLayout::with_offset(&[7, 40, 75], &[75, 0, 3], 2, 0).expect("layout");
    assert_eq!(kinds(&c(&[7, 40, 75], 2), &mid, 0, 0), ["elementwise"]);
}

#[test]
fn shared_memory_slots_keep_words_together_and_aligned() {
    for isz in [1usize, 2, 4, 8, 16] {
        for word in [1usize, 2, 4, 8, 16, 32] {
            let bytes = word * isz;
            if bytes > 16 {
                continue;
            }
            // A tile's padding: one written word, at least 4 bytes, after groups of at
            // least 32 pads.
            let pad = bytes.max(4) / isz;
            let densest = (32 * pad).trailing_zeros();
            for shift in densest..densest + 7 {
                let mut last = None;
                for j in 0..5000usize {
                    let s = TilePlan::slot(j, pad, shift);
                    assert!(last.is_none_or(|l| s > l), "slots increase");
                    assert!(s <= TilePlan::slot_bound(j, isz), "within shared memory");
                    last = Some(s);
                }
                // Each written word: consecutive slots, aligned to the word.
                for j in (0..5000).step_by(word) {
                    let s = TilePlan::slot(j, pad, shift);
                    assert_eq!((s * isz) % bytes, 0, "itemsize {isz}, word {word}, j {j}");
                    assert_eq!(TilePlan::slot(j + word - 1, pad, shift), s + word - 1);
                }
            }
        }
    }
}

/// A halfword tile whose source-fast axis is 132 elements apart in destination order
/// (random case 119's shape): with the densest padding a warp's stores fall on 8 of the
/// 32 banks; the group chosen spreads them, and the image still fits the shared memory
/// sized for the densest.
#[test]
fn slot_groups_spread_the_scatter_over_the_banks() {
    let src = StridedLayout::with_offset(
        &[19, 37, 9461, 1, 3, 3],
        &[-1, 19, -6327, -1, 703, 2109],
        2,
        59853438,
    )
    .expect("source");
    let dst = StridedLayout::with_offset(
        &[19, 37, 9461, 1, 3, 3],
        &[2100342, -56766, -3, -1, 1, 39906498],
        2,
        2071956,
    )
    .expect("destination");
    let steps = CopyPlan::new(&dst, &src)
        .expect("plan")
        .schedule_with_small_copy(1 << 40, 1 << 41, 0);
    let CopyStep::Tiled(t) = &steps[0] else {
        panic!("{steps:?}")
    };
    let densest = t.densest_slot_shift();
    assert!(t.slot_shift > densest, "{t:?}");
    assert!(t.scatter_wavefronts(t.slot_shift) < t.scatter_wavefronts(densest));
    let image = TilePlan::slot(t.volume() - 1, t.slot_pad(), t.slot_shift) + 1;
    assert!(image <= TilePlan::slot_bound(t.volume(), 2));
}

/// The channel transpose's axes and whether its pixels move in aligned 16-byte groups,
/// for `src` copied into `dst` with both first elements at `dst_ptr` and `src_ptr`.
fn groups_aligned(dst: &StridedLayout, src: &StridedLayout, dst_ptr: u64, src_ptr: u64) -> bool {
    let plan = CopyPlan::new(dst, src).unwrap();
    let Some(axes) = plan.channel_transpose_axes() else {
        panic!("not a channel layout: {src} -> {dst}: {plan:?}");
    };
    plan.channel_groups_aligned(axes, dst_ptr, src_ptr)
}

#[test]
fn channel_groups_are_aligned_only_where_every_plane_and_batch_starts_on_16_bytes() {
    let c = |shape: &[i64], isz: usize| StridedLayout::dense(shape, isz, Order::C).unwrap();
    const P: u64 = 1 << 20;
    for isz in [1usize, 2] {
        for ch in [2i64, 3, 4] {
            // NHWC -> NCHW and back, 96 x 96 pixels (planes of 9216 bytes or 18 KiB).
            let nhwc = c(&[5, 96, 96, ch], isz).permuted(&[0, 3, 1, 2]).unwrap();
            let nchw = c(&[5, ch, 96, 96], isz);
            assert!(
                groups_aligned(&nchw, &nhwc, P, P),
                "split C={ch} u{}",
                8 * isz
            );
            let to_nhwc = c(&[5, 96, 96, ch], isz).permuted(&[0, 3, 1, 2]).unwrap();
            assert!(groups_aligned(&to_nhwc, &nchw, P, P), "merge C={ch}");
            // Either first element off a 16-byte boundary.
            assert!(!groups_aligned(&nchw, &nhwc, P, P + isz as u64));
            assert!(!groups_aligned(&nchw, &nhwc, P + 8, P));
            // Planes of 300 pixels: a plane stride that is no multiple of 16 bytes ...
            let rows = c(&[300, ch], isz).permuted(&[1, 0]).unwrap();
            assert!(!groups_aligned(&c(&[ch, 300], isz), &rows, P, P));
            // ... unless the planes are padded to one.
            let padded = c(&[ch, 320], isz)
                .sliced(stridekit_layout::s![.., 0..300])
                .unwrap();
            assert!(groups_aligned(&padded, &rows, P, P));
        }
        // Five channels interleaved: other kernels.
        let five = c(&[4096, 5], isz).permuted(&[1, 0]).unwrap();
        assert!(!groups_aligned(&five, &c(&[5, 4096], isz), P, P));
        // Pixels with a gap (RGBA read as RGB planes): read whole, the gap never written.
        let rgba = c(&[4096, 4], isz)
            .sliced(stridekit_layout::s![.., 0..3])
            .unwrap()
            .permuted(&[1, 0])
            .unwrap();
        assert!(groups_aligned(&c(&[3, 4096], isz), &rgba, P, P));
        // But never written into: RGB planes into RGBA pixels take other kernels.
        let into_rgba = c(&[4096, 4], isz)
            .sliced(stridekit_layout::s![.., 0..3])
            .unwrap()
            .permuted(&[1, 0])
            .unwrap();
        let plan = CopyPlan::new(&into_rgba, &c(&[3, 4096], isz)).unwrap();
        assert!(plan
            .channel_transpose_axes()
            .is_none_or(|axes| !plan.channel_groups_aligned(axes, P, P)));
    }
    // A batch stride that is no multiple of 16 bytes: (B, 1000, 3) bytes with 3000-byte batches.
    let odd = c(&[4, 1000, 3], 1).permuted(&[0, 2, 1]).unwrap();
    let planes = c(&[4, 3, 1024], 1)
        .sliced(stridekit_layout::s![.., .., 0..1000])
        .unwrap();
    assert!(!groups_aligned(&planes, &odd, P, P));
}

/// The schedule's first step for `src` copied into `dst`, both first elements at `P`.
fn first_step(dst: &StridedLayout, src: &StridedLayout, dst_ptr: u64, src_ptr: u64) -> CopyStep {
    let plan = CopyPlan::new(dst, src).unwrap();
    plan.schedule_with_small_copy(dst_ptr, src_ptr, 0)[0].clone()
}

#[test]
fn one_channel_picked_out_of_aligned_pixels_takes_the_channel_kernel() {
    let c = |shape: &[i64], isz: usize| StridedLayout::dense(shape, isz, Order::C).unwrap();
    const P: u64 = 1 << 20;
    for isz in [1usize, 2] {
        for step in [2i64, 3, 4] {
            // x[..., 0] of (64, 64, step) pixels and x[::step] of a 1-D array.
            let pixels = c(&[64, 64, step], isz);
            let picked = pixels.sliced(stridekit_layout::s![.., .., 0]).unwrap();
            let dst = c(&[64, 64], isz);
            assert!(
                matches!(first_step(&dst, &picked, P, P), CopyStep::Channels { .. }),
                "step {step}"
            );
            let flat = c(&[4096 * step], isz)
                .sliced(stridekit_layout::s![..;step])
                .unwrap();
            assert!(matches!(
                first_step(&c(&[4096], isz), &flat, P, P),
                CopyStep::Channels { .. }
            ));
            // A first element off 16 bytes: another kernel.
            assert!(!matches!(
                first_step(&dst, &picked, P + 2, P),
                CopyStep::Channels { .. }
            ));
        }
        // Five elements a pixel, or too short a run: no pick.
        let five = c(&[4096 * 5], isz)
            .sliced(stridekit_layout::s![..;5])
            .unwrap();
        assert!(CopyPlan::new(&c(&[4096], isz), &five)
            .unwrap()
            .picked_channel()
            .is_none());
        let short = c(&[200], isz).sliced(stridekit_layout::s![..;2]).unwrap();
        assert!(CopyPlan::new(&c(&[100], isz), &short)
            .unwrap()
            .picked_channel()
            .is_none());
    }
}

/// Rows of 63 four-byte elements (a divisor of 63 leaves no remainder, but no 16-byte
/// word stays aligned in an odd row): tiles of 32 rows' columns keep 16-byte words and
/// leave a remainder slab; replayed exactly, the slab included.
#[test]
fn tiles_keep_word_multiples_where_that_widens_their_words_fourfold() {
    let (src, dst) = word_multiple_case(0, 0);
    let steps = check(&dst, &src, 0, 0).expect("exact");
    let CopyStep::Tiled(t) = &steps[0] else {
        panic!("{steps:?}")
    };
    assert_eq!(t.write_word * t.itemsize, 16, "{t:?}");
    assert!(steps.len() > 1, "a remainder slab: {steps:?}");
    // Starts off the 16-byte grid: 4-byte words, whatever the extents.
    let (src, dst) = word_multiple_case(0, 1);
    check(&dst, &src, 0, 0).expect("exact");
}

/// A (63, 200, 55) copy of f32: the source every second element of rows 112 apart, the
/// destination rows of 63 elements 64 apart; `s` and `d` elements into their memory.
fn word_multiple_case(s: i64, d: i64) -> (StridedLayout, StridedLayout) {
    let shape = [63, 200, 55];
    let src = StridedLayout::with_offset(&shape, &[112, 14560, 2], 4, s).expect("src");
    let dst = StridedLayout::with_offset(&shape, &[1, 3520, 64], 4, d).expect("dst");
    (src, dst)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Base addresses count only through their remainders modulo the period: an engine may
    /// keep schedules by plan and remainders.
    #[test]
    fn schedules_see_addresses_only_modulo_the_period(
        (shape, s, d) in shape_and_sides(),
        isz in itemsize(),
        rd in 0u64..SCHEDULE_ADDRESS_PERIOD,
        rs in 0u64..SCHEDULE_ADDRESS_PERIOD,
        (i, j) in (1u64..1 << 30, 1u64..1 << 30),
    ) {
        let src = strided(&shape, isz, &s);
        let dst = strided(&shape, isz, &d);
        let plan = CopyPlan::new(&dst, &src).expect("plan");
        let p = SCHEDULE_ADDRESS_PERIOD;
        prop_assert_eq!(plan.schedule(rd, rs), plan.schedule(rd + i * p, rs + j * p));
        prop_assert_eq!(
            plan.schedule_with_small_copy(rd, rs, 0),
            plan.schedule_with_small_copy(rd + i * p, rs + j * p, 0)
        );
    }
}

/// A whole copy of at most `SMALL_COPY` (2^20) elements that would take multi-axis tiles
/// runs as one elementwise launch: its blocks would build their tables for one or two
/// tiles each. Past it, a copy of many tiles takes them; 0 in `schedule_with_small_copy`
/// keeps tiles at any size.
#[test]
fn small_copies_run_elementwise() {
    let permute = |shape: &[i64]| {
        let src = StridedLayout::dense(shape, 4, Order::C)
            .unwrap()
            .permuted(&[4, 2, 0, 3, 1])
            .unwrap();
        let dst = StridedLayout::dense(src.shape(), 4, Order::C).unwrap();
        (dst, src)
    };
    assert_eq!(SMALL_COPY, 1 << 20);
    for shape in [[8i64; 5], [16; 5], [6, 10, 3, 12, 9]] {
        let (dst, src) = permute(&shape);
        let plan = CopyPlan::new(&dst, &src).unwrap();
        assert!(plan.volume <= SMALL_COPY);
        let steps = plan.schedule(0, 0);
        assert!(
            matches!(&steps[..], [CopyStep::Elementwise(p)] if p.volume == plan.volume),
            "{steps:?}"
        );
        // Tiled when asked for (`check` plans so, and replays every byte).
        let tiled = check(&dst, &src, 0, 0).expect("exact");
        assert!(matches!(tiled[0], CopyStep::Tiled(_)), "{tiled:?}");
    }
    // 20^5 elements: past the bound, tiles (2000 of them).
    let (dst, src) = permute(&[20; 5]);
    let plan = CopyPlan::new(&dst, &src).unwrap();
    assert!(plan.volume > SMALL_COPY);
    let steps = plan.schedule(0, 0);
    assert!(matches!(steps[0], CopyStep::Tiled(_)), "{steps:?}");
}

/// The copy of a dense C-order array of `shape` (`isz`-byte elements), permuted by
/// `axes`, into a dense C-order array of the permuted shape.
fn dense_permute(shape: &[i64], axes: &[i64], isz: usize) -> CopyPlan {
    let src = StridedLayout::dense(shape, isz, Order::C)
        .unwrap()
        .permuted(axes)
        .unwrap();
    let dst = StridedLayout::dense(src.shape(), isz, Order::C).unwrap();
    CopyPlan::new(&dst, &src).unwrap()
}

/// A whole copy whose one tile launch would hold fewer than 792 tiles (one and a half a
/// block of the persistent grid on 132 SMs at four blocks an SM) runs elementwise: the
/// f64 (18,30,3,36,27) permute (540 tiles) and 48^4 bytes (768, past 2^22 elements);
/// 48^4 halfwords (1152 tiles) and 20^5 f32 (2000) keep their tiles, and so does
/// everything with the small-copy bound 0. The bound follows the GPU's SMs (6 tiles an SM).
#[test]
fn copies_of_few_tiles_run_elementwise() {
    let tiles = |steps: &[CopyStep]| match steps {
        [CopyStep::Tiled(t), ..] => Some(t.tiles()),
        _ => None,
    };
    for (shape, axes, isz, few) in [
        (
            &[18i64, 30, 3, 36, 27][..],
            &[3i64, 1, 4, 0, 2][..],
            8usize,
            true,
        ),
        (&[48; 4], &[3, 1, 0, 2], 1, true),
        (&[48; 4], &[3, 1, 0, 2], 2, false),
        (&[20; 5], &[4, 2, 0, 3, 1], 4, false),
    ] {
        let plan = dense_permute(shape, axes, isz);
        assert!(plan.volume > SMALL_COPY, "{shape:?}");
        let tiled = plan.schedule_with_small_copy(0, 0, 0);
        let n = tiles(&tiled).expect("tiles with the bound 0");
        assert_eq!(n < FEW_TILES, few, "{shape:?} {isz}: {n} tiles");
        let steps = plan.schedule(0, 0);
        if few {
            assert!(
                matches!(&steps[..], [CopyStep::Elementwise(p)] if p.volume == plan.volume),
                "{shape:?} {isz}: {steps:?}"
            );
        } else {
            assert_eq!(tiles(&steps), Some(n), "{shape:?} {isz}: {steps:?}");
        }
        // The bound follows the GPU: 6 tiles an SM. On 66 SMs (396 tiles) none of these
        // runs elementwise; on 200 (1200) the 1152 tiles of 48^4 halfwords do.
        for sms in [66u64, 132, 200] {
            let bounds = ScheduleBounds::for_sms(SMALL_COPY, sms);
            assert_eq!(bounds.few_tiles, sms * FEW_TILES_PER_SM);
            let steps = plan.schedule_with_bounds(0, 0, bounds);
            let elementwise =
                matches!(&steps[..], [CopyStep::Elementwise(p)] if p.volume == plan.volume);
            assert_eq!(
                elementwise,
                n < bounds.few_tiles,
                "{shape:?} {isz} on {sms} SMs: {steps:?}"
            );
        }
        assert_eq!(
            plan.schedule(0, 0)[..],
            plan.schedule_with_bounds(0, 0, ScheduleBounds::for_sms(SMALL_COPY, 132))[..]
        );
    }
}

/// A whole copy of at most 2^22 elements runs elementwise where four sampled warps of the
/// elementwise kernel read under 0.8 sectors an element (their sectors' other elements
/// come from L2), or where its tiles would leave remainder slabs big enough for tile
/// launches of their own; past 2^22 elements, or with the small-copy bound 0, such copies
/// keep their tiles. A permute whose warps read a sector an element keeps them too.
#[test]
fn mid_copies_run_elementwise_where_warps_share_sectors_or_tiles_leave_slabs() {
    let whole_elementwise = |plan: &CopyPlan, steps: &[CopyStep]| matches!(steps, [CopyStep::Elementwise(p)] if p.volume == plan.volume);
    // 3-channel pixels of f64 into planes (3.1 M elements): tiles and a small slab, or
    // one elementwise launch whose warps share sectors; twice the batch: tiles.
    let plan = dense_permute(&[256, 64, 64, 3], &[0, 3, 1, 2], 8);
    assert!(plan.volume > SMALL_COPY && plan.volume <= 1 << 22);
    let steps = plan.schedule(0, 0);
    assert!(whole_elementwise(&plan, &steps), "{steps:?}");
    let tiled = plan.schedule_with_small_copy(0, 0, 0);
    assert!(matches!(tiled[0], CopyStep::Tiled(_)), "{tiled:?}");
    let plan = dense_permute(&[512, 64, 64, 3], &[0, 3, 1, 2], 8);
    assert!(plan.volume > 1 << 22);
    let steps = plan.schedule(0, 0);
    assert!(matches!(steps[0], CopyStep::Tiled(_)), "{steps:?}");
    // f32 (B, 24, 24, 5) -> (B, 5, 24, 24): tiles leave a slab of tiles of its own.
    let plan = dense_permute(&[1024, 24, 24, 5], &[0, 3, 2, 1], 4);
    assert!(plan.volume <= 1 << 22);
    assert!(whole_elementwise(&plan, &plan.schedule(0, 0)));
    let tiled = plan.schedule_with_small_copy(0, 0, 0);
    assert!(
        matches!(&tiled[..], [CopyStep::Tiled(_), CopyStep::Tiled(_), ..]),
        "{tiled:?}"
    );
    let plan = dense_permute(&[2048, 24, 24, 5], &[0, 3, 2, 1], 4);
    assert!(matches!(plan.schedule(0, 0)[0], CopyStep::Tiled(_)));
    // 5-D 20^5 f32 (3.2 M elements): each warp reads a sector an element, whole tiles.
    let plan = dense_permute(&[20; 5], &[4, 2, 0, 3, 1], 4);
    assert!(plan.volume > SMALL_COPY && plan.volume <= 1 << 22);
    let steps = plan.schedule(0, 0);
    assert!(matches!(&steps[..], [CopyStep::Tiled(_)]), "{steps:?}");
}

/// Tiles take up to 48 KiB of shared memory only where that leaves fewer remainder slabs.
/// Bytes of a (49, 3, n, 3, 9) copy (the random set's case 106, shortened): within 40 KiB
/// the tiles took 2 of the axis of 3 and left two remainder launches, whose sectors the
/// tiles' writes share; within 48 KiB one launch of whole tiles copies it all.
#[test]
fn tiles_grow_past_40_kib_only_where_that_removes_remainder_slabs() {
    let shape = [49, 3, 50, 3, 9];
    let src = StridedLayout::with_offset(&shape, &[27, 1, 4131, -1377, 3], 1, 2754).unwrap();
    let dst = StridedLayout::with_offset(&shape, &[1, -147, 3969, 49, 441], 1, 294).unwrap();
    let steps = check(&dst, &src, 0, 0).expect("exact");
    let [CopyStep::Tiled(t)] = &steps[..] else {
        panic!("one tiled step: {steps:?}")
    };
    assert!(
        t.shared_bytes() > 40 * 1024 && t.shared_bytes() <= 48 * 1024,
        "{t:?}"
    );
    // A permute of bytes whose 40 KiB tiles leave no remainder keeps them.
    let src = c(&[64, 48, 96], 1).permuted(&[2, 0, 1]).unwrap();
    let steps = check(&c(&[96, 64, 48], 1), &src, 0, 0).expect("exact");
    let [CopyStep::Tiled(t)] = &steps[..] else {
        panic!("one tiled step: {steps:?}")
    };
    assert!(t.shared_bytes() <= 40 * 1024, "{t:?}");
}

/// A remainder slab of few elements runs as one elementwise launch, its own remainders
/// included: the tile kernel's table building and round trips cost more than its
/// scattered sectors. Halfwords of a (63, 15, n) copy (the random set's case 78, its rows
/// shortened): the source every other row, the destination every other element; tiles of
/// 32 along the rows leave a slab of 17 of them (16065 elements), which took tiles of its
/// own before.
#[test]
fn small_remainder_slabs_run_elementwise() {
    let (rows, isz) = (1009i64, 2);
    let shape = [63, 15, rows];
    let src = StridedLayout::with_offset(&shape, &[2 * rows, 126 * rows, 1], isz, 0).unwrap();
    let dst_offset = 2 * 62 + 126 * (rows - 1);
    let dst = StridedLayout::with_offset(&shape, &[-2, 126 * rows, -126], isz, dst_offset).unwrap();
    let steps = check(&dst, &src, 0, 0).expect("exact");
    let [CopyStep::Tiled(t), CopyStep::Elementwise(rest)] = &steps[..] else {
        panic!("whole tiles, then the slab elementwise: {steps:?}")
    };
    assert_eq!(
        t.tiles() as usize * t.volume() + rest.volume,
        63 * 15 * 1009
    );
    assert!(rest.volume > 0 && rest.volume <= 1 << 18, "{rest:?}");
    // 255 rows a plane, not 15: the slab passes 2^18 elements and takes tiles of its own.
    let shape = [63, 255, rows];
    let src = StridedLayout::with_offset(&shape, &[2 * rows, 126 * rows, 1], isz, 0).unwrap();
    let dst = StridedLayout::with_offset(&shape, &[-2, 126 * rows, -126], isz, dst_offset).unwrap();
    let plan = CopyPlan::new(&dst, &src).unwrap();
    let steps = plan.schedule_with_small_copy(0, 0, 0);
    assert!(
        steps.len() > 1 && steps[1..].iter().any(|s| matches!(s, CopyStep::Tiled(_))),
        "{steps:?}"
    );
}

#[test]
fn byte_rows_the_gather_rule_alone_keeps_elementwise_take_tiles() {
    // Reversed rows of 7 bytes (a random set's layout): the gather rule's warps read few
    // sectors, and the run kernel would read each row along contiguous source bytes; tiles
    // copy it 1.48x faster on the H200.
    let shape = [15, 120186, 2, 3, 7];
    let src = StridedLayout::with_offset(&shape, &[84, 1260, -21, -7, -1], 1, 41).unwrap();
    let dst = StridedLayout::with_offset(&shape, &[-42, 1260, 21, -7, 1], 1, 602).unwrap();
    let plan = CopyPlan::new(&dst, &src).unwrap();
    assert!(plan
        .element_runs()
        .is_some_and(|r| r.source_step().is_some()));
    let steps = plan.schedule(0, 0);
    assert!(matches!(steps[0], CopyStep::Tiled(_)), "{steps:?}");
    // Rows gathered across axes (no source step) stay elementwise: planes of bytes read
    // 3 at a time into pixels (another random layout, 0.63x on tiles).
    let shape = [348349, 3, 31, 3];
    let src =
        StridedLayout::with_offset(&shape, &[1, 348349, -1045047, 32396457], 1, 31351410).unwrap();
    let dst = StridedLayout::with_offset(&shape, &[-3, -1045047, 3135141, 1], 1, 3135138).unwrap();
    let plan = CopyPlan::new(&dst, &src).unwrap();
    assert!(plan
        .element_runs()
        .is_some_and(|r| r.source_step().is_none()));
    let steps = plan.schedule(0, 0);
    assert!(matches!(steps[..], [CopyStep::Elementwise(_)]), "{steps:?}");
}
