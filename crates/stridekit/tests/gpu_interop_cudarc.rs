//! cudarc interop on the GPU: views of cudarc slices ordered with cudarc's own event
//! tracking, and stridekit buffers lent to cudarc kernels, each side on its own stream,
//! behind slow kernels, so that missing ordering would show in the bytes.

mod common;

use std::sync::Arc;
use stridekit::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use stridekit::{
    DType, Device, DeviceMemoryResource, MemoryResource, Order, StridedLayout, StridedMemoryView,
    StridedMemoryViewMut,
};

const KERNELS: &str = r#"
extern "C" __global__ void slow_fill(unsigned* p, unsigned long long n, unsigned seed, long long spin) {
    long long t0 = clock64();
    while (clock64() - t0 < spin) { }
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = (unsigned)(i * 2654435761ull) ^ seed;
}
extern "C" __global__ void add_one(const unsigned* src, unsigned* dst, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[i] = src[i] + 1u;
}
"#;

const SIDE: usize = 1024;
const N: usize = SIDE * SIDE;
const SPIN: i64 = 300_000_000;

fn cfg() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (264, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn pattern(i: usize, seed: u32) -> u32 {
    (i as u64).wrapping_mul(2654435761) as u32 ^ seed
}

fn kernels(dev: &Device) -> (CudaFunction, CudaFunction) {
    let m = dev.compile_module("interop_cudarc", KERNELS).unwrap();
    (
        m.load_function("slow_fill").unwrap(),
        m.load_function("add_one").unwrap(),
    )
}

fn streams(dev: &Device) -> (Arc<CudaStream>, Arc<CudaStream>, Arc<CudaStream>) {
    (
        dev.new_stream().unwrap(),
        dev.new_stream().unwrap(),
        dev.new_stream().unwrap(),
    )
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_transpose_between_cudarc_slices_is_ordered_with_cudarcs_kernels() {
    let dev = Device::open(0).unwrap();
    let (fill, add) = kernels(&dev);
    let (s1, s2, s3) = streams(&dev);
    let seed = 0x1234_5678u32;
    // cudarc writes `a` on s1, slowly.
    let mut a = s1.alloc_zeros::<u32>(N).unwrap();
    let (n, spin) = (N as u64, SPIN);
    let mut l = s1.launch_builder(&fill);
    l.arg(&mut a).arg(&n).arg(&seed).arg(&spin);
    // SAFETY: (u32*, u64, u32, i64) matches the kernel; `a` holds N u32.
    unsafe { l.launch(cfg()) }.unwrap();
    // stridekit transposes `a` into `b` on s2: it must wait for the fill.
    let mut b = s2.alloc_zeros::<u32>(N).unwrap();
    let c_layout = StridedLayout::dense(&[SIDE as i64, SIDE as i64], 4, Order::C).unwrap();
    let f_layout = StridedLayout::dense(&[SIDE as i64, SIDE as i64], 4, Order::F).unwrap();
    let src = StridedMemoryView::from_cudarc(&a, c_layout).unwrap();
    assert_eq!((src.dtype(), src.device_id()), (Some(DType::U32), 0));
    StridedMemoryViewMut::from_cudarc_mut(&mut b, f_layout)
        .unwrap()
        .copy_from(&src, Some(&s2))
        .unwrap();
    // cudarc reads `b` on s3: it must wait for the transpose.
    let mut c = s3.alloc_zeros::<u32>(N).unwrap();
    let mut l = s3.launch_builder(&add);
    l.arg(&b).arg(&mut c).arg(&n);
    // SAFETY: (const u32*, u32*, u64) matches the kernel; both hold N u32.
    unsafe { l.launch(cfg()) }.unwrap();
    let got = s3.clone_dtoh(&c).unwrap();
    s3.synchronize().unwrap();
    let mut bad = 0;
    for i in 0..SIDE {
        for j in 0..SIDE {
            // b is F-ordered: its element (i, j), at i + j * SIDE, is a's element (i, j),
            // at i * SIDE + j; c is b plus one.
            if got[i + j * SIDE] != pattern(i * SIDE + j, seed).wrapping_add(1) {
                bad += 1;
            }
        }
    }
    assert_eq!(bad, 0, "{bad} elements out of order");
}

#[test]
#[ignore = "needs a CUDA device"]
fn stridekit_buffers_lent_to_cudarc_kernels_are_ordered_both_ways() {
    let dev = Device::open(0).unwrap();
    let (fill, add) = kernels(&dev);
    let (s1, s2, s3) = streams(&dev);
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let n = N as u64;
    // stridekit writes `x` on s1, behind a slow kernel on s1.
    let mut x = mr.allocate(N * 4, &s1).unwrap();
    let mut slow = s1.alloc_zeros::<u32>(N).unwrap();
    let (seed, spin) = (7u32, SPIN);
    let mut l = s1.launch_builder(&fill);
    l.arg(&mut slow).arg(&n).arg(&seed).arg(&spin);
    // SAFETY: as above.
    unsafe { l.launch(cfg()) }.unwrap();
    let dense = StridedLayout::dense(&[N as i64], 4, Order::C).unwrap();
    StridedMemoryViewMut::from_buffer_mut(&mut x, dense.clone(), Some(DType::U32))
        .unwrap()
        .copy_from(
            &StridedMemoryView::from_cudarc(&slow, dense.clone()).unwrap(),
            Some(&s1),
        )
        .unwrap();
    // A cudarc kernel on s2 reads it through a loan.
    let mut y = s2.alloc_zeros::<u32>(N).unwrap();
    {
        let loan = x.as_cudarc::<u32>(&s2).unwrap();
        let mut l = s2.launch_builder(&add);
        l.arg(&loan).arg(&mut y).arg(&n);
        // SAFETY: as above.
        unsafe { l.launch(cfg()) }.unwrap();
    }
    let got = s2.clone_dtoh(&y).unwrap();
    s2.synchronize().unwrap();
    let bad = (0..N)
        .filter(|&i| got[i] != pattern(i, seed).wrapping_add(1))
        .count();
    assert_eq!(bad, 0, "the cudarc kernel read before stridekit's copy");
    // A cudarc kernel on s2 writes it (slowly) through a mutable loan; stridekit then
    // reads it to the host on s3.
    let seed2 = 0xabcd_0001u32;
    {
        let mut loan = x.as_cudarc_mut::<u32>(&s2).unwrap();
        let mut l = s2.launch_builder(&fill);
        l.arg(&mut loan).arg(&n).arg(&seed2).arg(&spin);
        // SAFETY: as above.
        unsafe { l.launch(cfg()) }.unwrap();
    }
    let mut host = vec![0u32; N];
    StridedMemoryViewMut::from_slice_mut(&mut host, dense.clone())
        .unwrap()
        .copy_from(
            &StridedMemoryView::from_buffer(&x, dense, Some(DType::U32)).unwrap(),
            Some(&s3),
        )
        .unwrap();
    let bad = (0..N).filter(|&i| host[i] != pattern(i, seed2)).count();
    assert_eq!(bad, 0, "stridekit read before the cudarc kernel wrote");
    // Loans check what they lend.
    let odd = mr.allocate(6, &s1).unwrap();
    assert!(odd.as_cudarc::<u32>(&s1).is_err());
    x.release(&s3).unwrap();
    dev.synchronize().unwrap();
    let _ = common::random_bytes(1, 1);
}

/// A source or name with a NUL byte is refused with an error, not a panic (NVRTC takes C
/// strings); a good source compiles (to the device's own code, or PTX) and runs.
#[test]
#[ignore = "needs a CUDA device"]
fn compile_module_refuses_nul_bytes_and_runs_what_it_compiles() {
    let dev = Device::open(0).unwrap();
    let e = dev
        .compile_module("nul", "extern \"C\" __global__ void f() {}\0 junk")
        .unwrap_err();
    assert!(e.to_string().contains("NUL byte"), "{e}");
    let e = dev
        .compile_module("n\0ul", "extern \"C\" __global__ void f() {}")
        .unwrap_err();
    assert!(e.to_string().contains("NUL byte"), "{e}");
    let (fill, add) = kernels(&dev);
    let stream = dev.new_stream().unwrap();
    let n = 1usize << 16;
    let mut x = stream.alloc_zeros::<u32>(n).unwrap();
    let mut y = stream.alloc_zeros::<u32>(n).unwrap();
    let (n64, seed, spin) = (n as u64, 0x5eedu32, 0i64);
    let mut b = stream.launch_builder(&fill);
    b.arg(&mut x).arg(&n64).arg(&seed).arg(&spin);
    // SAFETY: slow_fill(p, n, seed, spin) writes p[0 .. n); x holds n u32s.
    unsafe { b.launch(cfg()) }.unwrap();
    let mut b = stream.launch_builder(&add);
    b.arg(&x).arg(&mut y).arg(&n64);
    // SAFETY: add_one(src, dst, n) reads src[0 .. n) and writes dst[0 .. n); both hold n.
    unsafe { b.launch(cfg()) }.unwrap();
    let host = stream.clone_dtoh(&y).unwrap();
    for (i, &v) in host.iter().enumerate() {
        assert_eq!(v, pattern(i, seed).wrapping_add(1), "element {i}");
    }
}
