//! Managed memory: advice, attributes, prefetch and discard (single and batched).

use cudarc::driver::sys;

/// Applies `advice` to a managed range.
///
/// # Safety
/// The driver has `cuMemAdvise_v2`; `ptr..ptr + size` is managed memory kept alive across
/// the call; a context is current.
pub(crate) unsafe fn advise(
    ptr: u64,
    size: usize,
    advice: sys::CUmem_advise,
    location: sys::CUmemLocation,
) -> sys::CUresult {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemAdvise_v2(ptr, size, advice, location) }
}

/// Reads a range attribute into `out` (as many 4-byte values as `out` holds).
///
/// # Safety
/// `ptr..ptr + size` is managed memory kept alive across the call; a context is current.
pub(crate) unsafe fn range_attribute(
    out: &mut [i32],
    attr: sys::CUmem_range_attribute,
    ptr: u64,
    size: usize,
) -> sys::CUresult {
    // SAFETY: the caller's promise; `out` holds `out.len()` i32s, the size passed.
    unsafe {
        sys::cuMemRangeGetAttribute(
            out.as_mut_ptr().cast(),
            std::mem::size_of_val(out),
            attr,
            ptr,
            size,
        )
    }
}

/// Prefetches a managed range to `location`, on `stream`.
///
/// # Safety
/// The driver has `cuMemPrefetchAsync_v2`; the range is managed memory that stays alive
/// until the prefetch is done; `stream` is live and its context current.
pub(crate) unsafe fn prefetch(
    ptr: u64,
    size: usize,
    location: sys::CUmemLocation,
    stream: sys::CUstream,
) -> sys::CUresult {
    // SAFETY: the caller's promise; flags must be 0.
    unsafe { sys::cuMemPrefetchAsync_v2(ptr, size, location, 0, stream) }
}

/// Which batched call that takes locations.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LocatedBatch {
    /// `cuMemPrefetchBatchAsync`.
    Prefetch,
    /// `cuMemDiscardAndPrefetchBatchAsync`.
    DiscardAndPrefetch,
}

/// Runs a batched prefetch (or discard-and-prefetch): range `i` is `ptrs[i]`,
/// `sizes[i]`; location `j` applies from range `first[j]` on.
///
/// # Safety
/// The driver has the entry point; `ptrs` and `sizes` have one length, `locations` and
/// `first` another; every range is managed memory alive until the work is done; `stream`
/// is live and its context current.
pub(crate) unsafe fn located_batch(
    which: LocatedBatch,
    ptrs: &mut [u64],
    sizes: &mut [usize],
    locations: &mut [sys::CUmemLocation],
    first: &mut [usize],
    stream: sys::CUstream,
) -> sys::CUresult {
    let f = match which {
        LocatedBatch::Prefetch => sys::cuMemPrefetchBatchAsync,
        LocatedBatch::DiscardAndPrefetch => sys::cuMemDiscardAndPrefetchBatchAsync,
    };
    // SAFETY: the caller's promise; the driver copies the arrays during the call; flags
    // must be 0.
    unsafe {
        f(
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            ptrs.len(),
            locations.as_mut_ptr(),
            first.as_mut_ptr(),
            locations.len(),
            0,
            stream,
        )
    }
}

/// Discards many managed ranges, on `stream`.
///
/// # Safety
/// As for [`located_batch`].
pub(crate) unsafe fn discard_batch(
    ptrs: &mut [u64],
    sizes: &mut [usize],
    stream: sys::CUstream,
) -> sys::CUresult {
    // SAFETY: the caller's promise; flags must be 0.
    unsafe {
        sys::cuMemDiscardBatchAsync(ptrs.as_mut_ptr(), sizes.as_mut_ptr(), ptrs.len(), 0, stream)
    }
}
