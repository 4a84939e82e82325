//! Host time of planning copies, no GPU needed: `cargo run --release --example plan_bench`.
//!
//! Plans and schedules every case of five random sets (the published one and four other
//! seeds, 1000 layouts) at four pointer alignments, each 20 times, and prints the median
//! and 90th percentile of one plan's time, over all plans and over those that take
//! multi-axis tiles. It also prints a digest of every schedule: a change meant to make
//! planning faster without changing what it plans must leave the digest as it was; and
//! checks that each schedule is the same at base addresses a multiple of
//! `SCHEDULE_ADDRESS_PERIOD` further on (what lets the engine keep schedules).

use std::hash::{Hash, Hasher};
use std::time::Instant;
use stridekit::{CopyPlan, CopyStep, SCHEDULE_ADDRESS_PERIOD};

#[path = "../tests/common/random_set.rs"]
mod random_set;

/// Median and 90th percentile of `v` (µs), sorting it.
fn spread(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => (f64::NAN, f64::NAN),
        n => (v[n / 2], v[n * 9 / 10]),
    }
}

fn main() -> Result<(), stridekit::Error> {
    const REPS: u32 = 20;
    let seeds = [
        random_set::SEED,
        0x1234_5678,
        0xdead_beef,
        0x0bad_cafe,
        0x7777_1111,
    ];
    let (mut all, mut tiled) = (vec![], vec![]);
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    let mut moved = 0usize;
    for seed in seeds {
        let mut rng = random_set::Rng(seed);
        for _ in 0..200 {
            let c = random_set::next_case(&mut rng, 64);
            // Base addresses at 256-byte, odd, and 2- and 16-byte multiples.
            for (dst_ptr, src_ptr) in [(0u64, 0u64), (4, 2), (1, 3), (16, 8)] {
                let plan = CopyPlan::new(&c.dst, &c.src)?;
                let steps = plan.schedule(dst_ptr, src_ptr);
                format!("{steps:?}").hash(&mut digest);
                let far = |p: u64, k: u64| p + k * SCHEDULE_ADDRESS_PERIOD;
                if plan.schedule(far(dst_ptr, 0x1_0001), far(src_ptr, 0x3_0303)) != steps {
                    moved += 1;
                }
                let t = Instant::now();
                for _ in 0..REPS {
                    let p =
                        CopyPlan::new(std::hint::black_box(&c.dst), std::hint::black_box(&c.src))?;
                    std::hint::black_box(p.schedule(dst_ptr, src_ptr));
                }
                let us = t.elapsed().as_secs_f64() / f64::from(REPS) * 1e6;
                all.push(us);
                if steps.iter().any(|s| matches!(s, CopyStep::Tiled(_))) {
                    tiled.push(us);
                }
            }
        }
    }
    let (m, p90) = spread(&mut all);
    let (tm, tp90) = spread(&mut tiled);
    println!(
        "plan + schedule, {} plans: median {m:.2} µs, 90th percentile {p90:.2} µs",
        all.len()
    );
    println!(
        "  of them with multi-axis tiles, {}: median {tm:.2} µs, 90th percentile {tp90:.2} µs",
        tiled.len()
    );
    println!("schedule digest: {:016x}", digest.finish());
    println!(
        "schedules that change at addresses a multiple of {SCHEDULE_ADDRESS_PERIOD} bytes further on: {moved} (must be 0)"
    );
    Ok(())
}
