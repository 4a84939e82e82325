//! `sk_view_copy`: a copy between any two views, ordered on a C stream.

use crate::handle::{get, id_of, lookup, read, write};
use crate::status::{fail, guard, non_null, sk_status, Failure, SK_ERR_INVALID, SK_ERR_READ_ONLY};
use crate::view::sk_view;
use stridekit::view::DynView;
use stridekit::CopyOptions;
use stridekit::StreamValue;
use stridekit::{StridedLayout, StridedMemoryView, StridedMemoryViewMut};

/// Copies `src` into `dst` element by element (any layouts, any memory kinds). Copies
/// never reinterpret: views whose dtypes are both known and differ are refused with
/// `SK_ERR_INVALID` (use `sk_view_copy_bits` to copy the bytes as they are).
///
/// `stream` follows stridekit's one rule for stream values: `CU_STREAM_LEGACY` (1) is
/// the legacy default stream, `CU_STREAM_PER_THREAD` (2) the per-thread default stream,
/// `(uintptr_t)-1` no ordering (the copy runs on stridekit's own stream and is waited
/// for), any other value a live `CUstream`; 0 (NULL) is refused as ambiguous. The copy
/// runs on `stream`, after the work already queued there. `blocking`: 1 waits
/// for the copy, 0 does not, -1 takes the default (copies that touch host memory wait,
/// device-to-device copies do not). Copies between pageable host views run on the CPU
/// and need no driver.
///
/// Ownership: borrows both views for the call. NULL: `dst` and `src` must not be NULL
/// (`SK_ERR_NULL_POINTER`). Threads: safe; `dst` is locked exclusively and `src` shared
/// for the call (views in id order, so opposite copies on two threads cannot deadlock).
///
/// # Safety
/// `dst` and `src` are live views (or NULL); a non-zero `stream` is a live stream; no
/// other thread uses `dst` during the call.
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
    // whole; mixed, the other copy's view is read through its plain fields below.
    // SAFETY: the caller's promise (views made by other copies carry their tables).
    let (fd, fs) = unsafe { (crate::vtable::foreign(dst), crate::vtable::foreign(src)) };
    if let (Some(a), Some(b)) = (fd, fs) {
        if std::ptr::eq(a, b) {
            let f = if bits { a.copy_bits } else { a.copy };
            // SAFETY: forwarded with the caller's arguments to the copy that made both.
            return crate::vtable::forwarded(a, unsafe { f(dst, src, stream, blocking) });
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
            // SAFETY: the caller's promise; a view of another copy stays live for the call.
            return unsafe {
                mixed_copy(
                    op,
                    dst,
                    src,
                    fd.is_some(),
                    fs.is_some(),
                    stream,
                    blocking,
                    bits,
                )
            };
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
        };
        let from = s.held.as_view();
        // SAFETY: a non-default stream is a live handle (caller).
        unsafe { out.copy_from_stream_value(&from, stream, &opts) }?;
        Ok(())
    })
}

/// A view of another copy of the library, rebuilt here from its plain fields (pointer,
/// shape, strides, itemsize, dtype, read-only): its copy keeps the memory alive.
///
/// # Safety
/// `view` is a live view of another copy, kept live for as long as the result is used.
unsafe fn from_fields(op: &str, view: *const sk_view) -> Result<DynView<'static>, Failure> {
    // SAFETY: readable (caller).
    let v = unsafe { &*view };
    let n = usize::try_from(v.ndim)
        .ok()
        .filter(|&n| n <= 64)
        .ok_or_else(|| {
            fail(
                SK_ERR_INVALID,
                format!("{op}: a foreign view has ndim {}", v.ndim),
            )
        })?;
    let (shape, strides) = if n == 0 {
        (Vec::new(), Vec::new())
    } else {
        non_null(op, "shape", v.shape)?;
        non_null(op, "strides", v.strides)?;
        // SAFETY: a live view's arrays hold `ndim` values (the other copy made them).
        unsafe {
            (
                std::slice::from_raw_parts(v.shape, n).to_vec(),
                std::slice::from_raw_parts(v.strides, n).to_vec(),
            )
        }
    };
    let layout = StridedLayout::new(&shape, &strides, v.itemsize.max(0) as usize)
        .map_err(|e| fail(SK_ERR_INVALID, format!("{op}: {e}")))?;
    let dtype = if v.dtype.bits == 0 {
        None
    } else {
        stridekit::dlpack::dtype_from_dlpack("copy", v.dtype)?.0
    };
    Ok(if v.readonly {
        // SAFETY: the other copy's live view vouches for the memory (caller).
        DynView::ReadOnly(unsafe {
            StridedMemoryView::from_foreign_span(v.ptr as u64, &layout, dtype, ())
        }?)
    } else {
        // SAFETY: as above; the caller passes it as the one writer for the call.
        DynView::Writable(unsafe {
            StridedMemoryViewMut::from_foreign_span_mut(v.ptr as u64, &layout, dtype, ())
        }?)
    })
}

/// A copy between a view of this copy and a view of another (or views of two others):
/// each side of this copy under its lock, each foreign side rebuilt from its fields.
///
/// # Safety
/// As for `sk_view_copy`; the other copies' views stay live for the call.
#[allow(clippy::too_many_arguments)]
unsafe fn mixed_copy(
    op: &str,
    dst: *const sk_view,
    src: *const sk_view,
    dst_foreign: bool,
    src_foreign: bool,
    stream: usize,
    blocking: Option<bool>,
    bits: bool,
) -> Result<(), Failure> {
    let stream = StreamValue::decode(stream as isize as i64)?;
    let opts = CopyOptions {
        blocking,
        allocator: None,
        bits,
    };
    let (src_dyn, src_shared, src_guard);
    let from = if src_foreign {
        // SAFETY: the caller's promise.
        src_dyn = unsafe { from_fields(op, src) }?;
        src_dyn.as_view()
    } else {
        // SAFETY: the caller's promise.
        src_shared = unsafe { lookup(op, "src", src) }?;
        src_guard = read(op, &src_shared)?;
        src_guard.held.as_view()
    };
    let (mut dst_dyn, dst_shared, mut dst_guard);
    let held: &mut DynView<'static> = if dst_foreign {
        // SAFETY: the caller's promise.
        dst_dyn = unsafe { from_fields(op, dst) }?;
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
