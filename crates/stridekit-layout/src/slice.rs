//! Python-style slicing: integer indices and `start:stop:step` ranges, with the [`s!`](crate::s) macro.

use crate::dims::Dims;
use crate::error::{LayoutError, Result};
use crate::layout::StridedLayout;
use std::ops::{Range, RangeFrom, RangeFull, RangeTo};

/// One axis of a slice: an index (which removes the axis) or a range with a step.
///
/// Semantics are Python's: negative indices and bounds count from the end, out-of-range
/// bounds are clamped, a negative step walks backwards from `start` (default: the last
/// element) down to, not including, `stop`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceArg {
    /// Picks one position; the axis disappears.
    Index(i64),
    /// `start:stop:step`; `None` bounds mean "from the beginning/to the end" in the
    /// direction of the step.
    Range {
        /// First position (in the direction of `step`); `None`: the first (or last) one.
        start: Option<i64>,
        /// Position not reached; `None`: past the end (or before the start).
        stop: Option<i64>,
        /// Distance between picked positions; negative walks backwards; never 0.
        step: i64,
    },
}

impl SliceArg {
    /// The whole axis, `..`.
    pub const ALL: SliceArg = SliceArg::Range {
        start: None,
        stop: None,
        step: 1,
    };

    /// A range with an explicit step, as `s![a..b; step]` writes it.
    pub fn stepped(range: impl IntoRangeBounds, step: i64) -> Self {
        let (start, stop) = range.bounds();
        SliceArg::Range { start, stop, step }
    }
}

/// Range types usable as a slice with a step: `a..b`, `a..`, `..b`, `..`.
pub trait IntoRangeBounds {
    /// `(start, stop)`, either open.
    fn bounds(self) -> (Option<i64>, Option<i64>);
}

fn to_i64<T: TryInto<i64>>(v: T, if_too_big: i64) -> i64 {
    v.try_into().unwrap_or(if_too_big)
}

macro_rules! impl_slice_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for SliceArg {
            fn from(i: $t) -> Self {
                SliceArg::Index(to_i64(i, i64::MAX))
            }
        }
        impl IntoRangeBounds for Range<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (Some(to_i64(self.start, i64::MAX)), Some(to_i64(self.end, i64::MAX)))
            }
        }
        impl IntoRangeBounds for RangeFrom<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (Some(to_i64(self.start, i64::MAX)), None)
            }
        }
        impl IntoRangeBounds for RangeTo<$t> {
            fn bounds(self) -> (Option<i64>, Option<i64>) {
                (None, Some(to_i64(self.end, i64::MAX)))
            }
        }
        impl From<Range<$t>> for SliceArg {
            fn from(r: Range<$t>) -> Self { SliceArg::stepped(r, 1) }
        }
        impl From<RangeFrom<$t>> for SliceArg {
            fn from(r: RangeFrom<$t>) -> Self { SliceArg::stepped(r, 1) }
        }
        impl From<RangeTo<$t>> for SliceArg {
            fn from(r: RangeTo<$t>) -> Self { SliceArg::stepped(r, 1) }
        }
    )*};
}
impl_slice_arg!(i32, i64, isize, usize);

impl IntoRangeBounds for RangeFull {
    fn bounds(self) -> (Option<i64>, Option<i64>) {
        (None, None)
    }
}

impl From<RangeFull> for SliceArg {
    fn from(_: RangeFull) -> Self {
        SliceArg::ALL
    }
}

/// Builds a `&[SliceArg]` for [`StridedLayout::sliced`], like ndarray's `s![]` but with
/// Python semantics: `s![1..3, ..;-1, 2]` is Python's `[1:3, ::-1, 2]`.
///
/// ```
/// use stridekit_layout::{s, Order, StridedLayout};
/// let l = StridedLayout::dense(&[4, 6], 4, Order::C)?;
/// let v = l.sliced(s![-1, ..;2])?;
/// assert_eq!((v.shape(), v.strides(), v.slice_offset()), (&[3][..], &[2][..], 18));
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[macro_export]
macro_rules! s {
    (@acc [$($done:expr),*]) => { &[$($done),*] };
    (@acc [$($done:expr),*] $r:expr ; $step:expr , $($rest:tt)*) => {
        $crate::s!(@acc [$($done,)* $crate::SliceArg::stepped($r, $step)] $($rest)*)
    };
    (@acc [$($done:expr),*] $r:expr ; $step:expr) => {
        $crate::s!(@acc [$($done,)* $crate::SliceArg::stepped($r, $step)])
    };
    (@acc [$($done:expr),*] $r:expr , $($rest:tt)*) => {
        $crate::s!(@acc [$($done,)* $crate::SliceArg::from($r)] $($rest)*)
    };
    (@acc [$($done:expr),*] $r:expr) => {
        $crate::s!(@acc [$($done,)* $crate::SliceArg::from($r)])
    };
    ($($t:tt)*) => { $crate::s!(@acc [] $($t)*) };
}

/// Python's `slice.indices(extent)` followed by the length: `(start, step, len)`.
fn resolve_range(start: Option<i64>, stop: Option<i64>, step: i64, extent: i64) -> (i64, i64) {
    let clamp = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v.saturating_add(extent) } else { v };
        v.clamp(lo, hi)
    };
    let (start, stop) = if step > 0 {
        (
            start.map_or(0, |v| clamp(v, 0, extent)),
            stop.map_or(extent, |v| clamp(v, 0, extent)),
        )
    } else {
        (
            start.map_or(extent - 1, |v| clamp(v, -1, extent - 1)),
            stop.map_or(-1, |v| clamp(v, -1, extent - 1)),
        )
    };
    let len = if step > 0 {
        if stop > start {
            (stop - start - 1) / step + 1
        } else {
            0
        }
    } else if start > stop {
        // step < 0; step == i64::MIN still divides correctly as u64 magnitudes.
        ((start - stop - 1) as u64 / step.unsigned_abs() + 1) as i64
    } else {
        0
    };
    (start, len)
}

impl StridedLayout {
    /// Slices with one [`SliceArg`] per leading axis (fewer than `ndim` leave the rest whole).
    /// When a range selects nothing, all strides of the result are 0.
    pub fn sliced(&self, slices: &[SliceArg]) -> Result<Self> {
        if slices.len() > self.ndim() {
            return Err(LayoutError::Slice {
                rule: format!(
                    "{} slices given for a {}-d layout; at most one per axis",
                    slices.len(),
                    self.ndim()
                ),
            });
        }
        let overflow = || LayoutError::Slice {
            rule: "the resulting stride or offset overflows i64".into(),
        };
        let mut shape = Dims::new();
        let mut strides = Dims::new();
        let mut offset = self.slice_offset();
        let mut emptied = false;
        for (axis, (&extent, &stride)) in self.shape().iter().zip(self.strides()).enumerate() {
            let Some(&arg) = slices.get(axis) else {
                shape.push(extent);
                strides.push(stride);
                continue;
            };
            match arg {
                SliceArg::Index(i) => {
                    let pos = if i < 0 { i.saturating_add(extent) } else { i };
                    if !(0..extent).contains(&pos) {
                        return Err(LayoutError::Slice {
                            rule: format!(
                                "index {i} at axis {axis} is out of range for extent {extent}; valid: {}..{extent}",
                                -extent
                            ),
                        });
                    }
                    offset = stride
                        .checked_mul(pos)
                        .and_then(|d| offset.checked_add(d))
                        .ok_or_else(overflow)?;
                }
                SliceArg::Range { start, stop, step } => {
                    if step == 0 {
                        return Err(LayoutError::Slice {
                            rule: format!("step 0 at axis {axis}; a step must be non-zero"),
                        });
                    }
                    let (start, len) = resolve_range(start, stop, step, extent);
                    emptied |= len == 0;
                    if len > 0 {
                        offset = stride
                            .checked_mul(start)
                            .and_then(|d| offset.checked_add(d))
                            .ok_or_else(overflow)?;
                    }
                    shape.push(len);
                    strides.push(stride.checked_mul(step).ok_or_else(overflow)?);
                }
            }
        }
        // A range that selects nothing leaves no element to address: all strides become 0.
        if emptied {
            strides.iter_mut().for_each(|s| *s = 0);
        }
        Self::from_parts(
            crate::error::Op::Slice,
            shape,
            strides,
            self.itemsize(),
            offset,
        )
    }
}
