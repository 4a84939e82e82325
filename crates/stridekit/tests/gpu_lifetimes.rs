//! Memory outlives every GPU operation queued on it, whatever stream the operation ran
//! on and whichever way the memory is given back; host reads see what library copies
//! wrote; foreign stream handles are checked at the edge.
//!
//! Each test queues a long spin kernel first, so that a copy queued behind it is still
//! pending when the memory is released (or read) through another stream. Without the
//! ordering, the pool hands the memory to the next allocation at once and the pending
//! copy overwrites it afterwards (the bytes checked below).

mod common;

use std::sync::Arc;
use stridekit::cudarc::driver::{result, LaunchConfig, PushKernelArg};
use stridekit::stream::{wait_for_producer, StreamOrder, StreamValue};
use stridekit::{
    Buffer, CudaStream, DType, Device, DeviceMemoryResource, ManagedMemoryResource, MemoryResource,
    Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut,
};

const SPIN: &str = r#"
extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}
"#;

/// 16 MiB of u32.
const N: usize = 4 << 20;

fn spin(dev: &Device, stream: &Arc<CudaStream>) {
    let m = dev.compile_module("lifetime_spin", SPIN).unwrap();
    let f = m.load_function("spin").unwrap();
    let cycles: i64 = 400_000_000; // about 0.2 s on an H100
    let mut l = stream.launch_builder(&f);
    l.arg(&cycles);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes one long long.
    unsafe { l.launch(cfg) }.unwrap();
}

fn dense(n: usize) -> StridedLayout {
    StridedLayout::dense(&[n as i64], 4, Order::C).unwrap()
}

/// A transposed view of `n` u32 (so the copy runs the strided kernel, not a memcpy).
fn transposed(n: usize) -> StridedLayout {
    let rows = 1024i64;
    StridedLayout::dense(&[rows, n as i64 / rows], 4, Order::F).unwrap()
}

fn random_source(mr: &DeviceMemoryResource, stream: &Arc<CudaStream>, seed: u64) -> Buffer {
    let mut src = mr.allocate(N * 4, stream).unwrap();
    src.copy_from_host(&common::random_bytes(N * 4, seed), stream)
        .unwrap();
    src
}

/// Allocates `N * 4` bytes on `stream`, fills them with 0x5a there, and checks (after
/// everything on the device is done) that no earlier copy landed in them.
fn next_allocation_is_untouched(
    dev: &Device,
    mr: &DeviceMemoryResource,
    stream: &Arc<CudaStream>,
    what: &str,
) {
    let mut next = mr.allocate(N * 4, stream).unwrap();
    next.fill(0x5a, stream).unwrap();
    stream.synchronize().unwrap();
    dev.synchronize().unwrap();
    let mut back = vec![0u8; N * 4];
    next.copy_to_host(&mut back, stream).unwrap();
    let bad = back.iter().filter(|&&b| b != 0x5a).count();
    assert_eq!(
        bad, 0,
        "{what}: {bad} bytes of the next allocation were overwritten"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn release_on_another_stream_waits_for_a_queued_copy() {
    let dev = Device::open(0).unwrap();
    let (a, b) = (dev.new_stream().unwrap(), dev.new_stream().unwrap());
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    for round in 0..2 {
        let src = random_source(&mr, &a, 11 + round);
        a.synchronize().unwrap();
        let mut target = mr.allocate(N * 4, &a).unwrap();
        spin(&dev, &a);
        if round == 0 {
            // A strided copy through views.
            let s = StridedMemoryView::from_buffer(&src, transposed(N), Some(DType::U32)).unwrap();
            let mut d = StridedMemoryViewMut::from_buffer_mut(
                &mut target,
                dense(N).reshaped(&[1024, (N / 1024) as i64]).unwrap(),
                Some(DType::U32),
            )
            .unwrap();
            d.copy_from(&s, Some(&a)).unwrap();
        } else {
            // A contiguous buffer copy.
            target.copy_from(&src, &a).unwrap();
        }
        target.release(&b).unwrap();
        next_allocation_is_untouched(&dev, &mr, &b, &format!("round {round}"));
        drop(src);
        dev.synchronize().unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn dropping_a_foreign_buffer_waits_for_a_queued_copy() {
    let dev = Device::open(0).unwrap();
    let (a, b) = (dev.new_stream().unwrap(), dev.new_stream().unwrap());
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    for round in 0..2 {
        let src = random_source(&mr, &a, 21 + round);
        // The owner frees stream-ordered memory on `b` when it is dropped.
        let owner = mr.allocate(N * 4, &b).unwrap();
        b.synchronize().unwrap();
        a.synchronize().unwrap();
        let ptr = owner.ptr();
        let s = StridedMemoryView::from_buffer(&src, transposed(N), Some(DType::U32)).unwrap();
        let layout = dense(N).reshaped(&[1024, (N / 1024) as i64]).unwrap();
        spin(&dev, &a);
        if round == 0 {
            // SAFETY: `owner` owns the bytes and moves into the buffer; nobody else uses them.
            let mut foreign = unsafe { Buffer::from_handle(ptr, N * 4, owner) }.unwrap();
            let mut d =
                StridedMemoryViewMut::from_buffer_mut(&mut foreign, layout, Some(DType::U32))
                    .unwrap();
            d.copy_from(&s, Some(&a)).unwrap();
            drop(d);
            drop(foreign);
        } else {
            // SAFETY: as above.
            let mut d = unsafe {
                StridedMemoryViewMut::from_foreign_mut(ptr, N * 4, layout, Some(DType::U32), owner)
            }
            .unwrap();
            d.copy_from(&s, Some(&a)).unwrap();
            drop(d);
        }
        next_allocation_is_untouched(&dev, &mr, &b, &format!("round {round}"));
        drop(src);
        dev.synchronize().unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_reads_see_copies_made_on_other_streams() {
    let dev = Device::open(0).unwrap();
    let (a, b) = (dev.new_stream().unwrap(), dev.new_stream().unwrap());
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let bytes = common::random_bytes(N * 4, 31);
    let src = random_source(&mr, &a, 31);
    a.synchronize().unwrap();
    let s = StridedMemoryView::from_buffer(&src, dense(N), Some(DType::U32)).unwrap();

    // Device to device on `a` (behind a spin), then device to pageable host on `b`.
    let mut mid = mr.allocate(N * 4, &a).unwrap();
    mid.fill(0xee, &a).unwrap();
    spin(&dev, &a);
    StridedMemoryViewMut::from_buffer_mut(&mut mid, dense(N), Some(DType::U32))
        .unwrap()
        .copy_from(&s, Some(&a))
        .unwrap();
    let mut host = vec![0u32; N];
    StridedMemoryViewMut::from_slice_mut(&mut host, dense(N))
        .unwrap()
        .copy_from(
            &StridedMemoryView::from_buffer(&mid, dense(N), Some(DType::U32)).unwrap(),
            Some(&b),
        )
        .unwrap();
    assert!(
        bytemuck::cast_slice::<u32, u8>(&host) == &bytes[..],
        "pageable host read on another stream"
    );

    // Into managed memory on `a` (behind a spin), then read on the host with to_vec.
    let managed = ManagedMemoryResource::new(&dev).unwrap();
    let mut m: Buffer = managed.allocate(N * 4, &a).unwrap().into();
    m.fill(0xee, &a).unwrap();
    spin(&dev, &a);
    StridedMemoryViewMut::from_buffer_mut(&mut m, dense(N), Some(DType::U32))
        .unwrap()
        .copy_from(&s, Some(&a))
        .unwrap();
    let v = StridedMemoryView::from_buffer(&m, dense(N), Some(DType::U32)).unwrap();
    let read: Vec<u32> = v.to_vec().unwrap();
    assert!(
        bytemuck::cast_slice::<u32, u8>(&read) == &bytes[..],
        "managed to_vec after a copy on another stream"
    );

    // Buffer::copy_to_host on `b` after a buffer copy on `a`.
    let mut mid2 = mr.allocate(N * 4, &a).unwrap();
    spin(&dev, &a);
    mid2.copy_from(&src, &a).unwrap();
    let mut back = vec![0u8; N * 4];
    mid2.copy_to_host(&mut back, &b).unwrap();
    assert!(back == bytes, "copy_to_host on another stream");
    dev.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn forged_stream_handles_are_errors_and_real_ones_work() {
    let dev = Device::open(0).unwrap();
    let s = dev.new_stream().unwrap();
    for forged in [0x1234i64, 0x7f00_0000_0003, 4095] {
        let v = StridedMemoryViewMut::from_vec(vec![0u32; 16], &[16]).unwrap();
        drop(v);
        let value = StreamValue::decode(forged).unwrap();
        // SAFETY: these values are refused before any driver call (what is tested).
        let e = unsafe { value.resolve_handle(0) }.unwrap_err().to_string();
        assert!(e.contains("is not a stream handle"), "{forged:#x}: {e}");
        // Without `unsafe`, no handle reaches the driver at all.
        assert!(value.resolve(0).is_err());
    }
    assert_eq!(StreamValue::decode(0).unwrap(), StreamValue::LegacyDefault);
    // A live handle resolves to a stream of its device, usable for copies.
    // SAFETY: `s` is alive for the whole test.
    let order = unsafe { StreamValue::Handle(s.cu_stream() as usize).resolve_handle(0) }.unwrap();
    let StreamOrder::On(borrowed) = &order else {
        panic!("a handle resolved to no stream")
    };
    assert_eq!(borrowed.cu_stream(), s.cu_stream());
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let src = random_source(&mr, &s, 41);
    let mut out = vec![0u32; N];
    StridedMemoryViewMut::from_slice_mut(&mut out, dense(N))
        .unwrap()
        .copy_from_ordered(
            &StridedMemoryView::from_buffer(&src, dense(N), Some(DType::U32)).unwrap(),
            &order,
            &Default::default(),
        )
        .unwrap();
    assert!(bytemuck::cast_slice::<u32, u8>(&out) == &common::random_bytes(N * 4, 41)[..]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn ordering_streams_leaves_the_callers_context_as_it_was() {
    let dev = Device::open(0).unwrap();
    let (p, c) = (dev.new_stream().unwrap(), dev.new_stream().unwrap());
    std::thread::spawn(move || {
        // A fresh thread has no current context; it must have none afterwards.
        assert_eq!(result::ctx::get_current().unwrap(), None);
        wait_for_producer(&p, &c).unwrap();
        // SAFETY: `c` is alive for the call.
        let order =
            unsafe { StreamValue::Handle(c.cu_stream() as usize).resolve_handle(0) }.unwrap();
        assert!(matches!(order, StreamOrder::On(_)));
        assert_eq!(
            result::ctx::get_current().unwrap(),
            None,
            "the thread's context changed"
        );
    })
    .join()
    .unwrap();
}

/// Drops `stream` (destroying it) when dropped itself, and says when.
struct StreamOwner {
    stream: Option<Arc<CudaStream>>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for StreamOwner {
    fn drop(&mut self) {
        drop(self.stream.take());
        self.dropped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_borrowed_allocation_stream_is_kept_alive_until_the_release() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dev = Device::open(0).unwrap();
    let owned = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    // The buffer is allocated on a borrowed handle of `owned`, as a Python stream object
    // lends its handle; the keeper owns the real stream.
    // SAFETY: the keeper below keeps `owned` alive until the buffer is released.
    let order =
        unsafe { StreamValue::Handle(owned.cu_stream() as usize).resolve_handle(0) }.unwrap();
    let StreamOrder::On(borrowed) = order else {
        panic!("a handle resolved to no stream")
    };
    let mut b = mr.allocate(N * 4, &borrowed).unwrap();
    drop(borrowed);
    let dropped = Arc::new(AtomicBool::new(false));
    b.keep_release_stream_alive(StreamOwner {
        stream: Some(owned),
        dropped: dropped.clone(),
    });
    spin(&dev, b.stream().unwrap());
    assert!(
        !dropped.load(Ordering::SeqCst),
        "the keeper went before the release"
    );
    drop(b);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the keeper outlived its buffer"
    );
}
