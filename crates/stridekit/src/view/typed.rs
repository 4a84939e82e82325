//! Typed access to host-accessible views: the elements in place, as Rust slices. Every
//! typed entry point checks the element type the same way ([`Element`]): its size is
//! the itemsize and, when the view knows its dtype, its dtype is the view's.

use super::*;

impl<'a, A: Access> StridedMemoryViewBase<'a, A> {
    /// Fails unless `T` is the view's element type (see the module docs).
    pub(crate) fn check_element<T: Element>(&self, op: &'static str) -> Result<()> {
        if std::mem::size_of::<T>() != self.layout.itemsize() {
            return Err(invalid(
                op,
                format!(
                    "element type {} has {} bytes but the layout's itemsize is {}",
                    std::any::type_name::<T>(),
                    std::mem::size_of::<T>(),
                    self.layout.itemsize()
                ),
            ));
        }
        match self.dtype {
            Some(d) if d != T::DTYPE => Err(invalid(
                op,
                format!(
                    "the view holds {d:?} but {} is {:?}; typed access never reinterprets (view it with dtype None, or another dtype, first)",
                    std::any::type_name::<T>(),
                    T::DTYPE
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Makes the CPU's reads (and writes) of this view see every GPU use queued on it:
    /// stridekit's copies on any stream, and (for pinned and managed memory) the device
    /// context's kernels; what a host consumer of the memory (NumPy, through the array
    /// interface) calls first. Device memory is refused: the CPU cannot read it.
    pub fn wait_for_host(&self) -> Result<()> {
        self.wait_for_host_access("wait_for_host")
    }

    /// [`wait_for_host`](Self::wait_for_host), naming `op` in errors.
    pub(crate) fn wait_for_host_access(&self, op: &'static str) -> Result<()> {
        self.check_claim(op)?;
        if !self.is_host_accessible() {
            return Err(invalid(
                op,
                format!("the view is in {:?} memory, which the CPU cannot read; copy it to a host view first", self.kind),
            ));
        }
        if let Some(p) = self.pending() {
            p.wait_host(op)?;
        }
        if self.kind != MemoryKind::Host && self.layout.volume() > 0 {
            let rt = crate::runtime::Runtime::get(op, self.device.unwrap_or(0))?;
            rt.context()
                .synchronize()
                .map_err(crate::error::driver(op, "cuCtxSynchronize"))?;
        }
        Ok(())
    }

    /// The address of the first element of a row-major contiguous view, checked for `T`.
    fn contiguous_first<T: Element>(&self, op: &'static str) -> Result<*const T> {
        self.check_element::<T>(op)?;
        if !self.layout.is_contiguous_c() {
            return Err(invalid(
                op,
                format!(
                    "layout {} is not row-major contiguous; a slice holds the elements in order without gaps (use to_vec, or copy into a dense view)",
                    self.layout
                ),
            ));
        }
        self.wait_for_host_access(op)?;
        let first = self.ptr + (self.layout.min_offset() as u64) * self.layout.itemsize() as u64;
        if !first.is_multiple_of(std::mem::align_of::<T>() as u64) {
            return Err(invalid(
                op,
                format!(
                    "the first element is at {first:#x}, not aligned for {} ({} bytes)",
                    std::any::type_name::<T>(),
                    std::mem::align_of::<T>()
                ),
            ));
        }
        Ok(first as *const T)
    }

    /// The elements of a row-major contiguous, host-accessible view, in place.
    ///
    /// ```
    /// use stridekit::{s, StridedMemoryView};
    /// let data: Vec<u16> = (0..12).collect();
    /// let v = StridedMemoryView::from_slice(&data, &[3, 4])?;
    /// let rows = v.view(v.layout().sliced(s![1..])?, None)?;   // rows 1 and 2
    /// assert_eq!(rows.as_slice::<u16>()?, &data[4..]);
    /// assert!(v.as_slice::<i16>().is_err());                    // never reinterprets
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        const OP: &str = "StridedMemoryView::as_slice";
        let first = self.contiguous_first::<T>(OP)?;
        if self.layout.volume() == 0 {
            return Ok(&[]);
        }
        // SAFETY: the view's memory holds `volume` elements of `T` from `first` (checked:
        // row-major contiguous, validated against the memory, aligned, T's size and
        // dtype); it stays valid while `self` is borrowed, the GPU's queued writes to it
        // are done (waited above), and nothing writes it through this borrow.
        Ok(unsafe { std::slice::from_raw_parts(first, self.layout.volume()) })
    }
}

impl StridedMemoryViewMut<'_> {
    /// The elements of a row-major contiguous, host-accessible writable view, in place
    /// and writable (the view is borrowed exclusively meanwhile).
    ///
    /// ```
    /// use stridekit::StridedMemoryViewMut;
    /// let mut v = StridedMemoryViewMut::from_vec(vec![0f32; 6], &[2, 3])?;
    /// v.as_slice_mut::<f32>()?[4] = 1.5;
    /// assert_eq!(v.as_view().to_vec::<f32>()?, [0., 0., 0., 0., 1.5, 0.]);
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn as_slice_mut<T: Element>(&mut self) -> Result<&mut [T]> {
        const OP: &str = "StridedMemoryViewMut::as_slice_mut";
        let first = self.contiguous_first::<T>(OP)? as *mut T;
        if self.layout.volume() == 0 {
            return Ok(&mut []);
        }
        // SAFETY: as for `as_slice`; the writable view is the one writer of its memory
        // and `&mut self` keeps every other use of it out while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts_mut(first, self.layout.volume()) })
    }
}
