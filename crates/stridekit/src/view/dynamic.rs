//! `DynView`: a read-only or a writable view chosen at run time, for fronts (C, Python)
//! whose callers decide the access with a flag.

use super::{StridedMemoryView, StridedMemoryViewMut};
use crate::dlpack::{DlpackFlags, DlpackTensor};

/// A view whose access is known only at run time. Writes go through
/// [`writable`](Self::writable), which answers `None` for a read-only view.
#[derive(Debug)]
pub enum DynView<'a> {
    /// A read-only view.
    ReadOnly(StridedMemoryView<'a>),
    /// The writable view of its memory.
    Writable(StridedMemoryViewMut<'a>),
}

impl DynView<'static> {
    /// A view of a DLPack tensor, taken over as by
    /// [`StridedMemoryView::from_dlpack`]: read-only when the tensor is flagged
    /// READ_ONLY, writable otherwise. This is the one place the flag picks the access, for
    /// every front that imports tensors.
    ///
    /// # Safety
    /// The tensor's data must stay valid until its deleter runs; nobody may write it while
    /// a view of it exists, and, when it is not flagged READ_ONLY, nobody else may read it
    /// either (the contracts of [`StridedMemoryView::from_dlpack`] and
    /// [`StridedMemoryViewMut::from_dlpack`]).
    pub unsafe fn from_dlpack(tensor: impl Into<DlpackTensor>) -> crate::Result<Self> {
        let t = tensor.into();
        Ok(if t.flags().contains(DlpackFlags::READ_ONLY) {
            // SAFETY: the caller's promise, for a read-only view.
            DynView::ReadOnly(unsafe { StridedMemoryView::from_dlpack(t) }?)
        } else {
            // SAFETY: the caller's promise, for a writable view.
            DynView::Writable(unsafe { StridedMemoryViewMut::from_dlpack(t) }?)
        })
    }
}

impl<'a> DynView<'a> {
    /// A read-only look at the view.
    pub fn as_view(&self) -> StridedMemoryView<'_> {
        match self {
            DynView::ReadOnly(v) => v.clone(),
            DynView::Writable(v) => v.as_view(),
        }
    }

    /// The layout, without making a view (cheap: a borrow).
    pub fn layout(&self) -> &stridekit_layout::StridedLayout {
        match self {
            DynView::ReadOnly(v) => v.layout(),
            DynView::Writable(v) => v.layout(),
        }
    }

    /// The base address ([`ptr`](super::StridedMemoryViewBase::ptr)), without making a view.
    pub fn ptr(&self) -> u64 {
        match self {
            DynView::ReadOnly(v) => v.ptr(),
            DynView::Writable(v) => v.ptr(),
        }
    }

    /// The dtype, without making a view.
    pub fn dtype(&self) -> Option<crate::DType> {
        match self {
            DynView::ReadOnly(v) => v.dtype(),
            DynView::Writable(v) => v.dtype(),
        }
    }

    /// Whether [`prepare_last_release`](Self::prepare_last_release) would wait for
    /// anything (asked without waiting): a front skips giving up its interpreter's lock
    /// when it would not.
    pub fn last_release_waits(&self) -> bool {
        match self {
            DynView::ReadOnly(v) => v.backing.last_release_waits(),
            DynView::Writable(v) => v.backing.last_release_waits(),
        }
    }

    /// When this view is the last owner of memory whose release waits for GPU work (an
    /// imported DLPack tensor with stridekit's copies still queued, say), waits for that
    /// work now, so that dropping the view afterwards is quick: a front calls it without
    /// holding its interpreter's lock (the producer's deleter may need the lock, so the
    /// drop itself stays with it).
    pub fn prepare_last_release(&self) -> crate::Result<()> {
        match self {
            DynView::ReadOnly(v) => v.backing.prepare_last_release(),
            DynView::Writable(v) => v.backing.prepare_last_release(),
        }
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        matches!(self, DynView::ReadOnly(_))
    }

    /// The writable view, or `None` for a read-only one.
    pub fn writable(&mut self) -> Option<&mut StridedMemoryViewMut<'a>> {
        match self {
            DynView::ReadOnly(_) => None,
            DynView::Writable(v) => Some(v),
        }
    }
}

impl<'a> From<StridedMemoryView<'a>> for DynView<'a> {
    fn from(v: StridedMemoryView<'a>) -> Self {
        DynView::ReadOnly(v)
    }
}

impl<'a> From<StridedMemoryViewMut<'a>> for DynView<'a> {
    fn from(v: StridedMemoryViewMut<'a>) -> Self {
        DynView::Writable(v)
    }
}
