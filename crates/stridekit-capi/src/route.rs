//! Views across copies of the library: every `sk_view` points to the function table of
//! the copy that made it (as a DLPack tensor carries its deleter), so a call made
//! through another copy (a C extension linking its own stridekit beside the Python
//! package's, a second `dlopen`) is forwarded to the view's own copy, whose registry
//! knows it.
//!
//! A table pointer is checked before it is trusted: its bytes are read through the
//! kernel (`process_vm_readv` of this process), which answers an error for memory that is
//! not mapped instead of faulting, and must carry this layout's version, size and
//! [`SK_VTABLE_MAGIC`]. A garbage pointer is `SK_ERR_INVALID`, never a crash.

use crate::status::{fail, guard, set_last, sk_status, Failure, SK_ERR_INVALID, SK_OK};
use crate::types::{sk_view, sk_vtable, SK_VTABLE_MAGIC, SK_VTABLE_VERSION};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The address of this copy's own table, noted when the first view is published (so a
/// view of this copy is recognised without reading its table; before any view exists,
/// no view can be this copy's).
static OURS: AtomicUsize = AtomicUsize::new(0);

/// Notes this copy's table (`vtable::VTABLE`), before a view naming it goes out.
pub(crate) fn note_own_table(table: *const sk_vtable) {
    OURS.store(table as usize, Ordering::Relaxed);
}

/// Where a call on a view goes.
pub(crate) enum Route {
    /// This copy made the view (or the view is NULL, or names no table): handle it here.
    Here,
    /// Another copy made it: forward the call to that copy's table.
    There(&'static sk_vtable),
    /// The view's table pointer is not a table of a current stridekit: the status to
    /// return (its message is set).
    Refused(sk_status),
}

impl Route {
    /// The other copy's table, where the view is another copy's.
    pub(crate) fn table(&self) -> Option<&'static sk_vtable> {
        match self {
            Route::There(t) => Some(t),
            _ => None,
        }
    }
}

/// Where a call on `view` goes (see [`Route`]).
///
/// # Safety
/// `view` is NULL or points to a readable `sk_view`.
pub(crate) unsafe fn route(view: *const sk_view) -> Route {
    // SAFETY: the caller's promise.
    match unsafe { foreign(view) } {
        Ok(None) => Route::Here,
        Ok(Some(t)) => Route::There(t),
        Err(f) => Route::Refused(guard(|| Err(f))),
    }
}

/// The table of the other copy that made `view`, when another copy made it; an error
/// when the view's table pointer is neither NULL, this copy's table, nor a readable
/// table of the current layout.
///
/// # Safety
/// `view` is NULL or points to a readable `sk_view` (its `vtable` field may hold any
/// value).
pub(crate) unsafe fn foreign(view: *const sk_view) -> Result<Option<&'static sk_vtable>, Failure> {
    if view.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL and readable (caller).
    let vt = unsafe { (*view).vtable };
    if vt.is_null() || vt as usize == OURS.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let refused = |why: String| {
        fail(
            SK_ERR_INVALID,
            format!("the view's vtable {vt:p} is not the function table of a stridekit copy: {why}; a view is used only as its acquiring call wrote it"),
        )
    };
    if !(vt as usize).is_multiple_of(std::mem::align_of::<sk_vtable>()) {
        return Err(refused("it is misaligned".into()));
    }
    let mut head = [0u8; 8];
    if !read_mapped(vt as usize, &mut head) {
        return Err(refused("no readable memory is there".into()));
    }
    let version = u32::from_ne_bytes([head[0], head[1], head[2], head[3]]);
    let size = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if version < SK_VTABLE_VERSION || size < std::mem::size_of::<sk_vtable>() {
        return Err(refused(format!(
            "its version is {version} and its size {size}, and this copy takes version {SK_VTABLE_VERSION} or later of at least {} bytes (a view of an older stridekit cannot cross copies)",
            std::mem::size_of::<sk_vtable>()
        )));
    }
    let mut magic = [0u8; 8];
    if !read_mapped(
        vt as usize + std::mem::offset_of!(sk_vtable, magic),
        &mut magic,
    ) || u64::from_ne_bytes(magic) != SK_VTABLE_MAGIC
    {
        return Err(refused("it does not end in SK_VTABLE_MAGIC".into()));
    }
    // SAFETY: aligned, readable for the whole table, and of a layout version that holds
    // these fields (checked above); tables are statics of loaded copies.
    Ok(Some(unsafe { &*vt }))
}

/// Copies `out.len()` bytes at `addr` into `out` when they are mapped and readable,
/// through the kernel, so that an unmapped address is an answer, not a fault.
#[cfg(target_os = "linux")]
fn read_mapped(addr: usize, out: &mut [u8]) -> bool {
    let local = libc::iovec {
        iov_base: out.as_mut_ptr().cast(),
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut c_void,
        iov_len: out.len(),
    };
    // SAFETY: reads this process's memory into `out` (valid for `out.len()` bytes); the
    // kernel checks `addr` and fails with EFAULT where nothing readable is mapped.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == out.len() as isize {
        return true;
    }
    if n < 0
        && matches!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOSYS | libc::EPERM)
        )
    {
        // A sandbox that forbids the call: trust addresses inside a loaded object.
        return read_in_loaded_object(addr, out);
    }
    false
}

#[cfg(not(target_os = "linux"))]
fn read_mapped(addr: usize, out: &mut [u8]) -> bool {
    read_in_loaded_object(addr, out)
}

/// As [`read_mapped`], for addresses the dynamic loader places inside a loaded object
/// (where every copy's table, a static, lives).
#[cfg(unix)]
fn read_in_loaded_object(addr: usize, out: &mut [u8]) -> bool {
    for a in [addr, addr + out.len() - 1] {
        // SAFETY: a zeroed `Dl_info` is a valid out-parameter; dladdr reads no memory at
        // `a`, it looks the address up in the loader's tables.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::dladdr(a as *const c_void, &mut info) } == 0 || info.dli_fbase.is_null() {
            return false;
        }
    }
    // SAFETY: both ends lie in a loaded object's image (checked above).
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), out.len()) };
    true
}

#[cfg(not(unix))]
fn read_in_loaded_object(_addr: usize, _out: &mut [u8]) -> bool {
    false
}

/// The failure a forwarded call returned, with the other copy's message.
pub(crate) fn failure_of(vt: &sk_vtable, status: sk_status) -> Failure {
    forwarded(vt, status);
    let msg = crate::status::last_message();
    Failure(status, msg)
}

/// Runs a call forwarded to `vt`'s copy, and brings its error message into this copy's.
pub(crate) fn forwarded(vt: &sk_vtable, status: sk_status) -> sk_status {
    if status != SK_OK {
        let msg = (vt.last_error)();
        if !msg.is_null() {
            // SAFETY: the other copy's `sk_last_error` returns a NUL-terminated string,
            // valid until its next failing call on this thread.
            let text = unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy();
            set_last(&text);
        }
    }
    status
}
