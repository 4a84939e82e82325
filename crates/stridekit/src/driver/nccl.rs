//! NCCL, loaded at run time: the only module that calls `cudarc::nccl`. Behind the
//! `nccl` feature.
//!
//! The library is looked for once ([`ensure`]): missing, too old, or lacking one of the
//! entry points below is [`Error::Unsupported`], never a panic (cudarc panics when a
//! library or symbol it is asked to call is missing, so nothing here calls NCCL before
//! that check). Each call returns NCCL's status as [`Error::Nccl`] with NCCL's own words.

use crate::error::{Error, Result};
use cudarc::nccl::sys;
use std::ffi::CStr;
use std::sync::OnceLock;

pub(crate) use sys::ncclComm_t as Comm;

/// The oldest NCCL stridekit calls (2.18: every entry point below, and sends to oneself).
pub(crate) const MIN_VERSION: i32 = 21800;

/// Every NCCL entry point stridekit calls; all are looked up before the first call.
const ENTRY_POINTS: &[&str] = &[
    "ncclGetVersion",
    "ncclGetUniqueId",
    "ncclCommInitRank",
    "ncclCommAbort",
    "ncclCommDestroy",
    "ncclCommFinalize",
    "ncclCommGetAsyncError",
    "ncclGetErrorString",
    "ncclGetLastError",
    "ncclGroupStart",
    "ncclGroupEnd",
    "ncclSend",
    "ncclRecv",
];

/// The size of an NCCL unique id in bytes.
pub(crate) const UNIQUE_ID_BYTES: usize = 128;

fn state() -> &'static Result<i32, String> {
    static STATE: OnceLock<Result<i32, String>> = OnceLock::new();
    STATE.get_or_init(|| {
        // SAFETY: only tries to dlopen the library; no NCCL function is called.
        if !unsafe { sys::is_culib_present() } {
            return Err("libnccl could not be loaded (cudarc looks for libnccl.so and libnccl.so.<CUDA major> on the loader path); install NCCL (`pip install nvidia-nccl-cu13`, or the system package) and put the folder holding libnccl.so on LD_LIBRARY_PATH".into());
        }
        for name in ENTRY_POINTS {
            // SAFETY: the library is present (above); a symbol is only looked up.
            let found = unsafe {
                sys::culib()
                    .get::<unsafe extern "C" fn()>(name.as_bytes())
                    .is_ok()
            };
            if !found {
                return Err(format!("the NCCL library lacks {name}; NCCL 2.18 or newer is needed"));
            }
        }
        let mut v = 0;
        // SAFETY: ncclGetVersion is present (above); `v` is a valid out-pointer.
        let r = unsafe { sys::ncclGetVersion(&mut v) };
        if r != sys::ncclResult_t::ncclSuccess {
            return Err(format!("ncclGetVersion failed: {}", error_string(r)));
        }
        if v < MIN_VERSION {
            return Err(format!(
                "NCCL {} is loaded; stridekit needs 2.18 or newer",
                version_text(v)
            ));
        }
        Ok(v)
    })
}

/// NCCL's version as `major.minor.patch` (codes since 2.9: major*10000 + minor*100 + patch).
pub(crate) fn version_text(v: i32) -> String {
    format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
}

/// The loaded NCCL's version code, or [`Error::Unsupported`] saying why NCCL is unusable.
pub(crate) fn ensure(op: &'static str) -> Result<i32> {
    state()
        .clone()
        .map_err(|reason| Error::Unsupported { op, reason })
}

fn error_string(r: sys::ncclResult_t) -> String {
    // SAFETY: only called once the library is loaded with this entry point (state());
    // NCCL returns a static string.
    let p = unsafe { sys::ncclGetErrorString(r) };
    if p.is_null() {
        return format!("{r:?}");
    }
    // SAFETY: a NUL-terminated static string from NCCL.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Converts an NCCL status into the crate's error, with NCCL's last message for `comm`.
fn check(op: &'static str, call: &'static str, comm: Comm, r: sys::ncclResult_t) -> Result<()> {
    if matches!(
        r,
        sys::ncclResult_t::ncclSuccess | sys::ncclResult_t::ncclInProgress
    ) {
        return Ok(());
    }
    // SAFETY: ncclGetLastError takes a communicator or null; the string is NCCL's.
    let last = unsafe { sys::ncclGetLastError(comm) };
    let detail = if last.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated string owned by NCCL, copied at once.
        unsafe { CStr::from_ptr(last) }
            .to_string_lossy()
            .into_owned()
    };
    Err(Error::Nccl {
        op,
        call,
        code: r as u32,
        message: if detail.is_empty() {
            error_string(r)
        } else {
            format!("{} ({detail})", error_string(r))
        },
    })
}

/// A new unique id (rank 0 makes it; every rank initialises with the same bytes).
pub(crate) fn unique_id(op: &'static str) -> Result<[u8; UNIQUE_ID_BYTES]> {
    ensure(op)?;
    let mut id = sys::ncclUniqueId { internal: [0; 128] };
    // SAFETY: NCCL is loaded with the entry point (ensure); a valid out-pointer.
    check(op, "ncclGetUniqueId", std::ptr::null_mut(), unsafe {
        sys::ncclGetUniqueId(&mut id)
    })?;
    Ok(id.internal.map(|c| c as u8))
}

/// Joins the communicator of `nranks` ranks named by `id` as `rank`, on the device whose
/// context is current on this thread. Blocks until every rank has joined.
///
/// # Safety
/// The device's context is current on the calling thread.
pub(crate) unsafe fn init_rank(
    op: &'static str,
    nranks: i32,
    id: &[u8; UNIQUE_ID_BYTES],
    rank: i32,
) -> Result<Comm> {
    ensure(op)?;
    let id = sys::ncclUniqueId {
        internal: id.map(|b| b as std::ffi::c_char),
    };
    let mut comm: Comm = std::ptr::null_mut();
    // SAFETY: NCCL is loaded (ensure); valid out-pointer; the caller's promise.
    check(op, "ncclCommInitRank", std::ptr::null_mut(), unsafe {
        sys::ncclCommInitRank(&mut comm, nranks, id, rank)
    })?;
    if comm.is_null() {
        return Err(Error::Internal {
            op,
            what: "ncclCommInitRank succeeded without a communicator".into(),
        });
    }
    Ok(comm)
}

/// Starts a group of NCCL calls (on this thread).
pub(crate) fn group_start(op: &'static str) -> Result<()> {
    ensure(op)?;
    // SAFETY: NCCL is loaded (ensure); no arguments.
    check(op, "ncclGroupStart", std::ptr::null_mut(), unsafe {
        sys::ncclGroupStart()
    })
}

/// Ends a group of NCCL calls: launches what it holds.
pub(crate) fn group_end(op: &'static str, comm: Comm) -> Result<()> {
    ensure(op)?;
    // SAFETY: NCCL is loaded (ensure); no arguments.
    check(op, "ncclGroupEnd", comm, unsafe { sys::ncclGroupEnd() })
}

/// Which way a point-to-point transfer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// `ncclSend` from the span.
    Send,
    /// `ncclRecv` into the span.
    Recv,
}

/// Queues a send of `bytes` bytes at `ptr` to `peer` (or a receive into it from `peer`)
/// on `stream`.
///
/// # Safety
/// `comm` is live; `ptr..ptr + bytes` is device memory of the communicator's device that
/// stays valid until the work queued on `stream` is done, unwritten meanwhile for a send
/// and neither read nor written by anything else for a receive; `stream` is a live
/// stream of that device.
pub(crate) unsafe fn transfer(
    op: &'static str,
    comm: Comm,
    direction: Direction,
    ptr: u64,
    bytes: usize,
    peer: i32,
    stream: cudarc::driver::sys::CUstream,
) -> Result<()> {
    let u8s = sys::ncclDataType_t::ncclUint8;
    // SAFETY: the caller's promise; NCCL was checked when `comm` was made.
    let (call, status) = unsafe {
        match direction {
            Direction::Send => (
                "ncclSend",
                sys::ncclSend(ptr as *const _, bytes, u8s, peer, comm, stream.cast()),
            ),
            Direction::Recv => (
                "ncclRecv",
                sys::ncclRecv(ptr as *mut _, bytes, u8s, peer, comm, stream.cast()),
            ),
        }
    };
    check(op, call, comm, status)
}

/// The communicator's asynchronous error, if any (a failed or aborted transfer).
///
/// # Safety
/// `comm` is live.
pub(crate) unsafe fn async_error(op: &'static str, comm: Comm) -> Result<()> {
    let mut r = sys::ncclResult_t::ncclSuccess;
    // SAFETY: the caller's promise; valid out-pointer.
    check(op, "ncclCommGetAsyncError", comm, unsafe {
        sys::ncclCommGetAsyncError(comm, &mut r)
    })?;
    check(op, "an earlier transfer", comm, r)
}

/// Aborts the communicator: pending work is dropped and the handle freed.
///
/// # Safety
/// `comm` is live and used by nothing afterwards.
pub(crate) unsafe fn abort(op: &'static str, comm: Comm) -> Result<()> {
    // SAFETY: the caller's promise.
    check(op, "ncclCommAbort", std::ptr::null_mut(), unsafe {
        sys::ncclCommAbort(comm)
    })
}

/// Finalizes (waits for the communicator's work) and destroys it.
///
/// # Safety
/// `comm` is live and used by nothing afterwards.
pub(crate) unsafe fn destroy(op: &'static str, comm: Comm) -> Result<()> {
    // SAFETY: the caller's promise.
    let fin = check(op, "ncclCommFinalize", comm, unsafe {
        sys::ncclCommFinalize(comm)
    });
    // SAFETY: the caller's promise; destroyed whether or not finalize succeeded.
    let des = check(op, "ncclCommDestroy", std::ptr::null_mut(), unsafe {
        sys::ncclCommDestroy(comm)
    });
    fin.and(des)
}
