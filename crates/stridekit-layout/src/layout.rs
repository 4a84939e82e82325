//! The `StridedLayout` value type: construction, queries and formatting.

use crate::dims::{
    check_extents, checked_volume, dims_from_fn, normalize_permutation, zeros, Dims,
};
use crate::error::{overflow, LayoutError, Op, Result};
use smallvec::SmallVec;
use std::fmt;

/// The order in which dense strides are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order<'a> {
    /// Keep the relative order of the source layout's strides (see [`StridedLayout::stride_order`]).
    /// Only meaningful where a source layout exists ([`StridedLayout::to_dense`]);
    /// [`StridedLayout::dense`] treats it as C.
    K,
    /// Row-major: the last axis has stride 1.
    C,
    /// Column-major: the first axis has stride 1.
    F,
    /// A permutation of the axes, outermost first: the last axis named has stride 1.
    /// Negative entries count from the end.
    Axes(&'a [i64]),
}

/// The shape, strides (in elements), itemsize (in bytes) and slice offset (in elements)
/// of a strided tensor.
///
/// A layout is an immutable value: every transform returns a new one. Construction checks
/// that every element's byte offset fits in an `i64`, so no query can overflow afterwards.
///
/// ```
/// use stridekit_layout::{s, Order, StridedLayout};
///
/// let l = StridedLayout::dense(&[5, 3, 4], 2, Order::C)?;
/// assert_eq!(l.strides(), &[12, 4, 1]);
/// let t = l.permuted(&[2, 0, 1])?;
/// assert_eq!(t.shape(), &[4, 5, 3]);
/// let v = l.sliced(s![1..3, ..;-1, 2])?;
/// assert_eq!((v.shape(), v.strides(), v.slice_offset()), (&[2, 3][..], &[12, -4][..], 22));
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(PartialEq, Eq, Hash)]
pub struct StridedLayout {
    shape: Dims,
    strides: Dims,
    itemsize: usize,
    slice_offset: i64,
    // Derived at construction, where they are checked for overflow.
    volume: i64,
    min_offset: i64,
    max_offset: i64,
}

/// What [`StridedLayout::with_offset`] checks of its arguments before the layout's own
/// checks: extents (none negative, a valid rank) and one stride an axis.
fn check_new_parts(shape: &[i64], strides: &[i64]) -> Result<()> {
    check_extents(Op::New, shape)?;
    if strides.len() != shape.len() {
        return Err(LayoutError::LengthMismatch {
            op: Op::New,
            what: "strides",
            expected: shape.len(),
            got: strides.len(),
        });
    }
    Ok(())
}

/// The checks every layout passes (`from_parts`): the itemsize, the volume, and that every
/// byte offset (and one past the last) fits in i64. Returns the volume and the lowest and
/// highest element offsets (`(0, 0, -1)` when empty).
fn range(
    op: Op,
    shape: &[i64],
    strides: &[i64],
    itemsize: usize,
    slice_offset: i64,
) -> Result<(i64, i64, i64)> {
    if itemsize == 0 {
        return Err(LayoutError::ZeroItemsize { op, itemsize });
    }
    let isz = i64::try_from(itemsize).map_err(|_| overflow(op, "itemsize"))?;
    let volume = checked_volume(shape).ok_or_else(|| overflow(op, "the volume"))?;
    let (mut lo, mut hi) = (slice_offset, slice_offset);
    for (axis, (&e, &s)) in shape.iter().zip(strides).enumerate() {
        if s.checked_mul(isz).is_none() {
            return Err(overflow(op, format!("stride {s} at axis {axis} in bytes")));
        }
        if e == 0 {
            continue;
        }
        let span = s
            .checked_mul(e - 1)
            .ok_or_else(|| overflow(op, format!("stride {s} times extent {e} at axis {axis}")))?;
        let acc = if span < 0 { &mut lo } else { &mut hi };
        *acc = acc
            .checked_add(span)
            .ok_or_else(|| overflow(op, "the offset range"))?;
    }
    let (min_offset, max_offset) = if volume == 0 { (0, -1) } else { (lo, hi) };
    for v in [slice_offset, min_offset, max_offset] {
        if v.checked_mul(isz)
            .and_then(|b| b.checked_add(isz))
            .is_none()
        {
            return Err(overflow(op, format!("offset {v} in bytes")));
        }
    }
    Ok((volume, min_offset, max_offset))
}

/// The first byte offset and the byte count of the elements of a layout whose volume and
/// lowest and highest element offsets are these ([`StridedLayout::offset_range`] checked
/// them): `(0, 0)` when empty; the count saturates (no memory is that large).
pub fn byte_span_of(
    volume: usize,
    min_offset: i64,
    max_offset: i64,
    itemsize: usize,
) -> (i64, usize) {
    if volume == 0 {
        return (0, 0);
    }
    // Checked at construction: every byte offset, and one past the last, fits in i64;
    // their distance may not.
    let isz = itemsize as i128;
    let bytes = (i128::from(max_offset) - i128::from(min_offset) + 1) * isz;
    (
        min_offset * isz as i64,
        usize::try_from(bytes).unwrap_or(usize::MAX),
    )
}

impl StridedLayout {
    /// A layout from extents, strides in elements, and the itemsize in bytes.
    ///
    /// Rejects more than 64 dimensions, negative extents, a strides slice of another
    /// length, a zero itemsize, and layouts whose byte offsets overflow `i64`.
    pub fn new(shape: &[i64], strides: &[i64], itemsize: usize) -> Result<Self> {
        Self::with_offset(shape, strides, itemsize, 0)
    }

    /// Like [`new`](Self::new), with the offset (in elements) of the element at index `(0,..,0)`.
    pub fn with_offset(
        shape: &[i64],
        strides: &[i64],
        itemsize: usize,
        slice_offset: i64,
    ) -> Result<Self> {
        check_new_parts(shape, strides)?;
        Self::from_parts(
            Op::New,
            Dims::from_slice(shape),
            Dims::from_slice(strides),
            itemsize,
            slice_offset,
        )
    }

    /// A layout from strides given in bytes, each of which must be a multiple of `itemsize`.
    pub fn from_byte_strides(shape: &[i64], byte_strides: &[i64], itemsize: usize) -> Result<Self> {
        let op = Op::FromByteStrides;
        check_extents(op, shape)?;
        if itemsize == 0 {
            return Err(LayoutError::ZeroItemsize { op, itemsize });
        }
        if byte_strides.len() != shape.len() {
            return Err(LayoutError::LengthMismatch {
                op,
                what: "strides",
                expected: shape.len(),
                got: byte_strides.len(),
            });
        }
        let isz = i64::try_from(itemsize).map_err(|_| overflow(op, "itemsize"))?;
        let mut strides = Dims::with_capacity(shape.len());
        for (axis, &b) in byte_strides.iter().enumerate() {
            if b % isz != 0 {
                return Err(LayoutError::StrideNotMultipleOfItemsize {
                    op,
                    axis,
                    stride: b,
                    itemsize,
                });
            }
            strides.push(b / isz);
        }
        Self::from_parts(op, Dims::from_slice(shape), strides, itemsize, 0)
    }

    /// A dense layout (no gaps, no offset) with strides in the given order.
    ///
    /// ```
    /// use stridekit_layout::{Order, StridedLayout};
    /// let l = StridedLayout::dense(&[5, 3, 7], 1, Order::Axes(&[2, 0, 1]))?;
    /// assert_eq!(l.strides(), &[3, 1, 15]);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn dense(shape: &[i64], itemsize: usize, order: Order<'_>) -> Result<Self> {
        let op = Op::Dense;
        check_extents(op, shape)?;
        let ndim = shape.len();
        let axes: SmallVec<[usize; 8]> = match order {
            Order::C | Order::K => (0..ndim).collect(),
            Order::F => (0..ndim).rev().collect(),
            Order::Axes(p) => normalize_permutation(op, "stride order", p, ndim)?,
        };
        let mut strides = zeros(ndim);
        let mut next = 1i64;
        for &ax in axes.iter().rev() {
            strides[ax] = next;
            next = next.saturating_mul(shape[ax]);
        }
        match checked_volume(shape) {
            None => return Err(overflow(op, "the volume")),
            Some(0) => strides.iter_mut().for_each(|s| *s = 0),
            Some(_) => {}
        }
        Self::from_parts(op, Dims::from_slice(shape), strides, itemsize, 0)
    }

    /// A dense layout with the shape and itemsize of `other`, strides in the given order
    /// (`Order::K` keeps `other`'s stride order), and no slice offset.
    ///
    /// A layout that already is dense in the requested `K`, `C` or `F` order is returned as
    /// it is (the strides of its extent-1 axes included); an explicit permutation always
    /// recomputes the strides.
    pub fn dense_like(other: &StridedLayout, order: Order<'_>) -> Result<Self> {
        let dense_already = other.slice_offset == 0
            && match order {
                Order::K => other.is_contiguous_any(),
                Order::C => other.is_contiguous_c(),
                Order::F => other.is_contiguous_f(),
                Order::Axes(_) => false,
            };
        if dense_already {
            return Ok(other.clone());
        }
        match order {
            Order::K => {
                let axes: SmallVec<[i64; 8]> =
                    other.stride_order().iter().map(|&a| a as i64).collect();
                Self::dense(&other.shape, other.itemsize, Order::Axes(&axes))
            }
            _ => Self::dense(&other.shape, other.itemsize, order),
        }
    }

    /// A dense layout with this shape and itemsize; see [`dense_like`](Self::dense_like).
    pub fn to_dense(&self, order: Order<'_>) -> Result<Self> {
        Self::dense_like(self, order)
    }

    /// The checks [`with_offset`](Self::with_offset) makes, without making the layout:
    /// the volume and the lowest and highest element offsets the parts reach (`(0, 0, -1)`
    /// when empty). For callers that only need to know a layout is valid and where it
    /// reaches (a foreign tensor's description, say), at no cost of building it.
    ///
    /// ```
    /// use stridekit_layout::StridedLayout;
    /// let (volume, lo, hi) = StridedLayout::offset_range(&[3, 4], &[-4, 1], 2, 8)?;
    /// assert_eq!((volume, lo, hi), (12, 0, 11));
    /// let l = StridedLayout::with_offset(&[3, 4], &[-4, 1], 2, 8)?;
    /// assert_eq!((l.min_offset(), l.max_offset()), (lo, hi));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn offset_range(
        shape: &[i64],
        strides: &[i64],
        itemsize: usize,
        slice_offset: i64,
    ) -> Result<(usize, i64, i64)> {
        check_new_parts(shape, strides)?;
        // The volume is a product of non-negative extents.
        range(Op::New, shape, strides, itemsize, slice_offset)
            .map(|(v, lo, hi)| (v as usize, lo, hi))
    }

    /// The one place layouts are made: checks the itemsize and that every byte offset fits.
    pub(crate) fn from_parts(
        op: Op,
        shape: Dims,
        strides: Dims,
        itemsize: usize,
        slice_offset: i64,
    ) -> Result<Self> {
        let (volume, min_offset, max_offset) = range(op, &shape, &strides, itemsize, slice_offset)?;
        Ok(Self {
            shape,
            strides,
            itemsize,
            slice_offset,
            volume,
            min_offset,
            max_offset,
        })
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The extents.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// The strides, in bytes.
    pub fn strides_in_bytes(&self) -> Dims {
        // Checked at construction: stride * itemsize fits in i64.
        let isz = self.itemsize as i64;
        dims_from_fn(self.ndim(), |i| self.strides[i] * isz)
    }

    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// The number of elements.
    pub fn volume(&self) -> usize {
        self.volume as usize
    }

    /// The offset, in elements, of the element at index `(0,..,0)`.
    pub fn slice_offset(&self) -> i64 {
        self.slice_offset
    }

    /// The offset, in bytes, of the element at index `(0,..,0)`.
    pub fn slice_offset_in_bytes(&self) -> i64 {
        self.slice_offset * self.itemsize as i64
    }

    /// `(min_offset, max_offset)` in elements over all elements; `(0, -1)` when empty.
    pub fn offset_bounds(&self) -> (i64, i64) {
        (self.min_offset, self.max_offset)
    }

    /// The smallest element offset reached; 0 when empty.
    pub fn min_offset(&self) -> i64 {
        self.min_offset
    }

    /// The largest element offset reached; -1 when empty.
    pub fn max_offset(&self) -> i64 {
        self.max_offset
    }

    /// The bytes the elements occupy: the byte offset of the lowest (relative to element
    /// offset 0, negative when strides reach below it) and the bytes from there to the
    /// end of the highest; `(0, 0)` when empty.
    ///
    /// ```
    /// use stridekit_layout::{s, Order, StridedLayout};
    /// let l = StridedLayout::dense(&[3, 4], 2, Order::C)?.sliced(s![..;-1])?;
    /// assert_eq!(l.byte_span(), (0, 24));
    /// let moved = StridedLayout::new(&[4], &[-1], 2)?;      // offsets 0, -1, -2, -3
    /// assert_eq!(moved.byte_span(), (-6, 8));
    /// assert_eq!(moved.rebased()?.slice_offset(), 3);
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn byte_span(&self) -> (i64, usize) {
        byte_span_of(
            self.volume as usize,
            self.min_offset,
            self.max_offset,
            self.itemsize,
        )
    }

    /// The same layout moved so that its lowest element sits at offset 0 (the layout of
    /// its elements in a buffer that starts at the lowest one).
    pub fn rebased(&self) -> Result<StridedLayout> {
        if self.min_offset == 0 {
            return Ok(self.clone()); // already there (every checked value stays as it is)
        }
        let offset = self
            .slice_offset
            .checked_sub(self.min_offset)
            .ok_or_else(|| crate::error::overflow(Op::New, "the rebased slice offset"))?;
        StridedLayout::with_offset(self.shape(), self.strides(), self.itemsize, offset)
    }

    /// [`rebased`](Self::rebased) in place: the layout itself when it is already there,
    /// else its offsets moved (no extents or strides copied).
    ///
    /// ```
    /// use stridekit_layout::{Order, StridedLayout, s};
    /// let flipped = StridedLayout::dense(&[4], 2, Order::C)?.sliced(s![..;-1])?;
    /// assert_eq!(flipped.clone().into_rebased()?, flipped.rebased()?);
    /// assert_eq!(flipped.into_rebased()?.byte_span(), (0, 8));
    /// # Ok::<(), stridekit_layout::LayoutError>(())
    /// ```
    pub fn into_rebased(mut self) -> Result<StridedLayout> {
        if self.min_offset == 0 {
            return Ok(self);
        }
        let over = || crate::error::overflow(Op::New, "the rebased slice offset");
        let isz = self.itemsize as i64; // checked at construction
        let slice_offset = self
            .slice_offset
            .checked_sub(self.min_offset)
            .ok_or_else(over)?;
        let max_offset = self
            .max_offset
            .checked_sub(self.min_offset)
            .ok_or_else(over)?;
        // As construction checks: every byte offset, and one past it, fits in i64.
        for v in [slice_offset, max_offset] {
            if v.checked_mul(isz)
                .and_then(|b| b.checked_add(isz))
                .is_none()
            {
                return Err(overflow(Op::New, format!("offset {v} in bytes")));
            }
        }
        self.slice_offset = slice_offset;
        self.max_offset = max_offset;
        self.min_offset = 0;
        Ok(self)
    }

    /// Bytes an allocation needs so that every element falls inside it:
    /// `(max_offset + 1) * itemsize`. Fails when `min_offset < 0`.
    pub fn required_size_in_bytes(&self) -> Result<usize> {
        if self.min_offset < 0 {
            return Err(LayoutError::NegativeMinOffset {
                min_offset: self.min_offset,
            });
        }
        // Checked at construction: (max_offset + 1) * itemsize fits in i64.
        Ok(((self.max_offset + 1) * self.itemsize as i64) as usize)
    }

    /// The axes ordered from the largest to the smallest absolute stride (ties: larger
    /// extent first, then lower axis). `dense(shape, _, Axes(stride_order))` reproduces the
    /// order of a dense layout.
    pub fn stride_order(&self) -> SmallVec<[usize; 8]> {
        let mut axes: SmallVec<[usize; 8]> = (0..self.ndim()).collect();
        let key = |a: usize| (self.strides[a].unsigned_abs(), self.shape[a]);
        // Stable sort by descending key; insertion sort is fastest at these sizes.
        for i in 1..axes.len() {
            let mut j = i;
            while j > 0 && key(axes[j - 1]) < key(axes[j]) {
                axes.swap(j - 1, j);
                j -= 1;
            }
        }
        axes
    }

    /// True when no two elements share an offset, as far as a cheap check can tell:
    /// layouts made from dense ones by the transforms here always answer true; some
    /// hand-made unique layouts answer false.
    pub fn is_unique(&self) -> bool {
        if self.volume == 0 {
            return true;
        }
        // Walking from the smallest stride up, each stride must step past every offset
        // the smaller-stride axes can reach.
        let mut reach = 0u64;
        for &ax in self.stride_order().iter().rev() {
            let e = self.shape[ax];
            if e == 1 {
                continue;
            }
            let s = self.strides[ax].unsigned_abs();
            if s <= reach || s == 0 {
                return false;
            }
            // Fits: |stride| * (extent - 1) was checked at construction.
            reach = reach.saturating_add(s * (e as u64 - 1));
        }
        true
    }

    fn contiguous_in(&self, axes: impl Iterator<Item = usize>) -> bool {
        if self.volume == 0 {
            return true;
        }
        let mut expected = 1i64;
        for ax in axes {
            let e = self.shape[ax];
            if e == 1 {
                continue;
            }
            if self.strides[ax] != expected {
                return false;
            }
            expected *= e;
        }
        true
    }

    /// Row-major contiguous: ignoring extent-1 axes, the last stride is 1 and each
    /// stride is the next one times its extent.
    pub fn is_contiguous_c(&self) -> bool {
        self.contiguous_in((0..self.ndim()).rev())
    }

    /// Column-major contiguous.
    pub fn is_contiguous_f(&self) -> bool {
        self.contiguous_in(0..self.ndim())
    }

    /// Contiguous in some axis order: elements map 1-to-1 onto a gap-free offset range.
    pub fn is_contiguous_any(&self) -> bool {
        self.contiguous_in(self.stride_order().into_iter().rev())
    }

    /// Contiguous in some order and with no slice offset: elements map onto `0..volume`.
    pub fn is_dense(&self) -> bool {
        self.slice_offset == 0 && self.is_contiguous_any()
    }
}

impl Clone for StridedLayout {
    // SmallVec's own clone goes element by element; a slice copy is several times faster.
    fn clone(&self) -> Self {
        Self {
            shape: Dims::from_slice(&self.shape),
            strides: Dims::from_slice(&self.strides),
            ..*self
        }
    }
}

impl fmt::Display for StridedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::error::Tuple;
        write!(
            f,
            "StridedLayout(shape={}, strides={}, itemsize={}, offset={})",
            Tuple(self.shape.to_vec()),
            Tuple(self.strides.to_vec()),
            self.itemsize,
            self.slice_offset
        )
    }
}

impl fmt::Debug for StridedLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
