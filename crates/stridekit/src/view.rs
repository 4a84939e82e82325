//! `StridedMemoryView`: memory plus a layout and a dtype.

use crate::dtype::{DType, Element};
use crate::error::{invalid, Result};
use crate::memory::{Buffer, MemoryKind};
use cudarc::driver::CudaStream;
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use stridekit_layout::{Order, StridedLayout};

/// What keeps a view's memory alive.
#[derive(Clone)]
enum Backing<'a> {
    /// A borrowed buffer (whose release stream orders frees after our work).
    Buffer(&'a Buffer),
    /// A borrowed host slice.
    Slice(PhantomData<&'a [u8]>),
    /// Memory the view owns or whose owner it keeps alive (held, never read).
    Owned(#[allow(dead_code)] Arc<dyn Any + Send + Sync>),
}

/// A strided view of memory: an address range, a [`StridedLayout`] and an optional
/// [`DType`]. Views over host slices borrow them; views over [`Buffer`]s borrow the
/// buffer; `from_vec` and `from_foreign` keep their memory alive themselves.
///
/// ```
/// use stridekit::{StridedMemoryView, s};
/// let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
/// let v = StridedMemoryView::from_slice(&data, &[3, 4])?;
/// let t = v.view(v.layout().permuted(&[1, 0])?.sliced(s![..;-1])?, None)?;
/// assert_eq!(t.to_vec::<f32>()?[..3], [3.0, 7.0, 11.0]);
/// # Ok::<(), stridekit::Error>(())
/// ```
#[derive(Clone)]
pub struct StridedMemoryView<'a> {
    ptr: u64,
    size: usize,
    kind: MemoryKind,
    device: Option<usize>,
    layout: StridedLayout,
    dtype: Option<DType>,
    read_only: bool,
    backing: Backing<'a>,
}

fn validate(
    op: &'static str,
    size: usize,
    layout: &StridedLayout,
    dtype: Option<DType>,
) -> Result<()> {
    if let Some(d) = dtype {
        if d.itemsize() != layout.itemsize() {
            return Err(invalid(
                op,
                format!(
                    "dtype {d:?} has itemsize {} but the layout's itemsize is {}; they must match",
                    d.itemsize(),
                    layout.itemsize()
                ),
            ));
        }
    }
    if layout.volume() == 0 {
        return Ok(());
    }
    let (lo, hi) = layout.offset_bounds();
    if lo < 0 {
        return Err(invalid(
            op,
            format!("layout {layout} reaches offset {lo}, before the start of the memory; min_offset must be >= 0"),
        ));
    }
    let need = layout.required_size_in_bytes()?;
    if need > size {
        return Err(invalid(
            op,
            format!(
                "layout {layout} reaches element offset {hi} ({need} bytes) but the memory has {size} bytes"
            ),
        ));
    }
    Ok(())
}

impl<'a> StridedMemoryView<'a> {
    fn over_buffer(
        buffer: &'a Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
        read_only: bool,
    ) -> Result<Self> {
        validate(
            "StridedMemoryView::from_buffer",
            buffer.size(),
            &layout,
            dtype,
        )?;
        Ok(Self {
            ptr: buffer.ptr(),
            size: buffer.size(),
            kind: buffer.kind(),
            device: buffer.device_ordinal(),
            layout,
            dtype,
            read_only,
            backing: Backing::Buffer(buffer),
        })
    }

    /// A read-only view of a buffer. Rejects a layout that reaches outside the buffer
    /// (negative `min_offset`, or `max_offset` past its end) and a dtype whose itemsize
    /// differs from the layout's.
    pub fn from_buffer(
        buffer: &'a Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        Self::over_buffer(buffer, layout, dtype, true)
    }

    /// A writable view of a buffer, validated like [`from_buffer`](Self::from_buffer).
    pub fn from_buffer_mut(
        buffer: &'a mut Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Self> {
        Self::over_buffer(buffer, layout, dtype, false)
    }

    fn over_slice<T: Element>(
        ptr: u64,
        len: usize,
        layout: StridedLayout,
        read_only: bool,
    ) -> Result<Self> {
        let dtype = Some(T::DTYPE);
        validate(
            "StridedMemoryView::from_slice",
            len * std::mem::size_of::<T>(),
            &layout,
            dtype,
        )?;
        Ok(Self {
            ptr,
            size: len * std::mem::size_of::<T>(),
            kind: MemoryKind::Host,
            device: None,
            layout,
            dtype,
            read_only,
            backing: Backing::Slice(PhantomData),
        })
    }

    /// A read-only row-major view of a host slice with the given shape.
    pub fn from_slice<T: Element>(data: &'a [T], shape: &[i64]) -> Result<Self> {
        let layout = StridedLayout::dense(shape, std::mem::size_of::<T>(), Order::C)?;
        Self::over_slice::<T>(data.as_ptr() as u64, data.len(), layout, true)
    }

    /// A read-only view of a host slice with any layout that fits in it.
    pub fn from_slice_with_layout<T: Element>(
        data: &'a [T],
        layout: StridedLayout,
    ) -> Result<Self> {
        Self::over_slice::<T>(data.as_ptr() as u64, data.len(), layout, true)
    }

    /// A writable view of a host slice with any layout that fits in it.
    pub fn from_slice_mut<T: Element>(data: &'a mut [T], layout: StridedLayout) -> Result<Self> {
        Self::over_slice::<T>(data.as_mut_ptr() as u64, data.len(), layout, false)
    }

    /// A new view of the same memory with another layout and dtype, validated the same way.
    pub fn view(
        &self,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryView<'a>> {
        validate("StridedMemoryView::view", self.size, &layout, dtype)?;
        Ok(Self {
            layout,
            dtype,
            ..self.clone()
        })
    }

    /// The same view, read-only.
    pub fn into_read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Base address (element offset 0 of the layout).
    pub fn ptr(&self) -> u64 {
        self.ptr
    }
    /// Bytes of memory from `ptr` the view may reach.
    pub fn size(&self) -> usize {
        self.size
    }
    /// The layout.
    pub fn layout(&self) -> &StridedLayout {
        &self.layout
    }
    /// The dtype, if known.
    pub fn dtype(&self) -> Option<DType> {
        self.dtype
    }
    /// The extents.
    pub fn shape(&self) -> &[i64] {
        self.layout.shape()
    }
    /// Where the memory lives.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }
    /// The device ordinal, or -1 for host-only memory.
    pub fn device_id(&self) -> i32 {
        match (self.device, self.kind) {
            (Some(d), MemoryKind::Device | MemoryKind::Managed) => d as i32,
            _ => -1,
        }
    }
    /// The device ordinal of device or managed memory.
    pub fn device_ordinal(&self) -> Option<usize> {
        (self.device_id() >= 0).then_some(self.device_id() as usize)
    }
    /// Whether the CPU may read it.
    pub fn is_host_accessible(&self) -> bool {
        self.kind.is_host_accessible()
    }
    /// Whether kernels may read it.
    pub fn is_device_accessible(&self) -> bool {
        self.kind.is_device_accessible()
    }
    /// Whether writes through this view are refused.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The stream that orders the release of the backing buffer, if any.
    pub(crate) fn release_stream(&self) -> Option<&Arc<CudaStream>> {
        match &self.backing {
            Backing::Buffer(b) => b.stream(),
            _ => None,
        }
    }

    /// The byte range `[start, end)` the view's elements occupy (empty for an empty view).
    pub(crate) fn byte_span(&self) -> (u64, u64) {
        if self.layout.volume() == 0 {
            return (self.ptr, self.ptr);
        }
        let isz = self.layout.itemsize() as i64;
        let (lo, hi) = self.layout.offset_bounds();
        (
            self.ptr.wrapping_add_signed(lo * isz),
            self.ptr.wrapping_add_signed((hi + 1) * isz),
        )
    }

    /// The elements in row-major (C) order, for host-accessible views.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        const OP: &str = "StridedMemoryView::to_vec";
        if std::mem::size_of::<T>() != self.layout.itemsize() {
            return Err(invalid(
                OP,
                format!(
                    "element type has {} bytes but the layout's itemsize is {}",
                    std::mem::size_of::<T>(),
                    self.layout.itemsize()
                ),
            ));
        }
        if !self.is_host_accessible() {
            return Err(invalid(
                OP,
                format!("the view is in {:?} memory, which the CPU cannot read; copy it to a host view first", self.kind),
            ));
        }
        let mut out = vec![T::zeroed(); self.layout.volume()];
        let dense = StridedLayout::dense(self.layout.shape(), self.layout.itemsize(), Order::C)?;
        let plan = stridekit_layout::CopyPlan::new(&dense, &self.layout)?;
        crate::copy::host::copy(&plan, out.as_mut_ptr() as u64, self.ptr);
        Ok(out)
    }
}

#[cfg(test)]
impl StridedMemoryView<'_> {
    /// Pretends the memory is on a device, to test device checks without one.
    pub(crate) fn on_fake_device(mut self, ordinal: usize) -> Self {
        self.kind = MemoryKind::Device;
        self.device = Some(ordinal);
        self
    }
}

impl StridedMemoryView<'static> {
    /// A writable row-major view that owns `data`.
    pub fn from_vec<T: Element + Send + Sync>(mut data: Vec<T>, shape: &[i64]) -> Result<Self> {
        let layout = StridedLayout::dense(shape, std::mem::size_of::<T>(), Order::C)?;
        let (ptr, len) = (data.as_mut_ptr() as u64, data.len());
        let mut v = StridedMemoryView::over_slice::<T>(ptr, len, layout, false)?;
        v.backing = Backing::Owned(Arc::new(data));
        Ok(v)
    }

    /// A view of foreign memory; `owner` is kept alive as long as any view of it.
    /// The memory's kind and device are asked of the driver (host memory without one).
    ///
    /// # Safety
    /// `ptr..ptr + size` must stay valid while `owner` lives, and nobody else may write
    /// it while a writable view exists.
    pub unsafe fn from_foreign<O: Any + Send + Sync>(
        ptr: u64,
        size: usize,
        layout: StridedLayout,
        dtype: Option<DType>,
        read_only: bool,
        owner: O,
    ) -> Result<Self> {
        // SAFETY: the caller's promise is the one from_handle needs.
        let buffer = unsafe { Buffer::from_handle(ptr, size, owner)? };
        validate("StridedMemoryView::from_foreign", size, &layout, dtype)?;
        Ok(Self {
            ptr,
            size,
            kind: buffer.kind(),
            device: buffer.device_ordinal(),
            layout,
            dtype,
            read_only,
            backing: Backing::Owned(Arc::new(buffer)),
        })
    }
}

impl fmt::Debug for StridedMemoryView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StridedMemoryView")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("kind", &self.kind)
            .field("device_id", &self.device_id())
            .field("layout", &self.layout)
            .field("dtype", &self.dtype)
            .field("read_only", &self.read_only)
            .finish()
    }
}
