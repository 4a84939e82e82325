//! The `stridekit` Python package's native module: thin bindings over the Rust crates,
//! with cuda.core's names.

// Lowest first: each module uses only the ones before it (tests/layers.rs).
mod calls;
mod cview;
mod dist;
mod dtype;
mod errors;
mod exchange;
mod import;
mod kernels;
mod layout;
mod memory;
mod nvrtc;
mod stream;
mod tma;
mod view;
mod view_cell;
mod view_object;

use pyo3::prelude::*;

#[pymodule]
fn _stridekit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CUDAError", m.py().get_type::<errors::CUDAError>())?;
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<view_object::PyView>()?;
    m.add_class::<memory::PyBuffer>()?;
    m.add_class::<memory::PyMemoryResource>()?;
    m.add_class::<tma::PyTensorMap>()?;
    m.add_class::<memory::PyDeviceMemoryResource>()?;
    m.add_class::<memory::PyPinnedMemoryResource>()?;
    m.add_class::<memory::PyManagedMemoryResource>()?;
    m.add_function(wrap_pyfunction!(memory::prefetch, m)?)?;
    m.add_function(wrap_pyfunction!(memory::discard, m)?)?;
    m.add_function(wrap_pyfunction!(memory::discard_prefetch, m)?)?;
    m.add_function(wrap_pyfunction!(nvrtc::_add_nvrtc_search_dirs, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::precompile_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::add_kernel_pack, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::set_background_compile, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::wait_for_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(
        kernels::kernels_compiled_in_background,
        m
    )?)?;
    m.add_class::<dist::PyComm>()?;
    m.add_function(wrap_pyfunction!(dist::nccl_unique_id, m)?)?;
    m.add_function(wrap_pyfunction!(dist::nccl_version, m)?)?;
    m.add_function(wrap_pyfunction!(dist::local_world, m)?)?;
    m.add_function(wrap_pyfunction!(dist::batch, m)?)?;
    m.add_function(wrap_pyfunction!(dist::redistribute, m)?)?;
    m.add("cuda_available", stridekit::cuda_available())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
