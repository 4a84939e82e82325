use stridekit::StridedMemoryView;

fn main() {
    let a = [1u32; 4];
    let mut b = [0u32; 4];
    let src = StridedMemoryView::from_slice(&a, &[4]).unwrap();
    let mut dst = StridedMemoryView::from_slice(&mut b, &[4]).unwrap();
    dst.copy_from(&src, None).unwrap();
}
