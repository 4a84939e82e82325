//! cudarc and stridekit on one GPU, no `unsafe` for the data path and no raw address:
//! a `CudaSlice` transposed into another with `copy_from`, then a cudarc kernel reading a
//! stridekit buffer. `cargo run --release --example interop_cudarc` on a GPU machine.

use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
use stridekit::{
    DType, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !stridekit::cuda_available() {
        println!("interop_cudarc needs a CUDA device");
        return Ok(());
    }
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let (rows, cols) = (3usize, 4usize);
    let host: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();

    // 1. cudarc slices as views: a transpose between two CudaSlices.
    let a = stream.clone_htod(&host)?;
    let mut b = stream.alloc_zeros::<f32>(rows * cols)?;
    let src = StridedMemoryView::from_cudarc(&a, StridedLayout::dense(&[3, 4], 4, Order::C)?)?;
    StridedMemoryViewMut::from_cudarc_mut(&mut b, StridedLayout::dense(&[3, 4], 4, Order::F)?)?
        .copy_from(&src, Some(&stream))?;
    let t = stream.clone_dtoh(&b)?;
    println!("a (3x4, row-major): {host:?}");
    println!("b = a in column-major order: {t:?}");
    assert_eq!(t[1], host[cols]);

    // 2. A stridekit buffer lent to a cudarc kernel (ordered after stridekit's copy).
    let module = dev.compile_module(
        "interop_double",
        r#"extern "C" __global__ void twice(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }"#,
    )?;
    let twice = module.load_function("twice")?;
    let mut buf = DeviceMemoryResource::new(&dev)?.allocate(rows * cols * 4, &stream)?;
    let dense = StridedLayout::dense(&[(rows * cols) as i64], 4, Order::C)?;
    StridedMemoryViewMut::from_buffer_mut(&mut buf, dense.clone(), Some(DType::F32))?.copy_from(
        &StridedMemoryView::from_slice(&host, &[(rows * cols) as i64])?,
        Some(&stream),
    )?;
    let mut y = stream.alloc_zeros::<f32>(rows * cols)?;
    let n = (rows * cols) as i32;
    {
        let loan = buf.as_cudarc::<f32>(&stream)?;
        let mut launch = stream.launch_builder(&twice);
        launch.arg(&loan).arg(&mut y).arg(&n);
        // SAFETY: the kernel takes (const float*, float*, int) and reads/writes n floats.
        unsafe { launch.launch(LaunchConfig::for_num_elems(n as u32)) }?;
    }
    let doubled = stream.clone_dtoh(&y)?;
    println!("a cudarc kernel on a stridekit buffer, doubled: {doubled:?}");
    assert_eq!(doubled[5], 10.0);
    Ok(())
}
