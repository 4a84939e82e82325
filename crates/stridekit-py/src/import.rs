//! Reading other libraries' arrays: DLPack (capsules and the C exchange API), the CUDA
//! Array Interface and NumPy's array interface, each checked field by field.

use crate::calls::{call_method0, call_method_kw, KwNames};
use crate::dtype;
use crate::errors::IntoPy;
use crate::stream;
use crate::view_cell::ViewCell;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ffi::{c_void, CStr};
use stridekit::dlpack::DlpackTensor;
use stridekit::view::DynView;
use stridekit::StreamValue;
use stridekit::{StridedLayout, StridedMemoryView, StridedMemoryViewMut};

pub(crate) const VERSIONED: &CStr = c"dltensor_versioned";
pub(crate) const LEGACY: &CStr = c"dltensor";
const USED_VERSIONED: &CStr = c"used_dltensor_versioned";
const USED_LEGACY: &CStr = c"used_dltensor";

/// Takes a DLPack capsule over (renaming it "used_*" as the protocol says).
fn take_capsule(cap: &Bound<'_, PyAny>) -> PyResult<DlpackTensor> {
    let p = cap.as_ptr();
    // SAFETY: `p` is a live object (borrowed); PyCapsule_IsValid accepts any object.
    let versioned = unsafe { ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) } == 1;
    // SAFETY: as above (asked only when the capsule is not a versioned one).
    let legacy = !versioned && unsafe { ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) } == 1;
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
fn dlpack_view(obj: &Bound<'_, PyAny>, stream_ptr: Option<i64>) -> PyResult<ViewCell> {
    let py = obj.py();
    // With no consumer stream nothing depends on the device: `stream` is left out, which
    // means the legacy default stream for CUDA producers (the array API), as stridekit's
    // None does. Otherwise the device type says whether a stream may be passed at all.
    let on_gpu = match stream_ptr {
        None => false,
        Some(_) => {
            let d = call_method0(obj, pyo3::intern!(py, "__dlpack_device__"))?;
            // Only the device type decides; a (type, id) pair is read without building
            // a Rust tuple, anything else as one.
            let dev_type: i32 = match d.downcast::<pyo3::types::PyTuple>() {
                Ok(t) if t.len() == 2 => t.get_borrowed_item(0)?.extract()?,
                _ => d.extract::<(i32, i32)>()?.0,
            };
            matches!(dev_type, 2 | 13)
        }
    };
    // Passed as decoded by the one rule: -1 opts out of synchronisation, 1 is the legacy
    // default stream, and 0 (CUDA's NULL stream, which the array API forbids a consumer
    // to pass) goes to the producer as 1.
    let stream = match stream_ptr {
        Some(s) if on_gpu => Some(if s == 0 { 1 } else { s }.into_pyobject(py)?.into_any()),
        _ => None,
    };
    let cap = match call_dlpack(obj, stream.as_ref()) {
        Ok(c) => c,
        // Some producers (JAX) take -1 for a stream handle instead of "no ordering":
        // then ask for the legacy default stream's ordering, which is always safe.
        Err(_) if on_gpu && stream_ptr == Some(-1) => {
            call_dlpack(obj, Some(&1i64.into_pyobject(py)?.into_any()))?
        }
        Err(e) => return Err(e),
    };
    let t = take_capsule(&cap)?;
    // The GIL stays held: making a view asks the driver nothing for CUDA tensors (their
    // device is checked at first use) and one short question for host ones.
    // SAFETY: the producer vouches for the memory; Python has no aliasing rules, so
    // writes elsewhere are the caller's to order, as in cuda.core. Checked now, made on
    // first use.
    unsafe { ViewCell::owned(t) }
}

/// `obj.__dlpack__(stream=stream, max_version=(1, 3))`, `stream` left out when None; a
/// producer from before DLPack 1.0, which takes no `max_version` (a TypeError), is asked
/// again without it.
fn call_dlpack<'py>(
    obj: &Bound<'py, PyAny>,
    stream: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    /// The keyword names of each call, made once.
    struct Names {
        stream_and_version: KwNames,
        version: KwNames,
        stream: KwNames,
        none: KwNames,
        max_version: Py<PyAny>,
    }
    static NAMES: pyo3::sync::PyOnceLock<Names> = pyo3::sync::PyOnceLock::new();
    let py = obj.py();
    let n = NAMES.get_or_try_init(py, || -> PyResult<Names> {
        Ok(Names {
            stream_and_version: KwNames::new(py, &["stream", "max_version"])?,
            version: KwNames::new(py, &["max_version"])?,
            stream: KwNames::new(py, &["stream"])?,
            none: KwNames::new(py, &[])?,
            max_version: (1u32, 3u32).into_pyobject(py)?.into_any().unbind(),
        })
    })?;
    let name = pyo3::intern!(py, "__dlpack__");
    let max_version = n.max_version.bind(py);
    let first = match stream {
        Some(s) => call_method_kw(obj, name, &n.stream_and_version, &[s, max_version]),
        None => call_method_kw(obj, name, &n.version, &[max_version]),
    };
    match first {
        Err(e) if e.is_instance_of::<PyTypeError>(py) => match stream {
            Some(s) => call_method_kw(obj, name, &n.stream, &[s]),
            None => call_method_kw(obj, name, &n.none, &[]),
        },
        r => r,
    }
}

const EXCHANGE: &CStr = c"dlpack_exchange_api";

/// What `obj`'s type offers, looked up once per type.
#[derive(Clone, Copy)]
struct TypeFacts {
    /// The DLPack C exchange API (`__dlpack_c_exchange_api__`) of DLPack major version 1.
    api: Option<&'static stridekit::dlpack::DLPackExchangeAPI>,
    /// The type defines `__dlpack__` (an instance may still add one of its own).
    dlpack: bool,
}

/// [`TypeFacts`] of `obj`'s type. The answers are cached per type (the cache holds the
/// type, so its address cannot be reused), so asking never raises: attribute errors of
/// types without them are caught once.
fn type_facts(obj: &Bound<'_, PyAny>) -> TypeFacts {
    use pyo3::sync::PyOnceLock;
    /// The table's address (0: none; the table is static and never written) and whether
    /// the type has `__dlpack__`.
    type Known = std::sync::Mutex<Vec<(Py<pyo3::types::PyType>, usize, bool)>>;
    /// Enough for every array type a process uses; beyond it, types are looked up afresh.
    const MAX_TYPES: usize = 64;
    static KNOWN: PyOnceLock<Known> = PyOnceLock::new();
    thread_local! {
        /// The last type this thread asked about, as cached in `KNOWN` (which holds it, so
        /// its address names it): (type, table address, has `__dlpack__`).
        static LAST: std::cell::Cell<(usize, usize, bool)> = const { std::cell::Cell::new((0, 0, false)) };
    }
    let py = obj.py();
    let ty_ptr = obj.get_type_ptr() as usize;
    let last = LAST.with(|l| l.get());
    if last.0 == ty_ptr {
        return TypeFacts {
            // SAFETY: a non-zero address is that of a producer's static API table (below).
            api: unsafe { (last.1 as *const stridekit::dlpack::DLPackExchangeAPI).as_ref() },
            dlpack: last.2,
        };
    }
    let ty = obj.get_type();
    let known = KNOWN.get_or_init(py, Default::default);
    let hit = known.lock().ok().and_then(|k| {
        k.iter()
            .find(|(t, _, _)| t.as_ptr() == ty.as_ptr())
            .map(|&(_, a, d)| (a, d))
    });
    // `cached`: the type is held in `KNOWN`, so this thread may remember it by address.
    let (addr, dlpack, cached) = match hit {
        Some((a, d)) => (a, d, true),
        None => {
            let a = lookup_exchange_api(&ty).map_or(0, |api| api as *const _ as usize);
            let d = ty.hasattr(pyo3::intern!(py, "__dlpack__")).unwrap_or(false);
            let pushed = known.lock().is_ok_and(|mut k| {
                let room = k.len() < MAX_TYPES;
                if room {
                    k.push((ty.unbind(), a, d));
                }
                room
            });
            (a, d, pushed)
        }
    };
    if cached {
        LAST.with(|l| l.set((ty_ptr, addr, dlpack)));
    }
    TypeFacts {
        // SAFETY: a non-zero address is that of a producer's static API table (above).
        api: unsafe { (addr as *const stridekit::dlpack::DLPackExchangeAPI).as_ref() },
        dlpack,
    }
}

/// Whether `obj` has `__dlpack__`: its type's (cached), or failing that its own.
fn has_dlpack(obj: &Bound<'_, PyAny>, facts: TypeFacts) -> PyResult<bool> {
    Ok(facts.dlpack || obj.hasattr(pyo3::intern!(obj.py(), "__dlpack__"))?)
}

/// The exchange API table a type offers as a capsule named "dlpack_exchange_api", under
/// DLPack 1.3's attribute name or the earlier `__c_dlpack_exchange_api__` (PyTorch and
/// TVM FFI releases of 2025 use that one). Other values (an address as an int) are not
/// read: nothing could check them.
fn lookup_exchange_api(
    ty: &Bound<'_, pyo3::types::PyType>,
) -> Option<&'static stridekit::dlpack::DLPackExchangeAPI> {
    let py = ty.py();
    let cap = ty
        .getattr(pyo3::intern!(py, "__dlpack_c_exchange_api__"))
        .or_else(|_| ty.getattr(pyo3::intern!(py, "__c_dlpack_exchange_api__")))
        .ok()?;
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
) -> PyResult<Option<ViewCell>> {
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
    // Python has no aliasing rules (as in cuda.core). Checked now, made on first use.
    Ok(Some(unsafe { ViewCell::borrowed(&dl, owner) }?))
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
    facts: TypeFacts,
) -> PyResult<Option<ViewCell>> {
    if !has_dlpack(obj, facts)? {
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

/// The dtype an array's `dtype` attribute names, if stridekit knows it and its size is
/// `itemsize`.
fn named_by_array_dtype(obj: &Bound<'_, PyAny>, itemsize: usize) -> Option<stridekit::DType> {
    let d = obj.getattr(pyo3::intern!(obj.py(), "dtype")).ok()?;
    let found = dtype::from_py(Some(&d)).ok()??;
    (found.itemsize() == itemsize).then_some(found)
}

/// A view from an array-interface dict (`__cuda_array_interface__` or `__array_interface__`).
fn interface_view(
    obj: &Bound<'_, PyAny>,
    iface: &Bound<'_, PyDict>,
    cuda: bool,
    stream_ptr: Option<i64>,
) -> PyResult<Read> {
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
    let (mut dt, itemsize) = stridekit::dtype_from_typestr(OP, &typestr).py_err()?;
    // A record type may hold objects in its fields: `descr` lists them.
    if let Some(descr) = get("descr")? {
        check_descr(OP, &descr)?;
    }
    // Types NumPy has no kind letter for (ml_dtypes' bfloat16 and float8 kinds are "V"
    // records to the interface; complex32 is a record of two halves) are named by the
    // array's own dtype, when it has one of the same size.
    if dt.is_none() {
        dt = named_by_array_dtype(obj, itemsize);
    }
    let (ptr, readonly): (u64, bool) = get("data")?
        .ok_or_else(|| PyValueError::new_err("the interface has no data"))?
        .extract()?;
    let strides: Option<Vec<i64>> = match get("strides")? {
        Some(s) if !s.is_none() => Some(s.extract()?),
        _ => None,
    };
    let implicit_strides = strides.is_none();
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
    Ok(Read {
        cell: ViewCell::made(view),
        implicit_strides,
    })
}

/// A view as read, and whether its producer gave no strides (a C-contiguous array
/// described by shape alone), which cuda.core reports as `strides` None.
pub(crate) struct Read {
    pub cell: ViewCell,
    pub implicit_strides: bool,
}

impl From<ViewCell> for Read {
    fn from(cell: ViewCell) -> Self {
        Read {
            cell,
            implicit_strides: false,
        }
    }
}

/// The protocols a view can be read through.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// DLPack (the C exchange API first), then the CUDA Array Interface, then the array
    /// interface.
    Any,
    /// DLPack only.
    Dlpack,
    /// The CUDA Array Interface only.
    CudaArrayInterface,
    /// NumPy's array interface only.
    ArrayInterface,
}

/// The view of `obj` through `protocol`, ordered on the consumer stream `stream_ptr`
/// (stridekit's one rule; 0 and values below -1 are refused before any producer is asked).
pub(crate) fn import(
    obj: &Bound<'_, PyAny>,
    stream_ptr: Option<i64>,
    protocol: Protocol,
) -> PyResult<Read> {
    if let Some(v) = stream_ptr {
        StreamValue::decode(v).py_err()?;
    }
    let py = obj.py();
    let missing = |what: &str| -> PyResult<Read> {
        Err(PyBufferError::new_err(format!(
            "{} does not support {what}",
            obj.get_type().name()?
        )))
    };
    let cai = pyo3::intern!(py, "__cuda_array_interface__");
    let ai = pyo3::intern!(py, "__array_interface__");
    match protocol {
        Protocol::Any => {
            let facts = type_facts(obj);
            if let Some(api) = facts.api {
                if let Some(v) = exchange_view(obj, api, stream_ptr)? {
                    return Ok(v.into());
                }
            }
            if let Some(v) = dlpack_or_fallback(obj, stream_ptr, facts)? {
                Ok(v.into())
            } else if let Ok(i) = obj.getattr(cai) {
                interface_view(obj, i.downcast::<PyDict>()?, true, stream_ptr)
            } else if let Ok(i) = obj.getattr(ai) {
                interface_view(obj, i.downcast::<PyDict>()?, false, stream_ptr)
            } else {
                missing("DLPack, the CUDA Array Interface or the array interface")
            }
        }
        Protocol::Dlpack => {
            let facts = type_facts(obj);
            if let Some(api) = facts.api {
                if let Some(v) = exchange_view(obj, api, stream_ptr)? {
                    return Ok(v.into());
                }
            }
            if !has_dlpack(obj, facts)? {
                return missing("DLPack (__dlpack__)");
            }
            dlpack_view(obj, stream_ptr).map(Read::from)
        }
        Protocol::CudaArrayInterface => match obj.getattr(cai) {
            Ok(i) => interface_view(obj, i.downcast::<PyDict>()?, true, stream_ptr),
            Err(_) => missing("the CUDA Array Interface (__cuda_array_interface__)"),
        },
        Protocol::ArrayInterface => match obj.getattr(ai) {
            Ok(i) => interface_view(obj, i.downcast::<PyDict>()?, false, None),
            Err(_) => missing("the array interface (__array_interface__)"),
        },
    }
}
