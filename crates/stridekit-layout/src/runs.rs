//! Elementwise copies in runs ([`ElementRuns`]): one thread of the elementwise kernel
//! moves a group of consecutive elements of the plan's last axis (the destination's
//! fastest), so that one index decomposition serves the whole group, and a group lying on
//! an aligned word of a contiguous side moves as that one word.

use crate::plan::CopyPlan;

/// Where the groups of a row start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunAlign {
    /// At the row's first element, then every `vec` elements.
    Row,
    /// On `vec`-element boundaries of the destination's addresses (its last axis is
    /// contiguous): a whole group is one aligned store.
    Destination,
    /// On `vec`-element boundaries of the source's addresses (its last axis is
    /// contiguous): a whole group is one aligned load.
    Source,
}

/// Groups of `vec` consecutive elements along a plan's last axis, each moved by one
/// thread (`element_runs.cu`).
///
/// The row of `len` elements holds `groups` groups; group `g` of a row covers the
/// elements `c0 .. c0 + vec` that lie inside `0 .. len`, where `c0 = g * vec - shift` and
/// `shift` is 0 for [`RunAlign::Row`], else the aligned side's row start address in
/// elements modulo `vec` ([`ElementRuns::first_column`]).
///
/// ```
/// use stridekit_layout::{CopyPlan, Order, RunAlign, StridedLayout};
/// // Every other byte of 64 rows of 1000 (2001 bytes apart) into dense rows: groups of
/// // 4 bytes, each one aligned 4-byte store of the destination.
/// let src = StridedLayout::with_offset(&[64, 1000], &[2001, 2], 1, 0)?;
/// let dst = StridedLayout::dense(&[64, 1000], 1, Order::C)?;
/// let runs = CopyPlan::new(&dst, &src)?.element_runs().unwrap();
/// assert_eq!((runs.vec, runs.align, runs.len), (4, RunAlign::Destination, 1000));
/// assert_eq!(runs.groups, 251); // a row may start anywhere in its first word
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementRuns {
    /// Elements per group: 4 bytes of 1- and 2-byte elements, 8 bytes of 4-byte ones.
    pub vec: usize,
    /// Where a row's groups start.
    pub align: RunAlign,
    /// Elements per row (the plan's last extent).
    pub len: i64,
    /// Groups per row.
    pub groups: i64,
    /// The plan the kernel indexes: the original with its last extent counting groups
    /// (strides and offsets unchanged, in elements) and its volume the number of groups.
    pub plan: CopyPlan,
}

impl ElementRuns {
    /// The first column of group `g` of a row whose aligned side starts at element
    /// address `row_start` (its byte address divided by the itemsize).
    pub fn first_column(&self, g: i64, row_start: u64) -> i64 {
        let shift = match self.align {
            RunAlign::Row => 0,
            _ => (row_start % self.vec as u64) as i64,
        };
        g * self.vec as i64 - shift
    }
}

impl CopyPlan {
    /// The runs of the elementwise kernel for this plan: 1-, 2- and 4-byte elements
    /// whose last axis holds at least a group. `None` when the plan keeps one element a
    /// thread (wider elements, short rows, or a group count past 64-bit sizes).
    pub fn element_runs(&self) -> Option<ElementRuns> {
        let n = self.ndim();
        if n == 0 || self.volume == 0 {
            return None;
        }
        let vec = match self.itemsize {
            1 => 4,
            2 => 2,
            4 => 2,
            _ => return None,
        };
        let last = n - 1;
        let len = self.shape[last];
        if len < vec as i64 {
            return None;
        }
        let align = if self.dst_strides[last] == 1 {
            RunAlign::Destination
        } else if self.src_strides[last] == 1 {
            RunAlign::Source
        } else {
            RunAlign::Row
        };
        let v = vec as i64;
        // A row aligned on one side may start anywhere in its first word.
        let slack = if align == RunAlign::Row { 0 } else { v - 1 };
        let groups = len.checked_add(slack + v - 1)? / v;
        let rows = self.volume / usize::try_from(len).ok()?;
        let mut plan = self.clone();
        plan.shape[last] = groups;
        plan.volume = rows.checked_mul(usize::try_from(groups).ok()?)?;
        Some(ElementRuns {
            vec,
            align,
            len,
            groups,
            plan,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Order, StridedLayout};

    /// Replays the kernel's groups over `runs` between element addresses `dst` and `src`
    /// (byte addresses over the itemsize): every element of `plan` written once from its
    /// source, whole groups on aligned words of the aligned side.
    fn replay(plan: &CopyPlan, dst: u64, src: u64) {
        let runs = plan.element_runs().unwrap();
        let q = &runs.plan;
        let n = q.ndim();
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
            let row_start = match runs.align {
                RunAlign::Source => src.wrapping_add_signed(so),
                _ => dst.wrapping_add_signed(d),
            };
            let c0 = runs.first_column(g, row_start);
            let (ss, ds) = (q.src_strides[n - 1], q.dst_strides[n - 1]);
            let inside: Vec<i64> = (c0..c0 + runs.vec as i64)
                .filter(|c| (0..runs.len).contains(c))
                .collect();
            if inside.len() == runs.vec && runs.align != RunAlign::Row {
                let first = match runs.align {
                    RunAlign::Source => src.wrapping_add_signed(so + c0),
                    _ => dst.wrapping_add_signed(d + c0),
                };
                assert_eq!(first % runs.vec as u64, 0, "whole group off its word");
            }
            for c in inside {
                let prev = written.insert(d + c * ds, so + c * ss);
                assert!(prev.is_none(), "element at {} written twice", d + c * ds);
            }
        }
        // The reference: every element of the original plan, once.
        let mut want = std::collections::HashMap::new();
        let mut idx = vec![0i64; plan.ndim()];
        for _ in 0..plan.volume {
            let d: i64 = plan.dst_offset
                + (0..plan.ndim())
                    .map(|k| idx[k] * plan.dst_strides[k])
                    .sum::<i64>();
            let s: i64 = plan.src_offset
                + (0..plan.ndim())
                    .map(|k| idx[k] * plan.src_strides[k])
                    .sum::<i64>();
            want.insert(d, s);
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
        for isz in [1usize, 2, 4] {
            for len in [2i64, 3, 4, 5, 7, 13, 33] {
                // Destination contiguous (rows 3 elements apart beyond their length),
                // source stepping 3: groups on the destination's words.
                let dst = StridedLayout::with_offset(&[5, len], &[len + 3, 1], isz, 0).unwrap();
                let src = StridedLayout::with_offset(&[5, len], &[1, 5], isz, 0).unwrap();
                // Source contiguous and reversed destination rows.
                let src2 = StridedLayout::with_offset(&[5, len], &[len + 1, 1], isz, 0).unwrap();
                let dst2 = StridedLayout::with_offset(&[5, len], &[2 * len, 2], isz, 0).unwrap();
                // Neither side contiguous.
                let src3 = StridedLayout::with_offset(&[5, len], &[3, 15], isz, 0).unwrap();
                let dst3 = StridedLayout::with_offset(&[5, len], &[2, 10], isz, 0).unwrap();
                for (d, s, align) in [
                    (&dst, &src, RunAlign::Destination),
                    (&dst2, &src2, RunAlign::Source),
                    (&dst3, &src3, RunAlign::Row),
                ] {
                    let plan = CopyPlan::new(d, s).unwrap();
                    let Some(runs) = plan.element_runs() else {
                        assert!(len < 4 / isz.min(2) as i64, "{isz} {len}");
                        continue;
                    };
                    assert_eq!(runs.align, align, "{plan:?}");
                    for base_d in 0..4u64 {
                        for base_s in 0..4u64 {
                            replay(&plan, 1000 + base_d, 2000 + base_s);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn wide_elements_and_short_rows_keep_one_element_a_thread() {
        let dense = |shape: &[i64], isz| StridedLayout::dense(shape, isz, Order::C).unwrap();
        let rev = |shape: &[i64], isz| {
            StridedLayout::with_offset(shape, &[-1], isz, shape[0] - 1).unwrap()
        };
        let plan = |shape: &[i64], isz| CopyPlan::new(&dense(shape, isz), &rev(shape, isz));
        assert!(plan(&[100], 8).unwrap().element_runs().is_none());
        assert!(plan(&[3], 1).unwrap().element_runs().is_none());
        let r = plan(&[100], 1).unwrap().element_runs().unwrap();
        assert_eq!((r.vec, r.align, r.groups), (4, RunAlign::Destination, 26));
    }
}
