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

/// An overlapping copy of one run (both sides contiguous, the source `delta` bytes from
/// the destination) in chunks of at most [`GROUP_MAX_BYTES`] taken in a safe order: every
/// chunk is read whole before it is written, and writes only once the chunks whose
/// sources its destination overlaps have been read. Those chunks come earlier in the
/// order (ascending when the source lies above the destination, descending below), so a
/// chunk only ever waits for chunks begun before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderedChunks {
    /// Bytes in the run.
    pub bytes: i64,
    /// Bytes per chunk (the last one may hold fewer).
    pub chunk: i64,
    /// Number of chunks.
    pub chunks: i64,
    /// The source's distance from the destination, in bytes (never 0).
    pub delta: i64,
}

impl OrderedChunks {
    /// Whether chunks are taken from the lowest address up.
    pub fn ascending(&self) -> bool {
        self.delta > 0
    }

    /// The chunk taken `ticket`-th.
    pub fn chunk_of_ticket(&self, ticket: i64) -> i64 {
        if self.ascending() {
            ticket
        } else {
            self.chunks - 1 - ticket
        }
    }

    /// The chunks whose sources chunk `m`'s destination overlaps, other than `m`, as an
    /// inclusive range (empty when `lo > hi`): chunk `j` reads
    /// `[j * chunk + delta, (j + 1) * chunk + delta)` (counted from the destination's
    /// first byte; a shorter last chunk reads less, which the range may over-cover) and
    /// `m` writes `[m * chunk, min((m + 1) * chunk, bytes))`.
    pub fn waits(&self, m: i64) -> (i64, i64) {
        let (c, d) = (self.chunk, self.delta);
        let end = ((m + 1) * c).min(self.bytes);
        // Smallest j with (j + 1) * c + d > m * c; largest j with j * c + d < end.
        let lo = (m * c - d).div_euclid(c);
        let hi = (end - d - 1).div_euclid(c);
        let (lo, hi) = (lo.max(0), hi.min(self.chunks - 1));
        // Chunk m itself is read before it is written by its own block.
        match (lo == m, hi == m) {
            (true, true) => (1, 0),
            (true, false) => (m + 1, hi),
            (false, true) => (lo, m - 1),
            (false, false) => (lo, hi),
        }
    }
}

impl CopyPlan {
    /// The ordered chunks of an overlapping copy of one run whose source lies `delta`
    /// bytes from its destination, where the plan is one contiguous run on both sides
    /// (`x[1:] = x[:-1]` of a contiguous array, say).
    ///
    /// ```
    /// use stridekit_layout::{s, CopyPlan, Order, StridedLayout};
    /// let x = StridedLayout::dense(&[256, 256], 4, Order::C)?;
    /// let plan = CopyPlan::new(&x.sliced(s![1..])?, &x.sliced(s![..-1])?)?;
    /// let o = plan.ordered_chunks(-1024).unwrap();
    /// assert!(!o.ascending()); // the source lies below: chunks from the top down
    /// // Each chunk's destination overlaps its own source and the chunk above's (read
    /// // first); the top chunk waits for none.
    /// assert_eq!(o.chunks, 8);
    /// assert_eq!(o.waits(6), (7, 7));
    /// assert_eq!(o.waits(7), (1, 0));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn ordered_chunks(&self, delta: i64) -> Option<OrderedChunks> {
        if self.ndim() != 1 || self.volume == 0 || delta == 0 {
            return None;
        }
        if self.src_strides[0] != 1 || self.dst_strides[0] != 1 {
            return None;
        }
        let isz = i64::try_from(self.itemsize).ok()?;
        let bytes = i64::try_from(self.volume).ok()?.checked_mul(isz)?;
        // Whole elements a chunk, at most GROUP_MAX_BYTES.
        let chunk = (GROUP_MAX_BYTES as i64 / isz).max(1) * isz;
        Some(OrderedChunks {
            bytes,
            chunk,
            chunks: (bytes + chunk - 1) / chunk,
            delta,
        })
    }
}
