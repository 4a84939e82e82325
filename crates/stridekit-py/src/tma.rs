//! TMA descriptors for Python: validated by the Rust rules, 128 bytes to pass by value.

use crate::errors::IntoPy;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stridekit::tma::{
    Interleave, L2Promotion, OobFill, Swizzle, TensorMapDescriptor, TiledOptions,
};
use stridekit::StridedMemoryView;

/// A `CUtensorMap` (128 bytes): pass `bytes(desc)` by value to a kernel's
/// `const __grid_constant__ CUtensorMap` parameter.
#[pyclass(name = "TensorMapDescriptor", module = "stridekit")]
pub struct PyTensorMap {
    desc: TensorMapDescriptor<'static>,
}

fn raw_bytes<'d>(d: &'d TensorMapDescriptor<'_>) -> &'d [u8] {
    // SAFETY: a CUtensorMap is 128 bytes of plain, initialised data.
    unsafe { std::slice::from_raw_parts(d.as_raw() as *const _ as *const u8, 128) }
}

#[pymethods]
impl PyTensorMap {
    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, raw_bytes(&self.desc))
    }
    #[getter]
    fn device_id(&self) -> usize {
        self.desc.device_ordinal()
    }
    /// The global address the descriptor points at.
    #[getter]
    fn address(&self) -> u64 {
        self.desc.address()
    }
    /// Points the descriptor at `view`'s memory, which must have the same shape, strides,
    /// itemsize and device (and the alignment TMA needs).
    fn replace_address(&mut self, view: PyRef<'_, crate::view::PyView>) -> PyResult<()> {
        let alias = view.static_alias();
        self.desc.replace_address(&alias).py_err()
    }
    fn __repr__(&self) -> String {
        format!(
            "TensorMapDescriptor(device_id={}, address={:#x})",
            self.desc.device_ordinal(),
            self.desc.address()
        )
    }
}

fn pick<T: Copy>(what: &str, v: u32, table: &[(u32, T)]) -> PyResult<T> {
    table
        .iter()
        .find(|(k, _)| *k == v)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let allowed: Vec<String> = table.iter().map(|(k, _)| k.to_string()).collect();
            PyValueError::new_err(format!("{what} {v} is not one of {}", allowed.join(", ")))
        })
}

pub(crate) fn tiled(
    view: &StridedMemoryView<'static>,
    box_dim: &[u32],
    swizzle: u32,
    interleave: u32,
    l2: u32,
    nan: bool,
    element_strides: Option<Vec<u32>>,
) -> PyResult<PyTensorMap> {
    let mut o = TiledOptions::new(box_dim)
        .swizzle(pick(
            "swizzle",
            swizzle,
            &[
                (0, Swizzle::None),
                (32, Swizzle::B32),
                (64, Swizzle::B64),
                (128, Swizzle::B128),
            ],
        )?)
        .interleave(pick(
            "interleave",
            interleave,
            &[
                (0, Interleave::None),
                (16, Interleave::B16),
                (32, Interleave::B32),
            ],
        )?)
        .l2_promotion(pick(
            "l2_promotion",
            l2,
            &[
                (0, L2Promotion::None),
                (64, L2Promotion::B64),
                (128, L2Promotion::B128),
                (256, L2Promotion::B256),
            ],
        )?)
        .oob_fill(if nan { OobFill::Nan } else { OobFill::Zero });
    if let Some(es) = element_strides {
        o = o.element_strides(&es);
    }
    let desc = TensorMapDescriptor::tiled(view, &o).py_err()?;
    Ok(PyTensorMap { desc })
}
