//! Redistribution plans checked against a host reference: a tensor split over N ranks
//! (N = 1..16) along one axis, every rank's part in its own random layout, moved to a
//! split along another axis (or the same one over another rank count) by packing each
//! transfer's box out of the sender's part into a buffer in the receiver's order and
//! unpacking it: every receiver ends up holding exactly its part of the tensor.

mod common;

use common::{indices, offsets};
use stridekit_layout::dist::{redistribution, Split};
use stridekit_layout::{Order, StridedLayout};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A layout of `shape` whose memory order is a random permutation of the axes, with
/// padding after the innermost one half of the time.
fn random_layout(rng: &mut Rng, shape: &[i64]) -> StridedLayout {
    let n = shape.len();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    // Memory order: order[0] outermost ... order[n-1] innermost.
    let pad = if rng.below(2) == 0 {
        0
    } else {
        1 + rng.below(3) as i64
    };
    let mut strides = vec![0i64; n];
    let mut s = 1i64;
    for (k, &ax) in order.iter().enumerate().rev() {
        strides[ax] = s;
        s *= shape[ax].max(1) + if k == n - 1 { pad } else { 0 };
    }
    StridedLayout::new(shape, &strides, 8).expect("layout")
}

/// The global row-major index of the element at local index `idx` of a part at `origin`.
fn global_index(shape: &[i64], origin: &[i64], idx: &[i64]) -> i64 {
    shape
        .iter()
        .zip(origin)
        .zip(idx)
        .fold(0, |g, ((&n, &o), &i)| g * n + o + i)
}

fn buffer_len(l: &StridedLayout) -> usize {
    offsets(l).into_iter().max().map_or(0, |m| m as usize + 1)
}

#[test]
fn redistributions_move_every_element_to_its_new_owner() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut cases = 0;
    for _ in 0..600 {
        let ndim = 1 + rng.below(4) as usize;
        let shape: Vec<i64> = (0..ndim).map(|_| rng.below(10) as i64).collect();
        let from = Split::new(rng.below(ndim as u64) as usize, 1 + rng.below(16) as usize).unwrap();
        let to = Split::new(rng.below(ndim as u64) as usize, 1 + rng.below(16) as usize).unwrap();
        // Each rank's part of both splits, in its own layout, with its buffer.
        let parts = |split: &Split, rng: &mut Rng| -> Vec<(StridedLayout, Vec<i64>, Vec<i64>)> {
            (0..split.ranks)
                .map(|r| {
                    let local = split.local_shape(&shape, r).unwrap();
                    let l = random_layout(rng, &local);
                    let origin = split.origin(&shape, r).unwrap().to_vec();
                    let buf = vec![-1i64; buffer_len(&l)];
                    (l, origin, buf)
                })
                .collect()
        };
        let mut senders = parts(&from, &mut rng);
        let mut receivers = parts(&to, &mut rng);
        for (l, origin, buf) in senders.iter_mut() {
            for (idx, off) in indices(l.shape()).iter().zip(offsets(l)) {
                buf[off as usize] = global_index(&shape, origin, idx);
            }
        }
        let moves = redistribution(&shape, &from, &to).unwrap();
        let total: usize = moves.iter().map(|t| t.volume()).sum();
        assert_eq!(
            total as i64,
            shape.iter().product::<i64>(),
            "{shape:?} {from:?} {to:?}"
        );
        for t in &moves {
            let (sl, so, sbuf) = &senders[t.from];
            let src = t.in_local(sl, so).unwrap();
            let (dl, dorig, _) = &receivers[t.to];
            let dst = t.in_local(dl, dorig).unwrap();
            // Pack in the receiver's order, then unpack.
            let wire = StridedLayout::dense_like(&dst, Order::K).unwrap();
            let mut w = vec![0i64; buffer_len(&wire).max(1)];
            for (a, b) in offsets(&src).into_iter().zip(offsets(&wire)) {
                w[b as usize] = sbuf[a as usize];
            }
            let dbuf = &mut receivers[t.to].2;
            for (a, b) in offsets(&wire).into_iter().zip(offsets(&dst)) {
                assert_eq!(dbuf[b as usize], -1, "element written twice: {t:?}");
                dbuf[b as usize] = w[a as usize];
            }
        }
        for (l, origin, buf) in &receivers {
            for (idx, off) in indices(l.shape()).iter().zip(offsets(l)) {
                assert_eq!(
                    buf[off as usize],
                    global_index(&shape, origin, idx),
                    "{shape:?} {from:?} -> {to:?}, receiver part at {origin:?}"
                );
            }
        }
        cases += 1;
    }
    assert_eq!(cases, 600);
}

#[test]
fn splits_follow_torch_chunk_and_refuse_what_cannot_be() {
    let s = Split::new(0, 4).unwrap();
    // 10 positions over 4 ranks: chunks of 3, the last one short.
    let ranges: Vec<(i64, i64)> = (0..4).map(|r| s.range(10, r)).collect();
    assert_eq!(ranges, [(0, 3), (3, 3), (6, 3), (9, 1)]);
    // 2 positions over 4 ranks: the last two hold none.
    let ranges: Vec<(i64, i64)> = (0..4).map(|r| s.range(2, r)).collect();
    assert_eq!(ranges, [(0, 1), (1, 1), (2, 0), (2, 0)]);
    assert!(Split::new(0, 0).is_err());
    assert!(Split::new(2, 2).unwrap().local_shape(&[4, 4], 0).is_err());
    assert!(s.local_shape(&[8], 4).is_err());
    let moves =
        redistribution(&[6], &Split::new(0, 2).unwrap(), &Split::new(0, 3).unwrap()).unwrap();
    let boxes: Vec<(usize, usize, i64, i64)> = moves
        .iter()
        .map(|t| (t.from, t.to, t.start[0], t.shape[0]))
        .collect();
    assert_eq!(
        boxes,
        [(0, 0, 0, 2), (0, 1, 2, 1), (1, 1, 3, 1), (1, 2, 4, 2)]
    );
    // A box outside a part is refused.
    let l = StridedLayout::dense(&[3], 8, Order::C).unwrap();
    assert!(moves[3].in_local(&l, &[0]).is_err());
}

#[test]
fn headers_round_trip_and_disagreements_are_errors() {
    use stridekit_layout::dist::Header;
    let mut rng = Rng(42);
    for _ in 0..200 {
        let ndim = rng.below(6) as usize;
        let shape: Vec<i64> = (0..ndim).map(|_| rng.below(1000) as i64).collect();
        let h = Header::new(&shape, 1 + rng.below(16) as usize, rng.below(40) as u32)
            .unwrap()
            .with_pieces(1 + rng.below(8) as u32)
            .with_unpacks(rng.below(2) == 1);
        let back = Header::from_bytes(&h.to_bytes()).unwrap();
        assert_eq!(back, h);
        h.agrees_with(&back).unwrap();
        assert_eq!(
            h.volume(),
            Some(shape.iter().product::<i64>() as u64),
            "{shape:?}"
        );
    }
    let h = Header::new(&[4, 6], 4, 2).unwrap();
    for other in [
        Header::new(&[6, 4], 4, 2).unwrap(),
        Header::new(&[4, 6, 1], 4, 2).unwrap(),
        Header::new(&[4, 6], 8, 2).unwrap(),
        Header::new(&[4, 6], 4, 3).unwrap(),
        Header::new(&[4, 6], 4, 2).unwrap().with_pieces(2),
    ] {
        let e = h.agrees_with(&other).unwrap_err().to_string();
        assert!(e.contains("differ") && e.contains("there"), "{e}");
    }
    // A type 0 (bytes only) meets any type of the same itemsize, both ways; not another
    // itemsize.
    let bytes_only = Header::new(&[4, 6], 4, 0).unwrap();
    h.agrees_with(&bytes_only).unwrap();
    bytes_only.agrees_with(&h).unwrap();
    assert!(Header::new(&[4, 6], 2, 0).unwrap().agrees_with(&h).is_err());
    // Garbage, truncated, padded and negative headers are refused, never misread.
    let good = h.to_bytes();
    assert!(Header::from_bytes(&good[..good.len() - 1]).is_err());
    assert!(Header::from_bytes(&[good.clone(), vec![0]].concat()).is_err());
    assert!(Header::from_bytes(&[0u8; 24]).is_err());
    assert!(Header::from_bytes(&[]).is_err());
    let mut neg = good.clone();
    neg[24..32].copy_from_slice(&(-1i64).to_le_bytes());
    assert!(Header::from_bytes(&neg).is_err());
    let mut zero = good.clone();
    zero[8..12].copy_from_slice(&0u32.to_le_bytes());
    assert!(Header::from_bytes(&zero).is_err());
    let mut no_pieces = good.clone();
    no_pieces[16..20].copy_from_slice(&0u32.to_le_bytes());
    assert!(Header::from_bytes(&no_pieces).is_err());
    let mut flags = good;
    flags[20..24].copy_from_slice(&2u32.to_le_bytes());
    assert!(Header::from_bytes(&flags).is_err());
    // Whether a side unpacks is not compared; a transfer moves in pieces when one does.
    let cut = h.clone().with_pieces(4);
    cut.agrees_with(&cut.clone().with_unpacks(true)).unwrap();
    assert_eq!(cut.pieces_with(&cut), 1);
    assert_eq!(cut.pieces_with(&cut.clone().with_unpacks(true)), 4);
    assert_eq!(cut.clone().with_unpacks(true).pieces_with(&cut), 4);
    assert!(Header::new(&[2], 0, 0).is_err());
}
