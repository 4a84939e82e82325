// The race this rules out: two clones of one writable view written from two threads.
use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

fn main() {
    let n = 1024;
    let layout = StridedLayout::dense(&[n], 4, Order::C).unwrap();
    let a = vec![1u32; n as usize];
    let src_a = StridedMemoryView::from_slice(&a, &[n]).unwrap();
    let mut data = vec![0u32; n as usize];
    let w = StridedMemoryViewMut::from_slice_mut(&mut data, layout.clone()).unwrap();
    let (mut w1, mut w2) = (w.clone(), w.clone());
    std::thread::scope(|s| {
        s.spawn(|| w1.copy_from(&src_a, None).unwrap());
        s.spawn(|| w2.copy_from(&src_a, None).unwrap());
    });
}
