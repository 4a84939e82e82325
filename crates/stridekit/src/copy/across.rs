//! Copies between views on different devices.
//!
//! - a plan that is one run of bytes: one `cuMemcpyPeerAsync`;
//! - with peer access from the stream's device to the other: the strided kernel runs on
//!   the stream's device and reaches the other's memory over the link;
//! - without it: the source is gathered into pinned host memory on its own device, then
//!   scattered into the destination on its device.
//!
//! Work on the device that does not own the given stream runs on stridekit's library
//! stream there, ordered after the given stream's work and before what is queued on it
//! afterwards (events; no host wait).

use super::{kernel, run, CopyOptions};
use crate::device::Device;
use crate::dlpack::{wait_for_producer, ExchangeStream, StreamRef};
use crate::driver::bind_stream;
use crate::error::{check, Result};
use crate::memory::{MemoryResource, PinnedMemoryResource};
use crate::peer;
use crate::view::StridedMemoryView;
use cudarc::driver::{sys, CudaStream};
use std::sync::Arc;
use stridekit_layout::{CopyPlan, Order, StridedLayout};

/// The given stream's work, then `f` on `ordinal`'s library stream, then the given stream
/// waits for it.
fn on_device(
    stream: &Arc<CudaStream>,
    ordinal: usize,
    f: impl FnOnce(&Arc<CudaStream>) -> Result<()>,
) -> Result<()> {
    if stream.context().ordinal() == ordinal {
        return f(stream);
    }
    let other = Device::open(ordinal)?.library_stream()?;
    let (given, there) = (
        ExchangeStream::Stream(StreamRef::of(stream)),
        ExchangeStream::Stream(StreamRef::of(&other)),
    );
    wait_for_producer(given, there, stream.context().ordinal())?;
    f(&other)?;
    wait_for_producer(there, given, ordinal)
}

pub(super) fn copy_across(
    dst: &StridedMemoryView<'_>,
    src: &StridedMemoryView<'_>,
    (dd, sd): (usize, usize),
    plan: &CopyPlan,
    stream: &Arc<CudaStream>,
    opts: &CopyOptions<'_>,
) -> Result<()> {
    const OP: &str = "copy across devices";
    let here = stream.context().ordinal();
    let other = if here == dd { sd } else { dd };
    if plan.is_contiguous() {
        let isz = plan.itemsize as i64;
        let (d0, s0) = (
            dst.ptr().wrapping_add_signed(plan.dst_offset * isz),
            src.ptr().wrapping_add_signed(plan.src_offset * isz),
        );
        let (dc, sc) = (Device::open(dd)?, Device::open(sd)?);
        bind_stream(OP, stream)?;
        // SAFETY: both spans were validated against their views' memory; the contexts
        // are the live primary contexts of the two devices.
        return check(OP, "cuMemcpyPeerAsync", unsafe {
            sys::cuMemcpyPeerAsync(
                d0,
                dc.context().cu_ctx(),
                s0,
                sc.context().cu_ctx(),
                plan.volume * plan.itemsize,
                stream.cu_stream(),
            )
        });
    }
    if peer::usable(here, other)? {
        return kernel::launch(
            &plan.vectorized(dst.ptr(), src.ptr()),
            dst.ptr(),
            src.ptr(),
            stream,
        );
    }
    // Stage through pinned host memory: gather on the source's device, scatter on the
    // destination's.
    let packed = StridedLayout::dense(src.shape(), src.layout().itemsize(), Order::C)?;
    let bytes = packed.volume() * packed.itemsize();
    let pinned_mr = PinnedMemoryResource::new(&Device::open(sd)?);
    let pin = pinned_mr.allocate(bytes, stream)?;
    let staged = StridedMemoryView::from_buffer(&pin, packed.clone(), src.dtype())?;
    on_device(stream, sd, |s| {
        run(
            &staged,
            src,
            &CopyPlan::new(&packed, src.layout())?,
            Some(s),
            opts,
        )
    })?;
    on_device(stream, dd, |s| {
        run(
            dst,
            &staged,
            &CopyPlan::new(dst.layout(), &packed)?,
            Some(s),
            opts,
        )
    })?;
    pin.order_release_after(stream)
}
