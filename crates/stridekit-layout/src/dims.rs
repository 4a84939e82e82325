//! Inline storage for extents and strides, and the axis arithmetic shared by the transforms.

use crate::error::{LayoutError, Op, Result, Tuple};
use smallvec::SmallVec;

/// The most dimensions a layout may have.
pub const MAX_NDIM: usize = 64;

/// Extents or strides: inline up to 8 dimensions, so common layouts never allocate.
pub type Dims = SmallVec<[i64; 8]>;

/// `n` values `f(0), .., f(n-1)`; filled on the stack for up to 8 (SmallVec's own
/// `collect`/`push` check capacity per element and are several times slower).
#[inline]
pub(crate) fn dims_from_fn(n: usize, mut f: impl FnMut(usize) -> i64) -> Dims {
    if n <= 8 {
        let mut buf = [0i64; 8];
        for (i, v) in buf.iter_mut().enumerate().take(n) {
            *v = f(i);
        }
        Dims::from_buf_and_len(buf, n)
    } else {
        (0..n).map(f).collect()
    }
}

/// `n` zeros.
#[inline]
pub(crate) fn zeros(n: usize) -> Dims {
    dims_from_fn(n, |_| 0)
}

/// Resolves a possibly negative axis (Python style) against `ndim` axes.
pub(crate) fn normalize_axis(op: Op, axis: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    let resolved = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&resolved) {
        Ok(resolved as usize)
    } else {
        Err(LayoutError::AxisOutOfRange {
            op,
            axis,
            ndim,
            lo: -n,
            hi: n - 1,
        })
    }
}

/// Resolves a permutation of `0..ndim` (negative entries allowed) into axis indices.
pub(crate) fn normalize_permutation(
    op: Op,
    what: &'static str,
    axes: &[i64],
    ndim: usize,
) -> Result<SmallVec<[usize; 8]>> {
    if axes.len() != ndim {
        return Err(LayoutError::LengthMismatch {
            op,
            what,
            expected: ndim,
            got: axes.len(),
        });
    }
    let mut seen = 0u64;
    let mut out = SmallVec::with_capacity(ndim);
    for &a in axes {
        let ax = normalize_axis(op, a, ndim)?;
        if seen & (1u64 << ax) != 0 {
            return Err(LayoutError::DuplicateAxis {
                op,
                axis: ax,
                axes: Tuple::from(axes),
            });
        }
        seen |= 1u64 << ax;
        out.push(ax);
    }
    Ok(out)
}

pub(crate) fn check_ndim(op: Op, ndim: usize) -> Result<()> {
    if ndim > MAX_NDIM {
        Err(LayoutError::TooManyDims {
            op,
            ndim,
            max: MAX_NDIM,
        })
    } else {
        Ok(())
    }
}

pub(crate) fn check_extents(op: Op, shape: &[i64]) -> Result<()> {
    check_ndim(op, shape.len())?;
    match shape.iter().position(|&e| e < 0) {
        Some(axis) => Err(LayoutError::NegativeExtent {
            op,
            axis,
            extent: shape[axis],
            shape: Tuple::from(shape),
        }),
        None => Ok(()),
    }
}

/// The product of the extents, or `None` on overflow. Any zero extent makes it 0.
pub(crate) fn checked_volume(shape: &[i64]) -> Option<i64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1i64, |acc, &e| acc.checked_mul(e))
}

pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
