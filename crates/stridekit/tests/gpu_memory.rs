//! Memory resources, buffers and pointer discovery on a real GPU.

mod common;

use common::random_bytes;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use stridekit::cudarc::driver::{sys, DevicePtr};
use stridekit::{
    pointer_info, Buffer, Device, DeviceMemoryResource, DevicePoolOptions, Error,
    HostMemoryResource, ManagedMemoryResource, MemoryKind, MemoryResource, PinnedMemoryResource,
    PointerKind,
};

fn device() -> Device {
    Device::open(0).expect("a CUDA device")
}

fn resources(dev: &Device) -> Vec<(&'static str, Box<dyn MemoryResource>)> {
    vec![
        (
            "device (default pool)",
            Box::new(DeviceMemoryResource::new(dev).unwrap()),
        ),
        (
            "device (dedicated pool)",
            Box::new(
                DeviceMemoryResource::with_options(
                    dev,
                    DevicePoolOptions {
                        dedicated: true,
                        release_threshold: Some(64 << 20),
                    },
                )
                .unwrap(),
            ),
        ),
        ("pinned", Box::new(PinnedMemoryResource::new(dev))),
        (
            "managed",
            Box::new(ManagedMemoryResource::new(dev).unwrap()),
        ),
        ("host", Box::new(HostMemoryResource)),
    ]
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_properties_are_plausible() {
    let dev = device();
    assert!(stridekit::cuda_available());
    assert!(Device::count().unwrap() >= 1);
    assert!(!dev.name().unwrap().is_empty());
    let (major, _) = dev.compute_capability().unwrap();
    assert!(major >= 5);
    assert!(dev.sm_count().unwrap() > 0);
    let total = dev.total_memory().unwrap();
    let free = dev.free_memory().unwrap();
    assert!(free > 0 && free <= total);
    assert!(stridekit::driver_version().unwrap() >= (12, 0));
    let e = Device::open(999).unwrap_err();
    assert!(matches!(e, Error::NoDevice { ordinal: 999, .. }), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_resource_round_trips_random_data() {
    let dev = device();
    let stream = dev.new_stream().unwrap();
    let n = (1 << 20) + 13;
    for (name, mr) in resources(&dev) {
        let data = random_bytes(n, 42);
        let mut a = mr.allocate(n, &stream).unwrap();
        let mut b = mr.allocate(n, &stream).unwrap();
        assert_eq!(a.kind(), mr.kind(), "{name}");
        assert_eq!(a.size(), n);
        // Poison both, then check the poison reads back.
        a.fill(0xAB, &stream).unwrap();
        b.fill(0xCD, &stream).unwrap();
        let mut back = vec![0u8; n];
        a.copy_to_host(&mut back, &stream).unwrap();
        assert!(back.iter().all(|&x| x == 0xAB), "{name}: fill");
        a.copy_from_host(&data, &stream).unwrap();
        b.copy_from(&a, &stream).unwrap();
        back.fill(0);
        b.copy_to_host(&mut back, &stream).unwrap();
        assert!(back == data, "{name}: round trip differs");
        // Sizes must match.
        let e = b.copy_from_host(&data[1..], &stream).unwrap_err();
        assert!(e.to_string().contains("sizes must match"), "{e}");
        let small = mr.allocate(16, &stream).unwrap();
        assert!(b.copy_from(&small, &stream).is_err());
        assert!(mr.allocate(0, &stream).unwrap().is_empty());
    }
    stream.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn pointer_discovery_for_every_kind_of_memory() {
    let dev = device();
    let stream = dev.new_stream().unwrap();

    let pool = DeviceMemoryResource::new(&dev)
        .unwrap()
        .allocate(4096, &stream)
        .unwrap();
    let info = pointer_info(pool.ptr()).unwrap();
    assert_eq!(info.kind, PointerKind::Device);
    assert_eq!(info.device, Some(0));
    assert!(info.device_accessible && !info.host_accessible);

    // A plain cuMemAlloc allocation, through cudarc.
    let plain = stream.alloc_zeros::<u8>(4096).unwrap();
    let (plain_ptr, _sync) = plain.device_ptr(&stream);
    let info = pointer_info(plain_ptr).unwrap();
    assert_eq!((info.kind, info.device), (PointerKind::Device, Some(0)));

    let pinned = PinnedMemoryResource::new(&dev)
        .allocate(4096, &stream)
        .unwrap();
    let info = pointer_info(pinned.ptr()).unwrap();
    assert_eq!(info.kind, PointerKind::PinnedHost);
    assert!(info.host_accessible && info.device_accessible);

    let managed = ManagedMemoryResource::new(&dev)
        .unwrap()
        .allocate(4096, &stream)
        .unwrap();
    let info = pointer_info(managed.ptr()).unwrap();
    assert_eq!(info.kind, PointerKind::Managed);
    assert!(info.host_accessible && info.device_accessible);

    // Host memory registered with cuMemHostRegister.
    let mut reg = vec![0u8; 1 << 16];
    dev.context().bind_to_thread().unwrap();
    // SAFETY: `reg` is a live allocation of that size; unregistered below before it drops.
    let status = unsafe {
        sys::cuMemHostRegister_v2(
            reg.as_mut_ptr().cast(),
            reg.len(),
            sys::CU_MEMHOSTREGISTER_PORTABLE,
        )
    };
    assert_eq!(status, sys::CUresult::CUDA_SUCCESS);
    let info = pointer_info(reg.as_ptr() as u64).unwrap();
    assert_eq!(info.kind, PointerKind::PinnedHost);
    assert!(info.host_accessible);
    assert_eq!(
        // SAFETY: registered above.
        unsafe { sys::cuMemHostUnregister(reg.as_mut_ptr().cast()) },
        sys::CUresult::CUDA_SUCCESS
    );

    // Ordinary pageable memory: "not a CUDA pointer" is host-only, not an error.
    let pageable = vec![1u8; 4096];
    let info = pointer_info(pageable.as_ptr() as u64).unwrap();
    assert_eq!(info.kind, PointerKind::Pageable);
    assert_eq!(info.device, None, "the driver's -2 must read as no device");
    assert!(info.host_accessible && !info.device_accessible);

    // from_handle discovers the same.
    // SAFETY: `pool` outlives the wrapping buffer (dropped first below).
    let wrapped = unsafe { Buffer::from_handle(pool.ptr(), 4096, ()) }.unwrap();
    assert_eq!(
        (wrapped.kind(), wrapped.device_ordinal()),
        (MemoryKind::Device, Some(0))
    );
    drop(wrapped);
    // SAFETY: as above, for the managed buffer.
    let wrapped = unsafe { Buffer::from_handle(managed.ptr(), 4096, ()) }.unwrap();
    assert_eq!(wrapped.kind(), MemoryKind::Managed);
}

struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn from_handle_keeps_a_device_owner_alive_exactly_until_release() {
    let dev = device();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let inner = mr.allocate(1 << 16, &stream).unwrap();
    let (ptr, size) = (inner.ptr(), inner.size());
    // SAFETY: the owner holds `inner`, so the memory lives exactly as long as the wrapper.
    let mut wrapped =
        unsafe { Buffer::from_handle(ptr, size, (inner, DropCounter(drops.clone()))) }.unwrap();
    assert_eq!(wrapped.kind(), MemoryKind::Device);
    let data = random_bytes(size, 3);
    wrapped.copy_from_host(&data, &stream).unwrap();
    let mut back = vec![0u8; size];
    wrapped.copy_to_host(&mut back, &stream).unwrap();
    assert_eq!(back, data);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    wrapped.release(&stream).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
#[ignore = "needs a CUDA device"]
fn expected_allocation_failure_is_an_error_and_the_pool_survives() {
    let dev = device();
    let stream = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let too_much = dev.total_memory().unwrap() * 2;
    let e = mr.allocate(too_much, &stream).unwrap_err();
    match &e {
        Error::Driver { call, source, .. } => {
            assert_eq!(*call, "cuMemAllocFromPoolAsync");
            assert_eq!(source.0, sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY, "{e}");
        }
        other => panic!("expected a driver error, got {other}"),
    }
    let mut ok = mr.allocate(1 << 20, &stream).unwrap();
    ok.fill(1, &stream).unwrap();
    stream.synchronize().unwrap();
    let managed = ManagedMemoryResource::new(&dev).unwrap();
    assert!(managed.allocate(usize::MAX / 2, &stream).is_err());
    let pinned = PinnedMemoryResource::new(&dev);
    assert!(pinned.allocate(usize::MAX / 2, &stream).is_err());
}

#[test]
#[ignore = "needs a CUDA device"]
fn buffers_keep_their_context_alive() {
    // Every handle to the device is dropped; the buffer still works and frees cleanly.
    let (mut buf, stream) = {
        let dev = device();
        let stream = dev.new_stream().unwrap();
        let mr = DeviceMemoryResource::with_options(
            &dev,
            DevicePoolOptions {
                dedicated: true,
                release_threshold: None,
            },
        )
        .unwrap();
        (mr.allocate(1024, &stream).unwrap(), stream)
    };
    let data = random_bytes(1024, 9);
    buf.copy_from_host(&data, &stream).unwrap();
    let mut back = vec![0u8; 1024];
    buf.copy_to_host(&mut back, &stream).unwrap();
    assert_eq!(back, data);
    drop(stream);
    drop(buf);
}

#[test]
#[ignore = "needs a CUDA device"]
fn copies_across_streams_order_the_release() {
    let dev = device();
    let alloc_stream = dev.new_stream().unwrap();
    let work = dev.new_stream().unwrap();
    let mr = DeviceMemoryResource::new(&dev).unwrap();
    let n = 64 << 20;
    let data = random_bytes(n, 11);
    let mut src = mr.allocate(n, &alloc_stream).unwrap();
    src.copy_from_host(&data, &alloc_stream).unwrap();
    let mut dst = PinnedMemoryResource::new(&dev)
        .allocate(n, &alloc_stream)
        .unwrap();
    dst.fill(0, &alloc_stream).unwrap();
    alloc_stream.synchronize().unwrap();
    dst.copy_from(&src, &work).unwrap();
    // Released on its own stream right away: it must wait for the copy on `work`.
    drop(src);
    work.synchronize().unwrap();
    let mut back = vec![0u8; n];
    dst.copy_to_host(&mut back, &work).unwrap();
    assert!(back == data);
}
