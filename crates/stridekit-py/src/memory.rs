//! Buffers and memory resources for Python, and managed-memory prefetch.

use crate::errors::IntoPy;
use crate::stream;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;
use stridekit::dlpack::with_ordered_stream;
use stridekit::managed::{self, Location, ManagedRange};
use stridekit::{
    Buffer, Device, DeviceMemoryResource, ManagedMemoryResource, MemoryKind, MemoryResource,
    PinnedMemoryResource,
};

/// A span of memory: device, pinned, managed or host; released when the last Python
/// reference (and every view of it) is gone.
#[pyclass(name = "Buffer", module = "stridekit", frozen)]
pub struct PyBuffer {
    pub(crate) inner: Arc<Buffer>,
}

fn kind_name(k: MemoryKind) -> &'static str {
    match k {
        MemoryKind::Device => "device",
        MemoryKind::PinnedHost => "pinned",
        MemoryKind::Managed => "managed",
        MemoryKind::Host => "host",
    }
}

#[pymethods]
impl PyBuffer {
    /// Wraps memory allocated elsewhere; `owner` is kept alive as long as the buffer.
    /// The memory's kind and device are asked of the driver.
    #[staticmethod]
    #[pyo3(signature = (ptr, size, owner = None))]
    fn from_handle(ptr: u64, size: usize, owner: Option<Py<PyAny>>) -> PyResult<Self> {
        // SAFETY: Python callers vouch for foreign pointers, as with cuda.core's
        // Buffer.from_handle; `owner` (a Python object) keeps the memory alive.
        let b = unsafe { Buffer::from_handle(ptr, size, owner) }.py_err()?;
        Ok(PyBuffer { inner: Arc::new(b) })
    }
    #[getter]
    fn ptr(&self) -> u64 {
        self.inner.ptr()
    }
    #[getter]
    fn handle(&self) -> u64 {
        self.inner.ptr()
    }
    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }
    #[getter]
    fn device_id(&self) -> i64 {
        self.inner.device_ordinal().map_or(-1, |d| d as i64)
    }
    #[getter]
    fn is_device_accessible(&self) -> bool {
        self.inner.is_device_accessible()
    }
    #[getter]
    fn is_host_accessible(&self) -> bool {
        self.inner.is_host_accessible()
    }
    /// "device", "pinned", "managed" or "host".
    #[getter]
    fn memory_kind(&self) -> &'static str {
        kind_name(self.inner.kind())
    }
    fn __repr__(&self) -> String {
        format!(
            "Buffer(ptr={:#x}, size={}, kind={}, device_id={})",
            self.inner.ptr(),
            self.inner.size(),
            kind_name(self.inner.kind()),
            self.device_id()
        )
    }
}

/// Which resource a `MemoryResource` object wraps.
enum Which {
    Device(DeviceMemoryResource),
    Pinned(PinnedMemoryResource),
    Managed(ManagedMemoryResource),
}

/// A source of buffers on one device: its memory pool, pinned host memory, or managed
/// memory.
#[pyclass(name = "MemoryResource", module = "stridekit", subclass, frozen)]
pub struct PyMemoryResource {
    which: Which,
    device: usize,
}

impl PyMemoryResource {
    pub(crate) fn as_dyn(&self) -> &dyn MemoryResource {
        match &self.which {
            Which::Device(m) => m,
            Which::Pinned(m) => m,
            Which::Managed(m) => m,
        }
    }
}

#[pymethods]
impl PyMemoryResource {
    /// Allocates `size` bytes, ordered after the work queued on `stream` (None: the
    /// legacy default stream).
    #[pyo3(signature = (size, stream = None))]
    fn allocate(
        &self,
        py: Python<'_>,
        size: usize,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyBuffer> {
        let s = stream::exchange(stream)?;
        let mr = self.as_dyn();
        let dev = self.device;
        // SAFETY: stream handles from Python name live streams (the caller's promise, as
        // in every CUDA binding).
        let b = py
            .detach(|| unsafe { with_ordered_stream(s, dev, |own| mr.allocate(size, own)) })
            .py_err()?;
        Ok(PyBuffer { inner: Arc::new(b) })
    }
    #[getter]
    fn device_id(&self) -> usize {
        self.device
    }
    #[getter]
    fn is_device_accessible(&self) -> bool {
        self.as_dyn().kind().is_device_accessible()
    }
    #[getter]
    fn is_host_accessible(&self) -> bool {
        self.as_dyn().kind().is_host_accessible()
    }
}

/// The device's memory pool (stream-ordered allocations).
#[pyfunction(name = "DeviceMemoryResource")]
#[pyo3(signature = (device_id = 0))]
pub(crate) fn device_memory_resource(device_id: usize) -> PyResult<PyMemoryResource> {
    let dev = Device::open(device_id).py_err()?;
    Ok(PyMemoryResource {
        which: Which::Device(DeviceMemoryResource::new(&dev).py_err()?),
        device: device_id,
    })
}

/// Page-locked host memory, readable by the CPU and by kernels of every device.
#[pyfunction(name = "PinnedMemoryResource")]
#[pyo3(signature = (device_id = 0))]
pub(crate) fn pinned_memory_resource(device_id: usize) -> PyResult<PyMemoryResource> {
    let dev = Device::open(device_id).py_err()?;
    Ok(PyMemoryResource {
        which: Which::Pinned(PinnedMemoryResource::new(&dev)),
        device: device_id,
    })
}

/// Managed (unified) memory.
#[pyfunction(name = "ManagedMemoryResource")]
#[pyo3(signature = (device_id = 0))]
pub(crate) fn managed_memory_resource(device_id: usize) -> PyResult<PyMemoryResource> {
    let dev = Device::open(device_id).py_err()?;
    Ok(PyMemoryResource {
        which: Which::Managed(ManagedMemoryResource::new(&dev).py_err()?),
        device: device_id,
    })
}

/// A location given as a device ordinal (int) or "host".
fn location(obj: &Bound<'_, PyAny>) -> PyResult<Location> {
    if let Ok(d) = obj.extract::<usize>() {
        return Ok(Location::Device(d));
    }
    match obj.extract::<String>().as_deref() {
        Ok("host") => Ok(Location::Host),
        _ => Err(PyValueError::new_err(
            "a location is a device ordinal (int) or \"host\"",
        )),
    }
}

/// Prefetches managed buffers to locations, ordered on `stream`: one buffer and one
/// location, or lists of both (or one location for all), as one batched driver call.
#[pyfunction]
#[pyo3(signature = (buffers, locations, stream = None))]
pub(crate) fn prefetch(
    py: Python<'_>,
    buffers: &Bound<'_, PyAny>,
    locations: &Bound<'_, PyAny>,
    stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let bufs: Vec<Arc<Buffer>> = match buffers.extract::<PyRef<'_, PyBuffer>>() {
        Ok(b) => vec![b.inner.clone()],
        Err(_) => buffers
            .try_iter()?
            .map(|b| Ok(b?.extract::<PyRef<'_, PyBuffer>>()?.inner.clone()))
            .collect::<PyResult<_>>()?,
    };
    let locs: Vec<Location> = match location(locations) {
        Ok(l) => vec![l],
        Err(_) => locations
            .try_iter()?
            .map(|l| location(&l?))
            .collect::<PyResult<_>>()?,
    };
    let s = stream::exchange(stream)?;
    let device = bufs.first().and_then(|b| b.device_ordinal()).unwrap_or(0);
    py.detach(|| {
        let ranges: Vec<ManagedRange<'_>> = bufs
            .iter()
            .map(|b| ManagedRange::of(b))
            .collect::<Result<_, _>>()?;
        // SAFETY: stream handles from Python name live streams.
        unsafe {
            with_ordered_stream(s, device, |own| {
                if locs.len() == 1 {
                    managed::prefetch_batch(&ranges, locs[0], own)
                } else {
                    managed::prefetch_batch(&ranges, &locs[..], own)
                }
            })
        }
    })
    .py_err()
}
