//! `sk_view_copy`: a copy between any two views, ordered on a C stream.

use crate::handle::{get, id_of, read, write};
use crate::status::{fail, guard, sk_status, SK_ERR_INVALID, SK_ERR_READ_ONLY};
use crate::view::sk_view;
use stridekit::view::DynView;
use stridekit::CopyOptions;
use stridekit::StreamValue;

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
