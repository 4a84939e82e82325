//! What keeps a view's memory alive, and which stream orders its release.

use crate::memory::{Buffer, CudarcUse, PendingWork};
use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;

/// The owner (or the borrow) behind a view. Shared views clone it; a mutable view holds
/// one that no other view shares while it can write.
#[derive(Clone)]
pub(crate) enum Backing<'a> {
    /// A borrowed buffer (whose release stream orders frees after our work).
    Buffer(&'a Buffer),
    /// A buffer the views own together; freed when the last one goes.
    SharedBuffer(Arc<Buffer>),
    /// A borrowed host slice.
    Slice(PhantomData<&'a [u8]>),
    /// A borrowed cudarc slice: copies wait for its earlier work and record themselves
    /// on its events.
    Cudarc(CudarcUse<'a>),
    /// An imported DLPack tensor (its deleter runs when the last view goes).
    Dlpack(Arc<Imported>),
    /// Host memory the view owns (a `Vec`; held, never read).
    Owned(#[allow(dead_code)] Arc<dyn Any + Send + Sync>),
}

impl Backing<'_> {
    /// The record of GPU work queued on the memory, where the memory has one (host
    /// slices and vectors have none: no GPU work runs on them asynchronously).
    pub(crate) fn pending(&self) -> Option<&PendingWork> {
        match self {
            Backing::Buffer(b) => Some(b.pending()),
            Backing::SharedBuffer(b) => Some(b.pending()),
            Backing::Dlpack(t) => Some(&t.pending),
            Backing::Slice(_) | Backing::Owned(_) | Backing::Cudarc(_) => None,
        }
    }

    /// The producer's declaration of where the memory is, still to be checked at first
    /// use (imported DLPack tensors of CUDA device types).
    pub(crate) fn claim(&self) -> Option<&crate::dlpack::Claim> {
        match self {
            Backing::Dlpack(t) => t.claim.as_ref(),
            _ => None,
        }
    }

    /// Whether [`prepare_last_release`](Self::prepare_last_release) would wait for
    /// anything: this backing is the memory's last owner and it has recorded GPU work (an
    /// imported tensor) or a release that waits (a shared buffer). Asked without waiting.
    pub(crate) fn last_release_waits(&self) -> bool {
        match self {
            Backing::Dlpack(t) => Arc::strong_count(t) == 1 && !t.pending.is_idle(),
            Backing::SharedBuffer(b) => Arc::strong_count(b) == 1 && b.release_waits(),
            _ => false,
        }
    }

    /// Waits for what releasing this memory would wait for, when this backing is its last
    /// owner (nobody else can then take a new share of it): an imported tensor's recorded
    /// GPU work, a shared buffer's [`Buffer::prepare_release`].
    pub(crate) fn prepare_last_release(&self) -> crate::error::Result<()> {
        match self {
            Backing::Dlpack(t) if Arc::strong_count(t) == 1 => {
                t.pending.wait_host("prepare the release of a view")
            }
            Backing::SharedBuffer(b) if Arc::strong_count(b) == 1 => b.prepare_release(),
            _ => Ok(()),
        }
    }

    /// The cudarc slice behind the view, if it is one.
    pub(crate) fn cudarc(&self) -> Option<CudarcUse<'_>> {
        match self {
            Backing::Cudarc(u) => Some(*u),
            _ => None,
        }
    }

    /// The flags of an imported DLPack tensor.
    pub(crate) fn dlpack_flags(&self) -> Option<dlpark::DlpackFlags> {
        match self {
            Backing::Dlpack(t) => Some(t.flags),
            _ => None,
        }
    }
}

/// The owner of an imported tensor, shared by every view made from it: dropping the last
/// one calls the producer's deleter (or drops the producer's object, for a borrowed
/// `DLTensor`), once.
pub(crate) struct Imported {
    pub(crate) deleter: Option<dlpark::AllocationDeleter>,
    pub(crate) flags: dlpark::DlpackFlags,
    /// The GPU work stridekit queued on the tensor's memory: the release waits for it.
    pub(crate) pending: crate::memory::PendingWork,
    /// What keeps a borrowed `DLTensor`'s memory alive (the producer's object).
    pub(crate) owner: Option<Box<dyn Any + Send + Sync>>,
    /// The producer's declaration of where the memory is, checked at first use (every
    /// view of the tensor shares its base address, which the check is about).
    pub(crate) claim: Option<crate::dlpack::Claim>,
}

impl Drop for Imported {
    fn drop(&mut self) {
        if let Err(e) = self.pending.wait_host("drop an imported DLPack tensor") {
            crate::error::report_drop_failure(
                "wait for the GPU work on an imported DLPack tensor",
                &e.to_string(),
            );
        }
        drop(self.deleter.take());
        drop(self.owner.take());
    }
}
