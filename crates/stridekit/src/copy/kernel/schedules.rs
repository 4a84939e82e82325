//! Schedules kept for copies made again: a schedule depends on its plan and on the two
//! base addresses only through their remainders modulo [`SCHEDULE_ADDRESS_PERIOD`] (a
//! property the layout crate tests), so a loop copying between the same layouts plans
//! once. Planning a copy with multi-axis tiles takes 1-7 µs of host time, most of such a
//! small copy's; finding it here takes a hash of the plan.
//!
//! Each thread keeps its own (no lock), up to [`KEPT`] schedules; when full it starts
//! again empty. Plans are hashed with `foldhash` (SipHash took a tenth of such a copy's
//! host time).

use foldhash::{HashMap, HashMapExt};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use stridekit_layout::{CopyPlan, CopyStep, ScheduleBounds, SCHEDULE_ADDRESS_PERIOD, SMALL_COPY};

/// Schedules a thread keeps.
const KEPT: usize = 64;

/// A plan, its two base addresses' remainders and the bounds it was planned with.
type Key = (CopyPlan, u64, u64, ScheduleBounds);

static SMALL_COPY_ELEMENTS: AtomicUsize = AtomicUsize::new(SMALL_COPY);

/// Sets the elements at or below which a device copy that would take multi-axis tiles
/// runs as one elementwise launch instead, and takes the elementwise kernel that reads
/// element by element rather than the one that gathers a group of the destination's
/// last axis a thread (default [`SMALL_COPY`](stridekit_layout::SMALL_COPY), 2^20:
/// measured in `BENCHMARKS.md`). 0 keeps tiles and gathered groups for copies of any
/// size, as tests of those kernels want, and also turns off the rule for copies of up to
/// 2^22 elements that the elementwise kernel serves better (warps that share sectors,
/// tiles that would leave launches of remainder tiles) and the rule for copies of fewer
/// tiles than the GPU's tile grid takes in one and a half rounds
/// ([`FEW_TILES_PER_SM`](stridekit_layout::FEW_TILES_PER_SM) an SM). For every thread of
/// the process, from its next copy on; either way each copy is exact.
///
/// ```
/// stridekit::set_small_copy_elements(0);
/// assert_eq!(stridekit::small_copy_elements(), 0);
/// stridekit::set_small_copy_elements(stridekit::SMALL_COPY);
/// ```
pub fn set_small_copy_elements(elements: usize) {
    SMALL_COPY_ELEMENTS.store(elements, Ordering::Relaxed);
}

/// The bound [`set_small_copy_elements`] sets.
pub fn small_copy_elements() -> usize {
    SMALL_COPY_ELEMENTS.load(Ordering::Relaxed)
}

thread_local! {
    static KEPT_SCHEDULES: RefCell<HashMap<Key, Rc<[CopyStep]>>> = RefCell::new(HashMap::new());
}

/// `plan.schedule(dst, src)` for a GPU of `sms` SMs (with the bound of
/// [`set_small_copy_elements`]: [`ScheduleBounds::for_sms`]), from this thread's kept
/// schedules when it has planned the same copy at the same remainders and bounds before,
/// and whether it was planned just now.
pub(super) fn schedule(plan: &CopyPlan, dst: u64, src: u64, sms: u64) -> (Rc<[CopyStep]>, Fresh) {
    schedule_with(
        plan,
        dst,
        src,
        ScheduleBounds::for_sms(small_copy_elements(), sms),
    )
}

/// [`schedule`] with the bounds `bounds`.
fn schedule_with(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    bounds: ScheduleBounds,
) -> (Rc<[CopyStep]>, Fresh) {
    let key = (
        plan.clone(),
        dst % SCHEDULE_ADDRESS_PERIOD,
        src % SCHEDULE_ADDRESS_PERIOD,
        bounds,
    );
    // A copy made while the thread is being torn down (from another thread-local's
    // destructor) finds no store: it plans, and keeps nothing.
    let kept = KEPT_SCHEDULES
        .try_with(|k| k.try_borrow().ok().and_then(|k| k.get(&key).cloned()))
        .ok()
        .flatten();
    if let Some(steps) = kept {
        return (steps, Fresh(false));
    }
    let steps: Rc<[CopyStep]> = plan
        .schedule_with_bounds(dst, src, bounds)
        .into_iter()
        .collect();
    let _ = KEPT_SCHEDULES.try_with(|k| {
        if let Ok(mut k) = k.try_borrow_mut() {
            if k.len() >= KEPT {
                k.clear();
            }
            k.insert(key, steps.clone());
        }
    });
    (steps, Fresh(true))
}

/// Whether a schedule was just planned (not kept from an earlier copy on this thread):
/// then its kernels may not be compiled yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fresh(pub(super) bool);

#[cfg(test)]
mod tests {
    use super::*;
    use stridekit_layout::{Order, StridedLayout};

    fn transposed(n: i64, isz: usize) -> CopyPlan {
        let d = StridedLayout::dense(&[n, n + 1], isz, Order::C).unwrap();
        let s = StridedLayout::dense(&[n + 1, n], isz, Order::C)
            .unwrap()
            .permuted(&[1, 0])
            .unwrap();
        CopyPlan::new(&d, &s).unwrap()
    }

    /// A kept schedule is the one planning makes, at the first addresses and at others of
    /// the same remainders; other remainders and other plans get their own.
    #[test]
    fn kept_schedules_are_the_planned_ones() {
        let p = transposed(40, 1);
        let (first, fresh) = schedule(&p, 0x1000, 0x2001, 132);
        assert_eq!(fresh, Fresh(true));
        assert_eq!(&*first, &p.schedule(0x1000, 0x2001)[..]);
        let (again, fresh) = schedule(&p, 0x1000 + 7 * SCHEDULE_ADDRESS_PERIOD, 0x2001, 132);
        assert_eq!(fresh, Fresh(false));
        assert!(
            Rc::ptr_eq(&first, &again),
            "the kept schedule is used again"
        );
        for (d, s) in [(0x1004, 0x2001), (0x1000, 0x2000), (0x1001, 0x2003)] {
            assert_eq!(&*schedule(&p, d, s, 132).0, &p.schedule(d, s)[..]);
        }
        let q = transposed(41, 1);
        assert_eq!(
            &*schedule(&q, 0x1000, 0x2001, 132).0,
            &q.schedule(0x1000, 0x2001)[..]
        );
    }

    /// A small copy planned under two bounds keeps a schedule for each: elementwise
    /// under the default, tiles under 0.
    #[test]
    fn kept_schedules_follow_the_small_copy_bound() {
        let s = StridedLayout::dense(&[8; 5], 4, Order::C)
            .unwrap()
            .permuted(&[4, 2, 0, 3, 1])
            .unwrap();
        let d = StridedLayout::dense(s.shape(), 4, Order::C).unwrap();
        let p = CopyPlan::new(&d, &s).unwrap();
        let bounds = |small| ScheduleBounds::for_sms(small, 132);
        let (small, _) = schedule_with(&p, 0, 0, bounds(SMALL_COPY));
        assert!(matches!(small[..], [CopyStep::Elementwise(_)]), "{small:?}");
        let (tiled, fresh) = schedule_with(&p, 0, 0, bounds(0));
        assert_eq!(fresh, Fresh(true));
        assert!(matches!(tiled[0], CopyStep::Tiled(_)), "{tiled:?}");
        assert_eq!(&*schedule_with(&p, 0, 0, bounds(SMALL_COPY)).0, &small[..]);
    }

    /// A copy of 540 tiles planned for GPUs of two sizes keeps a schedule for each:
    /// elementwise on 132 SMs (under 792 tiles, one and a half a block of the tile grid),
    /// tiles on 66 (under 396 would be needed).
    #[test]
    fn kept_schedules_follow_the_gpus_sms() {
        let s = StridedLayout::dense(&[18, 30, 3, 36, 27], 8, Order::C)
            .unwrap()
            .permuted(&[3, 1, 4, 0, 2])
            .unwrap();
        let d = StridedLayout::dense(s.shape(), 8, Order::C).unwrap();
        let p = CopyPlan::new(&d, &s).unwrap();
        let (big, _) = schedule(&p, 0, 0, 132);
        assert!(matches!(big[..], [CopyStep::Elementwise(_)]), "{big:?}");
        assert_eq!(&*big, &p.schedule(0, 0)[..]);
        let (half, fresh) = schedule(&p, 0, 0, 66);
        assert_eq!(fresh, Fresh(true));
        assert!(
            matches!(&half[..], [CopyStep::Tiled(t), ..] if t.tiles() == 540),
            "{half:?}"
        );
    }

    /// A schedule asked for while the thread's store is being torn down (by another
    /// thread-local's destructor, which runs after the store's when it was made first) is
    /// planned without it: no panic.
    #[test]
    fn a_thread_being_torn_down_still_plans() {
        struct PlansOnDrop(std::sync::mpsc::Sender<bool>);
        impl Drop for PlansOnDrop {
            fn drop(&mut self) {
                let p = transposed(9, 4);
                let _ = self
                    .0
                    .send(*schedule(&p, 0, 0, 132).0 == p.schedule(0, 0)[..]);
            }
        }
        thread_local!(static GUARD: RefCell<Option<PlansOnDrop>> = const { RefCell::new(None) });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            GUARD.with(|g| *g.borrow_mut() = Some(PlansOnDrop(tx)));
            let p = transposed(5, 4);
            assert_eq!(&*schedule(&p, 0, 0, 132).0, &p.schedule(0, 0)[..]);
        })
        .join()
        .unwrap();
        assert!(
            rx.recv().unwrap(),
            "the schedule planned at thread exit is the planned one"
        );
    }

    /// Past [`KEPT`] schedules the thread starts again, and still answers right.
    #[test]
    fn a_full_store_starts_again() {
        for n in 2..(2 + 3 * KEPT as i64) {
            let p = transposed(n, 2);
            assert_eq!(&*schedule(&p, 0, 2, 132).0, &p.schedule(0, 2)[..]);
        }
        KEPT_SCHEDULES.with(|k| assert!(k.borrow().len() <= KEPT));
    }
}
