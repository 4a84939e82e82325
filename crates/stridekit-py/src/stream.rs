//! Streams as Python gives them: None, an int handle, an object with `__cuda_stream__`,
//! a `torch.cuda.Stream` (`cuda_stream`), a CuPy stream (`ptr`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use stridekit::dlpack::{ExchangeStream, StreamRef};

/// The handle of a stream-like Python object; `None` when `obj` is None.
pub(crate) fn handle(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    let Some(o) = obj else { return Ok(None) };
    if o.is_none() {
        return Ok(None);
    }
    if let Ok(h) = o.extract::<i64>() {
        return Ok(Some(h));
    }
    if o.hasattr("__cuda_stream__")? {
        let (_, h): (i64, i64) = o.call_method0("__cuda_stream__")?.extract()?;
        return Ok(Some(h));
    }
    for attr in ["cuda_stream", "ptr", "handle"] {
        if let Ok(v) = o.getattr(attr) {
            if let Ok(h) = v.extract::<i64>() {
                return Ok(Some(h));
            }
            if let Ok(h) = v.call_method0("__int__").and_then(|x| x.extract::<i64>()) {
                return Ok(Some(h));
            }
        }
    }
    Err(PyTypeError::new_err(format!(
        "{} is not a stream: give an int handle, or an object with __cuda_stream__, cuda_stream or ptr",
        o.get_type().name()?
    )))
}

/// A stream argument for ordering: None is the legacy default stream, -1 no
/// synchronisation, 0 the legacy default stream (CUDA's NULL stream), 2 the per-thread one.
pub(crate) fn exchange(obj: Option<&Bound<'_, PyAny>>) -> PyResult<ExchangeStream> {
    exchange_of(handle(obj)?)
}

/// [`exchange`] of a handle already read (None: the legacy default stream).
pub(crate) fn exchange_of(handle: Option<i64>) -> PyResult<ExchangeStream> {
    Ok(match handle {
        None | Some(0) | Some(1) => ExchangeStream::Stream(StreamRef::LegacyDefault),
        Some(-1) => ExchangeStream::NoSync,
        Some(2) => ExchangeStream::Stream(StreamRef::PerThreadDefault),
        Some(h) if h < 0 => {
            return Err(PyValueError::new_err(format!(
                "stream {h} is neither a handle nor -1 (no synchronisation)"
            )))
        }
        Some(h) => ExchangeStream::Stream(StreamRef::Handle(h as usize)),
    })
}
