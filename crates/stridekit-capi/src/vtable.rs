//! Views across copies of the library: every `sk_view` points to the function table of
//! the copy that made it (as a DLPack tensor carries its deleter), so a call made
//! through another copy (a C extension linking its own stridekit beside the Python
//! package's, a second `dlopen`) is forwarded to the view's own copy, whose registry
//! knows it.

use crate::status::{set_last, sk_status, SK_OK};
use crate::tma::sk_tma_options;
use crate::view::sk_view;
use std::ffi::{c_char, c_void};

/// The version of [`sk_vtable`]'s layout; a table of an older version is not used.
pub const SK_VTABLE_VERSION: u32 = 1;

/// The functions of the library copy that made a view. `version` and `size` come first
/// so that later versions can only add to the end.
#[repr(C)]
#[derive(Debug)]
pub struct sk_vtable {
    /// `SK_VTABLE_VERSION` of the copy that made the table.
    pub version: u32,
    /// `sizeof(sk_vtable)` of that copy.
    pub size: u32,
    /// That copy's `sk_last_error`.
    pub last_error: extern "C" fn() -> *const c_char,
    /// That copy's `sk_view_release`.
    pub release: unsafe extern "C" fn(*mut sk_view) -> sk_status,
    /// That copy's `sk_view_copy`.
    pub copy: unsafe extern "C" fn(*const sk_view, *const sk_view, usize, i32) -> sk_status,
    /// That copy's `sk_view_copy_bits`.
    pub copy_bits: unsafe extern "C" fn(*const sk_view, *const sk_view, usize, i32) -> sk_status,
    /// That copy's `sk_view_to_dlpack`.
    pub to_dlpack: unsafe extern "C" fn(*const sk_view, bool, *mut *mut c_void) -> sk_status,
    /// That copy's `sk_view_required_size`.
    pub required_size: unsafe extern "C" fn(*const sk_view, *mut i64) -> sk_status,
    /// That copy's `sk_view_is_contiguous`.
    pub is_contiguous: unsafe extern "C" fn(*const sk_view, u8, *mut bool) -> sk_status,
    /// That copy's `sk_tensor_map_tiled`.
    pub tensor_map_tiled: unsafe extern "C" fn(
        *const sk_view,
        i32,
        *const u32,
        *const sk_tma_options,
        *mut u8,
    ) -> sk_status,
}

/// This copy's table.
pub(crate) static VTABLE: sk_vtable = sk_vtable {
    version: SK_VTABLE_VERSION,
    size: std::mem::size_of::<sk_vtable>() as u32,
    last_error: crate::status::sk_last_error,
    release: crate::view::sk_view_release,
    copy: crate::copy::sk_view_copy,
    copy_bits: crate::copy::sk_view_copy_bits,
    to_dlpack: crate::view::sk_view_to_dlpack,
    required_size: crate::view::sk_view_required_size,
    is_contiguous: crate::view::sk_view_is_contiguous,
    tensor_map_tiled: crate::tma::sk_tensor_map_tiled,
};

/// The table of the other copy that made `view`, when another copy made it.
///
/// # Safety
/// `view` is NULL or points to a readable `sk_view` whose `vtable` is NULL or points to
/// a live table.
pub(crate) unsafe fn foreign(view: *const sk_view) -> Option<&'static sk_vtable> {
    if view.is_null() {
        return None;
    }
    // SAFETY: non-NULL and readable (caller).
    let vt = unsafe { (*view).vtable };
    if vt.is_null() || std::ptr::eq(vt, &VTABLE) {
        return None;
    }
    // SAFETY: a live table (caller); its first two fields exist in every version.
    let t = unsafe { &*vt };
    (t.version >= SK_VTABLE_VERSION && t.size as usize >= std::mem::size_of::<sk_vtable>())
        .then_some(t)
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
