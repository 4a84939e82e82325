//! Memory: pools, allocations, frees, copies and fills.

use cudarc::driver::sys;
use std::ffi::c_void;

/// Creates a memory pool of device memory on device `ordinal`.
///
/// # Safety
/// The driver is loaded and `ordinal` is a valid device ordinal.
pub(crate) unsafe fn pool_create(out: &mut sys::CUmemoryPool, ordinal: i32) -> sys::CUresult {
    // SAFETY: zeroed is a valid CUmemPoolProps (plain C struct of ints and pointers).
    let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
    props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = ordinal;
    // SAFETY: valid out-pointer and props; the caller's promise for the rest.
    unsafe { sys::cuMemPoolCreate(out, &props) }
}

/// Destroys a pool.
///
/// # Safety
/// `pool` was made by [`pool_create`], is destroyed once, and nothing allocated from it
/// is still in use.
pub(crate) unsafe fn pool_destroy(pool: sys::CUmemoryPool) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemPoolDestroy(pool) }
}

/// The default memory pool of `device`.
///
/// # Safety
/// `device` is a handle from `cuDeviceGet`.
pub(crate) unsafe fn default_pool(
    out: &mut sys::CUmemoryPool,
    device: sys::CUdevice,
) -> sys::CUresult {
    // SAFETY: the caller's promise; valid out-pointer.
    unsafe { sys::cuDeviceGetDefaultMemPool(out, device) }
}

/// Sets a pool's release threshold (bytes kept reserved when idle).
///
/// # Safety
/// `pool` is a live pool.
pub(crate) unsafe fn pool_set_release_threshold(
    pool: sys::CUmemoryPool,
    mut bytes: u64,
) -> sys::CUresult {
    // SAFETY: the caller's promise; the attribute takes a cuuint64_t value.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut bytes as *mut u64).cast(),
        )
    }
}

/// Releases a pool's idle memory beyond `keep` bytes to the system.
///
/// # Safety
/// `pool` is a live pool.
pub(crate) unsafe fn pool_trim_to(pool: sys::CUmemoryPool, keep: usize) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemPoolTrimTo(pool, keep) }
}

/// Gives (or takes away) device `accessor`'s read-write access to a pool's memory.
///
/// # Safety
/// `pool` is a live pool of a device other than `accessor`.
pub(crate) unsafe fn pool_set_access(
    pool: sys::CUmemoryPool,
    accessor: i32,
    on: bool,
) -> sys::CUresult {
    // SAFETY: zeroed is a valid CUmemAccessDesc (plain C struct of enums and ints).
    let mut d: sys::CUmemAccessDesc = unsafe { std::mem::zeroed() };
    d.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = accessor;
    d.flags = if on {
        sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    } else {
        sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE
    };
    // SAFETY: the caller's promise; one descriptor.
    unsafe { sys::cuMemPoolSetAccess(pool, &d, 1) }
}

/// Allocates `size` bytes from `pool`, ordered on `stream`.
///
/// # Safety
/// The pool's device's context is current; `pool` and `stream` are live and belong to it.
pub(crate) unsafe fn alloc_from_pool(
    out: &mut sys::CUdeviceptr,
    size: usize,
    pool: sys::CUmemoryPool,
    stream: sys::CUstream,
) -> sys::CUresult {
    // SAFETY: the caller's promise; valid out-pointer.
    unsafe { sys::cuMemAllocFromPoolAsync(out, size, pool, stream) }
}

/// Frees stream-ordered memory after the work queued on `stream`.
///
/// # Safety
/// `ptr` came from [`alloc_from_pool`], is freed once, and nothing uses it after the work
/// already queued on `stream` (or on streams `stream` waits for).
pub(crate) unsafe fn free_async(ptr: sys::CUdeviceptr, stream: sys::CUstream) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemFreeAsync(ptr, stream) }
}

/// Allocates `size` bytes of page-locked host memory, portable and mapped.
///
/// # Safety
/// A context is current on the calling thread.
pub(crate) unsafe fn host_alloc(out: &mut *mut c_void, size: usize) -> sys::CUresult {
    let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
    // SAFETY: the caller's promise; valid out-pointer; documented flags.
    unsafe { sys::cuMemHostAlloc(out, size, flags) }
}

/// Frees page-locked host memory.
///
/// # Safety
/// `ptr` came from [`host_alloc`], is freed once, and no queued work uses it.
pub(crate) unsafe fn host_free(ptr: *mut c_void) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemFreeHost(ptr) }
}

/// Allocates `size` bytes of managed memory, attached globally.
///
/// # Safety
/// A context is current on the calling thread.
pub(crate) unsafe fn managed_alloc(out: &mut sys::CUdeviceptr, size: usize) -> sys::CUresult {
    let flags = sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32;
    // SAFETY: the caller's promise; valid out-pointer; documented flag.
    unsafe { sys::cuMemAllocManaged(out, size, flags) }
}

/// Frees memory from `cuMemAlloc`/`cuMemAllocManaged`.
///
/// # Safety
/// `ptr` came from such an allocation, is freed once, and no queued work uses it.
pub(crate) unsafe fn free(ptr: sys::CUdeviceptr) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemFree_v2(ptr) }
}

/// Copies `bytes` bytes between any two addresses (unified addressing), on `stream`.
///
/// # Safety
/// Both spans are valid for `bytes` bytes until the copy is done, the destination is
/// written by nobody else meanwhile, and `stream`'s context is current.
pub(crate) unsafe fn copy_async(
    dst: u64,
    src: u64,
    bytes: usize,
    stream: sys::CUstream,
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemcpyAsync(dst, src, bytes, stream) }
}

/// Copies `bytes` bytes from one device's memory to another's, on `stream`.
///
/// # Safety
/// As for [`copy_async`]; `dst_ctx` and `src_ctx` are the live contexts that own the
/// two spans.
pub(crate) unsafe fn copy_peer_async(
    dst: u64,
    dst_ctx: sys::CUcontext,
    src: u64,
    src_ctx: sys::CUcontext,
    bytes: usize,
    stream: sys::CUstream,
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, stream) }
}

/// Sets `bytes` bytes at `ptr` to `value`, on `stream`.
///
/// # Safety
/// `ptr..ptr + bytes` is device-accessible memory nobody else uses until the fill is done;
/// `stream`'s context is current.
pub(crate) unsafe fn fill_async(
    ptr: u64,
    value: u8,
    bytes: usize,
    stream: sys::CUstream,
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemsetD8Async(ptr, value, bytes, stream) }
}
