//! `sk_tensor_map_tiled`: a validated TMA descriptor of a view, as 128 bytes.

use crate::handle::{lookup, read};
use crate::status::{fail, guard, non_null, sk_status, SK_ERR_INVALID};
use crate::types::{sk_tma_options, sk_view};
use stridekit::tma::{
    Interleave, L2Promotion, OobFill, Swizzle, TensorMapDescriptor, TiledOptions,
};

/// Encodes a tiled TMA descriptor of `view` into the 128 bytes at `out` (a `CUtensorMap`;
/// copy it into 64-byte aligned storage to pass it to a kernel). `rank` must be the
/// view's `ndim`; `box_dim` holds `rank` box extents in the view's (row-major) order.
/// Every rule of `cuTensorMapEncodeTiled` is checked first, with a message naming the
/// value and the rule.
///
/// Ownership: borrows the view for the call; `out` receives a copy (the descriptor holds
/// the view's address, so keep the view alive while kernels use it). NULL: `view`,
/// `box_dim` and `out` must not be NULL; `options` may be. Threads: safe (shared lock).
///
/// # Safety
/// `view` is a live view (or NULL); `box_dim` holds `rank` values; `options` is NULL or
/// readable, with `rank` element strides when that pointer is not NULL; `out` has 128
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sk_tensor_map_tiled(
    view: *const sk_view,
    rank: i32,
    box_dim: *const u32,
    options: *const sk_tma_options,
    out: *mut u8,
) -> sk_status {
    const OP: &str = "sk_tensor_map_tiled";
    // SAFETY: the caller's promise (a view made by another copy carries its table).
    match unsafe { crate::route::route(view) } {
        crate::route::Route::There(vt) => {
            // SAFETY: forwarded with the caller's arguments to the copy that made the view.
            let s = unsafe { (vt.tensor_map_tiled)(view, rank, box_dim, options, out) };
            return crate::route::forwarded(vt, s);
        }
        crate::route::Route::Refused(status) => return status,
        crate::route::Route::Here => {}
    }
    guard(|| {
        non_null(OP, "out", out)?;
        non_null(OP, "box_dim", box_dim)?;
        // SAFETY: the caller's promise.
        let shared = unsafe { lookup(OP, "view", view) }?;
        let h = read(OP, &shared)?;
        let v = h.held.as_view();
        let nd = v.layout().ndim();
        if rank < 1 || rank as usize != nd {
            return Err(fail(
                SK_ERR_INVALID,
                format!("{OP}: rank {rank} differs from the view's ndim {nd}; give one box extent per axis"),
            ));
        }
        // SAFETY: `rank` readable values (caller).
        let boxes = unsafe { std::slice::from_raw_parts(box_dim, nd) };
        let mut o = TiledOptions::new(boxes);
        if !options.is_null() {
            // SAFETY: non-NULL and readable (caller).
            let opt = unsafe { *options };
            let bytes = |v: i32| u32::try_from(v).unwrap_or(u32::MAX);
            o = o
                .swizzle(Swizzle::from_bytes(bytes(opt.swizzle))?)
                .interleave(Interleave::from_bytes(bytes(opt.interleave))?)
                .l2_promotion(L2Promotion::from_bytes(bytes(opt.l2_promotion))?)
                .oob_fill(match opt.oob_fill_nan {
                    0 => OobFill::Zero,
                    1 => OobFill::Nan,
                    v => {
                        return Err(fail(
                            SK_ERR_INVALID,
                            format!("{OP}: oob_fill_nan {v} is not 0 (zeros) or 1 (NaN)"),
                        ))
                    }
                });
            if !opt.element_strides.is_null() {
                // SAFETY: `rank` readable values (caller).
                let es = unsafe { std::slice::from_raw_parts(opt.element_strides, nd) };
                o = o.element_strides(es);
            }
        }
        let map = TensorMapDescriptor::tiled(&v, &o)?;
        let raw = map.as_raw();
        let bytes: &[u8] = bytemuck_bytes(raw);
        // SAFETY: `out` has 128 writable bytes (caller); `bytes` is the 128-byte map.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
        Ok(())
    })
}

/// The bytes of a `CUtensorMap`.
fn bytemuck_bytes(m: &stridekit::cudarc::driver::sys::CUtensorMap) -> &[u8] {
    // SAFETY: CUtensorMap is plain old data of 128 bytes (an array of u64), fully initialised.
    unsafe { std::slice::from_raw_parts(m as *const _ as *const u8, std::mem::size_of_val(m)) }
}
