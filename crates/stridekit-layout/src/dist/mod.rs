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
mod header;
mod pieces;
mod split;
mod transfer;

pub use header::Header;
pub use pieces::{Pieces, MAX_PIECES};
pub use split::Split;
pub use transfer::{redistribution, Transfer};

use crate::error::LayoutError;

/// The error of a rule of this module.
fn err(rule: impl Into<String>) -> LayoutError {
    LayoutError::Distribute { rule: rule.into() }
}
