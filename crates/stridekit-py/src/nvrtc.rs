//! Where NVRTC may live in a Python environment: the `nvidia-cuda-nvrtc` wheel's folder
//! below each `sys.path` entry, registered with the core crate at import.

use pyo3::prelude::*;
use std::path::PathBuf;

/// Registers the NVRTC wheel folders below each of `site_dirs` (the package passes
/// `sys.path` when it is imported).
#[pyfunction]
pub(crate) fn _add_nvrtc_search_dirs(site_dirs: Vec<PathBuf>) {
    for site in site_dirs {
        for d in stridekit::nvrtc_wheel_dirs(&site) {
            stridekit::add_nvrtc_search_dir(d);
        }
    }
}
