//! Managed memory moved to the copying GPU before the copy's kernel touches it.
//!
//! A kernel that reads managed pages the CPU has just written pulls them over one page
//! fault at a time; one prefetch (`cuMemPrefetchAsync`) moves them in bulk first. The
//! engine prefetches each managed side of a device copy whose elements span at least
//! [`AUTO_MIN_BYTES`], to the device of the copy's stream, on that stream, inside the
//! copy's recorded use. `CopyOptions::prefetch_managed` overrides the rule (`Some(true)`:
//! always, and an error where the device cannot; `Some(false)`: never). Where the driver
//! or the device cannot prefetch (no `cuMemPrefetchAsync_v2`, no concurrent managed
//! access), the automatic rule does nothing. The threshold and the cost of prefetching
//! pages already on the GPU are measured in BENCHMARKS.md (`managed_copy_bench`).

use super::{CopyOptions, Operand};
use crate::driver::types::{CUdevice_attribute, CUmemLocation, CUmemLocationType};
use crate::driver::{check, has_symbol};
use crate::error::Result;
use crate::memory::MemoryKind;
use crate::runtime::Runtime;
use cudarc::driver::CudaStream;

/// The smallest span of a managed side that the engine prefetches unasked (64 KiB).
pub const AUTO_MIN_BYTES: u64 = 64 << 10;

/// Prefetches the managed sides of a device copy on `stream`, as the module docs say.
pub(crate) fn managed_sides(
    dst: &Operand<'_>,
    src: &Operand<'_>,
    stream: &CudaStream,
    opts: &CopyOptions<'_>,
) -> Result<()> {
    const OP: &str = "copy (managed prefetch)";
    if opts.prefetch_managed == Some(false) {
        return Ok(());
    }
    let forced = opts.prefetch_managed == Some(true);
    let mut able: Option<bool> = None;
    for o in [src, dst] {
        if o.kind() != MemoryKind::Managed {
            continue;
        }
        let (lo, hi) = o.byte_span();
        let bytes = hi.saturating_sub(lo);
        if bytes == 0 || (!forced && bytes < AUTO_MIN_BYTES) {
            continue;
        }
        let ordinal = stream.context().ordinal();
        let can = match able {
            Some(c) => c,
            None => {
                let c = has_symbol("cuMemPrefetchAsync_v2")
                    && Runtime::get(OP, ordinal)?.attribute(
                        OP,
                        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
                    )? != 0;
                able = Some(c);
                c
            }
        };
        if !can {
            if forced {
                return Err(crate::Error::Unsupported {
                    op: OP,
                    reason: format!("device {ordinal} cannot prefetch managed memory (no concurrent managed access, or a driver without cuMemPrefetchAsync_v2); copy with prefetch_managed unset"),
                });
            }
            continue;
        }
        let location = CUmemLocation {
            type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal as i32,
        };
        crate::driver::bind_stream(OP, stream)?;
        // SAFETY: the entry point exists (checked); [lo, hi) holds the view's elements,
        // managed memory the view keeps alive while the copy's use (recorded on it) runs;
        // the stream is live and its context current (bound above).
        check(OP, "cuMemPrefetchAsync_v2", unsafe {
            crate::driver::managed::prefetch(lo, bytes as usize, location, stream.cu_stream())
        })?;
    }
    Ok(())
}
