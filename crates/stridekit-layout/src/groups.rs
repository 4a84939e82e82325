//! Overlapping copies in independent groups: a copy whose source and destination share
//! memory is split along its last axis into groups (one index of every other axis each)
//! when no two groups touch the same bytes. A group small enough for one thread block's
//! shared memory is then read whole before any of it is written, and the copy equals
//! copying the source out first, with no temporary and in one pass (as `memmove` does).

use crate::plan::CopyPlan;

/// The most bytes one group may hold (it is staged in one block's shared memory).
pub const GROUP_MAX_BYTES: usize = 32 << 10;

impl CopyPlan {
    /// Whether this plan's copy may run in independent groups when its source's first
    /// element lies `delta` bytes after its destination's (negative: before): the groups
    /// are the plan's last axis at each index of the others, each at most
    /// [`GROUP_MAX_BYTES`], the other axes step alike on both sides, and the bytes any two
    /// groups reach (source and destination together) are disjoint.
    ///
    /// ```
    /// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
    /// // x[:, 1:] = x[:, :-1] of a (256, 256) f32 array: each row shifts by one element.
    /// let x = StridedLayout::dense(&[256, 256], 4, Order::C)?;
    /// let (dst, src) = (x.sliced(s![.., 1..])?, x.sliced(s![.., ..-1])?);
    /// let plan = CopyPlan::new(&dst, &src)?;
    /// assert!(plan.overlap_groups(-4));
    /// // Shifting by a whole row, x[1:] = x[:-1]: one run of 255 rows, too large a group.
    /// let plan = CopyPlan::new(&x.sliced(s![1..])?, &x.sliced(s![..-1])?)?;
    /// assert!(!plan.overlap_groups(-1024));
    /// // Rows of a padded array shifted down: each row's source is the row before, which
    /// // another group writes.
    /// let padded = StridedLayout::new(&[256, 200], &[256, 1], 4)?;
    /// let plan = CopyPlan::new(&padded.sliced(s![1..])?, &padded.sliced(s![..-1])?)?;
    /// assert!(!plan.overlap_groups(-1024));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn overlap_groups(&self, delta: i64) -> bool {
        let nd = self.ndim();
        if nd == 0 || self.volume == 0 {
            return false;
        }
        let isz = self.itemsize as i128;
        let l = nd - 1;
        let n = i128::from(self.shape[l]);
        if n * isz > GROUP_MAX_BYTES as i128 {
            return false;
        }
        // Group 0's bytes, from its destination's first element: both sides' runs.
        let reach = |stride: i64, start: i128| {
            let span = i128::from(stride) * (n - 1);
            (start + span.min(0) * isz, start + span.max(0) * isz + isz)
        };
        let (d_lo, d_hi) = reach(self.dst_strides[l], 0);
        let (s_lo, s_hi) = reach(self.src_strides[l], i128::from(delta));
        let mut width = d_hi.max(s_hi) - d_lo.min(s_lo);
        // The other axes step alike on both sides; taken from the smallest step up, each
        // must clear everything the axes before it reach (groups never interleave).
        let mut steps: smallvec::SmallVec<[(i128, i128); 8]> = smallvec::SmallVec::new();
        for k in 0..l {
            if self.shape[k] <= 1 {
                continue;
            }
            if self.src_strides[k] != self.dst_strides[k] {
                return false;
            }
            steps.push((
                i128::from(self.dst_strides[k]).abs() * isz,
                i128::from(self.shape[k]),
            ));
        }
        steps.sort_unstable();
        for (step, extent) in steps {
            if step < width {
                return false;
            }
            width += step * (extent - 1);
        }
        true
    }
}
