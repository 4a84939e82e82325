use stridekit::tma::{TensorMapDescriptor, TiledOptions};
use stridekit::{StridedMemoryView, StridedMemoryViewMut};

// A view imported from DLPack is 'static; the descriptor of it borrows the view, whose
// drop runs the producer's deleter.
fn main() {
    let tmap = {
        let tensor = StridedMemoryViewMut::from_vec(vec![0f32; 64 * 64], &[64, 64])
            .unwrap()
            .into_dlpack()
            .unwrap();
        // SAFETY: the tensor came from stridekit and nobody else holds its memory.
        let view = unsafe { StridedMemoryView::from_dlpack(tensor) }.unwrap();
        TensorMapDescriptor::tiled(&view, &TiledOptions::new(&[8, 8])).unwrap()
    };
    println!("{}", tmap.layout());
}
