//! How long it takes to build a TMA descriptor from a view:
//! `cargo run --release --example tma_bench` on a Hopper GPU.
//!
//! Builds a tiled descriptor of a 1024 x 1024 f32 device matrix (64 x 32 box, 128-byte
//! swizzle) and times creation, `replace_address`, and the validation alone (no driver
//! call), each as the median over batches of 1000.

use std::time::Instant;
use stridekit::tma::{Swizzle, TensorMapDescriptor, TiledOptions};
use stridekit::{
    DType, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout, StridedMemoryView,
};

type R<T> = Result<T, stridekit::Error>;

fn median_ns(mut f: impl FnMut() -> R<()>) -> R<f64> {
    let mut v = vec![];
    for _ in 0..21 {
        let t = Instant::now();
        for _ in 0..1000 {
            f()?;
        }
        v.push(t.elapsed().as_nanos() as f64 / 1000.0);
    }
    v.sort_by(|a, b| a.total_cmp(b));
    Ok(v[v.len() / 2])
}

fn main() -> R<()> {
    if !stridekit::cuda_available() {
        println!("tma_bench needs a CUDA device");
        return Ok(());
    }
    let dev = Device::open(0)?;
    if dev.compute_capability()? < (9, 0) {
        println!("tma_bench needs compute capability 9.0 (TMA)");
        return Ok(());
    }
    let stream = dev.new_stream()?;
    let mr = DeviceMemoryResource::new(&dev)?;
    let a = mr.allocate(1024 * 1024 * 4, &stream)?;
    let b = mr.allocate(1024 * 1024 * 4, &stream)?;
    let layout = StridedLayout::dense(&[1024, 1024], 4, Order::C)?;
    let va = StridedMemoryView::from_buffer(&a, layout.clone(), Some(DType::F32))?;
    let vb = StridedMemoryView::from_buffer(&b, layout, Some(DType::F32))?;
    let opts = TiledOptions::new(&[64, 32]).swizzle(Swizzle::B128);
    let create = median_ns(|| {
        std::hint::black_box(TensorMapDescriptor::tiled(&va, &opts)?);
        Ok(())
    })?;
    let short = median_ns(|| {
        std::hint::black_box(va.as_tensor_map(&opts)?);
        Ok(())
    })?;
    let mut d = TensorMapDescriptor::tiled(&va, &opts)?;
    let mut flip = false;
    let replace = median_ns(|| {
        flip = !flip;
        d.replace_address(if flip { &vb } else { &va })
    })?;
    println!("device: {}", dev.name()?);
    println!(
        "TensorMapDescriptor::tiled (1024x1024 f32, box 64x32, swizzle 128B): {:.2} µs",
        create / 1e3
    );
    println!(
        "StridedMemoryView::as_tensor_map (same):                           {:.2} µs",
        short / 1e3
    );
    println!(
        "replace_address:                                                    {:.2} µs",
        replace / 1e3
    );
    Ok(())
}
