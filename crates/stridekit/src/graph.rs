//! Copies captured into a CUDA graph and launched again and again, with every launch on
//! the record of the views' memory.
//!
//! [`CopyGraph::capture`] starts a capture on a stream; each
//! [`copy`](CopyGraphBuilder::copy) adds a device-to-device copy to it (the copy engine's
//! kernels and memcpys become the graph's nodes; see the rules below);
//! [`finish`](CopyGraphBuilder::finish) ends the capture and instantiates the graph.
//! [`CopyGraph::launch`] runs the whole graph on its stream, ordered after the GPU work
//! recorded on the views' memory and recorded there in turn (a write on each
//! destination, a read on each source), like any copy. The graph borrows the views for
//! its life, so their memory outlives every launch it queues (a release or drop of a
//! buffer waits for the recorded launches).
//!
//! What a capture takes: copies the GPU does alone (device and managed memory of the
//! stream's device, overlapping views only where they split into independent groups,
//! not blocking), on views whose recorded GPU
//! work is done (synchronize before capturing). Anything else is refused with an error
//! and leaves the capture as it was, so the copies before it still make a graph.
//!
//! ```no_run
//! use stridekit::graph::CopyGraph;
//! use stridekit::{Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout};
//! use stridekit::{StridedMemoryView, StridedMemoryViewMut};
//! # fn main() -> stridekit::Result<()> {
//! let dev = Device::open(0)?;
//! let stream = dev.new_stream()?;
//! let mr = DeviceMemoryResource::new(&dev)?;
//! let (a, mut b) = (mr.allocate(1 << 20, &stream)?, mr.allocate(1 << 20, &stream)?);
//! let l = StridedLayout::dense(&[512, 512], 4, Order::C)?;
//! let src = StridedMemoryView::from_buffer(&a, l.permuted(&[1, 0])?, None)?;
//! let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, l, None)?;
//! stream.synchronize().ok();
//! let mut g = CopyGraph::capture(&stream)?;
//! g.copy(&mut dst, &src)?;
//! let graph = g.finish()?;
//! for _ in 0..100 {
//!     graph.launch()?;
//! }
//! # Ok(()) }
//! ```

use crate::copy::{copy_into, CopyOptions};
use crate::error::{driver, invalid, Result};
use crate::memory::{PendingWork, Usage};
use crate::view::{access::Access, StridedMemoryViewBase, StridedMemoryViewMut};
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaGraph, CudaStream};
use std::sync::Arc;

/// The uses a graph's launch makes of its views' memory.
type Uses<'a> = Vec<(&'a PendingWork, Usage)>;

/// A capture in progress: add copies with [`copy`](Self::copy), end it with
/// [`finish`](Self::finish). Dropped unfinished, it ends the capture and discards it.
pub struct CopyGraphBuilder<'a> {
    stream: Arc<CudaStream>,
    uses: Uses<'a>,
    open: bool,
}

/// A captured, instantiated graph of copies; [`launch`](Self::launch) runs it.
pub struct CopyGraph<'a> {
    graph: CudaGraph,
    stream: Arc<CudaStream>,
    uses: Uses<'a>,
}

impl<'a> CopyGraph<'a> {
    /// Starts capturing `stream` (in relaxed mode: other threads and calls are not
    /// restricted) for a graph of copies. The stream must not be capturing already, and
    /// must be a stream of its own (not a default stream).
    pub fn capture(stream: &Arc<CudaStream>) -> Result<CopyGraphBuilder<'a>> {
        const OP: &str = "CopyGraph::capture";
        if (stream.cu_stream() as usize) <= 2 {
            return Err(invalid(
                OP,
                "a default stream cannot be captured into a graph; use a stream of your own",
            ));
        }
        if crate::copy::captured::is_capturing(OP, stream)? {
            return Err(invalid(OP, "the stream is capturing a graph already"));
        }
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .map_err(driver(OP, "cuStreamBeginCapture"))?;
        Ok(CopyGraphBuilder {
            stream: stream.clone(),
            uses: Vec::new(),
            open: true,
        })
    }

    /// Queues one run of every captured copy on the graph's stream, after the GPU work
    /// recorded on the views' memory, and records it there.
    pub fn launch(&self) -> Result<()> {
        const OP: &str = "CopyGraph::launch";
        let mut begun = Vec::with_capacity(self.uses.len());
        for &(p, usage) in &self.uses {
            begun.push((p, p.begin(OP, usage, &self.stream)?));
        }
        let queued = self.graph.launch().map_err(driver(OP, "cuGraphLaunch"));
        let recorded = crate::memory::finish(OP, &self.stream, begun);
        queued?;
        recorded
    }

    /// The stream the graph was captured on and launches on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<'a> CopyGraphBuilder<'a> {
    /// Captures `dst.copy_from(src)` into the graph: the copy runs at every launch.
    /// Refused (with the capture left as it was) for copies a graph cannot hold; see the
    /// module docs.
    pub fn copy<B: Access>(
        &mut self,
        dst: &'a mut StridedMemoryViewMut<'_>,
        src: &'a StridedMemoryViewBase<'_, B>,
    ) -> Result<()> {
        const OP: &str = "CopyGraph::copy";
        let (d, s) = (dst.operand(OP)?, src.operand(OP)?);
        copy_into(&d, &s, Some(&self.stream), &CopyOptions::default())?;
        if let Some(p) = d.pending() {
            self.uses.push((p, Usage::Write));
        }
        if let Some(p) = s.pending() {
            self.uses.push((p, Usage::Read));
        }
        Ok(())
    }

    /// Ends the capture and instantiates the graph.
    pub fn finish(mut self) -> Result<CopyGraph<'a>> {
        const OP: &str = "CopyGraph::finish";
        self.open = false;
        let graph = self
            .stream
            .end_capture(CUgraphInstantiate_flags(0))
            .map_err(driver(OP, "cuStreamEndCapture"))?
            .ok_or_else(|| invalid(OP, "the capture made no graph"))?;
        Ok(CopyGraph {
            graph,
            stream: self.stream.clone(),
            uses: std::mem::take(&mut self.uses),
        })
    }
}

impl Drop for CopyGraphBuilder<'_> {
    fn drop(&mut self) {
        if self.open {
            // Ends the capture; the graph, if any, is destroyed with cudarc's handle.
            let _ = self.stream.end_capture(CUgraphInstantiate_flags(0));
        }
    }
}
