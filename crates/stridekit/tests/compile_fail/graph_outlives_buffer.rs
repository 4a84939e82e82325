// A captured graph reads its source at every launch: the source's buffer cannot be
// dropped while the graph lives.
use stridekit::graph::CopyGraph;
use stridekit::{Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout};
use stridekit::{StridedMemoryView, StridedMemoryViewMut};

fn main() -> stridekit::Result<()> {
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let a = mr.allocate(4096, &stream)?;
    let mut b = mr.allocate(4096, &stream)?;
    let l = StridedLayout::dense(&[32, 32], 4, Order::C)?;
    let src = StridedMemoryView::from_buffer(&a, l.clone(), None)?;
    let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, l, None)?;
    let mut g = CopyGraph::capture(&stream)?;
    g.copy(&mut dst, &src)?;
    let graph = g.finish()?;
    drop(a);
    graph.launch()
}
