//! The C ABI's `sk_view` handed to Python as a capsule, for Cython and C extensions.

use crate::errors::IntoPy;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::CStr;
use stridekit::view::DynView;
use stridekit::StridedMemoryViewMut;
use stridekit_capi::{sk_view, sk_view_of, sk_view_release};

/// The capsule's name; its pointer is a `sk_view*`.
pub(crate) const NAME: &CStr = c"stridekit.sk_view";

unsafe extern "C" fn destroy(cap: *mut ffi::PyObject) {
    // SAFETY: Python calls this once with our capsule, whose pointer is a Box<sk_view>.
    unsafe {
        let p = ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()) as *mut sk_view;
        if !p.is_null() {
            let _ = sk_view_release(p);
            drop(Box::from_raw(p));
        }
    }
}

/// A capsule holding a new `sk_view` of the same memory as `view`.
pub(crate) fn capsule(py: Python<'_>, view: &DynView<'static>) -> PyResult<Py<PyAny>> {
    let r = view.as_view();
    let (ptr, layout, dtype) = (r.ptr(), r.layout().clone(), r.dtype());
    // The C view keeps its own owner: a clone of the read-only view, or for a writable
    // one a second writable view of the same bytes (Python has no aliasing rules).
    let copy = match view {
        DynView::ReadOnly(v) => DynView::ReadOnly(v.clone()),
        DynView::Writable(w) => {
            let keep = w.memory_owner();
            // SAFETY: `keep` holds the memory alive; writes through both views are the
            // Python caller's to order, as with any two Python views of one array.
            DynView::Writable(
                unsafe { StridedMemoryViewMut::from_foreign_span_mut(ptr, &layout, dtype, keep) }
                    .py_err()?,
            )
        }
    };
    let c = sk_view_of(copy).map_err(PyRuntimeError::new_err)?;
    let raw = Box::into_raw(Box::new(c));
    // SAFETY: `raw` is a live Box<sk_view>; `destroy` releases and frees it.
    let cap = unsafe { ffi::PyCapsule_New(raw.cast(), NAME.as_ptr(), Some(destroy)) };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, cap) }.map(Bound::unbind)
}
