//! The Rust view behind a `StridedMemoryView`: made at once, or, for a DLPack tensor,
//! checked at once ([`check_dltensor`]: every field, the span, the device) and made on
//! first use. Most views are made to read a pointer and a shape; building the Rust view
//! (its layout, its record of GPU work) is most of what making one costs.

use crate::errors::IntoPy;
use pyo3::prelude::*;
use std::sync::{Mutex, OnceLock};
use stridekit::dlpack::{check_dltensor, DLTensor, DlpackFlags, DlpackTensor, TensorFacts};
use stridekit::view::DynView;
use stridekit::{DType, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

/// A DLPack tensor not yet made into a view.
enum Pending {
    /// Taken over from a capsule: the view owns it (its deleter runs when the view goes).
    Owned(DlpackTensor),
    /// Borrowed through the C exchange API: valid while the producer's object lives.
    Borrowed(Descriptor, Py<PyAny>),
}

/// A copy of a producer's `DLTensor`: its shape and strides arrays stay valid while the
/// tensor is held (pending, or inside the view made of it), which its cell guarantees.
#[derive(Clone, Copy)]
struct Descriptor(DLTensor);

// SAFETY: the descriptor's pointers name the producer's immutable metadata and data, which
// the cell reads only while it holds the tensor (DLPack allows any thread to hold it).
unsafe impl Send for Descriptor {}
// SAFETY: as above; the cell only reads through it.
unsafe impl Sync for Descriptor {}

/// The view of a `StridedMemoryView`, and what its attributes need before it is made.
pub(crate) struct ViewCell {
    /// Boxed: a view object stays small until its view is made.
    made: OnceLock<Box<DynView<'static>>>,
    pending: Mutex<Option<Pending>>,
    /// A deferred tensor's checked description and descriptor (for its shape and strides).
    deferred: Option<(TensorFacts, Descriptor)>,
    read_only: bool,
}

impl ViewCell {
    /// A view made already.
    pub(crate) fn made(view: DynView<'static>) -> Self {
        let read_only = view.is_read_only();
        ViewCell {
            made: OnceLock::from(Box::new(view)),
            pending: Mutex::new(None),
            deferred: None,
            read_only,
        }
    }

    /// A DLPack tensor taken over, checked now and made into a view (read-only when it is
    /// flagged READ_ONLY) on first use.
    ///
    /// # Safety
    /// The contract of [`DynView::from_dlpack`].
    pub(crate) unsafe fn owned(t: DlpackTensor) -> PyResult<Self> {
        let dl = Descriptor(*t.tensor());
        let facts = check_dltensor("StridedMemoryView::from_dlpack", &dl.0).py_err()?;
        let read_only = t.flags().contains(DlpackFlags::READ_ONLY);
        Ok(ViewCell {
            made: OnceLock::new(),
            pending: Mutex::new(Some(Pending::Owned(t))),
            deferred: Some((facts, dl)),
            read_only,
        })
    }

    /// A producer's `DLTensor` borrowed through the C exchange API, kept valid by
    /// `owner`, checked now and made into a writable view on first use.
    ///
    /// # Safety
    /// `dl`'s arrays and data stay valid while `owner` lives; the contract of
    /// [`StridedMemoryViewMut::from_dltensor`].
    pub(crate) unsafe fn borrowed(dl: &DLTensor, owner: Py<PyAny>) -> PyResult<Self> {
        let facts = check_dltensor("StridedMemoryViewMut::from_dltensor", dl).py_err()?;
        Ok(ViewCell {
            made: OnceLock::new(),
            pending: Mutex::new(Some(Pending::Borrowed(Descriptor(*dl), owner))),
            deferred: Some((facts, Descriptor(*dl))),
            read_only: false,
        })
    }

    /// The view, made now if it was not.
    pub(crate) fn get(&self) -> PyResult<&DynView<'static>> {
        if let Some(v) = self.made.get() {
            return Ok(v);
        }
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(v) = self.made.get() {
            return Ok(v);
        }
        let Some(p) = pending.take() else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "StridedMemoryView: the view's tensor is gone (making its view failed before)",
            ));
        };
        let view = match p {
            // SAFETY: the contract `owned` was given.
            Pending::Owned(t) => unsafe { DynView::from_dlpack(t) }.py_err()?,
            // SAFETY: the contract `borrowed` was given; `owner` keeps the descriptor valid.
            Pending::Borrowed(dl, owner) => DynView::Writable(
                unsafe { StridedMemoryViewMut::from_dltensor(&dl.0, owner) }.py_err()?,
            ),
        };
        Ok(self.made.get_or_init(|| Box::new(view)))
    }

    /// The view if it was made.
    pub(crate) fn made_view(&self) -> Option<&DynView<'static>> {
        self.made.get().map(|b| &**b)
    }

    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The dtype, without making the view.
    pub(crate) fn dtype(&self) -> Option<DType> {
        match self.made.get() {
            Some(v) => v.dtype(),
            // Not made: a deferred tensor, whose checked description has it.
            None => self.deferred.as_ref().and_then(|(f, _)| f.dtype),
        }
    }

    /// Dimensions and bytes per element, without making the view.
    pub(crate) fn ndim_itemsize(&self) -> PyResult<(usize, usize)> {
        if let (Some((f, dl)), None) = (&self.deferred, self.made.get()) {
            return Ok((dl.0.ndim as usize, f.itemsize));
        }
        let l = self.get()?.layout();
        Ok((l.ndim(), l.itemsize()))
    }

    /// What a deferred tensor's view will report: its checked description.
    pub(crate) fn facts(&self) -> Option<&TensorFacts> {
        self.deferred.as_ref().map(|(f, _)| f)
    }

    /// Shape, strides (elements) and itemsize, without making the view: the layout's,
    /// or the deferred tensor's arrays (C-contiguous strides where it gave none).
    pub(crate) fn shape_strides(&self) -> PyResult<(Vec<i64>, Vec<i64>, usize)> {
        if let Some((f, dl)) = &self.deferred {
            // While the tensor is pending, the lock keeps it (and so its arrays) held.
            let pending = self
                .pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if pending.is_some() {
                let nd = dl.0.ndim as usize;
                if nd == 0 {
                    return Ok((Vec::new(), Vec::new(), f.itemsize));
                }
                // SAFETY: `check_dltensor` found the shape pointer non-null for ndim > 0,
                // and the tensor is held (pending, under the lock).
                let shape = unsafe { std::slice::from_raw_parts(dl.0.shape, nd) }.to_vec();
                let strides = if dl.0.strides.is_null() {
                    StridedLayout::dense(&shape, f.itemsize, Order::C)
                        .py_err()?
                        .strides()
                        .to_vec()
                } else {
                    // SAFETY: as above, for the strides pointer (non-null here).
                    unsafe { std::slice::from_raw_parts(dl.0.strides, nd) }.to_vec()
                };
                return Ok((shape, strides, f.itemsize));
            }
        }
        // Made (or its making failed, which `get` reports).
        let l = self.get()?.layout();
        Ok((l.shape().to_vec(), l.strides().to_vec(), l.itemsize()))
    }

    /// A read-only look at the view, made now if it was not.
    pub(crate) fn read(&self) -> PyResult<StridedMemoryView<'_>> {
        Ok(self.get()?.as_view())
    }
}
