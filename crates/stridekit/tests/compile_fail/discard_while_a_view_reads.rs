use stridekit::{Device, ManagedMemoryResource, Order, StridedLayout, StridedMemoryView};

// A discard makes the contents unspecified: it needs the buffer exclusively, so no
// read-only view of it can be alive.
fn main() {
    let dev = Device::open(0).unwrap();
    let stream = dev.new_stream().unwrap();
    let mut buf = ManagedMemoryResource::new(&dev).unwrap().allocate(4096, &stream).unwrap();
    let layout = StridedLayout::dense(&[1024], 4, Order::C).unwrap();
    let view = StridedMemoryView::from_buffer(&buf, layout, None).unwrap();
    buf.discard(&stream).unwrap();
    println!("{:?}", view.shape());
}
