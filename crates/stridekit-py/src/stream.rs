//! Streams as Python gives them: None, an int handle, an object with `__cuda_stream__`,
//! a `torch.cuda.Stream` (`cuda_stream`), a CuPy stream (`ptr`).

use crate::errors::IntoPy;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use stridekit::{StreamOrder, StreamValue};

/// The stream value (stridekit's one rule: -1 none, 1 and 2 the default streams, other
/// positive values handles, 0 refused) of a stream-like Python object; `None` when
/// `obj` is None. An int is taken as it is. A stream object (`__cuda_stream__`, a
/// `torch.cuda.Stream`, a CuPy stream) gives its CUDA handle, where NULL is the legacy
/// default stream: its 0 becomes 1.
pub(crate) fn handle(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    let Some(o) = obj else { return Ok(None) };
    if o.is_none() {
        return Ok(None);
    }
    if let Ok(h) = o.extract::<i64>() {
        return Ok(Some(h));
    }
    let of_object = |h: i64| Ok(Some(if h == 0 { 1 } else { h }));
    if o.hasattr("__cuda_stream__")? {
        let (_, h): (i64, i64) = o.call_method0("__cuda_stream__")?.extract()?;
        return of_object(h);
    }
    for attr in ["cuda_stream", "ptr", "handle"] {
        if let Ok(v) = o.getattr(attr) {
            if let Ok(h) = v.extract::<i64>() {
                return of_object(h);
            }
            if let Ok(h) = v.call_method0("__int__").and_then(|x| x.extract::<i64>()) {
                return of_object(h);
            }
        }
    }
    Err(PyTypeError::new_err(format!(
        "{} is not a stream: give an int handle, or an object with __cuda_stream__, cuda_stream or ptr",
        o.get_type().name()?
    )))
}

/// A stream argument for ordering, by stridekit's one rule ([`StreamValue::decode`]):
/// None is the legacy default stream, -1 no ordering, 1 and 2 the default streams, 0
/// refused, anything else a handle.
pub(crate) fn exchange(obj: Option<&Bound<'_, PyAny>>) -> PyResult<StreamValue> {
    exchange_of(handle(obj)?)
}

/// [`exchange`] of a handle already read (None: the legacy default stream).
pub(crate) fn exchange_of(handle: Option<i64>) -> PyResult<StreamValue> {
    StreamValue::from_dlpack_arg(handle).py_err()
}

/// The stream a value names, for work on `device`. Handles from Python are trusted to
/// name live streams, as every CUDA binding for Python trusts them (cuda.core included):
/// the driver cannot check them (see `stridekit::stream`).
pub(crate) fn order_of(value: StreamValue, device: usize) -> stridekit::Result<StreamOrder> {
    // SAFETY: a handle passed from Python names a live stream (the caller's promise, as
    // in every CUDA binding); values that cannot be handles are refused inside.
    unsafe { value.resolve_handle(device) }
}

/// Orders the consumer's stream after the producer's work (nothing when either side
/// asks for no ordering).
pub(crate) fn order_after(
    producer: StreamValue,
    consumer: StreamValue,
    device: usize,
) -> stridekit::Result<()> {
    // One stream named twice is ordered with itself: no driver call (this is the common
    // case of a view made on the producer's own current stream).
    if producer == consumer {
        return Ok(());
    }
    if let (StreamOrder::On(p), StreamOrder::On(c)) =
        (order_of(producer, device)?, order_of(consumer, device)?)
    {
        stridekit::stream::wait_for_producer(&p, &c)?;
    }
    Ok(())
}
