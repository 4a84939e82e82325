use stridekit::{Buffer, Order, StridedLayout, StridedMemoryView};

fn main() {
    let layout = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let v = {
        let data = vec![1u32; 4];
        let ptr = data.as_ptr() as u64;
        // SAFETY: `data` owns the 16 bytes and moves into the buffer.
        let buf = unsafe { Buffer::from_handle(ptr, 16, data) }.unwrap();
        StridedMemoryView::from_buffer(&buf, layout, None).unwrap()
    };
    println!("{v:?}");
}
