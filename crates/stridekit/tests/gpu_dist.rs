//! `stridekit::dist` through the in-process transport: N ranks of this process on one
//! GPU, on threads, moving random layouts of every itemsize with the same packing,
//! checks and records as over NCCL; byte-exact against the host reference.

mod common;

use common::dist::{self, assert_none};
use std::time::Duration;
use stridekit::dist::{local_world, local_world_with_wait, Batch, Communicator};
use stridekit::{Buffer, Device, DeviceMemoryResource, MemoryResource, StridedMemoryView};

/// 64 bytes of device memory on GPU 0.
fn sixteen_words(s: &std::sync::Arc<stridekit::CudaStream>) -> Buffer {
    let dev = Device::open(0).unwrap();
    DeviceMemoryResource::new(&dev)
        .unwrap()
        .allocate(64, s)
        .unwrap()
}

/// The buffer as 16 four-byte elements.
fn view_of(buf: &Buffer) -> StridedMemoryView<'_> {
    let l = stridekit::StridedLayout::dense(&[16], 4, stridekit::Order::C).unwrap();
    StridedMemoryView::from_buffer(buf, l, None).unwrap()
}

fn world(n: usize) -> Vec<stridekit::dist::LocalComm> {
    local_world(&vec![0; n]).unwrap()
}

#[test]
#[ignore = "needs a CUDA device"]
fn send_recv_random_layouts_every_itemsize() {
    for (n, seed) in [(1, 11), (2, 12), (3, 13)] {
        assert_none(dist::send_recv(world(n), seed, 40, false));
    }
    assert_none(dist::send_recv(world(1), 14, 40, true));
}

#[test]
#[ignore = "needs a CUDA device"]
fn all_to_all_random_layouts() {
    for n in 1..=5 {
        assert_none(dist::all_to_all(world(n), 100 + n as u64));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn redistribute_random_shapes_splits_and_layouts() {
    for n in 1..=8usize {
        for k in 0..12u64 {
            assert_none(dist::redistribute(world(n), 1000 * n as u64 + k));
        }
    }
}

/// Transfers cut into pieces of a few dozen bytes (so that the random layouts' transfers
/// whose receiver unpacks take 2 to 8 pieces; those received in place move whole):
/// packed, moved and unpacked piece by piece, the packs and unpacks on the pipeline
/// stream, done when the caller's stream is.
#[test]
#[ignore = "needs a CUDA device"]
fn transfers_in_pieces_random_layouts() {
    for (n, seed, piece) in [(1, 21, 97), (2, 22, 64), (3, 23, 1000)] {
        assert_none(dist::send_recv_in_pieces(world(n), seed, 40, false, piece));
    }
    assert_none(dist::send_recv_in_pieces(world(1), 24, 40, true, 33));
    for n in 1..=4 {
        assert_none(dist::all_to_all_in_pieces(world(n), 200 + n as u64, 50));
    }
    for n in 1..=4usize {
        for k in 0..6u64 {
            assert_none(dist::redistribute_in_pieces(
                world(n),
                2000 * n as u64 + k,
                40,
            ));
        }
    }
}

/// Both ranks of a transfer must cut it alike: pieces of another size are a header
/// mismatch on both ranks, nothing moves, and a zero piece size is refused at once.
#[test]
#[ignore = "needs a CUDA device"]
fn ranks_cutting_a_transfer_otherwise_both_fail() {
    let fails = dist::on_ranks(world(2), |c, s| {
        let buf = sixteen_words(s);
        let view = view_of(&buf);
        let mut b = Batch::new(c);
        assert!(b.piece_bytes(0).is_err());
        // 64 bytes: one piece at 64, two at 32.
        b.piece_bytes(if c.rank() == 0 { 64 } else { 32 }).unwrap();
        let mut dst_buf = sixteen_words(s);
        let mut dst = stridekit::StridedMemoryViewMut::from_buffer_mut(
            &mut dst_buf,
            stridekit::StridedLayout::dense(&[16], 4, stridekit::Order::C).unwrap(),
            None,
        )
        .unwrap();
        if c.rank() == 0 {
            b.send(&view, 1).unwrap();
        } else {
            b.recv(&mut dst, 0).unwrap();
        }
        match b.run(s) {
            Ok(()) => Some(format!("rank {}: ran", c.rank())),
            Err(e) if e.to_string().contains("piece") => None,
            Err(e) => Some(format!("rank {}: {e}", c.rank())),
        }
    });
    assert_none(fails.into_iter().flatten().collect());
}

#[test]
#[ignore = "needs a CUDA device"]
fn mismatches_fail_on_every_rank_and_move_nothing() {
    assert_none(dist::mismatches(world(2)));
    assert_none(dist::mismatches(world(1)));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_missing_peer_aborts_the_world_instead_of_hanging() {
    let w = local_world_with_wait(&[0, 0], Duration::from_millis(500)).unwrap();
    let errs = dist::on_ranks(w, |c, s| {
        let buf = sixteen_words(s);
        let v = view_of(&buf);
        let first = if c.rank() == 0 {
            // Rank 1 never posts the receive.
            stridekit::dist::send(c, &v, 1, s)
                .err()
                .map(|e| e.to_string())
        } else {
            None
        };
        std::thread::sleep(Duration::from_millis(700));
        // Once aborted, every rank's transfers fail at once.
        let later = Batch::new(c).run(s).err().map(|e| e.to_string());
        (first, later)
    });
    let (first, _) = &errs[0];
    let first = first.as_deref().unwrap_or("no error");
    assert!(first.contains("was not posted within"), "{first}");
    for (r, (_, later)) in errs.iter().enumerate() {
        let later = later.as_deref().unwrap_or("no error");
        assert!(later.contains("aborted"), "rank {r}: {later}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn peers_streams_and_view_counts_are_checked_before_any_transfer() {
    let errs = dist::on_ranks(world(2), |c, s| {
        let buf = sixteen_words(s);
        let v = view_of(&buf);
        let mut b = Batch::new(c);
        let peer = b.send(&v, 2).unwrap_err().to_string();
        let a2a = stridekit::dist::all_to_all(c, std::slice::from_ref(&v), &mut [], s)
            .unwrap_err()
            .to_string();
        (peer, a2a)
    });
    for (peer, a2a) in errs {
        assert!(peer.contains("peer 2 is not a rank"), "{peer}");
        assert!(
            a2a.contains("1 send views and 0 receive views for 2 ranks"),
            "{a2a}"
        );
    }
}
