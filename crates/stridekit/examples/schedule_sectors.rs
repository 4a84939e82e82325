//! Which 32-byte sectors a copy's schedule touches from more than one tile (or launch),
//! on the random set of `random_bench`, without a GPU:
//! `cargo run --release --example schedule_sectors [CASES]` (CASES: comma-separated case
//! numbers, default all 200).
//!
//! A sector that two tiles both read, or both write in part, is fetched (or read, merged
//! and written back) once per tile unless the second comes while the first is still in
//! L2. For each case the schedule is planned at 256-byte aligned base pointers (as the
//! benchmark's buffers are), every element of every step is walked, and each sector of
//! either side is tagged with the first tile (a tiled step's tile, or a whole launch for
//! the other steps) that touched it: printed is the share of touched sectors that a
//! second tile touched too, per side. `BENCHMARKS.md` holds the result beside each case's
//! efficiency.

use stridekit::CopyStep;

#[path = "../tests/common/pattern_check.rs"]
mod pattern_check;
#[path = "../tests/common/random_set.rs"]
mod random_set;

/// The first tile that touched each sector of one side, and whether another did too.
struct Sectors {
    first: Vec<u32>,
    shared: Vec<bool>,
}

impl Sectors {
    fn new(bytes: usize) -> Self {
        let n = bytes / 32 + 2;
        Sectors {
            first: vec![u32::MAX; n],
            shared: vec![false; n],
        }
    }

    /// Tile `tile` touches the byte at offset `byte` of the side's span.
    fn touch(&mut self, tile: u32, byte: usize) {
        let s = byte / 32;
        let Some(f) = self.first.get_mut(s) else {
            eprintln!("sector {s} is outside the side's span");
            std::process::exit(2);
        };
        if *f == u32::MAX {
            *f = tile;
        } else if *f != tile {
            self.shared[s] = true;
        }
    }

    /// Percent of the touched sectors that more than one tile touched, and the count.
    fn shared_percent(&self) -> (f64, usize) {
        let touched = self.first.iter().filter(|&&f| f != u32::MAX).count();
        let shared = self.shared.iter().filter(|&&s| s).count();
        (100.0 * shared as f64 / touched.max(1) as f64, touched)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let wanted = std::env::args()
        .nth(1)
        .map(|a| random_set::case_numbers(&a));
    for (case, c) in random_set::published(wanted) {
        let plan = stridekit::CopyPlan::new(&c.dst, &c.src)?;
        let steps = plan.schedule(1 << 40, 1 << 41);
        let (mut src, mut dst) = (Sectors::new(c.src_bytes), Sectors::new(c.dst_bytes));
        let mut tile = 0u32;
        for step in &steps {
            let mut touch = |t: u32, s: usize, d: usize| {
                src.touch(t, s);
                dst.touch(t, d);
            };
            match step {
                CopyStep::Tiled(t) => {
                    let isz = t.itemsize;
                    let (reads, writes) = (t.read_order(), t.write_order());
                    for k in 0..t.tiles() {
                        let (s0, d0) = t.tile_offsets(k);
                        tile += 1;
                        for &(s, j) in &reads {
                            let (s, d) = ((s0 + s) as usize * isz, (d0 + writes[j]) as usize * isz);
                            for b in 0..isz {
                                touch(tile, s + b, d + b);
                            }
                        }
                    }
                }
                // A step's offsets count its own elements (a widened step's are words):
                // `walk` gives their bytes.
                CopyStep::Memcpy(p)
                | CopyStep::Elementwise(p)
                | CopyStep::Transpose { plan: p, .. }
                | CopyStep::Channels { plan: p, .. }
                | CopyStep::SmallMatrices { plan: p, .. }
                | CopyStep::Rows { plan: p }
                | CopyStep::ReversedRows { plan: p }
                | CopyStep::Repeat { plan: p, .. }
                | CopyStep::ReversedChannels { plan: p, .. } => {
                    tile += 1;
                    let t = tile;
                    pattern_check::walk(p, 0, p.volume, |d, s| {
                        touch(t, s, d);
                        true
                    });
                }
            }
        }
        let ((sp, sn), (dp, dn)) = (src.shared_percent(), dst.shared_percent());
        println!(
            "case {case:3}: {} steps; destination {dn} sectors, {dp:.1}% touched by more than one tile; source {sn} sectors, {sp:.1}%",
            steps.len()
        );
    }
    Ok(())
}
