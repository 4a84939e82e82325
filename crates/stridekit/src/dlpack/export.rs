//! DLPack export: a view's memory handed to another framework, kept alive by the tensor.

use super::dtype::dtype_to_dlpack;
use crate::error::{invalid, Result};
use crate::memory::MemoryKind;
use crate::view::access::{Access, ReadWrite};
use crate::view::{Backing, StridedMemoryViewBase};
use dlpark::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType};
use dlpark::metadata::Dynamic;
use dlpark::{DlpackFlags, Managed, ManagedTensorBase};

/// What the exported tensor's deleter releases: the view's owner (a share of an owned
/// buffer, an imported tensor, a `Vec`, ...).
struct ExportOwner(#[allow(dead_code)] Backing<'static>);

/// The DLPack device of a view's memory.
pub(crate) fn dl_device<A: Access>(v: &StridedMemoryViewBase<'_, A>) -> DLDevice {
    let (device_type, device_id) = match v.kind() {
        MemoryKind::Device => (DLDeviceType::CUDA, v.device_id().max(0)),
        MemoryKind::PinnedHost => (DLDeviceType::CUDAHOST, 0),
        MemoryKind::Managed => (DLDeviceType::CUDAMANAGED, 0),
        MemoryKind::Host => (DLDeviceType::CPU, 0),
    };
    DLDevice {
        device_type,
        device_id,
    }
}

/// The DLPack data type of a view: its dtype, or unsigned integers of its itemsize.
pub(crate) fn dl_dtype<A: Access>(v: &StridedMemoryViewBase<'_, A>) -> Result<DLDataType> {
    match v.dtype() {
        Some(d) => Ok(dtype_to_dlpack(d)),
        None => {
            let bits = v.layout().itemsize() * 8;
            u8::try_from(bits)
                .map(|bits| DLDataType {
                    code: DLDataTypeCode::UINT,
                    bits,
                    lanes: 1,
                })
                .map_err(|_| {
                    invalid(
                        "to_dlpack",
                        format!(
                            "the view has no dtype and itemsize {}; DLPack can carry at most 255 bits per element, give the view a dtype first",
                            v.layout().itemsize()
                        ),
                    )
                })
        }
    }
}

/// Builds the managed tensor of `v`: `data` is the address of element 0, `byte_offset` 0,
/// strides explicit; the deleter drops `owner`.
fn export<M: ManagedTensorBase, A: Access>(
    v: &StridedMemoryViewBase<'static, A>,
    owner: Backing<'static>,
    read_only: bool,
) -> Result<Managed<M>> {
    const OP: &str = "to_dlpack";
    let l = v.layout();
    let dtype = dl_dtype(v)?;
    let first = v
        .ptr()
        .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
    let prepared = Dynamic::new(l.shape(), l.strides())
        .prepare_as::<M>()
        .map_err(|e| invalid(OP, format!("the tensor's metadata could not be built: {e}")))?;
    let mut init = prepared.initialize(Box::new(ExportOwner(owner)));
    init.set_data(first as *mut std::ffi::c_void)
        .set_device(dl_device(v))
        .set_dtype(dtype)
        .set_byte_offset(0);
    if read_only {
        init.set_flags(DlpackFlags::READ_ONLY)
            .map_err(|e| invalid(OP, format!("{e}")))?;
    }
    // SAFETY: data, shape and strides describe memory that `owner` keeps alive until the
    // deleter runs; READ_ONLY is set for every view that may be shared, and a writable
    // export consumed the only writable view.
    Ok(unsafe { init.finish() })
}

impl<A: Access> StridedMemoryViewBase<'static, A> {
    fn export_read_only<M: ManagedTensorBase>(&self) -> Result<Managed<M>> {
        export(self, self.backing().clone(), true)
    }
}

impl StridedMemoryViewBase<'static, crate::view::access::ReadOnly> {
    /// A DLPack 1.x tensor of this view, flagged READ_ONLY, that keeps the memory alive
    /// until the consumer calls its deleter. `data` points at element 0 (`byte_offset` 0),
    /// strides are explicit, and the device type is CUDA, CUDA_HOST, CUDA_MANAGED or CPU
    /// for device, pinned, managed and pageable memory. A view with no dtype is exported
    /// as unsigned integers of its itemsize.
    pub fn to_dlpack(&self) -> Result<dlpark::versioned::Dlpack> {
        self.export_read_only()
    }

    /// [`to_dlpack`](Self::to_dlpack) as a legacy (0.x) `DLManagedTensor`, for consumers
    /// that ask for one. The legacy ABI has no flags: the consumer is trusted not to write.
    pub fn to_dlpack_legacy(&self) -> Result<dlpark::legacy::Dlpack> {
        self.export_read_only()
    }
}

impl StridedMemoryViewBase<'static, ReadWrite> {
    /// A writable DLPack 1.x tensor of this view, which it consumes: the consumer becomes
    /// the only writer. See [`StridedMemoryView::to_dlpack`](crate::StridedMemoryView::to_dlpack).
    pub fn into_dlpack(self) -> Result<dlpark::versioned::Dlpack> {
        let owner = self.backing().clone();
        export(&self, owner, false)
    }

    /// A writable DLPack 1.x tensor of this view that leaves the view in place, for
    /// callers outside Rust's borrow rules (the C ABI, Python).
    ///
    /// # Safety
    /// Nobody may write through `self` (or read it while the consumer writes) until the
    /// consumer is done with the tensor.
    pub unsafe fn to_dlpack_writable(&self) -> Result<dlpark::versioned::Dlpack> {
        export(self, self.backing().clone(), false)
    }

    /// [`to_dlpack_writable`](Self::to_dlpack_writable) as a legacy `DLManagedTensor`.
    ///
    /// # Safety
    /// As for [`to_dlpack_writable`](Self::to_dlpack_writable).
    pub unsafe fn to_dlpack_writable_legacy(&self) -> Result<dlpark::legacy::Dlpack> {
        export(self, self.backing().clone(), false)
    }

    /// [`into_dlpack`](Self::into_dlpack) as a legacy (0.x) `DLManagedTensor`.
    pub fn into_dlpack_legacy(self) -> Result<dlpark::legacy::Dlpack> {
        let owner = self.backing().clone();
        export(&self, owner, false)
    }
}
