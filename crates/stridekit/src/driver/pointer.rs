//! What the driver knows of an address (`cuPointerGetAttributes`).

use cudarc::driver::sys;
use std::ffi::c_void;

/// The raw answers for one address: memory type, device ordinal (-2 when none), whether
/// it is managed, and its device-side address (0 when the GPU cannot reach it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawPointerAttributes {
    pub mem_type: u32,
    pub ordinal: i32,
    pub managed: u32,
    pub device_pointer: u64,
}

/// Asks the driver about `ptr` in one call. Any value is a valid question: the driver
/// reads no memory at `ptr`.
///
/// # Safety
/// The driver library is loaded and initialised.
pub(crate) unsafe fn attributes(ptr: u64) -> (sys::CUresult, RawPointerAttributes) {
    use sys::CUpointer_attribute as A;
    let mut out = RawPointerAttributes {
        mem_type: 0,
        ordinal: -2,
        managed: 0,
        device_pointer: 0,
    };
    let mut attrs = [
        A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        A::CU_POINTER_ATTRIBUTE_IS_MANAGED,
        A::CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
    ];
    let mut data: [*mut c_void; 4] = [
        (&mut out.mem_type as *mut u32).cast(),
        (&mut out.ordinal as *mut i32).cast(),
        (&mut out.managed as *mut u32).cast(),
        (&mut out.device_pointer as *mut u64).cast(),
    ];
    // SAFETY: four attributes, each with an out-pointer of the type the driver documents
    // (CUmemorytype = u32, ordinal = int, bool as u32, CUdeviceptr = u64), all live.
    let status = unsafe {
        sys::cuPointerGetAttributes(
            attrs.len() as u32,
            attrs.as_mut_ptr(),
            data.as_mut_ptr(),
            ptr,
        )
    };
    (status, out)
}

/// The driver's memory-type codes.
pub(crate) const MEMORY_TYPE_HOST: u32 = sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32;
pub(crate) const MEMORY_TYPE_DEVICE: u32 = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32;
pub(crate) const MEMORY_TYPE_ARRAY: u32 = sys::CUmemorytype::CU_MEMORYTYPE_ARRAY as u32;

/// The allocation that holds `ptr`: its start address and size in bytes (both 0 when
/// the driver knows no allocation there). Any value is a valid question.
///
/// # Safety
/// The driver library is loaded and initialised.
pub(crate) unsafe fn allocation_range(ptr: u64) -> (sys::CUresult, u64, usize) {
    use sys::CUpointer_attribute as A;
    let (mut start, mut size) = (0u64, 0usize);
    let mut attrs = [
        A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut c_void; 2] = [
        (&mut start as *mut u64).cast(),
        (&mut size as *mut usize).cast(),
    ];
    // SAFETY: two attributes with out-pointers of the documented types (CUdeviceptr =
    // u64, size_t = usize), both live.
    let status = unsafe {
        sys::cuPointerGetAttributes(
            attrs.len() as u32,
            attrs.as_mut_ptr(),
            data.as_mut_ptr(),
            ptr,
        )
    };
    (status, start, size)
}
