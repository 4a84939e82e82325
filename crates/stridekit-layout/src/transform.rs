//! Shape transforms that never move data: reshape, permute, flatten, squeeze, unsqueeze, broadcast.

use crate::dims::{
    check_extents, check_ndim, checked_volume, dims_from_fn, normalize_axis, normalize_permutation,
    zeros, Dims,
};
use crate::error::{overflow, LayoutError, Op, Result, Tuple};
use crate::layout::StridedLayout;

/// A set of axes, one bit per axis; see [`StridedLayout::flattened_axis_mask`].
pub type AxisMask = u64;

impl StridedLayout {
    fn derive(&self, op: Op, shape: Dims, strides: Dims, offset: i64) -> Result<Self> {
        Self::from_parts(op, shape, strides, self.itemsize(), offset)
    }

    /// The same elements under another shape, without copying: the new shape must have
    /// the same volume (one extent may be -1, inferred) and the strides must split or
    /// merge in row-major order.
    ///
    /// ```
    /// use stridekit_layout::{Order, StridedLayout};
    /// let l = StridedLayout::dense(&[5, 3, 4], 1, Order::C)?;
    /// assert_eq!(l.reshaped(&[4, -1])?.shape(), &[4, 15]);
    /// assert!(l.permuted(&[2, 0, 1])?.reshaped(&[20, 3]).is_err());
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn reshaped(&self, new_shape: &[i64]) -> Result<Self> {
        check_ndim(Op::Reshape, new_shape.len())?;
        let err_volume = |rule: String| LayoutError::ReshapeVolume {
            from: Tuple::from(self.shape()),
            to: Tuple::from(new_shape),
            rule,
        };
        let mut shape = Dims::from_slice(new_shape);
        let mut infer = None;
        for (i, &e) in new_shape.iter().enumerate() {
            if e == -1 {
                if infer.is_some() {
                    return Err(err_volume("at most one extent may be -1".into()));
                }
                infer = Some(i);
            } else if e < 0 {
                return Err(err_volume(format!(
                    "extent {e} at axis {i} is negative; only -1 (inferred) is allowed"
                )));
            }
        }
        let old_volume = self.volume() as i64;
        if let Some(i) = infer {
            let sub = new_shape
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .try_fold(1i64, |acc, (_, &e)| acc.checked_mul(e))
                .ok_or_else(|| err_volume("the volume overflows i64".into()))?;
            if sub == 0 {
                return Err(err_volume(
                    "the -1 extent is ambiguous when the other extents multiply to 0".into(),
                ));
            }
            if old_volume % sub != 0 {
                return Err(err_volume(format!(
                    "volume {old_volume} is not divisible by the other extents' product {sub}"
                )));
            }
            shape[i] = old_volume / sub;
        }
        let new_volume =
            checked_volume(&shape).ok_or_else(|| err_volume("the volume overflows i64".into()))?;
        if new_volume != old_volume {
            return Err(err_volume(format!(
                "volumes differ ({old_volume} != {new_volume}); they must be equal"
            )));
        }
        if new_volume == 0 {
            let n = shape.len();
            return self.derive(Op::Reshape, shape, zeros(n), self.slice_offset());
        }
        let strides = self.split_merge_strides(&shape)?;
        self.derive(Op::Reshape, shape, strides, self.slice_offset())
    }

    /// Row-major stride matching of a non-empty layout to `shape` of the same volume.
    ///
    /// Old and new axes are cut into the shortest groups of equal volume; the old axes of
    /// a group with extent > 1 must merge, each with the next (`stride[a] == stride[b] *
    /// shape[b]`); extent-1 axes, inside or between groups, are skipped. New extent-1 axes after the last group take the stride
    /// of the old last axis.
    fn split_merge_strides(&self, shape: &[i64]) -> Result<Dims> {
        let (old_e, old_s) = (self.shape(), self.strides());
        let mut strides = zeros(shape.len());
        let (mut oi, mut ni) = (0usize, 0usize);
        loop {
            while oi < old_e.len() && old_e[oi] == 1 {
                oi += 1;
            }
            if ni >= shape.len() || oi >= old_e.len() {
                break;
            }
            let (mut oj, mut nj) = (oi + 1, ni + 1);
            let (mut np, mut op) = (shape[ni], old_e[oi]);
            // Equal, non-zero volumes: the partial products meet before either side runs out.
            while np != op {
                if np < op {
                    np *= shape[nj];
                    nj += 1;
                } else {
                    op *= old_e[oj];
                    oj += 1;
                }
            }
            // Extent-1 axes inside a group are never stepped along: only the axes with
            // extent > 1 must merge, each with the next one.
            let mut prev: Option<usize> = None;
            for k in (oi..oj).filter(|&k| old_e[k] != 1) {
                if let Some(p) = prev {
                    let merged = old_s[k].checked_mul(old_e[k]);
                    if Some(old_s[p]) != merged {
                        // A product past i64 merges with nothing; shown saturated.
                        let merged = merged.unwrap_or(if (old_s[k] < 0) == (old_e[k] < 0) {
                            i64::MAX
                        } else {
                            i64::MIN
                        });
                        return Err(LayoutError::ReshapeIncompatible {
                            from: Tuple::from(old_e),
                            to: Tuple::from(shape),
                            first: p,
                            last: k,
                            stride: old_s[p],
                            merged,
                        });
                    }
                }
                prev = Some(k);
            }
            strides[nj - 1] = old_s[oj - 1];
            for k in (ni + 1..nj).rev() {
                // An extent-1 axis is never stepped along: when the natural stride does
                // not fit, the next one's serves.
                strides[k - 1] = strides[k]
                    .checked_mul(shape[k])
                    .or((shape[k - 1] == 1).then_some(strides[k]))
                    .ok_or_else(|| overflow(Op::Reshape, "a stride of the reshaped layout"))?;
            }
            ni = nj;
            oi = oj;
        }
        let last = old_s.last().copied().unwrap_or(1);
        for s in strides.iter_mut().skip(ni) {
            *s = last;
        }
        Ok(strides)
    }

    /// Reorders the axes: axis `i` of the result is axis `axes[i]` of `self`.
    pub fn permuted(&self, axes: &[i64]) -> Result<Self> {
        let perm = normalize_permutation(Op::Permute, "permutation", axes, self.ndim())?;
        let shape = dims_from_fn(perm.len(), |i| self.shape()[perm[i]]);
        let strides = dims_from_fn(perm.len(), |i| self.strides()[perm[i]]);
        self.derive(Op::Permute, shape, strides, self.slice_offset())
    }

    /// Bit `i` (for `i >= 1`) is set when axis `i` can merge into axis `i - 1`:
    /// `stride[i-1] == stride[i] * shape[i]`. Masks of layouts of equal rank combine with `&`.
    pub fn flattened_axis_mask(&self) -> AxisMask {
        let (sh, st) = (self.shape(), self.strides());
        (1..self.ndim())
            .filter(|&i| st[i].checked_mul(sh[i]) == Some(st[i - 1]))
            .fold(0, |m, i| m | (1u64 << i))
    }

    /// Merges every mergeable pair of neighbouring axes; a 0-d layout becomes shape `(1,)`.
    ///
    /// ```
    /// use stridekit_layout::StridedLayout;
    /// assert_eq!(StridedLayout::new(&[3, 2], &[2, 1], 1)?.flattened_all()?.shape(), &[6]);
    /// assert_eq!(StridedLayout::new(&[3, 2], &[1, 3], 1)?.flattened_all()?.shape(), &[3, 2]);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn flattened_all(&self) -> Result<Self> {
        self.flattened_by_mask(AxisMask::MAX)
    }

    /// Merges mergeable neighbours among axes `start..=end` (negative counts from the end;
    /// both must name an axis); `start >= end` changes nothing. `flattened(0, -1)` is
    /// [`flattened_all`](Self::flattened_all), for 0-d layouts too.
    pub fn flattened(&self, start: i64, end: i64) -> Result<Self> {
        if (start, end) == (0, -1) {
            return self.flattened_all();
        }
        let s = normalize_axis(Op::Flatten, start, self.ndim())?;
        let e = normalize_axis(Op::Flatten, end, self.ndim())?;
        if s >= e {
            return Ok(self.clone());
        }
        let range: AxisMask = ((1u64 << e) | ((1u64 << e) - 1)) & !((1u64 << (s + 1)) - 1);
        self.flattened_by_mask(range)
    }

    /// Merges axis `i` into axis `i - 1` for every bit `i` set both in `mask` and in
    /// [`flattened_axis_mask`](Self::flattened_axis_mask). Bit 0 is ignored.
    ///
    /// ```
    /// use stridekit_layout::{Order, StridedLayout};
    /// let a = StridedLayout::dense(&[4, 5, 3], 4, Order::C)?;
    /// let b = StridedLayout::new(&[4, 5, 3], &[1, 12, 4], 4)?;
    /// let mask = a.flattened_axis_mask() & b.flattened_axis_mask();
    /// assert_eq!(a.flattened_by_mask(mask)?.shape(), b.flattened_by_mask(mask)?.shape());
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn flattened_by_mask(&self, mask: AxisMask) -> Result<Self> {
        if self.ndim() == 0 {
            return self.derive(
                Op::Flatten,
                Dims::from_elem(1, 1),
                Dims::from_elem(1, 1),
                self.slice_offset(),
            );
        }
        let mask = mask & self.flattened_axis_mask();
        let mut shape = Dims::new();
        let mut strides = Dims::new();
        for (i, (&e, &s)) in self.shape().iter().zip(self.strides()).enumerate() {
            if i > 0 && mask & (1u64 << i) != 0 {
                let last = shape.len() - 1;
                shape[last] = shape[last]
                    .checked_mul(e)
                    .ok_or_else(|| overflow(Op::Flatten, "a flattened extent"))?;
                strides[last] = s;
            } else {
                shape.push(e);
                strides.push(s);
            }
        }
        self.derive(Op::Flatten, shape, strides, self.slice_offset())
    }

    /// Removes every extent-1 axis; an empty layout becomes shape `(0,)`, strides `(0,)`.
    pub fn squeezed(&self) -> Self {
        let (shape, strides) = if self.volume() == 0 {
            (zeros(1), zeros(1))
        } else {
            let keep = |i: &usize| self.shape()[*i] != 1;
            (
                (0..self.ndim())
                    .filter(keep)
                    .map(|i| self.shape()[i])
                    .collect(),
                (0..self.ndim())
                    .filter(keep)
                    .map(|i| self.strides()[i])
                    .collect(),
            )
        };
        // Removing axes or zeroing strides of an empty layout cannot widen any offset.
        self.derive(Op::Flatten, shape, strides, self.slice_offset())
            .unwrap_or_else(|_| self.clone())
    }

    /// Inserts extent-1 axes so that they sit at `axes` of the result (each in
    /// `-(ndim+k)..ndim+k` for `k` new axes, no repeats). A new axis takes the stride
    /// `stride * extent` of the original axis after it; at the end, the stride of the last
    /// axis (1 for a 0-d layout).
    pub fn unsqueezed(&self, axes: &[i64]) -> Result<Self> {
        let op = Op::Unsqueeze;
        let n = self.ndim() + axes.len();
        check_ndim(op, n)?;
        let mut is_new = 0u64;
        for &a in axes {
            let ax = normalize_axis(op, a, n)?;
            if is_new & (1u64 << ax) != 0 {
                return Err(LayoutError::DuplicateAxis {
                    op,
                    axis: ax,
                    axes: Tuple::from(axes),
                });
            }
            is_new |= 1u64 << ax;
        }
        let mut shape = Dims::from_elem(1, n);
        let mut strides = zeros(n);
        let mut src = self.ndim();
        let mut fill = self.strides().last().copied().unwrap_or(1);
        for i in (0..n).rev() {
            if is_new & (1u64 << i) != 0 {
                strides[i] = fill;
            } else {
                src -= 1;
                shape[i] = self.shape()[src];
                strides[i] = self.strides()[src];
                fill = self.strides()[src].saturating_mul(self.shape()[src]);
            }
        }
        self.derive(op, shape, strides, self.slice_offset())
    }

    /// Broadcasts to `shape` (same or more axes; aligned from the right, each old extent
    /// must be 1 or equal to the new one). Added and stretched axes get stride 0.
    pub fn broadcast_to(&self, shape: &[i64]) -> Result<Self> {
        check_extents(Op::BroadcastTo, shape)?;
        let err = |rule: String| LayoutError::Broadcast {
            from: Tuple::from(self.shape()),
            to: Tuple::from(shape),
            rule,
        };
        if shape.len() < self.ndim() {
            return Err(err(format!(
                "the target has {} axes, fewer than the layout's {}",
                shape.len(),
                self.ndim()
            )));
        }
        let lead = shape.len() - self.ndim();
        let mut strides = zeros(shape.len());
        for (i, (&e, &s)) in self.shape().iter().zip(self.strides()).enumerate() {
            let target = shape[lead + i];
            if e == target {
                strides[lead + i] = s;
            } else if e != 1 {
                return Err(err(format!(
                    "extent {e} at axis {i} is neither 1 nor the target extent {target}"
                )));
            }
        }
        self.derive(
            Op::BroadcastTo,
            Dims::from_slice(shape),
            strides,
            self.slice_offset(),
        )
    }
}
