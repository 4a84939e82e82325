//! What an `sk_view`'s `owner` points to, and the registry that makes a second release
//! (or a forged owner) an error instead of a crash.

use crate::status::{fail, non_null, sk_status, Failure};
use crate::view::sk_view;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use stridekit::view::DynView;

/// The owner of an `sk_view`: the view, and the arrays its `shape`/`strides` point into.
pub(crate) struct Handle {
    pub(crate) held: DynView<'static>,
    pub(crate) shape: Vec<i64>,
    pub(crate) strides: Vec<i64>,
}

fn live() -> &'static Mutex<HashSet<usize>> {
    static LIVE: OnceLock<Mutex<HashSet<usize>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

fn lock(op: &str) -> Result<std::sync::MutexGuard<'static, HashSet<usize>>, Failure> {
    live().lock().map_err(|_| {
        fail(
            sk_status::SK_ERR_INTERNAL,
            format!("{op}: the view registry lock was poisoned"),
        )
    })
}

/// Registers a new handle; returns its owner pointer.
pub(crate) fn register(op: &str, h: Handle) -> Result<*mut Handle, Failure> {
    let p = Box::into_raw(Box::new(h));
    lock(op)?.insert(p as usize);
    Ok(p)
}

/// The live handle behind `view`.
///
/// # Safety
/// `view` is NULL or points to a readable `sk_view`; a live handle is not released by
/// another thread while the returned borrow is in use.
pub(crate) unsafe fn lookup<'v>(
    op: &str,
    name: &str,
    view: *const sk_view,
) -> Result<&'v mut Handle, Failure> {
    non_null(op, name, view)?;
    // SAFETY: non-NULL and readable (caller).
    let owner = unsafe { (*view).owner } as usize;
    if owner == 0 || !lock(op)?.contains(&owner) {
        return Err(fail(
            sk_status::SK_ERR_RELEASED,
            format!("{op}: `{name}` is not a live view (owner {owner:#x}: released already, or never acquired)"),
        ));
    }
    // SAFETY: registered owners are live `Box<Handle>`s (removed before they are freed).
    Ok(unsafe { &mut *(owner as *mut Handle) })
}

/// Unregisters and frees the handle behind `view`.
///
/// # Safety
/// As for [`lookup`]; nobody uses the handle afterwards.
pub(crate) unsafe fn release(op: &str, view: *mut sk_view) -> Result<(), Failure> {
    non_null(op, "view", view)?;
    // SAFETY: non-NULL and readable (caller).
    let owner = unsafe { (*view).owner } as usize;
    let known = owner != 0 && lock(op)?.remove(&owner);
    if !known {
        return Err(fail(
            sk_status::SK_ERR_RELEASED,
            format!("{op}: the view is not live (owner {owner:#x}): it was released already, or never acquired"),
        ));
    }
    // SAFETY: the owner was registered, so it is a live Box<Handle>; removed above, so
    // this is its only free.
    drop(unsafe { Box::from_raw(owner as *mut Handle) });
    // SAFETY: writable (caller).
    unsafe { (*view).owner = std::ptr::null_mut() };
    Ok(())
}
