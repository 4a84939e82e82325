//! Making views: of buffers, host slices and vectors, shared buffers, and (unsafe)
//! foreign memory. Every constructor checks the layout against the memory.

use super::*;

impl<'a, A: Access> StridedMemoryViewBase<'a, A> {
    /// Builds a view after checking the layout against the memory.
    pub(crate) fn from_parts(op: &'static str, p: Parts<'a>) -> Result<Self> {
        validate_layout(op, p.ptr, p.size, p.kind, &p.layout, p.dtype)?;
        Ok(Self {
            ptr: p.ptr,
            size: p.size,
            kind: p.kind,
            device: p.device,
            layout: p.layout,
            dtype: p.dtype,
            backing: p.backing,
            access: PhantomData,
        })
    }

    fn over_buffer(
        op: &'static str,
        buffer: &Buffer,
        backing: Backing<'a>,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        Self::from_parts(
            op,
            Parts {
                ptr: buffer.ptr(),
                size: buffer.size(),
                kind: buffer.kind(),
                device: buffer.device_ordinal(),
                layout,
                dtype,
                backing,
            },
        )
    }

    fn over_slice<T: Element>(
        ptr: u64,
        len: usize,
        layout: StridedLayout,
        backing: Backing<'a>,
    ) -> Result<Self> {
        Self::from_parts(
            "StridedMemoryView::from_slice",
            Parts {
                ptr,
                size: len * std::mem::size_of::<T>(),
                kind: MemoryKind::Host,
                device: None,
                layout,
                dtype: Some(T::DTYPE),
                backing,
            },
        )
    }
}

impl<'a> StridedMemoryView<'a> {
    /// A read-only view of a buffer. Rejects a layout that reaches outside the buffer
    /// (negative `min_offset`, or `max_offset` past its end) and a dtype whose itemsize
    /// differs from the layout's.
    pub fn from_buffer(
        buffer: &'a Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        Self::over_buffer(
            "StridedMemoryView::from_buffer",
            buffer,
            Backing::Buffer(buffer),
            layout,
            dtype,
        )
    }

    /// A read-only row-major view of a host slice with the given shape.
    pub fn from_slice<T: Element>(data: &'a [T], shape: &[i64]) -> Result<Self> {
        let layout = StridedLayout::dense(shape, std::mem::size_of::<T>(), Order::C)?;
        Self::over_slice::<T>(
            data.as_ptr() as u64,
            data.len(),
            layout,
            Backing::Slice(PhantomData),
        )
    }

    /// A read-only view of a host slice with any layout that fits in it.
    pub fn from_slice_with_layout<T: Element>(
        data: &'a [T],
        layout: StridedLayout,
    ) -> Result<Self> {
        Self::over_slice::<T>(
            data.as_ptr() as u64,
            data.len(),
            layout,
            Backing::Slice(PhantomData),
        )
    }
}

impl StridedMemoryView<'static> {
    /// A read-only view that shares ownership of a buffer; the buffer is released when
    /// the last view of it goes.
    pub fn from_shared_buffer(
        buffer: Arc<Buffer>,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        Self::over_buffer(
            "StridedMemoryView::from_shared_buffer",
            &buffer.clone(),
            Backing::SharedBuffer(buffer),
            layout,
            dtype,
        )
    }

    /// A read-only view of foreign memory; `owner` is kept alive as long as any view of
    /// it. The memory's kind and device are asked of the driver (host memory without one).
    ///
    /// # Safety
    /// `ptr..ptr + size` must stay valid while `owner` lives, and nobody may write it
    /// while a view of it exists.
    pub unsafe fn from_foreign<O: Any + Send + Sync>(
        ptr: u64,
        size: usize,
        layout: StridedLayout,
        dtype: Option<DType>,
        owner: O,
    ) -> Result<Self> {
        // SAFETY: the caller's promise is the one `foreign` needs.
        unsafe {
            foreign(
                "StridedMemoryView::from_foreign",
                ptr,
                size,
                layout,
                dtype,
                owner,
            )
        }
    }
}

impl<'a> StridedMemoryViewMut<'a> {
    /// A writable view of a buffer, validated like [`StridedMemoryView::from_buffer`].
    pub fn from_buffer_mut(
        buffer: &'a mut Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        let buffer: &'a Buffer = buffer;
        Self::over_buffer(
            "StridedMemoryViewMut::from_buffer_mut",
            buffer,
            Backing::Buffer(buffer),
            layout,
            dtype,
        )
    }

    /// A writable view of a host slice with any layout that fits in it.
    pub fn from_slice_mut<T: Element>(data: &'a mut [T], layout: StridedLayout) -> Result<Self> {
        Self::over_slice::<T>(
            data.as_mut_ptr() as u64,
            data.len(),
            layout,
            Backing::Slice(PhantomData),
        )
    }
}

impl StridedMemoryViewMut<'static> {
    /// A writable row-major view that owns `data`.
    pub fn from_vec<T: Element + Send + Sync>(mut data: Vec<T>, shape: &[i64]) -> Result<Self> {
        let layout = StridedLayout::dense(shape, std::mem::size_of::<T>(), Order::C)?;
        let (ptr, len) = (data.as_mut_ptr() as u64, data.len());
        Self::over_slice::<T>(ptr, len, layout, Backing::Owned(Arc::new(data)))
    }

    /// A writable view that owns a buffer (released when the view, or the read-only
    /// views made from it by [`into_read_only`](Self::into_read_only), are gone).
    pub fn from_owned_buffer(
        buffer: Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        let buffer = Arc::new(buffer);
        Self::over_buffer(
            "StridedMemoryViewMut::from_owned_buffer",
            &buffer.clone(),
            Backing::SharedBuffer(buffer),
            layout,
            dtype,
        )
    }

    /// A writable view of a buffer that others also hold (a Python `Buffer` object, say).
    ///
    /// # Safety
    /// Nobody else may read or write the buffer's memory while the view can write (the
    /// shared ownership keeps it alive, not exclusive).
    pub unsafe fn from_shared_buffer_mut(
        buffer: Arc<Buffer>,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        Self::over_buffer(
            "StridedMemoryViewMut::from_shared_buffer_mut",
            &buffer.clone(),
            Backing::SharedBuffer(buffer),
            layout,
            dtype,
        )
    }

    /// A writable view of foreign memory; `owner` is kept alive as long as the view.
    ///
    /// # Safety
    /// `ptr..ptr + size` must stay valid while `owner` lives, and nobody else may read or
    /// write it while the view exists.
    pub unsafe fn from_foreign_mut<O: Any + Send + Sync>(
        ptr: u64,
        size: usize,
        layout: StridedLayout,
        dtype: Option<DType>,
        owner: O,
    ) -> Result<Self> {
        // SAFETY: the caller's promise is the one `foreign` needs.
        unsafe {
            foreign(
                "StridedMemoryViewMut::from_foreign_mut",
                ptr,
                size,
                layout,
                dtype,
                owner,
            )
        }
    }
}

impl StridedMemoryView<'static> {
    /// A read-only view of foreign memory given by the address of the layout's offset 0
    /// (the layout may reach below it, with negative strides); the view covers exactly
    /// the bytes its elements occupy. `owner` is kept alive as long as any view of it.
    ///
    /// # Safety
    /// As for [`from_foreign`](Self::from_foreign), for the bytes the layout reaches.
    pub unsafe fn from_foreign_span<O: Any + Send + Sync>(
        ptr: u64,
        layout: &StridedLayout,
        dtype: Option<DType>,
        owner: O,
    ) -> Result<Self> {
        const OP: &str = "StridedMemoryView::from_foreign_span";
        let (base, size, layout) = span_at(OP, ptr, layout.clone())?;
        // SAFETY: the caller's promise covers these bytes.
        unsafe { foreign(OP, base, size, layout, dtype, owner) }
    }
}

impl StridedMemoryViewMut<'static> {
    /// The writable form of [`StridedMemoryView::from_foreign_span`].
    ///
    /// # Safety
    /// As for [`from_foreign_mut`](Self::from_foreign_mut), for the bytes the layout reaches.
    pub unsafe fn from_foreign_span_mut<O: Any + Send + Sync>(
        ptr: u64,
        layout: &StridedLayout,
        dtype: Option<DType>,
        owner: O,
    ) -> Result<Self> {
        const OP: &str = "StridedMemoryViewMut::from_foreign_span_mut";
        let (base, size, layout) = span_at(OP, ptr, layout.clone())?;
        // SAFETY: the caller's promise covers these bytes.
        unsafe { foreign(OP, base, size, layout, dtype, owner) }
    }
}

impl<A: Access> StridedMemoryViewBase<'static, A> {
    /// A view with no elements that still says where its memory lives (a zero-size
    /// array of a GPU keeps its device). The layout must have volume 0.
    ///
    /// ```
    /// use stridekit::{MemoryKind, StridedLayout, StridedMemoryView};
    /// let l = StridedLayout::new(&[0, 4], &[4, 1], 4)?;
    /// let v = StridedMemoryView::empty_on(MemoryKind::Device, Some(0), l, None)?;
    /// assert_eq!((v.kind(), v.device_ordinal()), (MemoryKind::Device, Some(0)));
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn empty_on(
        kind: MemoryKind,
        device: Option<usize>,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        const OP: &str = "StridedMemoryView::empty_on";
        if layout.volume() != 0 {
            return Err(invalid(
                OP,
                format!(
                    "layout {layout} has {} elements; an empty view has none",
                    layout.volume()
                ),
            ));
        }
        if kind == MemoryKind::Device && device.is_none() {
            return Err(invalid(
                OP,
                "device memory with no device: an empty device view names its device".to_string(),
            ));
        }
        let buffer = Arc::new(Buffer::empty(kind, device));
        Self::over_buffer(
            OP,
            &buffer.clone(),
            Backing::SharedBuffer(buffer),
            layout,
            dtype,
        )
    }
}

/// A view of foreign memory whose kind and device the driver reports.
///
/// # Safety
/// As for `Buffer::from_handle`, for the access `A` gives.
unsafe fn foreign<A: Access, O: Any + Send + Sync>(
    op: &'static str,
    ptr: u64,
    size: usize,
    layout: StridedLayout,
    dtype: Option<DType>,
    owner: O,
) -> Result<StridedMemoryViewBase<'static, A>> {
    // SAFETY: the caller's promise is the one from_handle needs.
    let buffer = Arc::new(unsafe { Buffer::from_handle(ptr, size, owner)? });
    StridedMemoryViewBase::over_buffer(
        op,
        &buffer.clone(),
        Backing::SharedBuffer(buffer),
        layout,
        dtype,
    )
}
