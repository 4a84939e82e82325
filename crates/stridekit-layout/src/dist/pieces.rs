//! `Pieces`: a large transfer cut into pieces that move one after another, so that the
//! copy engine packs (or unpacks) one piece while the transport moves another.

use super::err;
use crate::error::Result;
use crate::layout::StridedLayout;

/// The most pieces a transfer is cut into.
pub const MAX_PIECES: usize = 8;

/// How a transfer of a box is cut: into at most [`MAX_PIECES`] pieces of at least
/// `piece_bytes` each, along the box's first axis of extent 2 or more (every earlier axis
/// has extent 1), so that each piece is a box of its own and, in the box's dense
/// row-major image, one run of bytes. Both ranks of a transfer cut it alike: the cut
/// depends only on the extents, the itemsize and `piece_bytes`, and the piece count
/// travels in the transfer's [`Header`](super::Header).
///
/// ```
/// use stridekit_layout::dist::Pieces;
/// use stridekit_layout::StridedLayout;
/// // 1 GiB of f32 in pieces of at least 64 MiB: the 8 most, 1024 rows each.
/// let p = Pieces::new(&[8192, 32768], 4, 64 << 20)?;
/// assert_eq!(p.count(), 8);
/// assert_eq!(p.byte_range(1), Some((128 << 20, 256 << 20)));
/// // Piece 1 of a column-major view of the box: rows 1024..2048.
/// let f = StridedLayout::new(&[8192, 32768], &[1, 8192], 4)?;
/// let part = p.part_of(&f, 1)?;
/// assert_eq!((part.shape(), part.slice_offset()), (&[1024, 32768][..], 1024));
/// // Under 2 x 64 MiB: one piece.
/// assert_eq!(Pieces::new(&[1024, 1024], 4, 64 << 20)?.count(), 1);
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// The axis cut, and the bounds of its positions (`count + 1` of them); `None` for one
    /// piece.
    cut: Option<(usize, Vec<i64>)>,
    /// Bytes of one position of the cut axis in the dense image (the whole box's bytes
    /// when there is one piece).
    row_bytes: u64,
}

impl Pieces {
    /// The pieces of a box of `shape` with elements of `itemsize` bytes, each at least
    /// `piece_bytes` (which must not be 0).
    pub fn new(shape: &[i64], itemsize: usize, piece_bytes: u64) -> Result<Self> {
        if piece_bytes == 0 {
            return Err(err("a piece of 0 bytes; pieces are at least one byte"));
        }
        let too_big = || {
            err(format!(
                "a box of {shape:?} x {itemsize} bytes passes 2^64 bytes"
            ))
        };
        let mut bytes = itemsize as u64;
        for &e in shape {
            let e = u64::try_from(e).map_err(|_| err(format!("extent {e} is negative")))?;
            bytes = bytes.checked_mul(e).ok_or_else(too_big)?;
        }
        let whole = Pieces {
            cut: None,
            row_bytes: bytes,
        };
        let want = (bytes / piece_bytes).min(MAX_PIECES as u64);
        let Some(axis) = shape.iter().position(|&e| e >= 2) else {
            return Ok(whole);
        };
        let extent = shape[axis];
        let count = want.min(extent as u64) as i64;
        if count < 2 {
            return Ok(whole);
        }
        // Balanced: the first `extent % count` pieces one position longer.
        let (q, r) = (extent / count, extent % count);
        let bounds = (0..=count).map(|i| q * i + i.min(r)).collect();
        Ok(Pieces {
            cut: Some((axis, bounds)),
            row_bytes: bytes / extent as u64,
        })
    }

    /// The number of pieces (1 or more).
    pub fn count(&self) -> usize {
        self.cut.as_ref().map_or(1, |(_, b)| b.len() - 1)
    }

    /// The byte range `[start, end)` of piece `i` in the box's dense row-major image
    /// (`None` past the last piece).
    pub fn byte_range(&self, i: usize) -> Option<(u64, u64)> {
        match &self.cut {
            None => (i == 0).then_some((0, self.row_bytes)),
            // Within the box's byte count (checked in `new`).
            Some((_, b)) => Some((
                *b.get(i)? as u64 * self.row_bytes,
                *b.get(i + 1)? as u64 * self.row_bytes,
            )),
        }
    }

    /// Piece `i` of a view of the box in any layout (`layout` has the box's extents): the
    /// same strides, the cut axis narrowed to the piece's positions.
    pub fn part_of(&self, layout: &StridedLayout, i: usize) -> Result<StridedLayout> {
        let Some((axis, b)) = &self.cut else {
            return match i {
                0 => Ok(layout.clone()),
                _ => Err(err(format!("piece {i} of one"))),
            };
        };
        let (axis, lo, hi) = match (b.get(i), b.get(i + 1)) {
            (Some(&lo), Some(&hi)) => (*axis, lo, hi),
            _ => return Err(err(format!("piece {i} of {}", b.len() - 1))),
        };
        if layout.shape().get(axis) != b.last() {
            return Err(err(format!(
                "a layout of shape {:?} is not the box cut along axis {axis} at {b:?}",
                layout.shape()
            )));
        }
        let mut shape = layout.shape().to_vec();
        shape[axis] = hi - lo;
        let offset = layout.strides()[axis]
            .checked_mul(lo)
            .and_then(|o| o.checked_add(layout.slice_offset()))
            .ok_or_else(|| err("a piece's offset passes 2^63 elements"))?;
        StridedLayout::with_offset(&shape, layout.strides(), layout.itemsize(), offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_tile_the_dense_image_in_order() {
        for (shape, isz, piece) in [
            (vec![1, 1, 1000, 7], 4usize, 3000u64),
            (vec![9, 5], 8, 40),
            (vec![3, 1000], 1, 10),
            (vec![100], 2, 1),
        ] {
            let p = Pieces::new(&shape, isz, piece).unwrap();
            let total: u64 = shape.iter().product::<i64>() as u64 * isz as u64;
            let mut at = 0;
            for i in 0..p.count() {
                let (lo, hi) = p.byte_range(i).unwrap();
                assert_eq!(lo, at);
                assert!(hi - lo >= piece.min(total), "{shape:?} piece {i}");
                at = hi;
            }
            assert_eq!(at, total, "{shape:?}");
            assert_eq!(p.byte_range(p.count()), None);
            assert!((1..=MAX_PIECES).contains(&p.count()));
        }
    }

    #[test]
    fn small_boxes_and_boxes_without_a_long_axis_are_one_piece() {
        assert_eq!(Pieces::new(&[1, 1, 1], 1 << 30, 1).unwrap().count(), 1);
        assert_eq!(Pieces::new(&[], 4, 1).unwrap().count(), 1);
        assert_eq!(Pieces::new(&[0, 5], 4, 1).unwrap().count(), 1);
        assert_eq!(Pieces::new(&[2, 3], 4, 16).unwrap().count(), 1);
        assert_eq!(Pieces::new(&[2, 3], 4, 12).unwrap().count(), 2);
        assert!(Pieces::new(&[2], 4, 0).is_err());
        assert!(Pieces::new(&[i64::MAX, 4], 4, 1).is_err());
    }

    #[test]
    fn a_part_is_the_pieces_rows_in_the_views_own_layout() {
        let p = Pieces::new(&[1, 10, 3], 4, 24).unwrap();
        assert_eq!(p.count(), 5);
        let l = StridedLayout::with_offset(&[1, 10, 3], &[7, -3, 40], 4, 30).unwrap();
        let part = p.part_of(&l, 2).unwrap();
        assert_eq!(part.shape(), &[1, 2, 3]);
        assert_eq!(part.strides(), &[7, -3, 40]);
        assert_eq!(part.slice_offset(), 30 - 3 * 4);
        let other = StridedLayout::new(&[1, 9, 3], &[1, 1, 1], 4).unwrap();
        assert!(p.part_of(&other, 0).is_err());
        assert!(p.part_of(&l, 5).is_err());
    }
}
