//! `StridedMemoryView` for Python: any DLPack, CUDA Array Interface or NumPy array
//! interface object, or a `Buffer` with a layout; copies; DLPack export; the C view.

use crate::dtype;
use crate::errors::IntoPy;
use crate::layout::PyLayout;
use crate::memory::{PyBuffer, PyMemoryResource};
use crate::stream;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::ffi::{c_void, CStr};
use stridekit::dlpack::DlpackTensor;
use stridekit::view::DynView;
use stridekit::StreamValue;
use stridekit::{CopyOptions, MemoryKind, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

const VERSIONED: &CStr = c"dltensor_versioned";
const LEGACY: &CStr = c"dltensor";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";

/// A strided view of another library's array (or of a `Buffer`): pointer, shape, strides,
/// dtype, device; copies between any two views; DLPack export.
#[pyclass(name = "StridedMemoryView", module = "stridekit")]
pub struct PyView {
    pub(crate) view: DynView<'static>,
    exporting_obj: Py<PyAny>,
    /// shape, strides and dtype as Python objects, made on first use.
    cache: std::sync::OnceLock<(Py<PyTuple>, Py<PyTuple>, Py<PyAny>)>,
    /// Held by a copy into this view: copies into one view from several threads run one
    /// at a time, while reads of its attributes go on.
    copy_lock: std::sync::Mutex<()>,
}

/// Element 0's offset (in elements) from the view's base.
fn first_offset(v: &StridedMemoryView<'_>) -> i64 {
    v.layout().slice_offset()
}

fn first_ptr(v: &StridedMemoryView<'_>) -> u64 {
    let l = v.layout();
    v.ptr()
        .wrapping_add_signed(first_offset(v) * l.itemsize() as i64)
}

/// Takes a DLPack capsule over (renaming it "used_*" as the protocol says).
fn take_capsule(cap: &Bound<'_, PyAny>) -> PyResult<DlpackTensor> {
    let p = cap.as_ptr();
    // SAFETY: `p` is a live object (borrowed); PyCapsule_IsValid accepts any object.
    let versioned = unsafe { ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) } == 1;
    // SAFETY: as above.
    let legacy = unsafe { ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) } == 1;
    if !versioned && !legacy {
        return Err(PyTypeError::new_err(
            "__dlpack__ returned something other than an unused \"dltensor\" or \"dltensor_versioned\" capsule",
        ));
    }
    let (name, used) = if versioned {
        (VERSIONED, USED_VERSIONED)
    } else {
        (LEGACY, USED_LEGACY)
    };
    // SAFETY: a valid capsule of that name (checked above).
    let raw = unsafe { ffi::PyCapsule_GetPointer(p, name.as_ptr()) };
    // SAFETY: renaming a valid capsule to a static name; from now on its destructor
    // leaves the tensor to us.
    if unsafe { ffi::PyCapsule_SetName(p, used.as_ptr()) } != 0 {
        return Err(PyErr::fetch(cap.py()));
    }
    let t = if versioned {
        // SAFETY: the producer handed the tensor over through the capsule.
        unsafe { DlpackTensor::from_raw_versioned(raw.cast()) }
    } else {
        // SAFETY: as above, for the legacy struct the "dltensor" capsule carries.
        unsafe { DlpackTensor::from_raw_legacy(raw.cast()) }
    };
    t.py_err()
}

/// `__dlpack__` of `obj`, with the consumer stream the protocol wants for CUDA memory.
fn dlpack_view(obj: &Bound<'_, PyAny>, stream_ptr: Option<i64>) -> PyResult<DynView<'static>> {
    let py = obj.py();
    let (dev_type, _dev_id): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
    let on_gpu = matches!(dev_type, 2 | 13);
    let kwargs = PyDict::new(py);
    if on_gpu {
        // Passed as decoded by the one rule: -1 opts out of synchronisation, None and 1
        // are the legacy default stream (0 was refused before).
        kwargs.set_item("stream", stream_ptr)?;
    }
    kwargs.set_item("max_version", (1, 3))?;
    fn call<'py>(obj: &Bound<'py, PyAny>, kw: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        match obj.call_method("__dlpack__", (), Some(kw)) {
            Ok(c) => Ok(c),
            // Producers from before DLPack 1.0 take no max_version.
            Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => {
                kw.del_item("max_version")?;
                obj.call_method("__dlpack__", (), Some(kw))
            }
            Err(e) => Err(e),
        }
    }
    let cap = match call(obj, &kwargs) {
        Ok(c) => c,
        // Some producers (JAX) take -1 for a stream handle instead of "no ordering":
        // then ask for the legacy default stream's ordering, which is always safe.
        Err(_) if on_gpu && stream_ptr == Some(-1) => {
            let kw = PyDict::new(py);
            kw.set_item("stream", 1)?;
            kw.set_item("max_version", (1, 3))?;
            call(obj, &kw)?
        }
        Err(e) => return Err(e),
    };
    let t = take_capsule(&cap)?;
    let read_only = t
        .flags()
        .contains(stridekit::dlpack::DlpackFlags::READ_ONLY);
    py.detach(|| {
        Ok::<_, stridekit::Error>(if read_only {
            // SAFETY: the producer vouches for the memory; Python has no aliasing rules,
            // so writes elsewhere are the caller's to order, as in cuda.core.
            DynView::ReadOnly(unsafe { StridedMemoryView::from_dlpack(t) }?)
        } else {
            // SAFETY: as above.
            DynView::Writable(unsafe { StridedMemoryViewMut::from_dlpack(t) }?)
        })
    })
    .py_err()
}

const EXCHANGE: &CStr = c"dlpack_exchange_api";

/// The DLPack C exchange API of `obj`'s type (`__dlpack_c_exchange_api__`), if it has one
/// of DLPack major version 1.
fn exchange_api(obj: &Bound<'_, PyAny>) -> Option<&'static stridekit::dlpack::DLPackExchangeAPI> {
    let name = pyo3::intern!(obj.py(), "__dlpack_c_exchange_api__");
    let cap = obj.get_type().getattr(name).ok()?;
    // SAFETY: a live object; PyCapsule_IsValid accepts any object.
    if unsafe { ffi::PyCapsule_IsValid(cap.as_ptr(), EXCHANGE.as_ptr()) } != 1 {
        return None;
    }
    // SAFETY: a valid capsule of that name; the API table lives for the whole process
    // (the exchange API's contract).
    let api = unsafe { ffi::PyCapsule_GetPointer(cap.as_ptr(), EXCHANGE.as_ptr()) }
        as *const stridekit::dlpack::DLPackExchangeAPI;
    // SAFETY: non-null pointers from the capsule point to a static table.
    let api = unsafe { api.as_ref() }?;
    (api.header.version.major == 1 && api.dltensor_from_py_object_no_sync.is_some()).then_some(api)
}

/// A view through the exchange API's non-owning path: the producer fills a `DLTensor`
/// valid while `obj` lives (the view keeps `obj`); with a consumer stream, the consumer
/// waits for the producer's current work stream.
fn exchange_view(
    obj: &Bound<'_, PyAny>,
    api: &stridekit::dlpack::DLPackExchangeAPI,
    stream_ptr: Option<i64>,
) -> PyResult<Option<DynView<'static>>> {
    let Some(fill) = api.dltensor_from_py_object_no_sync else {
        return Ok(None);
    };
    // SAFETY: DLTensor is plain data; the producer overwrites every field.
    let mut dl: stridekit::dlpack::DLTensor = unsafe { std::mem::zeroed() };
    // SAFETY: `obj` is of the type that owns `api`; `dl` is writable.
    if unsafe { fill(obj.as_ptr().cast(), &mut dl) } != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    let dev = dl.device;
    if matches!(dev.device_type.0, 2 | 13) && stream_ptr != Some(-1) {
        if let Some(current) = api.current_work_stream {
            let mut s: *mut c_void = std::ptr::null_mut();
            // SAFETY: the producer's own function, with a writable out-pointer.
            if unsafe { current(dev.device_type, dev.device_id, &mut s) } != 0 {
                return Err(PyErr::fetch(obj.py()));
            }
            // The producer names its stream as CUDA does: NULL is the legacy default.
            let producer = match s as usize {
                0 => StreamValue::LegacyDefault,
                h => StreamValue::Handle(h),
            };
            let consumer = stream::exchange_of(stream_ptr)?;
            stream::order_after(producer, consumer, dev.device_id.max(0) as usize).py_err()?;
        }
    }
    let owner = obj.clone().unbind();
    // SAFETY: the producer's descriptor is valid while `obj` lives, which `owner` keeps;
    // Python has no aliasing rules (as in cuda.core).
    let v = unsafe { StridedMemoryViewMut::from_dltensor(&dl, owner) }.py_err()?;
    Ok(Some(DynView::Writable(v)))
}

/// The DLPack view of `obj`, or None (the caller then reads an array interface) when it
/// has no `__dlpack__`; when its exporter refuses (BufferError: NumPy does for object and
/// non-native byte-order arrays) and an array interface is there to say precisely what
/// the array holds; or when the tensor it exports is refused (ValueError) and it also
/// offers the CUDA Array Interface. CuPy's DLPack export divides negative byte strides
/// as unsigned numbers (stride -16 bytes of float16 becomes 2^63 - 8 elements), which no
/// layout accepts; its CUDA Array Interface carries the same strides correctly.
fn dlpack_or_fallback(
    obj: &Bound<'_, PyAny>,
    sp: Option<i64>,
) -> PyResult<Option<DynView<'static>>> {
    if !obj.hasattr("__dlpack__")? {
        return Ok(None);
    }
    match dlpack_view(obj, sp) {
        Ok(v) => Ok(Some(v)),
        Err(e)
            if e.is_instance_of::<PyBufferError>(obj.py())
                && (obj.hasattr("__cuda_array_interface__")?
                    || obj.hasattr("__array_interface__")?) =>
        {
            Ok(None)
        }
        Err(e)
            if e.is_instance_of::<PyValueError>(obj.py())
                && obj.hasattr("__cuda_array_interface__")? =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The interface's `version`: the CUDA Array Interface has versions 0 to 3, the array
/// interface version 3; anything else (or none, for the CUDA one) is refused rather than
/// read by guesswork.
fn check_interface_version(iface: &Bound<'_, PyDict>, cuda: bool) -> PyResult<()> {
    let name = if cuda {
        "__cuda_array_interface__"
    } else {
        "__array_interface__"
    };
    let version: Option<i64> = match iface.get_item("version")? {
        Some(v) if !v.is_none() => Some(v.extract().map_err(|_| {
            PyValueError::new_err(format!("{name}: version {v} is not an integer"))
        })?),
        _ => None,
    };
    match (cuda, version) {
        (true, Some(0..=3)) | (false, Some(3)) => Ok(()),
        (_, Some(v)) => Err(PyValueError::new_err(format!(
            "{name}: version {v} is not one stridekit reads ({})",
            if cuda { "0 to 3" } else { "3" }
        ))),
        (true, None) => Err(PyValueError::new_err(format!(
            "{name}: no version; the protocol requires one (0 to 3)"
        ))),
        // NumPy always sets it; hand-made dicts without one are read as version 3.
        (false, None) => Ok(()),
    }
}

/// Every field type in an array-interface `descr` (a list of `(name, typestr)`,
/// `(name, typestr, shape)` or `(name, [nested descr])`), checked like the typestr:
/// objects and foreign byte orders anywhere in a record refuse the whole array.
fn check_descr(op: &'static str, descr: &Bound<'_, PyAny>) -> PyResult<()> {
    let Ok(fields) = descr.downcast::<pyo3::types::PyList>() else {
        return Ok(());
    };
    for field in fields.iter() {
        let Ok(t) = field.downcast::<pyo3::types::PyTuple>() else {
            continue;
        };
        let Ok(ty) = t.get_item(1) else { continue };
        if let Ok(s) = ty.extract::<String>() {
            stridekit::dtype_from_typestr(op, &s).py_err()?;
        } else {
            check_descr(op, &ty)?;
        }
    }
    Ok(())
}

/// A view from an array-interface dict (`__cuda_array_interface__` or `__array_interface__`).
fn interface_view(
    obj: &Bound<'_, PyAny>,
    iface: &Bound<'_, PyDict>,
    cuda: bool,
    stream_ptr: Option<i64>,
) -> PyResult<DynView<'static>> {
    let get = |k: &str| iface.get_item(k);
    if let Some(m) = get("mask")? {
        if !m.is_none() {
            return Err(PyBufferError::new_err("masked arrays cannot be viewed"));
        }
    }
    let shape: Vec<i64> = get("shape")?
        .ok_or_else(|| PyValueError::new_err("the interface has no shape"))?
        .extract()?;
    check_interface_version(iface, cuda)?;
    let typestr: String = get("typestr")?
        .ok_or_else(|| PyValueError::new_err("the interface has no typestr"))?
        .extract()?;
    const OP: &str = "StridedMemoryView (array interface)";
    let (dt, itemsize) = stridekit::dtype_from_typestr(OP, &typestr).py_err()?;
    // A record type may hold objects in its fields: `descr` lists them.
    if let Some(descr) = get("descr")? {
        check_descr(OP, &descr)?;
    }
    let (ptr, readonly): (u64, bool) = get("data")?
        .ok_or_else(|| PyValueError::new_err("the interface has no data"))?
        .extract()?;
    let strides: Option<Vec<i64>> = match get("strides")? {
        Some(s) if !s.is_none() => Some(s.extract()?),
        _ => None,
    };
    let layout = match strides {
        Some(s) => StridedLayout::from_byte_strides(&shape, &s, itemsize),
        None => StridedLayout::dense(&shape, itemsize, stridekit::Order::C),
    }
    .py_err()?;
    let owner = obj.clone().unbind();
    let view = if cuda && layout.volume() == 0 {
        // No element, and often a null pointer that the driver cannot place: the CUDA
        // Array Interface's memory is on the current device (0 when none is current).
        let dev = stridekit::stream::current_device().py_err()?.unwrap_or(0);
        let v =
            StridedMemoryViewMut::empty_on(stridekit::MemoryKind::Device, Some(dev), layout, dt)
                .py_err()?;
        if readonly {
            DynView::ReadOnly(v.into_read_only())
        } else {
            DynView::Writable(v)
        }
    } else if readonly {
        // SAFETY: the exporter vouches for the memory while `owner` lives.
        DynView::ReadOnly(
            unsafe { StridedMemoryView::from_foreign_span(ptr, &layout, dt, owner) }.py_err()?,
        )
    } else {
        // SAFETY: as above; Python has no aliasing rules (as in cuda.core).
        DynView::Writable(
            unsafe { StridedMemoryViewMut::from_foreign_span_mut(ptr, &layout, dt, owner) }
                .py_err()?,
        )
    };
    if cuda {
        let producer: Option<i64> = match get("stream")? {
            Some(s) if !s.is_none() => Some(s.extract()?),
            _ => None,
        };
        let producer = StreamValue::from_cuda_array_interface(producer).py_err()?;
        let consumer = stream::exchange_of(stream_ptr)?;
        let dev = view.as_view().device_ordinal().unwrap_or(0);
        stream::order_after(producer, consumer, dev).py_err()?;
    }
    Ok(view)
}

impl PyView {
    fn of(view: DynView<'static>, exporting_obj: Py<PyAny>) -> Self {
        PyView {
            view,
            exporting_obj,
            cache: std::sync::OnceLock::new(),
            copy_lock: std::sync::Mutex::new(()),
        }
    }

    fn cached(&self, py: Python<'_>) -> PyResult<&(Py<PyTuple>, Py<PyTuple>, Py<PyAny>)> {
        if let Some(c) = self.cache.get() {
            return Ok(c);
        }
        let r = self.read();
        let made = (
            PyTuple::new(py, r.shape())?.unbind(),
            PyTuple::new(py, r.layout().strides())?.unbind(),
            dtype::to_numpy(py, r.dtype())?,
        );
        Ok(self.cache.get_or_init(|| made))
    }

    /// A read-only view of the same memory that keeps it alive by itself (for descriptors
    /// that outlive this object).
    pub(crate) fn static_alias(&self) -> StridedMemoryView<'static> {
        match &self.view {
            DynView::ReadOnly(v) => v.clone(),
            // SAFETY: Python has no aliasing rules; a descriptor only describes the
            // memory, and ordering kernels against writes is the caller's, as in cuda.core.
            DynView::Writable(v) => unsafe { v.shared_alias() },
        }
    }

    fn read(&self) -> StridedMemoryView<'_> {
        self.view.as_view()
    }

    /// A layout relative to element 0 (what Python sees) moved to the view's base.
    fn to_internal(&self, l: &StridedLayout) -> PyResult<StridedLayout> {
        let off = first_offset(&self.read());
        StridedLayout::with_offset(l.shape(), l.strides(), l.itemsize(), l.slice_offset() + off)
            .py_err()
    }
}

fn kind_device(v: &StridedMemoryView<'_>) -> (i32, i32) {
    match v.kind() {
        MemoryKind::Device => (2, v.device_id().max(0)),
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
    /// A view of `obj`: DLPack first (`__dlpack__`, up to 1.3, with stream negotiation),
    /// then the CUDA Array Interface v3 (the consumer stream `stream_ptr` waits for the
    /// producer's), then the NumPy array interface. `stream_ptr=-1` opts out of ordering.
    #[new]
    #[pyo3(signature = (obj, stream_ptr = None))]
    fn new(obj: &Bound<'_, PyAny>, stream_ptr: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let sp = stream::handle(stream_ptr)?;
        if let Some(v) = sp {
            // The one rule first: 0 and values below -1 are refused before any producer
            // is asked.
            StreamValue::decode(v).py_err()?;
        }
        let fast = match exchange_api(obj) {
            Some(api) => exchange_view(obj, api, sp)?,
            None => None,
        };
        let view = if let Some(v) = fast {
            v
        } else if let Some(v) = dlpack_or_fallback(obj, sp)? {
            v
        } else if let Ok(i) = obj.getattr("__cuda_array_interface__") {
            interface_view(obj, i.downcast::<PyDict>()?, true, sp)?
        } else if let Ok(i) = obj.getattr("__array_interface__") {
            interface_view(obj, i.downcast::<PyDict>()?, false, sp)?
        } else {
            return Err(PyBufferError::new_err(format!(
                "{} supports neither DLPack, the CUDA Array Interface nor the array interface",
                obj.get_type().name()?
            )));
        };
        Ok(PyView::of(view, obj.clone().unbind()))
    }

    /// A view of `buffer` with `layout` (offsets from the buffer's start).
    #[classmethod]
    #[pyo3(signature = (buffer, layout, dtype = None, is_readonly = false))]
    fn from_buffer(
        _cls: &Bound<'_, pyo3::types::PyType>,
        buffer: &Bound<'_, PyBuffer>,
        layout: &PyLayout,
        dtype: Option<&Bound<'_, PyAny>>,
        is_readonly: bool,
    ) -> PyResult<Self> {
        let dt = dtype::from_py(dtype)?;
        let b = buffer.get().inner.clone();
        let l = layout.inner.clone();
        let view = if is_readonly {
            DynView::ReadOnly(StridedMemoryView::from_shared_buffer(b, l, dt).py_err()?)
        } else {
            // SAFETY: Python has no aliasing rules; like cuda.core, writes through two
            // views of one buffer are the caller's to order.
            DynView::Writable(
                unsafe { StridedMemoryViewMut::from_shared_buffer_mut(b, l, dt) }.py_err()?,
            )
        };
        Ok(PyView::of(view, buffer.clone().into_any().unbind()))
    }

    /// The same memory with another layout (relative to `ptr`) and/or dtype.
    #[pyo3(signature = (layout = None, dtype = None))]
    fn view(
        slf: &Bound<'_, Self>,
        layout: Option<&PyLayout>,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let me = slf.borrow();
        let r = me.read();
        let l = match layout {
            Some(l) => me.to_internal(&l.inner)?,
            None => r.layout().clone(),
        };
        let dt = match dtype {
            Some(d) => dtype::from_py(Some(d))?,
            None => r.dtype(),
        };
        let first = r
            .ptr()
            .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
        let at_zero = StridedLayout::new(l.shape(), l.strides(), l.itemsize()).py_err()?;
        let owner = slf.clone().into_any().unbind();
        let view = if me.view.is_read_only() {
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
        Ok(PyView::of(view, me.exporting_obj.clone_ref(slf.py())))
    }

    /// Address of element (0, ..., 0).
    #[getter]
    fn ptr(&self) -> u64 {
        first_ptr(&self.read())
    }
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        Ok(self.cached(py)?.0.clone_ref(py))
    }
    /// Strides in elements.
    #[getter]
    fn strides(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        Ok(self.cached(py)?.1.clone_ref(py))
    }
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.cached(py)?.2.clone_ref(py))
    }
    /// The device ordinal, -1 for memory that belongs to no device.
    #[getter]
    fn device_id(&self) -> i32 {
        self.read().device_id()
    }
    #[getter]
    fn is_device_accessible(&self) -> bool {
        self.read().is_device_accessible()
    }
    #[getter]
    fn readonly(&self) -> bool {
        self.view.is_read_only()
    }
    #[getter]
    fn exporting_obj(&self, py: Python<'_>) -> Py<PyAny> {
        self.exporting_obj.clone_ref(py)
    }
    /// The layout, relative to `ptr`.
    #[getter]
    fn layout(&self) -> PyResult<PyLayout> {
        let r = self.read();
        let l = r.layout();
        Ok(StridedLayout::new(l.shape(), l.strides(), l.itemsize())
            .py_err()?
            .into())
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
            if slf.borrow().view.is_read_only() {
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
        let DynView::Writable(dst_view) = &me.view else {
            return Err(PyValueError::new_err(
                "copy: the destination view is read-only",
            ));
        };
        let from = src.read();
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
    #[pyo3(signature = (stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = stream; // stridekit's own work on this memory is ordered by the streams it was given.
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "stridekit exports without copying; copy=True is not supported",
            ));
        }
        let r = self.read();
        if let Some(d) = dl_device {
            if d != kind_device(&r) {
                return Err(PyBufferError::new_err(format!(
                    "the memory is on DLPack device {:?}, not {d:?}",
                    kind_device(&r)
                )));
            }
        }
        let versioned = max_version.is_some_and(|(major, _)| major >= 1);
        let ptr: *mut c_void = match (&self.view, versioned) {
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

    fn __dlpack_device__(&self) -> (i32, i32) {
        kind_device(&self.read())
    }

    /// A tiled TMA descriptor of this view (see `TensorMapDescriptor`).
    #[pyo3(signature = (box_dim, swizzle = 0, interleave = 0, l2_promotion = 0, oob_fill_nan = false, element_strides = None))]
    fn as_tensor_map(
        &self,
        box_dim: Vec<u32>,
        swizzle: u32,
        interleave: u32,
        l2_promotion: u32,
        oob_fill_nan: bool,
        element_strides: Option<Vec<u32>>,
    ) -> PyResult<crate::tma::PyTensorMap> {
        crate::tma::tiled(
            &self.static_alias(),
            &box_dim,
            swizzle,
            interleave,
            l2_promotion,
            oob_fill_nan,
            element_strides,
        )
    }

    /// An `sk_view` of this view for C and Cython (a capsule named "stridekit.sk_view";
    /// its pointer is a `sk_view*` whose fields stay valid while the capsule lives).
    fn as_c_view(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::cview::capsule(py, &self.view)
    }

    fn __repr__(&self) -> String {
        let r = self.read();
        let t = |v: &[i64]| {
            let p: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            if p.len() == 1 {
                format!("({},)", p[0])
            } else {
                format!("({})", p.join(", "))
            }
        };
        format!(
            "StridedMemoryView(ptr={:#x}, shape={}, strides={}, itemsize={}, dtype={}, device_id={}, readonly={})",
            first_ptr(&r),
            t(r.shape()),
            t(r.layout().strides()),
            r.layout().itemsize(),
            r.dtype().map_or("None".to_string(), |d| format!("{d:?}").to_lowercase()),
            r.device_id(),
            if self.view.is_read_only() { "True" } else { "False" }
        )
    }
}
