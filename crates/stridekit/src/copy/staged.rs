//! Pageable host memory to and from the device through a ring of pinned staging chunks:
//! the CPU (every rayon thread) packs or unpacks one chunk while the copy engine moves
//! another.
//!
//! The ring (4 chunks of 8 MiB per device) is allocated once and reused; a copy that
//! finds it taken (another thread is using it) allocates its own.

use super::host::{self, Direction};
use crate::error::{driver, Result};
use crate::memory::raw_copy;
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
fn with_ring<T>(stream: &Arc<CudaStream>, f: impl FnOnce(u64) -> Result<T>) -> Result<T> {
    const OP: &str = "staged copy";
    let rt = Runtime::of_stream(OP, stream)?;
    let ring = rt.take_staging(OP, CHUNK * SLOTS)?;
    let out = f(ring.ptr());
    match stream.synchronize() {
        Ok(()) => rt.give_back_staging(OP, ring)?,
        Err(e) => {
            drop(ring);
            return out.and(Err(driver(OP, "cuStreamSynchronize")(e)));
        }
    }
    out
}

fn record(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    stream
        .record_event(None)
        .map_err(driver("staged copy", "cuEventRecord"))
}

fn wait(ev: &CudaEvent) -> Result<()> {
    ev.synchronize()
        .map_err(driver("staged copy", "cuEventSynchronize"))
}

/// Moves `plan`'s elements from pageable host memory at `host` (the plan's source side)
/// into device memory at `device` (its destination side, which must be dense in the
/// plan's order: element `i` at byte `i * itemsize`), chunk by chunk. Returns once every
/// byte has reached the device.
pub(super) fn upload(
    plan: &CopyPlan,
    device: u64,
    host: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
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
            let base = ring + (slot * CHUNK) as u64;
            // The slot holds elements start..end at its offset 0.
            let shifted = shift_dst(plan, start);
            host::copy_range_parallel(&shifted, base, host, start..end, Direction::Forward);
            raw_copy(
                "staged copy",
                device + (start * isz) as u64,
                base,
                (end - start) * isz,
                stream,
            )?;
            pending[slot] = Some(record(stream)?);
            start = end;
            k += 1;
        }
        Ok(())
    })
}

/// Moves dense device memory at `device` (the plan's destination side, element `i` at
/// byte `i * itemsize`) into pageable host memory at `host` (the plan's source side),
/// chunk by chunk, after the work already queued on `stream`. Returns once every byte is
/// in place.
pub(super) fn download(
    plan: &CopyPlan,
    host: u64,
    device: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let isz = plan.itemsize;
    let per_chunk = CHUNK / isz;
    let chunks = plan.volume.div_ceil(per_chunk);
    with_ring(stream, |ring| {
        let mut pending: [Option<CudaEvent>; SLOTS] = Default::default();
        let issue = |k: usize, pending: &mut [Option<CudaEvent>; SLOTS]| -> Result<()> {
            let start = k * per_chunk;
            let end = (start + per_chunk).min(plan.volume);
            raw_copy(
                "staged copy",
                ring + ((k % SLOTS) * CHUNK) as u64,
                device + (start * isz) as u64,
                (end - start) * isz,
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
            let base = ring + (slot * CHUNK) as u64;
            host::copy_range_parallel(
                &shift_dst(plan, start),
                base,
                host,
                start..end,
                Direction::Backward,
            );
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
