//! The check before a transfer moves any byte: each pair of ranks swaps what it posted
//! (how many sends and receives, then each one's [`Header`]), so that a disagreement is
//! the same error on both ranks instead of a hang or a wrong result.

use super::comm::Communicator;
use crate::copy::temporaries_pool;
use crate::device::Device;
use crate::error::{invalid, Result};
use crate::memory::{copy_bytes_unchecked, MemoryResource};
use crate::runtime::Runtime;
use cudarc::driver::CudaStream;
use std::sync::Arc;
use stridekit_layout::dist::Header;

/// One transfer a rank posted: to or from `peer`, with its header.
pub(crate) struct Posted<'h> {
    pub peer: usize,
    pub send: bool,
    pub header: &'h Header,
}

/// The first bytes of a count message ("SKB1").
const COUNT_MAGIC: u32 = 0x3142_4b53;
const COUNT_BYTES: usize = 16;
/// Header bytes a count message carries inline (about ten headers of four axes); more
/// take a second round.
const INLINE_BYTES: usize = 496;

/// Swaps counts and headers (one round when the headers fit inline), then verdicts,
/// with every peer of `posted` (with every rank when `collective`), and checks that the
/// k-th send of each rank to another matches the k-th receive of the other from it. Both
/// ranks of a pair see the same two messages, so a mismatch fails on both; the verdicts
/// make a rank whose other pair failed fail its peers too. Returns the peer's header of
/// each posted transfer (its receive's for a send, its send's for a receive), in the
/// order of `posted`.
pub(crate) fn agree<C: Communicator + ?Sized>(
    op: &'static str,
    comm: &C,
    posted: &[Posted<'_>],
    collective: bool,
    stream: &Arc<CudaStream>,
) -> Result<Vec<Header>> {
    let me = comm.rank();
    let mut peers: Vec<usize> = if collective {
        (0..comm.size()).collect()
    } else {
        posted.iter().map(|p| p.peer).collect()
    };
    peers.sort_unstable();
    peers.dedup();
    if peers.is_empty() {
        return Ok(Vec::new());
    }
    // What this rank posted with each peer: sends first, then receives, in order.
    let mine: Vec<(Vec<&Header>, Vec<&Header>)> = peers
        .iter()
        .map(|&p| {
            let of = |send: bool| {
                posted
                    .iter()
                    .filter(|x| x.peer == p && x.send == send)
                    .map(|x| x.header)
                    .collect::<Vec<_>>()
            };
            (of(true), of(false))
        })
        .collect();
    let encoded: Vec<Vec<u8>> = mine
        .iter()
        .map(|(s, r)| {
            let mut out = Vec::new();
            for h in s.iter().chain(r) {
                let b = h.to_bytes();
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(&b);
            }
            out
        })
        .collect();

    // Transfers with oneself alone need no messages: the same checks, on our own.
    if peers == [me] {
        let msg = count_message(&mine[0], &encoded[0]);
        check_counts(op, me, me, (mine[0].0.len(), mine[0].1.len()), &msg)?;
        let decoded = check_headers(op, me, me, &mine[0], &encoded[0])?;
        return peer_headers(posted, &peers, &mine, vec![Some(decoded)]);
    }

    // Round 1: counts, with the headers inline when they fit (the common case).
    let first: Vec<(usize, Vec<u8>)> = peers
        .iter()
        .zip(&mine)
        .zip(&encoded)
        .map(|((&p, m), e)| {
            let mut msg = count_message(m, e);
            msg.extend_from_slice(&e[..e.len().min(INLINE_BYTES)]);
            msg.resize(COUNT_BYTES + INLINE_BYTES, 0);
            (p, msg)
        })
        .collect();
    let lens: Vec<(usize, usize)> = peers
        .iter()
        .map(|&p| (p, COUNT_BYTES + INLINE_BYTES))
        .collect();
    let theirs = swap(op, comm, &first, &lens, stream)?;
    // A pair whose counts disagree skips the later rounds on both sides (each sees it).
    let mut failure = None;
    let mut agreed = Vec::with_capacity(peers.len());
    for (i, ((&p, (s, r)), t)) in peers.iter().zip(&mine).zip(&theirs).enumerate() {
        match check_counts(op, me, p, (s.len(), r.len()), &t[..COUNT_BYTES]) {
            Ok(n) => agreed.push((
                i,
                n,
                t[COUNT_BYTES..COUNT_BYTES + n.min(INLINE_BYTES)].to_vec(),
            )),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }

    // Round 2, only between ranks one of which has more headers than fit inline: the rest.
    let long: Vec<usize> = (0..agreed.len())
        .filter(|&k| {
            let (i, n, _) = &agreed[k];
            encoded[*i].len() > INLINE_BYTES || *n > INLINE_BYTES
        })
        .collect();
    if !long.is_empty() {
        let out: Vec<(usize, Vec<u8>)> = long
            .iter()
            .map(|&k| {
                let i = agreed[k].0;
                (
                    peers[i],
                    encoded[i][encoded[i].len().min(INLINE_BYTES)..].to_vec(),
                )
            })
            .collect();
        let lens: Vec<(usize, usize)> = long
            .iter()
            .map(|&k| (peers[agreed[k].0], agreed[k].1.saturating_sub(INLINE_BYTES)))
            .collect();
        let rest = swap(op, comm, &out, &lens, stream)?;
        for (&k, r) in long.iter().zip(rest) {
            agreed[k].2.extend_from_slice(&r);
        }
    }
    let mut decoded = vec![None; peers.len()];
    for (i, _, t) in &agreed {
        match check_headers(op, me, peers[*i], &mine[*i], t) {
            Ok(d) => decoded[*i] = Some(d),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }

    // Last round: each rank's verdict, so that a rank whose other peer disagreed does not
    // leave this one waiting for a transfer it will never post.
    let verdict = u32::from(failure.is_some()).to_le_bytes().to_vec();
    let out: Vec<(usize, Vec<u8>)> = agreed
        .iter()
        .map(|(i, _, _)| (peers[*i], verdict.clone()))
        .collect();
    let lens: Vec<(usize, usize)> = agreed.iter().map(|(i, _, _)| (peers[*i], 4)).collect();
    let theirs = swap(op, comm, &out, &lens, stream)?;
    if let Some(e) = failure {
        return Err(e);
    }
    for ((p, _), t) in lens.iter().zip(&theirs) {
        if t.as_slice() != [0, 0, 0, 0] {
            return Err(invalid(
                op,
                format!(
                    "rank {p} refused the transfer (its own error says why); nothing was moved"
                ),
            ));
        }
    }
    peer_headers(posted, &peers, &mine, decoded)
}

/// The peer's header of each posted transfer, from each peer's decoded headers (its
/// sends to this rank, then its receives from it; `mine[i]` this rank's with `peers[i]`).
fn peer_headers(
    posted: &[Posted<'_>],
    peers: &[usize],
    mine: &[(Vec<&Header>, Vec<&Header>)],
    decoded: Vec<Option<Vec<Header>>>,
) -> Result<Vec<Header>> {
    let mut seen = vec![(0usize, 0usize); peers.len()];
    posted
        .iter()
        .map(|x| {
            let i = peers.binary_search(&x.peer).ok();
            let found = i.and_then(|i| {
                let (sends, recvs) = &mut seen[i];
                // Their sends come first: as many as this rank's receives from them.
                let at = if x.send {
                    *sends += 1;
                    mine[i].1.len() + *sends - 1
                } else {
                    *recvs += 1;
                    *recvs - 1
                };
                decoded[i].as_ref()?.get(at).cloned()
            });
            found.ok_or_else(|| {
                invalid(
                    "dist",
                    format!("no header of rank {} for a transfer posted with it", x.peer),
                )
            })
        })
        .collect()
}

/// The count message to a peer: magic, sends, receives, header bytes (u32 each).
fn count_message((s, r): &(Vec<&Header>, Vec<&Header>), encoded: &[u8]) -> Vec<u8> {
    [
        COUNT_MAGIC,
        s.len() as u32,
        r.len() as u32,
        encoded.len() as u32,
    ]
    .iter()
    .flat_map(|w| w.to_le_bytes())
    .collect()
}

/// Checks a peer's count message against what this rank posted with it; the number of
/// header bytes the peer will send next.
fn check_counts(
    op: &'static str,
    me: usize,
    p: usize,
    (sends, recvs): (usize, usize),
    t: &[u8],
) -> Result<usize> {
    let w = |i: usize| u32::from_le_bytes([t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]]);
    if t.len() != COUNT_BYTES || w(0) != COUNT_MAGIC {
        return Err(invalid(
            op,
            format!("rank {p} answered rank {me} with bytes that are not a stridekit transfer count; both ranks must run the same transfer"),
        ));
    }
    let (ts, tr) = (w(1) as usize, w(2) as usize);
    if ts != recvs || tr != sends {
        let (lo, hi) = (me.min(p), me.max(p));
        let ((lo_s, lo_r), (hi_s, hi_r)) = if me <= p {
            ((sends, recvs), (ts, tr))
        } else {
            ((ts, tr), (sends, recvs))
        };
        return Err(invalid(
            op,
            format!("ranks {lo} and {hi} posted transfers that do not match: rank {lo} sends {lo_s} to and receives {lo_r} from rank {hi}, rank {hi} sends {hi_s} to and receives {hi_r} from rank {lo} (each send must meet a receive, in order)"),
        ));
    }
    Ok(w(3) as usize)
}

/// Checks a peer's headers (its sends to this rank, then its receives from it) against
/// this rank's receives from it and sends to it.
fn check_headers(
    op: &'static str,
    me: usize,
    p: usize,
    (s, r): &(Vec<&Header>, Vec<&Header>),
    t: &[u8],
) -> Result<Vec<Header>> {
    let decoded = split_headers(op, p, t)?;
    if decoded.len() != s.len() + r.len() {
        return Err(invalid(
            op,
            format!(
                "rank {p} sent {} headers to rank {me}, {} were announced",
                decoded.len(),
                s.len() + r.len()
            ),
        ));
    }
    let (their_s, their_r) = decoded.split_at(r.len());
    for (k, (m, t)) in r.iter().zip(their_s).enumerate() {
        m.agrees_with(t)
            .map_err(|e| invalid(op, format!("transfer {k} from rank {p} to rank {me}: {e}")))?;
    }
    for (k, (m, t)) in s.iter().zip(their_r).enumerate() {
        m.agrees_with(t)
            .map_err(|e| invalid(op, format!("transfer {k} from rank {me} to rank {p}: {e}")))?;
    }
    Ok(decoded)
}

fn split_headers(op: &'static str, peer: usize, mut b: &[u8]) -> Result<Vec<Header>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let n = b
            .get(..4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
            .filter(|&n| b.len() >= 4 + n)
            .ok_or_else(|| invalid(op, format!("rank {peer} sent truncated transfer headers")))?;
        out.push(Header::from_bytes(&b[4..4 + n])?);
        b = &b[4 + n..];
    }
    Ok(out)
}

/// The pinned staging a swap takes from its device's runtime when its messages fit.
const STAGING_BYTES: usize = 1 << 20;

/// Sends `out[i].1` to rank `out[i].0` and receives `lens[i].1` bytes from rank
/// `lens[i].0`, all in one group, through device memory staged from and to pinned host
/// memory (pageable transfers could wait for other streams' work); waits for them and
/// returns the bytes received, in the order of `lens`.
pub(crate) fn swap<C: Communicator + ?Sized>(
    op: &'static str,
    comm: &C,
    out: &[(usize, Vec<u8>)],
    lens: &[(usize, usize)],
    stream: &Arc<CudaStream>,
) -> Result<Vec<Vec<u8>>> {
    let total_out: usize = out.iter().map(|(_, b)| b.len()).sum();
    let total_in: usize = lens.iter().map(|&(_, n)| n).sum();
    let runtime = Runtime::get(op, comm.device())?;
    let pool = temporaries_pool(&Device::open(comm.device())?)?;
    let ob = pool.allocate(total_out, stream)?;
    let ib = pool.allocate(total_in, stream)?;
    let stage = runtime.take_staging(op, (total_out + total_in).max(STAGING_BYTES))?;
    let flat: Vec<u8> = out.iter().flat_map(|(_, b)| b.iter().copied()).collect();
    let moved = (|| -> Result<Vec<u8>> {
        // SAFETY: the staging block is pinned host memory of at least `total_out +
        // total_in` bytes, idle (taken from the runtime with no transfer in flight) and
        // ours until given back.
        unsafe {
            std::ptr::copy_nonoverlapping(flat.as_ptr(), stage.ptr() as *mut u8, total_out);
        }
        if total_out > 0 {
            // SAFETY: both spans hold `total_out` bytes and live until the stream is
            // synchronized below; `ob` is written by nothing else.
            unsafe { copy_bytes_unchecked(op, ob.ptr(), stage.ptr(), total_out, stream)? };
        }
        comm.group_start(op)?;
        let mut queued = Ok(());
        let mut off = 0u64;
        for (p, b) in out {
            if b.is_empty() || queued.is_err() {
                continue;
            }
            // SAFETY: `ob` is device memory of the communicator's device holding
            // `total_out` bytes; it lives until the stream is synchronized below.
            queued = unsafe { comm.send_bytes(op, ob.ptr() + off, b.len(), *p, stream) };
            off += b.len() as u64;
        }
        let mut off = 0u64;
        for &(p, n) in lens {
            if n == 0 || queued.is_err() {
                continue;
            }
            // SAFETY: as above, for `ib`, which nothing else uses.
            queued = unsafe { comm.recv_bytes(op, ib.ptr() + off, n, p, stream) };
            off += n as u64;
        }
        let ended = comm.group_end(op);
        if let Err(e) = queued.and(ended) {
            return Err(comm.fail(op, e));
        }
        let back = stage.ptr() + total_out as u64;
        if total_in > 0 {
            // SAFETY: `ib` and the staging block's second part hold `total_in` bytes and
            // live until the stream is synchronized below.
            unsafe { copy_bytes_unchecked(op, back, ib.ptr(), total_in, stream)? };
        }
        stream
            .synchronize()
            .map_err(crate::error::driver(op, "cuStreamSynchronize"))?;
        let mut host = vec![0u8; total_in];
        // SAFETY: the copy into the staging block is done (synchronized above).
        unsafe { std::ptr::copy_nonoverlapping(back as *const u8, host.as_mut_ptr(), total_in) };
        Ok(host)
    })();
    let host = match moved {
        Ok(h) => {
            runtime.give_back_staging(op, stage)?;
            h
        }
        Err(e) => {
            // The block is freed only once the stream's transfers from and to it are done.
            let _ = stream.synchronize();
            return Err(e);
        }
    };
    let mut res = Vec::with_capacity(lens.len());
    let mut rest = host.as_slice();
    for &(_, n) in lens {
        let (a, b) = rest.split_at(n);
        res.push(a.to_vec());
        rest = b;
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(s: u32, r: u32, bytes: u32) -> Vec<u8> {
        [COUNT_MAGIC, s, r, bytes]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }

    #[test]
    fn counts_must_mirror_and_both_ranks_word_the_error_alike() {
        // Rank 0 sends 2 to rank 1 and receives 1; rank 1 must send 1 and receive 2.
        assert_eq!(
            check_counts("t", 0, 1, (2, 1), &counts(1, 2, 40)).unwrap(),
            40
        );
        let e0 = check_counts("t", 0, 1, (2, 1), &counts(1, 1, 0)).unwrap_err();
        let e1 = check_counts("t", 1, 0, (1, 1), &counts(2, 1, 0)).unwrap_err();
        assert_eq!(e0.to_string(), e1.to_string());
        assert!(
            e0.to_string()
                .contains("rank 0 sends 2 to and receives 1 from rank 1, rank 1 sends 1 to and receives 1 from rank 0"),
            "{e0}"
        );
        let mut bad = counts(1, 2, 0);
        bad[0] ^= 1;
        assert!(check_counts("t", 0, 1, (2, 1), &bad)
            .unwrap_err()
            .to_string()
            .contains("not a stridekit transfer count"));
        assert!(check_counts("t", 0, 1, (2, 1), &bad[..8]).is_err());
    }

    fn encode(hs: &[&Header]) -> Vec<u8> {
        let mut out = Vec::new();
        for h in hs {
            let b = h.to_bytes();
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(&b);
        }
        out
    }

    #[test]
    fn each_posted_transfer_gets_the_header_its_peer_posted_for_it() {
        let h = |n: i64, unpacks: bool| Header::new(&[n], 4, 0).unwrap().with_unpacks(unpacks);
        // With rank 1: sends s1, s2 and receive r1; with rank 3: receive r3.
        let (s1, s2, r1, r3) = (h(1, false), h(2, false), h(3, false), h(4, false));
        let posted = [
            Posted {
                peer: 1,
                send: true,
                header: &s1,
            },
            Posted {
                peer: 3,
                send: false,
                header: &r3,
            },
            Posted {
                peer: 1,
                send: false,
                header: &r1,
            },
            Posted {
                peer: 1,
                send: true,
                header: &s2,
            },
        ];
        let peers = [1, 3];
        let mine = vec![(vec![&s1, &s2], vec![&r1]), (vec![], vec![&r3])];
        // Rank 1's message: its send (meets r1), then its receives (meet s1, s2).
        let from1 = vec![h(3, true), h(1, true), h(2, false)];
        let from3 = vec![h(4, true)];
        let got = peer_headers(&posted, &peers, &mine, vec![Some(from1), Some(from3)]).unwrap();
        let want = [h(1, true), h(4, true), h(3, true), h(2, false)];
        assert_eq!(got, want);
        // A peer whose headers are missing is an error, not a guess.
        assert!(peer_headers(&posted, &peers, &mine, vec![None, None]).is_err());
    }

    #[test]
    fn headers_are_matched_send_to_receive_in_order() {
        let a = Header::new(&[4, 6], 4, 3).unwrap();
        let b = Header::new(&[2], 8, 0).unwrap();
        let c = Header::new(&[6, 4], 4, 3).unwrap();
        // This rank sends [a] to the peer and receives [b] from it; the peer's message
        // holds its sends (meeting our receives), then its receives (meeting our sends).
        let mine = (vec![&a], vec![&b]);
        check_headers("t", 0, 1, &mine, &encode(&[&b, &a])).unwrap();
        let e = check_headers("t", 0, 1, &mine, &encode(&[&b, &c])).unwrap_err();
        assert!(
            e.to_string().contains("transfer 0 from rank 0 to rank 1")
                && e.to_string().contains("extents differ"),
            "{e}"
        );
        let e = check_headers("t", 0, 1, &mine, &encode(&[&b])).unwrap_err();
        assert!(e.to_string().contains("sent 1 headers"), "{e}");
        let mut cut = encode(&[&b, &a]);
        cut.pop();
        assert!(check_headers("t", 0, 1, &mine, &cut).is_err());
    }
}
