//! Asking the driver what an address is.

use crate::driver::{check, ensure, pointer as dp};
use crate::error::Result;

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

/// Whether kernels reach the host memory at `ptr` at that same address (page-locked
/// memory mapped into the device's address space, as unified addressing maps
/// `cuMemHostAlloc` memory): the driver's device pointer for it is `ptr` itself.
pub(crate) fn mapped_at_same_address(ptr: u64) -> Result<bool> {
    const OP: &str = "pointer_info";
    ensure(OP)?;
    // SAFETY: the driver is loaded (ensure); the driver reads no memory at `ptr`.
    let (status, a) = unsafe { dp::attributes(ptr) };
    check(OP, "cuPointerGetAttributes", status)?;
    Ok(a.mem_type == dp::MEMORY_TYPE_HOST && a.device_pointer == ptr)
}

/// The allocation that holds `ptr` as the driver knows it: `[start, start + size)`, or
/// `None` where it knows none.
pub(crate) fn allocation_range(ptr: u64) -> Result<Option<(u64, u64)>> {
    const OP: &str = "pointer_info";
    ensure(OP)?;
    // SAFETY: the driver is loaded (ensure); the driver reads no memory at `ptr`.
    let (status, start, size) = unsafe { dp::allocation_range(ptr) };
    check(OP, "cuPointerGetAttributes", status)?;
    Ok((size > 0).then(|| (start, start.saturating_add(size as u64))))
}

/// Asks the driver, in one `cuPointerGetAttributes` call, what `ptr` is.
///
/// Ordinary host memory is not an error: it is [`PointerKind::Pageable`], host-only.
pub fn pointer_info(ptr: u64) -> Result<PointerInfo> {
    const OP: &str = "pointer_info";
    ensure(OP)?;
    // SAFETY: the driver is loaded (ensure); the driver reads no memory at `ptr`.
    let (status, a) = unsafe { dp::attributes(ptr) };
    check(OP, "cuPointerGetAttributes", status)?;
    let (mem_type, ordinal, managed, dev_ptr) =
        (a.mem_type, a.ordinal, a.managed, a.device_pointer);
    let device = (ordinal >= 0).then_some(ordinal as usize);
    let info = match mem_type {
        t if t == dp::MEMORY_TYPE_DEVICE && managed != 0 => PointerInfo {
            kind: PointerKind::Managed,
            device,
            host_accessible: true,
            device_accessible: true,
        },
        t if t == dp::MEMORY_TYPE_DEVICE => PointerInfo {
            kind: PointerKind::Device,
            device,
            host_accessible: false,
            device_accessible: true,
        },
        t if t == dp::MEMORY_TYPE_HOST => PointerInfo {
            kind: if managed != 0 {
                PointerKind::Managed
            } else {
                PointerKind::PinnedHost
            },
            device,
            host_accessible: true,
            device_accessible: dev_ptr != 0,
        },
        t if t == dp::MEMORY_TYPE_ARRAY => PointerInfo {
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
