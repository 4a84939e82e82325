//! Copies queued on a stream that is being captured into a CUDA graph.
//!
//! A captured copy runs nothing now: its kernels and memcpys become the graph's nodes,
//! and run each time the graph is launched. So:
//! - only copies the GPU does alone are captured: device and managed memory on the
//!   stream's device, not blocking, overlapping views only where they split into
//!   independent groups (one kernel; others need a temporary); a copy that
//!   touches host memory, another device, a cudarc slice's events, or asks to block is
//!   refused with [`Error::Unsupported`](crate::Error::Unsupported), and the capture
//!   stays valid;
//! - a graph cannot wait for work outside its capture, so GPU work recorded on either
//!   view's memory must be done first (synchronize before capturing); otherwise the copy
//!   is refused with [`Error::Invalid`](crate::Error::Invalid);
//! - nothing is recorded on the views' memory at capture time. Launches of the graph are
//!   recorded by `CopyGraph::launch` (the `graph` module); a graph captured
//!   directly with cudarc is launched outside the record, so ordering its launches
//!   against other uses of the memory, and keeping the memory alive while they run, is
//!   the caller's.

use super::{overlaps, side, CopyOptions, Ctx, Operand, Side};
use crate::error::{invalid, Result};
use crate::memory::{Region, Usage};
use cudarc::driver::CudaStream;
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// Whether `stream` is capturing into a graph.
pub(crate) fn is_capturing(op: &'static str, stream: &CudaStream) -> Result<bool> {
    let handle = stream.cu_stream();
    if (handle as usize) <= 1 {
        // The legacy default stream (NULL, or its handle 1) can never capture: no call.
        return Ok(false);
    }
    if (handle as usize) == 2 {
        // The per-thread default stream names a stream of the current context.
        stream
            .context()
            .bind_to_thread()
            .map_err(crate::error::driver(op, "cuCtxSetCurrent"))?;
    }
    let mut capturing = false;
    // SAFETY: a live stream (a cudarc stream the caller holds), its context current
    // where the handle needs one.
    crate::driver::check(op, "cuStreamIsCapturing", unsafe {
        crate::driver::stream::is_capturing(handle, &mut capturing)
    })?;
    Ok(capturing)
}

fn refuse(op: &'static str, why: &str) -> crate::Error {
    crate::Error::Unsupported {
        op,
        reason: format!(
            "the stream is capturing a CUDA graph, and {why}; run this copy outside the capture"
        ),
    }
}

/// The copy `plan` from `src` into `dst` (memory `dmem`), captured on `stream`.
pub(crate) fn copy(
    dst: &Operand<'_>,
    dmem: Region<'_>,
    src: &Operand<'_>,
    plan: &CopyPlan,
    stream: &Arc<CudaStream>,
    opts: &CopyOptions<'_>,
    across_devices: bool,
) -> Result<()> {
    const OP: &str = "copy";
    if across_devices {
        return Err(refuse(OP, "a copy between two devices cannot be captured"));
    }
    if side(dst) == Side::Host || side(src) == Side::Host {
        return Err(refuse(
            OP,
            "a copy that touches host memory cannot be captured (the CPU takes part in it)",
        ));
    }
    let overlapping = overlaps(dst, src);
    if opts.blocking == Some(true) {
        return Err(refuse(OP, "a blocking copy cannot wait for captured work"));
    }
    if dst.cudarc().is_some() || src.cudarc().is_some() {
        return Err(refuse(
            OP,
            "a cudarc slice's events cannot record captured work",
        ));
    }
    for (o, usage, who) in [
        (dst, Usage::Write, "destination"),
        (src, Usage::Read, "source"),
    ] {
        if let Some(p) = o.pending() {
            if !p.settled(OP, usage)? {
                return Err(invalid(
                    OP,
                    format!("the {who}'s memory has GPU work queued outside the capture, which a captured copy cannot wait for; synchronize it before capturing"),
                ));
            }
        }
    }
    if plan.volume == 0 {
        return Ok(());
    }
    // The graph keeps the kernels launched now: the copy's own, never the fallback.
    let _held = crate::background_compile::hold();
    if overlapping {
        // In independent groups (one kernel), or not at all: a temporary would outlive
        // the capture.
        if super::kernel::launch_overlapping(plan, dmem, src.region()?, stream)? {
            return Ok(());
        }
        return Err(refuse(
            OP,
            "these overlapping views need a temporary copy (they do not split into independent groups of at most GROUP_MAX_BYTES), which a graph cannot hold",
        ));
    }
    let cx = Ctx {
        stream,
        allocator: opts.allocator,
    };
    cx.on_device(plan, dmem, src.region()?)
}
