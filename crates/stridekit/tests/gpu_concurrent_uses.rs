//! Concurrent uses of one buffer are all on its record: two threads read it on two
//! streams at the same moment (one stream held back by queued work), then the owner
//! writes, releases, drops or discards it. Every later use must wait for both readers,
//! so both destinations hold the bytes as they were; a lost reader shows as new bytes
//! (or another allocation's) in the held-back reader's destination.

mod common;

use std::sync::{Arc, Barrier};
use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
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

/// 4 MiB of u32 per buffer.
const ROWS: i64 = 1024;
const COLS: i64 = 1024;
const N: usize = (ROWS * COLS) as usize;
const ITERATIONS: usize = 25;

/// Holds `stream` back for about 20 ms.
fn spin(dev: &Device, stream: &Arc<CudaStream>) {
    let m = dev.compile_module("concurrent_spin", SPIN).unwrap();
    let f = m.load_function("spin").unwrap();
    let cycles: i64 = 40_000_000;
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

/// The source read column-major (so that each copy runs the strided kernel).
fn transposed() -> StridedLayout {
    StridedLayout::dense(&[ROWS, COLS], 4, Order::F).unwrap()
}

fn dense() -> StridedLayout {
    StridedLayout::dense(&[ROWS, COLS], 4, Order::C).unwrap()
}

/// What a transposed read of `bytes` gives, row-major.
fn expected(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len()];
    for i in 0..ROWS as usize {
        for j in 0..COLS as usize {
            let from = (i + j * ROWS as usize) * 4;
            let to = (i * COLS as usize + j) * 4;
            out[to..to + 4].copy_from_slice(&bytes[from..from + 4]);
        }
    }
    out
}

struct Setup {
    dev: Device,
    mr: DeviceMemoryResource,
    held_back: Arc<CudaStream>,
    other: Arc<CudaStream>,
    owner: Arc<CudaStream>,
}

fn setup() -> Setup {
    let dev = Device::open(0).unwrap();
    Setup {
        mr: DeviceMemoryResource::new(&dev).unwrap(),
        held_back: dev.new_stream().unwrap(),
        other: dev.new_stream().unwrap(),
        owner: dev.new_stream().unwrap(),
        dev,
    }
}

/// Two threads copy `src` (transposed) into `a` on the held-back stream and into `b` on
/// the other, released together by a barrier.
fn two_readers(s: &Setup, src: &Buffer, a: &mut Buffer, b: &mut Buffer) {
    spin(&s.dev, &s.held_back);
    let gate = Barrier::new(2);
    std::thread::scope(|scope| {
        for (dst, stream) in [(a, &s.held_back), (b, &s.other)] {
            let gate = &gate;
            scope.spawn(move || {
                let from =
                    StridedMemoryView::from_buffer(src, transposed(), Some(DType::U32)).unwrap();
                let mut to =
                    StridedMemoryViewMut::from_buffer_mut(dst, dense(), Some(DType::U32)).unwrap();
                gate.wait();
                to.copy_from(&from, Some(stream)).unwrap();
            });
        }
    });
}

fn poisoned(s: &Setup) -> Buffer {
    let mut b = s.mr.allocate(N * 4, &s.owner).unwrap();
    b.fill(0xA5, &s.owner).unwrap();
    b
}

fn check(s: &Setup, what: &str, i: usize, want: &[u8], got: [&Buffer; 2]) {
    s.dev.synchronize().unwrap();
    for (name, b) in ["held-back reader", "other reader"].iter().zip(got) {
        let mut back = vec![0u8; N * 4];
        b.copy_to_host(&mut back, &s.owner).unwrap();
        let bad = back.iter().zip(want).filter(|(x, y)| x != y).count();
        assert_eq!(
            bad, 0,
            "{what}, iteration {i}: the {name}'s destination has {bad} wrong bytes"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_write_waits_for_two_readers_on_two_streams() {
    let s = setup();
    let data = common::random_bytes(N * 4, 11);
    let want = expected(&data);
    let mut src = s.mr.allocate(N * 4, &s.owner).unwrap();
    for i in 0..ITERATIONS {
        src.copy_from_host(&data, &s.owner).unwrap();
        let (mut a, mut b) = (poisoned(&s), poisoned(&s));
        s.owner.synchronize().unwrap();
        two_readers(&s, &src, &mut a, &mut b);
        src.fill(0xEE, &s.owner).unwrap();
        check(&s, "fill after two readers", i, &want, [&a, &b]);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_release_waits_for_two_readers_on_two_streams() {
    let s = setup();
    let data = common::random_bytes(N * 4, 12);
    let want = expected(&data);
    for i in 0..ITERATIONS {
        let mut src = s.mr.allocate(N * 4, &s.owner).unwrap();
        src.copy_from_host(&data, &s.owner).unwrap();
        let (mut a, mut b) = (poisoned(&s), poisoned(&s));
        s.owner.synchronize().unwrap();
        two_readers(&s, &src, &mut a, &mut b);
        src.release(&s.owner).unwrap();
        // The pool hands the freed memory to the next allocation on the same stream.
        let mut next = s.mr.allocate(N * 4, &s.owner).unwrap();
        next.fill(0x5A, &s.owner).unwrap();
        check(&s, "release after two readers", i, &want, [&a, &b]);
        drop(next);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_drop_waits_for_two_readers_on_two_streams() {
    let s = setup();
    let data = common::random_bytes(N * 4, 13);
    let want = expected(&data);
    for i in 0..ITERATIONS {
        let mut src = s.mr.allocate(N * 4, &s.owner).unwrap();
        src.copy_from_host(&data, &s.owner).unwrap();
        let (mut a, mut b) = (poisoned(&s), poisoned(&s));
        s.owner.synchronize().unwrap();
        two_readers(&s, &src, &mut a, &mut b);
        drop(src);
        let mut next = s.mr.allocate(N * 4, &s.owner).unwrap();
        next.fill(0x5A, &s.owner).unwrap();
        check(&s, "drop after two readers", i, &want, [&a, &b]);
        drop(next);
    }
}

/// A timing test: skipped under compute-sanitizer, which runs kernels one at a time.
#[test]
#[ignore = "needs a CUDA device"]
fn timing_readers_on_two_streams_do_not_wait_for_each_other() {
    // The other reader finishes while the held-back one is still queued behind the spin.
    let s = setup();
    let data = common::random_bytes(N * 4, 14);
    let mut src = s.mr.allocate(N * 4, &s.owner).unwrap();
    src.copy_from_host(&data, &s.owner).unwrap();
    let (mut a, mut b) = (poisoned(&s), poisoned(&s));
    two_readers(&s, &src, &mut a, &mut b);
    s.other.synchronize().unwrap();
    let held_back = s.held_back.record_event(None).unwrap();
    let held_back_done = held_back.try_is_complete().unwrap();
    assert!(
        !held_back_done,
        "the held-back reader finished before the other reader was waited for: the two readers were serialised or the spin was too short"
    );
    s.dev.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_managed_discard_waits_for_queued_readers() {
    let s = setup();
    let mr = ManagedMemoryResource::new(&s.dev).unwrap();
    let data = common::random_bytes(N * 4, 15);
    let want = expected(&data);
    for i in 0..ITERATIONS / 5 {
        let mut m = mr.allocate(N * 4, &s.owner).unwrap();
        m.copy_from_host(&data, &s.owner).unwrap();
        let (mut a, mut b) = (poisoned(&s), poisoned(&s));
        s.owner.synchronize().unwrap();
        two_readers(&s, &m, &mut a, &mut b);
        m.discard(&s.owner).unwrap();
        check(&s, "discard after two readers", i, &want, [&a, &b]);
    }
}
