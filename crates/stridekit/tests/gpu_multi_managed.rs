//! Managed memory and TMA on a second GPU (run on a two-GPU machine; skipped on one).

use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
use stridekit::managed::{self, Location};
use stridekit::tma::TiledOptions;
use stridekit::{
    DType, Device, DeviceMemoryResource, ManagedMemoryResource, MemoryResource, Order,
    StridedLayout, StridedMemoryView,
};

fn second_gpu() -> Option<Device> {
    let n = Device::count().unwrap_or(0);
    if n < 2 {
        eprintln!("skipping: {n} GPU(s) visible; the multi-GPU tests need two");
        return None;
    }
    Some(Device::open(1).unwrap())
}

const SUM: &str = r#"
extern "C" __global__ void xor_words(const unsigned int* p, unsigned long long n, unsigned int* out) {
    unsigned int acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) acc ^= p[i] * 2654435761u + (unsigned int)i;
    atomicXor(out, acc);
}
"#;

#[test]
#[ignore = "needs a CUDA device"]
fn managed_memory_prefetched_to_the_second_gpu_and_read_there() {
    let Some(d1) = second_gpu() else { return };
    let d0 = Device::open(0).unwrap();
    let s1 = d1.new_stream().unwrap();
    let s0 = d0.new_stream().unwrap();
    let n = 1usize << 20;
    let words: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x55aa)
        .collect();
    let mr = ManagedMemoryResource::new(&d0).unwrap();
    let mut buf = mr.allocate(n * 4, &s0).unwrap();
    buf.copy_from_host(&words, &s0).unwrap();
    buf.set_preferred_location(Location::Device(1)).unwrap();
    assert_eq!(buf.preferred_location().unwrap(), Some(Location::Device(1)));
    buf.add_accessed_by(Location::Device(0)).unwrap();
    buf.prefetch(Location::Device(1), &s1).unwrap();
    s1.synchronize().unwrap();
    assert_eq!(
        buf.last_prefetch_location().unwrap(),
        Some(Location::Device(1))
    );
    // A kernel on device 1 reads it.
    let m = d1.compile_module("multi_managed", SUM).unwrap();
    let f = m.load_function("xor_words").unwrap();
    let mut out = DeviceMemoryResource::new(&d1)
        .unwrap()
        .allocate(4, &s1)
        .unwrap();
    out.fill(0, &s1).unwrap();
    let (p, len, o) = (buf.ptr(), n as u64, out.ptr());
    let mut l = s1.launch_builder(&f);
    l.arg(&p).arg(&len).arg(&o);
    let cfg = LaunchConfig {
        grid_dim: (64, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: (const u32*, u64, u32*) matches the kernel; both ranges are live.
    unsafe { l.launch(cfg) }.unwrap();
    let mut got = [0u32];
    out.copy_to_host(&mut got, &s1).unwrap();
    let want = words.iter().enumerate().fold(0u32, |a, (i, &w)| {
        a ^ (w.wrapping_mul(2654435761).wrapping_add(i as u32))
    });
    assert_eq!(got[0], want);
    // Batches with a location per range, on both devices.
    let (a, b) = (
        mr.allocate(1 << 16, &s0).unwrap(),
        mr.allocate(1 << 16, &s0).unwrap(),
    );
    managed::prefetch_batch(
        &[a.range(), b.range()],
        &[Location::Device(1), Location::Device(0)],
        &s1,
    )
    .unwrap();
    s1.synchronize().unwrap();
    assert_eq!(
        a.last_prefetch_location().unwrap(),
        Some(Location::Device(1))
    );
    assert_eq!(
        b.last_prefetch_location().unwrap(),
        Some(Location::Device(0))
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn tma_descriptors_and_pools_on_the_second_gpu() {
    let Some(d1) = second_gpu() else { return };
    if d1.compute_capability().unwrap() < (9, 0) {
        eprintln!("skipping: TMA needs compute capability 9.0");
        return;
    }
    let s1 = d1.new_stream().unwrap();
    let buf = DeviceMemoryResource::new(&d1)
        .unwrap()
        .allocate(256 * 128 * 4, &s1)
        .unwrap();
    assert_eq!(buf.device_ordinal(), Some(1));
    let l = StridedLayout::dense(&[256, 128], 4, Order::C).unwrap();
    let v = StridedMemoryView::from_buffer(&buf, l, Some(DType::F32)).unwrap();
    let t = v.as_tensor_map(&TiledOptions::new(&[32, 64])).unwrap();
    assert_eq!(t.device_ordinal(), 1);
    // Device ordinals past the last are refused with the count.
    let n = Device::count().unwrap();
    let e = Device::open(n).unwrap_err().to_string();
    assert!(e.contains(&format!("{n} device(s) are visible")), "{e}");
}
