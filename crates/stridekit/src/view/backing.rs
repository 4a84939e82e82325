//! What keeps a view's memory alive, and which stream orders its release.

use crate::memory::Buffer;
use cudarc::driver::CudaStream;
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
    /// An imported DLPack tensor (its deleter runs when the last view goes).
    Dlpack(Arc<crate::dlpack::Imported>),
    /// Memory the view owns, or whose owner it keeps alive (held, never read).
    Owned(#[allow(dead_code)] Arc<dyn Any + Send + Sync>),
}

impl Backing<'_> {
    /// The stream that orders the release of the backing buffer, if any.
    pub(crate) fn release_stream(&self) -> Option<&Arc<CudaStream>> {
        match self {
            Backing::Buffer(b) => b.stream(),
            Backing::SharedBuffer(b) => b.stream(),
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
