//! `stridekit::dist` over real NCCL with one rank (a communicator of this process alone:
//! NCCL moves its sends to itself, asked with `Batch::self_through_transport`; all-to-all
//! and redistribution of one rank are copies after NCCL's header swap): sends, receives, all-to-all and redistribution of
//! random layouts of every itemsize, byte-exact, and the mismatch paths. Built with the
//! `nccl` feature.
#![cfg(feature = "nccl")]

mod common;

use common::dist::{self, assert_none};
use stridekit::dist::{nccl_version, NcclComm, UniqueId};
use stridekit::Device;

fn one() -> Vec<NcclComm> {
    vec![NcclComm::single(&Device::open(0).unwrap()).unwrap()]
}

#[test]
#[ignore = "needs a CUDA device and NCCL"]
fn nccl_loads_and_ids_round_trip() {
    let (major, minor, _) = nccl_version().unwrap();
    assert!((major, minor) >= (2, 18), "{major}.{minor}");
    let id = UniqueId::new().unwrap();
    assert_eq!(UniqueId::from_hex(&id.to_hex()).unwrap(), id);
    assert_eq!(UniqueId::from_bytes(id.as_bytes()).unwrap(), id);
}

#[test]
#[ignore = "needs a CUDA device and NCCL"]
fn one_rank_sends_to_itself_every_layout_and_itemsize() {
    // Through NCCL's send to oneself, and (the default) as one copy.
    assert_none(dist::send_recv(one(), 21, 60, true));
    assert_none(dist::send_recv(one(), 22, 60, false));
    // In pieces: one NCCL group a piece, packs and unpacks on the pipeline stream.
    assert_none(dist::send_recv_in_pieces(one(), 23, 60, true, 50));
}

#[test]
#[ignore = "needs a CUDA device and NCCL"]
fn one_rank_all_to_all_and_redistribute() {
    for seed in 0..8 {
        assert_none(dist::all_to_all(one(), 200 + seed));
        assert_none(dist::redistribute(one(), 300 + seed));
    }
}

#[test]
#[ignore = "needs a CUDA device and NCCL"]
fn one_rank_mismatches_are_errors_and_the_communicator_lives_on() {
    assert_none(dist::mismatches(one()));
}

#[test]
#[ignore = "needs a CUDA device and NCCL"]
fn a_bad_rank_or_size_is_refused_before_nccl() {
    let dev = Device::open(0).unwrap();
    let id = UniqueId::new().unwrap();
    let e = NcclComm::init(&dev, &id, 2, 2).err().unwrap().to_string();
    assert!(e.contains("rank 2 is not below the size 2"), "{e}");
    let e = NcclComm::init(&dev, &id, 0, 0).err().unwrap().to_string();
    assert!(e.contains("0 ranks"), "{e}");
}
