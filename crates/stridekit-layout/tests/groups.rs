//! Overlapping copies in independent groups (`CopyPlan::overlap_groups`): wherever the
//! plan says the groups are independent, running them one after another in any order,
//! each read whole before it is written, gives what copying the source out first gives.

use proptest::prelude::*;
use stridekit_layout::{CopyPlan, StridedLayout};

/// One side of a copy over a (4, 6, 10) buffer of bytes: per buffer axis a start and a
/// step, the axes then taken in `order`.
#[derive(Debug, Clone)]
struct Side {
    starts: [i64; 3],
    steps: [i64; 3],
    order: [usize; 3],
}

const BUF: [i64; 3] = [4, 6, 10];
const BUF_STRIDES: [i64; 3] = [60, 10, 1];

/// A side over buffer extents `m` (each at most the buffer's), its axes in some order.
fn side(m: [i64; 3]) -> impl Strategy<Value = Side> {
    let axis = move |k: usize| {
        prop_oneof![Just(1i64), Just(-1), Just(2)].prop_flat_map(move |step| {
            // A step that cannot fit m[k] elements falls back to 1.
            let step = if (m[k] - 1) * step.abs() > BUF[k] - 1 {
                1
            } else {
                step
            };
            let span = (m[k] - 1) * step.abs();
            (0..=BUF[k] - 1 - span).prop_map(move |s| (if step < 0 { s + span } else { s }, step))
        })
    };
    (
        axis(0),
        axis(1),
        axis(2),
        Just([0usize, 1, 2]).prop_shuffle(),
    )
        .prop_map(|(a, b, c, o)| Side {
            starts: [a.0, b.0, c.0],
            steps: [a.1, b.1, c.1],
            order: [o[0], o[1], o[2]],
        })
}

/// The plan-order extents of a side over buffer extents `m`.
fn extents(s: &Side, m: [i64; 3]) -> [i64; 3] {
    [m[s.order[0]], m[s.order[1]], m[s.order[2]]]
}

fn view(s: &Side, n: [i64; 3]) -> Option<StridedLayout> {
    let mut m = [0; 3];
    for i in 0..3 {
        m[s.order[i]] = n[i];
    }
    let mut offset = 0;
    let mut strides = [0; 3];
    for k in 0..3 {
        let last = s.starts[k] + s.steps[k] * (m[k] - 1);
        if !(0..BUF[k]).contains(&s.starts[k]) || !(0..BUF[k]).contains(&last) {
            return None;
        }
        offset += s.starts[k] * BUF_STRIDES[k];
        strides[k] = s.steps[k] * BUF_STRIDES[k];
    }
    let l = StridedLayout::with_offset(&m, &strides, 1, offset).ok()?;
    let order: Vec<i64> = s.order.iter().map(|&a| a as i64).collect();
    l.permuted(&order).ok()
}

/// Element offsets of `plan`'s side (`src`: the source) in plan index order.
fn offsets(plan: &CopyPlan, src: bool) -> Vec<i64> {
    let (strides, start) = if src {
        (&plan.src_strides, plan.src_offset)
    } else {
        (&plan.dst_strides, plan.dst_offset)
    };
    let mut out = vec![start];
    for (&e, &s) in plan.shape.iter().zip(strides.iter()) {
        out = out
            .iter()
            .flat_map(|&o| (0..e).map(move |i| o + i * s))
            .collect();
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn independent_groups_copy_as_if_the_source_were_copied_out_first(
        sides in (1i64..=4, 1i64..=6, 1i64..=10).prop_map(|(a, b, c)| [a, b, c])
            .prop_flat_map(|m| (Just(m), side(m), side(m))),
        shift in proptest::array::uniform3(-2i64..=2),
        shifted in any::<bool>(),
        reverse in any::<bool>(),
    ) {
        let (m, d, mut s) = sides;
        if shifted {
            // The destination's own layout moved a little (x[:, 1:] = x[:, :-1] and kin).
            s = d.clone();
            for (start, by) in s.starts.iter_mut().zip(shift) {
                *start += by;
            }
        }
        let n = extents(&d, m);
        let (Some(dst), Some(src)) = (view(&d, n), view(&s, n)) else { return Ok(()) };
        let Ok(plan) = CopyPlan::new(&dst, &src) else { return Ok(()) };
        let delta = plan.src_offset - plan.dst_offset; // one-byte elements, one buffer
        if !plan.overlap_groups(delta) {
            return Ok(());
        }
        let size = (BUF[0] * BUF[1] * BUF[2]) as usize;
        let start: Vec<u32> = (0..size as u32).collect();
        let (so, dof) = (offsets(&plan, true), offsets(&plan, false));
        // Copied out first.
        let mut want = start.clone();
        let vals: Vec<u32> = so.iter().map(|&o| start[o as usize]).collect();
        for (k, &o) in dof.iter().enumerate() {
            want[o as usize] = vals[k];
        }
        // Group by group (runs of the last axis), each read whole, then written.
        let g = *plan.shape.last().unwrap() as usize;
        let mut got = start;
        let mut groups: Vec<usize> = (0..so.len() / g).collect();
        if reverse {
            groups.reverse();
        }
        for q in groups {
            let r = q * g..(q + 1) * g;
            let read: Vec<u32> = so[r.clone()].iter().map(|&o| got[o as usize]).collect();
            for (k, &o) in dof[r].iter().enumerate() {
                got[o as usize] = read[k];
            }
        }
        prop_assert_eq!(got, want);
    }
}

proptest! {
    /// Ordered chunks of a shifted run: every chunk whose source a chunk's destination
    /// overlaps (brute force over byte intervals) is in its wait range, and every chunk in
    /// that range was taken earlier (so no chunk waits for one begun after it).
    #[test]
    fn ordered_chunks_wait_for_exactly_the_earlier_sources_they_overwrite(
        elements in 1i64..200_000,
        isz in prop_oneof![Just(1usize), Just(2), Just(4), Just(8), Just(16)],
        delta in -300_000i64..300_000,
    ) {
        let run = StridedLayout::dense(&[elements], isz, stridekit_layout::Order::C).unwrap();
        let plan = CopyPlan::new(&run, &run).unwrap();
        let Some(o) = plan.ordered_chunks(delta) else {
            prop_assert_eq!(delta, 0);
            return Ok(());
        };
        let ticket_of = |c: i64| if o.ascending() { c } else { o.chunks - 1 - c };
        for t in 0..o.chunks {
            prop_assert_eq!(ticket_of(o.chunk_of_ticket(t)), t);
        }
        for m in 0..o.chunks {
            let (lo, hi) = o.waits(m);
            let (w0, w1) = (m * o.chunk, ((m + 1) * o.chunk).min(o.bytes));
            for j in 0..o.chunks {
                let (r0, r1) = (j * o.chunk + delta, ((j + 1) * o.chunk).min(o.bytes) + delta);
                let overlaps = r0 < w1 && w0 < r1;
                let waited = (lo..=hi).contains(&j);
                if overlaps && j != m {
                    prop_assert!(waited, "chunk {} must wait for {} ({:?})", m, j, o);
                }
                if waited {
                    prop_assert!(j != m && ticket_of(j) < ticket_of(m), "{} waits for {} ({:?})", m, j, o);
                }
            }
        }
    }
}
