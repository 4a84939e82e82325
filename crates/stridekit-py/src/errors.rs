//! Rust errors as Python exceptions: bad input is `ValueError`, an element type that
//! cannot be viewed (objects, foreign byte order) is `TypeError`, the driver's failures are
//! `stridekit.CUDAError` (its `code` is the driver's status, or None).

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use stridekit::Error;

pyo3::create_exception!(
    stridekit,
    CUDAError,
    PyRuntimeError,
    "A CUDA driver failure, a missing driver or device, or something the GPU cannot do; `code` is the driver's CUresult (None when no driver call failed)."
);

/// The Python exception for a stridekit error (message intact).
pub(crate) fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    let code = match &e {
        Error::Driver { source, .. } => Some(source.0 as i64),
        Error::Nccl { code, .. } => Some(*code as i64),
        Error::NoDriver { .. } | Error::NoDevice { .. } | Error::Unsupported { .. } => None,
        Error::ElementType { .. } => return PyTypeError::new_err(msg),
        Error::DtypeMismatch { src, dst, .. } => {
            return PyValueError::new_err(format!(
                "copy_from/copy_to: the source is {} and the destination {}; a copy never converts or reinterprets elements, so the dtypes must match (pass bits=True to copy the bytes as they are)",
                crate::dtype::python_name(*src),
                crate::dtype::python_name(*dst)
            ))
        }
        _ => return PyValueError::new_err(msg),
    };
    Python::attach(|py| {
        let err = CUDAError::new_err(msg);
        // The driver's status rides on the exception; setting an attribute on a fresh
        // exception object cannot fail short of memory exhaustion.
        let _ = err.value(py).setattr("code", code);
        err
    })
}

/// `Result` with stridekit's error, turned into a Python exception by `?`.
pub(crate) trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

impl<T> IntoPy<T> for Result<T, stridekit::LayoutError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| PyValueError::new_err(e.to_string()))
    }
}
