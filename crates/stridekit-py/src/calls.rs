//! Method calls with keyword arguments that build neither a dict nor a bound method:
//! CPython's `PyObject_VectorcallMethod` (part of the stable ABI from Python 3.12, an
//! exported function of the same signature since 3.9), found in the running interpreter
//! once. Where it is not there, the call goes through pyo3's `call_method` with a dict.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::sync::OnceLock;

/// `PyObject_VectorcallMethod(name, args, nargsf, kwnames)`.
type VectorcallMethod = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    usize,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// The interpreter's `PyObject_VectorcallMethod`, if the process exports it.
fn vectorcall_method() -> Option<VectorcallMethod> {
    static FOUND: OnceLock<Option<VectorcallMethod>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        #[cfg(unix)]
        {
            // The process itself (the interpreter and what it loaded), never closed.
            let this = Box::leak(Box::new(libloading::os::unix::Library::this()));
            // SAFETY: the symbol, where exported, is CPython's function of this signature
            // (documented for 3.9 onwards; stable ABI from 3.12).
            unsafe { this.get::<VectorcallMethod>(b"PyObject_VectorcallMethod\0") }
                .ok()
                .map(|f| *f)
        }
        #[cfg(not(unix))]
        {
            None
        }
    })
}

/// The keyword names of a call: a tuple of strings (vectorcall's `kwnames` must hold only
/// strings), made once.
pub(crate) struct KwNames(Py<PyTuple>);

impl KwNames {
    pub(crate) fn new(py: Python<'_>, names: &[&'static str]) -> PyResult<Self> {
        Ok(KwNames(PyTuple::new(py, names)?.unbind()))
    }
}

/// `obj.name(**dict(zip(names, values)))`, `values` holding one object a name.
pub(crate) fn call_method_kw<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
    names: &KwNames,
    values: &[&Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let names = names.0.bind(py);
    /// Keyword values a call can carry (the protocols ask for two at most).
    const MAX_KW: usize = 3;
    if names.len() != values.len() || values.len() > MAX_KW {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "a method call with {} keyword names and {} values; they must match, at most {MAX_KW}",
            names.len(),
            values.len()
        )));
    }
    let Some(call) = vectorcall_method() else {
        let kw = PyDict::new(py);
        for (k, v) in names.iter().zip(values) {
            kw.set_item(k, v)?;
        }
        return obj.call_method(name, (), Some(&kw));
    };
    // self, then the keyword values in the order of `names`.
    let mut args = [std::ptr::null_mut(); 1 + MAX_KW];
    args[0] = obj.as_ptr();
    for (slot, v) in args[1..].iter_mut().zip(values) {
        *slot = v.as_ptr();
    }
    // SAFETY: every pointer is a live object borrowed for the call; nargsf 1 counts
    // `self` as the one positional argument, and `names` (a tuple of strings) names the
    // values after it, as the vectorcall protocol lays them out.
    let out = unsafe { call(name.as_ptr(), args.as_ptr(), 1, names.as_ptr()) };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, out) }
}

/// `obj.name()`, through the same entry point.
pub(crate) fn call_method0<'py>(
    obj: &Bound<'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(call) = vectorcall_method() else {
        return obj.call_method0(name);
    };
    let args = [obj.as_ptr()];
    // SAFETY: `obj` is a live object borrowed for the call, the one positional argument
    // (`self`); no keyword names.
    let out = unsafe { call(name.as_ptr(), args.as_ptr(), 1, std::ptr::null_mut()) };
    // SAFETY: a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(obj.py(), out) }
}
