//! Copies between views on different devices.
//!
//! - a plan that is one run of bytes: one `cuMemcpyPeerAsync`;
//! - with peer access from the stream's device to the other: the strided kernel runs on
//!   the stream's device and reaches the other's memory over the link;
//! - without it: the source is gathered into a dense temporary on its own device, moved
//!   whole by `cuMemcpyPeerAsync` (which the driver stages), and scattered into the
//!   destination on its device.
//!
//! Work on the device that does not own the given stream runs on stridekit's library
//! stream there, ordered after the given stream's work and before what is queued on it
//! afterwards (events; no host wait).

use super::{kernel, run, CopyOptions, Operand};
use crate::device::Device;
use crate::error::Result;
use crate::memory::{
    copy_bytes_across_devices_unchecked, finish, DeviceMemoryResource, MemoryResource, Region,
    Usage,
};
use crate::peer;
use crate::runtime::Runtime;
use crate::stream::wait_for_producer;
use cudarc::driver::CudaStream;
use std::sync::Arc;
use stridekit_layout::{CopyPlan, Order, StridedLayout};

pub(super) fn copy_across(
    dst: &Operand<'_>,
    dmem: Region<'_>,
    src: &Operand<'_>,
    (dd, sd): (usize, usize),
    plan: &CopyPlan,
    stream: &Arc<CudaStream>,
    opts: &CopyOptions<'_>,
) -> Result<()> {
    const OP: &str = "copy across devices";
    let here = stream.context().ordinal();
    let other = if here == dd { sd } else { dd };
    if plan.is_contiguous() {
        let (d, s) = plan.byte_bounds()?;
        dmem.check_writable(OP)?;
        dmem.check(OP, "destination elements", d.clone())?;
        src.region()?.check(OP, "source elements", s.clone())?;
        let (d0, s0) = (
            dmem.base().wrapping_add_signed(d.start),
            src.ptr().wrapping_add_signed(s.start),
        );
        // SAFETY: both spans lie in their views' memory (checked above).
        return unsafe {
            copy_bytes_across_devices_unchecked(
                OP,
                (d0, dd),
                (s0, sd),
                plan.volume * plan.itemsize,
                stream,
            )
        };
    }
    if peer::usable(here, other)? {
        return kernel::launch(plan, dmem, src.region()?, stream);
    }
    // Without peer access: gather into a dense temporary on the source's device, move it
    // whole with cuMemcpyPeerAsync (the driver stages it), scatter on the destination's.
    let lib = |ordinal: usize| -> Result<Arc<CudaStream>> {
        if ordinal == here {
            Ok(stream.clone())
        } else {
            Runtime::get(OP, ordinal)?.library_stream(OP)
        }
    };
    let (s_src, s_dst) = (lib(sd)?, lib(dd)?);
    wait_for_producer(stream, &s_src)?;
    wait_for_producer(stream, &s_dst)?;
    let packed = StridedLayout::dense(src.shape(), src.layout().itemsize(), Order::C)?;
    let bytes = packed.volume() * packed.itemsize();
    let (dev_s, dev_d) = (Device::open(sd)?, Device::open(dd)?);
    let tmp_s = DeviceMemoryResource::new(&dev_s)?.allocate(bytes, &s_src)?;
    let gathered = Operand::of_buffer(OP, &tmp_s, packed.clone(), src.dtype())?;
    run(
        &gathered,
        Region::of_buffer(&tmp_s),
        src,
        &CopyPlan::new(&packed, src.layout())?,
        Some(&s_src),
        opts,
    )?;
    let tmp_d = DeviceMemoryResource::new(&dev_d)?.allocate(bytes, &s_dst)?;
    wait_for_producer(&s_src, &s_dst)?;
    // The transfer on the destination's stream reads the gathered temporary, which is
    // released on the source's: recorded, so that its release waits for the transfer.
    let read = tmp_s.pending().begin(OP, Usage::Read, &s_dst)?;
    // SAFETY: both temporaries hold `bytes`, on their devices; the copy is ordered after
    // the gather (event above).
    unsafe {
        copy_bytes_across_devices_unchecked(
            OP,
            (tmp_d.ptr(), dd),
            (tmp_s.ptr(), sd),
            bytes,
            &s_dst,
        )?
    };
    finish(OP, &s_dst, [(tmp_s.pending(), read)])?;
    let moved = Operand::of_buffer(OP, &tmp_d, packed.clone(), src.dtype())?.read_only();
    run(
        dst,
        dmem,
        &moved,
        &CopyPlan::new(dst.layout(), &packed)?,
        Some(&s_dst),
        opts,
    )?;
    wait_for_producer(&s_dst, stream)
}
