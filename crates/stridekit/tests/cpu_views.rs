//! The two view types: what each can do, and that the owned views keep their memory.

use stridekit::{s, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};

fn assert_send_sync<T: Send + Sync>() {}
fn assert_clone<T: Clone>() {}

#[test]
fn shared_views_clone_and_cross_threads_mutable_ones_move() {
    assert_send_sync::<StridedMemoryView<'static>>();
    assert_clone::<StridedMemoryView<'static>>();
    assert_send_sync::<StridedMemoryViewMut<'static>>();
    let data: Vec<u32> = (0..64).collect();
    let v = StridedMemoryView::from_slice(&data, &[8, 8]).unwrap();
    let sums: Vec<u64> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let c = v.clone();
                sc.spawn(move || c.to_vec::<u32>().unwrap().iter().map(|&x| x as u64).sum())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sums, vec![2016; 4]);
    assert!(v.is_read_only());
}

#[test]
fn reborrows_write_then_hand_the_memory_back() {
    let src: Vec<u32> = (0..16).collect();
    let sv = StridedMemoryView::from_slice(&src, &[4, 4]).unwrap();
    let mut dst = vec![0u32; 16];
    let full = StridedLayout::dense(&[4, 4], 4, Order::C).unwrap();
    let mut w = StridedMemoryViewMut::from_slice_mut(&mut dst, full.clone()).unwrap();
    assert!(!w.is_read_only());
    {
        // Write the transpose through a reborrow, then the first row again through another.
        let t = full.permuted(&[1, 0]).unwrap();
        w.view_mut(t, None).unwrap().copy_from(&sv, None).unwrap();
        let row = full.sliced(s![0..1, ..]).unwrap();
        let mut r = w.reborrow().into_view_mut(row.clone(), None).unwrap();
        r.copy_from(&sv.view(row, None).unwrap(), None).unwrap();
    }
    // A read-only look while no write is possible, then another write.
    assert_eq!(w.as_view().to_vec::<u32>().unwrap()[4..8], [1, 5, 9, 13]);
    let ro = w.into_read_only();
    let again = ro.clone();
    assert_eq!(again.to_vec::<u32>().unwrap()[..4], [0, 1, 2, 3]);
    drop((ro, again));
    assert_eq!(dst[4..8], [1, 5, 9, 13]);
}

#[test]
fn owned_views_keep_their_memory_after_the_maker_is_gone() {
    let w = StridedMemoryViewMut::from_vec((0..12u16).collect::<Vec<_>>(), &[3, 4]).unwrap();
    let shared = w.into_read_only();
    let views: Vec<StridedMemoryView<'static>> = (0..3).map(|_| shared.clone()).collect();
    drop(shared);
    for v in views {
        assert_eq!(v.to_vec::<u16>().unwrap(), (0..12).collect::<Vec<_>>());
    }
    let l = StridedLayout::dense(&[4], 4, Order::C).unwrap();
    let data = vec![7u32; 4];
    let ptr = data.as_ptr() as u64;
    let buf = {
        // SAFETY: `data` owns the 16 bytes at `ptr` and moves into the buffer.
        unsafe { stridekit::Buffer::from_handle(ptr, 16, data) }.unwrap()
    };
    let w = StridedMemoryViewMut::from_owned_buffer(buf, l.clone(), None).unwrap();
    let r = w.into_read_only();
    assert_eq!(r.view(l, None).unwrap().to_vec::<u32>().unwrap(), [7; 4]);
}

#[test]
fn a_writable_view_of_a_view_is_validated_like_a_new_one() {
    let mut dst = vec![0u8; 8];
    let l = StridedLayout::dense(&[8], 1, Order::C).unwrap();
    let mut w = StridedMemoryViewMut::from_slice_mut(&mut dst, l).unwrap();
    let too_big = StridedLayout::dense(&[9], 1, Order::C).unwrap();
    let e = w.view_mut(too_big, None).unwrap_err().to_string();
    assert!(
        e.contains("StridedMemoryViewMut::view_mut") && e.contains("the memory has 8 bytes"),
        "{e}"
    );
}

#[test]
fn empty_views_keep_where_their_memory_lives() {
    use stridekit::{MemoryKind, StridedLayout, StridedMemoryView, StridedMemoryViewMut};
    let l = StridedLayout::new(&[3, 0], &[1, 3], 8).unwrap();
    let v = StridedMemoryView::empty_on(MemoryKind::Device, Some(1), l.clone(), None).unwrap();
    assert_eq!(
        (v.kind(), v.device_ordinal()),
        (MemoryKind::Device, Some(1))
    );
    assert!(v.is_device_accessible() && !v.is_host_accessible());
    assert_eq!(v.layout(), &l);
    let w = StridedMemoryViewMut::empty_on(MemoryKind::Host, None, l, None).unwrap();
    assert_eq!(w.kind(), MemoryKind::Host);
    // Elements, or device memory with no device: refused.
    let full = StridedLayout::new(&[2], &[1], 4).unwrap();
    let e = StridedMemoryView::empty_on(MemoryKind::Host, None, full, None).unwrap_err();
    assert!(e.to_string().contains("has 2 elements"), "{e}");
    let z = StridedLayout::new(&[0], &[1], 4).unwrap();
    assert!(StridedMemoryView::empty_on(MemoryKind::Device, None, z, None).is_err());
    // Asking for the current device never fails for want of a driver or a context.
    let cur = stridekit::stream::current_device().unwrap();
    if !stridekit::cuda_available() {
        assert_eq!(cur, None);
    }
}
