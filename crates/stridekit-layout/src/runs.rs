//! Elementwise byte copies in runs ([`ElementRuns`]): one thread of the elementwise
//! kernel moves a group of 4 consecutive destination bytes of a row, so that one index
//! decomposition serves the whole group and a whole group is one aligned 4-byte store.

use crate::plan::CopyPlan;
use crate::sectors::source_sectors;
use smallvec::SmallVec;

/// One axis of an [`ElementRuns`] row: its extent and its source stride (elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowAxis {
    /// Elements along the axis.
    pub extent: i64,
    /// Source stride along the axis, in elements.
    pub src_stride: i64,
}

/// Groups of [`ElementRuns::vec`] consecutive destination bytes of a row (4, or 16 for
/// gathered rows of [`ElementRuns::WIDE_ROW`] bytes or more), each moved by one thread
/// (`element_runs.cu`): 1-byte elements whose destination is dense along a row of the
/// plan's last axes, and 2-byte elements where the row gathers (a row read along
/// contiguous halfwords keeps one element a thread).
///
/// A row is one axis read forwards or backwards along contiguous source bytes (the
/// kernel steps the source by a compile-time 1 or -1), or up to [`ElementRuns::MAX_ROW_AXES`]
/// axes that are dense in the destination together, at least
/// [`ElementRuns::MIN_GATHERED_ROW`] bytes, read from wherever their source strides lead
/// (the kernel decomposes a group's first column over [`ElementRuns::row`] once and steps
/// through the rest, gathering the group's bytes one load each).
///
/// The row of `len` elements holds [`ElementRuns::groups`] groups; group `g` of a row covers the
/// elements `c0 .. c0 + vec` that lie inside `0 .. len`, where `c0` is
/// [`ElementRuns::first_column`]: groups start on multiples of `vec` in the destination,
/// so a whole group is one aligned store.
///
/// Measured on the H100 (BENCHMARKS.md): bytes reversed along short or long rows gain
/// 1.2-1.4x over one element a thread; wider elements keep one element a thread.
///
/// ```
/// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
/// // 64 rows of 1000 bytes, each reversed (`x[:, ::-1]`): groups of 4 bytes, each one
/// // aligned 4-byte store of the destination.
/// let src = StridedLayout::dense(&[64, 1000], 1, Order::C)?.sliced(s![.., ..;-1])?;
/// let dst = StridedLayout::dense(&[64, 1000], 1, Order::C)?;
/// let runs = CopyPlan::new(&dst, &src)?.element_runs().unwrap();
/// assert_eq!(runs.len, 1000);
/// assert_eq!(runs.groups(), 251); // a row may start anywhere in its first word
/// assert_eq!(runs.source_step(), Some(-1));
///
/// // Pixels of 3 channels written interleaved from 3 planes: one row of 800 pixels
/// // (two axes: pixels, channels), each byte gathered from its plane.
/// let planes = StridedLayout::dense(&[3, 8, 100], 1, Order::C)?.permuted(&[1, 2, 0])?;
/// let pixels = StridedLayout::dense(&[8, 100, 3], 1, Order::C)?;
/// let runs = CopyPlan::new(&pixels, &planes)?.element_runs().unwrap();
/// assert_eq!((runs.len, runs.row.len(), runs.source_step()), (2400, 2, None));
/// assert_eq!(runs.vec, 16); // 16 gathered bytes a group, one 16-byte store
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementRuns {
    /// Elements per row (the product of the row's extents).
    pub len: i64,
    /// Bytes per group: [`ElementRuns::VEC`] or [`ElementRuns::WIDE_VEC`].
    pub vec: usize,
    /// The row's axes, slowest first; together dense in the destination.
    pub row: SmallVec<[RowAxis; 3]>,
    /// The plan the kernel indexes: the axes outside the row, then one axis counting a
    /// row's groups (destination stride 1, source stride the row's last), strides and
    /// offsets in elements, its volume the number of groups.
    pub plan: CopyPlan,
}

impl ElementRuns {
    /// Bytes per group of a row read along contiguous source bytes, or of a short
    /// gathered row.
    pub const VEC: usize = 4;
    /// Bytes per group of a gathered row of [`ElementRuns::WIDE_ROW`] bytes or more: one
    /// index decomposition and one 16-byte store for 16 gathered bytes.
    pub const WIDE_VEC: usize = 16;
    /// The shortest gathered row (bytes) that moves in groups of
    /// [`ElementRuns::WIDE_VEC`].
    pub const WIDE_ROW: i64 = 64;
    /// The most source sectors one warp of gathered 4-byte groups (128 destination
    /// bytes) may read; more, and the copy keeps one element a thread.
    pub const WARP_SECTORS: usize = 16;
    /// The most source sectors one warp of gathered 16-byte groups (512 destination
    /// bytes) may read; more, and the copy keeps one element a thread.
    pub const WIDE_WARP_SECTORS: usize = 56;
    /// The fewest bytes of a gathered copy whose warps' reads are counted: below it the
    /// count (about 2 µs of host time) would cost more than either choice saves on the
    /// GPU, and the groups follow the row's length alone.
    pub const COUNTED_FROM_BYTES: usize = 1 << 20;
    /// The most axes a row gathers from.
    pub const MAX_ROW_AXES: usize = 3;
    /// The shortest row (bytes) whose groups gather from a strided source: shorter rows
    /// would spend most groups on their partly covered edges.
    pub const MIN_GATHERED_ROW: i64 = 16;
    /// The shortest gathered row (bytes) of 2-byte elements: halfwords gather in groups
    /// of [`ElementRuns::WIDE_VEC`] only, from rows this long or from rows of
    /// [`ElementRuns::WIDE_ROW`] bytes that read one source element (a broadcast). One
    /// halfword a thread already moves twice a byte's worth, so shorter rows lose more to
    /// their edges and scattered loads than the shared index decomposition saves
    /// (measured on the H100: rows of 66-86 bytes 0.70-0.98x, 128 bytes and more
    /// 0.99-2.0x; BENCHMARKS.md).
    pub const HALFWORD_ROW: i64 = 128;

    /// Groups per row: the last extent of [`ElementRuns::plan`].
    pub fn groups(&self) -> i64 {
        self.plan.shape[self.plan.ndim() - 1]
    }

    /// The source's step along a row of one axis read along contiguous bytes (1 or -1):
    /// the kernel that steps by a constant. `None`: the kernel gathers along
    /// [`ElementRuns::row`].
    pub fn source_step(&self) -> Option<i64> {
        match self.row.as_slice() {
            [a] if a.src_stride.abs() == 1 => Some(a.src_stride),
            _ => None,
        }
    }

    /// The first column of group `g` of a row whose first destination byte is at
    /// address `row_start`: groups start on multiples of [`ElementRuns::vec`] in the
    /// destination.
    pub fn first_column(&self, g: i64, row_start: u64) -> i64 {
        let isz = self.plan.itemsize as u64;
        g * self.group_elements() - ((row_start % self.vec as u64) / isz) as i64
    }

    /// Elements per group: [`ElementRuns::vec`] bytes of them.
    pub fn group_elements(&self) -> i64 {
        (self.vec / self.plan.itemsize) as i64
    }

    /// The source offset (elements, from the row's first) of column `c` of a row.
    pub fn column_offset(&self, c: i64) -> i64 {
        let mut rem = c;
        let mut off = 0;
        for a in self.row.iter().rev() {
            off += rem % a.extent * a.src_stride;
            rem /= a.extent;
        }
        off
    }
}

impl CopyPlan {
    /// The runs of the elementwise kernel for this plan: 1-byte elements (2-byte ones
    /// where the row gathers) whose last axes are dense in the destination (see
    /// [`ElementRuns`]). `None` when the plan keeps one
    /// element a thread.
    pub fn element_runs(&self) -> Option<ElementRuns> {
        let n = self.ndim();
        if n == 0 || self.volume == 0 || !(self.itemsize == 1 || self.itemsize == 2) {
            return None;
        }
        let last = n - 1;
        let isz = self.itemsize as i64;
        // Halfwords gather only: a row read along contiguous halfwords keeps one element a
        // thread.
        if self.dst_strides[last] != 1 || (isz == 2 && self.src_strides[last].abs() == 1) {
            return None;
        }
        // The row: the last axis alone where the source reads it along contiguous bytes,
        // else the destination's dense last axes (at most MAX_ROW_AXES) until the row
        // holds a few groups.
        let mut first = last;
        let mut len = self.shape[last];
        let wanted = if isz == 2 {
            ElementRuns::HALFWORD_ROW
        } else {
            ElementRuns::WIDE_ROW
        };
        if self.src_strides[last].abs() != 1 {
            while len * isz < wanted
                && first > 0
                && last - first + 1 < ElementRuns::MAX_ROW_AXES
                && self.dst_strides[first - 1] == len
            {
                first -= 1;
                len = len.checked_mul(self.shape[first])?;
            }
            if len * isz < ElementRuns::MIN_GATHERED_ROW || i32::try_from(len).is_err() {
                return None;
            }
        } else if len < ElementRuns::VEC as i64 {
            return None;
        }
        let gathered = self.src_strides[last].abs() != 1;
        let broadcast = self.src_strides[first..].iter().all(|&s| s == 0);
        if isz == 2
            && len * isz < ElementRuns::HALFWORD_ROW
            && !(broadcast && len * isz >= ElementRuns::WIDE_ROW)
        {
            return None;
        }
        let vec = if !gathered {
            ElementRuns::VEC
        } else if len * isz >= ElementRuns::WIDE_ROW {
            if !self.warp_reads_fit(ElementRuns::WIDE_VEC, ElementRuns::WIDE_WARP_SECTORS) {
                return None;
            }
            ElementRuns::WIDE_VEC
        } else {
            if !self.warp_reads_fit(ElementRuns::VEC, ElementRuns::WARP_SECTORS) {
                return None;
            }
            ElementRuns::VEC
        };
        let v = (vec / self.itemsize) as i64;
        let row = (first..n)
            .map(|k| RowAxis {
                extent: self.shape[k],
                src_stride: self.src_strides[k],
            })
            .collect();
        // A row may start anywhere in its first word.
        let groups = len.checked_add(2 * v - 2)? / v;
        let rows = self.volume / usize::try_from(len).ok()?;
        let mut plan = self.clone();
        plan.shape.truncate(first + 1);
        plan.src_strides.truncate(first + 1);
        plan.dst_strides.truncate(first + 1);
        plan.shape[first] = groups;
        plan.src_strides[first] = self.src_strides[last];
        plan.dst_strides[first] = 1;
        plan.volume = rows.checked_mul(usize::try_from(groups).ok()?)?;
        Some(ElementRuns {
            len,
            vec,
            row,
            plan,
        })
    }

    /// Whether one warp of the run kernel in groups of `vec` bytes (32 groups: `32 *
    /// vec` consecutive destination bytes) reads at most `budget` source sectors, at the
    /// copy's start and middle (sectors counted from the source's element 0 as if it sat
    /// on one). Each of the group's loads is one warp instruction spread over all of
    /// them; past the budget, one element a thread reads faster. Copies of fewer than
    /// [`ElementRuns::COUNTED_FROM_BYTES`] are not counted.
    fn warp_reads_fit(&self, vec: usize, budget: usize) -> bool {
        if self.volume < ElementRuns::COUNTED_FROM_BYTES {
            return true;
        }
        let n = 32 * vec / self.itemsize;
        let middle = self.volume / 2 / n * n;
        [0, middle]
            .iter()
            .all(|&first| source_sectors(self, 0, first, n, budget).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Order, StridedLayout};

    /// Replays the kernel's groups over `runs` between byte addresses `dst` and `src`:
    /// every element of `plan` written once from its source, whole groups on aligned
    /// destination words.
    fn replay(plan: &CopyPlan, dst: u64) {
        let runs = plan.element_runs().unwrap();
        let q = &runs.plan;
        let n = q.ndim();
        let v = runs.group_elements();
        let isz = plan.itemsize as i64;
        let mut written = std::collections::HashMap::new();
        for i in 0..q.volume as i64 {
            let (mut rem, mut so, mut d) = (i, q.src_offset, q.dst_offset);
            let mut g = 0;
            for k in (0..n).rev() {
                let j = rem % q.shape[k];
                rem /= q.shape[k];
                if k == n - 1 {
                    g = j;
                } else {
                    so += j * q.src_strides[k];
                    d += j * q.dst_strides[k];
                }
            }
            let c0 = runs.first_column(g, dst.wrapping_add_signed(d * isz));
            let inside: Vec<i64> = (c0..c0 + v).filter(|c| (0..runs.len).contains(c)).collect();
            if inside.len() as i64 == v {
                assert_eq!(
                    dst.wrapping_add_signed((d + c0) * isz) % runs.vec as u64,
                    0,
                    "whole group off its word"
                );
            }
            for c in inside {
                let prev = written.insert(d + c, so + runs.column_offset(c));
                assert!(prev.is_none(), "element at {} written twice", d + c);
            }
        }
        // The reference: every element of the original plan, once.
        let mut want = std::collections::HashMap::new();
        let mut idx = vec![0i64; plan.ndim()];
        for _ in 0..plan.volume {
            let at = |st: &[i64]| (0..plan.ndim()).map(|k| idx[k] * st[k]).sum::<i64>();
            want.insert(
                plan.dst_offset + at(&plan.dst_strides),
                plan.src_offset + at(&plan.src_strides),
            );
            for k in (0..plan.ndim()).rev() {
                idx[k] += 1;
                if idx[k] < plan.shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        assert_eq!(written, want);
    }

    #[test]
    fn groups_cover_every_element_once_at_every_alignment() {
        for len in [4i64, 5, 7, 13, 33] {
            // Rows 3 bytes apart beyond their length, read backwards and forwards.
            let dst = StridedLayout::with_offset(&[5, len], &[len + 3, 1], 1, 0).unwrap();
            let back = StridedLayout::with_offset(&[5, len], &[len + 1, -1], 1, len - 1).unwrap();
            let fwd = StridedLayout::with_offset(&[5, len], &[len + 2, 1], 1, 0).unwrap();
            for src in [&back, &fwd] {
                let plan = CopyPlan::new(&dst, src).unwrap();
                for base in 0..4u64 {
                    replay(&plan, 1000 + base);
                }
            }
        }
    }

    #[test]
    fn gathered_rows_cover_every_element_once_at_every_alignment() {
        // Pixels of 3 channels from planes (a row of two axes), a strided 1-D source, a
        // 3-axis row, and rows with gaps between them in the destination.
        let planes = StridedLayout::dense(&[3, 5, 7], 1, Order::C)
            .unwrap()
            .permuted(&[1, 2, 0])
            .unwrap();
        let pixels = StridedLayout::dense(&[5, 7, 3], 1, Order::C).unwrap();
        let strided = StridedLayout::with_offset(&[4, 20], &[200, 3], 1, 0).unwrap();
        let rows = StridedLayout::with_offset(&[4, 20], &[23, 1], 1, 0).unwrap();
        let cube = StridedLayout::dense(&[2, 3, 2, 5], 1, Order::C)
            .unwrap()
            .permuted(&[0, 3, 2, 1])
            .unwrap();
        let cube_dst = StridedLayout::with_offset(&[2, 5, 2, 3], &[31, 6, 3, 1], 1, 1).unwrap();
        let long = StridedLayout::with_offset(&[3, 70], &[300, -2], 1, 150).unwrap();
        let long_dst = StridedLayout::with_offset(&[3, 70], &[73, 1], 1, 2).unwrap();
        for (dst, src, axes, vec) in [
            (&pixels, &planes, 2, 16),
            (&rows, &strided, 1, 4),
            (&cube_dst, &cube, 3, 4),
            (&long_dst, &long, 1, 16),
        ] {
            let plan = CopyPlan::new(dst, src).unwrap();
            let runs = plan.element_runs().unwrap();
            let got = (runs.row.len(), runs.source_step(), runs.vec);
            assert_eq!(got, (axes, None, vec), "{plan:?}");
            for base in 0..16u64 {
                replay(&plan, 1000 + base);
            }
        }
        // Halfwords: pixels from planes (a row of two axes, 210 bytes), a row of 35
        // broadcast from one element (70 bytes), both in 16-byte groups of 8.
        let h = |shape: &[i64], strides: &[i64], off| {
            StridedLayout::with_offset(shape, strides, 2, off).unwrap()
        };
        let hplanes = h(&[5, 7, 3], &[7, 1, 36], 0);
        let hpixels = h(&[5, 7, 3], &[21, 3, 1], 0);
        let hbroadcast = h(&[4, 35], &[3, 0], 0);
        let hrows = h(&[4, 35], &[37, 1], 1);
        for (dst, src, axes) in [(&hpixels, &hplanes, 2), (&hrows, &hbroadcast, 1)] {
            let plan = CopyPlan::new(dst, src).unwrap();
            let runs = plan.element_runs().unwrap();
            let got = (runs.vec, runs.row.len(), runs.source_step());
            assert_eq!(got, (16, axes, None), "{plan:?}");
            for base in (0..16u64).step_by(2) {
                replay(&plan, 1000 + base);
            }
        }
        // Halfwords keep one element a thread along contiguous source halfwords, and on
        // gathered rows under HALFWORD_ROW bytes that do not broadcast (here 74 bytes).
        let reversed = h(&[4, 10], &[10, -1], 9);
        let dense = h(&[4, 10], &[10, 1], 0);
        let strided = h(&[4, 37], &[100, 2], 0);
        let short_rows = h(&[4, 37], &[38, 1], 0);
        for (dst, src) in [(&dense, &reversed), (&short_rows, &strided)] {
            let plan = CopyPlan::new(dst, src).unwrap();
            assert!(plan.element_runs().is_none(), "{plan:?}");
        }
        // Rows shorter than MIN_GATHERED_ROW, or past 32 bits, keep one element a thread.
        let short = StridedLayout::with_offset(&[40, 15], &[60, 3], 1, 0).unwrap();
        let short_dst = StridedLayout::with_offset(&[40, 15], &[16, 1], 1, 0).unwrap();
        assert!(CopyPlan::new(&short_dst, &short)
            .unwrap()
            .element_runs()
            .is_none());
    }

    #[test]
    fn wider_elements_scattered_reads_and_short_rows_keep_one_element_a_thread() {
        let plan = |shape: &[i64], src_strides: &[i64], isz| {
            let dst = StridedLayout::dense(shape, isz, Order::C).unwrap();
            let off = (shape[0] - 1) * src_strides[0].min(0).abs();
            let src = StridedLayout::with_offset(shape, src_strides, isz, off).unwrap();
            CopyPlan::new(&dst, &src).unwrap()
        };
        assert!(plan(&[100], &[-1], 2).element_runs().is_none());
        assert!(plan(&[3], &[-1], 1).element_runs().is_none());
        let r = plan(&[100], &[-1], 1).element_runs().unwrap();
        assert_eq!((r.len, r.groups()), (100, 26));
        // Every other byte: a warp of 16-byte groups reads 32 sectors (1 KiB); every
        // fourth, 64 (past WIDE_WARP_SECTORS): one element a thread.
        let r = plan(&[1 << 20], &[2], 1).element_runs().unwrap();
        assert_eq!((r.vec, r.source_step()), (16, None));
        assert!(plan(&[1 << 20], &[4], 1).element_runs().is_none());
        // Below COUNTED_FROM_BYTES the row's length alone decides.
        assert_eq!(
            plan(&[4096], &[4], 1).element_runs().map(|r| r.vec),
            Some(16)
        );
        // Short rows: 4-byte groups, unless a warp's 128 bytes read more than 16 sectors.
        let rows = |step: i64| {
            let dst = StridedLayout::with_offset(&[32768, 40], &[48, 1], 1, 0).unwrap();
            let src = StridedLayout::with_offset(&[32768, 40], &[4096, step], 1, 0).unwrap();
            CopyPlan::new(&dst, &src).unwrap().element_runs()
        };
        assert_eq!(rows(2).map(|r| r.vec), Some(4));
        assert!(rows(5).is_none());
    }
}
