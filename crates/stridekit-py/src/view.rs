//! `StridedMemoryView` for Python: any DLPack, CUDA Array Interface or NumPy array
//! interface object, or a `Buffer` with a layout; copies; DLPack export; the C view.

use crate::dtype;
use crate::errors::IntoPy;
use crate::import::{self, Protocol, LEGACY, VERSIONED};
use crate::layout::PyLayout;
use crate::memory::{PyBuffer, PyMemoryResource};
use crate::stream;
use crate::view_object::{read_once, PyView};
use pyo3::exceptions::{PyAttributeError, PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::ffi::{c_void, CStr};
use stridekit::view::DynView;
use stridekit::{CopyOptions, MemoryKind, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

/// Element 0's offset (in elements) from the view's base.
fn first_offset(v: &StridedMemoryView<'_>) -> i64 {
    v.layout().slice_offset()
}

fn first_ptr(v: &StridedMemoryView<'_>) -> u64 {
    let l = v.layout();
    v.ptr()
        .wrapping_add_signed(first_offset(v) * l.itemsize() as i64)
}

impl PyView {
    fn import(
        obj: &Bound<'_, PyAny>,
        stream_ptr: Option<&Bound<'_, PyAny>>,
        protocol: Protocol,
    ) -> PyResult<Self> {
        let sp = stream::handle(stream_ptr)?;
        if let Ok(other) = obj.cast::<PyView>() {
            return PyView::of_view(other, sp);
        }
        let read = import::import(obj, sp, protocol)?;
        let mut v = PyView::deferred(read.cell, obj.clone().unbind())?;
        let (ndim, itemsize) = v.cell.ndim_itemsize()?;
        // A 0-d import has no strides to speak of: None, as cuda.core gives.
        v.implicit_strides = read.implicit_strides || ndim == 0;
        if v.cell.dtype().is_none() {
            // As cuda.core: elements without a type (a record array, say) are V<itemsize>.
            v.opaque_dtype = Some(dtype::void(obj.py(), itemsize)?);
        }
        Ok(v)
    }

    /// A view of another stridekit view: the same memory, layout, dtype and read-only
    /// flag, kept alive by `other` (no protocol in between); a consumer stream waits for
    /// the GPU work recorded on the memory, as `__dlpack__(stream=...)` orders it.
    fn of_view(other: &Bound<'_, PyView>, stream_ptr: Option<i64>) -> PyResult<Self> {
        let o = other.get();
        let parent = o.rust_view()?;
        if stream_ptr != Some(-1) {
            let consumer = stream::exchange_of(stream_ptr)?;
            let may_write = matches!(parent, DynView::Writable(_));
            // SAFETY: a stream handle given to a view constructor is the caller's live
            // stream (trusted as every CUDA binding for Python trusts it).
            unsafe { parent.as_view().order_consumer(consumer, may_write) }.py_err()?;
        }
        let r = parent.as_view();
        let l = r.layout();
        let first = r
            .ptr()
            .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
        let at_zero = StridedLayout::new(l.shape(), l.strides(), l.itemsize()).py_err()?;
        let owner = other.clone().into_any().unbind();
        let view = match parent {
            DynView::ReadOnly(v) => DynView::ReadOnly(v.clone()),
            // SAFETY: `owner` keeps the parent (and so the memory) alive; the span is the
            // parent's own; Python has no aliasing rules (as in cuda.core).
            DynView::Writable(_) => DynView::Writable(
                unsafe {
                    StridedMemoryViewMut::from_foreign_span_mut(first, &at_zero, r.dtype(), owner)
                }
                .py_err()?,
            ),
        };
        let mut v = PyView::of(view, other.clone().into_any().unbind());
        v.implicit_strides = o.implicit_strides;
        v.opaque_dtype = o.opaque_dtype.as_ref().map(|d| d.clone_ref(other.py()));
        Ok(v)
    }

    fn ptr_object(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        read_once(py, &self.cache.ptr, || {
            Ok(self.first.into_pyobject(py)?.into_any().unbind())
        })
    }

    fn shape_tuple(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        read_once(py, &self.cache.shape, || {
            Ok(PyTuple::new(py, self.cell.shape_strides()?.0)?.unbind())
        })
    }

    fn strides_tuple(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        read_once(py, &self.cache.strides, || {
            Ok(PyTuple::new(py, self.cell.shape_strides()?.1)?.unbind())
        })
    }

    fn dtype_object(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        read_once(py, &self.cache.dtype, || {
            match (&self.opaque_dtype, self.cell.dtype()) {
                (Some(o), None) => Ok(o.clone_ref(py)),
                (_, d) => dtype::to_numpy(py, d),
            }
        })
    }

    fn read(&self) -> PyResult<StridedMemoryView<'_>> {
        self.cell.read()
    }

    /// The fields both array interfaces share (version 3): shape, typestr and descr (the
    /// dtype's, or `|V<itemsize>` without one), data, strides in bytes (None when
    /// C-contiguous).
    fn interface_dict(&self, py: Python<'_>, r: &StridedMemoryView<'_>) -> PyResult<Py<PyDict>> {
        let l = r.layout();
        let isz = l.itemsize();
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", self.shape_tuple(py)?)?;
        let dt = self.dtype_object(py)?.into_bound(py);
        if dt.is_none() {
            let ts = format!("|V{isz}");
            d.set_item("typestr", &ts)?;
            d.set_item("descr", vec![("", ts)])?;
        } else {
            d.set_item("typestr", dt.getattr("str")?)?;
            d.set_item("descr", dt.getattr("descr")?)?;
        }
        d.set_item("data", (self.first, self.cell.is_read_only()))?;
        if l.is_contiguous_c() {
            d.set_item("strides", py.None())?;
        } else {
            let bytes: Vec<i64> = l.strides().iter().map(|s| s * isz as i64).collect();
            d.set_item("strides", PyTuple::new(py, bytes)?)?;
        }
        Ok(d.unbind())
    }

    /// A layout relative to element 0 (what Python sees) moved to the view's base.
    fn to_internal(&self, l: &StridedLayout) -> PyResult<StridedLayout> {
        let off = first_offset(&self.read()?);
        StridedLayout::with_offset(l.shape(), l.strides(), l.itemsize(), l.slice_offset() + off)
            .py_err()
    }
}

fn kind_device(v: &StridedMemoryView<'_>) -> (i32, i32) {
    device_pair(v.kind(), v.device_id())
}

/// DLPack's (device type, device id) of memory of this kind (`device_id` a view's).
fn device_pair(kind: MemoryKind, device_id: i32) -> (i32, i32) {
    match kind {
        MemoryKind::Device => (2, device_id.max(0)),
        MemoryKind::PinnedHost => (3, 0),
        MemoryKind::Managed => (13, 0),
        MemoryKind::Host => (1, 0),
    }
}

/// Deletes an unconsumed exported tensor when its capsule dies.
unsafe extern "C" fn capsule_destructor(cap: *mut ffi::PyObject) {
    // SAFETY: called by Python with the dying capsule; only a capsule still named as
    // produced (not renamed "used_*" by a consumer) owns its tensor.
    unsafe {
        if ffi::PyCapsule_IsValid(cap, VERSIONED.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr())
                as *mut stridekit::dlpack::DLManagedTensorVersioned;
            if let Some(d) = (*t).deleter {
                d(t)
            }
        } else if ffi::PyCapsule_IsValid(cap, LEGACY.as_ptr()) == 1 {
            let t = ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr())
                as *mut stridekit::dlpack::DLManagedTensor;
            if let Some(d) = (*t).deleter {
                d(t)
            }
        }
    }
}

fn capsule(py: Python<'_>, ptr: *mut c_void, name: &'static CStr) -> PyResult<Py<PyAny>> {
    // SAFETY: `ptr` is an owned managed tensor; the destructor deletes it unless consumed.
    let cap = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(capsule_destructor)) };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, cap) }.map(Bound::unbind)
}

#[pymethods]
impl PyView {
    /// A view of `obj`: DLPack first (the C exchange API, then `__dlpack__` up to 1.3,
    /// with stream negotiation), then the CUDA Array Interface (the consumer stream
    /// `stream_ptr` waits for the producer's), then NumPy's array interface.
    /// `stream_ptr`: None orders on the legacy default stream, -1 opts out of ordering.
    #[new]
    #[pyo3(signature = (obj, stream_ptr = None))]
    fn new(obj: &Bound<'_, PyAny>, stream_ptr: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        PyView::import(obj, stream_ptr, Protocol::Any)
    }

    /// DLPack 1.3's C exchange API (a capsule named "dlpack_exchange_api" holding the
    /// function table): consumers take views without the Python protocol.
    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::exchange::capsule(py)
    }

    /// The same table under the name some consumers look for.
    #[classattr]
    fn __c_dlpack_exchange_api__(py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::exchange::capsule(py)
    }

    /// A view through DLPack only (`__dlpack__`, or the C exchange API).
    #[staticmethod]
    #[pyo3(signature = (obj, stream_ptr = None))]
    fn from_dlpack(
        obj: &Bound<'_, PyAny>,
        stream_ptr: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        PyView::import(obj, stream_ptr, Protocol::Dlpack)
    }

    /// A view through the CUDA Array Interface only.
    #[staticmethod]
    #[pyo3(signature = (obj, stream_ptr = None))]
    fn from_cuda_array_interface(
        obj: &Bound<'_, PyAny>,
        stream_ptr: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        PyView::import(obj, stream_ptr, Protocol::CudaArrayInterface)
    }

    /// A view through NumPy's array interface only (host memory; no stream).
    #[staticmethod]
    fn from_array_interface(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        PyView::import(obj, None, Protocol::ArrayInterface)
    }

    /// A view through the best protocol `obj` offers (what the constructor does).
    #[staticmethod]
    #[pyo3(signature = (obj, stream_ptr = None))]
    fn from_any_interface(
        obj: &Bound<'_, PyAny>,
        stream_ptr: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        PyView::import(obj, stream_ptr, Protocol::Any)
    }

    /// A view of `buffer`: `shape` and `strides` (in elements; None: C-contiguous)
    /// with `itemsize` bytes per element or a `dtype` (one is needed; both must agree),
    /// offsets from the buffer's start. A `StridedLayout` may stand for shape, strides
    /// and itemsize. `buffer` is a stridekit `Buffer`, or another library's buffer with
    /// `handle` and `size` (cuda.core's `Buffer`), which the view keeps alive.
    #[staticmethod]
    #[pyo3(signature = (buffer, shape, strides = None, *, itemsize = None, dtype = None, is_readonly = false))]
    fn from_buffer(
        buffer: &Bound<'_, PyAny>,
        shape: &Bound<'_, PyAny>,
        strides: Option<Vec<i64>>,
        itemsize: Option<usize>,
        dtype: Option<&Bound<'_, PyAny>>,
        is_readonly: bool,
    ) -> PyResult<Self> {
        let element = dtype::element_from_py(dtype)?;
        let dt = element.as_ref().and_then(dtype::Element::dtype);
        let opaque = element.as_ref().and_then(|e| e.opaque(buffer.py()));
        let mut implicit = false;
        let l = match shape.downcast::<PyLayout>() {
            Ok(layout) => {
                if strides.is_some() {
                    return Err(PyTypeError::new_err(
                        "from_buffer: strides come with a shape, not with a StridedLayout",
                    ));
                }
                let l = layout.borrow().inner.clone();
                if itemsize.is_some_and(|i| i != l.itemsize()) {
                    return Err(PyValueError::new_err(format!(
                        "from_buffer: itemsize {itemsize:?} differs from the layout's {}",
                        l.itemsize()
                    )));
                }
                l
            }
            Err(_) => {
                let shape: Vec<i64> = shape.extract()?;
                let isz = match (itemsize, &element) {
                    (Some(i), Some(e)) if i != e.itemsize() => {
                        return Err(PyValueError::new_err(format!(
                            "from_buffer: itemsize {i} differs from the dtype's {}",
                            e.itemsize()
                        )))
                    }
                    (Some(i), _) => i,
                    (None, Some(e)) => e.itemsize(),
                    // As cuda.core's tests expect: a ValueError.
                    (None, None) => {
                        return Err(PyValueError::new_err(
                            "from_buffer: itemsize or dtype must be specified, so the element size is known",
                        ))
                    }
                };
                implicit = strides.is_none();
                match strides {
                    Some(s) => StridedLayout::new(&shape, &s, isz),
                    None => StridedLayout::dense(&shape, isz, stridekit::Order::C),
                }
                .py_err()?
            }
        };
        if let Some(e) = element.as_ref().filter(|e| e.dtype().is_none()) {
            if e.itemsize() != l.itemsize() {
                return Err(PyValueError::new_err(format!(
                    "from_buffer: the dtype's itemsize {} differs from the layout's {}",
                    e.itemsize(),
                    l.itemsize()
                )));
            }
        }
        let b = match buffer.cast::<PyBuffer>() {
            Ok(own) => own.get().inner.clone(),
            Err(_) => {
                let py = buffer.py();
                let (handle, size) = match (buffer.getattr("handle"), buffer.getattr("size")) {
                    (Ok(h), Ok(s)) => (h, s.extract::<usize>()?),
                    _ => {
                        return Err(PyTypeError::new_err(
                            "from_buffer: buffer must be a stridekit Buffer or have `handle` and `size` (cuda.core's Buffer)",
                        ))
                    }
                };
                PyBuffer::from_handle(py, &handle, size, None, Some(buffer.clone().unbind()), None)?
                    .inner
                    .clone()
            }
        };
        let view = if is_readonly {
            DynView::ReadOnly(StridedMemoryView::from_shared_buffer(b, l, dt).py_err()?)
        } else {
            // SAFETY: Python has no aliasing rules; like cuda.core, writes through two
            // views of one buffer are the caller's to order.
            DynView::Writable(
                unsafe { StridedMemoryViewMut::from_shared_buffer_mut(b, l, dt) }.py_err()?,
            )
        };
        let mut v = PyView::of(view, buffer.clone().into_any().unbind());
        v.implicit_strides = implicit;
        v.opaque_dtype = opaque;
        v.given_layout = shape.cast::<PyLayout>().ok().map(|l| l.clone().unbind());
        Ok(v)
    }

    /// The same memory with another layout (relative to `ptr`) and/or dtype.
    #[pyo3(signature = (layout = None, dtype = None))]
    fn view(
        slf: &Bound<'_, Self>,
        layout: Option<Bound<'_, PyLayout>>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let me = slf.borrow();
        let r = me.read()?;
        let l = match &layout {
            Some(l) => me.to_internal(&l.borrow().inner)?,
            None => r.layout().clone(),
        };
        let py = slf.py();
        let (dt, opaque) = match dtype::element_from_py(dtype)? {
            Some(e) => {
                if e.dtype().is_none() && e.itemsize() != l.itemsize() {
                    return Err(PyValueError::new_err(format!(
                        "view: the dtype's itemsize {} differs from the layout's {}",
                        e.itemsize(),
                        l.itemsize()
                    )));
                }
                (e.dtype(), e.opaque(py))
            }
            // The same elements: an opaque dtype carries over where the itemsize does.
            None => (
                r.dtype(),
                me.opaque_dtype
                    .as_ref()
                    .filter(|_| l.itemsize() == r.layout().itemsize())
                    .map(|o| o.clone_ref(py)),
            ),
        };
        let first = r
            .ptr()
            .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
        let at_zero = StridedLayout::new(l.shape(), l.strides(), l.itemsize()).py_err()?;
        let owner = slf.clone().into_any().unbind();
        let view = if me.cell.is_read_only() {
            // The new view must stay inside the parent's memory.
            r.view(l, dt).py_err()?;
            // SAFETY: inside the parent's memory (checked above); `owner` keeps the parent
            // (and so the memory) alive.
            DynView::ReadOnly(
                unsafe { StridedMemoryView::from_foreign_span(first, &at_zero, dt, owner) }
                    .py_err()?,
            )
        } else {
            r.view(l, dt).py_err()?;
            // SAFETY: inside the parent's memory (checked above); `owner` keeps the parent
            // (and so the memory) alive; Python has no aliasing rules.
            DynView::Writable(
                unsafe { StridedMemoryViewMut::from_foreign_span_mut(first, &at_zero, dt, owner) }
                    .py_err()?,
            )
        };
        let mut v = PyView::of(view, me.exporting_obj.clone_ref(py));
        v.opaque_dtype = opaque;
        v.given_layout = layout.map(Bound::unbind);
        Ok(v)
    }

    /// Address of element (0, ..., 0).
    #[getter]
    fn ptr(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.ptr_object(py)
    }
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        self.shape_tuple(py)
    }
    /// Strides in elements; None for a 0-d view, and (as in cuda.core) for a C-contiguous
    /// array its producer described without strides (`layout.strides` has the numbers).
    #[getter]
    fn strides(&self, py: Python<'_>) -> PyResult<Option<Py<PyTuple>>> {
        if self.implicit_strides {
            return Ok(None);
        }
        Ok(Some(self.strides_tuple(py)?))
    }
    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.volume
    }
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.dtype_object(py)
    }
    /// The device ordinal, -1 for memory that belongs to no device.
    #[getter]
    fn device_id(&self) -> i32 {
        self.device_id
    }
    #[getter]
    fn is_device_accessible(&self) -> bool {
        self.device_accessible
    }
    #[getter]
    fn readonly(&self) -> bool {
        self.cell.is_read_only()
    }
    #[getter]
    fn exporting_obj(&self, py: Python<'_>) -> Py<PyAny> {
        self.exporting_obj.clone_ref(py)
    }
    /// The layout, relative to `ptr` (one object per view).
    #[getter]
    fn layout(&self, py: Python<'_>) -> PyResult<Py<PyLayout>> {
        if let Some(l) = self.layout_cache.get() {
            return Ok(l.clone_ref(py));
        }
        let r = self.read()?;
        let l = r.layout();
        let made = Py::new(
            py,
            PyLayout::from(StridedLayout::new(l.shape(), l.strides(), l.itemsize()).py_err()?),
        )?;
        Ok(self.layout_cache.get_or_init(|| made).clone_ref(py))
    }

    /// cuda.core's name for the layout (private there, so code written for cuda.core
    /// reads it): the layout object the view was made from, where it was made from one
    /// (its `slice_offset` is where `ptr` lies), else `layout`.
    #[getter]
    fn _layout(&self, py: Python<'_>) -> PyResult<Py<PyLayout>> {
        match &self.given_layout {
            Some(l) => Ok(l.clone_ref(py)),
            None => self.layout(py),
        }
    }

    /// Copies `other` into this view (any layouts, any memory kinds), ordered on `stream`
    /// (None: the legacy default stream). `blocking`: None waits for copies that touch
    /// host memory and not for device-to-device ones. `allocator` supplies temporaries.
    /// Copies never reinterpret: views of different dtypes are refused unless `bits` is
    /// True (the bytes are copied as they are).
    #[pyo3(signature = (other, stream = None, allocator = None, blocking = None, *, bits = false))]
    fn copy_from(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
        allocator: Option<PyRef<'_, PyMemoryResource>>,
        blocking: Option<bool>,
        bits: bool,
    ) -> PyResult<()> {
        let py = slf.py();
        if other.is(slf) {
            if slf.borrow().cell.is_read_only() {
                return Err(PyValueError::new_err(
                    "copy: the destination view is read-only",
                ));
            }
            return Ok(());
        }
        // Shared borrows only: a copy never blocks attribute reads or another thread's
        // copy from the same source; writers to one view take its copy lock.
        let src = other.downcast::<PyView>()?.borrow();
        let me = slf.borrow();
        let s = stream::exchange(stream)?;
        let DynView::Writable(dst_view) = &me.rust_view()? else {
            return Err(PyValueError::new_err(
                "copy: the destination view is read-only",
            ));
        };
        let from = src.read()?;
        let alloc = allocator.as_deref().map(|a| a.as_dyn());
        let lock = &me.copy_lock;
        py.detach(|| {
            // The lock guards no data (a unit), so a poisoned one is still a lock.
            let _writer = lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // SAFETY: the copy lock makes this the one writer of the memory through this
            // view; Python has no aliasing rules (as in cuda.core).
            let mut dst = unsafe { dst_view.writable_alias() };
            let opts = CopyOptions {
                blocking,
                allocator: alloc,
                bits,
                prefetch_managed: None,
            };
            // SAFETY: stream handles from Python name live streams (as in every CUDA
            // binding; the driver cannot check them).
            unsafe { dst.copy_from_stream_value(&from, s, &opts) }
        })
        .py_err()
    }

    /// Copies this view into `other`; see `copy_from`.
    #[pyo3(signature = (other, stream = None, allocator = None, blocking = None, *, bits = false))]
    fn copy_to(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyView>,
        stream: Option<&Bound<'_, PyAny>>,
        allocator: Option<PyRef<'_, PyMemoryResource>>,
        blocking: Option<bool>,
        bits: bool,
    ) -> PyResult<()> {
        PyView::copy_from(other, slf.as_any(), stream, allocator, blocking, bits)
    }

    /// DLPack export: the memory without a copy, kept alive until the consumer is done.
    /// Read-only views are flagged READ_ONLY. `copy=True` is refused (no copies here).
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "stridekit exports without copying; copy=True is not supported",
            ));
        }
        if self.rust_view()?.dtype().is_none() {
            // As cuda.core: DLPack describes typed elements.
            return Err(PyBufferError::new_err(
                "the view has no dtype, and a DLPack tensor needs one: give it one with view(dtype=...) first (__array_interface__ and __cuda_array_interface__ export its bytes)",
            ));
        }
        let r = self.read()?;
        if let Some(d) = dl_device {
            if d != kind_device(&r) {
                return Err(PyBufferError::new_err(format!(
                    "the memory is on DLPack device {:?}, not {d:?}",
                    kind_device(&r)
                )));
            }
        }
        // The consumer's stream waits for the GPU work stridekit recorded on the memory
        // (every use if the consumer may write; the writes if the export is read-only).
        let consumer = stream::exchange(stream)?;
        let may_write = matches!(self.rust_view()?, DynView::Writable(_));
        // SAFETY: a handle passed to `__dlpack__` is the consumer's live stream (the
        // protocol's contract, trusted as every CUDA binding for Python trusts it).
        unsafe {
            self.rust_view()?
                .as_view()
                .order_consumer(consumer, may_write)
        }
        .py_err()?;
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        let ptr: *mut c_void = match (&self.rust_view()?, versioned) {
            (DynView::ReadOnly(v), true) => v.to_dlpack().py_err()?.into_raw().cast(),
            (DynView::ReadOnly(v), false) => v.to_dlpack_legacy().py_err()?.into_raw().cast(),
            // SAFETY: Python has no aliasing rules; ordering writes is the caller's.
            (DynView::Writable(v), true) => unsafe { v.to_dlpack_writable() }
                .py_err()?
                .into_raw()
                .cast(),
            // SAFETY: as above.
            (DynView::Writable(v), false) => unsafe { v.to_dlpack_writable_legacy() }
                .py_err()?
                .into_raw()
                .cast(),
        };
        capsule(py, ptr, if versioned { VERSIONED } else { LEGACY })
    }

    /// The CUDA Array Interface (version 3) of a view of device-accessible memory, without
    /// a copy: `data` is element 0's address and the read-only flag, `strides` in bytes
    /// (None when C-contiguous). Its `stream` is 1, the legacy default stream, which is
    /// made to wait for every GPU use stridekit recorded on the memory first (the writes
    /// only, for a read-only view): a consumer that orders itself after `stream`, as the
    /// protocol asks, sees those uses done. Host memory has no such interface.
    #[getter]
    fn __cuda_array_interface__(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        if !self.device_accessible {
            return Err(PyAttributeError::new_err(
                "a view of pageable host memory has no __cuda_array_interface__ (kernels cannot reach it); use __array_interface__",
            ));
        }
        let r = self.read()?;
        let writable = !self.cell.is_read_only();
        // SAFETY: the legacy default stream is no foreign handle.
        unsafe { r.order_consumer(stridekit::StreamValue::LegacyDefault, writable) }.py_err()?;
        let d = self.interface_dict(py, &r)?;
        d.bind(py).set_item("stream", 1)?;
        Ok(d)
    }

    /// NumPy's array interface (version 3) of a view of host-accessible memory (pageable,
    /// pinned or managed), without a copy; GPU work stridekit queued on the memory is
    /// waited for first. Device memory has no such interface.
    #[getter]
    fn __array_interface__(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let r = self.read()?;
        if !r.is_host_accessible() {
            return Err(PyAttributeError::new_err(
                "a view of device memory has no __array_interface__ (the CPU cannot read it); use __cuda_array_interface__ or DLPack",
            ));
        }
        r.wait_for_host().py_err()?;
        self.interface_dict(py, &r)
    }

    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        // A view not made yet answers from its tensor's checked description.
        if let (Some(f), None) = (self.cell.facts(), self.cell.made_view()) {
            return Ok(device_pair(f.kind, f.device_id()));
        }
        Ok(kind_device(&self.read()?))
    }

    /// A tiled TMA descriptor of this view: `box_dim` and the keywords, or the same
    /// bundled as `options` (a `TensorMapDescriptorOptions`). Enum arguments take the
    /// `TensorMap*` enums; `data_type` also takes a NumPy or ml_dtypes dtype.
    #[pyo3(signature = (box_dim = None, *, options = None, element_strides = None, data_type = None, interleave = None, swizzle = None, l2_promotion = None, oob_fill = None))]
    #[allow(clippy::too_many_arguments)]
    fn as_tensor_map(
        &self,
        box_dim: Option<Vec<u32>>,
        options: Option<&Bound<'_, PyAny>>,
        element_strides: Option<Vec<u32>>,
        data_type: Option<&Bound<'_, PyAny>>,
        interleave: Option<&Bound<'_, PyAny>>,
        swizzle: Option<&Bound<'_, PyAny>>,
        l2_promotion: Option<&Bound<'_, PyAny>>,
        oob_fill: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::tma::PyTensorMap> {
        let args = crate::tma::TiledArgs {
            box_dim,
            element_strides,
            data_type,
            interleave,
            swizzle,
            l2_promotion,
            oob_fill,
        };
        let opts = match options {
            Some(o) if !o.is_none() => crate::tma::TiledArgs::from_options(o, &args)?,
            _ => args.into_options()?,
        };
        crate::tma::tiled(&self.static_alias()?, &opts)
    }

    /// An `sk_view` of this view for C and Cython (a capsule named "stridekit.sk_view";
    /// its pointer is a `sk_view*` whose fields stay valid while the capsule lives).
    fn as_c_view(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::cview::capsule(py, self.rust_view()?)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r = self.read()?;
        let opaque = self
            .opaque_dtype
            .as_ref()
            .and_then(|o| o.bind(py).str().ok())
            .map(|s| s.to_string());
        let t = |v: &[i64]| {
            let p: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            if p.len() == 1 {
                format!("({},)", p[0])
            } else {
                format!("({})", p.join(", "))
            }
        };
        Ok(format!(
            "StridedMemoryView(ptr={:#x}, shape={}, strides={}, itemsize={}, dtype={}, device_id={}, readonly={})",
            first_ptr(&r),
            t(r.shape()),
            t(r.layout().strides()),
            r.layout().itemsize(),
            match (r.dtype(), opaque) {
                (Some(d), _) => format!("{d:?}").to_lowercase(),
                (None, Some(o)) => o,
                (None, None) => "None".to_string(),
            },
            r.device_id(),
            if self.cell.is_read_only() { "True" } else { "False" }
        ))
    }
}
