//! TMA descriptors for Python: validated by the Rust rules, 128 bytes to pass by value.

use crate::errors::IntoPy;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stridekit::tma::{
    Interleave, L2Promotion, OobFill, Swizzle, TensorMapDataType, TensorMapDescriptor, TiledOptions,
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
    /// The device the descriptor is for (a `stridekit.Device`).
    #[getter]
    fn device<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("stridekit")?
            .getattr("Device")?
            .call1((self.desc.device_ordinal(),))
    }
    /// The global address the descriptor points at.
    #[getter]
    fn address(&self) -> u64 {
        self.desc.address()
    }
    /// Points the descriptor at `view`'s memory, which must have the same shape, strides,
    /// itemsize and device (and the alignment TMA needs).
    fn replace_address(&mut self, view: PyRef<'_, crate::view_object::PyView>) -> PyResult<()> {
        let alias = view.static_alias()?;
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

/// `as_tensor_map`'s arguments as given (keywords, or read from an options object).
pub(crate) struct TiledArgs<'a, 'py> {
    pub box_dim: Option<Vec<u32>>,
    pub element_strides: Option<Vec<u32>>,
    pub data_type: Option<&'a Bound<'py, PyAny>>,
    pub interleave: Option<&'a Bound<'py, PyAny>>,
    pub swizzle: Option<&'a Bound<'py, PyAny>>,
    pub l2_promotion: Option<&'a Bound<'py, PyAny>>,
    pub oob_fill: Option<&'a Bound<'py, PyAny>>,
}

/// The CUDA value of an enum argument (an `IntEnum` member or an int); None for None.
fn enum_value(name: &str, v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    match v {
        Some(v) if !v.is_none() => {
            v.extract::<i64>().map(Some).map_err(|_| {
                PyTypeError::new_err(format!(
                "as_tensor_map: {name} must be a TensorMap enum member (or its int value), not {}",
                v.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
            })
        }
        _ => Ok(None),
    }
}

fn out_of_range(name: &str, v: i64, allowed: &str) -> PyErr {
    PyValueError::new_err(format!(
        "as_tensor_map: {name} value {v} is not one stridekit supports ({allowed})"
    ))
}

/// A `data_type`: a `TensorMapDataType` member (CUDA's value) or a NumPy / ml_dtypes dtype.
fn data_type(v: &Bound<'_, PyAny>) -> PyResult<TensorMapDataType> {
    use TensorMapDataType::*;
    const BY_CUDA_VALUE: [TensorMapDataType; 13] = [
        U8, U16, U32, I32, U64, I64, F16, F32, F64, BF16, F32Ftz, TF32, TF32Ftz,
    ];
    if let Ok(i) = v.extract::<i64>() {
        return usize::try_from(i)
            .ok()
            .and_then(|i| BY_CUDA_VALUE.get(i).copied())
            .ok_or_else(|| out_of_range("data_type", i, "TensorMapDataType, 0 to 12"));
    }
    let d = crate::dtype::from_py(Some(v))?
        .ok_or_else(|| PyTypeError::new_err("as_tensor_map: data_type None names no type"))?;
    TensorMapDataType::for_dtype(d).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "as_tensor_map: dtype {d:?} has no TMA data type; pass a TensorMapDataType"
        ))
    })
}

impl<'a, 'py> TiledArgs<'a, 'py> {
    /// Reads an options object (`TensorMapDescriptorOptions` or anything with its
    /// attributes); the keyword arguments must then be left out.
    pub(crate) fn from_options(
        o: &Bound<'py, PyAny>,
        given: &TiledArgs<'_, '_>,
    ) -> PyResult<TiledOptions> {
        if given.box_dim.is_some()
            || given.element_strides.is_some()
            || [
                given.data_type,
                given.interleave,
                given.swizzle,
                given.l2_promotion,
                given.oob_fill,
            ]
            .iter()
            .any(|a| a.is_some_and(|a| !a.is_none()))
        {
            return Err(PyTypeError::new_err(
                "as_tensor_map: give options or the individual arguments, not both",
            ));
        }
        let get = |k: &str| o.getattr(k);
        let (dt, il, sw, l2, oob) = (
            get("data_type")?,
            get("interleave")?,
            get("swizzle")?,
            get("l2_promotion")?,
            get("oob_fill")?,
        );
        TiledArgs {
            box_dim: Some(get("box_dim")?.extract()?),
            element_strides: get("element_strides")?.extract()?,
            data_type: Some(&dt),
            interleave: Some(&il),
            swizzle: Some(&sw),
            l2_promotion: Some(&l2),
            oob_fill: Some(&oob),
        }
        .into_options()
    }

    /// The Rust options these arguments describe, each checked.
    pub(crate) fn into_options(self) -> PyResult<TiledOptions> {
        let box_dim = self
            .box_dim
            .ok_or_else(|| PyTypeError::new_err("as_tensor_map: box_dim is required"))?;
        let mut o = TiledOptions::new(&box_dim);
        if let Some(es) = &self.element_strides {
            o = o.element_strides(es);
        }
        if let Some(d) = self.data_type.filter(|d| !d.is_none()) {
            o = o.data_type(data_type(d)?);
        }
        o = o.interleave(match enum_value("interleave", self.interleave)? {
            None | Some(0) => Interleave::None,
            Some(1) => Interleave::B16,
            Some(2) => Interleave::B32,
            Some(v) => return Err(out_of_range("interleave", v, "TensorMapInterleave, 0 to 2")),
        });
        o = o.swizzle(match enum_value("swizzle", self.swizzle)? {
            None | Some(0) => Swizzle::None,
            Some(1) => Swizzle::B32,
            Some(2) => Swizzle::B64,
            Some(3) => Swizzle::B128,
            Some(v) => return Err(out_of_range("swizzle", v, "TensorMapSwizzle, 0 to 3")),
        });
        o = o.l2_promotion(match enum_value("l2_promotion", self.l2_promotion)? {
            None | Some(0) => L2Promotion::None,
            Some(1) => L2Promotion::B64,
            Some(2) => L2Promotion::B128,
            Some(3) => L2Promotion::B256,
            Some(v) => {
                return Err(out_of_range(
                    "l2_promotion",
                    v,
                    "TensorMapL2Promotion, 0 to 3",
                ))
            }
        });
        o = o.oob_fill(match enum_value("oob_fill", self.oob_fill)? {
            None | Some(0) => OobFill::Zero,
            Some(1) => OobFill::Nan,
            Some(v) => return Err(out_of_range("oob_fill", v, "TensorMapOOBFill, 0 or 1")),
        });
        Ok(o)
    }
}

pub(crate) fn tiled(
    view: &StridedMemoryView<'static>,
    options: &TiledOptions,
) -> PyResult<PyTensorMap> {
    let desc = TensorMapDescriptor::tiled(view, options).py_err()?;
    Ok(PyTensorMap {
        // SAFETY: `_memory` keeps the described memory alive as long as the descriptor.
        desc: unsafe { desc.detach() },
        _memory: view.memory_owner(),
    })
}
