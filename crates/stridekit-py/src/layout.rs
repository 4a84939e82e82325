//! `StridedLayout` for Python, with cuda.core's names; every operation is the Rust one.

use crate::errors::IntoPy;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use stridekit::layout::RepackOptions;
use stridekit::{Order, SliceArg, StridedLayout};

/// Shape, strides (in elements), itemsize (in bytes) and slice offset of a strided tensor.
#[pyclass(name = "StridedLayout", module = "stridekit", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyLayout {
    pub(crate) inner: StridedLayout,
}

impl From<StridedLayout> for PyLayout {
    fn from(inner: StridedLayout) -> Self {
        PyLayout { inner }
    }
}

/// An order argument: 'C', 'F', 'K' or a permutation of the axes.
pub(crate) enum OrderArg {
    Named(char),
    Axes(Vec<i64>),
}

impl OrderArg {
    pub(crate) fn parse(o: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = o.extract::<String>() {
            return match s.as_str() {
                "C" | "F" | "K" => Ok(OrderArg::Named(s.chars().next().unwrap_or('C'))),
                _ => Err(PyValueError::new_err(format!(
                    "order {s:?} is not 'C', 'F', 'K' or a permutation of the axes"
                ))),
            };
        }
        Ok(OrderArg::Axes(o.extract::<Vec<i64>>().map_err(|_| {
            PyTypeError::new_err("order must be 'C', 'F', 'K' or a sequence of axes")
        })?))
    }

    pub(crate) fn order(&self) -> Order<'_> {
        match self {
            OrderArg::Named('F') => Order::F,
            OrderArg::Named('K') => Order::K,
            OrderArg::Named(_) => Order::C,
            OrderArg::Axes(a) => Order::Axes(a),
        }
    }
}

fn tuple<'py>(py: Python<'py>, v: &[i64]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, v)
}

/// One Python index (int or slice) as a slice argument.
fn slice_arg(item: &Bound<'_, PyAny>) -> PyResult<SliceArg> {
    if let Ok(i) = item.extract::<i64>() {
        return Ok(SliceArg::Index(i));
    }
    let s = item
        .downcast::<PySlice>()
        .map_err(|_| PyTypeError::new_err("layouts are indexed by ints and slices"))?;
    let get = |name: &str| -> PyResult<Option<i64>> {
        let v = s.getattr(name)?;
        if v.is_none() {
            Ok(None)
        } else {
            v.extract::<i64>().map(Some)
        }
    };
    let step = get("step")?.unwrap_or(1);
    if step == 0 {
        return Err(PyValueError::new_err("slice step cannot be zero"));
    }
    Ok(SliceArg::Range {
        start: get("start")?,
        stop: get("stop")?,
        step,
    })
}

#[pymethods]
impl PyLayout {
    /// A layout from a shape, strides (in elements, or in bytes with `divide_strides`;
    /// None: C-contiguous) and an itemsize.
    #[new]
    #[pyo3(signature = (shape, strides, itemsize, divide_strides = false))]
    fn new(
        shape: Vec<i64>,
        strides: Option<Vec<i64>>,
        itemsize: usize,
        divide_strides: bool,
    ) -> PyResult<Self> {
        let l = match strides {
            None => StridedLayout::dense(&shape, itemsize, Order::C),
            Some(s) if divide_strides => StridedLayout::from_byte_strides(&shape, &s, itemsize),
            Some(s) => StridedLayout::new(&shape, &s, itemsize),
        };
        Ok(l.py_err()?.into())
    }

    /// A dense layout in `stride_order` ('C', 'F' or a permutation, outermost first).
    #[staticmethod]
    #[pyo3(signature = (shape, itemsize, stride_order = None))]
    fn dense(
        shape: Vec<i64>,
        itemsize: usize,
        stride_order: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let o = match stride_order {
            Some(o) => OrderArg::parse(o)?,
            None => OrderArg::Named('C'),
        };
        Ok(StridedLayout::dense(&shape, itemsize, o.order())
            .py_err()?
            .into())
    }

    /// A dense layout with `other`'s shape and itemsize, in `stride_order` ('K' keeps
    /// its stride order).
    #[staticmethod]
    #[pyo3(signature = (other, stride_order = None))]
    fn dense_like(other: &PyLayout, stride_order: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let o = match stride_order {
            Some(o) => OrderArg::parse(o)?,
            None => OrderArg::Named('K'),
        };
        Ok(StridedLayout::dense_like(&other.inner, o.order())
            .py_err()?
            .into())
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple(py, self.inner.shape())
    }
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple(py, self.inner.strides())
    }
    #[getter]
    fn strides_in_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple(py, &self.inner.strides_in_bytes())
    }
    #[getter]
    fn itemsize(&self) -> usize {
        self.inner.itemsize()
    }
    #[getter]
    fn ndim(&self) -> usize {
        self.inner.ndim()
    }
    #[getter]
    fn volume(&self) -> usize {
        self.inner.volume()
    }
    #[getter]
    fn slice_offset(&self) -> i64 {
        self.inner.slice_offset()
    }
    #[getter]
    fn slice_offset_in_bytes(&self) -> i64 {
        self.inner.slice_offset_in_bytes()
    }
    #[getter]
    fn offset_bounds(&self) -> (i64, i64) {
        self.inner.offset_bounds()
    }
    #[getter]
    fn min_offset(&self) -> i64 {
        self.inner.min_offset()
    }
    #[getter]
    fn max_offset(&self) -> i64 {
        self.inner.max_offset()
    }
    #[getter]
    fn stride_order<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.stride_order().iter().map(|&a| a as i64))
    }
    #[getter]
    fn is_unique(&self) -> bool {
        self.inner.is_unique()
    }
    #[getter]
    fn is_contiguous_c(&self) -> bool {
        self.inner.is_contiguous_c()
    }
    #[getter]
    fn is_contiguous_f(&self) -> bool {
        self.inner.is_contiguous_f()
    }
    #[getter]
    fn is_contiguous_any(&self) -> bool {
        self.inner.is_contiguous_any()
    }
    #[getter]
    fn is_dense(&self) -> bool {
        self.inner.is_dense()
    }

    /// Bytes an allocation needs so that every element falls inside it.
    fn required_size_in_bytes(&self) -> PyResult<usize> {
        self.inner.required_size_in_bytes().py_err()
    }

    /// The bit mask of axes that merge with their successor.
    fn flattened_axis_mask(&self) -> u64 {
        self.inner.flattened_axis_mask()
    }

    fn reshaped(&self, shape: Vec<i64>) -> PyResult<Self> {
        Ok(self.inner.reshaped(&shape).py_err()?.into())
    }

    /// The axes in `axis_order` (axis `axis_order[i]` becomes axis `i`).
    fn permuted(&self, axis_order: Vec<i64>) -> PyResult<Self> {
        Ok(self.inner.permuted(&axis_order).py_err()?.into())
    }

    /// Merges axes `start_axis..=end_axis` (all by default), or the axes a `mask` names.
    #[pyo3(signature = (start_axis = None, end_axis = None, mask = None))]
    fn flattened(
        &self,
        start_axis: Option<i64>,
        end_axis: Option<i64>,
        mask: Option<u64>,
    ) -> PyResult<Self> {
        let (start, end) = (start_axis, end_axis);
        let l = match (mask, start, end) {
            (Some(m), None, None) => self.inner.flattened_by_mask(m),
            (Some(_), _, _) => {
                return Err(PyValueError::new_err(
                    "flattened takes either start_axis/end_axis or mask, not both",
                ))
            }
            (None, None, None) => self.inner.flattened_all(),
            (None, s, e) => self.inner.flattened(s.unwrap_or(0), e.unwrap_or(-1)),
        };
        Ok(l.py_err()?.into())
    }

    fn squeezed(&self) -> Self {
        self.inner.squeezed().into()
    }

    /// New extent-1 axes at the positions `axis` names (an int or a tuple).
    fn unsqueezed(&self, axis: &Bound<'_, PyAny>) -> PyResult<Self> {
        let axes: Vec<i64> = match axis.extract::<i64>() {
            Ok(a) => vec![a],
            Err(_) => axis.extract()?,
        };
        Ok(self.inner.unsqueezed(&axes).py_err()?.into())
    }

    fn broadcast_to(&self, shape: Vec<i64>) -> PyResult<Self> {
        Ok(self.inner.broadcast_to(&shape).py_err()?.into())
    }

    /// The same bytes as elements of another itemsize.
    #[pyo3(signature = (itemsize, data_ptr = 0, axis = -1, keep_dim = true))]
    fn repacked(
        &self,
        itemsize: usize,
        data_ptr: u64,
        axis: i64,
        keep_dim: bool,
    ) -> PyResult<Self> {
        let o = RepackOptions {
            data_ptr,
            axis,
            keep_dim,
        };
        Ok(self.inner.repacked_with(itemsize, o).py_err()?.into())
    }

    #[pyo3(signature = (max_itemsize = 16, data_ptr = 0, axis = -1))]
    fn max_compatible_itemsize(
        &self,
        max_itemsize: usize,
        data_ptr: u64,
        axis: i64,
    ) -> PyResult<usize> {
        self.inner
            .max_compatible_itemsize(max_itemsize, data_ptr, axis)
            .py_err()
    }

    /// A dense layout of the same shape in `stride_order`.
    #[pyo3(signature = (stride_order = None))]
    fn to_dense(&self, stride_order: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let o = match stride_order {
            Some(o) => OrderArg::parse(o)?,
            None => OrderArg::Named('K'),
        };
        Ok(self.inner.to_dense(o.order()).py_err()?.into())
    }

    /// `layout.sliced((slice(1, 3), slice(None, None, -1), 2))`: the layout of
    /// `array[1:3, ::-1, 2]`, as NumPy slices arrays (also written `layout[1:3, ::-1, 2]`).
    fn sliced(&self, slices: &Bound<'_, PyAny>) -> PyResult<Self> {
        let args: Vec<SliceArg> = match slices.downcast::<PyTuple>() {
            Ok(t) => t.iter().map(|i| slice_arg(&i)).collect::<PyResult<_>>()?,
            Err(_) => vec![slice_arg(slices)?],
        };
        Ok(self.inner.sliced(&args).py_err()?.into())
    }

    /// `layout[1:3, ::-1, 2]`: see [`sliced`](Self::sliced).
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.sliced(key)
    }

    fn __repr__(&self) -> String {
        let l = &self.inner;
        let t = |v: &[i64]| {
            let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        };
        format!(
            "StridedLayout(shape={}, strides={}, itemsize={}, slice_offset={})",
            t(l.shape()),
            t(l.strides()),
            l.itemsize(),
            l.slice_offset()
        )
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let l = &self.inner;
        (l.shape(), l.strides(), l.itemsize(), l.slice_offset()).hash(&mut h);
        h.finish()
    }
}
