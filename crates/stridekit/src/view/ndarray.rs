//! ndarray interop (cargo feature `ndarray`): arrays as views and host views as arrays,
//! safe, with the borrow carried through, strides translated (negative and zero
//! included) and element types checked.

use super::*;
use ::ndarray::{
    ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Axis, Dimension, IxDyn, ShapeBuilder,
};

/// A layout from ndarray's shape and element strides.
fn layout_of<T>(shape: &[usize], strides: &[isize]) -> Result<StridedLayout> {
    let shape: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
    let strides: Vec<i64> = strides.iter().map(|&s| s as i64).collect();
    Ok(StridedLayout::new(
        &shape,
        &strides,
        std::mem::size_of::<T>(),
    )?)
}

impl<'a> StridedMemoryView<'a> {
    /// A read-only view of an ndarray array view, borrowing it for `'a`.
    ///
    /// ```
    /// use ndarray::{s, Array2};
    /// use stridekit::StridedMemoryView;
    /// let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32);
    /// let v = StridedMemoryView::from_array(a.slice(s![.., ..;-1]))?;
    /// assert_eq!(v.layout().strides(), &[4, -1]);
    /// assert_eq!(v.to_vec::<f32>()?[..4], [3.0, 2.0, 1.0, 0.0]);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn from_array<T: Element, D: Dimension>(a: ArrayView<'a, T, D>) -> Result<Self> {
        const OP: &str = "StridedMemoryView::from_array";
        let layout = layout_of::<T>(a.shape(), a.strides())?;
        let (base, size, layout) = span_at(OP, a.as_ptr() as u64, layout)?;
        Self::from_parts(OP, host_parts::<T>(base, size, layout))
    }
}

impl<'a> StridedMemoryViewMut<'a> {
    /// A writable view of an ndarray mutable array view, borrowing it exclusively for `'a`.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use stridekit::{StridedMemoryView, StridedMemoryViewMut};
    /// let src = Array2::from_shape_fn((2, 3), |(i, j)| (i * 3 + j) as u8);
    /// let mut dst = Array2::<u8>::zeros((3, 2));
    /// StridedMemoryViewMut::from_array_mut(dst.view_mut().reversed_axes())?
    ///     .copy_from(&StridedMemoryView::from_array(src.view())?, None)?;
    /// assert_eq!(dst, src.t());
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn from_array_mut<T: Element, D: Dimension>(mut a: ArrayViewMut<'a, T, D>) -> Result<Self> {
        const OP: &str = "StridedMemoryViewMut::from_array_mut";
        let layout = layout_of::<T>(a.shape(), a.strides())?;
        let (base, size, layout) = span_at(OP, a.as_mut_ptr() as u64, layout)?;
        Self::from_parts(OP, host_parts::<T>(base, size, layout))
    }
}

/// The lowest element's address, the shape, the non-negative strides, and the axes to
/// invert once the array is made.
type ArrayParts = (u64, Vec<usize>, Vec<usize>, Vec<usize>);

fn host_parts<'a, T: Element>(ptr: u64, size: usize, layout: StridedLayout) -> Parts<'a> {
    Parts {
        ptr,
        size,
        kind: MemoryKind::Host,
        device: None,
        layout,
        dtype: Some(T::DTYPE),
        backing: Backing::Slice(PhantomData),
    }
}

impl<A: Access> StridedMemoryViewBase<'_, A> {
    /// The lowest element's address, element shape and strides made non-negative, and the
    /// axes to invert afterwards: ndarray's raw constructors take non-negative strides.
    fn array_parts<T: Element>(&self, op: &'static str) -> Result<ArrayParts> {
        self.check_element::<T>(op)?;
        self.wait_for_host_access(op)?;
        let isz = self.layout.itemsize() as i64;
        let mut first = self.ptr as i128 + i128::from(self.layout.slice_offset()) * i128::from(isz);
        let (mut strides, mut flip) = (Vec::new(), Vec::new());
        for (k, (&e, &s)) in self
            .layout
            .shape()
            .iter()
            .zip(self.layout.strides())
            .enumerate()
        {
            if s < 0 && e > 1 {
                first += i128::from(s) * i128::from(e - 1) * i128::from(isz);
                flip.push(k);
            }
            strides.push(s.unsigned_abs() as usize);
        }
        let first = u64::try_from(first)
            .map_err(|_| invalid(op, "the lowest element lies outside the address space"))?;
        if self.layout.volume() > 0 && !first.is_multiple_of(std::mem::align_of::<T>() as u64) {
            return Err(invalid(
                op,
                format!(
                    "the elements at {first:#x} are not aligned for {}",
                    std::any::type_name::<T>()
                ),
            ));
        }
        let shape = self.layout.shape().iter().map(|&e| e as usize).collect();
        Ok((first, shape, strides, flip))
    }

    /// The elements of a host-accessible view as an ndarray view, in place (any strides:
    /// negative, zero, gaps), after every write queued on the memory.
    ///
    /// ```
    /// use stridekit::{s, StridedMemoryView};
    /// let data: Vec<i32> = (0..12).collect();
    /// let v = StridedMemoryView::from_slice(&data, &[3, 4])?;
    /// let t = v.view(v.layout().permuted(&[1, 0])?.sliced(s![..;-1])?, None)?;
    /// let a = t.as_array::<i32>()?;
    /// assert_eq!(a.shape(), &[4, 3]);
    /// assert_eq!(a[[0, 0]], 3);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn as_array<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        let (first, shape, strides, flip) = self.array_parts::<T>("StridedMemoryView::as_array")?;
        if self.layout.volume() == 0 {
            return ArrayViewD::from_shape(IxDyn(&shape), &[])
                .map_err(|e| invalid("StridedMemoryView::as_array", e.to_string()));
        }
        // SAFETY: every element lies in the view's memory (validated when the view was
        // made), valid while `self` is borrowed; the lowest one is at `first`, aligned;
        // the strides are non-negative; the GPU's queued writes are done (waited).
        let mut a = unsafe {
            ArrayView::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&strides)), first as *const T)
        };
        for k in flip {
            a.invert_axis(Axis(k));
        }
        Ok(a)
    }
}

impl StridedMemoryViewMut<'_> {
    /// [`as_array`](StridedMemoryViewBase::as_array), writable: the view must map each
    /// element to its own address (no broadcast or overlapping axes).
    pub fn as_array_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        const OP: &str = "StridedMemoryViewMut::as_array_mut";
        if !self.layout.is_unique() {
            return Err(invalid(
                OP,
                format!("layout {} maps several elements to one address; a writable array needs one address per element", self.layout),
            ));
        }
        let (first, shape, strides, flip) = self.array_parts::<T>(OP)?;
        if self.layout.volume() == 0 {
            return ArrayViewMutD::from_shape(IxDyn(&shape), &mut [])
                .map_err(|e| invalid(OP, e.to_string()));
        }
        // SAFETY: as for `as_array`; the writable view is the one writer of its memory,
        // `&mut self` keeps every other use out while the array lives, and the layout is
        // unique, so no two elements alias.
        let mut a = unsafe {
            ArrayViewMut::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&strides)), first as *mut T)
        };
        for k in flip {
            a.invert_axis(Axis(k));
        }
        Ok(a)
    }
}
