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
#[cfg(feature = "candle")]
mod candle;
mod constructors;
mod conversions;
mod copy;
mod cudarc;
mod dlpack;
mod dynamic;
mod host;
#[cfg(feature = "ndarray")]
mod ndarray;
mod typed;

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

impl Clone for StridedMemoryView<'_> {
    fn clone(&self) -> Self {
        self.with_parts(self.layout.clone(), self.dtype)
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
        self.kind.device_id(self.device)
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

    /// Checks a producer's declaration of where the memory is (a DLPack CUDA device
    /// type, taken at its word when the view was made) before the memory is first used.
    pub(crate) fn check_claim(&self, op: &'static str) -> Result<()> {
        match self.backing.claim() {
            Some(c) => c.check(op, self.ptr),
            None => Ok(()),
        }
    }

    /// The view as one side of a copy.
    pub(crate) fn operand(&self, op: &'static str) -> Result<crate::copy::Operand<'_>> {
        self.check_claim(op)?;
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
                std::borrow::Cow::Borrowed(&self.layout),
                self.dtype,
                self.pending(),
                A::WRITABLE,
            )
        }
        .map(|o| o.with_cudarc(self.backing.cudarc()))
    }

    /// The view's memory as a region (writable for a writable view).
    pub(crate) fn region(&self) -> Result<Region<'_>> {
        self.check_claim("view")?;
        // SAFETY: a view's memory stays valid while the view lives (a borrow, an owner it
        // holds, or the promise of its `unsafe` constructor), and a writable view is the
        // one writer of it.
        unsafe { Region::from_raw("view", self.ptr, self.size, self.kind, A::WRITABLE) }
    }
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
