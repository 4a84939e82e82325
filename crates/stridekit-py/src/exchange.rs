//! `StridedMemoryView.__dlpack_c_exchange_api__` (and its alias
//! `__c_dlpack_exchange_api__`): DLPack 1.3's C-level exchange, so that consumers (PyTorch,
//! say) take a view through a few C calls instead of the Python protocol.
//!
//! The functions do no stream synchronization, as the API says; the consumer runs its work
//! on the producer's current work stream. stridekit has no current stream of its own, so
//! `current_work_stream` answers the legacy default stream (NULL), and the two export
//! functions order that stream after the GPU work stridekit recorded on the view's memory
//! (every use when the view is writable, the writes when it is read-only), as
//! `__cuda_array_interface__` does for its stream 1. A consumer that follows the
//! protocol therefore sees that work done.
//!
//! - `managed_tensor_from_py_object_no_sync`: an owning DLPack 1.x tensor of the view (the
//!   view's memory is kept alive by the tensor; READ_ONLY for a read-only view);
//! - `dltensor_from_py_object_no_sync`: a non-owning `DLTensor`, valid while the view is;
//! - `managed_tensor_to_py_object_no_sync`: a `StridedMemoryView` of a tensor (taken over);
//! - `managed_tensor_allocator`: a new dense tensor like the prototype, in device memory
//!   (the device's memory pool) for CUDA, pageable host memory for CPU.
//!
//! Errors: a Python exception is set (`BufferError` for a view without a dtype, as
//! `__dlpack__` raises) and -1 returned; the allocator reports through `set_error`.

use crate::errors::IntoPy;
use crate::view_object::PyView;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use stridekit::dlpack::dlpark::ffi::{
    DLDeviceType, DLManagedTensorVersioned, DLPackExchangeAPIHeader, DLPackVersion, DLTensor,
};
use stridekit::dlpack::{dtype_from_dlpack, DLPackExchangeAPI, DlpackTensor};
use stridekit::view::DynView;
use stridekit::{
    Buffer, DeviceMemoryResource, HostMemoryResource, MemoryResource, Order, StreamValue,
    StridedLayout, StridedMemoryViewMut,
};

/// The capsule name DLPack gives the table.
pub(crate) const CAPSULE: &CStr = c"dlpack_exchange_api";

/// The table, a static of this library (a raw pointer in it makes it `!Sync`).
struct Table(DLPackExchangeAPI);

// SAFETY: the table is never written; its one raw pointer (`prev_api`) is NULL.
unsafe impl Sync for Table {}

static TABLE: Table = Table(DLPackExchangeAPI {
    header: DLPackExchangeAPIHeader {
        version: DLPackVersion { major: 1, minor: 3 },
        prev_api: std::ptr::null_mut(),
    },
    managed_tensor_allocator: Some(allocator),
    managed_tensor_from_py_object_no_sync: Some(managed_from_object),
    managed_tensor_to_py_object_no_sync: Some(managed_to_object),
    dltensor_from_py_object_no_sync: Some(dltensor_from_object),
    current_work_stream: Some(current_work_stream),
});

/// The capsule of the table, made once: both class attributes are this one object.
pub(crate) fn capsule(py: Python<'_>) -> PyResult<Py<PyAny>> {
    static ONCE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    ONCE.get_or_try_init(py, || {
        let ptr = &TABLE.0 as *const DLPackExchangeAPI as *mut c_void;
        // SAFETY: a static's address, never freed; no destructor.
        let cap = unsafe { ffi::PyCapsule_New(ptr, CAPSULE.as_ptr(), None) };
        // SAFETY: a new reference, or NULL with an exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, cap) }.map(Bound::unbind)
    })
    .map(|c| c.clone_ref(py))
}

/// Runs `f` with the GIL the caller holds; an error becomes the Python exception and -1.
///
/// # Safety
/// The calling thread holds the GIL (the exchange API is called with it, as every
/// function taking a `PyObject*`).
unsafe fn with_python(f: impl FnOnce(Python<'_>) -> PyResult<()>) -> c_int {
    // SAFETY: the caller's promise.
    let py = unsafe { Python::assume_attached() };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            e.restore(py);
            -1
        }
        Err(_) => {
            PyErr::new::<pyo3::exceptions::PyRuntimeError, _>(
                "stridekit: a panic in the DLPack exchange API (a bug)",
            )
            .restore(py);
            -1
        }
    }
}

/// Refuses a NULL pointer handed to one of the API's functions (BufferError).
fn non_null<T>(p: *mut T) -> PyResult<()> {
    if p.is_null() {
        return Err(PyBufferError::new_err(
            "the DLPack exchange API was given NULL",
        ));
    }
    Ok(())
}

/// The view behind `obj`, ordered for the legacy default stream (see the module docs).
fn ordered_view<'py>(py: Python<'py>, obj: *mut c_void) -> PyResult<Bound<'py, PyView>> {
    non_null(obj)?;
    // SAFETY: a live object the caller holds a reference to (the API's contract).
    let any = unsafe { Bound::from_borrowed_ptr(py, obj.cast::<ffi::PyObject>()) };
    let view = any.cast_into::<PyView>().map_err(|e| {
        PyBufferError::new_err(format!(
            "stridekit's DLPack exchange API takes StridedMemoryView objects: {e}"
        ))
    })?;
    {
        let v = view.get();
        if v.rust_view()?.dtype().is_none() {
            return Err(PyBufferError::new_err(
                "the view has no dtype, and a DLPack tensor needs one: give it one with view(dtype=...) first",
            ));
        }
        let may_write = matches!(v.rust_view()?, DynView::Writable(_));
        // SAFETY: the legacy default stream is always valid.
        unsafe {
            v.rust_view()?
                .as_view()
                .order_consumer(StreamValue::LegacyDefault, may_write)
        }
        .py_err()?;
    }
    Ok(view)
}

unsafe extern "C" fn managed_from_object(
    obj: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    // SAFETY: called with the GIL held (the API's contract).
    unsafe {
        with_python(|py| {
            non_null(out)?;
            let view = ordered_view(py, obj)?;
            let v = view.get();
            let t = match &v.rust_view()? {
                DynView::ReadOnly(r) => r.to_dlpack().py_err()?.into_raw(),
                // SAFETY: Python has no aliasing rules; ordering writes is the caller's.
                DynView::Writable(w) => w.to_dlpack_writable().py_err()?.into_raw(),
            };
            out.write(t.cast());
            Ok(())
        })
    }
}

unsafe extern "C" fn dltensor_from_object(obj: *mut c_void, out: *mut DLTensor) -> c_int {
    // SAFETY: called with the GIL held (the API's contract).
    unsafe {
        with_python(|py| {
            non_null(out)?;
            let view = ordered_view(py, obj)?;
            // The shape and strides point into the layout of the view stored in the
            // Python object (not a temporary copy of it), which outlives the call (the
            // caller holds a reference).
            let t = match view.get().rust_view()? {
                DynView::ReadOnly(r) => r.dltensor(),
                DynView::Writable(w) => w.dltensor(),
            }
            .py_err()?;
            out.write(t);
            Ok(())
        })
    }
}

unsafe extern "C" fn managed_to_object(
    tensor: *mut DLManagedTensorVersioned,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: called with the GIL held (the API's contract).
    unsafe {
        with_python(|py| {
            non_null(out)?;
            // The tensor is taken over (its deleter runs when the view is gone, or now
            // if it cannot be viewed).
            let t = DlpackTensor::from_raw_versioned(tensor.cast()).py_err()?;
            // The producer vouches for the memory; Python has no aliasing rules (as in
            // cuda.core).
            let held = DynView::from_dlpack(t).py_err()?;
            let obj = Bound::new(py, PyView::of(held, py.None()))?;
            out.write(obj.into_ptr().cast());
            Ok(())
        })
    }
}

unsafe extern "C" fn current_work_stream(
    _device_type: DLDeviceType,
    _device_id: i32,
    out: *mut *mut c_void,
) -> c_int {
    if !out.is_null() {
        // SAFETY: a writable out-pointer (the API's contract). NULL: the legacy default
        // stream, for CUDA; no stream, for the CPU.
        unsafe { out.write(std::ptr::null_mut()) };
    }
    0
}

type SetError = Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char)>;

unsafe extern "C" fn allocator(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: SetError,
) -> c_int {
    let fail = |kind: &str, msg: String| -> c_int {
        if let Some(f) = set_error {
            let (k, m) = (
                CString::new(kind).unwrap_or_default(),
                CString::new(msg.replace('\0', " ")).unwrap_or_default(),
            );
            // SAFETY: the caller's callback, with its context and two C strings that
            // live for the call.
            unsafe { f(error_ctx, k.as_ptr(), m.as_ptr()) };
        }
        -1
    };
    if prototype.is_null() || out.is_null() {
        return fail("ValueError", "the DLPack allocator was given NULL".into());
    }
    // SAFETY: a readable prototype (the API's contract); only dtype, ndim, shape and device
    // are read.
    let p = unsafe { &*prototype };
    match std::panic::catch_unwind(|| allocate_like(p)) {
        Ok(Ok(t)) => {
            // SAFETY: a writable out-pointer (the API's contract).
            unsafe { out.write(t) };
            0
        }
        Ok(Err((kind, msg))) => fail(kind, msg),
        Err(_) => fail(
            "RuntimeError",
            "stridekit: a panic in the DLPack allocator (a bug)".into(),
        ),
    }
}

/// A new dense row-major tensor with `p`'s dtype, shape and device.
fn allocate_like(p: &DLTensor) -> Result<*mut DLManagedTensorVersioned, (&'static str, String)> {
    fn value(e: impl std::fmt::Display) -> (&'static str, String) {
        ("ValueError", e.to_string())
    }
    let ndim = usize::try_from(p.ndim).ok().filter(|&n| n <= 64).ok_or((
        "ValueError",
        format!("the prototype has ndim {}, not 0 to 64", p.ndim),
    ))?;
    let shape: &[i64] = if ndim == 0 {
        &[]
    } else if p.shape.is_null() {
        return Err(("ValueError", "the prototype's shape is NULL".into()));
    } else {
        // SAFETY: `ndim` readable extents (the DLTensor's contract).
        unsafe { std::slice::from_raw_parts(p.shape, ndim) }
    };
    let (dtype, itemsize) = dtype_from_dlpack("DLPack allocator", p.dtype).map_err(value)?;
    let layout = StridedLayout::dense(shape, itemsize, Order::C).map_err(value)?;
    let bytes = layout.required_size_in_bytes().map_err(value)?;
    let buffer: Buffer = match p.device.device_type {
        DLDeviceType::CUDA => {
            let dev = stridekit::Device::open(p.device.device_id.max(0) as usize)
                .map_err(|e| ("RuntimeError", e.to_string()))?;
            let stream = dev.default_stream();
            DeviceMemoryResource::new(&dev)
                .and_then(|mr| mr.allocate(bytes, &stream))
                .map_err(|e| ("MemoryError", e.to_string()))?
        }
        DLDeviceType::CPU => {
            HostMemoryResource::allocate_host(bytes).map_err(|e| ("MemoryError", e.to_string()))?
        }
        other => {
            return Err((
                "BufferError",
                format!(
                    "stridekit allocates DLPack tensors on CUDA and CPU devices, not {other:?}"
                ),
            ))
        }
    };
    let view = StridedMemoryViewMut::from_owned_buffer(buffer, layout, dtype).map_err(value)?;
    let t = view.into_dlpack().map_err(value)?;
    Ok(t.into_raw().cast())
}
