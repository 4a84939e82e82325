use stridekit::StridedMemoryView;

fn main() {
    let v = {
        let data = vec![1u32; 4];
        StridedMemoryView::from_slice(&data, &[4]).unwrap()
    };
    println!("{v:?}");
}
