//! Buffers and memory resources for Python, and managed-memory prefetch.

use crate::errors::IntoPy;
use crate::stream;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;
use stridekit::managed::{self, BatchLocations, Location, ManagedRange};
use stridekit::stream::run_ordered;
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

/// A buffer going away that holds the last share of memory whose release waits for GPU
/// work (owned by someone else, pinned, managed) waits for it without the GIL, so that
/// other threads run meanwhile; the release itself (an owner may be a Python object) then
/// runs with it.
impl Drop for PyBuffer {
    fn drop(&mut self) {
        if Arc::strong_count(&self.inner) != 1 || !self.inner.release_waits() {
            return;
        }
        let buffer = &self.inner;
        let waited = Python::attach(|py| py.detach(|| buffer.prepare_release()));
        if let Err(e) = waited {
            eprintln!("stridekit: waiting for the GPU work on a buffer being released failed: {e}");
        }
    }
}

fn kind_name(k: MemoryKind) -> &'static str {
    match k {
        MemoryKind::Device => "device",
        MemoryKind::PinnedHost => "pinned",
        MemoryKind::Managed => "managed",
        MemoryKind::Host => "host",
    }
}

impl PyBuffer {
    fn range(&self) -> PyResult<ManagedRange<'_>> {
        ManagedRange::of(&self.inner).py_err()
    }
}

#[pymethods]
impl PyBuffer {
    /// Wraps memory allocated elsewhere. `owner` is kept alive as long as the buffer;
    /// or `mr`, an object with `deallocate(ptr, size, *, stream)`, gets the memory back
    /// (ordered on `stream`) once the buffer and the GPU work queued on it are done. The
    /// memory's kind and device are asked of the driver.
    #[staticmethod]
    #[pyo3(signature = (ptr, size, mr = None, owner = None, *, stream = None))]
    pub(crate) fn from_handle(
        py: Python<'_>,
        ptr: &Bound<'_, PyAny>,
        size: usize,
        mr: Option<Py<PyAny>>,
        owner: Option<Py<PyAny>>,
        stream: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let ptr: u64 = match ptr.extract() {
            Ok(p) => p,
            Err(_) => ptr.call_method0("__int__")?.extract()?,
        };
        let owner = match (mr, owner) {
            (Some(_), Some(_)) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "Buffer.from_handle: give mr or owner, not both",
                ))
            }
            (Some(mr), None) => Some(
                py.import("stridekit._owners")?
                    .getattr("ReturnToResource")?
                    .call1((mr, ptr, size, stream))?
                    .unbind(),
            ),
            (None, owner) => owner,
        };
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
    /// Managed memory: whether the read-mostly advice is set.
    #[getter]
    fn get_read_mostly(&self) -> PyResult<bool> {
        managed::read_mostly(self.range()?).py_err()
    }
    #[setter]
    fn set_read_mostly(&self, on: bool) -> PyResult<()> {
        managed::set_read_mostly(self.range()?, on).py_err()
    }
    /// Managed memory: the preferred location (None: unset).
    #[getter]
    fn get_preferred_location(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        managed::preferred_location(self.range()?)
            .py_err()?
            .map(|l| location_to_py(py, l))
            .transpose()
    }
    #[setter]
    fn set_preferred_location(&self, loc: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        match loc {
            Some(l) if !l.is_none() => {
                managed::set_preferred_location(self.range()?, location(l)?).py_err()
            }
            _ => managed::unset_preferred_location(self.range()?).py_err(),
        }
    }
    /// Managed memory: the accessed-by set (a frozenset); assigning replaces it, every
    /// element checked before any advice changes.
    #[getter]
    fn get_accessed_by<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, pyo3::types::PyFrozenSet>> {
        let set = managed::accessed_by(self.range()?).py_err()?;
        let items: Vec<Py<PyAny>> = set
            .iter()
            .map(|l| location_to_py(py, l))
            .collect::<PyResult<_>>()?;
        pyo3::types::PyFrozenSet::new(py, items)
    }
    #[setter]
    fn set_accessed_by(&self, locations: &Bound<'_, PyAny>) -> PyResult<()> {
        let locs: Vec<Location> = locations
            .try_iter()?
            .map(|l| location(&l?))
            .collect::<PyResult<_>>()?;
        managed::replace_accessed_by(self.range()?, locs).py_err()
    }
    /// Prefetches this managed buffer to `location`, ordered on `stream`.
    #[pyo3(signature = (location, stream = None))]
    fn prefetch(
        slf: &Bound<'_, Self>,
        location: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        prefetch(slf.py(), slf.as_any(), location, stream)
    }
    /// Discards this managed buffer's contents, ordered on `stream`.
    #[pyo3(signature = (stream = None))]
    fn discard(slf: &Bound<'_, Self>, stream: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        discard(slf.py(), slf.as_any(), stream)
    }
    /// Discards this managed buffer's contents and prefetches it to `location`.
    #[pyo3(signature = (location, stream = None))]
    fn discard_prefetch(
        slf: &Bound<'_, Self>,
        location: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        discard_prefetch(slf.py(), slf.as_any(), location, stream)
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

/// A source of buffers on one device: the base of `DeviceMemoryResource`,
/// `PinnedMemoryResource` and `ManagedMemoryResource` (for `isinstance`).
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
        let mut b = py
            .detach(|| {
                run_ordered(&stream::order_of(s, dev)?, dev, |own| {
                    mr.allocate(size, own)
                })
            })
            .py_err()?;
        // The buffer is released on the stream it was allocated on: a stream object
        // (cuda.core's, CuPy's, PyTorch's) stays alive until then, so a stream destroyed
        // with its Python object never receives the release. (A bare int handle is the
        // caller's promise that the stream outlives the buffer.)
        if let Some(obj) = stream.filter(|o| !o.is_none() && o.extract::<i64>().is_err()) {
            b.keep_release_stream_alive(obj.clone().unbind());
        }
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

/// A device ordinal given as an int or as an object with `device_id` (a `Device`).
fn ordinal(device: &Bound<'_, PyAny>) -> PyResult<usize> {
    match device.extract::<usize>() {
        Ok(d) => Ok(d),
        Err(_) => device.getattr("device_id")?.extract(),
    }
}

/// Options objects are cuda.core's way to tune its pools; stridekit's resources have
/// none, so anything but None is refused rather than ignored.
fn no_options(name: &str, options: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match options {
        Some(o) if !o.is_none() => Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name}: options are not supported (stridekit's resources take none)"
        ))),
        _ => Ok(()),
    }
}

/// The base of a resource class: `options` refused unless None, the device (an ordinal
/// or a `Device`; 0 when not given) opened, and the resource made on it.
fn resource(
    name: &str,
    options: Option<&Bound<'_, PyAny>>,
    device_id: Option<&Bound<'_, PyAny>>,
    make: impl FnOnce(&Device) -> stridekit::Result<Which>,
) -> PyResult<PyMemoryResource> {
    no_options(name, options)?;
    let device = device_id.map(ordinal).transpose()?.unwrap_or(0);
    let dev = Device::open(device).py_err()?;
    Ok(PyMemoryResource {
        which: make(&dev).py_err()?,
        device,
    })
}

/// The device's memory pool (stream-ordered allocations).
#[pyclass(name = "DeviceMemoryResource", module = "stridekit", extends = PyMemoryResource, frozen)]
pub struct PyDeviceMemoryResource;

#[pymethods]
impl PyDeviceMemoryResource {
    #[new]
    #[pyo3(signature = (device_id, options = None))]
    fn new(
        device_id: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let base = resource("DeviceMemoryResource", options, Some(device_id), |d| {
            Ok(Which::Device(DeviceMemoryResource::new(d)?))
        })?;
        Ok(PyClassInitializer::from(base).add_subclass(PyDeviceMemoryResource))
    }
}

/// Page-locked host memory, readable by the CPU and by kernels of every device.
#[pyclass(name = "PinnedMemoryResource", module = "stridekit", extends = PyMemoryResource, frozen)]
pub struct PyPinnedMemoryResource;

#[pymethods]
impl PyPinnedMemoryResource {
    /// `device_id` picks the device whose context allocates (0 by default).
    #[new]
    #[pyo3(signature = (options = None, *, device_id = None))]
    fn new(
        options: Option<&Bound<'_, PyAny>>,
        device_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let base = resource("PinnedMemoryResource", options, device_id, |d| {
            Ok(Which::Pinned(PinnedMemoryResource::new(d)))
        })?;
        Ok(PyClassInitializer::from(base).add_subclass(PyPinnedMemoryResource))
    }
}

/// Managed (unified) memory.
#[pyclass(name = "ManagedMemoryResource", module = "stridekit", extends = PyMemoryResource, frozen)]
pub struct PyManagedMemoryResource;

#[pymethods]
impl PyManagedMemoryResource {
    /// `device_id` picks the device whose context allocates (0 by default).
    #[new]
    #[pyo3(signature = (options = None, *, device_id = None))]
    fn new(
        options: Option<&Bound<'_, PyAny>>,
        device_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let base = resource("ManagedMemoryResource", options, device_id, |d| {
            Ok(Which::Managed(ManagedMemoryResource::new(d)?))
        })?;
        Ok(PyClassInitializer::from(base).add_subclass(PyManagedMemoryResource))
    }
    #[getter]
    fn is_managed(&self) -> bool {
        true
    }
}

/// A location: a device ordinal (int), "host", or an object with `device_id` (a
/// `Device`) or `numa_id` (a `Host`; None for any node).
pub(crate) fn location(obj: &Bound<'_, PyAny>) -> PyResult<Location> {
    if let Ok(d) = obj.extract::<usize>() {
        return Ok(Location::Device(d));
    }
    if let Ok("host") = obj.extract::<String>().as_deref() {
        return Ok(Location::Host);
    }
    if let Ok(d) = obj.getattr("device_id") {
        return Ok(Location::Device(d.extract()?));
    }
    if let Ok(n) = obj.getattr("numa_id") {
        return Ok(match n.extract::<Option<u32>>()? {
            Some(n) => Location::HostNuma(n),
            None => Location::Host,
        });
    }
    Err(PyValueError::new_err(
        "a location is a device ordinal (int), \"host\", a Device or a Host",
    ))
}

/// A location as Python sees it: the device ordinal, "host", or ("host", numa node).
fn location_to_py(py: Python<'_>, l: Location) -> PyResult<Py<PyAny>> {
    Ok(match l {
        Location::Device(d) => d.into_pyobject(py)?.into_any().unbind(),
        Location::Host => "host".into_pyobject(py)?.into_any().unbind(),
        Location::HostNuma(n) => ("host", n).into_pyobject(py)?.into_any().unbind(),
        Location::HostNumaCurrent => ("host", "current").into_pyobject(py)?.into_any().unbind(),
    })
}

fn buffers_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Arc<Buffer>>> {
    match obj.extract::<PyRef<'_, PyBuffer>>() {
        Ok(b) => Ok(vec![b.inner.clone()]),
        Err(_) => obj
            .try_iter()?
            .map(|b| Ok(b?.extract::<PyRef<'_, PyBuffer>>()?.inner.clone()))
            .collect(),
    }
}

/// Locations as given: one for every buffer, or a list with one per buffer.
enum Locations {
    One(Location),
    PerBuffer(Vec<Location>),
}

impl Locations {
    fn of(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        match location(obj) {
            Ok(l) => Ok(Locations::One(l)),
            Err(_) => Ok(Locations::PerBuffer(
                obj.try_iter()?
                    .map(|l| location(&l?))
                    .collect::<PyResult<_>>()?,
            )),
        }
    }

    fn batch(&self) -> BatchLocations<'_> {
        match self {
            Locations::One(l) => BatchLocations::All(*l),
            Locations::PerBuffer(v) => BatchLocations::PerRange(v),
        }
    }
}

/// Runs a batched managed operation on `stream`'s order.
fn batched(
    py: Python<'_>,
    bufs: Vec<Arc<Buffer>>,
    stream: Option<&Bound<'_, PyAny>>,
    op: impl FnOnce(&[ManagedRange<'_>], &Arc<stridekit::CudaStream>) -> stridekit::Result<()> + Send,
) -> PyResult<()> {
    let s = stream::exchange(stream)?;
    let device = bufs.first().and_then(|b| b.device_ordinal()).unwrap_or(0);
    py.detach(|| {
        let ranges: Vec<ManagedRange<'_>> = bufs
            .iter()
            .map(|b| ManagedRange::of(b))
            .collect::<Result<_, _>>()?;
        run_ordered(&stream::order_of(s, device)?, device, |own| {
            op(&ranges, own)
        })
    })
    .py_err()
}

/// The ranges as exclusive, for a discard. Python has no borrow rules: as with
/// cuda.core, asking for a discard states that nothing reads the contents until they
/// are written again.
fn exclusive<'a>(ranges: &[ManagedRange<'a>]) -> Vec<stridekit::managed::ExclusiveRange<'a>> {
    ranges
        .iter()
        // SAFETY: the Python caller's statement above, documented on `discard`.
        .map(|r| unsafe { r.assume_exclusive() })
        .collect()
}

/// Discards managed buffers' contents (one buffer or a list), ordered on `stream`.
#[pyfunction]
#[pyo3(signature = (buffers, stream = None))]
pub(crate) fn discard(
    py: Python<'_>,
    buffers: &Bound<'_, PyAny>,
    stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let bufs = buffers_of(buffers)?;
    batched(py, bufs, stream, |r, s| {
        managed::discard_batch(&exclusive(r), s)
    })
}

/// Discards managed buffers' contents and prefetches them to locations (one for all, or
/// one per buffer), ordered on `stream`.
#[pyfunction]
#[pyo3(signature = (buffers, locations, stream = None))]
pub(crate) fn discard_prefetch(
    py: Python<'_>,
    buffers: &Bound<'_, PyAny>,
    locations: &Bound<'_, PyAny>,
    stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let (bufs, locs) = (buffers_of(buffers)?, Locations::of(locations)?);
    batched(py, bufs, stream, move |r, s| {
        managed::discard_and_prefetch_batch(&exclusive(r), locs.batch(), s)
    })
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
    let (bufs, locs) = (buffers_of(buffers)?, Locations::of(locations)?);
    batched(py, bufs, stream, move |r, s| {
        managed::prefetch_batch(r, locs.batch(), s)
    })
}
