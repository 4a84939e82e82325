//! Tensors split over ranks, and the boxes that move when a split changes.
//!
//! A [`Split`] holds a tensor of a global shape on `ranks` ranks, block-wise along one
//! axis: rank `r` holds positions `[r * c, min((r + 1) * c, n))` of that axis, where
//! `c = ceil(n / ranks)` (PyTorch's `torch.chunk`, and DTensor's `Shard`); trailing ranks
//! may hold fewer positions, or none. Every rank's part is a tensor of its own, in any
//! layout it likes.
//!
//! [`redistribution`] lists what moves when the same tensor goes from one split to another
//! (a row split becoming a column split, say): one [`Transfer`] per pair of ranks whose
//! parts share elements, each a box in global coordinates. [`Transfer::in_local`] turns a
//! box into a view of a rank's part, whatever that part's layout, so the sender packs the
//! box out of its part and the receiver unpacks it into its own with two strided copies
//! (a permute between the two layouts fused into either); packing straight into
//! `StridedLayout::dense_like(receiver_view, Order::K)` leaves the receiver a contiguous
//! unpack.
//!
//! ```
//! use stridekit_layout::dist::{redistribution, Split};
//! // A 6 x 4 tensor split by rows over 3 ranks, then by columns over 2.
//! let moves = redistribution(&[6, 4], &Split::new(0, 3)?, &Split::new(1, 2)?)?;
//! assert_eq!(moves.len(), 6); // every row block meets every column block
//! assert_eq!((moves[0].start.as_slice(), moves[0].shape.as_slice()), (&[0, 0][..], &[2, 2][..]));
//! # Ok::<(), stridekit_layout::LayoutError>(())
//! ```

use crate::dims::Dims;
use crate::error::{LayoutError, Result};
use crate::layout::StridedLayout;
use crate::slice::SliceArg;

fn err(rule: impl Into<String>) -> LayoutError {
    LayoutError::Distribute { rule: rule.into() }
}

/// A block split of a tensor along one axis over some ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// The axis the parts are cut along.
    pub axis: usize,
    /// How many ranks hold parts (at least 1).
    pub ranks: usize,
}

impl Split {
    /// A split along `axis` over `ranks` ranks.
    pub fn new(axis: usize, ranks: usize) -> Result<Self> {
        if ranks == 0 {
            return Err(err("a split needs at least one rank"));
        }
        Ok(Split { axis, ranks })
    }

    fn check(&self, shape: &[i64]) -> Result<()> {
        if self.axis >= shape.len() {
            return Err(err(format!(
                "axis {} is out of range for a {}-d tensor",
                self.axis,
                shape.len()
            )));
        }
        if let Some(&e) = shape.iter().find(|&&e| e < 0) {
            return Err(err(format!("extent {e} is negative")));
        }
        Ok(())
    }

    /// The positions `(start, len)` that `rank` holds of an axis of `extent` positions.
    pub fn range(&self, extent: i64, rank: usize) -> (i64, i64) {
        let ranks = self.ranks.max(1) as i64;
        let chunk = (extent + ranks - 1) / ranks;
        let start = (chunk.saturating_mul(rank as i64)).min(extent);
        let end = (start + chunk).min(extent);
        (start, end - start)
    }

    /// Where `rank`'s part begins in global coordinates.
    pub fn origin(&self, shape: &[i64], rank: usize) -> Result<Dims> {
        self.check(shape)?;
        let mut o: Dims = shape.iter().map(|_| 0).collect();
        o[self.axis] = self.range(shape[self.axis], rank).0;
        Ok(o)
    }

    /// The shape of `rank`'s part.
    pub fn local_shape(&self, shape: &[i64], rank: usize) -> Result<Dims> {
        self.check(shape)?;
        if rank >= self.ranks {
            return Err(err(format!(
                "rank {rank} is out of range for a split over {} ranks",
                self.ranks
            )));
        }
        let mut s: Dims = shape.iter().copied().collect();
        s[self.axis] = self.range(shape[self.axis], rank).1;
        Ok(s)
    }
}

/// A box of a tensor that moves from one rank's part to another's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// The sending rank (in the old split).
    pub from: usize,
    /// The receiving rank (in the new split).
    pub to: usize,
    /// The box's first position in global coordinates.
    pub start: Dims,
    /// The box's extents.
    pub shape: Dims,
}

impl Transfer {
    /// The number of elements that move.
    pub fn volume(&self) -> usize {
        self.shape.iter().map(|&e| e.max(0) as usize).product()
    }

    /// The box as a view of a rank's part: `local` is the part's layout (its shape is the
    /// part's, its strides anything), `origin` where the part begins in global
    /// coordinates ([`Split::origin`]). Fails when the box is not inside the part.
    pub fn in_local(&self, local: &StridedLayout, origin: &[i64]) -> Result<StridedLayout> {
        let n = self.shape.len();
        if local.ndim() != n || origin.len() != n {
            return Err(err(format!(
                "the box has {n} axes, the part {} and its origin {}",
                local.ndim(),
                origin.len()
            )));
        }
        let mut args = Vec::with_capacity(n);
        let axes = self
            .start
            .iter()
            .zip(&self.shape)
            .zip(origin)
            .zip(local.shape());
        for (k, (((&start, &ext), &o), &have)) in axes.enumerate() {
            let lo = start - o;
            let hi = lo + ext;
            if lo < 0 || hi > have {
                return Err(err(format!(
                    "the box's positions {start}..{} of axis {k} are not inside the part ({have} positions from {o})",
                    start + ext
                )));
            }
            args.push(SliceArg::Range {
                start: Some(lo),
                stop: Some(hi),
                step: 1,
            });
        }
        local.sliced(&args)
    }
}

/// What moves when a tensor of global `shape` goes from split `from` to split `to`: one
/// transfer per (sender, receiver) pair whose parts share at least one element, senders
/// in order, receivers in order within each. Every element is in exactly one transfer.
pub fn redistribution(shape: &[i64], from: &Split, to: &Split) -> Result<Vec<Transfer>> {
    from.check(shape)?;
    to.check(shape)?;
    let mut out = Vec::new();
    for s in 0..from.ranks {
        let (a0, al) = from.range(shape[from.axis], s);
        for d in 0..to.ranks {
            let (b0, bl) = to.range(shape[to.axis], d);
            let mut start: Dims = shape.iter().map(|_| 0).collect();
            let mut ext: Dims = shape.iter().copied().collect();
            if from.axis == to.axis {
                let lo = a0.max(b0);
                let hi = (a0 + al).min(b0 + bl);
                start[from.axis] = lo;
                ext[from.axis] = (hi - lo).max(0);
            } else {
                start[from.axis] = a0;
                ext[from.axis] = al;
                start[to.axis] = b0;
                ext[to.axis] = bl;
            }
            let t = Transfer {
                from: s,
                to: d,
                start,
                shape: ext,
            };
            if t.volume() > 0 {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// What a sender and a receiver agree on before a transfer moves any byte: the element
/// count, the element size and type, and the box's extents. Both ranks exchange their
/// headers first (a few dozen bytes) and compare them with [`Header::agrees_with`], so a
/// mismatch is an error on both sides, never a hang or a silent wrong result.
///
/// ```
/// use stridekit_layout::dist::Header;
/// let mine = Header::new(&[4, 6], 4, 2)?;
/// let bytes = mine.to_bytes();
/// let theirs = Header::from_bytes(&bytes)?;
/// mine.agrees_with(&theirs)?;
/// assert!(mine.agrees_with(&Header::new(&[4, 6], 2, 7)?).is_err());
/// # Ok::<(), stridekit_layout::LayoutError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The box's extents.
    pub shape: Dims,
    /// Bytes per element.
    pub itemsize: u32,
    /// The element type, as the caller numbers types (0: unknown, bytes only).
    pub dtype: u32,
}

/// The first bytes of every encoded header ("SKH1").
const HEADER_MAGIC: u32 = 0x314b_4853;

impl Header {
    /// The header of a box of `shape` with elements of `itemsize` bytes and type `dtype`.
    pub fn new(shape: &[i64], itemsize: usize, dtype: u32) -> Result<Self> {
        if let Some(&e) = shape.iter().find(|&&e| e < 0) {
            return Err(err(format!("extent {e} is negative")));
        }
        if shape.len() > crate::dims::MAX_NDIM {
            return Err(err(format!(
                "{} axes; at most {}",
                shape.len(),
                crate::dims::MAX_NDIM
            )));
        }
        let itemsize = u32::try_from(itemsize)
            .ok()
            .filter(|&i| i > 0)
            .ok_or_else(|| err(format!("itemsize {itemsize} is not 1 to 2^32 - 1 bytes")))?;
        Ok(Header {
            shape: shape.iter().copied().collect(),
            itemsize,
            dtype,
        })
    }

    /// The number of elements.
    pub fn volume(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |v, &e| v.checked_mul(u64::try_from(e).ok()?))
    }

    /// The header as little-endian bytes: magic, ndim, itemsize, dtype (u32 each), then
    /// the extents (i64 each).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 8 * self.shape.len());
        for w in [
            HEADER_MAGIC,
            self.shape.len() as u32,
            self.itemsize,
            self.dtype,
        ] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for &e in &self.shape {
            out.extend_from_slice(&e.to_le_bytes());
        }
        out
    }

    /// Reads [`to_bytes`](Self::to_bytes)'s encoding; anything else (truncated, too long,
    /// another magic, negative extents, itemsize 0) is an error.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let word = |i: usize| -> Result<u32> {
            bytes
                .get(4 * i..4 * i + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
                .ok_or_else(|| err(format!("a header of {} bytes is truncated", bytes.len())))
        };
        if word(0)? != HEADER_MAGIC {
            return Err(err("the bytes are not a stridekit transfer header"));
        }
        let ndim = word(1)? as usize;
        if ndim > crate::dims::MAX_NDIM || bytes.len() != 16 + 8 * ndim {
            return Err(err(format!(
                "a header of {ndim} axes takes {} bytes, not {}",
                16usize.saturating_add(ndim.saturating_mul(8)),
                bytes.len()
            )));
        }
        let shape: Vec<i64> = bytes[16..]
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        Header::new(&shape, word(2)? as usize, word(3)?)
    }

    /// Ok when `other` (the peer's header) describes the same box: the same extents (so
    /// the same volume), itemsize and type; otherwise an error naming both.
    pub fn agrees_with(&self, other: &Header) -> Result<()> {
        if self == other {
            return Ok(());
        }
        let what = if self.shape != other.shape {
            "extents"
        } else if self.itemsize != other.itemsize {
            "itemsize"
        } else {
            "element type"
        };
        Err(err(format!(
            "the peer's {what} differ: here shape {:?}, itemsize {}, type {}; there shape {:?}, itemsize {}, type {}",
            self.shape.as_slice(),
            self.itemsize,
            self.dtype,
            other.shape.as_slice(),
            other.itemsize,
            other.dtype
        )))
    }
}
