use stridekit::tma::{TensorMapDescriptor, TiledOptions};
use stridekit::{Buffer, Order, StridedLayout, StridedMemoryViewMut};

// A view that owns its buffer is 'static, but its descriptor borrows the view: it cannot
// outlive the view, and so not the buffer the view frees.
fn main() {
    let layout = StridedLayout::dense(&[64, 64], 4, Order::C).unwrap();
    let tmap: TensorMapDescriptor<'static> = {
        let data = vec![1u32; 64 * 64];
        let ptr = data.as_ptr() as u64;
        // SAFETY: `data` owns the bytes and moves into the buffer.
        let buf = unsafe { Buffer::from_handle(ptr, 64 * 64 * 4, data) }.unwrap();
        let view = StridedMemoryViewMut::from_owned_buffer(buf, layout, None).unwrap();
        view.as_tensor_map(&TiledOptions::new(&[8, 8])).unwrap()
    };
    println!("{}", tmap.layout());
}
