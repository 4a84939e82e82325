//! `sk_view_copy`: a copy between any two views, ordered on a C stream.

use crate::handle::{get, id_of, lookup, read, write};
use crate::route::{failure_of, route, Route};
use crate::status::{
    fail, guard, non_null, sk_status, Failure, SK_ERR_INVALID, SK_ERR_READ_ONLY, SK_OK,
};
use crate::types::sk_view;
use crate::types::sk_vtable;
use dlpark::ffi::DLManagedTensorVersioned;
use std::ffi::c_void;
use stridekit::dlpack::DlpackTensor;
use stridekit::view::DynView;
use stridekit::CopyOptions;
use stridekit::StreamValue;
use stridekit::{StridedMemoryView, StridedMemoryViewMut};

/// Copies `src` into `dst` element by element (any layouts, any memory kinds). Copies
/// never reinterpret: views whose dtypes are both known and differ are refused with
/// `SK_ERR_INVALID` (use `sk_view_copy_bits` to copy the bytes as they are).
///
/// `stream` follows stridekit's one rule for stream values: `CU_STREAM_LEGACY` (1) is
/// the legacy default stream, `CU_STREAM_PER_THREAD` (2) the per-thread default stream,
/// `(uintptr_t)-1` no ordering (the copy runs on stridekit's own stream and is waited
/// for), any other value a live `CUstream`; 0 (NULL) is the legacy default stream, as in
/// CUDA. The copy
/// runs on `stream`, after the work already queued there. `blocking`: 1 waits
/// for the copy, 0 does not, -1 takes the default (copies that touch host memory wait,
/// device-to-device copies do not). Copies between pageable host views run on the CPU
/// and need no driver.
///
/// Views made by another copy of the library (another `dlopen`, a C extension linking its
/// own stridekit) are handed to that copy: both by one other copy, the whole call goes
/// there; one of each, the other copy exports its view under its own lock
/// (`sk_view_to_dlpack`), which refuses a released or stale view (`SK_ERR_RELEASED`),
/// keeps the memory alive for the call (a release on another thread meanwhile frees
/// nothing until the copy is done) and keeps a read-only view read-only whatever its
/// struct says; such a mixed copy returns once the GPU has finished it. A `vtable` that
/// is not a stridekit function table is `SK_ERR_INVALID`, read without faulting.
///
/// Ownership: borrows both views for the call. NULL: `dst` and `src` must not be NULL
/// (`SK_ERR_NULL_POINTER`). Threads: safe; `dst` is locked exclusively and `src` shared
/// for the call (views in id order, so opposite copies on two threads cannot deadlock).
///
/// # Safety
/// `dst` and `src` point to readable `sk_view` structs (or are NULL); their other fields
/// may hold anything, since views are looked up by `owner` and tables are checked; a
/// non-zero `stream` is a live stream; no other thread writes `dst`'s memory during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn sk_view_copy(
    dst: *const sk_view,
    src: *const sk_view,
    stream: usize,
    blocking: i32,
) -> sk_status {
    // SAFETY: the caller's promise, passed on.
    unsafe { copy("sk_view_copy", dst, src, stream, blocking, false) }
}

/// `sk_view_copy` of the bytes as they are, also between views of different dtypes of
/// one itemsize: an explicit reinterpretation (int32 bits into a float32 view, say).
///
/// Ownership, NULL and threads: as for `sk_view_copy`.
///
/// # Safety
/// As for `sk_view_copy`.
#[no_mangle]
pub unsafe extern "C" fn sk_view_copy_bits(
    dst: *const sk_view,
    src: *const sk_view,
    stream: usize,
    blocking: i32,
) -> sk_status {
    // SAFETY: the caller's promise, passed on.
    unsafe { copy("sk_view_copy_bits", dst, src, stream, blocking, true) }
}

/// The copy behind both entry points.
///
/// # Safety
/// As for `sk_view_copy`.
unsafe fn copy(
    op: &'static str,
    dst: *const sk_view,
    src: *const sk_view,
    stream: usize,
    blocking: i32,
    bits: bool,
) -> sk_status {
    // Views made by another copy of the library: both by one other copy, forwarded
    // whole; mixed, the other copy exports its view (see `through_table`).
    // SAFETY: the caller's promise (views made by other copies carry their tables).
    let (fd, fs) = match unsafe { (route(dst), route(src)) } {
        (Route::Refused(s), _) | (_, Route::Refused(s)) => return s,
        (d, s) => (d.table(), s.table()),
    };
    if let (Some(a), Some(b)) = (fd, fs) {
        if std::ptr::eq(a, b) {
            let f = if bits { a.copy_bits } else { a.copy };
            // SAFETY: forwarded with the caller's arguments to the copy that made both.
            return crate::route::forwarded(a, unsafe { f(dst, src, stream, blocking) });
        }
    }
    guard(|| {
        let blocking = match blocking {
            -1 => None,
            0 => Some(false),
            1 => Some(true),
            b => {
                return Err(fail(
                    SK_ERR_INVALID,
                    format!("{op}: blocking {b} is not -1 (default), 0 or 1"),
                ))
            }
        };
        if fd.is_some() || fs.is_some() {
            // SAFETY: the caller's promise.
            return unsafe { mixed_copy(op, dst, src, fd, fs, stream, blocking, bits) };
        }
        // SAFETY: the caller's promise (NULL is refused inside).
        let (did, sid) = unsafe { (id_of(op, "dst", dst)?, id_of(op, "src", src)?) };
        let d_shared = get(op, "dst", did)?;
        if did == sid {
            // The same view: every element is already where it must go.
            return match read(op, &d_shared)?.held {
                DynView::Writable(_) => Ok(()),
                DynView::ReadOnly(_) => Err(fail(
                    SK_ERR_READ_ONLY,
                    format!("{op}: `dst` is a read-only view"),
                )),
            };
        }
        let s_shared = get(op, "src", sid)?;
        // Exclusive access to the destination, shared to the source, locked in id order
        // so that two threads copying both ways cannot deadlock.
        let (mut d, s) = if did < sid {
            let d = write(op, &d_shared)?;
            (d, read(op, &s_shared)?)
        } else {
            let s = read(op, &s_shared)?;
            (write(op, &d_shared)?, s)
        };
        let DynView::Writable(out) = &mut d.held else {
            return Err(fail(
                SK_ERR_READ_ONLY,
                format!("{op}: `dst` is a read-only view"),
            ));
        };
        let stream = StreamValue::decode(stream as isize as i64)?;
        let opts = CopyOptions {
            blocking,
            allocator: None,
            bits,
            prefetch_managed: None,
        };
        let from = s.held.as_view();
        // SAFETY: a non-default stream is a live handle (caller).
        unsafe { out.copy_from_stream_value(&from, stream, &opts) }?;
        Ok(())
    })
}

/// A view of another copy of the library, as that copy exports it: a DLPack tensor made
/// by its `sk_view_to_dlpack`, under its lock. The export checks that the view is live
/// (a stale or released view is that copy's `SK_ERR_RELEASED`), keeps the memory alive
/// until the tensor's deleter runs (a release on another thread meanwhile frees nothing),
/// and carries READ_ONLY for a read-only view (whatever the caller's struct says). A view
/// whose struct says its dtype is unknown is taken without the tensor's dtype (the export
/// names one of its itemsize).
///
/// # Safety
/// `view` points to a readable `sk_view` made by `table`'s copy.
unsafe fn through_table(
    op: &str,
    table: &sk_vtable,
    view: *const sk_view,
) -> Result<DynView<'static>, Failure> {
    let mut raw: *mut c_void = std::ptr::null_mut();
    // SAFETY: the other copy's entry point, with a view it made and a writable out-pointer.
    let status = unsafe { (table.to_dlpack)(view, true, &mut raw) };
    if status != SK_OK {
        return Err(failure_of(table, status));
    }
    // SAFETY: on success the other copy wrote a live DLPack 1.x tensor that we now own.
    let tensor = unsafe { DlpackTensor::from_raw_versioned(raw as *mut DLManagedTensorVersioned) }
        .map_err(|e| fail(SK_ERR_INVALID, format!("{op}: {e}")))?;
    // SAFETY: readable (caller).
    let unknown = unsafe { (*view).dtype.bits } == 0;
    let read_only = tensor.flags().contains(dlpark::DlpackFlags::READ_ONLY);
    Ok(if read_only {
        // SAFETY: the other copy's export vouches for the memory until its deleter runs.
        let v = unsafe { StridedMemoryView::from_dlpack(tensor) }?;
        DynView::ReadOnly(if unknown { v.without_dtype() } else { v })
    } else {
        // SAFETY: as above; a writable view's export is the one writer for the call
        // (the caller's promise that no other thread uses `dst`).
        let v = unsafe { StridedMemoryViewMut::from_dlpack(tensor) }?;
        DynView::Writable(if unknown { v.without_dtype() } else { v })
    })
}

/// A copy between a view of this copy and a view of another (or views of two others):
/// each side of this copy under its lock, each foreign side exported by its own copy
/// ([`through_table`]). The exports' memory is released when the copy is done: a
/// mixed copy returns once the GPU has finished it.
///
/// # Safety
/// As for `sk_view_copy`.
#[allow(clippy::too_many_arguments)]
unsafe fn mixed_copy(
    op: &str,
    dst: *const sk_view,
    src: *const sk_view,
    dst_table: Option<&'static sk_vtable>,
    src_table: Option<&'static sk_vtable>,
    stream: usize,
    blocking: Option<bool>,
    bits: bool,
) -> Result<(), Failure> {
    let stream = StreamValue::decode(stream as isize as i64)?;
    let opts = CopyOptions {
        blocking,
        allocator: None,
        bits,
        prefetch_managed: None,
    };
    non_null(op, "dst", dst)?;
    non_null(op, "src", src)?;
    let (src_dyn, src_shared, src_guard);
    let from = if let Some(t) = src_table {
        // SAFETY: the caller's promise.
        src_dyn = unsafe { through_table(op, t, src) }?;
        src_dyn.as_view()
    } else {
        // SAFETY: the caller's promise.
        src_shared = unsafe { lookup(op, "src", src) }?;
        src_guard = read(op, &src_shared)?;
        src_guard.held.as_view()
    };
    let (mut dst_dyn, dst_shared, mut dst_guard);
    let held: &mut DynView<'static> = if let Some(t) = dst_table {
        // SAFETY: the caller's promise.
        dst_dyn = unsafe { through_table(op, t, dst) }?;
        &mut dst_dyn
    } else {
        // SAFETY: the caller's promise.
        dst_shared = unsafe { lookup(op, "dst", dst) }?;
        dst_guard = write(op, &dst_shared)?;
        &mut dst_guard.held
    };
    let DynView::Writable(out) = held else {
        return Err(fail(
            SK_ERR_READ_ONLY,
            format!("{op}: `dst` is a read-only view"),
        ));
    };
    // SAFETY: a stream handle is live (caller).
    unsafe { out.copy_from_stream_value(&from, stream, &opts) }?;
    Ok(())
}
