//! `stridekit.dist`'s native half: communicators (NCCL, or ranks of this process) and
//! the transfers of views between ranks. The Python module turns tensors into views.

use crate::errors::IntoPy;
use crate::stream;
use crate::view_object::PyView;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex, MutexGuard};
use stridekit::dist::{self, Batch, Communicator, LocalComm, NcclComm, Split, UniqueId};
use stridekit::view::DynView;
use stridekit::{CudaStream, Device, StridedMemoryView, StridedMemoryViewMut};

enum Comm {
    Nccl(NcclComm),
    Local(LocalComm),
}

/// A rank of a communicator: NCCL's (`Communicator(unique_id, rank, size, device_id)`)
/// or one of `local_world`'s ranks of this process.
#[pyclass(name = "Communicator", module = "stridekit.dist", frozen)]
pub(crate) struct PyComm {
    inner: Mutex<Comm>,
    rank: usize,
    size: usize,
    device: usize,
}

impl PyComm {
    fn of(c: Comm) -> Self {
        let (rank, size, device) = match &c {
            Comm::Nccl(n) => (n.rank(), n.size(), n.device()),
            Comm::Local(l) => (l.rank(), l.size(), l.device()),
        };
        PyComm {
            inner: Mutex::new(c),
            rank,
            size,
            device,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Comm> {
        // A poisoned lock only means another thread panicked while holding it; the
        // communicator itself reports its state (aborted) on its next use.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl PyComm {
    /// Joins the NCCL communicator named by `unique_id` (the 128 bytes of
    /// `nccl_unique_id()` on one rank, shared by the caller) as `rank` of `size`, on
    /// device `device_id`. Blocks until every rank has joined.
    #[new]
    #[pyo3(signature = (unique_id, rank, size, device_id = 0))]
    fn new(
        py: Python<'_>,
        unique_id: &[u8],
        rank: usize,
        size: usize,
        device_id: usize,
    ) -> PyResult<Self> {
        let id = UniqueId::from_bytes(unique_id).py_err()?;
        let dev = Device::open(device_id).py_err()?;
        let c = py
            .detach(|| NcclComm::init(&dev, &id, rank, size))
            .py_err()?;
        Ok(PyComm::of(Comm::Nccl(c)))
    }

    /// This rank.
    #[getter]
    fn rank(&self) -> usize {
        self.rank
    }
    /// The number of ranks.
    #[getter]
    fn size(&self) -> usize {
        self.size
    }
    /// The device of this rank.
    #[getter]
    fn device_id(&self) -> usize {
        self.device
    }
    fn __repr__(&self) -> String {
        let kind = match &*self.lock() {
            Comm::Nccl(_) => "NCCL",
            Comm::Local(_) => "local",
        };
        format!(
            "<stridekit.dist.Communicator {kind} rank {} of {} on device {}>",
            self.rank, self.size, self.device
        )
    }
}

/// 128 new bytes naming an NCCL communicator (make them on one rank, share them).
#[pyfunction]
pub(crate) fn nccl_unique_id(py: Python<'_>) -> PyResult<Py<PyBytes>> {
    let id = UniqueId::new().py_err()?;
    Ok(PyBytes::new(py, id.as_bytes()).unbind())
}

/// The loaded NCCL's version (major, minor, patch); CUDAError where NCCL cannot load.
#[pyfunction]
pub(crate) fn nccl_version() -> PyResult<(u32, u32, u32)> {
    dist::nccl_version().py_err()
}

/// One communicator per entry of `devices`: ranks of this process (run each on a thread
/// of its own), whose transfers are device copies.
#[pyfunction]
pub(crate) fn local_world(devices: Vec<usize>) -> PyResult<Vec<PyComm>> {
    Ok(dist::local_world(&devices)
        .py_err()?
        .into_iter()
        .map(|c| PyComm::of(Comm::Local(c)))
        .collect())
}

fn writable(v: &PyView) -> PyResult<StridedMemoryViewMut<'static>> {
    match v.rust_view()? {
        // SAFETY: Python has no aliasing rules (as in cuda.core); the transfer writes
        // through this alias under the view's copy lock, held by the caller.
        DynView::Writable(w) => Ok(unsafe { w.writable_alias() }),
        DynView::ReadOnly(_) => Err(PyValueError::new_err("dist: a receiving view is read-only")),
    }
}

/// Posts `sends` ((view, peer) pairs) and `recvs` in one batch, checks them with the
/// peers and runs them on `stream`.
#[pyfunction]
#[pyo3(signature = (comm, sends, recvs, stream = None, self_through_transport = false, collective = false, piece_bytes = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn batch(
    py: Python<'_>,
    comm: &PyComm,
    sends: Vec<(Py<PyView>, usize)>,
    recvs: Vec<(Py<PyView>, usize)>,
    stream: Option<&Bound<'_, PyAny>>,
    self_through_transport: bool,
    collective: bool,
    piece_bytes: Option<usize>,
) -> PyResult<()> {
    let srcs: Vec<(StridedMemoryView<'static>, usize)> = sends
        .iter()
        .map(|(v, p)| Ok((v.borrow(py).static_alias()?, *p)))
        .collect::<PyResult<_>>()?;
    // One receive per view object: each holds its view's copy lock for the transfer
    // (a second would wait for the first forever), and two receives into one memory
    // in one group would race.
    for (i, (v, _)) in recvs.iter().enumerate() {
        if recvs[..i].iter().any(|(w, _)| w.as_ptr() == v.as_ptr()) {
            return Err(PyValueError::new_err(format!(
                "dist: receive {i} names a view an earlier receive of this batch already writes; give each receive its own view"
            )));
        }
    }
    let views: Vec<PyRef<'_, PyView>> = recvs.iter().map(|(v, _)| v.borrow(py)).collect();
    let locks: Vec<_> = views
        .iter()
        .map(|v| {
            v.copy_lock
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
        .collect();
    let mut dsts: Vec<(StridedMemoryViewMut<'static>, usize)> = views
        .iter()
        .zip(&recvs)
        .map(|(v, (_, p))| Ok((writable(v)?, *p)))
        .collect::<PyResult<_>>()?;
    if collective && (srcs.len() != comm.size || dsts.len() != comm.size) {
        return Err(PyValueError::new_err(format!(
            "dist.all_to_all: {} send views and {} receive views for {} ranks; give one of each per rank",
            srcs.len(),
            dsts.len(),
            comm.size
        )));
    }
    let value = stream::exchange(stream)?;
    let device = comm.device;
    let r = py.detach(|| {
        let guard = comm.lock();
        on_stream_detached(
            device,
            value,
            |s: &Arc<CudaStream>| -> stridekit::Result<()> {
                fn go<C: Communicator>(
                    c: &C,
                    srcs: &[(StridedMemoryView<'static>, usize)],
                    dsts: &mut [(StridedMemoryViewMut<'static>, usize)],
                    (through, collective, piece_bytes): (bool, bool, Option<usize>),
                    s: &Arc<CudaStream>,
                ) -> stridekit::Result<()> {
                    let piece = piece_bytes.unwrap_or(dist::DEFAULT_PIECE_BYTES);
                    if collective {
                        let sv: Vec<_> = srcs.iter().map(|(v, _)| v.clone()).collect();
                        let mut dv: Vec<_> = dsts.iter_mut().map(|(v, _)| v.reborrow()).collect();
                        let mut b = dist::all_to_all_batch(c, &sv, &mut dv)?;
                        b.piece_bytes(piece)?;
                        return b.run(s);
                    }
                    let mut b = Batch::new(c);
                    b.self_through_transport(through).piece_bytes(piece)?;
                    for (v, p) in srcs {
                        b.send(v, *p)?;
                    }
                    for (v, p) in dsts.iter_mut() {
                        b.recv(v, *p)?;
                    }
                    b.run(s)
                }
                let how = (self_through_transport, collective, piece_bytes);
                match &*guard {
                    Comm::Nccl(c) => go(c, &srcs, &mut dsts, how, s),
                    Comm::Local(c) => go(c, &srcs, &mut dsts, how, s),
                }
            },
        )
    });
    drop(locks);
    r
}

/// Redistributes this rank's part `src` of a tensor of global `shape` split along
/// `from_axis` into its part `dst` of the split along `to_axis` (every rank calls it).
#[pyfunction]
#[pyo3(signature = (comm, shape, from_axis, to_axis, src, dst, stream = None, piece_bytes = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn redistribute(
    py: Python<'_>,
    comm: &PyComm,
    shape: Vec<i64>,
    from_axis: usize,
    to_axis: usize,
    src: Py<PyView>,
    dst: Py<PyView>,
    stream: Option<&Bound<'_, PyAny>>,
    piece_bytes: Option<usize>,
) -> PyResult<()> {
    let (from, to) = (
        Split::new(from_axis, comm.size).py_err()?,
        Split::new(to_axis, comm.size).py_err()?,
    );
    let s = src.borrow(py).static_alias()?;
    let d = dst.borrow(py);
    let _lock = d
        .copy_lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut w = writable(&d)?;
    let value = stream::exchange(stream)?;
    let device = comm.device;
    py.detach(|| {
        let guard = comm.lock();
        fn go<C: Communicator>(
            c: &C,
            (shape, from, to): (&[i64], &Split, &Split),
            s: &StridedMemoryView<'static>,
            w: &mut StridedMemoryViewMut<'static>,
            piece_bytes: Option<usize>,
            st: &Arc<CudaStream>,
        ) -> stridekit::Result<()> {
            let mut b = dist::redistribute_batch(c, shape, from, to, s, w)?;
            b.piece_bytes(piece_bytes.unwrap_or(dist::DEFAULT_PIECE_BYTES))?;
            b.run(st)
        }
        let split = (shape.as_slice(), &from, &to);
        on_stream_detached(device, value, |st| match &*guard {
            Comm::Nccl(c) => go(c, split, &s, &mut w, piece_bytes, st),
            Comm::Local(c) => go(c, split, &s, &mut w, piece_bytes, st),
        })
    })
}

/// Runs `f` on the stream a stream value names on `device` (None: the legacy default
/// stream; -1: stridekit's own stream, waited for). Callable without the GIL.
fn on_stream_detached(
    device: usize,
    value: stridekit::StreamValue,
    f: impl FnOnce(&Arc<CudaStream>) -> stridekit::Result<()>,
) -> PyResult<()> {
    let order = stream::order_of(value, device).py_err()?;
    stridekit::stream::run_ordered(&order, device, f).py_err()
}
