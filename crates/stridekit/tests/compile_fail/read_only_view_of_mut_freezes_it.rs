// While a read-only view of a writable view lives, the writable one cannot write.
use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

fn main() {
    let layout = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let a = [1u32; 4];
    let src = StridedMemoryView::from_slice(&a, &[4]).unwrap();
    let mut data = [0u32; 4];
    let mut w = StridedMemoryViewMut::from_slice_mut(&mut data, layout).unwrap();
    let r = w.as_view();
    w.copy_from(&src, None).unwrap();
    println!("{r:?}");
}
