//! The randomized copy set: the layouts `examples/random_bench.rs` times and
//! `tests/gpu_copy_classes.rs` checks. Self-contained (the example includes this file).
#![allow(dead_code)]

use stridekit::{Order, SliceArg, StridedLayout};

/// A small deterministic generator (xorshift64).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn perm(&mut self, n: usize) -> Vec<i64> {
        let mut p: Vec<i64> = (0..n as i64).collect();
        for i in (1..n).rev() {
            p.swap(i, self.below(i as u64 + 1) as usize);
        }
        p
    }
}

/// The seed of the published set.
pub const SEED: u64 = 0x5eed_2026;

/// One case: source and destination layouts rebased so that their lowest element is at
/// offset 0 of a span of the given bytes.
pub struct Case {
    pub src: StridedLayout,
    pub dst: StridedLayout,
    pub src_bytes: usize,
    pub dst_bytes: usize,
}

/// The slice of an axis that takes `span` elements from `start` with `step`, walking
/// backwards (from the end of that range) for a negative step.
pub fn stepped(start: i64, span: i64, step: i64) -> SliceArg {
    if step > 0 {
        SliceArg::Range {
            start: Some(start),
            stop: Some(start + span),
            step,
        }
    } else {
        SliceArg::Range {
            start: Some(start + span - 1),
            stop: if start == 0 { None } else { Some(start - 1) },
            step,
        }
    }
}

/// A random layout of `shape`: dense in a random axis order inside a padded allocation,
/// sliced with steps and flips; with `bcast`, some axes read one element (stride 0).
fn layout(rng: &mut Rng, shape: &[i64], isz: usize, bcast: bool) -> StridedLayout {
    let nd = shape.len();
    let mut budget = 4i64; // product of |steps|
    let mut steps = vec![1i64; nd];
    let mut pads = vec![0i64; nd];
    let mut b = shape.to_vec();
    for i in 0..nd {
        let s: i64 = [1, 1, 1, 2, -1, -1, -2][rng.below(7) as usize];
        if s.abs() <= budget {
            steps[i] = s;
            budget /= s.abs();
        }
        if shape[i] >= 8 && rng.below(3) == 0 {
            pads[i] = 1 + rng.below(2) as i64;
        }
        if bcast && shape[i] > 1 && rng.below(4) == 0 {
            b[i] = 1;
        }
    }
    let big: Vec<i64> = (0..nd).map(|i| b[i] * steps[i].abs() + pads[i]).collect();
    let base = StridedLayout::dense(&big, isz, Order::Axes(&rng.perm(nd))).expect("valid");
    let slices: Vec<SliceArg> = (0..nd)
        .map(|i| {
            let n = b[i] * steps[i].abs();
            let start = if pads[i] > 0 {
                rng.below(pads[i] as u64 + 1) as i64
            } else {
                0
            };
            stepped(start, n, steps[i])
        })
        .collect();
    let l = base.sliced(&slices).expect("valid slice");
    if bcast {
        l.broadcast_to(shape).expect("broadcast")
    } else {
        l
    }
}

fn rebased(l: &StridedLayout) -> (StridedLayout, usize) {
    let (lo, hi) = l.offset_bounds();
    let bytes = ((hi - lo + 1) as usize) * l.itemsize();
    let r = StridedLayout::with_offset(l.shape(), l.strides(), l.itemsize(), l.slice_offset() - lo)
        .expect("rebased");
    (r, bytes)
}

/// The next case of the set, moving between `min_mib` and `2 * min_mib` MiB of elements:
/// ndim 1-6, itemsize 1-16, odd, tiny and 3-long extents, random axis orders on both sides,
/// steps, flips, padding that breaks alignment, broadcast sources one time in eight.
pub fn next_case(rng: &mut Rng, min_mib: u64) -> Case {
    let nd = 1 + rng.below(6) as usize;
    let isz = [1usize, 2, 4, 8, 16][rng.below(5) as usize];
    let target = (((min_mib << 20) + rng.below((min_mib << 20) + 1)) / isz as u64) as i64;
    let mut shape: Vec<i64> = (0..nd.saturating_sub(1))
        .map(|_| match rng.below(4) {
            0 => 1 + rng.below(3) as i64,        // tiny
            1 => 3,                              // an inner 3 (RGB)
            _ => (2 + rng.below(62) as i64) | 1, // odd
        })
        .collect();
    let prod: i64 = shape.iter().product::<i64>().max(1);
    shape.insert(rng.below(nd as u64) as usize, (target / prod).max(1));
    let bcast = rng.below(8) == 0;
    let (src, src_bytes) = rebased(&layout(rng, &shape, isz, bcast));
    let (dst, dst_bytes) = rebased(&layout(rng, &shape, isz, false));
    Case {
        src,
        dst,
        src_bytes,
        dst_bytes,
    }
}

/// Case numbers from a comma-separated list ("2,16,26"; what does not parse is left out).
pub fn case_numbers(list: &str) -> Vec<usize> {
    list.split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect()
}

/// The published set (seed [`SEED`], 64-128 MiB a case) with each case's number: its 200
/// cases, or those of `wanted` when given (the set is walked in order either way, each
/// case drawn from the cases before it).
pub fn published(wanted: Option<Vec<usize>>) -> impl Iterator<Item = (usize, Case)> {
    let mut rng = Rng(SEED);
    (0..200)
        .map(move |n| (n, next_case(&mut rng, 64)))
        .filter(move |(n, _)| wanted.as_ref().is_none_or(|w| w.contains(n)))
}
