//! Acquiring views: from a pointer, from DLPack, from a Rust view (for Rust fronts).

use crate::handle::{register, Handle};
use crate::status::{fail, guard, non_null, sk_status, Failure, SK_ERR_INVALID};
use crate::types::sk_view;
use dlpark::ffi::{DLDataType, DLDataTypeCode, DLManagedTensor, DLManagedTensorVersioned};
use std::ffi::c_void;
use stridekit::dlpack::{dtype_from_dlpack, dtype_to_dlpack, DlpackTensor};
use stridekit::view::DynView;
use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

const UNKNOWN_DTYPE: DLDataType = DLDataType {
    code: DLDataTypeCode(0),
    bits: 0,
    lanes: 0,
};

/// Registers `held` and writes its fields into `out`.
fn publish(op: &str, held: DynView<'static>, out: *mut sk_view) -> Result<(), Failure> {
    let v = held.as_view();
    let l = v.layout();
    let first = v
        .ptr()
        .wrapping_add_signed(l.slice_offset() * l.itemsize() as i64);
    let (ndim, itemsize) = (l.ndim() as i32, l.itemsize() as i64);
    let dtype = v.dtype().map_or(UNKNOWN_DTYPE, dtype_to_dlpack);
    let (device_id, device_accessible) = (v.device_id(), v.is_device_accessible());
    let readonly = matches!(held, DynView::ReadOnly(_));
    let (shape, strides) = (l.shape().to_vec(), l.strides().to_vec());
    drop(v);
    // The arrays' buffers do not move when the Vecs move into the handle, and the handle
    // never changes them: the pointers stay valid until the view is dropped.
    let (shape_ptr, strides_ptr) = (shape.as_ptr(), strides.as_ptr());
    let id = register(
        op,
        Handle {
            held,
            shape,
            strides,
        },
    )?;
    let (shape, strides) = (shape_ptr, strides_ptr);
    let view = sk_view {
        ptr: first as usize,
        ndim,
        shape,
        strides,
        itemsize,
        dtype,
        device_id,
        device_accessible,
        readonly,
        owner: id as usize as *mut c_void,
        vtable: &crate::vtable::VTABLE,
    };
    crate::route::note_own_table(&crate::vtable::VTABLE);
    // SAFETY: `out` is non-NULL and writable (checked by the callers).
    unsafe { out.write(view) };
    Ok(())
}

/// An `sk_view` of a Rust view, for Rust fronts that hand the C view out (the Python
/// package's `as_c_view`). Release it with `sk_view_release`.
pub fn sk_view_of(view: DynView<'static>) -> Result<sk_view, String> {
    let mut out = std::mem::MaybeUninit::<sk_view>::uninit();
    publish("sk_view_of", view, out.as_mut_ptr()).map_err(|Failure(_, msg)| msg)?;
    // SAFETY: `publish` wrote the whole struct on success.
    Ok(unsafe { out.assume_init() })
}

/// The release callback of a foreign owner, run once when the last view goes.
struct Owner {
    ctx: *mut c_void,
    release: Option<unsafe extern "C" fn(*mut c_void)>,
}

// SAFETY: the C caller of `sk_view_from_ptr` promises that `release(ctx)` may run on any
// thread; nothing else touches `ctx`.
unsafe impl Send for Owner {}
// SAFETY: as above; `Owner` is never read, only dropped.
unsafe impl Sync for Owner {}

impl Drop for Owner {
    fn drop(&mut self) {
        if let Some(f) = self.release {
            // SAFETY: the caller's callback, run exactly once with its own context.
            unsafe { f(self.ctx) }
        }
    }
}

/// Acquires a view of memory someone else owns.
///
/// `ptr` is the address of element (0, ..., 0); `strides` (in elements) may be NULL for
/// C-contiguous; `dtype` with code 0, bits 0, lanes 0 means unknown (otherwise its size
/// must be `itemsize`). The memory's kind and device are asked of the driver. When the
/// view is released, `release(owner)` is called once (if `release` is not NULL); on
/// failure it is not called and the caller keeps the owner. `release` may run on any
/// thread and must not unwind or throw (a C++ exception escaping it ends the process).
/// Refused: a dtype stridekit does not know (other than the "unknown" zeros), a writable
/// view whose layout maps several elements to one address, and a layout whose elements
/// reach below address 0 or past the end of the address space.
///
/// Ownership: on success the view holds `owner` until it is released. NULL: `shape`
/// may be NULL only when `ndim` is 0, `strides` may be NULL (C order), `owner` and
/// `release` may be NULL, `out` must not be. Threads: safe.
///
/// # Safety
/// `shape` (and `strides` if not NULL) point to `ndim` readable values; `out` is
/// writable; the memory the layout reaches stays valid until `release` is called, and
/// nobody else writes it (or, for a writable view, touches it) while the view is live.
#[no_mangle]
pub unsafe extern "C" fn sk_view_from_ptr(
    ptr: usize,
    ndim: i32,
    shape: *const i64,
    strides: *const i64,
    itemsize: i64,
    dtype: DLDataType,
    readonly: bool,
    owner: *mut c_void,
    release: Option<unsafe extern "C" fn(*mut c_void)>,
    out: *mut sk_view,
) -> sk_status {
    const OP: &str = "sk_view_from_ptr";
    guard(|| {
        non_null(OP, "out", out)?;
        if !(0..=64).contains(&ndim) {
            return Err(fail(
                SK_ERR_INVALID,
                format!("{OP}: ndim {ndim} is out of range; it must be in [0, 64]"),
            ));
        }
        if itemsize <= 0 {
            return Err(fail(
                SK_ERR_INVALID,
                format!("{OP}: itemsize {itemsize} must be positive"),
            ));
        }
        let n = ndim as usize;
        if n > 0 {
            non_null(OP, "shape", shape)?;
        }
        let shape_v = if n == 0 {
            Vec::new()
        } else {
            // SAFETY: `n` readable values (caller), checked non-NULL above.
            unsafe { std::slice::from_raw_parts(shape, n) }.to_vec()
        };
        let layout = if strides.is_null() {
            StridedLayout::dense(&shape_v, itemsize as usize, Order::C)
        } else {
            // SAFETY: as above, for strides.
            let s = unsafe { std::slice::from_raw_parts(strides, n) };
            StridedLayout::new(&shape_v, s, itemsize as usize)
        }
        .map_err(|e| fail(SK_ERR_INVALID, format!("{OP}: {e}")))?;
        let dtype = if dtype == UNKNOWN_DTYPE {
            None
        } else {
            let (d, size) = dtype_from_dlpack("sk_view_from_ptr", dtype)?;
            if d.is_none() {
                return Err(fail(
                    SK_ERR_INVALID,
                    format!("{OP}: dtype (code {}, bits {}, lanes {}) is not one stridekit knows; pass code 0, bits 0, lanes 0 for a view without a dtype", dtype.code.0, dtype.bits, dtype.lanes),
                ));
            }
            if size != itemsize as usize {
                return Err(fail(
                    SK_ERR_INVALID,
                    format!("{OP}: dtype (code {}, bits {}) has {size} bytes but itemsize is {itemsize}; they must match", dtype.code.0, dtype.bits),
                ));
            }
            d
        };
        if !readonly && !layout.is_unique() {
            return Err(fail(
                SK_ERR_INVALID,
                format!("{OP}: layout {layout} maps several elements to one address; a writable view needs one address per element (make it read-only)"),
            ));
        }
        let keep = Owner {
            ctx: owner,
            release,
        };
        let held = if readonly {
            // SAFETY: the caller's promise (see the function's Safety section).
            DynView::ReadOnly(
                unsafe { StridedMemoryView::from_foreign_span(ptr as u64, &layout, dtype, keep) }
                    .map_err(Failure::from)?,
            )
        } else {
            // SAFETY: as above.
            DynView::Writable(unsafe {
                StridedMemoryViewMut::from_foreign_span_mut(ptr as u64, &layout, dtype, keep)
            }?)
        };
        publish(OP, held, out)
    })
}

/// Acquires a view of a DLPack tensor, taking it over (its deleter runs when the view is
/// released, or at once if this call fails). `versioned` says whether `tensor` is a
/// `DLManagedTensorVersioned*` (DLPack 1.x) or a legacy `DLManagedTensor*`. A tensor
/// flagged READ_ONLY gives a read-only view.
///
/// Ownership: takes the tensor over on success and on failure (its deleter runs once, when
/// the view is released, or at once on failure). NULL: `tensor` and `out` must not be
/// NULL (`SK_ERR_NULL_POINTER`). Threads: safe.
///
/// # Safety
/// `tensor` is NULL or a live managed tensor of the stated ABI that the caller owns;
/// nobody else writes its memory while the view is live; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn sk_view_from_dlpack(
    tensor: *mut c_void,
    versioned: bool,
    out: *mut sk_view,
) -> sk_status {
    const OP: &str = "sk_view_from_dlpack";
    guard(|| {
        if out.is_null() && !tensor.is_null() {
            // Take it over anyway, so that it is released as the contract says.
            // SAFETY: the caller's promise.
            let _ = unsafe { take(tensor, versioned) };
        }
        non_null(OP, "out", out)?;
        non_null(OP, "tensor", tensor as *const c_void)?;
        // SAFETY: the caller's promise.
        let t = unsafe { take(tensor, versioned) }?;
        // SAFETY: the producer vouches for the memory (the caller's promise); a writable
        // tensor's memory is the consumer's to write.
        let held = unsafe { DynView::from_dlpack(t) }?;
        publish(OP, held, out)
    })
}

/// # Safety
/// As for `sk_view_from_dlpack`.
unsafe fn take(tensor: *mut c_void, versioned: bool) -> Result<DlpackTensor, Failure> {
    Ok(if versioned {
        // SAFETY: the caller's promise.
        unsafe { DlpackTensor::from_raw_versioned(tensor as *mut DLManagedTensorVersioned) }?
    } else {
        // SAFETY: the caller's promise.
        unsafe { DlpackTensor::from_raw_legacy(tensor as *mut DLManagedTensor) }?
    })
}
