//! What an `sk_view`'s `owner` holds, and the registry behind it.
//!
//! `owner` is an id, never an address: ids are handed out once (a 64-bit counter), so a
//! stale copy of a released view's struct never matches a view acquired later, whatever
//! the allocator reuses. Each live view sits behind a reader/writer lock: calls that read
//! a view take it shared, a copy into a view takes it exclusively (two views of one call
//! are locked in id order, so two threads copying both ways cannot deadlock). A release
//! takes the view out of the registry at once; a call already using it on another thread
//! keeps its share, and the view (and its owner's release callback) is dropped when that
//! call ends: the release waits for it, without blocking the releasing thread.

use crate::status::{fail, non_null, Failure, SK_ERR_INTERNAL, SK_ERR_RELEASED};
use crate::types::sk_view;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use stridekit::view::DynView;

/// The owner of an `sk_view`: the view, and the arrays its `shape`/`strides` point into.
pub(crate) struct Handle {
    pub(crate) held: DynView<'static>,
    /// Held for `sk_view::shape` and `sk_view::strides`, which point into them.
    #[allow(dead_code)]
    pub(crate) shape: Vec<i64>,
    /// As above.
    #[allow(dead_code)]
    pub(crate) strides: Vec<i64>,
}

/// A live view, shared with the calls using it.
pub(crate) type Shared = Arc<RwLock<Handle>>;

struct Registry {
    next: AtomicU64,
    live: Mutex<HashMap<u64, Shared>>,
}

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Registry {
        next: AtomicU64::new(1),
        live: Mutex::new(HashMap::new()),
    })
}

fn poisoned(op: &str, what: &str) -> Failure {
    fail(
        SK_ERR_INTERNAL,
        format!("{op}: the {what} lock was poisoned by a panic"),
    )
}

/// Registers a new handle; returns the id that goes into `owner`.
pub(crate) fn register(op: &str, h: Handle) -> Result<u64, Failure> {
    let id = registry().next.fetch_add(1, Ordering::Relaxed);
    registry()
        .live
        .lock()
        .map_err(|_| poisoned(op, "view registry"))?
        .insert(id, Arc::new(RwLock::new(h)));
    Ok(id)
}

/// The id in `view.owner`.
///
/// # Safety
/// `view` is NULL or points to a readable `sk_view`.
pub(crate) unsafe fn id_of(op: &str, name: &str, view: *const sk_view) -> Result<u64, Failure> {
    non_null(op, name, view)?;
    // SAFETY: non-NULL and readable (caller).
    Ok(unsafe { (*view).owner } as usize as u64)
}

/// The live view with `id`.
pub(crate) fn get(op: &str, name: &str, id: u64) -> Result<Shared, Failure> {
    registry()
        .live
        .lock()
        .map_err(|_| poisoned(op, "view registry"))?
        .get(&id)
        .cloned()
        .ok_or_else(|| {
            fail(
                SK_ERR_RELEASED,
                format!("{op}: `{name}` is not a live view (owner {id:#x}: released already, or never acquired)"),
            )
        })
}

/// The live view behind `view`.
///
/// # Safety
/// `view` is NULL or points to a readable `sk_view`.
pub(crate) unsafe fn lookup(op: &str, name: &str, view: *const sk_view) -> Result<Shared, Failure> {
    // SAFETY: the caller's promise.
    get(op, name, unsafe { id_of(op, name, view) }?)
}

/// Shared access for a call that reads.
pub(crate) fn read<'h>(op: &str, h: &'h Shared) -> Result<RwLockReadGuard<'h, Handle>, Failure> {
    h.read().map_err(|_| poisoned(op, "view"))
}

/// Exclusive access for a call that writes.
pub(crate) fn write<'h>(op: &str, h: &'h Shared) -> Result<RwLockWriteGuard<'h, Handle>, Failure> {
    h.write().map_err(|_| poisoned(op, "view"))
}

/// Takes the view out of the registry; it is dropped once no call uses it.
///
/// # Safety
/// `view` is NULL or points to a readable and writable `sk_view`.
pub(crate) unsafe fn release(op: &str, view: *mut sk_view) -> Result<(), Failure> {
    // SAFETY: the caller's promise.
    let id = unsafe { id_of(op, "view", view) }?;
    let removed = {
        let mut live = registry()
            .live
            .lock()
            .map_err(|_| poisoned(op, "view registry"))?;
        let removed = live.remove(&id);
        if live.is_empty() {
            // Give the table back: a program that released every view leaves nothing
            // allocated (valgrind's leak check stays clean with nothing suppressed).
            *live = HashMap::new();
        }
        removed
    };
    if removed.is_none() {
        return Err(fail(
            SK_ERR_RELEASED,
            format!("{op}: the view is not live (owner {id:#x}): it was released already, or never acquired"),
        ));
    }
    // SAFETY: writable (caller).
    unsafe { (*view).owner = std::ptr::null_mut() };
    Ok(())
}
