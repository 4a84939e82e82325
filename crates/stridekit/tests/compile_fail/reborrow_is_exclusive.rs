// A writable reborrow (`view_mut`) freezes its parent while it lives.
use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

fn main() {
    let layout = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let a = [1u32; 4];
    let src = StridedMemoryView::from_slice(&a, &[4]).unwrap();
    let mut data = [0u32; 4];
    let mut w = StridedMemoryViewMut::from_slice_mut(&mut data, layout.clone()).unwrap();
    let mut part = w.view_mut(layout, None).unwrap();
    w.copy_from(&src, None).unwrap();
    part.copy_from(&src, None).unwrap();
}
