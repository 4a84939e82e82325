use stridekit::tma::{TensorMapDescriptor, TiledOptions};
use stridekit::{Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

// Re-pointing a descriptor at another view ties it to that view too.
fn main() {
    let a = StridedMemoryViewMut::from_vec(vec![0f32; 64 * 64], &[64, 64]).unwrap().into_read_only();
    let mut tmap = TensorMapDescriptor::tiled(&a, &TiledOptions::new(&[8, 8])).unwrap();
    {
        let data = vec![0f32; 64 * 64];
        let layout = StridedLayout::dense(&[64, 64], 4, Order::C).unwrap();
        let b = StridedMemoryView::from_slice_with_layout(&data, layout).unwrap();
        tmap.replace_address(&b).unwrap();
    }
    println!("{}", tmap.layout());
}
