//! `Header`: what two ranks compare before a transfer moves any byte.

use super::err;
use crate::dims::Dims;
use crate::error::Result;

/// What a sender and a receiver agree on before a transfer moves any byte: the element
/// count, the element size and type, the box's extents, and the number of pieces it
/// moves in ([`Pieces`](super::Pieces)). Both ranks exchange their
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
    /// The pieces the transfer moves in, one after another, when its receiver unpacks
    /// it (1: whole).
    pub pieces: u32,
    /// Whether this side receives the transfer into a temporary and unpacks it (set on
    /// receives only): a transfer moves in pieces only then, each piece unpacked while
    /// the next arrives. Not compared: the sides differ.
    pub unpacks: bool,
}

/// The first bytes of every encoded header ("SKH2").
const HEADER_MAGIC: u32 = 0x324b_4853;
/// The header's fixed words before the extents.
const HEADER_WORDS: usize = 6;

impl Header {
    /// The header of a box of `shape` with elements of `itemsize` bytes and type `dtype`,
    /// moved whole (one piece; [`with_pieces`](Self::with_pieces) sets another count).
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
            pieces: 1,
            unpacks: false,
        })
    }

    /// The same header for a transfer moved in `pieces` pieces.
    pub fn with_pieces(self, pieces: u32) -> Self {
        Header { pieces, ..self }
    }

    /// The same header for a receiving side that unpacks (or not).
    pub fn with_unpacks(self, unpacks: bool) -> Self {
        Header { unpacks, ..self }
    }

    /// The pieces the transfer moves in, given the peer's header: [`pieces`](Self::pieces)
    /// when the receiving side (either) unpacks, else 1. A sender's pack gains nothing
    /// from pieces (on two H200s a transposed 1 GiB send took 0.86 of NCCL's contiguous
    /// send in pieces, 0.85 whole), a receiver's unpack does (0.94 from 0.85).
    pub fn pieces_with(&self, peer: &Header) -> u32 {
        if self.unpacks || peer.unpacks {
            self.pieces
        } else {
            1
        }
    }

    /// The number of elements.
    pub fn volume(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |v, &e| v.checked_mul(u64::try_from(e).ok()?))
    }

    /// The header as little-endian bytes: magic, ndim, itemsize, dtype, pieces, flags
    /// (bit 0: unpacks) (u32 each), then the extents (i64 each).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 * HEADER_WORDS + 8 * self.shape.len());
        for w in [
            HEADER_MAGIC,
            self.shape.len() as u32,
            self.itemsize,
            self.dtype,
            self.pieces,
            u32::from(self.unpacks),
        ] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for &e in &self.shape {
            out.extend_from_slice(&e.to_le_bytes());
        }
        out
    }

    /// Reads [`to_bytes`](Self::to_bytes)'s encoding; anything else (truncated, too long,
    /// another magic, negative extents, itemsize 0, no pieces, unknown flags) is an error.
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
        let fixed = 4 * HEADER_WORDS;
        if ndim > crate::dims::MAX_NDIM || bytes.len() != fixed + 8 * ndim {
            return Err(err(format!(
                "a header of {ndim} axes takes {} bytes, not {}",
                fixed.saturating_add(ndim.saturating_mul(8)),
                bytes.len()
            )));
        }
        let (pieces, flags) = (word(4)?, word(5)?);
        if pieces == 0 {
            return Err(err("a header of a transfer in 0 pieces"));
        }
        if flags > 1 {
            return Err(err(format!("a header with unknown flags {flags:#x}")));
        }
        let shape: Vec<i64> = bytes[fixed..]
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        Ok(Header::new(&shape, word(2)? as usize, word(3)?)?
            .with_pieces(pieces)
            .with_unpacks(flags == 1))
    }

    /// Ok when `other` (the peer's header) describes the same box: the same extents (so
    /// the same volume), itemsize and type, where a type 0 (bytes only) meets any type of
    /// the same itemsize, as a copy between an untyped and a typed view does, moved in
    /// the same number of pieces; otherwise an error naming both.
    pub fn agrees_with(&self, other: &Header) -> Result<()> {
        let types_meet = self.dtype == other.dtype || self.dtype == 0 || other.dtype == 0;
        let what = if self.shape != other.shape {
            "extents"
        } else if self.itemsize != other.itemsize {
            "itemsize"
        } else if !types_meet {
            "element type"
        } else if self.pieces != other.pieces {
            "piece counts (both ranks must cut transfers in pieces of the same size)"
        } else {
            return Ok(());
        };
        Err(err(format!(
            "the peer's {what} differ: here shape {:?}, itemsize {}, type {}, {} pieces; there shape {:?}, itemsize {}, type {}, {} pieces",
            self.shape.as_slice(),
            self.itemsize,
            self.dtype,
            self.pieces,
            other.shape.as_slice(),
            other.itemsize,
            other.dtype,
            other.pieces
        )))
    }
}
