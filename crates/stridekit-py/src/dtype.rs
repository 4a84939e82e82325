//! NumPy dtypes and array-interface type strings <-> stridekit dtypes.

use pyo3::prelude::*;
use stridekit::DType;

/// The NumPy name of a dtype (`None` for types NumPy lacks: bfloat16 and the fp8 types).
fn numpy_name(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "bool",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::U8 => "uint8",
        DType::U16 => "uint16",
        DType::U32 => "uint32",
        DType::U64 => "uint64",
        DType::F16 => "float16",
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::Complex64 => "complex64",
        DType::Complex128 => "complex128",
        _ => return None,
    })
}

/// A `numpy.dtype` for `d`: NumPy's own, or `ml_dtypes`' for bfloat16 and fp8 when that
/// package is installed; otherwise None.
pub(crate) fn to_numpy(py: Python<'_>, d: Option<DType>) -> PyResult<Py<PyAny>> {
    use pyo3::sync::PyOnceLock;
    use std::collections::HashMap;
    static CACHE: PyOnceLock<std::sync::Mutex<HashMap<DType, Py<PyAny>>>> = PyOnceLock::new();
    let Some(d) = d else { return Ok(py.None()) };
    let cache = CACHE.get_or_init(py, || std::sync::Mutex::new(HashMap::new()));
    if let Some(hit) = cache
        .lock()
        .ok()
        .and_then(|m| m.get(&d).map(|o| o.clone_ref(py)))
    {
        return Ok(hit);
    }
    let made = numpy_dtype(py, d)?;
    if let Ok(mut m) = cache.lock() {
        m.insert(d, made.clone_ref(py));
    }
    Ok(made)
}

fn numpy_dtype(py: Python<'_>, d: DType) -> PyResult<Py<PyAny>> {
    let np = py.import("numpy")?;
    if let Some(name) = numpy_name(d) {
        return Ok(np.call_method1("dtype", (name,))?.unbind());
    }
    let ml = match d {
        DType::BF16 => "bfloat16",
        DType::F8E4M3 => "float8_e4m3fn",
        DType::F8E5M2 => "float8_e5m2",
        _ => return Ok(py.None()),
    };
    match py.import("ml_dtypes") {
        Ok(m) => Ok(np.call_method1("dtype", (m.getattr(ml)?,))?.unbind()),
        Err(_) => Ok(py.None()),
    }
}

/// A dtype given as a `numpy.dtype`, a type, or a string; None stays None.
pub(crate) fn from_py(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    let Some(o) = obj else { return Ok(None) };
    if o.is_none() {
        return Ok(None);
    }
    let py = o.py();
    let dt = py.import("numpy")?.call_method1("dtype", (o,))?;
    let name: String = dt.getattr("name")?.extract()?;
    let found = DType::all().iter().copied().find(|&d| {
        numpy_name(d) == Some(name.as_str())
            || matches!(
                (d, name.as_str()),
                (DType::BF16, "bfloat16")
                    | (DType::F8E4M3, "float8_e4m3fn")
                    | (DType::F8E5M2, "float8_e5m2")
            )
    });
    found.map(Some).ok_or_else(|| {
        pyo3::exceptions::PyTypeError::new_err(format!("dtype {name} has no stridekit equivalent"))
    })
}
