//! Memory tests that need no GPU: host buffers, foreign owners, and clean errors without a driver.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use stridekit::{
    Buffer, DType, Device, Error, HostMemoryResource, MemoryKind, StridedLayout,
    StridedMemoryViewMut,
};

#[test]
fn without_a_driver_gpu_entry_points_fail_cleanly() {
    if common::driver_present() {
        // On a machine with a driver the GPU tests cover these entry points.
        assert!(Device::count().is_ok());
        return;
    }
    assert!(!stridekit::cuda_available());
    assert!(matches!(Device::count(), Err(Error::NoDriver { .. })));
    let e = Device::open(0).unwrap_err();
    assert!(matches!(e, Error::NoDriver { op: "Device::open" }), "{e}");
    assert!(e.to_string().contains("no CUDA driver"));
    assert!(matches!(
        stridekit::pointer_info(0x1000),
        Err(Error::NoDriver { .. })
    ));
    assert!(matches!(
        stridekit::driver_version(),
        Err(Error::NoDriver { .. })
    ));
}

#[test]
fn host_resource_gives_aligned_zeroed_memory() {
    let b = HostMemoryResource::allocate_host(1000).unwrap();
    assert_eq!(b.size(), 1000);
    assert_eq!(b.kind(), MemoryKind::Host);
    assert_eq!(b.ptr() % 64, 0);
    assert!(b.is_host_accessible() && !b.is_device_accessible());
    assert_eq!(b.device_ordinal(), None);
    let e = HostMemoryResource::allocate_host(0).unwrap();
    assert!(e.is_empty() && e.ptr() == 0);
}

struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn from_handle_keeps_its_owner_until_drop() {
    let drops = Arc::new(AtomicUsize::new(0));
    let data = common::random_bytes(256, 7);
    let ptr = data.as_ptr() as u64;
    // SAFETY: `data` owns 256 bytes at `ptr` and moves into the owner.
    let buf = unsafe { Buffer::from_handle(ptr, 256, (data, DropCounter(drops.clone()))) }.unwrap();
    assert_eq!(buf.ptr(), ptr);
    assert_eq!(buf.kind(), MemoryKind::Host);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(buf);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // SAFETY: a null pointer with a non-zero size is rejected before anything reads it.
    let e = unsafe { Buffer::from_handle(0, 16, ()) }.unwrap_err();
    assert!(e.to_string().contains("null address with size 16"), "{e}");
}

#[test]
fn a_terabyte_host_buffer_is_an_error_or_untouched_memory_never_an_abort() {
    // calloc-backed: on a machine that overcommits, the pages are never touched.
    match HostMemoryResource::allocate_host(1 << 40) {
        Ok(b) => assert_eq!(b.size(), 1 << 40),
        Err(e) => assert!(matches!(e, Error::OutOfMemory { .. }), "{e}"),
    }
}

#[test]
fn host_buffers_are_64_byte_aligned_zeroed_and_whole() {
    for size in [1usize, 15, 16, 17, 63, 64, 65, 4095, 4096, 1 << 20] {
        let mut b = HostMemoryResource::allocate_host(size).unwrap();
        assert_eq!(b.size(), size);
        assert_eq!(b.ptr() % 64, 0, "size {size}: address {:#x}", b.ptr());
        let layout = StridedLayout::new(&[size as i64], &[1], 1).unwrap();
        let mut v = StridedMemoryViewMut::from_buffer_mut(&mut b, layout, Some(DType::U8)).unwrap();
        let bytes = v.as_slice_mut::<u8>().unwrap();
        assert_eq!(bytes.len(), size);
        assert!(bytes.iter().all(|&x| x == 0), "size {size}: not zeroed");
        // Every byte is ours to write (Miri/ASan would flag a short allocation here).
        bytes.fill(0xA5);
        assert!(bytes.iter().all(|&x| x == 0xA5));
    }
}

#[test]
fn host_allocation_failures_are_errors_not_aborts() {
    for size in [usize::MAX, 1usize << 62, (1usize << 62) + 1] {
        let e = HostMemoryResource::allocate_host(size).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
        assert!(e.to_string().contains("could not allocate"), "{e}");
    }
}

#[test]
fn reading_a_huge_broadcast_view_is_an_error_not_a_panic() {
    use stridekit::{StridedLayout, StridedMemoryView};
    let one = [7u8];
    let l = StridedLayout::new(&[1 << 31, 1 << 31], &[0, 0], 1).unwrap();
    let v = StridedMemoryView::from_slice_with_layout(&one, l).unwrap();
    let e = v.to_vec::<u8>().unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
}
