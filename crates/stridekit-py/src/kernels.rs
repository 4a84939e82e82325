//! Kernel packs: the copy engine's kernels compiled ahead of time (the core crate's
//! `precompile_kernels` and `add_kernel_pack`); the kernels compiled in the background
//! (`set_background_compile`, `wait_for_kernels`).

use crate::errors::IntoPy;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// Compiles the copy engine's common kernels for GPUs of `compute_capability` (major,
/// minor; None: device 0's) with NVRTC into the pack `path`; no GPU needed when the
/// capability is given. Returns a dict: `kernels`, `bytes`, `failed` (each kernel NVRTC
/// refused, with its reason).
#[pyfunction]
#[pyo3(signature = (path, compute_capability = None))]
pub(crate) fn precompile_kernels(
    py: Python<'_>,
    path: PathBuf,
    compute_capability: Option<(i32, i32)>,
) -> PyResult<Py<PyDict>> {
    let cc = match compute_capability {
        Some(cc) => cc,
        None => stridekit::Device::open(0)
            .and_then(|d| d.compute_capability())
            .py_err()?,
    };
    let done = py
        .detach(|| stridekit::precompile_kernels(&path, cc))
        .py_err()?;
    let out = PyDict::new(py);
    out.set_item("kernels", done.kernels)?;
    out.set_item("bytes", done.bytes)?;
    out.set_item("failed", done.failed)?;
    Ok(out.unbind())
}

/// Adds `path` to the kernel packs searched before NVRTC compiles a kernel.
#[pyfunction]
pub(crate) fn add_kernel_pack(path: PathBuf) {
    stridekit::add_kernel_pack(path);
}

/// Whether a copy whose kernels are not compiled yet runs at once on the fallback kernel
/// while they compile on background threads (True, the default) or waits for them.
#[pyfunction]
pub(crate) fn set_background_compile(enabled: bool) {
    stridekit::set_background_compile(enabled);
}

/// Waits (without the GIL) until every kernel being compiled in the background is done.
#[pyfunction]
pub(crate) fn wait_for_kernels(py: Python<'_>) {
    py.detach(stridekit::wait_for_kernels);
}

/// How many kernels this process has handed to background threads.
#[pyfunction]
pub(crate) fn kernels_compiled_in_background() -> u64 {
    stridekit::kernels_compiled_in_background()
}
