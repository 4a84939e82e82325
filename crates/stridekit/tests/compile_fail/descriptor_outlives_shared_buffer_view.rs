use std::sync::Arc;
use stridekit::tma::{TensorMapDescriptor, TiledOptions};
use stridekit::{Buffer, Order, StridedLayout, StridedMemoryView};

// A view sharing its buffer is 'static; the descriptor of it borrows the view.
fn main() {
    let layout = StridedLayout::dense(&[64, 64], 4, Order::C).unwrap();
    let tmap = {
        let data = vec![1u32; 64 * 64];
        let ptr = data.as_ptr() as u64;
        // SAFETY: `data` owns the bytes and moves into the buffer.
        let buf = unsafe { Buffer::from_handle(ptr, 64 * 64 * 4, data) }.unwrap();
        let view = StridedMemoryView::from_shared_buffer(Arc::new(buf), layout, None).unwrap();
        TensorMapDescriptor::tiled(&view, &TiledOptions::new(&[8, 8])).unwrap()
    };
    println!("{}", tmap.layout());
}
