//! Strided tensors between ranks: sends, receives, all-to-all and redistribution of
//! views of any layout, over NCCL ([`NcclComm`], feature `nccl`) or between ranks of one
//! process ([`LocalComm`]).
//!
//! NCCL moves contiguous bytes; these transfers take views of any layout on either
//! side. A view dense in row-major order on the communicator's device travels in place;
//! any other is packed into a dense temporary by the copy engine in one pass before the
//! send (or unpacked in one pass after the receive), so a permute costs one pass on each
//! side, not a `.contiguous()` copy and another. Everything runs on the caller's stream,
//! ordered after the recorded work on the views and recorded on them like a copy.
//!
//! Before any byte moves, the ranks of each pair swap a small header per transfer
//! (extents, itemsize, element type; [`Header`]): a mismatch is the same error on both
//! ranks, never a hang or a silent wrong result, and nothing moves. A transfer the
//! transport fails aborts the communicator, so that its peers fail instead of waiting.
//!
//! The planning ([`Split`], [`redistribution`], [`Transfer`], [`Header`]) is
//! [`stridekit_layout::dist`], decidable without a GPU. See `docs/distributed.md`.

mod batch;
mod collective;
mod comm;
mod handshake;
mod local;
#[cfg(feature = "nccl")]
mod nccl;

pub use batch::{Batch, Checked, DEFAULT_PIECE_BYTES};
pub use collective::{all_to_all, all_to_all_batch, recv, redistribute, redistribute_batch, send};
pub use comm::Communicator;
pub use local::{local_world, local_world_with_wait, LocalComm, LOCAL_WAIT};
#[cfg(feature = "nccl")]
pub use nccl::{nccl_version, NcclComm, UniqueId};
pub use stridekit_layout::dist::{redistribution, Header, Pieces, Split, Transfer, MAX_PIECES};
