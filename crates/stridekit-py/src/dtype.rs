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

/// The `ml_dtypes` name of a dtype NumPy lacks.
fn ml_dtypes_name(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::BF16 => "bfloat16",
        DType::F8E4M3 => "float8_e4m3fn",
        DType::F8E5M2 => "float8_e5m2",
        DType::F8E4M3Ieee => "float8_e4m3",
        DType::F8E3M4 => "float8_e3m4",
        DType::F8E4M3B11Fnuz => "float8_e4m3b11fnuz",
        DType::F8E4M3Fnuz => "float8_e4m3fnuz",
        DType::F8E5M2Fnuz => "float8_e5m2fnuz",
        DType::F8E8M0Fnu => "float8_e8m0fnu",
        _ => return None,
    })
}

/// The name Python users know a dtype by: NumPy's, ml_dtypes', or "complex32".
pub(crate) fn python_name(d: DType) -> &'static str {
    numpy_name(d)
        .or_else(|| ml_dtypes_name(d))
        .unwrap_or(match d {
            DType::Complex32 => "complex32",
            _ => "an element type without a Python name",
        })
}

/// complex32 (two float16) has no scalar type in NumPy or ml_dtypes: it is the record
/// `[("real", float16), ("imag", float16)]`, which keeps both halves' meaning.
fn complex32_fields() -> [(&'static str, &'static str); 2] {
    [("real", "<f2"), ("imag", "<f2")]
}

fn numpy_dtype(py: Python<'_>, d: DType) -> PyResult<Py<PyAny>> {
    let np = py.import("numpy")?;
    if let Some(name) = numpy_name(d) {
        return Ok(np.call_method1("dtype", (name,))?.unbind());
    }
    if d == DType::Complex32 {
        let fields = pyo3::types::PyList::new(py, complex32_fields())?;
        return Ok(np.call_method1("dtype", (fields,))?.unbind());
    }
    let Some(ml) = ml_dtypes_name(d) else {
        return Ok(py.None());
    };
    match py.import("ml_dtypes") {
        Ok(m) => Ok(np.call_method1("dtype", (m.getattr(ml)?,))?.unbind()),
        Err(_) => Ok(py.None()),
    }
}

/// A dtype given as a `numpy.dtype`, a type, or a string; None stays None.
/// An element type as a Python caller gave it: a dtype stridekit knows, or a NumPy dtype
/// it has no name for (records, padded and void types, fixed-width strings, datetimes),
/// kept as given and moved as its bytes.
pub(crate) enum Element {
    Known(DType),
    Opaque { numpy: Py<PyAny>, itemsize: usize },
}

impl Element {
    pub(crate) fn itemsize(&self) -> usize {
        match self {
            Element::Known(d) => d.itemsize(),
            Element::Opaque { itemsize, .. } => *itemsize,
        }
    }

    /// The dtype the Rust view carries (opaque elements carry none: their bytes move).
    pub(crate) fn dtype(&self) -> Option<DType> {
        match self {
            Element::Known(d) => Some(*d),
            Element::Opaque { .. } => None,
        }
    }

    /// The NumPy dtype a view reports for opaque elements.
    pub(crate) fn opaque(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match self {
            Element::Known(_) => None,
            Element::Opaque { numpy, .. } => Some(numpy.clone_ref(py)),
        }
    }
}

/// [`from_py`], keeping dtypes stridekit has no name for as opaque elements of their
/// itemsize. Object arrays are refused: Python objects have no place in GPU memory.
pub(crate) fn element_from_py(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Element>> {
    let Some(o) = obj else { return Ok(None) };
    if o.is_none() {
        return Ok(None);
    }
    match from_py(Some(o)) {
        Ok(Some(d)) => Ok(Some(Element::Known(d))),
        Ok(None) => Ok(None),
        Err(e) => {
            let py = o.py();
            let dt = py.import("numpy")?.call_method1("dtype", (o,))?;
            let kind: String = dt.getattr("kind")?.extract()?;
            if !dt.getattr("isnative")?.extract::<bool>()? || kind == "O" {
                return Err(e);
            }
            let itemsize: usize = dt.getattr("itemsize")?.extract()?;
            if itemsize == 0 {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "dtype {} has itemsize 0; a view needs elements of at least one byte",
                    dt.str()?
                )));
            }
            Ok(Some(Element::Opaque {
                numpy: dt.unbind(),
                itemsize,
            }))
        }
    }
}

/// NumPy's opaque dtype of `itemsize` bytes (`V<itemsize>`), what cuda.core reports for
/// elements it has no type for (record arrays through the array interface).
pub(crate) fn void(py: Python<'_>, itemsize: usize) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("numpy")?
        .call_method1("dtype", (format!("V{itemsize}"),))?
        .unbind())
}

pub(crate) fn from_py(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    let Some(o) = obj else { return Ok(None) };
    if o.is_none() {
        return Ok(None);
    }
    let py = o.py();
    let dt = py.import("numpy")?.call_method1("dtype", (o,))?;
    if !dt.getattr("isnative")?.extract::<bool>()? {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "dtype {} is in a foreign byte order; stridekit never reads values byte-swapped (use the native-order dtype)",
            dt.str()?
        )));
    }
    let name: String = dt.getattr("name")?.extract()?;
    if let Ok(descr) = dt.getattr("descr")?.extract::<Vec<(String, String)>>() {
        let want: Vec<(String, String)> = complex32_fields()
            .iter()
            .map(|&(a, b)| (a.to_string(), b.to_string()))
            .collect();
        if descr == want {
            return Ok(Some(DType::Complex32));
        }
    }
    let found = DType::all()
        .iter()
        .copied()
        .find(|&d| numpy_name(d).or(ml_dtypes_name(d)) == Some(name.as_str()));
    found.map(Some).ok_or_else(|| {
        pyo3::exceptions::PyTypeError::new_err(format!("dtype {name} has no stridekit equivalent"))
    })
}
