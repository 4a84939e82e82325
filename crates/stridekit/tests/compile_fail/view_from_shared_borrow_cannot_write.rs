// `view` on a writable view gives a read-only view: it cannot be written through.
use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

fn main() {
    let layout = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let a = [1u32; 4];
    let src = StridedMemoryView::from_slice(&a, &[4]).unwrap();
    let mut data = [0u32; 4];
    let w = StridedMemoryViewMut::from_slice_mut(&mut data, layout.clone()).unwrap();
    let mut w3 = w.view(layout, None).unwrap();
    w3.copy_from(&src, None).unwrap();
}
