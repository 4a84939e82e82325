//! DLPack export: a view's memory handed to another framework, kept alive by the tensor.

use crate::dtype::dtype_to_dlpack;
use crate::dtype::DType;
use crate::error::{invalid, Result};
use crate::memory::MemoryKind;
use dlpark::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType};
use dlpark::metadata::Dynamic;
use dlpark::{DlpackFlags, Managed, ManagedTensorBase};
use stridekit_layout::StridedLayout;

/// What the exported tensor's deleter releases: the view's owner (a share of an owned
/// buffer, an imported tensor, a `Vec`, ...).
struct ExportOwner(#[allow(dead_code)] Box<dyn std::any::Any + Send + Sync>);

/// The memory an export describes.
pub(crate) struct ExportSpec<'l> {
    /// The address of element offset 0.
    pub ptr: u64,
    pub kind: MemoryKind,
    /// The device ordinal, or -1.
    pub device_id: i32,
    pub layout: &'l StridedLayout,
    pub dtype: Option<DType>,
}

/// The DLPack device of memory of `kind` on `device_id`.
pub(crate) fn dl_device(kind: MemoryKind, device_id: i32) -> DLDevice {
    let (device_type, device_id) = match kind {
        MemoryKind::Device => (DLDeviceType::CUDA, device_id.max(0)),
        MemoryKind::PinnedHost => (DLDeviceType::CUDAHOST, 0),
        MemoryKind::Managed => (DLDeviceType::CUDAMANAGED, 0),
        MemoryKind::Host => (DLDeviceType::CPU, 0),
    };
    DLDevice {
        device_type,
        device_id,
    }
}

/// The DLPack data type of elements: their dtype, or unsigned integers of the itemsize.
pub(crate) fn dl_dtype(dtype: Option<DType>, itemsize: usize) -> Result<DLDataType> {
    match dtype {
        Some(d) => Ok(dtype_to_dlpack(d)),
        None if matches!(itemsize, 1 | 2 | 4 | 8) => Ok(DLDataType {
            code: DLDataTypeCode::UINT,
            bits: (itemsize * 8) as u8,
            lanes: 1,
        }),
        None => Err(invalid(
            "to_dlpack",
            format!(
                "the view has no dtype and itemsize {itemsize}; without a dtype only 1, 2, 4 and 8-byte elements export (as unsigned integers): give the view a dtype first"
            ),
        )),
    }
}

/// Builds the managed tensor of `spec`: `data` is the address of element 0, `byte_offset`
/// 0, strides explicit; the deleter drops `owner`.
///
/// # Safety
/// `spec` describes memory that `owner` keeps alive until the deleter runs; unless
/// `read_only`, the consumer may write it, so nobody else may use it meanwhile.
pub(crate) unsafe fn export<M: ManagedTensorBase>(
    spec: ExportSpec<'_>,
    owner: Box<dyn std::any::Any + Send + Sync>,
    read_only: bool,
) -> Result<Managed<M>> {
    const OP: &str = "to_dlpack";
    let l = spec.layout;
    let dtype = dl_dtype(spec.dtype, l.itemsize())?;
    let first = spec
        .ptr
        .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
    let prepared = Dynamic::new(l.shape(), l.strides())
        .prepare_as::<M>()
        .map_err(|e| invalid(OP, format!("the tensor's metadata could not be built: {e}")))?;
    let mut init = prepared.initialize(Box::new(ExportOwner(owner)));
    init.set_data(first as *mut std::ffi::c_void)
        .set_device(dl_device(spec.kind, spec.device_id))
        .set_dtype(dtype)
        .set_byte_offset(0);
    if read_only {
        init.set_flags(DlpackFlags::READ_ONLY)
            .map_err(|e| invalid(OP, format!("{e}")))?;
    }
    // SAFETY: data, shape and strides describe memory that `owner` keeps alive until the
    // deleter runs; the caller's promise covers who else may use it.
    Ok(unsafe { init.finish() })
}
