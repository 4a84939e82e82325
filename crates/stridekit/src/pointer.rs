//! Asking the driver what an address is.

use crate::driver::ensure;
use crate::error::{check, Result};
use cudarc::driver::sys;
use std::ffi::c_void;

/// What kind of memory an address lies in, as the driver reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointerKind {
    /// Ordinary pageable host memory the driver knows nothing of ("not a CUDA pointer").
    Pageable,
    /// Page-locked host memory (cuMemHostAlloc or cuMemHostRegister).
    PinnedHost,
    /// Device memory (plain or from a pool).
    Device,
    /// Managed (unified) memory.
    Managed,
    /// A CUDA array.
    Array,
}

/// The driver's answer for one address, from a single `cuPointerGetAttributes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PointerInfo {
    /// The kind of memory.
    pub kind: PointerKind,
    /// The device the memory belongs to; `None` for host memory and managed memory
    /// that the driver reports without a device.
    pub device: Option<usize>,
    /// Whether the CPU may dereference it.
    pub host_accessible: bool,
    /// Whether kernels may dereference it.
    pub device_accessible: bool,
}

/// The driver's raw "no device" ordinal. Read as a signed 32-bit value it is -2; a binding
/// that reads it unsigned sees 4294967294.
const NO_DEVICE: i32 = -2;

/// Asks the driver, in one `cuPointerGetAttributes` call, what `ptr` is.
///
/// Ordinary host memory is not an error: it is [`PointerKind::Pageable`], host-only.
pub fn pointer_info(ptr: u64) -> Result<PointerInfo> {
    const OP: &str = "pointer_info";
    ensure(OP)?;
    let mut mem_type: u32 = 0;
    let mut ordinal: i32 = NO_DEVICE;
    let mut managed: u32 = 0;
    let mut dev_ptr: u64 = 0;
    use sys::CUpointer_attribute as A;
    let mut attrs = [
        A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        A::CU_POINTER_ATTRIBUTE_IS_MANAGED,
        A::CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
    ];
    let mut data: [*mut c_void; 4] = [
        (&mut mem_type as *mut u32).cast(),
        (&mut ordinal as *mut i32).cast(),
        (&mut managed as *mut u32).cast(),
        (&mut dev_ptr as *mut u64).cast(),
    ];
    // SAFETY: four attributes, each with an out-pointer of the type the driver documents
    // (CUmemorytype = u32, ordinal = int, bool as u32, CUdeviceptr = u64); all live locals.
    let status = unsafe {
        sys::cuPointerGetAttributes(
            attrs.len() as u32,
            attrs.as_mut_ptr(),
            data.as_mut_ptr(),
            ptr,
        )
    };
    check(OP, "cuPointerGetAttributes", status)?;
    let device = (ordinal >= 0).then_some(ordinal as usize);
    let info = match mem_type {
        t if t == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 && managed != 0 => PointerInfo {
            kind: PointerKind::Managed,
            device,
            host_accessible: true,
            device_accessible: true,
        },
        t if t == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 => PointerInfo {
            kind: PointerKind::Device,
            device,
            host_accessible: false,
            device_accessible: true,
        },
        t if t == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32 => PointerInfo {
            kind: if managed != 0 {
                PointerKind::Managed
            } else {
                PointerKind::PinnedHost
            },
            device,
            host_accessible: true,
            device_accessible: dev_ptr != 0,
        },
        t if t == sys::CUmemorytype::CU_MEMORYTYPE_ARRAY as u32 => PointerInfo {
            kind: PointerKind::Array,
            device,
            host_accessible: false,
            device_accessible: true,
        },
        _ => PointerInfo {
            kind: PointerKind::Pageable,
            device: None,
            host_accessible: true,
            device_accessible: false,
        },
    };
    Ok(info)
}
