//! `copy_from` / `copy_to` between any two views, host or device, any layouts.
//!
//! Every copy is first planned in the GPU-free layout crate ([`CopyPlan`]). Then:
//! - a plan that is one run of bytes is one `cuMemcpyAsync` (or a CPU copy host to host);
//! - host to host runs on the CPU;
//! - device to device (and managed memory) runs the NVRTC-compiled strided kernels; while
//!   a class's kernels are still compiling (on background threads), the fallback kernel
//!   shipped compiled inside the library (`kernel/fallback.rs`, [`crate::set_background_compile`]);
//! - a pinned host side moves as a contiguous span to or from a device temporary, with
//!   the kernel doing the strided part on the device; a pinned side too sparse for that is
//!   packed or unpacked by the CPU through a dense staging buffer;
//! - a pageable host side goes through a ring of pinned chunks (`staged`): every rayon
//!   thread packs (or unpacks) one chunk, its span or its elements, while the copy engine
//!   moves the previous one; the kernel does the strided part on the device.
//!
//! Overlapping source and destination behave as if the source were copied out first: on
//! the device in one pass where the copy splits into independent groups that each fit in
//! a block's shared memory ([`CopyPlan::overlap_groups`]: `x[:, 1:] = x[:, :-1]`, say),
//! or one shifted run in chunks taken in a safe order ([`CopyPlan::ordered_chunks`]:
//! `x[1:] = x[:-1]`), else through one temporary.

mod across;
pub(crate) mod captured;
pub(crate) mod host;
mod kernel;
mod operand;
mod prefetch;
mod staged;
mod temporaries;

pub(crate) use kernel::catalogue::common_kernels;
pub use kernel::{
    elementwise_kernel, image_tile_launches, image_tiles, set_image_tiles, set_small_copy_elements,
    set_tile_blocks_per_sm, small_copy_elements, tile_blocks_per_sm, ElementwiseKernel,
};
pub use prefetch::AUTO_MIN_BYTES as MANAGED_PREFETCH_MIN_BYTES;
pub(crate) use temporaries::pool as temporaries_pool;
pub use temporaries::{release_copy_temporaries, KEEP_BYTES as TEMPORARIES_KEPT_BYTES};

use crate::device::Device;
use crate::error::{driver, invalid, Result};
use crate::memory::{raw_copy, PendingWork, Region, Usage};
use crate::memory::{Buffer, MemoryKind, MemoryResource, PinnedMemoryResource};
use cudarc::driver::CudaStream;
pub(crate) use operand::Operand;
use std::sync::Arc;
use stridekit_layout::{CopyPlan, Order, StridedLayout};

/// Options for [`StridedMemoryViewMut::copy_from_with`](crate::StridedMemoryViewMut::copy_from_with).
#[derive(Default, Clone, Copy)]
pub struct CopyOptions<'r> {
    /// Wait for the copy before returning. Default: device to device returns at once;
    /// copies that touch host memory always wait (the host side is borrowed).
    pub blocking: Option<bool>,
    /// Where device temporaries come from; default: a pool of the device's own for copy
    /// temporaries, which keeps up to 1 GiB of them between copies
    /// ([`release_copy_temporaries`](crate::release_copy_temporaries) gives it back).
    /// What it hands back is checked (size, kind, device, alignment) before use: device
    /// memory of the stream's device, managed memory, or mapped page-locked host memory
    /// (kernels reach all three).
    pub allocator: Option<&'r dyn MemoryResource>,
    /// Copy the bytes even when the two views carry different dtypes (an explicit
    /// reinterpretation, as `copy_bits_from` asks for). Default: such copies are refused.
    pub bits: bool,
    /// Whether a device copy first prefetches its managed-memory sides to the stream's
    /// device. Default (`None`): when a side spans at least
    /// [`MANAGED_PREFETCH_MIN_BYTES`](crate::MANAGED_PREFETCH_MIN_BYTES) and the device
    /// can; `Some(true)`: always (an error where the device cannot); `Some(false)`: never.
    pub prefetch_managed: Option<bool>,
}

/// Which engine can touch a view's memory quickly.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    /// Pageable or pinned host memory: the CPU, and bulk transfers.
    Host,
    /// Device or managed memory: kernels.
    Device,
}

/// The device whose kernels own a view's memory (device and managed memory only; pinned
/// host memory is reachable from every device).
fn gpu_device(v: &Operand<'_>) -> Option<usize> {
    match v.kind() {
        MemoryKind::Device | MemoryKind::Managed => v.device_ordinal(),
        MemoryKind::Host | MemoryKind::PinnedHost => None,
    }
}

fn side(v: &Operand<'_>) -> Side {
    match v.kind() {
        MemoryKind::Host | MemoryKind::PinnedHost => Side::Host,
        MemoryKind::Device | MemoryKind::Managed => Side::Device,
    }
}

struct Ctx<'s, 'r> {
    stream: &'s Arc<CudaStream>,
    allocator: Option<&'r dyn MemoryResource>,
}

impl<'s, 'r> Ctx<'s, 'r> {
    fn new(stream: &'s Arc<CudaStream>, opts: &CopyOptions<'r>) -> Self {
        Ctx {
            stream,
            allocator: opts.allocator,
        }
    }

    fn temp(&self, bytes: usize) -> Result<Buffer> {
        match self.allocator {
            Some(a) => {
                let b = a.allocate(bytes, self.stream)?;
                check_allocation(&b, a, bytes, self.stream.context().ordinal())?;
                Ok(b)
            }
            None => {
                let dev = Device::from_context(self.stream.context().clone());
                temporaries::pool(&dev)?.allocate(bytes, self.stream)
            }
        }
    }

    fn staging(&self, bytes: usize) -> Result<Buffer> {
        let dev = Device::from_context(self.stream.context().clone());
        PinnedMemoryResource::new(&dev).allocate(bytes, self.stream)
    }

    /// Device-to-device (kernel-accessible) copy of `plan` between two regions.
    fn on_device(&self, plan: &CopyPlan, dst: Region<'_>, src: Region<'_>) -> Result<()> {
        kernel::launch(plan, dst, src, self.stream)
    }
}

/// What a caller's allocator handed back for a device temporary, checked before any use:
/// at least the bytes asked for, memory kernels of the stream's device can reach, and
/// aligned for the widest word the kernels move (16 bytes).
fn check_allocation(
    b: &Buffer,
    by: &dyn MemoryResource,
    bytes: usize,
    device: usize,
) -> Result<()> {
    const OP: &str = "copy";
    let who = format!(
        "the allocator of CopyOptions (a resource of {:?} memory) returned {} bytes of {:?} memory at {:#x} on device {:?} for a request of {bytes} bytes",
        by.kind(),
        b.size(),
        b.kind(),
        b.ptr(),
        b.device_ordinal()
    );
    let reachable = match b.kind() {
        MemoryKind::Device | MemoryKind::Managed => true,
        // Page-locked host memory, when the driver maps it for kernels at its own address.
        MemoryKind::PinnedHost => bytes == 0 || crate::pointer::mapped_at_same_address(b.ptr())?,
        MemoryKind::Host => false,
    };
    let rule = if b.size() < bytes {
        Some("a temporary must hold every byte asked for")
    } else if !reachable {
        Some("a device temporary must be memory that kernels of the stream's device reach: device, managed, or page-locked host memory mapped into the device's address space (pageable and unmapped page-locked memory are not)")
    } else if b.kind() == MemoryKind::Device && b.device_ordinal() != Some(device) {
        Some("a device temporary must be on the stream's device")
    } else if bytes > 0 && !b.ptr().is_multiple_of(16) {
        Some("a device temporary must be 16-byte aligned, for the widest word kernels move")
    } else {
        None
    };
    match rule {
        Some(rule) => Err(invalid(
            OP,
            format!("{who}; {rule} (stream on device {device})"),
        )),
        None => Ok(()),
    }
}

/// The copy itself: `dst` and `src` were checked to be compatible; `dmem` is the
/// destination's memory, writable.
fn run(
    dst: &Operand<'_>,
    dmem: Region<'_>,
    src: &Operand<'_>,
    plan: &CopyPlan,
    stream: Option<&Arc<CudaStream>>,
    opts: &CopyOptions<'_>,
) -> Result<()> {
    const OP: &str = "copy";
    let (ds, ss) = (side(dst), side(src));
    // Host to host needs no GPU.
    if ds == Side::Host
        && ss == Side::Host
        && dst.kind() == MemoryKind::Host
        && src.kind() == MemoryKind::Host
    {
        for v in [dst, src] {
            if let Some(p) = v.pending() {
                p.wait_host(OP)?;
            }
        }
        if overlaps(dst, src) {
            let tmp = src.to_vec_bytes()?;
            let packed = StridedLayout::dense(src.shape(), src.layout().itemsize(), Order::C)?;
            let p = CopyPlan::new(dst.layout(), &packed)?;
            host::copy(OP, &p, dmem, Region::of_host(&tmp))?;
        } else {
            host::copy(OP, plan, dmem, src.region()?)?;
        }
        return Ok(());
    }
    let stream = stream.ok_or_else(|| {
        invalid(
            OP,
            format!(
                "a copy from {:?} to {:?} memory runs on the GPU and needs a stream",
                src.kind(),
                dst.kind()
            ),
        )
    })?;
    let cx = Ctx::new(stream, opts);
    // Overlap: in independent groups where the layouts allow (device-side memory only),
    // else copy the source out first, then copy from the copy.
    if overlaps(dst, src) {
        if ds == Side::Device && ss == Side::Device {
            prefetch::managed_sides(dst, src, stream, opts)?;
            // Armed, an overlap kernel not compiled yet goes to a background thread and the
            // copy takes the temporary path below (its copies armed in turn).
            let armed = crate::background_compile::arm();
            let deferred = |e: crate::error::Error| match &armed {
                Some(a) if a.deferred() => Ok(false),
                _ => Err(e),
            };
            let grouped = kernel::launch_overlapping(plan, dmem, src.region()?, stream);
            if grouped.or_else(deferred)? {
                return Ok(());
            }
            let smem = src.region()?;
            if let (Some(o), false) = (
                kernel::ordered_chunks(plan, &dmem, &smem),
                armed.as_ref().is_some_and(|a| a.deferred()),
            ) {
                // Flags are a temporary like any other; a caller's allocator may hand back
                // managed or mapped host memory: then the temporary path below.
                let mut flags = cx.temp(kernel::ordered_flag_bytes(&o)?)?;
                let ordered = kernel::launch_ordered(plan, &o, dmem, smem, &mut flags, stream);
                if ordered.or_else(deferred)? {
                    return Ok(());
                }
            }
        }
        let bytes = src.layout().byte_span().1;
        let tmp = cx.temp(bytes)?;
        let span = src.span_region()?;
        raw_copy(OP, Region::of_buffer(&tmp), span, bytes, stream)?;
        let moved = src.layout().rebased()?;
        let tmp_view = Operand::of_buffer(OP, &tmp, moved, src.dtype())?.read_only();
        let p = CopyPlan::new(dst.layout(), tmp_view.layout())?;
        return run(dst, dmem, &tmp_view, &p, Some(stream), opts);
    }
    if plan.is_contiguous() || (ds == Side::Device && ss == Side::Device) {
        if ds == Side::Device && ss == Side::Device {
            prefetch::managed_sides(dst, src, stream, opts)?;
        }
        return cx.on_device(plan, dmem, src.region()?);
    }
    match (ds, ss) {
        (Side::Device, Side::Host) => host_to_device(&cx, dmem, dst, src),
        (Side::Host, Side::Device) => device_to_host(&cx, dmem, dst, src),
        // Pinned involved on a host-host pair: both CPU-accessible; go through the CPU
        // after the stream's pending work.
        _ => {
            stream
                .synchronize()
                .map_err(driver(OP, "cuStreamSynchronize"))?;
            host::copy(OP, plan, dmem, src.region()?)
        }
    }
}

/// A host source too sparse to move whole is packed first; "too sparse": its span is
/// more than twice the bytes of its elements.
fn sparse(l: &StridedLayout) -> bool {
    l.byte_span().1 > 2 * l.volume() * l.itemsize()
}

fn host_to_device(
    cx: &Ctx<'_, '_>,
    dmem: Region<'_>,
    dst: &Operand<'_>,
    src: &Operand<'_>,
) -> Result<()> {
    const OP: &str = "copy host to device";
    if src.kind() == MemoryKind::Host {
        // Pageable: packed (or its span copied) by the CPU into pinned chunks that move
        // while the next is packed; the GPU does the strided part.
        let (packed, cpu, host) = staging_plan(src, true)?;
        let tmp = cx.temp(packed.byte_span().1)?;
        staged::upload(&cpu, Region::of_buffer(&tmp), host, cx.stream)?;
        let plan = CopyPlan::new(dst.layout(), &packed)?;
        return cx.on_device(&plan, dmem, Region::of_buffer(&tmp));
    }
    let pin;
    let (staged_layout, staged): (StridedLayout, Region<'_>) = if sparse(src.layout()) {
        // Pack on the CPU into pinned memory, in the destination's order.
        let packed = StridedLayout::dense_like(dst.layout(), Order::K)?;
        pin = cx.staging(packed.byte_span().1)?;
        let p = CopyPlan::new(&packed, src.layout())?;
        host::copy(OP, &p, Region::of_buffer(&pin), src.region()?)?;
        (packed, Region::of_buffer(&pin))
    } else {
        (src.layout().rebased()?, src.span_region()?)
    };
    let bytes = staged_layout.byte_span().1;
    let tmp = cx.temp(bytes)?;
    // The staging buffer is released on its allocation stream, this one, after the
    // transfer that reads it.
    raw_copy(OP, Region::of_buffer(&tmp), staged, bytes, cx.stream)?;
    let plan = CopyPlan::new(dst.layout(), &staged_layout)?;
    cx.on_device(&plan, dmem, Region::of_buffer(&tmp))
}

fn device_to_host(
    cx: &Ctx<'_, '_>,
    dmem: Region<'_>,
    dst: &Operand<'_>,
    src: &Operand<'_>,
) -> Result<()> {
    const OP: &str = "copy device to host";
    if dst.kind() == MemoryKind::Host {
        // Pageable: the GPU packs; pinned chunks move while the CPU unpacks the last one.
        let (packed, cpu, host) = staging_plan_mut(dst, dmem)?;
        let tmp = cx.temp(packed.byte_span().1)?;
        cx.on_device(
            &CopyPlan::new(&packed, src.layout())?,
            Region::of_buffer(&tmp),
            src.region()?,
        )?;
        return staged::download(&cpu, host, Region::of_buffer(&tmp), cx.stream);
    }
    if dst.layout().is_contiguous_any() {
        // Build the destination's exact span on the device, then move it whole.
        let moved = dst.layout().rebased()?;
        let bytes = moved.byte_span().1;
        let tmp = cx.temp(bytes)?;
        let plan = CopyPlan::new(&moved, src.layout())?;
        cx.on_device(&plan, Region::of_buffer(&tmp), src.region()?)?;
        return raw_copy(
            OP,
            span_of(dst, dmem)?,
            Region::of_buffer(&tmp),
            bytes,
            cx.stream,
        );
    }
    // Gaps in the destination must keep their bytes: pack on the device, move, scatter on the CPU.
    let packed = StridedLayout::dense(dst.shape(), dst.layout().itemsize(), Order::C)?;
    let bytes = packed.byte_span().1;
    let tmp = cx.temp(bytes)?;
    cx.on_device(
        &CopyPlan::new(&packed, src.layout())?,
        Region::of_buffer(&tmp),
        src.region()?,
    )?;
    let pin = cx.staging(bytes)?;
    raw_copy(
        OP,
        Region::of_buffer(&pin),
        Region::of_buffer(&tmp),
        bytes,
        cx.stream,
    )?;
    cx.stream
        .synchronize()
        .map_err(driver(OP, "cuStreamSynchronize"))?;
    host::copy(
        OP,
        &CopyPlan::new(dst.layout(), &packed)?,
        dmem,
        Region::of_buffer(&pin),
    )
}

/// The part of a view's region its elements occupy (from its lowest byte).
fn span_of<'r>(v: &Operand<'_>, mem: Region<'r>) -> Result<Region<'r>> {
    let (lo, _) = v.byte_span();
    mem.sub("copy", (lo - v.ptr()) as usize, v.layout().byte_span().1)
}

/// How a pageable host view is staged: the layout its bytes have on the device, the
/// CPU's plan between the staging chunks (its destination side, dense) and host memory
/// (its source side), and the host region that plan counts from. A layout moves its
/// whole span as bytes (the GPU permutes) when it has no gaps, or, if `read`, few; else
/// it is packed, in its own memory order (sequential host access). A span written back
/// must not carry gaps: their bytes are the host's.
fn staging_layout(l: &StridedLayout, read: bool) -> Result<(StridedLayout, CopyPlan, bool)> {
    let whole = if read {
        !sparse(l)
    } else {
        l.is_contiguous_any()
    };
    if !whole {
        let packed = StridedLayout::dense_like(l, Order::K)?;
        let cpu = CopyPlan::new(&packed, l)?;
        Ok((packed, cpu, false))
    } else {
        let span = l.byte_span().1 as i64;
        let bytes = StridedLayout::dense(&[span], 1, Order::C)?;
        Ok((l.rebased()?, CopyPlan::new(&bytes, &bytes)?, true))
    }
}

/// [`staging_layout`] of a source view, with the host region its plan reads.
fn staging_plan<'v>(
    v: &'v Operand<'_>,
    read: bool,
) -> Result<(StridedLayout, CopyPlan, Region<'v>)> {
    let (layout, cpu, whole) = staging_layout(v.layout(), read)?;
    let host = if whole { v.span_region()? } else { v.region()? };
    Ok((layout, cpu, host))
}

/// [`staging_layout`] of a destination view, with its writable host region.
fn staging_plan_mut<'r>(
    v: &Operand<'_>,
    mem: Region<'r>,
) -> Result<(StridedLayout, CopyPlan, Region<'r>)> {
    let (layout, cpu, whole) = staging_layout(v.layout(), false)?;
    let host = if whole { span_of(v, mem)? } else { mem };
    Ok((layout, cpu, host))
}

fn overlaps(a: &Operand<'_>, b: &Operand<'_>) -> bool {
    let (a0, a1) = a.byte_span();
    let (b0, b1) = b.byte_span();
    a0 < b1 && b0 < a1
}

/// The copy behind every `copy_from`: checked, planned and run on `stream`.
pub(crate) fn copy_into(
    dst: &Operand<'_>,
    src: &Operand<'_>,
    stream: Option<&Arc<CudaStream>>,
    opts: &CopyOptions<'_>,
) -> Result<()> {
    const OP: &str = "copy";
    dst.check_writable(OP)?;
    check_dtypes(OP, dst, src, opts)?;
    let dmem = dst.region()?;
    let plan = CopyPlan::new(dst.layout(), src.layout())?;
    let across = match (gpu_device(dst), gpu_device(src)) {
        (Some(a), Some(b)) if a != b => Some((a, b)),
        _ => None,
    };
    if let Some(s) = stream {
        let ordinal = s.context().ordinal();
        let ok = match across {
            Some((a, b)) => ordinal == a || ordinal == b,
            None => gpu_device(dst)
                .or(gpu_device(src))
                .is_none_or(|d| d == ordinal),
        };
        if !ok {
            let devices = match across {
                Some((a, b)) => format!("devices {b} (source) and {a} (destination)"),
                None => format!(
                    "device {}",
                    gpu_device(dst).or(gpu_device(src)).unwrap_or(0)
                ),
            };
            return Err(invalid(
                OP,
                format!("the stream belongs to device {ordinal} but the views to {devices}; give a stream of one of them"),
            ));
        }
    }
    if let Some(s) = stream {
        if captured::is_capturing(OP, s)? {
            return captured::copy(dst, dmem, src, &plan, s, opts, across.is_some());
        }
    }
    if let Some(pair) = across {
        let stream = stream.ok_or_else(|| {
            invalid(
                OP,
                "a copy between two devices runs on the GPU and needs a stream",
            )
        })?;
        if plan.volume == 0 {
            return Ok(());
        }
        let uses = begin_uses(dst, src, stream)?;
        let cudarc = begin_cudarc_uses(dst, src, stream);
        let queued = across::copy_across(dst, dmem, src, pair, &plan, stream, opts);
        drop(cudarc);
        return finish(dst, src, stream, opts, uses, queued);
    }
    if plan.volume == 0 {
        return Ok(());
    }
    let Some(stream) = stream else {
        // Host to host on the CPU (`run` waits for recorded GPU work first).
        return run(dst, dmem, src, &plan, None, opts);
    };
    if side(dst) == Side::Device && side(src) == Side::Device && !overlaps(dst, src) {
        // Device work only (a copy or a kernel between device-side memory; nothing in it
        // touches the views' records): both records held while it is queued (microseconds;
        // a class's first copy also compiles its kernel meanwhile, and other uses of these
        // views wait for that), waited for and recorded under one lock each.
        let records: smallvec::SmallVec<[_; 2]> = [(dst, Usage::Write), (src, Usage::Read)]
            .into_iter()
            .filter_map(|(o, u)| o.pending().map(|p| (p, u)))
            .collect();
        crate::memory::around(OP, stream, &records, || {
            let cudarc = begin_cudarc_uses(dst, src, stream);
            let queued = prefetch::managed_sides(dst, src, stream, opts)
                .and_then(|()| Ctx::new(stream, opts).on_device(&plan, dmem, src.region()?));
            drop(cudarc);
            queued
        })?;
        if opts.blocking == Some(true) {
            stream
                .synchronize()
                .map_err(driver(OP, "cuStreamSynchronize"))?;
        }
        return Ok(());
    }
    let uses = begin_uses(dst, src, stream)?;
    let cudarc = begin_cudarc_uses(dst, src, stream);
    let queued = run(dst, dmem, src, &plan, Some(stream), opts);
    // Recorded on cudarc's events now that the copy is queued.
    drop(cudarc);
    finish(dst, src, stream, opts, uses, queued)
}

/// Orders `stream` after cudarc's earlier work on either side's slice; the guards record
/// the copy on the slices' events (a write on the destination's) when dropped.
fn begin_cudarc_uses<'s>(
    dst: &'s Operand<'_>,
    src: &'s Operand<'_>,
    stream: &'s CudaStream,
) -> Vec<cudarc::driver::SyncOnDrop<'s>> {
    let mut guards = Vec::new();
    for (o, write) in [(dst, true), (src, false)] {
        if let Some(u) = o.cudarc() {
            // SAFETY: a destination operand is made only from the one writable view of
            // its memory (`is_writable`), borrowed exclusively for the copy; the guards
            // are dropped before the copy returns, inside the views' borrows.
            guards.push(unsafe { u.begin(stream, write && o.is_writable()) });
        }
    }
    guards
}

/// Copies never reinterpret: two known, different dtypes are refused unless the caller
/// asked for the bits (views without a dtype copy bytes).
fn check_dtypes(
    op: &'static str,
    dst: &Operand<'_>,
    src: &Operand<'_>,
    opts: &CopyOptions<'_>,
) -> Result<()> {
    match (dst.dtype(), src.dtype()) {
        (Some(d), Some(s)) if d != s && !opts.bits => {
            Err(crate::Error::DtypeMismatch { op, src: s, dst: d })
        }
        _ => Ok(()),
    }
}

/// The uses of a copy on its views' memory, begun: the destination's a write, the
/// source's a read (one write where both are the same memory).
type CopyUses<'p> = smallvec::SmallVec<[(&'p PendingWork, crate::memory::Use); 2]>;

/// Before a copy on `stream`: the stream waits for the recorded GPU uses the copy must
/// follow (on whatever stream they ran): every use of the destination, the writes of
/// the source.
fn begin_uses<'p>(
    dst: &Operand<'p>,
    src: &Operand<'p>,
    stream: &Arc<CudaStream>,
) -> Result<CopyUses<'p>> {
    const OP: &str = "copy";
    let mut uses = CopyUses::new();
    for (o, usage) in [(dst, Usage::Write), (src, Usage::Read)] {
        if let Some(p) = o.pending() {
            uses.push((p, p.begin(OP, usage, stream)?));
        }
    }
    Ok(uses)
}

/// After a copy on `stream` was queued (or failed partway): records it on both views'
/// memory (so that releases, later uses and host reads wait for whatever was queued),
/// then waits when the copy touches host memory or the caller asked to block.
fn finish(
    dst: &Operand<'_>,
    src: &Operand<'_>,
    stream: &Arc<CudaStream>,
    opts: &CopyOptions<'_>,
    uses: CopyUses<'_>,
    queued: Result<()>,
) -> Result<()> {
    const OP: &str = "copy";
    let recorded = crate::memory::finish(OP, stream, uses);
    queued?;
    recorded?;
    let touches_host = side(dst) == Side::Host || side(src) == Side::Host;
    if touches_host || opts.blocking == Some(true) {
        stream
            .synchronize()
            .map_err(driver(OP, "cuStreamSynchronize"))?;
    }
    Ok(())
}

impl Operand<'_> {
    /// The elements as bytes in row-major order (host-accessible operands).
    pub(crate) fn to_vec_bytes(&self) -> Result<Vec<u8>> {
        let isz = self.layout().itemsize();
        let bytes = self
            .layout()
            .volume()
            .checked_mul(isz)
            .ok_or_else(|| invalid("copy", "the elements' bytes overflow usize"))?;
        let mut out: Vec<u8> = crate::memory::try_zeroed("copy", bytes)?;
        let dense = StridedLayout::dense(self.shape(), isz, Order::C)?;
        host::copy(
            "copy",
            &CopyPlan::new(&dense, self.layout())?,
            Region::of_host_mut(&mut out),
            self.region()?,
        )?;
        Ok(out)
    }
}
