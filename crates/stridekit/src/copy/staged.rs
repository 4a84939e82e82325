//! Pageable host memory to and from the device through a ring of pinned staging chunks:
//! the CPU (every rayon thread) packs or unpacks one chunk while the copy engine moves
//! another.
//!
//! The ring (4 chunks of 8 MiB per device) is allocated once and reused; a copy that
//! finds it taken (another thread is using it) allocates its own.

use super::host::{self, Direction};
use crate::error::{driver, Result};
use crate::memory::{raw_copy, Region};
use crate::runtime::Runtime;
use cudarc::driver::{CudaEvent, CudaStream};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Bytes per staging chunk.
const CHUNK: usize = 8 << 20;
/// Chunks in the ring.
const SLOTS: usize = 4;

/// Runs `f` with a ring of the stream's device (the runtime's idle one, or a new one);
/// the stream is synchronized before the ring is reused, whatever `f` returns (a ring
/// whose stream cannot be synchronized is dropped, not reused).
fn with_ring<T>(stream: &Arc<CudaStream>, f: impl FnOnce(Region<'_>) -> Result<T>) -> Result<T> {
    let rt = Runtime::of_stream(OP, stream)?;
    let ring = rt.take_staging(OP, CHUNK * SLOTS)?;
    let out = f(Region::of_pinned(&ring));
    match stream.synchronize() {
        Ok(()) => rt.give_back_staging(OP, ring)?,
        Err(e) => {
            drop(ring);
            return out.and(Err(driver(OP, "cuStreamSynchronize")(e)));
        }
    }
    out
}

const OP: &str = "staged copy";

/// The checks both directions make: the host side holds every byte the plan reaches on
/// its source side (and is writable when written), the device side holds the plan's
/// elements densely.
fn check(
    plan: &CopyPlan,
    device: &Region<'_>,
    host: &Region<'_>,
    host_written: bool,
) -> Result<()> {
    host.check_host(OP)?;
    if host_written {
        host.check_writable(OP)?;
    } else {
        device.check_writable(OP)?;
    }
    let (_, on_host) = plan.byte_bounds()?;
    host.check(OP, "host elements", on_host)?;
    let dense = plan
        .volume
        .checked_mul(plan.itemsize)
        .and_then(|b| i64::try_from(b).ok())
        .ok_or_else(|| crate::error::invalid(OP, "the staged bytes overflow i64"))?;
    device.check(OP, "device elements", 0..dense)
}

fn record(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    stream
        .record_event(None)
        .map_err(driver(OP, "cuEventRecord"))
}

fn wait(ev: &CudaEvent) -> Result<()> {
    ev.synchronize().map_err(driver(OP, "cuEventSynchronize"))
}

/// Moves `plan`'s elements from pageable host memory `host` (the plan's source side)
/// into device memory `device` (its destination side, which must be dense in the plan's
/// order: element `i` at byte `i * itemsize`), chunk by chunk. Returns once every byte has
/// reached the device.
pub(super) fn upload(
    plan: &CopyPlan,
    device: Region<'_>,
    host: Region<'_>,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    check(plan, &device, &host, false)?;
    let isz = plan.itemsize;
    let per_chunk = CHUNK / isz;
    with_ring(stream, |ring| {
        let mut pending: [Option<CudaEvent>; SLOTS] = Default::default();
        let mut start = 0usize;
        let mut k = 0usize;
        while start < plan.volume {
            let end = (start + per_chunk).min(plan.volume);
            let slot = k % SLOTS;
            if let Some(ev) = pending[slot].take() {
                wait(&ev)?;
            }
            let len = (end - start) * isz;
            let chunk = ring.sub(OP, slot * CHUNK, len)?;
            // The slot holds elements start..end at its offset 0.
            let shifted = shift_dst(plan, start);
            // SAFETY: the host side holds every source offset of the plan (checked); the
            // shifted destination offsets of elements start..end are 0..len, inside the
            // chunk; the ring is this copy's alone and its slot's last transfer is done.
            unsafe {
                host::copy_range_parallel(
                    &shifted,
                    chunk.base(),
                    host.base(),
                    start..end,
                    Direction::Forward,
                )
            };
            raw_copy(OP, device.sub(OP, start * isz, len)?, chunk, len, stream)?;
            pending[slot] = Some(record(stream)?);
            start = end;
            k += 1;
        }
        Ok(())
    })
}

/// Moves dense device memory `device` (the plan's destination side, element `i` at byte
/// `i * itemsize`) into pageable host memory `host` (the plan's source side), chunk by
/// chunk, after the work already queued on `stream`. Returns once every byte is in place.
pub(super) fn download(
    plan: &CopyPlan,
    host: Region<'_>,
    device: Region<'_>,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    check(plan, &device, &host, true)?;
    let isz = plan.itemsize;
    let per_chunk = CHUNK / isz;
    let chunks = plan.volume.div_ceil(per_chunk);
    with_ring(stream, |ring| {
        let mut pending: [Option<CudaEvent>; SLOTS] = Default::default();
        let issue = |k: usize, pending: &mut [Option<CudaEvent>; SLOTS]| -> Result<()> {
            let start = k * per_chunk;
            let end = (start + per_chunk).min(plan.volume);
            let len = (end - start) * isz;
            raw_copy(
                OP,
                ring.sub(OP, (k % SLOTS) * CHUNK, len)?,
                device.sub(OP, start * isz, len)?,
                len,
                stream,
            )?;
            pending[k % SLOTS] = Some(record(stream)?);
            Ok(())
        };
        for k in 0..chunks.min(SLOTS) {
            issue(k, &mut pending)?;
        }
        for k in 0..chunks {
            let slot = k % SLOTS;
            if let Some(ev) = pending[slot].take() {
                wait(&ev)?;
            }
            let start = k * per_chunk;
            let end = (start + per_chunk).min(plan.volume);
            let chunk = ring.sub(OP, slot * CHUNK, (end - start) * isz)?;
            // SAFETY: the host side holds every source offset of the plan and is written
            // only here (checked writable: an exclusive borrow); the chunk holds elements
            // start..end at 0..len and its transfer is done (waited above).
            unsafe {
                host::copy_range_parallel(
                    &shift_dst(plan, start),
                    chunk.base(),
                    host.base(),
                    start..end,
                    Direction::Backward,
                )
            };
            if k + SLOTS < chunks {
                issue(k + SLOTS, &mut pending)?;
            }
        }
        Ok(())
    })
}

/// `plan` with its (dense) destination side moved so that element `start` lands at
/// offset 0: a chunk's elements at the start of a staging slot.
fn shift_dst(plan: &CopyPlan, start: usize) -> CopyPlan {
    CopyPlan {
        dst_offset: plan.dst_offset - start as i64,
        ..plan.clone()
    }
}
