//! `sk_view` entry points on a live view: read, export, release (acquiring is in
//! `acquire`).

use crate::handle::{lookup, read, release};
use crate::route::forwarded;
use crate::status::{fail, guard, non_null, sk_status, SK_ERR_INVALID};
use crate::types::sk_view;
use std::ffi::c_void;
use stridekit::view::DynView;

/// Exports a view as a DLPack tensor (`versioned`: a `DLManagedTensorVersioned*`,
/// otherwise a legacy `DLManagedTensor*`) into `*out`. The tensor keeps the memory alive
/// until its deleter is called, even after the view is released. A read-only view is
/// flagged READ_ONLY; a writable view's tensor is writable, and writes through the view
/// while the consumer uses the tensor are the caller's to order.
///
/// Ownership: the caller owns the new tensor and calls its deleter once. NULL: `view` and
/// `out` must not be NULL. Threads: safe (shared lock on the view).
///
/// # Safety
/// `view` is a live view (or NULL); `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sk_view_to_dlpack(
    view: *const sk_view,
    versioned: bool,
    out: *mut *mut c_void,
) -> sk_status {
    const OP: &str = "sk_view_to_dlpack";
    // SAFETY: the caller's promise (a view made by another copy carries its table).
    match unsafe { crate::route::route(view) } {
        crate::route::Route::There(vt) => {
            // SAFETY: forwarded with the caller's arguments to the copy that made the view.
            return forwarded(vt, unsafe { (vt.to_dlpack)(view, versioned, out) });
        }
        crate::route::Route::Refused(status) => return status,
        crate::route::Route::Here => {}
    }
    guard(|| {
        non_null(OP, "out", out)?;
        // SAFETY: the caller's promise.
        let shared = unsafe { lookup(OP, "view", view) }?;
        let h = read(OP, &shared)?;
        let raw = match (&h.held, versioned) {
            (DynView::ReadOnly(v), true) => v.to_dlpack()?.into_raw() as *mut c_void,
            (DynView::ReadOnly(v), false) => v.to_dlpack_legacy()?.into_raw() as *mut c_void,
            (DynView::Writable(v), true) => {
                // SAFETY: C has no borrow rules; the doc above makes ordering the caller's.
                unsafe { v.to_dlpack_writable() }?.into_raw() as *mut c_void
            }
            (DynView::Writable(v), false) => {
                // SAFETY: as above.
                unsafe { v.to_dlpack_writable_legacy() }?.into_raw() as *mut c_void
            }
        };
        // SAFETY: non-NULL and writable (caller).
        unsafe { out.write(raw) };
        Ok(())
    })
}

/// Releases a view: exactly once. Its `owner` becomes NULL; a second release, a NULL
/// view or a view that was never acquired is an error (`SK_ERR_RELEASED` or
/// `SK_ERR_NULL_POINTER`), not a crash, and so is a `vtable` that is no stridekit
/// function table (`SK_ERR_INVALID`).
///
/// Ownership: gives the view back; its owner's release callback runs once no call uses
/// the view any more (at once, unless another thread is inside a call with it). NULL:
/// `view` must not be NULL. Threads: safe; a stale copy of a released view's struct is
/// refused (`SK_ERR_RELEASED`), never matched to a later view.
///
/// # Safety
/// `view` is NULL or points to a readable and writable `sk_view`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_release(view: *mut sk_view) -> sk_status {
    // SAFETY: the caller's promise (a view made by another copy carries its table).
    match unsafe { crate::route::route(view) } {
        crate::route::Route::There(vt) => {
            // SAFETY: forwarded with the caller's arguments to the copy that made the view.
            return forwarded(vt, unsafe { (vt.release)(view) });
        }
        crate::route::Route::Refused(status) => return status,
        crate::route::Route::Here => {}
    }
    // SAFETY: the caller's promise.
    guard(|| unsafe { release("sk_view_release", view) })
}

/// The bytes an allocation needs to hold every element of the view, counted from its
/// lowest address.
///
/// NULL: `view` and `out` must not be NULL. Threads: safe (shared lock).
///
/// # Safety
/// `view` is a live view (or NULL); `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sk_view_required_size(view: *const sk_view, out: *mut i64) -> sk_status {
    const OP: &str = "sk_view_required_size";
    // SAFETY: the caller's promise (a view made by another copy carries its table).
    match unsafe { crate::route::route(view) } {
        crate::route::Route::There(vt) => {
            // SAFETY: forwarded with the caller's arguments to the copy that made the view.
            return forwarded(vt, unsafe { (vt.required_size)(view, out) });
        }
        crate::route::Route::Refused(status) => return status,
        crate::route::Route::Here => {}
    }
    guard(|| {
        non_null(OP, "out", out)?;
        // SAFETY: the caller's promise.
        let shared = unsafe { lookup(OP, "view", view) }?;
        let h = read(OP, &shared)?;
        let v = h.held.as_view();
        let l = v.layout();
        // Views keep their lowest element at or after their base (min_offset >= 0).
        let n = l
            .required_size_in_bytes()
            .map_err(|e| fail(SK_ERR_INVALID, format!("{OP}: {e}")))? as i64;
        // SAFETY: non-NULL and writable (caller).
        unsafe { out.write(n) };
        Ok(())
    })
}

/// Whether the view's elements are dense in `order`: 'C' (row-major), 'F' (column-major)
/// or 'A' (either, or any axis order).
///
/// NULL: `view` and `out` must not be NULL. Threads: safe (shared lock).
///
/// # Safety
/// `view` is a live view (or NULL); `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sk_view_is_contiguous(
    view: *const sk_view,
    order: u8,
    out: *mut bool,
) -> sk_status {
    const OP: &str = "sk_view_is_contiguous";
    // SAFETY: the caller's promise (a view made by another copy carries its table).
    match unsafe { crate::route::route(view) } {
        crate::route::Route::There(vt) => {
            // SAFETY: forwarded with the caller's arguments to the copy that made the view.
            return forwarded(vt, unsafe { (vt.is_contiguous)(view, order, out) });
        }
        crate::route::Route::Refused(status) => return status,
        crate::route::Route::Here => {}
    }
    guard(|| {
        non_null(OP, "out", out)?;
        // SAFETY: the caller's promise.
        let shared = unsafe { lookup(OP, "view", view) }?;
        let h = read(OP, &shared)?;
        let v = h.held.as_view();
        let l = v.layout();
        let yes = match order {
            b'C' | b'c' => l.is_contiguous_c(),
            b'F' | b'f' => l.is_contiguous_f(),
            b'A' | b'a' => l.is_contiguous_any(),
            o => {
                return Err(fail(
                    SK_ERR_INVALID,
                    format!("{OP}: order {:?} is not 'C', 'F' or 'A'", o as char),
                ))
            }
        };
        // SAFETY: non-NULL and writable (caller).
        unsafe { out.write(yes) };
        Ok(())
    })
}
