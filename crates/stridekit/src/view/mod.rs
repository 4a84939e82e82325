//! Strided views of memory: a shared, read-only [`StridedMemoryView`] and an exclusive,
//! writable [`StridedMemoryViewMut`].
//!
//! # What the types guarantee, and what stays yours
//!
//! Mutability lives in the type, as in ndarray's `ArrayView` / `ArrayViewMut`:
//!
//! - [`StridedMemoryView`] is `Clone + Send + Sync` and never written through. Every copy
//!   *reads* it.
//! - [`StridedMemoryViewMut`] is not `Clone`; writes ([`copy_from`](StridedMemoryViewMut::copy_from))
//!   take `&mut self`. A shorter-lived writable view comes from
//!   [`view_mut`](StridedMemoryViewMut::view_mut) (a reborrow), a shared one from
//!   [`as_view`](StridedMemoryViewMut::as_view) (which freezes the mutable view while it
//!   lives) or [`into_read_only`](StridedMemoryViewMut::into_read_only). It is `Send` and
//!   `Sync`, like `&mut [T]`: through `&StridedMemoryViewMut` nothing can be written.
//! - Views built from borrows (`from_slice*`, `from_buffer*`) cannot outlive them; owned
//!   views (`from_vec`, `from_owned_buffer`, `from_dlpack`, `from_foreign`) keep their
//!   memory alive and are `'static`.
//!
//! What the borrow checker cannot see is the GPU's timeline. A copy into device or managed
//! memory may still run when `copy_from` returns (unless it is blocking); the caller
//! orders later work on *other* streams after it (an event, or a synchronize), as with any
//! CUDA API. stridekit orders what it can: copies that touch pageable or pinned host memory
//! return only when done (the host side is borrowed), buffers are released on their own
//! stream after the copies that used them, and [`to_vec`](StridedMemoryView::to_vec) of
//! pinned or managed memory first waits for the device. Foreign memory
//! (`from_foreign`, `Buffer::from_handle`, DLPack imports) is `unsafe` to wrap or vouched
//! for by its producer: the wrapper cannot know who else writes it.

mod backing;
mod copy;
mod dlpack;
mod dynamic;

pub(crate) use backing::{Backing, Imported};
pub use dynamic::DynView;

use crate::dtype::{DType, Element};
use crate::error::{invalid, Result};
use crate::memory::{span_at, validate_layout, Buffer, MemoryKind, Region};
use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use stridekit_layout::{Order, StridedLayout};

/// Marker types that say whether a view may be written through.
pub mod access {
    /// A view that is only read: cloneable, shared between threads.
    #[derive(Debug, Clone, Copy)]
    pub enum ReadOnly {}
    /// The one view that may write its memory: not cloneable.
    #[derive(Debug)]
    pub enum ReadWrite {}

    mod sealed {
        pub trait Sealed {}
        impl Sealed for super::ReadOnly {}
        impl Sealed for super::ReadWrite {}
    }
    /// `ReadOnly` or `ReadWrite` (sealed).
    pub trait Access: sealed::Sealed + 'static {
        /// Whether views of this access may be written through.
        const WRITABLE: bool;
    }
    impl Access for ReadOnly {
        const WRITABLE: bool = false;
    }
    impl Access for ReadWrite {
        const WRITABLE: bool = true;
    }
}

use access::{Access, ReadOnly, ReadWrite};

/// A strided view of memory: an address range, a [`StridedLayout`] and an optional
/// [`DType`], read-only ([`StridedMemoryView`]) or writable ([`StridedMemoryViewMut`]).
/// Use the two aliases; the methods shared by both are documented here.
pub struct StridedMemoryViewBase<'a, A: Access> {
    ptr: u64,
    size: usize,
    kind: MemoryKind,
    device: Option<usize>,
    layout: StridedLayout,
    dtype: Option<DType>,
    backing: Backing<'a>,
    access: PhantomData<A>,
}

/// A read-only strided view: `Clone`, `Send` and `Sync`; never written through.
///
/// ```
/// use stridekit::{StridedMemoryView, s};
/// let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
/// let v = StridedMemoryView::from_slice(&data, &[3, 4])?;
/// let t = v.view(v.layout().permuted(&[1, 0])?.sliced(s![..;-1])?, None)?;
/// assert_eq!(t.to_vec::<f32>()?[..3], [3.0, 7.0, 11.0]);
/// # Ok::<(), stridekit::Error>(())
/// ```
pub type StridedMemoryView<'a> = StridedMemoryViewBase<'a, ReadOnly>;

/// The writable strided view of some memory: not `Clone`; writes take `&mut self`.
///
/// ```
/// use stridekit::{StridedLayout, StridedMemoryView, StridedMemoryViewMut, Order};
/// let src: Vec<u16> = (0..6).collect();
/// let mut dst = vec![0u16; 6];
/// let t = StridedLayout::dense(&[2, 3], 2, Order::F)?;       // column-major destination
/// let mut out = StridedMemoryViewMut::from_slice_mut(&mut dst, t)?;
/// out.copy_from(&StridedMemoryView::from_slice(&src, &[2, 3])?, None)?;
/// drop(out);
/// assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
/// # Ok::<(), stridekit::Error>(())
/// ```
pub type StridedMemoryViewMut<'a> = StridedMemoryViewBase<'a, ReadWrite>;

impl<'a> Clone for StridedMemoryView<'a> {
    fn clone(&self) -> Self {
        StridedMemoryViewBase {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout: self.layout.clone(),
            dtype: self.dtype,
            backing: self.backing.clone(),
            access: PhantomData,
        }
    }
}

/// Everything a view is made of, before it has an access type.
pub(crate) struct Parts<'a> {
    pub ptr: u64,
    pub size: usize,
    pub kind: MemoryKind,
    pub device: Option<usize>,
    pub layout: StridedLayout,
    pub dtype: Option<DType>,
    pub backing: Backing<'a>,
}

impl<'a, A: Access> StridedMemoryViewBase<'a, A> {
    /// Builds a view after checking the layout against the memory.
    pub(crate) fn from_parts(op: &'static str, p: Parts<'a>) -> Result<Self> {
        validate_layout(op, p.ptr, p.size, &p.layout, p.dtype)?;
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

    /// The same memory under another layout and dtype (validated), keeping the access.
    fn relayout<B: Access>(
        &self,
        op: &'static str,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryViewBase<'a, B>> {
        validate_layout(op, self.ptr, self.size, &layout, dtype)?;
        Ok(StridedMemoryViewBase {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout,
            dtype,
            backing: self.backing.clone(),
            access: PhantomData,
        })
    }

    /// The same view with access `B`, for as long as the borrow of `self`. Callers give
    /// out writable results only from `&mut self`.
    fn duplicate<B: Access>(&self) -> StridedMemoryViewBase<'_, B> {
        StridedMemoryViewBase {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout: self.layout.clone(),
            dtype: self.dtype,
            backing: self.backing.clone(),
            access: PhantomData,
        }
    }

    /// A read-only view of the whole view; a writable `self` cannot write while it lives.
    pub fn as_view(&self) -> StridedMemoryView<'_> {
        self.duplicate()
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
    /// The device ordinal, or -1 for memory that belongs to no device (pageable host
    /// memory, and pinned memory whose device the driver did not report).
    pub fn device_id(&self) -> i32 {
        match (self.device, self.kind) {
            (Some(d), MemoryKind::Device | MemoryKind::Managed | MemoryKind::PinnedHost) => {
                d as i32
            }
            _ => -1,
        }
    }
    /// The device ordinal of device, managed or pinned memory, when known.
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
    /// Whether writes through this view are refused: true for [`StridedMemoryView`],
    /// false for [`StridedMemoryViewMut`].
    pub fn is_read_only(&self) -> bool {
        !A::WRITABLE
    }

    /// The flags of the DLPack tensor this view was imported from (`None` for memory that
    /// did not come through DLPack): READ_ONLY, and IS_COPIED when the producer made a
    /// copy for this exchange.
    pub fn imported_flags(&self) -> Option<dlpark::DlpackFlags> {
        self.backing.dlpack_flags()
    }

    /// The owner behind the view (for DLPack exports and flags).
    pub(crate) fn backing(&self) -> &Backing<'a> {
        &self.backing
    }

    /// The record of GPU work queued on the view's memory, if it has one.
    pub(crate) fn pending(&self) -> Option<&crate::memory::PendingWork> {
        self.backing.pending()
    }

    /// The view as one side of a copy.
    pub(crate) fn operand(&self, op: &'static str) -> Result<crate::copy::Operand<'_>> {
        // SAFETY: a view's memory stays valid while the view lives (a borrow, an owner it
        // holds, or the promise of its `unsafe` constructor), and a writable view is the
        // one writer of it.
        unsafe {
            crate::copy::Operand::from_raw_parts(
                op,
                self.ptr,
                self.size,
                self.kind,
                self.device,
                self.layout.clone(),
                self.dtype,
                self.pending(),
                A::WRITABLE,
            )
        }
    }

    /// The view's memory as a region (writable for a writable view).
    pub(crate) fn region(&self) -> Result<Region<'_>> {
        // SAFETY: a view's memory stays valid while the view lives (a borrow, an owner it
        // holds, or the promise of its `unsafe` constructor), and a writable view is the
        // one writer of it.
        unsafe { Region::from_raw("view", self.ptr, self.size, self.kind, A::WRITABLE) }
    }

    /// The elements in row-major (C) order, for host-accessible views. Pinned and managed
    /// memory is read after the calling thread's current context has finished its work.
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
        if out.is_empty() {
            return Ok(out);
        }
        // Whatever stream a library copy into the memory ran on, the read waits for it;
        // kernels of the caller's own on the device's context are waited for too.
        if let Some(p) = self.pending() {
            p.wait_host(OP)?;
        }
        if self.kind != MemoryKind::Host {
            let rt = crate::runtime::Runtime::get(OP, self.device.unwrap_or(0))?;
            rt.context()
                .synchronize()
                .map_err(crate::error::driver(OP, "cuCtxSynchronize"))?;
        }
        let dense = StridedLayout::dense(self.layout.shape(), self.layout.itemsize(), Order::C)?;
        let plan = stridekit_layout::CopyPlan::new(&dense, &self.layout)?;
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        crate::copy::host::copy(OP, &plan, Region::of_host_mut(bytes), self.region()?)?;
        Ok(out)
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

    /// A new read-only view of the same memory with another layout and dtype, validated
    /// like the constructors; it lives as long as the memory (not only as `self`).
    pub fn view(&self, layout: StridedLayout, dtype: Option<DType>) -> Result<Self> {
        self.relayout("StridedMemoryView::view", layout, dtype)
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

    /// A read-only view of the same memory with another layout and dtype, validated like
    /// the constructors; `self` cannot write while it lives.
    pub fn view(
        &self,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryView<'_>> {
        self.relayout("StridedMemoryViewMut::view", layout, dtype)
    }

    /// A writable view of the same memory with another layout and dtype, borrowing `self`
    /// mutably (a reborrow: `self` is usable again once it is gone).
    pub fn view_mut(
        &mut self,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<StridedMemoryViewMut<'_>> {
        self.relayout("StridedMemoryViewMut::view_mut", layout, dtype)
    }

    /// The same memory under another layout and dtype, keeping the writable view's
    /// lifetime (consumes `self`).
    pub fn into_view_mut(self, layout: StridedLayout, dtype: Option<DType>) -> Result<Self> {
        self.relayout("StridedMemoryViewMut::into_view_mut", layout, dtype)
    }

    /// A writable reborrow of the whole view, for a shorter lifetime.
    pub fn reborrow(&mut self) -> StridedMemoryViewMut<'_> {
        self.duplicate()
    }

    /// A read-only view of the same memory that lives as long as the memory, not only as
    /// long as a borrow of `self`: for fronts outside Rust's borrow rules (Python, C).
    ///
    /// # Safety
    /// Nothing may be written through `self` while the alias (or anything made from it)
    /// is read.
    pub unsafe fn shared_alias(&self) -> StridedMemoryView<'a> {
        StridedMemoryViewBase {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout: self.layout.clone(),
            dtype: self.dtype,
            backing: self.backing.clone(),
            access: PhantomData,
        }
    }

    /// Gives up writing: the same view, read-only (and then cloneable).
    pub fn into_read_only(self) -> StridedMemoryView<'a> {
        StridedMemoryViewBase {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout: self.layout,
            dtype: self.dtype,
            backing: self.backing,
            access: PhantomData,
        }
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
        let (base, size, layout) = span_at(OP, ptr, layout)?;
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
        let (base, size, layout) = span_at(OP, ptr, layout)?;
        // SAFETY: the caller's promise covers these bytes.
        unsafe { foreign(OP, base, size, layout, dtype, owner) }
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
    let buffer = unsafe { Buffer::from_handle(ptr, size, owner)? };
    let (kind, device) = (buffer.kind(), buffer.device_ordinal());
    StridedMemoryViewBase::from_parts(
        op,
        Parts {
            ptr,
            size,
            kind,
            device,
            layout,
            dtype,
            backing: Backing::SharedBuffer(Arc::new(buffer)),
        },
    )
}

/// Keeps a view's memory alive without being a view: what a second wrapper of the same
/// bytes (a C view, a foreign export) holds.
#[derive(Clone)]
pub struct MemoryOwner(#[allow(dead_code)] Backing<'static>);

impl fmt::Debug for MemoryOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemoryOwner")
    }
}

impl<A: Access> StridedMemoryViewBase<'static, A> {
    /// A handle that keeps this view's memory alive as long as it lives.
    pub fn memory_owner(&self) -> MemoryOwner {
        MemoryOwner(self.backing.clone())
    }
}

#[cfg(test)]
impl<A: Access> StridedMemoryViewBase<'_, A> {
    /// Pretends the memory is on a device, to test device checks without one.
    pub(crate) fn on_fake_device(mut self, ordinal: usize) -> Self {
        self.kind = MemoryKind::Device;
        self.device = Some(ordinal);
        self
    }
}

impl<A: Access> fmt::Debug for StridedMemoryViewBase<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(if A::WRITABLE {
            "StridedMemoryViewMut"
        } else {
            "StridedMemoryView"
        })
        .field("ptr", &format_args!("{:#x}", self.ptr))
        .field("kind", &self.kind)
        .field("device_id", &self.device_id())
        .field("layout", &self.layout)
        .field("dtype", &self.dtype)
        .finish()
    }
}
