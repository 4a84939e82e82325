//! Managed memory on a real GPU: advice read back from the driver, prefetches, discards,
//! batches, and kernels and the host seeing the right bytes afterwards.

mod common;

use common::random_bytes;
use std::sync::Arc;
use stridekit::cudarc::driver::{sys, CudaStream, LaunchConfig, PushKernelArg};
use stridekit::managed::{self, ExclusiveRange, Location};
use stridekit::{
    Device, DeviceMemoryResource, Error, ManagedBuffer, ManagedMemoryResource, ManagedRange,
    MemoryResource,
};

const KERNELS: &str = r#"
extern "C" __global__ void write_pattern(unsigned char* p, unsigned long long n, unsigned int seed) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        p[i] = (unsigned char)((i * 2654435761ull + seed) >> 13);
    }
}
extern "C" __global__ void xor_into(const unsigned char* src, unsigned char* dst, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        dst[i] = src[i] ^ 0x5a;
    }
}
"#;

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u64)
        .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed as u64)) >> 13) as u8)
        .collect()
}

fn setup() -> (Device, Arc<CudaStream>, ManagedMemoryResource) {
    let dev = Device::open(0).expect("a CUDA device");
    let stream = dev.new_stream().unwrap();
    let mr = ManagedMemoryResource::new(&dev).unwrap();
    (dev, stream, mr)
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(256).clamp(1, 1024) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn write_pattern(dev: &Device, stream: &Arc<CudaStream>, r: ManagedRange<'_>, seed: u32) {
    let m = dev.compile_module("managed_test_kernels", KERNELS).unwrap();
    let f = m.load_function("write_pattern").unwrap();
    let (p, n) = (r.ptr(), r.size() as u64);
    let mut l = stream.launch_builder(&f);
    l.arg(&p).arg(&n).arg(&seed);
    // SAFETY: (unsigned char*, u64, u32) matches the kernel; the range is live managed memory.
    unsafe { l.launch(cfg(r.size())) }.unwrap();
}

fn host_write(b: &ManagedBuffer, data: &[u8]) {
    assert_eq!(data.len(), b.size());
    // SAFETY: managed memory is host-accessible; tests synchronise before touching it and
    // nothing else accesses these bytes meanwhile.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), b.ptr() as *mut u8, data.len()) }
}

fn host_read(b: &ManagedBuffer) -> Vec<u8> {
    // SAFETY: as for host_write.
    unsafe { std::slice::from_raw_parts(b.ptr() as *const u8, b.size()) }.to_vec()
}

#[test]
#[ignore = "needs a CUDA device"]
fn advice_is_set_and_read_back() {
    let (_dev, stream, mr) = setup();
    let buf = mr.allocate(4 << 20, &stream).unwrap();
    host_write(&buf, &random_bytes(4 << 20, 1));

    assert!(!buf.read_mostly().unwrap());
    buf.set_read_mostly(true).unwrap();
    assert!(buf.read_mostly().unwrap());
    buf.set_read_mostly(false).unwrap();
    assert!(!managed::read_mostly(&buf).unwrap());

    assert_eq!(buf.preferred_location().unwrap(), None);
    buf.set_preferred_location(Location::Device(0)).unwrap();
    assert_eq!(buf.preferred_location().unwrap(), Some(Location::Device(0)));
    buf.set_preferred_location(Location::Host).unwrap();
    assert_eq!(buf.preferred_location().unwrap(), Some(Location::Host));
    // With NUMA config 0 the driver keeps a host NUMA preference as "host"; with NUMA it
    // reports the node. Either way the read-back names the host side, never "none".
    buf.set_preferred_location(Location::HostNuma(0)).unwrap();
    let got = buf.preferred_location().unwrap();
    assert!(
        matches!(got, Some(Location::Host) | Some(Location::HostNuma(0))),
        "{got:?}"
    );
    buf.unset_preferred_location().unwrap();
    assert_eq!(buf.preferred_location().unwrap(), None);

    // Sub-ranges carry their own advice.
    let half = buf.range().sub(2 << 20, 2 << 20).unwrap();
    managed::set_preferred_location(half, Location::Device(0)).unwrap();
    assert_eq!(
        managed::preferred_location(half).unwrap(),
        Some(Location::Device(0))
    );
    let first = buf.range().sub(0, 2 << 20).unwrap();
    assert_eq!(managed::preferred_location(first).unwrap(), None);
    // A range whose halves differ has no single preferred location.
    assert_eq!(buf.preferred_location().unwrap(), None);

    // Bad locations never reach the driver.
    let e = buf
        .set_preferred_location(Location::HostNumaCurrent)
        .unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    let e = buf
        .set_preferred_location(Location::Device(99))
        .unwrap_err();
    assert!(e.to_string().contains("device 99 does not exist"), "{e}");
    // The data survived all of it.
    stream.synchronize().unwrap();
    assert_eq!(host_read(&buf), random_bytes(4 << 20, 1));
}

#[test]
#[ignore = "needs a CUDA device"]
fn accessed_by_add_remove_replace() {
    let (_dev, stream, mr) = setup();
    let buf = mr.allocate(1 << 20, &stream).unwrap();
    assert!(buf.accessed_by().unwrap().is_empty());
    buf.add_accessed_by(Location::Device(0)).unwrap();
    let set = buf.accessed_by().unwrap();
    assert_eq!(set.len(), 1);
    assert!(set.contains(&Location::Device(0)));
    buf.add_accessed_by(Location::Host).unwrap();
    assert_eq!(
        buf.accessed_by().unwrap().iter().collect::<Vec<_>>(),
        vec![Location::Device(0), Location::Host]
    );
    buf.remove_accessed_by(Location::Device(0)).unwrap();
    assert_eq!(
        buf.accessed_by().unwrap().iter().collect::<Vec<_>>(),
        vec![Location::Host]
    );
    // Removing what is not there is fine.
    buf.remove_accessed_by(Location::Device(0)).unwrap();

    buf.replace_accessed_by([Location::Device(0)]).unwrap();
    assert_eq!(
        buf.accessed_by().unwrap().iter().collect::<Vec<_>>(),
        vec![Location::Device(0)]
    );
    // A bad element anywhere changes nothing.
    let e = buf
        .replace_accessed_by([Location::Host, Location::HostNuma(0)])
        .unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    let e = buf
        .replace_accessed_by([Location::Host, Location::Device(99)])
        .unwrap_err();
    assert!(e.to_string().contains("device 99 does not exist"), "{e}");
    assert_eq!(
        buf.accessed_by().unwrap().iter().collect::<Vec<_>>(),
        vec![Location::Device(0)]
    );
    buf.replace_accessed_by([]).unwrap();
    assert!(buf.accessed_by().unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA device"]
fn prefetch_moves_pages_and_keeps_data() {
    let (dev, stream, mr) = setup();
    let n = 8 << 20;
    let src = mr.allocate(n, &stream).unwrap();
    let dst = mr.allocate(n, &stream).unwrap();
    let data = random_bytes(n, 2);
    host_write(&src, &data);
    host_write(&dst, &vec![0xEE; n]);
    assert_eq!(src.last_prefetch_location().unwrap(), None);

    src.prefetch(Location::Device(0), &stream).unwrap();
    managed::prefetch(&dst, Location::Device(0), &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        src.last_prefetch_location().unwrap(),
        Some(Location::Device(0))
    );

    let m = dev.compile_module("managed_test_kernels", KERNELS).unwrap();
    let f = m.load_function("xor_into").unwrap();
    let (s, d, len) = (src.ptr(), dst.ptr(), n as u64);
    let mut l = stream.launch_builder(&f);
    l.arg(&s).arg(&d).arg(&len);
    // SAFETY: (const u8*, u8*, u64) matches the kernel; both ranges hold n bytes.
    unsafe { l.launch(cfg(n)) }.unwrap();

    dst.prefetch(Location::Host, &stream).unwrap();
    src.prefetch(Location::Host, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(dst.last_prefetch_location().unwrap(), Some(Location::Host));
    assert_eq!(src.last_prefetch_location().unwrap(), Some(Location::Host));
    let want: Vec<u8> = data.iter().map(|b| b ^ 0x5a).collect();
    assert_eq!(host_read(&dst), want);
    assert_eq!(host_read(&src), data);

    // A prefetch of part of a buffer, and to the calling thread's NUMA node.
    let part = src.range().sub(n / 2, n / 4).unwrap();
    managed::prefetch(part, Location::Device(0), &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        managed::last_prefetch_location(part).unwrap(),
        Some(Location::Device(0))
    );
    managed::prefetch(part, Location::HostNumaCurrent, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(host_read(&src), data);
}

#[test]
#[ignore = "needs a CUDA device"]
fn discard_and_prefetch_then_kernel_writes_are_seen_on_the_host() {
    let (dev, stream, mr) = setup();
    let n = (3 << 20) + 4096;
    let mut buf = mr.allocate(n, &stream).unwrap();
    host_write(&buf, &random_bytes(n, 3));
    buf.discard_and_prefetch(Location::Device(0), &stream)
        .unwrap();
    write_pattern(&dev, &stream, buf.range(), 77);
    stream.synchronize().unwrap();
    assert_eq!(host_read(&buf), pattern(n, 77));

    // Discard alone, then the kernel repopulates the pages.
    host_write(&buf, &random_bytes(n, 4));
    buf.discard(&stream).unwrap();
    write_pattern(&dev, &stream, buf.range(), 5);
    stream.synchronize().unwrap();
    assert_eq!(host_read(&buf), pattern(n, 5));
}

#[test]
#[ignore = "needs a CUDA device"]
fn batches_of_1_2_and_64_ranges() {
    let (dev, stream, mr) = setup();
    let bufs: Vec<ManagedBuffer> = (0..64)
        .map(|i| mr.allocate(4096 * (1 + (i * 37) % 64), &stream).unwrap())
        .collect();
    for (i, b) in bufs.iter().enumerate() {
        host_write(b, &random_bytes(b.size(), 100 + i as u64));
    }
    let ranges: Vec<ManagedRange> = bufs.iter().map(|b| b.range()).collect();
    for count in [1usize, 2, 64] {
        let rs = &ranges[..count];
        managed::prefetch_batch(rs, Location::Device(0), &stream).unwrap();
        stream.synchronize().unwrap();
        for r in rs {
            assert_eq!(
                managed::last_prefetch_location(*r).unwrap(),
                Some(Location::Device(0))
            );
        }
        let per: Vec<Location> = (0..count)
            .map(|i| {
                if i % 3 == 1 {
                    Location::Device(0)
                } else {
                    Location::Host
                }
            })
            .collect();
        managed::prefetch_batch(rs, &per, &stream).unwrap();
        stream.synchronize().unwrap();
        for (r, l) in rs.iter().zip(&per) {
            assert_eq!(
                managed::last_prefetch_location(*r).unwrap(),
                Some(*l),
                "count {count}"
            );
        }
    }
    // Prefetches keep data.
    for (i, b) in bufs.iter().enumerate() {
        assert_eq!(
            host_read(b),
            random_bytes(b.size(), 100 + i as u64),
            "buffer {i}"
        );
    }
    // The legacy default stream: prefetches fall back to single calls, discards (which
    // only exist batched) are refused before the driver, which would reject the stream.
    let legacy = dev.default_stream();
    managed::prefetch_batch(&ranges[..2], Location::Device(0), &legacy).unwrap();
    managed::prefetch(&bufs[2], Location::Device(0), &legacy).unwrap();
    dev.synchronize().unwrap();
    for r in &ranges[..3] {
        assert_eq!(
            managed::last_prefetch_location(*r).unwrap(),
            Some(Location::Device(0))
        );
    }
    fn exclusive<'a>(rs: &[ManagedRange<'a>]) -> Vec<ExclusiveRange<'a>> {
        rs.iter()
            // SAFETY: nothing reads these ranges until a kernel writes them below.
            .map(|r| unsafe { r.assume_exclusive() })
            .collect()
    }
    let e = managed::discard_batch(&exclusive(&ranges[..2]), &legacy).unwrap_err();
    assert!(e.to_string().contains("legacy default stream"), "{e}");
    let e = managed::discard_and_prefetch(
        exclusive(&ranges[..1]).pop().unwrap(),
        Location::Host,
        &legacy,
    )
    .unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");

    // Discard in batches, then discard-and-prefetch with per-range locations, and let a
    // kernel write every range.
    for count in [1usize, 2, 64] {
        managed::discard_batch(&exclusive(&ranges[..count]), &stream).unwrap();
        let per: Vec<Location> = (0..count)
            .map(|i| {
                if i % 2 == 0 {
                    Location::Device(0)
                } else {
                    Location::Host
                }
            })
            .collect();
        managed::discard_and_prefetch_batch(&exclusive(&ranges[..count]), &per, &stream).unwrap();
        managed::discard_and_prefetch_batch(
            &exclusive(&ranges[..count]),
            Location::Device(0),
            &stream,
        )
        .unwrap();
        for (i, r) in ranges[..count].iter().enumerate() {
            write_pattern(&dev, &stream, *r, (count * 1000 + i) as u32);
        }
        stream.synchronize().unwrap();
        for (i, b) in bufs[..count].iter().enumerate() {
            assert_eq!(host_read(b), pattern(b.size(), (count * 1000 + i) as u32));
        }
    }

    let e = managed::prefetch_batch(&ranges[..3], &[Location::Host; 2], &stream).unwrap_err();
    assert!(e.to_string().contains("2 locations for 3 ranges"), "{e}");
    let e = managed::discard_batch(&[], &stream).unwrap_err();
    assert!(e.to_string().contains("the batch is empty"), "{e}");
    let e = managed::prefetch_batch(&ranges[..1], Location::Device(7), &stream).unwrap_err();
    assert!(e.to_string().contains("device 7 does not exist"), "{e}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn foreign_ranges_are_checked_with_the_driver() {
    let (dev, stream, mr) = setup();
    let mut ptr: sys::CUdeviceptr = 0;
    // SAFETY: plain managed allocation, freed below.
    let rc = unsafe {
        sys::cuMemAllocManaged(
            &mut ptr,
            1 << 20,
            sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
        )
    };
    assert_eq!(rc, sys::CUresult::CUDA_SUCCESS);
    {
        // SAFETY: the allocation lives until cuMemFree below, after the last use.
        let r = unsafe { ManagedRange::from_raw(ptr, 1 << 20) }.unwrap();
        managed::set_read_mostly(r, true).unwrap();
        assert!(managed::read_mostly(r).unwrap());
        managed::prefetch(r, Location::Device(0), &stream).unwrap();
        stream.synchronize().unwrap();
        assert_eq!(
            managed::last_prefetch_location(r).unwrap(),
            Some(Location::Device(0))
        );
        // One byte too many reaches past the allocation.
        // SAFETY: only the driver's pointer query looks at the address.
        let e = unsafe { ManagedRange::from_raw(ptr, (1 << 20) + 1) };
        assert!(e.is_err(), "a range past the allocation must be rejected");
    }
    assert_eq!(
        // SAFETY: allocated above, no range refers to it any more.
        unsafe { sys::cuMemFree_v2(ptr) },
        sys::CUresult::CUDA_SUCCESS
    );

    // Two managed allocations side by side: a range across both ends in managed memory
    // at each end, yet is not one allocation.
    let mut ptrs = Vec::new();
    for _ in 0..16 {
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: plain managed allocations, freed below.
        let rc = unsafe {
            sys::cuMemAllocManaged(
                &mut p,
                1 << 21,
                sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
            )
        };
        assert_eq!(rc, sys::CUresult::CUDA_SUCCESS);
        ptrs.push(p);
    }
    let adjacent = ptrs
        .iter()
        .find(|&&a| ptrs.contains(&(a + (1 << 21))))
        .copied();
    if let Some(a) = adjacent {
        // SAFETY: only the driver's pointer queries look at the addresses.
        let e = unsafe { ManagedRange::from_raw(a + (1 << 20), 1 << 21) };
        assert!(
            e.is_err(),
            "a range across two allocations must be rejected"
        );
        // SAFETY: as above.
        assert!(unsafe { ManagedRange::from_raw(a, 1 << 21) }.is_ok());
    } else {
        eprintln!("no two of 16 managed allocations lay side by side; that case was not exercised");
    }
    for p in ptrs {
        // SAFETY: allocated above; no range refers to them.
        assert_eq!(unsafe { sys::cuMemFree_v2(p) }, sys::CUresult::CUDA_SUCCESS);
    }

    // Device memory is not managed memory.
    let dmr = DeviceMemoryResource::new(&dev).unwrap();
    let dbuf = dmr.allocate(4096, &stream).unwrap();
    // SAFETY: only the driver's pointer query looks at the address.
    let e = unsafe { ManagedRange::from_raw(dbuf.ptr(), 4096) }.unwrap_err();
    assert!(
        e.to_string()
            .contains("is Device memory, not managed memory"),
        "{e}"
    );
    let e = ManagedRange::of(&dbuf).unwrap_err();
    assert!(e.to_string().contains("is not managed memory"), "{e}");
    // A ManagedBuffer is a Buffer for copies and views.
    let mut mb = mr.allocate(4096, &stream).unwrap();
    let data = random_bytes(4096, 55);
    mb.copy_from_host(&data, &stream).unwrap();
    let mut back = vec![0u8; 4096];
    mb.copy_to_host(&mut back, &stream).unwrap();
    assert_eq!(back, data);
    mb.fill(0x11, &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(host_read(&mb), vec![0x11; 4096]);
    // Through the trait, the resource still hands out a plain Buffer of managed memory.
    let plain = MemoryResource::allocate(&mr, 4096, &stream).unwrap();
    let back = ManagedBuffer::try_from(plain).unwrap();
    back.prefetch(Location::Host, &stream).unwrap();
    stream.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn advice_from_a_thread_without_a_current_context() {
    let (_dev, stream, mr) = setup();
    let buf = mr.allocate(1 << 20, &stream).unwrap();
    let r = buf.range();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut ctx: sys::CUcontext = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the driver is initialised by the test's setup.
            unsafe { sys::cuCtxGetCurrent(&mut ctx) };
            assert!(ctx.is_null(), "a fresh thread has no current context");
            managed::set_read_mostly(r, true).unwrap();
            assert!(managed::read_mostly(r).unwrap());
            managed::set_preferred_location(r, Location::Device(0)).unwrap();
            assert_eq!(
                managed::preferred_location(r).unwrap(),
                Some(Location::Device(0))
            );
            managed::add_accessed_by(r, Location::Host).unwrap();
            assert!(managed::accessed_by(r).unwrap().contains(&Location::Host));
        })
        .join()
        .unwrap();
    });
}

#[test]
#[ignore = "needs a CUDA device"]
fn copies_through_managed_memory_the_cpu_just_wrote_are_byte_exact() {
    use stridekit::{DType, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};
    // A large source (4 MiB, whose pages the GPU faults in) and a small one (16 KiB).
    for side in [1024i64, 64] {
        let (dev, stream, mr) = setup();
        let bytes = (side * side * 4) as usize;
        let src = mr.allocate(bytes, &stream).unwrap();
        let data = random_bytes(bytes, side as u64);
        host_write(&src, &data);
        // Managed source -> device (a transpose: a kernel reads the managed pages).
        let mut dev_buf = DeviceMemoryResource::new(&dev)
            .unwrap()
            .allocate(bytes, &stream)
            .unwrap();
        dev_buf.fill(0xA5, &stream).unwrap();
        let t = StridedLayout::dense(&[side, side], 4, Order::C)
            .unwrap()
            .permuted(&[1, 0])
            .unwrap();
        let dense = StridedLayout::dense(&[side, side], 4, Order::C).unwrap();
        StridedMemoryViewMut::from_buffer_mut(&mut dev_buf, dense.clone(), Some(DType::U32))
            .unwrap()
            .copy_from(
                &StridedMemoryView::from_buffer(&src, t.clone(), Some(DType::U32)).unwrap(),
                Some(&stream),
            )
            .unwrap();
        // Device -> a managed destination the CPU wrote last (poison), read on the host.
        let mut dst = mr.allocate(bytes, &stream).unwrap();
        host_write(&dst, &vec![0x5Au8; bytes]);
        dst.view_mut(t.clone(), Some(DType::U32))
            .unwrap()
            .copy_from(
                &StridedMemoryView::from_buffer(&dev_buf, dense.clone(), Some(DType::U32)).unwrap(),
                Some(&stream),
            )
            .unwrap();
        stream.synchronize().unwrap();
        // Transposed twice: the destination holds the source's bytes.
        assert!(host_read(&dst) == data, "side {side}");
    }
}

/// Copies out of managed memory the CPU has just written: the engine prefetches a large
/// managed side to the copying device first (seen in the driver's last prefetch
/// location), never a small one unasked, and every choice copies the same bytes.
#[test]
#[ignore = "needs a CUDA device"]
fn copies_prefetch_large_managed_sides_and_stay_exact() {
    use stridekit::{CopyOptions, Order, StridedLayout, StridedMemoryView, StridedMemoryViewMut};
    let (dev, stream, mr) = setup();
    let dmr = DeviceMemoryResource::new(&dev).unwrap();
    for (side, choice, expect_prefetch) in [
        (512i64, None, true),      // 1 MiB: above the threshold
        (64, None, false),         // 16 KiB: below it
        (64, Some(true), true),    // asked for
        (512, Some(false), false), // refused
    ] {
        let bytes = (side * side * 4) as usize;
        let src = mr.allocate(bytes, &stream).unwrap();
        let mut dst = dmr.allocate(bytes, &stream).unwrap();
        dst.fill(0xA5, &stream).unwrap();
        stream.synchronize().unwrap();
        let data = random_bytes(bytes, side as u64);
        host_write(&src, &data);
        let l = StridedLayout::dense(&[side, side], 4, Order::C).unwrap();
        {
            let s =
                StridedMemoryView::from_buffer(&src, l.permuted(&[1, 0]).unwrap(), None).unwrap();
            let mut d = StridedMemoryViewMut::from_buffer_mut(&mut dst, l.clone(), None).unwrap();
            let opts = CopyOptions {
                prefetch_managed: choice,
                ..CopyOptions::default()
            };
            d.copy_from_with(&s, Some(&stream), &opts).unwrap();
        }
        stream.synchronize().unwrap();
        let got = common::read(&dst, &stream);
        let n = side as usize;
        let mut want = vec![0u8; bytes];
        for i in 0..n {
            for j in 0..n {
                let (to, from) = ((i * n + j) * 4, (j * n + i) * 4);
                want[to..to + 4].copy_from_slice(&data[from..from + 4]);
            }
        }
        assert!(got == want, "side {side}, prefetch {choice:?}: wrong bytes");
        let last = src.last_prefetch_location().unwrap();
        assert_eq!(
            last == Some(Location::Device(0)),
            expect_prefetch,
            "side {side}, prefetch {choice:?}: last prefetch location {last:?}"
        );
    }
}
