//! A tour of stridekit: `cargo run --release --example tour`.
//!
//! The layout part runs anywhere; the GPU part runs when a CUDA device is present and
//! otherwise says so.

use stridekit::{
    pointer_info, s, Device, DeviceMemoryResource, HostMemoryResource, ManagedMemoryResource,
    MemoryResource, Order, PinnedMemoryResource, StridedLayout, StridedMemoryView,
};

fn layouts() -> Result<(), stridekit::Error> {
    println!("== Layouts (no GPU needed)");
    let nchw = StridedLayout::dense(&[64, 256, 64, 64], 4, Order::C)?;
    println!("NCHW f32:            {nchw}");
    let nhwc = nchw.permuted(&[0, 2, 3, 1])?;
    println!("viewed as NHWC:      {nhwc}");
    println!(
        "  contiguous C? {}  in some order? {}",
        nhwc.is_contiguous_c(),
        nhwc.is_contiguous_any()
    );
    let dense = nhwc.to_dense(Order::C)?;
    println!("dense NHWC:          {dense}");
    let crop = nchw.sliced(s![.., 0..3, 8..56;2, ..;-1])?;
    println!("crop [:, 0:3, 8:56:2, ::-1]: {crop}");
    println!(
        "  offset bounds {:?}, needs {} bytes",
        crop.offset_bounds(),
        crop.required_size_in_bytes()?
    );
    let as_c64 = StridedLayout::dense(&[5, 6], 4, Order::C)?.repacked(8)?;
    println!("(5,6) f32 repacked as complex64: {as_c64}");
    let bcast = StridedLayout::dense(&[1, 16384], 2, Order::C)?.broadcast_to(&[8192, 16384])?;
    println!(
        "broadcast (1,16384)->(8192,16384): {bcast}, unique: {}",
        bcast.is_unique()
    );
    match nhwc.reshaped(&[64, -1]) {
        Ok(l) => println!("NHWC view reshaped: {l}"),
        Err(e) => println!("NHWC view reshaped to (64,-1): {e}"),
    }
    Ok(())
}

fn gpu() -> Result<(), stridekit::Error> {
    println!("\n== GPU");
    let (maj, min) = stridekit::driver_version()?;
    let dev = Device::open(0)?;
    let (cc_maj, cc_min) = dev.compute_capability()?;
    println!(
        "device 0: {} (sm_{cc_maj}{cc_min}, {} SMs, {:.1} GiB, {:.1} GiB free), driver CUDA {maj}.{min}",
        dev.name()?,
        dev.sm_count()?,
        dev.total_memory()? as f64 / (1u64 << 30) as f64,
        dev.free_memory()? as f64 / (1u64 << 30) as f64,
    );
    let stream = dev.new_stream()?;
    let resources: Vec<(&str, Box<dyn MemoryResource>)> = vec![
        ("device pool", Box::new(DeviceMemoryResource::new(&dev)?)),
        ("pinned host", Box::new(PinnedMemoryResource::new(&dev))),
        ("managed", Box::new(ManagedMemoryResource::new(&dev)?)),
        ("pageable host", Box::new(HostMemoryResource)),
    ];
    let data: Vec<u32> = (0..1u32 << 18)
        .map(|i| i.wrapping_mul(2654435761))
        .collect();
    for (name, mr) in &resources {
        let mut buf = mr.allocate(data.len() * 4, &stream)?;
        buf.copy_from_host(&data, &stream)?;
        let mut back = vec![0u32; data.len()];
        buf.copy_to_host(&mut back, &stream)?;
        let info = pointer_info(buf.ptr())?;
        println!(
            "{name:>13}: {:?} at {:#x}, round trip {}; driver says {:?}, device {:?}, host/device accessible {}/{}",
            buf.kind(),
            buf.ptr(),
            if back == data { "ok" } else { "MISMATCH" },
            info.kind,
            info.device,
            info.host_accessible,
            info.device_accessible
        );
    }

    // A permuted host tensor to the GPU (dense there) and back into another host layout.
    let host: Vec<f32> = (0..2 * 3 * 4 * 5).map(|i| i as f32 * 0.5).collect();
    let src = StridedMemoryView::from_slice(&host, &[2, 3, 4, 5])?;
    let nhwc = src.view(src.layout().permuted(&[0, 2, 3, 1])?, None)?;
    let dl = StridedLayout::dense(nhwc.shape(), 4, Order::C)?;
    let mut dbuf =
        DeviceMemoryResource::new(&dev)?.allocate(dl.required_size_in_bytes()?, &stream)?;
    let mut on_gpu = StridedMemoryView::from_buffer_mut(&mut dbuf, dl, None)?;
    on_gpu.copy_from(&nhwc, Some(&stream))?;
    let mut back = vec![0f32; host.len()];
    let back_layout = StridedLayout::dense(nhwc.shape(), 4, Order::F)?;
    let mut back_view = StridedMemoryView::from_slice_mut(&mut back, back_layout)?;
    back_view.copy_from(&on_gpu, Some(&stream))?;
    let ok = back_view.to_vec::<f32>()? == nhwc.to_vec::<f32>()?;
    println!(
        "permuted host (2,3,4,5)->NHWC copied to the GPU and back into F order: {}",
        if ok { "identical" } else { "MISMATCH" }
    );
    if !ok {
        return Err(stridekit::Error::Invalid {
            op: "tour",
            rule: "round trip differs".into(),
        });
    }
    managed_tour(&dev)?;
    Ok(())
}

/// A managed buffer advised, prefetched to the GPU, written by a kernel, read on the host.
fn managed_tour(dev: &Device) -> Result<(), stridekit::Error> {
    use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
    use stridekit::managed::Location;
    println!("\n== Managed memory");
    let stream = dev.new_stream()?;
    let n: u32 = 1 << 20;
    let buf = ManagedMemoryResource::new(dev)?.allocate(n as usize * 4, &stream)?;
    buf.set_preferred_location(Location::Device(dev.ordinal()))?;
    buf.add_accessed_by(Location::Host)?;
    println!(
        "advised: preferred location {:?}, accessed by {:?}",
        buf.preferred_location()?,
        buf.accessed_by()?.iter().collect::<Vec<_>>()
    );
    buf.discard_and_prefetch(Location::Device(dev.ordinal()), &stream)
        .or_else(|e| match e {
            // Drivers before CUDA 13 have no discard; a plain prefetch does the job here.
            stridekit::Error::Unsupported { .. } => {
                buf.prefetch(Location::Device(dev.ordinal()), &stream)
            }
            e => Err(e),
        })?;
    let module = dev.compile_module(
        "tour_squares",
        r#"extern "C" __global__ void squares(unsigned int* p, unsigned int n) {
            for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
                p[i] = i * i;
        }"#,
    )?;
    let f = module
        .load_function("squares")
        .map_err(|e| stridekit::Error::Invalid {
            op: "tour",
            rule: e.to_string(),
        })?;
    let ptr = buf.ptr();
    let mut launch = stream.launch_builder(&f);
    launch.arg(&ptr).arg(&n);
    // SAFETY: the kernel takes (unsigned int*, unsigned int); the buffer holds n u32s.
    unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }.map_err(|e| {
        stridekit::Error::Invalid {
            op: "tour",
            rule: e.to_string(),
        }
    })?;
    buf.prefetch(Location::Host, &stream)?;
    stream
        .synchronize()
        .map_err(|e| stridekit::Error::Invalid {
            op: "tour",
            rule: e.to_string(),
        })?;
    // SAFETY: managed memory is host-accessible; the stream is idle, nothing else writes.
    let host = unsafe { std::slice::from_raw_parts(buf.ptr() as *const u32, n as usize) };
    let ok = host
        .iter()
        .enumerate()
        .all(|(i, &v)| v == (i as u32).wrapping_mul(i as u32));
    println!(
        "kernel wrote {n} squares into managed memory; last prefetch went to {:?}; host read: {}",
        buf.last_prefetch_location()?,
        if ok { "correct" } else { "WRONG" }
    );
    if !ok {
        return Err(stridekit::Error::Invalid {
            op: "tour",
            rule: "managed memory read back wrong".into(),
        });
    }
    Ok(())
}

fn main() {
    if let Err(e) = layouts() {
        eprintln!("layout error: {e}");
        std::process::exit(1);
    }
    if !stridekit::cuda_available() {
        println!("\n== GPU\nno CUDA device found: skipped the GPU part (it needs an NVIDIA driver and GPU)");
        return;
    }
    if let Err(e) = gpu() {
        eprintln!("GPU error: {e}");
        std::process::exit(1);
    }
}
