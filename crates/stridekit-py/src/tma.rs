//! TMA descriptors for Python: validated by the Rust rules, 128 bytes to pass by value.

use crate::errors::IntoPy;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stridekit::tma::{
    Interleave, L2Promotion, OobFill, Swizzle, TensorMapDescriptor, TiledOptions,
};
use stridekit::view::MemoryOwner;
use stridekit::StridedMemoryView;

/// A `CUtensorMap` (128 bytes): pass `bytes(desc)` by value to a kernel's
/// `const __grid_constant__ CUtensorMap` parameter. The descriptor keeps the memory it
/// describes alive (an owner of the view's memory), so it cannot point at freed memory.
#[pyclass(name = "TensorMapDescriptor", module = "stridekit")]
pub struct PyTensorMap {
    desc: TensorMapDescriptor<'static>,
    /// Keeps the described memory alive as long as the descriptor.
    _memory: MemoryOwner,
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
        let mut desc = self.desc.clone();
        desc.replace_address(&alias).py_err()?;
        // SAFETY: `_memory` keeps the new memory alive as long as the descriptor.
        self.desc = unsafe { desc.detach() };
        self._memory = alias.memory_owner();
        Ok(())
    }
    fn __repr__(&self) -> String {
        format!(
            "TensorMapDescriptor(device_id={}, address={:#x})",
            self.desc.device_ordinal(),
            self.desc.address()
        )
    }
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
        .swizzle(Swizzle::from_bytes(swizzle).py_err()?)
        .interleave(Interleave::from_bytes(interleave).py_err()?)
        .l2_promotion(L2Promotion::from_bytes(l2).py_err()?)
        .oob_fill(if nan { OobFill::Nan } else { OobFill::Zero });
    if let Some(es) = element_strides {
        o = o.element_strides(&es);
    }
    let desc = TensorMapDescriptor::tiled(view, &o).py_err()?;
    Ok(PyTensorMap {
        // SAFETY: `_memory` keeps the described memory alive as long as the descriptor.
        desc: unsafe { desc.detach() },
        _memory: view.memory_owner(),
    })
}
