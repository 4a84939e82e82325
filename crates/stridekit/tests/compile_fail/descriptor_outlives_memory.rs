use stridekit::tma::{TensorMapDescriptor, TiledOptions};
use stridekit::{Buffer, Order, StridedLayout, StridedMemoryView};

fn main() {
    let layout = StridedLayout::dense(&[64, 64], 4, Order::C).unwrap();
    let tmap: TensorMapDescriptor<'_> = {
        let data = vec![1u32; 64 * 64];
        let ptr = data.as_ptr() as u64;
        // SAFETY: `data` owns the bytes and moves into the buffer.
        let buf = unsafe { Buffer::from_handle(ptr, 64 * 64 * 4, data) }.unwrap();
        let view = StridedMemoryView::from_buffer(&buf, layout, None).unwrap();
        view.as_tensor_map(&TiledOptions::new(&[8, 8])).unwrap()
    };
    println!("{}", tmap.layout());
}
