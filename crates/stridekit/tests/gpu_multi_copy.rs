//! Copies between two GPUs (run on a two-GPU machine; skipped with a message on one):
//! random layouts device 0 -> device 1 and back, byte-exact against the host reference,
//! with and without peer access, on streams of either device.

mod common;

use common::{filled, naive_copy, random_bytes, random_layout, read, Rng};
use std::sync::Arc;
use stridekit::{
    peer, CudaStream, Device, DeviceMemoryResource, ManagedMemoryResource, MemoryResource,
    StridedMemoryView, StridedMemoryViewMut,
};

fn two_gpus() -> Option<(Device, Device)> {
    let n = Device::count().unwrap_or(0);
    if n < 2 {
        eprintln!("skipping: {n} GPU(s) visible; the multi-GPU tests need two");
        return None;
    }
    Some((Device::open(0).unwrap(), Device::open(1).unwrap()))
}

/// One random copy from `from` to `to` on `stream`; a description on failure.
#[allow(clippy::too_many_arguments)]
fn one(
    rng: &mut Rng,
    case: u64,
    from: &dyn MemoryResource,
    to: &dyn MemoryResource,
    from_stream: &Arc<CudaStream>,
    to_stream: &Arc<CudaStream>,
    stream: &Arc<CudaStream>,
) -> Result<(), String> {
    let nd = 1 + rng.below(5) as usize;
    let cap = if nd >= 4 { 6 } else { 40 };
    let shape: Vec<i64> = (0..nd).map(|_| 1 + rng.below(cap) as i64).collect();
    let isz = [1usize, 2, 4, 8, 16][rng.below(5) as usize];
    let bcast = rng.below(5) == 0;
    let (sl, sbytes) = random_layout(rng, &shape, isz, bcast);
    let (dl, dbytes) = random_layout(rng, &shape, isz, false);
    let src_data = random_bytes(sbytes, case);
    let poison = random_bytes(dbytes, case ^ 0x5eed);
    let sbuf = filled(from, &src_data, from_stream);
    let mut dbuf = filled(to, &poison, to_stream);
    from_stream.synchronize().unwrap();
    to_stream.synchronize().unwrap();
    {
        let src =
            StridedMemoryView::from_buffer(&sbuf, sl.clone(), None).map_err(|e| e.to_string())?;
        let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut dbuf, dl.clone(), None)
            .map_err(|e| e.to_string())?;
        dst.copy_from(&src, Some(stream))
            .map_err(|e| format!("case {case}: {e}"))?;
    }
    stream.synchronize().unwrap();
    let got = read(&dbuf, to_stream);
    let want = naive_copy(&poison, &dl, &src_data, &sl);
    if got != want {
        let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
        return Err(format!(
            "case {case}: {bad} of {} bytes differ; src {sl} dst {dl}",
            want.len()
        ));
    }
    Ok(())
}

#[test]
#[ignore = "needs a CUDA device"]
fn random_layouts_between_two_gpus_with_and_without_peer_access() {
    let Some((d0, d1)) = two_gpus() else { return };
    let (s0, s1) = (d0.new_stream().unwrap(), d1.new_stream().unwrap());
    let m0: Box<dyn MemoryResource> = Box::new(DeviceMemoryResource::new(&d0).unwrap());
    let m1: Box<dyn MemoryResource> = Box::new(DeviceMemoryResource::new(&d1).unwrap());
    let managed0: Box<dyn MemoryResource> = Box::new(ManagedMemoryResource::new(&d0).unwrap());
    let can = peer::can_access_peer(0, 1).unwrap() && peer::can_access_peer(1, 0).unwrap();
    eprintln!("peer access between 0 and 1 possible: {can}");
    let mut rng = Rng(0x2_6_9_0);
    let mut failures = vec![];
    let mut n = 0;
    for peer_on in [true, false] {
        if peer_on {
            assert_eq!(peer::enable_peer_access(0, 1).unwrap(), can);
            assert_eq!(peer::enable_peer_access(1, 0).unwrap(), can);
        } else {
            peer::disable_peer_access(0, 1).unwrap();
            peer::disable_peer_access(1, 0).unwrap();
        }
        for round in 0..40u64 {
            let case = round + if peer_on { 0 } else { 1000 };
            // Alternate the stream's device, the direction and a managed source.
            let stream = if round % 2 == 0 { &s0 } else { &s1 };
            let r = match round % 4 {
                0 | 1 => one(&mut rng, case, m0.as_ref(), m1.as_ref(), &s0, &s1, stream),
                2 => one(&mut rng, case, m1.as_ref(), m0.as_ref(), &s1, &s0, stream),
                _ => one(
                    &mut rng,
                    case,
                    managed0.as_ref(),
                    m1.as_ref(),
                    &s0,
                    &s1,
                    stream,
                ),
            };
            n += 1;
            if let Err(e) = r {
                failures.push(format!("peer {peer_on}: {e}"));
            }
        }
    }
    // Leave peer access on for the other tests.
    peer::enable_peer_access(0, 1).unwrap();
    peer::enable_peer_access(1, 0).unwrap();
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_of_a_third_device_or_none_is_refused() {
    let Some((d0, d1)) = two_gpus() else { return };
    let s0 = d0.new_stream().unwrap();
    let a = DeviceMemoryResource::new(&d0)
        .unwrap()
        .allocate(64, &s0)
        .unwrap();
    let s1 = d1.new_stream().unwrap();
    let mut b = DeviceMemoryResource::new(&d1)
        .unwrap()
        .allocate(64, &s1)
        .unwrap();
    let l = stridekit::StridedLayout::dense(&[16], 4, stridekit::Order::C).unwrap();
    let src = StridedMemoryView::from_buffer(&a, l.clone(), None).unwrap();
    let mut dst = StridedMemoryViewMut::from_buffer_mut(&mut b, l, None).unwrap();
    let e = dst.copy_from(&src, None).unwrap_err().to_string();
    assert!(e.contains("needs a stream"), "{e}");
    if Device::count().unwrap() > 2 {
        let s2 = Device::open(2).unwrap().new_stream().unwrap();
        let e = dst.copy_from(&src, Some(&s2)).unwrap_err().to_string();
        assert!(e.contains("the stream belongs to device 2"), "{e}");
    }
    dst.copy_from(&src, Some(&s1)).unwrap();
}
