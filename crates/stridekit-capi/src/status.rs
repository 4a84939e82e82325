//! Status codes, the thread's last error message, and the guard that keeps panics inside.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use stridekit::Error;

/// What a call ended with: `SK_OK` (0) or one of the `SK_ERR_*` codes, each with a
/// message in `sk_last_error()`. A fixed-size integer, so that a header and a library
/// of different versions agree on its size; `sk_status_str()` names any value.
pub type sk_status = i32;

/// The version of the header this library was built with; `sk_version()` answers the
/// library's own.
pub const STRIDEKIT_VERSION_MAJOR: u32 = 0;
/// See `STRIDEKIT_VERSION_MAJOR`.
pub const STRIDEKIT_VERSION_MINOR: u32 = 1;
/// See `STRIDEKIT_VERSION_MAJOR`.
pub const STRIDEKIT_VERSION_PATCH: u32 = 0;

/// Success.
pub const SK_OK: sk_status = 0;
/// An argument broke a rule (the message names the value and the rule).
pub const SK_ERR_INVALID: sk_status = 1;
/// A required pointer argument was NULL.
pub const SK_ERR_NULL_POINTER: sk_status = 2;
/// A write through a read-only view.
pub const SK_ERR_READ_ONLY: sk_status = 3;
/// A view that was already released (or never acquired).
pub const SK_ERR_RELEASED: sk_status = 4;
/// The driver or device cannot do this.
pub const SK_ERR_UNSUPPORTED: sk_status = 5;
/// No CUDA driver could be loaded.
pub const SK_ERR_NO_DRIVER: sk_status = 6;
/// No device with that ordinal.
pub const SK_ERR_NO_DEVICE: sk_status = 7;
/// A driver call failed.
pub const SK_ERR_DRIVER: sk_status = 8;
/// An internal error (a bug in stridekit, caught before it crossed the boundary).
pub const SK_ERR_INTERNAL: sk_status = 9;

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// A failure: the status and its message.
pub(crate) struct Failure(pub sk_status, pub String);

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match &e {
            Error::NoDriver { .. } => SK_ERR_NO_DRIVER,
            Error::NoDevice { .. } => SK_ERR_NO_DEVICE,
            Error::Driver { .. } => SK_ERR_DRIVER,
            Error::Unsupported { .. } => SK_ERR_UNSUPPORTED,
            _ => SK_ERR_INVALID,
        };
        let msg = match &e {
            Error::DtypeMismatch { op, src, dst } => format!(
                "{op}: the source is {src:?} and the destination {dst:?}; a copy never converts or reinterprets elements, so the dtypes must match (sk_view_copy_bits copies the bytes as they are)"
            ),
            _ => e.to_string(),
        };
        Failure(code, msg)
    }
}

pub(crate) fn fail(code: sk_status, msg: impl Into<String>) -> Failure {
    Failure(code, msg.into())
}

/// A NULL check for a required pointer argument.
pub(crate) fn non_null<T>(op: &str, name: &str, p: *const T) -> Result<(), Failure> {
    if p.is_null() {
        Err(fail(
            SK_ERR_NULL_POINTER,
            format!("{op}: `{name}` is NULL; it must point to a valid object"),
        ))
    } else {
        Ok(())
    }
}

/// Stores the calling thread's message. During thread teardown (a pthread key
/// destructor, an `atexit` handler) the slot may be gone: the message is dropped then,
/// never an abort.
pub(crate) fn set_last(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    let _ = LAST.try_with(|l| {
        if let Ok(mut slot) = l.try_borrow_mut() {
            *slot = c;
        }
    });
}

/// The calling thread's last message, as text.
pub(crate) fn last_message() -> String {
    LAST.try_with(|l| {
        l.try_borrow()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
    .unwrap_or_default()
}

/// Runs `f`, turning an error or a panic into a status and a message.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Failure>) -> sk_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => SK_OK,
        Ok(Err(Failure(code, msg))) => {
            set_last(&msg);
            code
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last(&format!("internal error (please report): {what}"));
            SK_ERR_INTERNAL
        }
    }
}

/// The message of the calling thread's last failed call (empty if none failed). The
/// pointer stays valid until the next failing call on this thread. Safe to call at
/// thread and process teardown (then it may answer an empty string).
#[no_mangle]
pub extern "C" fn sk_last_error() -> *const c_char {
    LAST.try_with(|l| l.try_borrow().map(|s| s.as_ptr()).unwrap_or(c"".as_ptr()))
        .unwrap_or(c"".as_ptr())
}

/// The name of a status value (`"SK_OK"`, `"SK_ERR_INVALID"`, ...), or
/// `"SK_UNKNOWN_STATUS"` for any other integer. The string is static.
#[no_mangle]
pub extern "C" fn sk_status_str(status: sk_status) -> *const c_char {
    let all = [
        (SK_OK, c"SK_OK"),
        (SK_ERR_INVALID, c"SK_ERR_INVALID"),
        (SK_ERR_NULL_POINTER, c"SK_ERR_NULL_POINTER"),
        (SK_ERR_READ_ONLY, c"SK_ERR_READ_ONLY"),
        (SK_ERR_RELEASED, c"SK_ERR_RELEASED"),
        (SK_ERR_UNSUPPORTED, c"SK_ERR_UNSUPPORTED"),
        (SK_ERR_NO_DRIVER, c"SK_ERR_NO_DRIVER"),
        (SK_ERR_NO_DEVICE, c"SK_ERR_NO_DEVICE"),
        (SK_ERR_DRIVER, c"SK_ERR_DRIVER"),
        (SK_ERR_INTERNAL, c"SK_ERR_INTERNAL"),
    ];
    all.iter()
        .find(|(s, _)| *s == status)
        .map_or(c"SK_UNKNOWN_STATUS".as_ptr(), |(_, name)| name.as_ptr())
}

/// The library's version (major, minor, patch). Any out-pointer may be NULL.
///
/// Compare with `STRIDEKIT_VERSION_MAJOR`/`MINOR`/`PATCH` to detect a header and a
/// library of different versions. Threads: safe.
///
/// # Safety
/// Each non-NULL pointer must be writable.
#[no_mangle]
pub unsafe extern "C" fn sk_version(
    major: *mut u32,
    minor: *mut u32,
    patch: *mut u32,
) -> sk_status {
    guard(|| {
        let parse = |s: &str| s.parse::<u32>().unwrap_or(0);
        let v = [
            parse(env!("CARGO_PKG_VERSION_MAJOR")),
            parse(env!("CARGO_PKG_VERSION_MINOR")),
            parse(env!("CARGO_PKG_VERSION_PATCH")),
        ];
        for (p, v) in [major, minor, patch].into_iter().zip(v) {
            // SAFETY: NULL or writable (caller).
            unsafe { write_if_given(p, v) };
        }
        Ok(())
    })
}

/// Writes `v` to the optional out-value `p` (nothing when NULL), unaligned: a C caller's
/// misaligned pointer is no undefined behaviour either.
///
/// # Safety
/// `p` is NULL or valid for writes of a `T`.
pub(crate) unsafe fn write_if_given<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and writable (caller).
        unsafe { p.write_unaligned(v) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_header_version_is_the_crate_version() {
        let v = [
            super::STRIDEKIT_VERSION_MAJOR,
            super::STRIDEKIT_VERSION_MINOR,
            super::STRIDEKIT_VERSION_PATCH,
        ]
        .map(|x| x.to_string())
        .join(".");
        assert_eq!(
            v,
            env!("CARGO_PKG_VERSION"),
            "update STRIDEKIT_VERSION_* in status.rs"
        );
    }
}
