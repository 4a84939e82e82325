//! `stridekit::dist` between two GPUs: two ranks on threads, one device each, over
//! NCCL (feature `nccl`) and over the in-process transport. Random layouts of every
//! itemsize, all-to-all, redistribution and the mismatch paths, byte-exact. Skipped, with
//! a message, where fewer than two GPUs are visible.

mod common;

use common::dist::{self, assert_none};
use stridekit::dist::local_world;
use stridekit::Device;

fn two_gpus() -> bool {
    let n = Device::count().unwrap_or(0);
    if n < 2 {
        eprintln!("gpu_dist_multi: {n} GPU(s) visible; the two-GPU checks need two: skipped");
    }
    n >= 2
}

#[test]
#[ignore = "needs two CUDA devices"]
fn local_transport_between_two_gpus() {
    if !two_gpus() {
        return;
    }
    assert_none(dist::send_recv(
        local_world(&[0, 1]).unwrap(),
        31,
        40,
        false,
    ));
    assert_none(dist::all_to_all(local_world(&[0, 1]).unwrap(), 32));
    for k in 0..8 {
        assert_none(dist::redistribute(local_world(&[0, 1]).unwrap(), 33 + k));
    }
    assert_none(dist::mismatches(local_world(&[0, 1]).unwrap()));
    assert_none(dist::send_recv_in_pieces(
        local_world(&[0, 1]).unwrap(),
        34,
        40,
        false,
        64,
    ));
}

#[cfg(feature = "nccl")]
fn nccl_pair() -> Vec<stridekit::dist::NcclComm> {
    use stridekit::dist::{NcclComm, UniqueId};
    let id = UniqueId::new().unwrap();
    std::thread::scope(|t| {
        let hs: Vec<_> = (0..2)
            .map(|r| t.spawn(move || NcclComm::init(&Device::open(r).unwrap(), &id, r, 2).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

// The NCCL checks between the GPUs, one test a kind of transfer, each with communicators
// of its own, so that a report under compute-sanitizer names the kind it came from.
#[cfg(feature = "nccl")]
#[test]
#[ignore = "needs two CUDA devices and NCCL"]
fn nccl_send_recv_between_two_gpus() {
    if !two_gpus() {
        return;
    }
    assert_none(dist::send_recv(nccl_pair(), 41, 40, false));
}

#[cfg(feature = "nccl")]
#[test]
#[ignore = "needs two CUDA devices and NCCL"]
fn nccl_all_to_all_between_two_gpus() {
    if !two_gpus() {
        return;
    }
    assert_none(dist::all_to_all(nccl_pair(), 42));
}

#[cfg(feature = "nccl")]
#[test]
#[ignore = "needs two CUDA devices and NCCL"]
fn nccl_redistribute_between_two_gpus() {
    if !two_gpus() {
        return;
    }
    for k in 0..8 {
        assert_none(dist::redistribute(nccl_pair(), 43 + k));
    }
}

#[cfg(feature = "nccl")]
#[test]
#[ignore = "needs two CUDA devices and NCCL"]
fn nccl_mismatches_between_two_gpus() {
    if !two_gpus() {
        return;
    }
    assert_none(dist::mismatches(nccl_pair()));
}

#[cfg(feature = "nccl")]
#[test]
#[ignore = "needs two CUDA devices and NCCL"]
fn nccl_pieces_between_two_gpus() {
    if !two_gpus() {
        return;
    }
    // One NCCL group a piece between the GPUs.
    assert_none(dist::send_recv_in_pieces(nccl_pair(), 51, 40, false, 64));
    assert_none(dist::all_to_all_in_pieces(nccl_pair(), 52, 50));
    assert_none(dist::redistribute_in_pieces(nccl_pair(), 53, 40));
}
