//! Kernel parameter blocks, laid out as the CUDA structs in `copy/kernels/`.

use cudarc::driver::DeviceRepr;
use stridekit_layout::{CopyPlan, ElementRuns, TilePlan};

/// Largest rank a kernel parameter block holds (the layout maximum).
pub(super) const MAXD: usize = stridekit_layout::MAX_NDIM;
/// The parameter block of ranks up to this (most copies) is the small one.
pub(super) const SMALLD: usize = 8;

/// The parameter block's array length for a plan of rank `nd`.
pub(super) fn pmax(nd: usize) -> usize {
    if nd <= SMALLD {
        SMALLD
    } else {
        MAXD
    }
}

/// `Params` of `prelude.cu`: a plan's axes with their fast-division constants.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Params<const D: usize> {
    shape: [i64; D],
    src: [i64; D],
    dst: [i64; D],
    n: i64,
    mul: [u32; D],
    sh: [u32; D],
}

// SAFETY: plain C struct matching `Params` in prelude.cu with PMAX = D (64-bit fields, then
// 32-bit arrays of an even length: no padding).
unsafe impl<const D: usize> DeviceRepr for Params<D> {}

impl<const D: usize> Params<D> {
    /// The block for `plan` (rank at most `D`).
    pub(super) fn new(plan: &CopyPlan) -> Self {
        let mut p = Params::<D> {
            shape: [1; D],
            src: [0; D],
            dst: [0; D],
            n: plan.volume as i64,
            mul: [1; D],
            sh: [0; D],
        };
        for k in 0..plan.ndim().min(D) {
            let f = FastDiv::new(u32::try_from(plan.shape[k]).unwrap_or(u32::MAX));
            p.mul[k] = f.mul;
            p.sh[k] = f.shift();
            p.shape[k] = plan.shape[k];
            p.src[k] = plan.src_strides[k];
            p.dst[k] = plan.dst_strides[k];
        }
        p
    }
}

/// `RowAxes` of `element_runs.cu`: the axes of a row whose bytes the run kernel gathers
/// (slowest first), with fast-division constants for its extents.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RowAxes {
    str: [i64; 4],
    step: [i64; 4],
    ext: [i32; 4],
    mul: [u32; 4],
    sh: [u32; 4],
}

// SAFETY: plain C struct matching `RowAxes` in element_runs.cu: two 64-bit arrays, then
// three 4-byte arrays (112 bytes, no padding).
unsafe impl DeviceRepr for RowAxes {}

impl RowAxes {
    /// The block for the row of `runs` (at most 4 axes, extents that fit 32 bits), or
    /// `None` where it does not fit.
    pub(super) fn new(runs: &ElementRuns) -> Option<Self> {
        let mut r = RowAxes {
            str: [0; 4],
            step: [0; 4],
            ext: [1; 4],
            mul: [1; 4],
            sh: [0; 4],
        };
        if runs.row.len() > 4 {
            return None;
        }
        for (k, a) in runs.row.iter().enumerate() {
            r.ext[k] = i32::try_from(a.extent).ok()?;
            let f = FastDiv::new(u32::try_from(a.extent).ok()?);
            r.mul[k] = f.mul;
            r.sh[k] = f.packed_shifts();
            r.str[k] = a.src_stride;
            // From the last column of every axis after k to the next column of k.
            let mut step = a.src_stride;
            for b in &runs.row[k + 1..] {
                step = step.checked_sub(b.extent.checked_sub(1)?.checked_mul(b.src_stride)?)?;
            }
            r.step[k] = step;
        }
        Some(r)
    }
}

/// `TileParams` of `tile_copy.cu`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TileParams {
    src_steps: [i64; 8],
    dst_steps: [i64; 8],
    counts: [u32; 8],
    mul: [u32; 8],
    sh: [u32; 8],
    ext: [i32; 8],
    sstr: [i32; 8],
    dstr: [i32; 8],
    wgt: [i32; 8],
    tmul: [u32; 8],
    tsh: [u32; 8],
    sorder: [i32; 8],
    nt: i32,
    ng: i32,
    vol: i32,
    ntiles: u32,
    data_bytes: i32,
    pos_bytes: i32,
    sbase: i32,
    jbase: i32,
    slot_shift: i32,
    slot_pad: i32,
}

// SAFETY: plain C struct matching `TileParams` in tile_copy.cu: 64-bit arrays first, then
// 4-byte fields only (488 bytes, no padding).
unsafe impl DeviceRepr for TileParams {}

/// The most tiles one tile launch takes. A block steps through its tiles as `t +
/// gridDim.x` in 32-bit arithmetic: below 2^31 tiles (and grids far smaller) that sum
/// never wraps, where a wrapped index would send the block back to its first tiles and
/// round the loop forever. Copies of more tiles run elementwise.
pub(super) const MAX_TILES: u32 = i32::MAX as u32;

impl TileParams {
    /// The block for `t`, or `None` when it does not fit the kernel's 32-bit fields or
    /// holds more than [`MAX_TILES`] tiles (the planner keeps tiles inside the fields;
    /// this guards the conversion).
    pub(super) fn new(t: &TilePlan) -> Option<Self> {
        let (nt, ng) = (t.extents.len(), t.counts.len());
        if nt > 8 || ng > 8 || nt == 0 {
            return None;
        }
        // Shared memory holds the densest padding: a narrower group would overrun it.
        if !(t.densest_slot_shift()..=30).contains(&t.slot_shift) {
            return None;
        }
        let vol = t.volume();
        let mut p = TileParams {
            src_steps: [0; 8],
            dst_steps: [0; 8],
            counts: [1; 8],
            mul: [1; 8],
            sh: [0; 8],
            ext: [1; 8],
            sstr: [0; 8],
            dstr: [0; 8],
            wgt: [0; 8],
            tmul: [1; 8],
            tsh: [0; 8],
            sorder: [0; 8],
            nt: nt as i32,
            ng: ng as i32,
            vol: i32::try_from(vol).ok()?,
            ntiles: u32::try_from(t.tiles()).ok().filter(|&n| n <= MAX_TILES)?,
            data_bytes: i32::try_from(t.image_bytes()).ok()?,
            pos_bytes: i32::try_from(t.slot_table_bytes()).ok()?,
            sbase: 0,
            jbase: 0,
            slot_shift: i32::try_from(t.slot_shift).ok()?,
            slot_pad: i32::try_from(t.slot_pad()).ok()?,
        };
        // Reads walk memory upwards (`TilePlan::read_order`): an axis the source steps
        // backwards along is walked from its far end, its stride and weight negated, the
        // far end's offset and position added once.
        let (mut sbase, mut jbase) = (0i64, 0i64);
        let mut w = 1i64;
        for k in 0..nt {
            let e = t.extents[k];
            p.ext[k] = i32::try_from(e).ok()?;
            // A stride only matters when the tile moves along its axis.
            p.sstr[k] = if e == 1 {
                0
            } else {
                i32::try_from(t.src_strides[k]).ok()?
            };
            p.dstr[k] = if e == 1 {
                0
            } else {
                i32::try_from(t.dst_strides[k]).ok()?
            };
            p.wgt[k] = i32::try_from(w).ok()?;
            if p.sstr[k] < 0 {
                sbase += (e - 1) * i64::from(p.sstr[k]);
                jbase += (e - 1) * w;
                p.sstr[k] = p.sstr[k].checked_neg()?;
                p.wgt[k] = -p.wgt[k];
            }
            let f = FastDiv::new(p.ext[k] as u32);
            p.tmul[k] = f.mul;
            p.tsh[k] = f.packed_shifts();
            w *= e;
            p.sorder[k] = t.src_order[k] as i32;
        }
        p.sbase = i32::try_from(sbase).ok()?;
        p.jbase = i32::try_from(jbase).ok()?;
        for g in 0..ng {
            let n = u32::try_from(t.counts[g]).ok()?;
            let f = FastDiv::new(n);
            p.counts[g] = n;
            p.mul[g] = f.mul;
            p.sh[g] = f.packed_shifts();
            p.src_steps[g] = t.src_steps[g];
            p.dst_steps[g] = t.dst_steps[g];
        }
        Some(p)
    }
}

/// Division of a 32-bit index by a fixed extent `d` as a multiply-high and two shifts
/// (Granlund and Montgomery): `q = (t + ((n - t) >> sh1)) >> sh2` with `t = mulhi(m, n)`,
/// exact for every `n < 2^32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FastDiv {
    mul: u32,
    sh1: u32,
    sh2: u32,
}

impl FastDiv {
    pub(super) fn new(d: u32) -> FastDiv {
        let d = d.max(1);
        let l = if d == 1 {
            0
        } else {
            32 - (d - 1).leading_zeros()
        };
        let m = ((1u128 << 32) * ((1u128 << l) - d as u128)) / d as u128 + 1;
        FastDiv {
            mul: m as u32,
            sh1: l.min(1),
            sh2: l.saturating_sub(1),
        }
    }

    /// The two shifts as the kernels take them: `sh1 | sh2 << 8`.
    fn packed_shifts(self) -> u32 {
        self.sh1 | (self.sh2 << 8)
    }

    /// The one shift of the short form `q = (t + n) >> shift`, exact for every `n < 2^31`
    /// (then `t + n`, with `t <= n`, does not wrap): what the elementwise kernels take
    /// (`div_extent` in prelude.cu), whose 32-bit indices stay below
    /// [`NARROW_INDICES_UP_TO`](super::generic::NARROW_INDICES_UP_TO).
    fn shift(self) -> u32 {
        self.sh1 + self.sh2
    }

    /// What the kernel computes.
    #[cfg(test)]
    fn div(self, n: u32) -> u32 {
        let t = ((self.mul as u64 * n as u64) >> 32) as u32;
        (t + ((n - t) >> self.sh1)) >> self.sh2
    }

    /// What the elementwise kernels compute (indices below 2^31), in 32-bit arithmetic
    /// (a wrapped sum would show as a wrong quotient).
    #[cfg(test)]
    fn div_short(self, n: u32) -> u32 {
        let t = ((self.mul as u64 * n as u64) >> 32) as u32;
        t.wrapping_add(n) >> self.shift()
    }
}
#[cfg(test)]
mod tests {
    use super::{FastDiv, TileParams, MAX_TILES};
    use stridekit_layout::{CopyPlan, CopyStep, StridedLayout};

    /// The tables `tile_copy.cu` builds from a parameter block: for each element in
    /// source order, its source offset within the tile and its destination position.
    fn kernel_read_table(p: &TileParams) -> Vec<(i64, usize)> {
        (0..p.vol as u32)
            .map(|i| {
                let (mut rem, mut so, mut j) = (i, p.sbase as i64, p.jbase as i64);
                for q in 0..p.nt as usize {
                    let k = p.sorder[q] as usize;
                    let e = p.ext[k] as u32;
                    let c = (rem % e) as i64;
                    rem /= e;
                    so += c * p.sstr[k] as i64;
                    j += c * p.wgt[k] as i64;
                }
                (so, j as usize)
            })
            .collect()
    }

    #[test]
    fn tile_tables_walk_backward_axes_as_the_plan_reads_them() {
        // Sources stepping backwards along their fast axes (a reversed interleave of 48
        // streams, a reversed run, a block with backward axes), into dense destinations.
        // (Three streams would not tile: a warp of the elementwise kernel reads them
        // gathered.)
        let cases: [(&[i64], &[i64], i64); 3] = [
            (&[48, 3000], &[-1, -48], 143_999),
            (&[3, 45, 7001], &[315_045, -7001, -1], 315_044),
            (&[64, 40, 9, 20], &[-7200, 1, 800, -40], 63 * 7200 + 19 * 40),
        ];
        let mut flipped = 0;
        for (shape, strides, offset) in cases {
            let src = StridedLayout::with_offset(shape, strides, 1, offset).unwrap();
            let dst = StridedLayout::dense(shape, 1, stridekit_layout::Order::C).unwrap();
            let plan = CopyPlan::new(&dst, &src).unwrap();
            for step in plan.schedule_with_small_copy(1 << 20, 1 << 20, 0) {
                let CopyStep::Tiled(t) = step else { continue };
                let p = TileParams::new(&t).unwrap();
                assert_eq!(kernel_read_table(&p), t.read_order(), "{t:?}");
                flipped += usize::from(p.sbase != 0);
                if strides == [-1, -48] {
                    // The reversed interleave reads whole 16-byte words.
                    assert_eq!(t.read_word, 16, "{t:?}");
                }
            }
        }
        assert!(flipped >= 2, "{flipped} tiles walked a backward axis");
    }

    /// The tile of 4-byte elements of (24, 4096) into its transpose (multi-axis tiles).
    fn transpose_tile() -> stridekit_layout::TilePlan {
        let src = StridedLayout::dense(&[24, 4096], 4, stridekit_layout::Order::C)
            .unwrap()
            .permuted(&[1, 0])
            .unwrap();
        let dst = StridedLayout::dense(&[4096, 24], 4, stridekit_layout::Order::C).unwrap();
        let steps = CopyPlan::new(&dst, &src)
            .unwrap()
            .schedule_with_small_copy(0, 0, 0);
        steps
            .iter()
            .find_map(|s| match s {
                CopyStep::Tiled(t) => Some(stridekit_layout::TilePlan::clone(t)),
                _ => None,
            })
            .expect("a tiled step")
    }

    /// A tile launch of 2^31 tiles or more gets no parameter block (the launch copies it
    /// elementwise): a block's next tile index, `t + gridDim.x` in 32 bits, could wrap and
    /// restart its loop; one tile fewer does.
    #[test]
    fn tile_blocks_refuse_tile_counts_whose_next_index_could_wrap() {
        let mut t = transpose_tile();
        assert!(!t.counts.is_empty(), "{t:?}");
        for k in 1..t.counts.len() {
            t.counts[k] = 1;
        }
        for (tiles, fits) in [
            (MAX_TILES as i64 - 1, true),
            (MAX_TILES as i64, true),
            (MAX_TILES as i64 + 1, false),
            (u32::MAX as i64, false),
        ] {
            t.counts[0] = tiles;
            assert_eq!(t.tiles(), tiles as u64);
            let p = TileParams::new(&t);
            assert_eq!(p.is_some(), fits, "{tiles} tiles");
            if let Some(p) = p {
                assert_eq!(p.ntiles as i64, tiles);
            }
        }
    }

    /// A tile's padding group below its densest would put its image past the shared
    /// memory the launch gives it: such a plan gets no parameter block (the launch copies
    /// it elementwise), one from the densest up does.
    #[test]
    fn tile_blocks_refuse_a_padding_past_shared_memory() {
        let mut t = transpose_tile();
        let densest = t.densest_slot_shift();
        for (shift, fits) in [(densest - 1, false), (densest, true), (densest + 6, true)] {
            t.slot_shift = shift;
            let p = TileParams::new(&t);
            assert_eq!(p.is_some(), fits, "shift {shift}, densest {densest}");
            if let Some(p) = p {
                assert_eq!(
                    (p.slot_shift, p.slot_pad),
                    (shift as i32, t.slot_pad() as i32)
                );
            }
        }
    }

    /// The run kernel's walk along a gathered row (`element_runs.cu`, NI defined): the
    /// first column decomposed over the row's axes, then one `step` per further column.
    /// Every offset it forms is the column's own, and every step is the difference of two
    /// of them, so it fits 32 bits wherever the row's offsets do, however far the
    /// row's strides reach.
    #[test]
    fn row_steps_walk_a_row_as_its_columns_lie() {
        use stridekit_layout::{CopyPlan, Order, StridedLayout};
        let cases = [
            // Planes into pixels; channels 2^28 apart read backwards; a 3-axis row.
            (vec![40, 7, 3], vec![7 * 3 * 2, 1, 40 * 7 + 1]),
            (vec![2, 100, 3], vec![300, 2, -(1 << 28)]),
            (vec![4, 5, 3, 6], vec![1000, 7, 100, -3]),
        ];
        for (shape, strides) in cases {
            let off = shape
                .iter()
                .zip(&strides)
                .map(|(&n, &s): (&i64, &i64)| (n - 1) * (-s).max(0))
                .sum();
            let src = StridedLayout::with_offset(&shape, &strides, 1, off).unwrap();
            let dst = StridedLayout::dense(&shape, 1, Order::C).unwrap();
            let plan = CopyPlan::new(&dst, &src).unwrap();
            let runs = plan.element_runs().unwrap();
            let r = super::RowAxes::new(&runs).unwrap();
            let ni = runs.row.len();
            assert!(ni >= 2, "{runs:?}");
            let reach: i64 = runs
                .row
                .iter()
                .map(|a| (a.extent - 1) * a.src_stride.abs())
                .sum();
            for first in [0, 1, runs.len / 2, runs.len - 1] {
                let mut q = vec![0i64; ni];
                let mut rem = first;
                let mut so = 0i64;
                for k in (0..ni).rev() {
                    q[k] = rem % i64::from(r.ext[k]);
                    rem /= i64::from(r.ext[k]);
                    so += q[k] * r.str[k];
                }
                for c in first..runs.len {
                    assert_eq!(so, runs.column_offset(c), "column {c} of {runs:?}");
                    if c + 1 == runs.len {
                        break;
                    }
                    q[ni - 1] += 1;
                    let mut step = r.step[ni - 1];
                    for k in (1..ni).rev() {
                        if q[k] == i64::from(r.ext[k]) {
                            q[k] = 0;
                            q[k - 1] += 1;
                            step = r.step[k - 1];
                        }
                    }
                    assert!(
                        step.abs() <= reach,
                        "step {step} past the row's reach {reach}"
                    );
                    so += step;
                }
            }
        }
    }

    #[test]
    fn parameter_blocks_match_the_cuda_struct() {
        // shape, src, dst (PMAX x 8 bytes each), n (8), mul and sh (PMAX x 4 each).
        assert_eq!(std::mem::size_of::<super::Params<8>>(), 3 * 64 + 8 + 2 * 32);
        // src/dst steps (2 x 64), counts/mul/sh (3 x 32), seven 4-byte arrays of the tile
        // axes (224), ten scalars.
        assert_eq!(
            std::mem::size_of::<super::TileParams>(),
            128 + 96 + 224 + 40
        );
        assert_eq!(
            std::mem::size_of::<super::Params<64>>(),
            3 * 512 + 8 + 2 * 256
        );
        assert_eq!((super::pmax(1), super::pmax(8), super::pmax(9)), (8, 8, 64));
        // str, step (2 x 32), ext, mul, sh (3 x 16).
        assert_eq!(std::mem::size_of::<super::RowAxes>(), 64 + 48);
    }

    #[test]
    fn fast_division_is_exact() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut divisors: Vec<u32> = (1..=4096).collect();
        divisors.extend([
            65535,
            65536,
            65537,
            1 << 30,
            (1 << 31) - 1,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ]);
        divisors.extend((0..2000).map(|_| next() as u32 | 1));
        for &d in &divisors {
            let f = FastDiv::new(d);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u32::MAX,
                u32::MAX - 1,
                u32::MAX / 2,
            ];
            for n in edges.into_iter().chain((0..200).map(|_| next() as u32)) {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
                // The elementwise kernels' short form, for indices below 2^31 (their
                // extents are at most the volume, below 2^30).
                if n < 1 << 31 && d <= 1 << 30 {
                    assert_eq!(f.div_short(n), n / d, "{n} / {d}, short form");
                }
            }
            let top = (1u32 << 31) - 1;
            for n in [top, top - 1, top - d.min(top), top / 2] {
                if d <= 1 << 30 {
                    assert_eq!(f.div_short(n), n / d, "{n} / {d}, short form");
                }
            }
        }
    }
}
