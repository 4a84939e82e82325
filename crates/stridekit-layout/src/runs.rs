//! Elementwise byte copies in runs ([`ElementRuns`]): one thread of the elementwise
//! kernel moves a group of 4 consecutive bytes of the plan's last axis, so that one index
//! decomposition serves the whole group and a whole group is one aligned 4-byte store.

use crate::plan::CopyPlan;

/// Groups of [`ElementRuns::VEC`] consecutive bytes along a plan's last axis, each moved
/// by one thread (`element_runs.cu`): rows of 1-byte elements that are contiguous in the
/// destination and read forwards or backwards along contiguous source bytes.
///
/// The row of `len` elements holds [`ElementRuns::groups`] groups; group `g` of a row covers the
/// elements `c0 .. c0 + VEC` that lie inside `0 .. len`, where `c0` is
/// [`ElementRuns::first_column`]: groups start on the destination's 4-byte words, so a
/// whole group is one aligned store.
///
/// Measured on the H100 (BENCHMARKS.md): bytes reversed along short or long rows gain
/// 1.2-1.4x over one element a thread; wider elements, strided sources and destinations
/// with gaps lose (the extra sectors each warp touches cost more than the index
/// arithmetic saved), so they keep one element a thread.
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
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementRuns {
    /// Elements per row (the plan's last extent).
    pub len: i64,
    /// The plan the kernel indexes: the original with its last extent counting groups
    /// (strides and offsets unchanged, in elements) and its volume the number of groups.
    pub plan: CopyPlan,
}

impl ElementRuns {
    /// Bytes per group.
    pub const VEC: usize = 4;

    /// Groups per row: the last extent of [`ElementRuns::plan`].
    pub fn groups(&self) -> i64 {
        self.plan.shape[self.plan.ndim() - 1]
    }

    /// The first column of group `g` of a row whose first destination byte is at
    /// address `row_start`: groups start on 4-byte boundaries of the destination.
    pub fn first_column(&self, g: i64, row_start: u64) -> i64 {
        g * Self::VEC as i64 - (row_start % Self::VEC as u64) as i64
    }
}

impl CopyPlan {
    /// The runs of the elementwise kernel for this plan: 1-byte elements whose last axis
    /// is contiguous in the destination, steps 1 or -1 in the source, and holds at least
    /// a group. `None` when the plan keeps one element a thread.
    pub fn element_runs(&self) -> Option<ElementRuns> {
        let n = self.ndim();
        if n == 0 || self.volume == 0 || self.itemsize != 1 {
            return None;
        }
        let last = n - 1;
        let len = self.shape[last];
        let v = ElementRuns::VEC as i64;
        if len < v || self.dst_strides[last] != 1 || self.src_strides[last].abs() != 1 {
            return None;
        }
        // A row may start anywhere in its first word.
        let groups = len.checked_add(2 * v - 2)? / v;
        let rows = self.volume / usize::try_from(len).ok()?;
        let mut plan = self.clone();
        plan.shape[last] = groups;
        plan.volume = rows.checked_mul(usize::try_from(groups).ok()?)?;
        Some(ElementRuns { len, plan })
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
        let v = ElementRuns::VEC as i64;
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
            let c0 = runs.first_column(g, dst.wrapping_add_signed(d));
            let ss = q.src_strides[n - 1];
            let inside: Vec<i64> = (c0..c0 + v).filter(|c| (0..runs.len).contains(c)).collect();
            if inside.len() == ElementRuns::VEC {
                assert_eq!(
                    dst.wrapping_add_signed(d + c0) % 4,
                    0,
                    "whole group off its word"
                );
            }
            for c in inside {
                let prev = written.insert(d + c, so + c * ss);
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
    fn wider_elements_strided_sides_and_short_rows_keep_one_element_a_thread() {
        let plan = |shape: &[i64], src_strides: &[i64], isz| {
            let dst = StridedLayout::dense(shape, isz, Order::C).unwrap();
            let off = (shape[0] - 1) * src_strides[0].min(0).abs();
            let src = StridedLayout::with_offset(shape, src_strides, isz, off).unwrap();
            CopyPlan::new(&dst, &src).unwrap()
        };
        assert!(plan(&[100], &[-1], 2).element_runs().is_none());
        assert!(plan(&[100], &[3], 1).element_runs().is_none());
        assert!(plan(&[3], &[-1], 1).element_runs().is_none());
        let r = plan(&[100], &[-1], 1).element_runs().unwrap();
        assert_eq!((r.len, r.groups()), (100, 26));
    }
}
