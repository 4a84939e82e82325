//! A tour of stridekit: `cargo run --release --example tour`.
//!
//! The layout part runs anywhere; the GPU part runs when a CUDA device is present and
//! otherwise says so.

use stridekit::{
    pointer_info, s, Device, DeviceMemoryResource, HostMemoryResource, ManagedMemoryResource,
    MemoryResource, Order, PinnedMemoryResource, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
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
    let mut on_gpu = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl, None)?;
    on_gpu.copy_from(&nhwc, Some(&stream))?;
    let mut back = vec![0f32; host.len()];
    let back_layout = StridedLayout::dense(nhwc.shape(), 4, Order::F)?;
    let mut back_view = StridedMemoryViewMut::from_slice_mut(&mut back, back_layout)?;
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
    tma_tour(&dev)?;
    Ok(())
}

/// A managed buffer advised, prefetched to the GPU, written by a kernel, read on the host.
fn managed_tour(dev: &Device) -> Result<(), stridekit::Error> {
    use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
    use stridekit::managed::Location;
    println!("\n== Managed memory");
    let stream = dev.new_stream()?;
    let n: u32 = 1 << 20;
    let mut buf = ManagedMemoryResource::new(dev)?.allocate(n as usize * 4, &stream)?;
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

/// A TMA descriptor of a sliced device matrix, and one tile copied by the TMA engine.
fn tma_tour(dev: &Device) -> Result<(), stridekit::Error> {
    use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
    use stridekit::tma::{Swizzle, TiledOptions};
    use stridekit::DType;
    println!("\n== TMA tensor maps");
    let err = |e: &dyn std::fmt::Display| stridekit::Error::Invalid {
        op: "tour",
        rule: e.to_string(),
    };
    if dev.compute_capability()? < (9, 0) {
        println!("this GPU has no TMA (compute capability 9.0 needed): skipped the tile copy");
        return Ok(());
    }
    let stream = dev.new_stream()?;
    let (rows, cols) = (96i64, 128i64);
    let vals: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut buf = DeviceMemoryResource::new(dev)?.allocate(vals.len() * 4, &stream)?;
    buf.copy_from_host(&vals, &stream)?;
    let full = StridedLayout::dense(&[rows, cols], 4, Order::C)?;
    let inner = full.sliced(s![16..80, 32..128])?;
    let view = StridedMemoryView::from_buffer(&buf, inner.clone(), Some(DType::F32))?;
    // A transposed view is refused with the fix spelled out, before the driver sees it.
    let transposed = view.view(view.layout().permuted(&[1, 0])?, Some(DType::F32))?;
    if let Err(e) = transposed.as_tensor_map(&TiledOptions::new(&[16, 16])) {
        println!("transposed view: {e}");
    }
    let tmap = view.as_tensor_map(&TiledOptions::new(&[8, 32]).swizzle(Swizzle::B128))?;
    println!("descriptor for {inner}: {tmap:?}");
    let module = dev.compile_module(
        "tour_tma",
        r#"struct __align__(64) CUtensorMap { unsigned long long opaque[16]; };
        extern "C" __global__ void tile(const __grid_constant__ CUtensorMap m, float* out, int x, int y) {
            __shared__ __align__(1024) float t[8 * 32];
            __shared__ __align__(8) unsigned long long bar;
            unsigned b = (unsigned)__cvta_generic_to_shared(&bar), d = (unsigned)__cvta_generic_to_shared(t);
            if (threadIdx.x == 0) {
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
                asm volatile("fence.proxy.async.shared::cta;");
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(8 * 32 * 4));
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                    :: "r"(d), "l"((unsigned long long)&m), "r"(b), "r"(x), "r"(y) : "memory");
            }
            __syncthreads();
            unsigned ok = 0;
            while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b));
            for (int i = threadIdx.x; i < 8 * 32; i += blockDim.x) {
                int o = i * 4, r = o / 128;                     // 128-byte rows
                out[i] = t[(o ^ ((r & 7) << 4)) / 4];           // undo the 128-byte swizzle
            }
        }"#,
    )?;
    let f = module.load_function("tile").map_err(|e| err(&e))?;
    let mut out = DeviceMemoryResource::new(dev)?.allocate(8 * 32 * 4, &stream)?;
    out.fill(0xCD, &stream)?;
    let (x, y) = (80i32, 20i32); // column 80, row 20 of the view: columns 96.. lie outside
    let optr = out.ptr();
    let mut launch = stream.launch_builder(&f);
    launch.arg(&tmap).arg(&optr).arg(&x).arg(&y);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: (CUtensorMap, float*, int, int) matches the kernel; `out` holds 256 floats.
    unsafe { launch.launch(cfg) }.map_err(|e| err(&e))?;
    let mut tile = vec![0f32; 8 * 32];
    out.copy_to_host(&mut tile, &stream)?;
    let want: Vec<f32> = (0..8 * 32)
        .map(|i| {
            let (r, c) = (16 + y as i64 + i / 32, 32 + x as i64 + i % 32);
            if c < cols {
                (r * cols + c) as f32
            } else {
                0.0
            }
        })
        .collect();
    let ok = tile == want;
    println!(
        "one 8 x 32 tile at (row {y}, col {x}) of the view, through TMA with the 128-byte swizzle: {}",
        if ok { "correct (out-of-bounds columns read as 0)" } else { "WRONG" }
    );
    if !ok {
        return Err(err(&"the TMA tile differs from the host reference"));
    }
    Ok(())
}

/// Views on the host: a transposing copy, and a round trip through DLPack.
fn host_views() -> Result<(), stridekit::Error> {
    println!("\n== Views and DLPack (no GPU needed)");
    let src: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let mut out = StridedMemoryViewMut::from_vec(vec![0f32; 12], &[12])?
        .into_view_mut(StridedLayout::dense(&[3, 4], 4, Order::F)?, None)?;
    out.copy_from(&StridedMemoryView::from_slice(&src, &[3, 4])?, None)?;
    let memory = out.view(StridedLayout::dense(&[12], 4, Order::C)?, None)?;
    println!(
        "(3,4) row-major copied into column-major memory: {:?}",
        memory.to_vec::<f32>()?
    );
    // Out as a DLPack tensor (the consumer becomes the writer), and back in.
    let tensor = out.into_dlpack()?;
    // SAFETY: the tensor came from stridekit; nothing else touches its memory.
    let back = unsafe { StridedMemoryView::from_dlpack(tensor)? };
    println!(
        "back from DLPack: shape {:?}, strides {:?}, flags {:?}",
        back.shape(),
        back.layout().strides(),
        back.imported_flags()
    );
    Ok(())
}

fn main() {
    if let Err(e) = layouts() {
        eprintln!("layout error: {e}");
        std::process::exit(1);
    }
    if let Err(e) = host_views() {
        eprintln!("view error: {e}");
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
