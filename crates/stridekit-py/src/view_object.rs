//! The `StridedMemoryView` object itself: what it holds, how it is made from a Rust view,
//! and how it goes away (its Python methods are in `view`).

use crate::view_cell::ViewCell;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::OnceLock;
use stridekit::view::DynView;
use stridekit::StridedMemoryView;

/// A strided view of another library's array (or of a `Buffer`): pointer, shape, strides,
/// dtype, device; copies between any two views; DLPack export.
#[pyclass(name = "StridedMemoryView", module = "stridekit", frozen)]
pub struct PyView {
    /// The Rust view (made on first use for DLPack tensors: [`ViewCell`]).
    pub(crate) cell: ViewCell,
    pub(crate) exporting_obj: Py<PyAny>,
    /// What the attribute getters return, computed once (a view never changes).
    pub(crate) first: u64,
    /// The producer gave no strides (C-contiguous by shape alone): `strides` is None, as
    /// in cuda.core.
    pub(crate) implicit_strides: bool,
    pub(crate) device_id: i32,
    pub(crate) device_accessible: bool,
    pub(crate) volume: usize,
    /// ptr, shape, strides and dtype as Python objects, each made on its first read.
    pub(crate) cache: Attributes,
    /// Held by a copy into this view: copies into one view from several threads run one
    /// at a time, while reads of its attributes go on.
    pub(crate) copy_lock: std::sync::Mutex<()>,
    /// The NumPy dtype of elements stridekit has no type for (records, padded types),
    /// reported by `dtype` where the Rust view carries none.
    pub(crate) opaque_dtype: Option<Py<PyAny>>,
    /// The layout object `layout` returns, made once.
    pub(crate) layout_cache: std::sync::OnceLock<Py<crate::layout::PyLayout>>,
    /// The layout object the view was made from (`view(layout)`, `from_buffer(buffer,
    /// layout)`), which `_layout` returns as cuda.core's does.
    pub(crate) given_layout: Option<Py<crate::layout::PyLayout>>,
}

/// A view going away that holds the last share of memory whose release waits for GPU
/// work waits for it without the GIL, so that other threads run meanwhile; the release
/// itself (a producer's deleter may need the GIL) then runs with it.
impl Drop for PyView {
    fn drop(&mut self) {
        // A view never made holds no GPU work.
        let Some(view) = self.cell.made_view() else {
            return;
        };
        // Most views hold nothing to wait for: they keep the GIL (giving it up and taking
        // it back costs more than the rest of a view's release).
        if !view.last_release_waits() {
            return;
        }
        let waited = Python::attach(|py| py.detach(|| view.prepare_last_release()));
        if let Err(e) = waited {
            eprintln!("stridekit: waiting for the GPU work on a view being released failed: {e}");
        }
    }
}

/// What a made view reports: its first element's address, its volume, its device id and
/// whether kernels can reach it.
fn reported(view: &DynView<'static>) -> (u64, usize, i32, bool) {
    let l = view.layout();
    let first = view
        .ptr()
        .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
    let (device_id, device_accessible) = match view {
        DynView::ReadOnly(v) => (v.device_id(), v.is_device_accessible()),
        DynView::Writable(v) => (v.device_id(), v.is_device_accessible()),
    };
    (first, l.volume(), device_id, device_accessible)
}

/// The attributes as Python objects, each made on its first read (a view never changes):
/// a view whose `ptr` alone is read never builds its shape tuple or dtype.
#[derive(Default)]
pub(crate) struct Attributes {
    pub(crate) ptr: OnceLock<Py<PyAny>>,
    pub(crate) shape: OnceLock<Py<PyTuple>>,
    pub(crate) strides: OnceLock<Py<PyTuple>>,
    pub(crate) dtype: OnceLock<Py<PyAny>>,
}

/// The object in `cell`, made by `make` on the first read.
pub(crate) fn read_once<T>(
    py: Python<'_>,
    cell: &OnceLock<Py<T>>,
    make: impl FnOnce() -> PyResult<Py<T>>,
) -> PyResult<Py<T>> {
    if let Some(v) = cell.get() {
        return Ok(v.clone_ref(py));
    }
    let made = make()?;
    Ok(cell.get_or_init(|| made).clone_ref(py))
}

impl PyView {
    pub(crate) fn of(view: DynView<'static>, exporting_obj: Py<PyAny>) -> Self {
        let facts = reported(&view);
        Self::with(ViewCell::made(view), exporting_obj, facts)
    }

    /// A view of a cell not made yet (a DLPack tensor checked, made on first use): what
    /// its attributes report comes from the tensor's checked description. A cell made
    /// already reports its view's.
    pub(crate) fn deferred(cell: ViewCell, exporting_obj: Py<PyAny>) -> PyResult<Self> {
        let facts = match cell.facts() {
            Some(f) => (f.first, f.volume, f.device_id(), f.is_device_accessible()),
            None => reported(cell.get()?),
        };
        Ok(Self::with(cell, exporting_obj, facts))
    }

    fn with(
        cell: ViewCell,
        exporting_obj: Py<PyAny>,
        (first, volume, device_id, device_accessible): (u64, usize, i32, bool),
    ) -> Self {
        PyView {
            cell,
            exporting_obj,
            first,
            implicit_strides: false,
            device_id,
            device_accessible,
            volume,
            cache: Attributes::default(),
            copy_lock: std::sync::Mutex::new(()),
            opaque_dtype: None,
            layout_cache: std::sync::OnceLock::new(),
            given_layout: None,
        }
    }

    /// A read-only view of the same memory that keeps it alive by itself (for descriptors
    /// that outlive this object).
    pub(crate) fn static_alias(&self) -> PyResult<StridedMemoryView<'static>> {
        Ok(match self.rust_view()? {
            DynView::ReadOnly(v) => v.clone(),
            // SAFETY: Python has no aliasing rules; a descriptor only describes the
            // memory, and ordering kernels against writes is the caller's, as in cuda.core.
            DynView::Writable(v) => unsafe { v.shared_alias() },
        })
    }

    /// The Rust view, made now if it was not.
    pub(crate) fn rust_view(&self) -> PyResult<&DynView<'static>> {
        self.cell.get()
    }
}
