//! `Operand`: one side of a copy as the engine sees it — memory (a checked region), the
//! layout over it (validated against it), the dtype, and the record of GPU work queued
//! on it. Views make operands of themselves; the engine makes them of its temporaries.
//! The engine never takes a raw address.

use crate::dtype::DType;
use crate::error::{invalid, Result};
use crate::memory::{validate_layout, Buffer, CudarcUse, MemoryKind, PendingWork, Region};
use std::borrow::Cow;
use std::marker::PhantomData;
use stridekit_layout::StridedLayout;

/// An operand's layout: a view's own, borrowed, or one the engine made, boxed (so that an
/// operand stays a few words long: small copies move operands around).
#[derive(Clone)]
enum OperandLayout<'a> {
    View(&'a StridedLayout),
    Made(Box<StridedLayout>),
}

impl std::ops::Deref for OperandLayout<'_> {
    type Target = StridedLayout;
    fn deref(&self) -> &StridedLayout {
        match self {
            OperandLayout::View(l) => l,
            OperandLayout::Made(l) => l,
        }
    }
}

/// One side of a copy. See the module docs.
pub(crate) struct Operand<'a> {
    ptr: u64,
    size: usize,
    kind: MemoryKind,
    device: Option<usize>,
    /// A view's own layout, borrowed (most copies), or one the engine made.
    layout: OperandLayout<'a>,
    dtype: Option<DType>,
    pending: Option<&'a PendingWork>,
    cudarc: Option<CudarcUse<'a>>,
    writable: bool,
    _memory: PhantomData<&'a ()>,
}

impl<'a> Operand<'a> {
    /// An operand over memory known by address, after checking the layout against it.
    ///
    /// # Safety
    /// `ptr..ptr + size` is memory of `kind` that stays valid for `'a` and, if
    /// `writable`, is written by nothing else meanwhile.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn from_raw_parts(
        op: &'static str,
        ptr: u64,
        size: usize,
        kind: MemoryKind,
        device: Option<usize>,
        layout: Cow<'a, StridedLayout>,
        dtype: Option<DType>,
        pending: Option<&'a PendingWork>,
        writable: bool,
    ) -> Result<Operand<'a>> {
        validate_layout(op, ptr, size, kind, &layout, dtype)?;
        let layout = match layout {
            Cow::Borrowed(l) => OperandLayout::View(l),
            Cow::Owned(l) => OperandLayout::Made(Box::new(l)),
        };
        Ok(Operand {
            ptr,
            size,
            kind,
            device,
            layout,
            dtype,
            pending,
            cudarc: None,
            writable,
            _memory: PhantomData,
        })
    }

    /// The same operand, over memory cudarc tracks.
    pub(crate) fn with_cudarc(self, cudarc: Option<CudarcUse<'a>>) -> Operand<'a> {
        Operand { cudarc, ..self }
    }

    /// The same memory under another layout (a part of it, say), checked against the
    /// memory like any operand.
    pub(crate) fn relayout(&self, op: &'static str, layout: StridedLayout) -> Result<Operand<'a>> {
        // SAFETY: the same memory as `self`, with the same validity and writability.
        let o = unsafe {
            Operand::from_raw_parts(
                op,
                self.ptr,
                self.size,
                self.kind,
                self.device,
                Cow::Owned(layout),
                self.dtype,
                self.pending,
                self.writable,
            )
        }?;
        Ok(o.with_cudarc(self.cudarc))
    }

    /// The cudarc slice behind the operand, if any.
    pub(crate) fn cudarc(&self) -> Option<&CudarcUse<'a>> {
        self.cudarc.as_ref()
    }

    /// Whether the operand may be written.
    pub(crate) fn is_writable(&self) -> bool {
        self.writable
    }

    /// An operand over a buffer (a temporary of the engine's).
    pub(crate) fn of_buffer(
        op: &'static str,
        buffer: &'a Buffer,
        layout: StridedLayout,
        dtype: Option<DType>,
    ) -> Result<Operand<'a>> {
        // SAFETY: the buffer owns its memory for `'a`; device memory is written through
        // shared handles (the engine orders every use on its stream), host memory only
        // through exclusive borrows, which this is not.
        unsafe {
            Operand::from_raw_parts(
                op,
                buffer.ptr(),
                buffer.size(),
                buffer.kind(),
                buffer.device_ordinal(),
                Cow::Owned(layout),
                dtype,
                Some(buffer.pending()),
                buffer.kind() != MemoryKind::Host,
            )
        }
    }

    /// The address of element offset 0.
    pub(crate) fn ptr(&self) -> u64 {
        self.ptr
    }
    pub(crate) fn kind(&self) -> MemoryKind {
        self.kind
    }
    pub(crate) fn layout(&self) -> &StridedLayout {
        &self.layout
    }
    pub(crate) fn shape(&self) -> &[i64] {
        self.layout.shape()
    }
    pub(crate) fn dtype(&self) -> Option<DType> {
        self.dtype
    }
    pub(crate) fn pending(&self) -> Option<&'a PendingWork> {
        self.pending
    }

    /// The device ordinal of device, managed or pinned memory, when known.
    pub(crate) fn device_ordinal(&self) -> Option<usize> {
        match self.kind {
            MemoryKind::Host => None,
            _ => self.device,
        }
    }

    /// The operand's memory.
    pub(crate) fn region(&self) -> Result<Region<'a>> {
        // SAFETY: the constructors' promise: the memory is valid for `'a`, writable only
        // when marked so.
        unsafe { Region::from_raw("copy", self.ptr, self.size, self.kind, self.writable) }
    }

    /// The byte range `[start, end)` the elements occupy (empty for an empty layout).
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

    /// The part of the memory the elements occupy, from the lowest byte, read only.
    pub(crate) fn span_region(&self) -> Result<Region<'a>> {
        let (lo, hi) = self.byte_span();
        self.region()?
            .read_only()
            .sub("copy", (lo - self.ptr) as usize, (hi - lo) as usize)
    }

    /// The same memory, read only.
    pub(crate) fn read_only(&self) -> Operand<'a> {
        Operand {
            ptr: self.ptr,
            size: self.size,
            kind: self.kind,
            device: self.device,
            layout: self.layout.clone(),
            dtype: self.dtype,
            pending: self.pending,
            cudarc: self.cudarc,
            writable: false,
            _memory: PhantomData,
        }
    }

    /// Fails unless the operand may be written.
    pub(crate) fn check_writable(&self, op: &'static str) -> Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(invalid(op, "the destination is read-only"))
        }
    }
}
