//! The byte-exact check of `examples/random_bench.rs`: a copy of the pattern-filled source
//! into a poisoned destination, checked on every core without building a reference
//! buffer. Included by the example and by the test files (`common::pattern_check`);
//! `cpu_copy.rs` holds it against the plain reference copy (`common::naive_copy`).
#![allow(dead_code)]

use stridekit::CopyPlan;

/// The byte at offset `o` of the source pattern (what the fill kernel writes).
pub fn pattern(o: u64) -> u8 {
    let w = (o / 4) as u32;
    let h = w.wrapping_mul(2654435761) ^ (w >> 7) ^ 0x5bd1_e995;
    (h >> ((o % 4) * 8)) as u8
}

/// What the destination holds before the copy: the bytes no element reaches must keep it.
pub const POISON: u8 = 0xA5;

/// Calls `f(destination byte, source byte)` (offsets in the two buffers) for each byte of
/// elements `start..end` of `plan` (last axis fastest) until `f` returns false; whether
/// it went through them all.
pub fn walk(
    plan: &CopyPlan,
    start: usize,
    end: usize,
    mut f: impl FnMut(usize, usize) -> bool,
) -> bool {
    let (isz, nd) = (plan.itemsize, plan.ndim());
    let mut idx = vec![0i64; nd];
    let (mut d, mut s) = (plan.dst_offset, plan.src_offset);
    let mut rem = start as i64;
    for ax in (0..nd).rev() {
        idx[ax] = rem % plan.shape[ax];
        rem /= plan.shape[ax];
        d += idx[ax] * plan.dst_strides[ax];
        s += idx[ax] * plan.src_strides[ax];
    }
    for _ in start..end {
        for k in 0..isz {
            if !f(d as usize * isz + k, s as usize * isz + k) {
                return false;
            }
        }
        let mut ax = nd;
        while ax > 0 {
            ax -= 1;
            idx[ax] += 1;
            d += plan.dst_strides[ax];
            s += plan.src_strides[ax];
            if idx[ax] < plan.shape[ax] {
                break;
            }
            d -= plan.dst_strides[ax] * plan.shape[ax];
            s -= plan.src_strides[ax] * plan.shape[ax];
            idx[ax] = 0;
        }
    }
    true
}

/// Whether `got`, the destination's bytes after the copy, is byte for byte the copy of
/// the pattern into the poisoned destination, checked on every core without building a
/// reference: each element's bytes
/// equal the source pattern's, and the bytes no element reaches all kept the poison. The
/// second follows from counts: the destination is unique, so its elements cover distinct
/// bytes, already checked; every other byte is poison exactly when the buffer holds as
/// many non-poison bytes as the elements should.
pub fn exact(got: &[u8], plan: &CopyPlan) -> bool {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let covered = (0..plan.volume.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let mut non_poison = 0usize;
            let whole = walk(
                plan,
                c * CHUNK,
                ((c + 1) * CHUNK).min(plan.volume),
                |d, s| {
                    let want = pattern(s as u64);
                    non_poison += usize::from(want != POISON);
                    got.get(d) == Some(&want)
                },
            );
            whole.then_some(non_poison)
        })
        .try_reduce(|| 0, |a, b| Some(a + b));
    covered.is_some_and(|n| got.par_iter().filter(|&&b| b != POISON).count() == n)
}
