//! Reinterpreting a layout with another itemsize: packing or unpacking along one axis.

use crate::dims::{gcd, normalize_axis};
use crate::error::{LayoutError, Op, Result};
use crate::layout::StridedLayout;

/// Options for [`StridedLayout::repacked_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepackOptions {
    /// The address the layout is applied to; when packing it must be aligned to the new itemsize.
    pub data_ptr: u64,
    /// The axis whose extent changes; it must have stride 1. Negative counts from the end.
    pub axis: i64,
    /// When false, an axis whose extent becomes 1 is dropped.
    pub keep_dim: bool,
}

impl Default for RepackOptions {
    fn default() -> Self {
        Self {
            data_ptr: 0,
            axis: -1,
            keep_dim: true,
        }
    }
}

impl StridedLayout {
    /// The same bytes seen with another itemsize, along the last axis; see
    /// [`repacked_with`](Self::repacked_with).
    ///
    /// ```
    /// use stridekit_layout::{Order, StridedLayout};
    /// let l = StridedLayout::dense(&[5, 4], 4, Order::C)?;
    /// assert_eq!(l.repacked(8)?, StridedLayout::dense(&[5, 2], 8, Order::C)?);
    /// assert_eq!(l.repacked(2)?, StridedLayout::dense(&[5, 8], 2, Order::C)?);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn repacked(&self, itemsize: usize) -> Result<Self> {
        self.repacked_with(itemsize, RepackOptions::default())
    }

    /// The same bytes seen with another itemsize. Unpacking (a smaller itemsize, which must
    /// divide the current one) multiplies the extent at `axis` and every other stride by the
    /// ratio; packing (a multiple of the current one) divides them, which requires the
    /// extent, the other strides, the slice offset and `data_ptr` to be divisible. The
    /// axis must have a positive extent and stride 1. The same itemsize returns the layout
    /// unchanged.
    pub fn repacked_with(&self, itemsize: usize, opts: RepackOptions) -> Result<Self> {
        let op = Op::Repack;
        let rule = |rule: String| LayoutError::Repack { op, rule };
        if itemsize == 0 {
            return Err(LayoutError::ZeroItemsize { op, itemsize });
        }
        if itemsize == self.itemsize() {
            return Ok(self.clone());
        }
        let axis = normalize_axis(op, opts.axis, self.ndim())?;
        let extent = self.shape()[axis];
        if extent == 0 {
            return Err(rule(format!(
                "extent at axis {axis} is 0; it must be positive"
            )));
        }
        if self.strides()[axis] != 1 {
            return Err(rule(format!(
                "stride at axis {axis} is {}; it must be 1",
                self.strides()[axis]
            )));
        }
        let old = self.itemsize();
        let mut shape = crate::Dims::from_slice(self.shape());
        let mut strides = crate::Dims::from_slice(self.strides());
        let mut offset = self.slice_offset();
        let too_big = || crate::error::overflow(op, "the repacked layout");
        if itemsize < old {
            if !old.is_multiple_of(itemsize) {
                return Err(rule(format!(
                    "itemsize {itemsize} does not divide the current itemsize {old}; the bytes of one element cannot be split evenly"
                )));
            }
            let f = i64::try_from(old / itemsize).map_err(|_| too_big())?;
            shape[axis] = extent.checked_mul(f).ok_or_else(too_big)?;
            for (i, s) in strides.iter_mut().enumerate() {
                if i != axis {
                    *s = s.checked_mul(f).ok_or_else(too_big)?;
                }
            }
            offset = offset.checked_mul(f).ok_or_else(too_big)?;
        } else if itemsize > old {
            if !itemsize.is_multiple_of(old) {
                return Err(rule(format!(
                    "itemsize {itemsize} is not a multiple of the current itemsize {old}; elements cannot be packed evenly"
                )));
            }
            // A factor beyond i64 cannot divide any extent: the checks below refuse it.
            let f = i64::try_from(itemsize / old).unwrap_or(i64::MAX);
            if extent % f != 0 {
                return Err(rule(format!(
                    "extent {extent} at axis {axis} is not divisible by the packing factor {f}"
                )));
            }
            for (i, &s) in self.strides().iter().enumerate() {
                if i != axis && s % f != 0 {
                    return Err(rule(format!(
                        "stride {s} at axis {i} is not divisible by the packing factor {f}"
                    )));
                }
            }
            if offset % f != 0 {
                return Err(rule(format!(
                    "slice offset {offset} is not divisible by the packing factor {f}"
                )));
            }
            if !opts.data_ptr.is_multiple_of(itemsize as u64) {
                return Err(rule(format!(
                    "data pointer {:#x} is not aligned to the new itemsize {itemsize}",
                    opts.data_ptr
                )));
            }
            shape[axis] = extent / f;
            for (i, s) in strides.iter_mut().enumerate() {
                if i != axis {
                    *s /= f;
                }
            }
            offset /= f;
        }
        if !opts.keep_dim && shape[axis] == 1 {
            shape.remove(axis);
            strides.remove(axis);
        }
        Self::from_parts(op, shape, strides, itemsize, offset)
    }

    /// The largest itemsize up to `max_itemsize` that [`repacked_with`](Self::repacked_with)
    /// accepts along `axis` at `data_ptr`: the greatest common divisor of `max_itemsize`,
    /// the axis's byte extent, the other byte strides, the byte offset and the pointer.
    /// When the axis's stride is not 1 the answer is the current itemsize.
    pub fn max_compatible_itemsize(
        &self,
        max_itemsize: usize,
        data_ptr: u64,
        axis: i64,
    ) -> Result<usize> {
        let op = Op::MaxCompatibleItemsize;
        let rule = |rule: String| LayoutError::Repack { op, rule };
        if max_itemsize == 0 {
            return Err(rule("max_itemsize is 0; it must be positive".into()));
        }
        if max_itemsize < self.itemsize() {
            return Err(rule(format!(
                "max_itemsize {max_itemsize} is below the current itemsize {}",
                self.itemsize()
            )));
        }
        let axis = normalize_axis(op, axis, self.ndim())?;
        // An empty layout cannot be repacked usefully: keep its itemsize, as cuda.core does.
        if self.strides()[axis] != 1 || self.volume() == 0 {
            return Ok(self.itemsize());
        }
        let isz = self.itemsize() as u64;
        let mut g = gcd(max_itemsize as u64, data_ptr);
        g = gcd(g, (self.shape()[axis] as u64).saturating_mul(isz));
        g = gcd(g, self.slice_offset().unsigned_abs().saturating_mul(isz));
        for (i, &s) in self.strides().iter().enumerate() {
            if i != axis {
                g = gcd(g, s.unsigned_abs().saturating_mul(isz));
            }
        }
        Ok(g as usize)
    }
}
