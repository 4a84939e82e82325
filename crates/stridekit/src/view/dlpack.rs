//! DLPack conversions of views: import (taking a tensor over, or borrowing a
//! `DLTensor`) and export. The `dlpack` module checks and builds the DLPack structs.

use super::access::{Access, ReadOnly, ReadWrite};
use super::{Backing, Imported, Parts, StridedMemoryViewBase};
use crate::dlpack::{describe_memory, export, Claim, Described, DlpackTensor, ExportSpec};
use crate::error::{invalid, Result};
use dlpark::ffi::DLTensor;
use dlpark::{DlpackFlags, Managed, ManagedTensorBase};
use std::sync::Arc;

/// A view of the memory `dl` describes, kept alive by what `backing` makes (called only
/// once everything was checked).
fn view_of<A: Access>(
    op: &'static str,
    dl: &DLTensor,
    backing: impl FnOnce(Option<Claim>) -> Backing<'static>,
) -> Result<StridedMemoryViewBase<'static, A>> {
    let d: Described = describe_memory(op, dl)?;
    StridedMemoryViewBase::from_parts(
        op,
        Parts {
            ptr: d.base,
            size: d.size,
            kind: d.kind,
            device: d.device,
            layout: d.layout,
            dtype: d.dtype,
            backing: backing(d.claim),
        },
    )
}

/// A view of a borrowed `DLTensor` (DLPack's non-owning exchange), kept alive by `owner`.
///
/// # Safety
/// `dl`'s arrays must be readable for the call; its data must stay valid while `owner`
/// lives, and nobody may write it (for a writable view: touch it) meanwhile.
unsafe fn borrowed<A: Access, O: std::any::Any + Send + Sync>(
    op: &'static str,
    dl: &DLTensor,
    owner: O,
) -> Result<StridedMemoryViewBase<'static, A>> {
    // Like an owned import, it carries a record of the GPU work queued on the memory, so
    // that uses through views of it are ordered and its last release waits for them.
    view_of(op, dl, move |claim| {
        Backing::Dlpack(Arc::new(Imported {
            deleter: None,
            flags: DlpackFlags::empty(),
            pending: Default::default(),
            owner: Some(Box::new(owner)),
            claim,
        }))
    })
}

impl StridedMemoryViewBase<'static, ReadOnly> {
    /// A read-only view of a borrowed `DLTensor` (what DLPack's non-owning exchange,
    /// `dltensor_from_py_object_no_sync`, fills in), kept alive by `owner` (the
    /// producer's object). Checked as [`from_dlpack`](Self::from_dlpack) checks.
    ///
    /// # Safety
    /// `dl`'s shape and strides must be readable for the call; its data must stay valid
    /// while `owner` lives, and nobody may write it while a view of it exists.
    pub unsafe fn from_dltensor<O: std::any::Any + Send + Sync>(
        dl: &DLTensor,
        owner: O,
    ) -> Result<Self> {
        // SAFETY: the caller's promise.
        unsafe { borrowed("StridedMemoryView::from_dltensor", dl, owner) }
    }
}

impl StridedMemoryViewBase<'static, ReadWrite> {
    /// The writable form of [`StridedMemoryView::from_dltensor`](crate::StridedMemoryView::from_dltensor).
    ///
    /// # Safety
    /// As for [`StridedMemoryView::from_dltensor`](crate::StridedMemoryView::from_dltensor), and nobody else may touch the data
    /// while the view exists.
    pub unsafe fn from_dltensor<O: std::any::Any + Send + Sync>(
        dl: &DLTensor,
        owner: O,
    ) -> Result<Self> {
        // SAFETY: the caller's promise.
        unsafe { borrowed("StridedMemoryViewMut::from_dltensor", dl, owner) }
    }
}

/// The view of an imported tensor; on any error the tensor is dropped (its deleter runs).
fn import<A: Access>(
    op: &'static str,
    t: DlpackTensor,
) -> Result<StridedMemoryViewBase<'static, A>> {
    let flags = t.flags();
    if A::WRITABLE && flags.contains(DlpackFlags::READ_ONLY) {
        return Err(invalid(
            op,
            "the tensor is flagged READ_ONLY; import it as a read-only StridedMemoryView",
        ));
    }
    // A copy of the descriptor (its arrays stay the producer's, alive while `t` is).
    let dl = *t.tensor();
    view_of(op, &dl, move |claim| {
        Backing::Dlpack(Arc::new(Imported {
            deleter: Some(t.into_deleter()),
            flags,
            pending: Default::default(),
            owner: None,
            claim,
        }))
    })
}

impl StridedMemoryViewBase<'static, ReadOnly> {
    /// A read-only view of a DLPack tensor, which it takes over: the producer's deleter
    /// runs once the view and every view made from it are gone (or at once, on error).
    ///
    /// Accepted: device types CPU, CUDA, CUDA_HOST and CUDA_MANAGED, checked against the
    /// driver (a CPU tensor when the view is made; a CUDA one before its memory is first
    /// used: a copy, a host read, a descriptor, so making the view asks the driver
    /// nothing), up to 64 dimensions, `strides == NULL` as C-contiguous, any `byte_offset`,
    /// and every whole-byte scalar data type (those without a [`DType`](crate::DType)
    /// give a view with `dtype() == None`). [`imported_flags`](Self::imported_flags)
    /// tells READ_ONLY and IS_COPIED.
    ///
    /// # Safety
    /// The tensor's data must stay valid until its deleter runs, and nobody may write it
    /// while a view of it exists (the producer vouches for this by exporting it).
    pub unsafe fn from_dlpack(tensor: impl Into<DlpackTensor>) -> Result<Self> {
        import("StridedMemoryView::from_dlpack", tensor.into())
    }
}

impl StridedMemoryViewBase<'static, ReadWrite> {
    /// A writable view of a DLPack tensor, taken over as by
    /// [`StridedMemoryView::from_dlpack`](crate::StridedMemoryView::from_dlpack); a READ_ONLY tensor is refused.
    ///
    /// # Safety
    /// The tensor's data must stay valid until its deleter runs, and nobody else may read
    /// or write it while the view exists.
    pub unsafe fn from_dlpack(tensor: impl Into<DlpackTensor>) -> Result<Self> {
        import("StridedMemoryViewMut::from_dlpack", tensor.into())
    }
}

impl<A: Access> StridedMemoryViewBase<'static, A> {
    /// What an export of this view describes.
    fn export_spec(&self) -> ExportSpec<'_> {
        ExportSpec {
            ptr: self.ptr(),
            kind: self.kind(),
            device_id: self.device_id(),
            layout: self.layout(),
            dtype: self.dtype(),
        }
    }

    /// The tensor of this view; the deleter drops a share of the view's owner.
    ///
    /// # Safety
    /// Unless `read_only`, nobody but the consumer may use the memory until the deleter
    /// runs.
    unsafe fn export_as<M: ManagedTensorBase>(&self, read_only: bool) -> Result<Managed<M>> {
        // SAFETY: the owner keeps the memory alive until the deleter runs; the caller's
        // promise covers who else may use it.
        unsafe {
            export(
                self.export_spec(),
                Box::new(self.backing().clone()),
                read_only,
            )
        }
    }
}

impl StridedMemoryViewBase<'static, ReadOnly> {
    /// A DLPack 1.x tensor of this view, flagged READ_ONLY, that keeps the memory alive
    /// until the consumer calls its deleter. `data` points at element 0 (`byte_offset` 0),
    /// strides are explicit, and the device type is CUDA, CUDA_HOST, CUDA_MANAGED or CPU
    /// for device, pinned, managed and pageable memory. A view with no dtype is exported
    /// as unsigned integers of its itemsize.
    pub fn to_dlpack(&self) -> Result<dlpark::versioned::Dlpack> {
        // SAFETY: flagged READ_ONLY: the consumer only reads, like every other view.
        unsafe { self.export_as(true) }
    }

    /// Refused: a legacy (0.x) `DLManagedTensor` has no READ_ONLY flag, so the memory of
    /// a read-only view would come back writable through any consumer (and through
    /// stridekit's own import). Export DLPack 1.x ([`to_dlpack`](Self::to_dlpack)), or
    /// copy into a writable view first.
    pub fn to_dlpack_legacy(&self) -> Result<dlpark::legacy::Dlpack> {
        Err(crate::error::invalid(
            "StridedMemoryView::to_dlpack_legacy",
            "a read-only view cannot be exported as legacy DLPack (0.x has no READ_ONLY flag, so it would come back writable); export DLPack 1.x with to_dlpack, or copy into a writable view first",
        ))
    }
}

impl StridedMemoryViewBase<'static, ReadWrite> {
    /// A writable DLPack 1.x tensor of this view, which it consumes: the consumer becomes
    /// the only writer. See [`StridedMemoryView::to_dlpack`](crate::StridedMemoryView::to_dlpack).
    pub fn into_dlpack(self) -> Result<dlpark::versioned::Dlpack> {
        // SAFETY: the only writable view is consumed: the consumer becomes the only user.
        unsafe { self.export_as(false) }
    }

    /// A writable DLPack 1.x tensor of this view that leaves the view in place, for
    /// callers outside Rust's borrow rules (the C ABI, Python).
    ///
    /// # Safety
    /// Nobody may write through `self` (or read it while the consumer writes) until the
    /// consumer is done with the tensor.
    pub unsafe fn to_dlpack_writable(&self) -> Result<dlpark::versioned::Dlpack> {
        // SAFETY: the caller's promise.
        unsafe { self.export_as(false) }
    }

    /// [`to_dlpack_writable`](Self::to_dlpack_writable) as a legacy `DLManagedTensor`.
    ///
    /// # Safety
    /// As for [`to_dlpack_writable`](Self::to_dlpack_writable).
    pub unsafe fn to_dlpack_writable_legacy(&self) -> Result<dlpark::legacy::Dlpack> {
        // SAFETY: the caller's promise.
        unsafe { self.export_as(false) }
    }

    /// [`into_dlpack`](Self::into_dlpack) as a legacy (0.x) `DLManagedTensor`.
    pub fn into_dlpack_legacy(self) -> Result<dlpark::legacy::Dlpack> {
        // SAFETY: as for into_dlpack.
        unsafe { self.export_as(false) }
    }
}

impl<A: Access> StridedMemoryViewBase<'_, A> {
    /// A non-owning `DLTensor` of this view (DLPack's exchange without ownership): `data`
    /// is element 0's address (`byte_offset` 0), `shape` and `strides` point into this
    /// view's layout, so the struct is valid only while the view is alive and not moved,
    /// and its consumer must not write through those two pointers. A view without a dtype
    /// is described as unsigned integers of its itemsize (1, 2, 4 or 8 bytes).
    pub fn dltensor(&self) -> Result<DLTensor> {
        let l = self.layout();
        let first = self
            .ptr()
            .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
        let ndim = i32::try_from(l.ndim()).map_err(|_| invalid("dltensor", "too many axes"))?;
        Ok(DLTensor {
            data: first as *mut std::ffi::c_void,
            device: crate::dlpack::dl_device(self.kind(), self.device_id()),
            ndim,
            dtype: crate::dlpack::dl_dtype(self.dtype(), l.itemsize())?,
            shape: l.shape().as_ptr() as *mut i64,
            strides: l.strides().as_ptr() as *mut i64,
            byte_offset: 0,
        })
    }

    /// Orders a consumer's stream after the GPU work stridekit recorded on this view's
    /// memory, as the producer side of an exchange (`__dlpack__(stream=...)`, the CUDA
    /// Array Interface's `stream`) must: a consumer that may write waits for every
    /// recorded use; one that only reads waits for the recorded writes. Views without a
    /// record (host slices, cudarc slices) and `StreamValue::NoSync` order nothing.
    ///
    /// # Safety
    /// A [`StreamValue::Handle`](crate::stream::StreamValue::Handle) must be a live
    /// `CUstream` of the view's device.
    pub unsafe fn order_consumer(
        &self,
        stream: crate::stream::StreamValue,
        may_write: bool,
    ) -> Result<()> {
        const OP: &str = "order a DLPack consumer";
        let Some(p) = self.pending() else {
            return Ok(());
        };
        if !self.is_device_accessible() || self.layout.volume() == 0 {
            return Ok(());
        }
        // SAFETY: the caller's promise.
        match unsafe { stream.resolve_handle(self.device.unwrap_or(0)) }? {
            crate::stream::StreamOrder::On(s) => {
                let usage = if may_write {
                    crate::memory::Usage::Write
                } else {
                    crate::memory::Usage::Read
                };
                p.order_before(OP, usage, &s)
            }
            crate::stream::StreamOrder::Unordered => Ok(()),
        }
    }
}
