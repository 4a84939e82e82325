use stridekit::{Order, StridedLayout, StridedMemoryViewMut};

fn main() {
    let layout = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let mut data = [0u32; 4];
    let w1 = StridedMemoryViewMut::from_slice_mut(&mut data, layout.clone()).unwrap();
    let w2 = StridedMemoryViewMut::from_slice_mut(&mut data, layout).unwrap();
    drop((w1, w2));
}
