//! Kernel packs: the copy engine's kernels compiled ahead of time (the core crate's
//! `precompile_kernels` and `add_kernel_pack`).

use crate::status::{fail, guard, non_null, sk_status, write_if_given, SK_ERR_INVALID};
use std::ffi::{c_char, CStr};
use std::path::PathBuf;

/// The path a caller's NUL-terminated string names (its bytes as they are, on Unix).
///
/// # Safety
/// `path` is non-NULL and points to a NUL-terminated string that stays readable.
unsafe fn path_of(op: &str, path: *const c_char) -> Result<PathBuf, crate::status::Failure> {
    non_null(op, "path", path)?;
    // SAFETY: non-NULL, NUL-terminated and readable (caller).
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    if bytes.is_empty() {
        return Err(fail(SK_ERR_INVALID, format!("{op}: `path` is empty")));
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|_| fail(SK_ERR_INVALID, format!("{op}: `path` is not UTF-8")))
    }
}

/// Compiles the copy engine's common kernels for GPUs of compute capability
/// `major.minor` (9.0 for the H100) with NVRTC into the kernel pack directory `path`
/// (made with mode 0755 where missing). No GPU is needed. `kernels`, `bytes` and `failed`
/// (each may be NULL) receive the kernels written, their bytes, and the kernels NVRTC
/// refused for this architecture (those compile at run time, as without a pack).
///
/// Errors: `SK_ERR_UNSUPPORTED` for an architecture stridekit does not compile for or
/// when NVRTC cannot be loaded; `SK_ERR_INVALID` when `path` cannot be made or written.
/// Threads: safe (it compiles on as many threads as the machine has cores).
///
/// # Safety
/// `path` is a NUL-terminated string; each non-NULL out-pointer is writable.
#[no_mangle]
pub unsafe extern "C" fn sk_precompile_kernels(
    path: *const c_char,
    major: i32,
    minor: i32,
    kernels: *mut u64,
    bytes: *mut u64,
    failed: *mut u64,
) -> sk_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let dir = unsafe { path_of("sk_precompile_kernels", path) }?;
        let done = stridekit::precompile_kernels(&dir, (major, minor))?;
        let counts = [done.kernels, done.bytes, done.failed.len()];
        for (p, v) in [kernels, bytes, failed].into_iter().zip(counts) {
            // SAFETY: NULL or writable (caller).
            unsafe { write_if_given(p, u64::try_from(v).unwrap_or(u64::MAX)) };
        }
        Ok(())
    })
}

/// Adds the kernel pack directory `path` to those searched (after the disk cache and
/// the packs of `STRIDEKIT_KERNEL_PACKS`) before NVRTC compiles a kernel. A directory
/// that is missing, not the user's or root's, or writable by group or others is skipped
/// with a warning when kernels are looked for. Threads: safe.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn sk_add_kernel_pack(path: *const c_char) -> sk_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let dir = unsafe { path_of("sk_add_kernel_pack", path) }?;
        stridekit::add_kernel_pack(dir);
        Ok(())
    })
}

/// Whether a copy whose kernels are not compiled yet runs at once on the fallback kernel
/// shipped in the library while they compile on background threads (`enabled` true,
/// the default) or waits for them (false). Overrides `STRIDEKIT_BACKGROUND_COMPILE` for the
/// rest of the process. Threads: safe.
#[no_mangle]
pub extern "C" fn sk_set_background_compile(enabled: bool) {
    stridekit::set_background_compile(enabled);
}

/// Waits until every kernel being compiled on a background thread is done, so that the
/// copies after it run on their own kernels (benchmarks call it after warming up).
/// Threads: safe; returns at once when none is under way.
#[no_mangle]
pub extern "C" fn sk_wait_for_kernels() {
    stridekit::wait_for_kernels();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{SK_ERR_NULL_POINTER, SK_ERR_UNSUPPORTED, SK_OK};

    #[test]
    fn packs_are_added_and_unknown_architectures_refused() {
        let pack = c"/nonexistent/stridekit-pack";
        // SAFETY: NUL-terminated strings, writable out-values.
        unsafe {
            assert_eq!(sk_add_kernel_pack(pack.as_ptr()), SK_OK);
            assert_eq!(sk_add_kernel_pack(std::ptr::null()), SK_ERR_NULL_POINTER);
            assert_eq!(sk_add_kernel_pack(c"".as_ptr()), SK_ERR_INVALID);
            let mut n = 7u64;
            let refused = sk_precompile_kernels(
                pack.as_ptr(),
                6,
                1,
                &mut n,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_eq!(refused, SK_ERR_UNSUPPORTED);
            assert_eq!(n, 7);
            assert!(crate::status::last_message().contains("6.1"));
        }
    }

    #[test]
    fn background_compiles_can_be_waited_for_and_turned_off() {
        sk_wait_for_kernels();
        sk_set_background_compile(false);
        sk_set_background_compile(true);
        sk_wait_for_kernels();
    }
}
