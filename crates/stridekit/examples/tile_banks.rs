//! Shared-memory bank conflicts of the multi-axis tile kernel (`tile_copy.cu`), counted
//! on the CPU: `cargo run --release --example tile_banks [CASES]` (CASES: comma-separated
//! case numbers of `random_bench`'s set, default all; the fixed many-axis permutes of
//! `copy_bench` always). No GPU.
//!
//! For each multi-axis tile of a copy's schedule it replays one tile as the kernel's
//! 256 threads walk it - the scatter (a thread's read words, each element stored at its
//! destination-order slot, with the slot table's loads where words hold several
//! elements) and the write loop (each written word loaded from its slots) - and counts,
//! per warp instruction, the wavefronts the 32 banks need: per phase (32 lanes for
//! accesses up to 4 bytes, 16 for 8, 8 for 16), the most distinct 4-byte words any bank
//! holds. Conflicts are wavefronts beyond one a phase, times the tiles: what Nsight
//! Compute counts as `l1tex__data_bank_conflicts_pipe_lsu_mem_shared` (the tables a
//! block builds once are left out). Printed for the padding the planner chose
//! (`TilePlan::slot_shift`, one written word after each group) and for the fixed 4 bytes
//! after every 128 with 4-byte pieces of written words (the kernel before them). With
//! `CHOICE=1`, per tile instead: the conflicts at the densest group, at the planner's
//! and at the best of the groups it chooses from (a check on its sampled model).
//!
//! Against Nsight Compute on the H100 (`BENCHMARKS.md`): random case 119 3.86 M counted,
//! 3.91 M measured (2.23 against 2.29 M with groups); 6-D f32 permute 2.10 against 2.18
//! M; 5-D f64 0.64 against 0.68 M; random case 96 1.32 against 1.44 M.

use stridekit::{CopyPlan, CopyStep, Order, StridedLayout, TilePlan};

#[path = "../tests/common/random_set.rs"]
mod random_set;

/// Threads of a block, and the kernel's loads per thread.
const THREADS: usize = 256;

/// One warp instruction's accesses: byte addresses (relative to the region) and size.
struct Access {
    at: Vec<usize>,
    size: usize,
}

/// Wavefronts beyond one a phase of one warp instruction.
fn excess(a: &Access) -> u64 {
    let per_phase = (128 / a.size.max(4)).min(32);
    let mut total = 0u64;
    for phase in a.at.chunks(per_phase) {
        let mut words: Vec<usize> = phase
            .iter()
            .flat_map(|&b| b / 4..(b + a.size).div_ceil(4))
            .collect();
        words.sort_unstable();
        words.dedup();
        let mut bank = [0u64; 32];
        for w in words {
            bank[w % 32] += 1;
        }
        total += bank.into_iter().max().unwrap_or(1).saturating_sub(1);
    }
    total
}

/// The words (of `n`) that warp `warp`'s lanes take in a block's pass `pass` over them
/// (word `pass * 256 + thread`, as the kernel's loops walk them).
fn warp_words(warp: usize, pass: usize, n: usize) -> Vec<usize> {
    (0..32)
        .map(|l| pass * THREADS + warp * 32 + l)
        .filter(|&w| w < n)
        .collect()
}

/// Conflicts of one tile: (scatter stores, slot-table loads, write loads).
fn tile_conflicts(t: &TilePlan, planned: bool) -> (u64, u64, u64) {
    let isz = t.itemsize;
    let (rw, ww) = (t.read_word, t.write_word);
    let vol = t.volume();
    let (nr, nw) = (vol / rw, vol / ww);
    let reads = t.read_order();
    // Padding: the planner's, or 4 bytes after every 128 (the kernel before it).
    let (pad, shift) = if planned {
        (t.slot_pad(), t.slot_shift)
    } else {
        let pad = (4 / isz).max(1);
        (pad, (32 * pad).trailing_zeros())
    };
    let slot = |j: usize| TilePlan::slot(j, pad, shift) * isz;
    let unr = TilePlan::loads_per_thread(rw * isz);
    let (mut scatter, mut table, mut write) = (0u64, 0u64, 0u64);
    for warp in 0..THREADS / 32 {
        for u in 0..unr {
            let words = warp_words(warp, u, nr);
            if words.is_empty() {
                continue;
            }
            if rw > 1 {
                if rw % 8 == 0 {
                    for h in 0..rw / 8 {
                        let at = words.iter().map(|&w| (w * rw + 8 * h) * 2).collect();
                        table += excess(&Access { at, size: 16 });
                    }
                } else {
                    for v in 0..rw {
                        let at = words.iter().map(|&w| (w * rw + v) * 2).collect();
                        table += excess(&Access { at, size: 2 });
                    }
                }
            }
            for v in 0..rw {
                let at = words.iter().map(|&w| slot(reads[w * rw + v].1)).collect();
                scatter += excess(&Access { at, size: isz });
            }
        }
        let mut k = 0;
        loop {
            let words = warp_words(warp, k, nw);
            if words.is_empty() {
                break;
            }
            k += 1;
            let bytes = ww * isz;
            if ww > 1 && bytes >= 4 && planned {
                let at = words.iter().map(|&w| slot(w * ww)).collect();
                write += excess(&Access { at, size: bytes });
            } else if ww > 1 && bytes >= 4 && isz < 4 {
                for h in 0..bytes / 4 {
                    let at = words.iter().map(|&w| slot(w * ww) + 4 * h).collect();
                    write += excess(&Access { at, size: 4 });
                }
            } else {
                for v in 0..ww {
                    let at = words.iter().map(|&w| slot(w * ww + v)).collect();
                    write += excess(&Access { at, size: isz });
                }
            }
        }
    }
    (scatter, table, write)
}

/// Exact scatter + write conflicts of one tile with the planner's pad and group `shift`.
fn cost_at(t: &TilePlan, shift: u32) -> u64 {
    let mut u = t.clone();
    u.slot_shift = shift;
    let (a, b, c) = tile_conflicts(&u, true);
    a + b + c
}

fn report(name: &str, dst: &StridedLayout, src: &StridedLayout) {
    let Ok(plan) = CopyPlan::new(dst, src) else {
        return;
    };
    for step in plan.schedule(1 << 40, 1 << 41).iter() {
        let CopyStep::Tiled(t) = step else { continue };
        let n = t.tiles();
        let (a, b, c) = tile_conflicts(t, false);
        let (d, e, f) = tile_conflicts(t, true);
        if std::env::var("CHOICE").is_ok() {
            let first = t.densest_slot_shift();
            let costs: Vec<u64> = (first..=first + 6).map(|s| cost_at(t, s)).collect();
            let best = costs.iter().min().copied().unwrap_or(0);
            println!(
                "CHOICE {name} isz {} v{} x{n}: densest {:.3} M, planned {:.3} M, best {:.3} M",
                t.itemsize,
                t.volume(),
                costs[0] as f64 * n as f64 / 1e6,
                cost_at(t, t.slot_shift) as f64 * n as f64 / 1e6,
                best as f64 * n as f64 / 1e6
            );
            continue;
        }
        println!(
            "{name}: tile v{} r{} w{} x{n}: before {:.3} M (scatter {:.3}, table {:.3}, write {:.3}); planned shift {} {:.3} M (scatter {:.3}, table {:.3}, write {:.3})",
            t.volume(),
            t.read_word * t.itemsize,
            t.write_word * t.itemsize,
            (a + b + c) as f64 * n as f64 / 1e6,
            a as f64 * n as f64 / 1e6,
            b as f64 * n as f64 / 1e6,
            c as f64 * n as f64 / 1e6,
            t.slot_shift,
            (d + e + f) as f64 * n as f64 / 1e6,
            d as f64 * n as f64 / 1e6,
            e as f64 * n as f64 / 1e6,
            f as f64 * n as f64 / 1e6,
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fixed: [(&str, Vec<i64>, Vec<i64>, usize); 3] = [
        ("5-D 32^5 f32", vec![32; 5], vec![4, 2, 0, 3, 1], 4),
        ("6-D 16^6 f32", vec![16; 6], vec![5, 3, 1, 4, 2, 0], 4),
        ("5-D f64", vec![24, 40, 3, 50, 36], vec![3, 1, 4, 0, 2], 8),
    ];
    for (name, shape, perm, isz) in fixed {
        let src = StridedLayout::dense(&shape, isz, Order::C)?.permuted(&perm)?;
        let dst = StridedLayout::dense(src.shape(), isz, Order::C)?;
        report(name, &dst, &src);
    }
    let wanted = std::env::args()
        .nth(1)
        .map(|a| random_set::case_numbers(&a));
    for (case, c) in random_set::published(wanted) {
        report(&format!("case {case}"), &c.dst, &c.src);
    }
    Ok(())
}
