//! The GPU work queued on a piece of memory, so that nothing frees, reuses, overwrites
//! or reads it before that work is done (as cudarc's `CudaSlice` does with its read and
//! write events).
//!
//! # The rule
//!
//! The record is a reader/writer rule over stream-ordered uses:
//! - a use that only **reads** the memory waits for the writes recorded so far;
//! - a use that **writes** it (a copy into it, a fill, a discard), and everything that
//!   ends its life or hands it to the CPU (a release, a drop, a host read), waits for the
//!   recorded writes **and** every read recorded since.
//!
//! Waiting costs nothing for a use on the stream of the recorded one (the stream orders
//! them already); on another stream it is one `cuStreamWaitEvent`. Readers on different
//! streams never wait for each other.
//!
//! A use is two steps, [`PendingWork::begin`] before its work is queued and [`finish`]
//! after. Neither erases what it has not waited for, so uses that run at the same moment
//! on several threads can never lose one another: `begin` remembers exactly which
//! recorded uses it ordered itself after, and `finish` removes only those (a write) or
//! only the earlier reads on its own stream (a read), then adds itself. Its event is
//! recorded while the record is locked, so of two uses on one stream the one recorded
//! later is also the later one in the stream, and covers the earlier. A copy between
//! device-side memory takes both steps at once ([`around`]): its records stay locked
//! while its work is queued, so there is nothing to remember between them.
//!
//! The record holds at most one read and one write per stream (plus those of streams
//! that another use has not yet ordered after), so it stays small; a host wait drops the
//! uses it has seen complete. Events come from the device runtime's pool.

use crate::error::{driver, Error, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaEvent, CudaStream};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a use does to the memory: see the module docs for whom each waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Usage {
    /// Reads only: waits for earlier writes.
    Read,
    /// Writes, frees, discards or hands to the CPU: waits for every earlier use.
    Write,
}

/// An event recorded at the end of some work on a stream; its event goes back to the
/// device's pool when the last holder drops it.
#[derive(Debug)]
pub(crate) struct Mark {
    event: Option<CudaEvent>,
    /// The stream it was recorded on ([`StreamId`]).
    stream: StreamId,
    runtime: Arc<Runtime>,
}

impl Mark {
    /// The event (recorded when the mark was made; cudarc may record it again).
    pub(crate) fn event(&self) -> Result<&CudaEvent> {
        self.event.as_ref().ok_or_else(|| Error::Internal {
            op: "pending work",
            what: "a recorded event was taken before its mark was dropped".into(),
        })
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        if let Some(e) = self.event.take() {
            self.runtime.recycle_event(e);
        }
    }
}

/// Which stream a mark was recorded on: (context, stream handle), and for the per-thread
/// default stream (one handle value naming another stream on every thread) the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StreamId {
    context: usize,
    stream: usize,
    thread: u64,
}

/// `CU_STREAM_PER_THREAD`.
const PER_THREAD: usize = 2;

fn identity(stream: &CudaStream) -> StreamId {
    let handle = stream.cu_stream() as usize;
    StreamId {
        context: stream.context().cu_ctx() as usize,
        stream: handle,
        thread: if handle == PER_THREAD {
            thread_tag()
        } else {
            0
        },
    }
}

/// A number that tells this thread from every other, for the life of the process.
fn thread_tag() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static TAG: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    TAG.with(|t| *t)
}

/// A recorded use as the rule sees it: its stream, and an identity.
trait Recorded: Clone {
    fn stream_id(&self) -> StreamId;
    fn key(&self) -> usize;
}

impl Recorded for Arc<Mark> {
    fn stream_id(&self) -> StreamId {
        self.stream
    }
    fn key(&self) -> usize {
        Arc::as_ptr(self) as usize
    }
}

type Marks<M> = SmallVec<[M; 2]>;

/// The recorded uses that later ones must be ordered after.
#[derive(Debug)]
struct Uses<M = Arc<Mark>> {
    /// Writes not yet followed by a write that waited for them.
    writes: Marks<M>,
    /// Reads since then.
    reads: Marks<M>,
}

impl<M> Default for Uses<M> {
    fn default() -> Self {
        Uses {
            writes: SmallVec::new(),
            reads: SmallVec::new(),
        }
    }
}

impl<M: Recorded> Uses<M> {
    /// The uses that a use of kind `usage` must be ordered after.
    fn to_wait_for(&self, usage: Usage) -> impl Iterator<Item = &M> {
        let reads = match usage {
            Usage::Read => &[][..],
            Usage::Write => &self.reads[..],
        };
        self.writes.iter().chain(reads)
    }

    /// Stores `mark`, the end of a use of kind `usage` that was ordered after the uses
    /// in `waited`, and drops what it covers (see the module docs).
    fn apply(&mut self, usage: Usage, waited: &[usize], mark: &M) {
        let here = mark.stream_id();
        match usage {
            Usage::Write => {
                // Everything it waited for, and everything earlier on its stream, is
                // behind its event now.
                let covered = |m: &M| m.stream_id() == here || waited.contains(&m.key());
                self.writes.retain(|m| !covered(m));
                self.reads.retain(|m| !covered(m));
                self.writes.push(mark.clone());
            }
            Usage::Read => {
                // Earlier reads on its stream are behind it; writes stay for other readers.
                self.reads.retain(|m| m.stream_id() != here);
                self.reads.push(mark.clone());
            }
        }
    }

    /// Stores `mark`, the end of a use of kind `usage` that was ordered after every use
    /// it must follow while the record stayed locked (so nothing was added meanwhile):
    /// [`apply`](Self::apply) with everything `to_wait_for(usage)` names as waited.
    fn apply_held(&mut self, usage: Usage, mark: &M) {
        match usage {
            Usage::Write => {
                self.writes.clear();
                self.reads.clear();
                self.writes.push(mark.clone());
            }
            Usage::Read => {
                let here = mark.stream_id();
                self.reads.retain(|m| m.stream_id() != here);
                self.reads.push(mark.clone());
            }
        }
    }

    /// Forgets the uses in `done` (seen complete).
    fn forget(&mut self, done: &[usize]) {
        self.writes.retain(|m| !done.contains(&m.key()));
        self.reads.retain(|m| !done.contains(&m.key()));
    }
}

/// The GPU work recorded on one piece of memory.
#[derive(Debug, Default)]
pub(crate) struct PendingWork {
    uses: Mutex<Uses>,
    /// Set (under the lock) before the first use is stored: until then the record is
    /// empty, and asking so needs no lock (most imported views are never used on the GPU).
    ever_used: AtomicBool,
}

/// One use between [`PendingWork::begin`] and [`finish`]: what it does, and the recorded
/// uses it was ordered after (by address: the record holds them). It borrows nothing, so
/// the memory can be borrowed mutably for the work in between.
#[must_use = "a use is recorded by `finish`; dropping it records nothing"]
pub(crate) struct Use {
    usage: Usage,
    waited: SmallVec<[usize; 4]>,
}

impl PendingWork {
    fn lock(&self, op: &'static str) -> Result<MutexGuard<'_, Uses>> {
        self.uses.lock().map_err(|_| Error::Internal {
            op,
            what: "a buffer's pending-work lock was poisoned by a panic in another thread".into(),
        })
    }

    /// Orders `stream` after the recorded uses that `usage` must follow; the returned
    /// use goes to [`finish`] once its work is queued on `stream`.
    pub(crate) fn begin(&self, op: &'static str, usage: Usage, stream: &CudaStream) -> Result<Use> {
        let uses = self.lock(op)?;
        let waited = wait_for_earlier(op, &uses, usage, stream)?;
        Ok(Use { usage, waited })
    }

    /// Orders `stream` after the recorded uses that `usage` must follow, for work that
    /// needs no record of its own (a release, after which the memory is gone; a copy
    /// that is waited for before returning).
    pub(crate) fn order_before(
        &self,
        op: &'static str,
        usage: Usage,
        stream: &CudaStream,
    ) -> Result<()> {
        self.begin(op, usage, stream).map(drop)
    }

    /// Folds `other` (a use recorded elsewhere, for instance by cudarc's guards on a
    /// loan's event) into the record as a use of kind `usage` on `stream`: `stream`
    /// waits for it and for what `usage` must follow, then the use is recorded.
    pub(crate) fn merge(
        &self,
        op: &'static str,
        other: &Mark,
        usage: Usage,
        stream: &CudaStream,
    ) -> Result<()> {
        let u = self.begin(op, usage, stream)?;
        stream
            .wait(other.event()?)
            .map_err(driver(op, "cuStreamWaitEvent"))?;
        finish(op, stream, [(self, u)])
    }

    /// Whether the recorded uses that a use of kind `usage` must follow are all done
    /// (asked without waiting; those seen done are forgotten). Work captured into a CUDA
    /// graph cannot wait for work outside the capture, so a captured use asks this first.
    pub(crate) fn settled(&self, op: &'static str, usage: Usage) -> Result<bool> {
        let seen: Marks<Arc<Mark>> = {
            let uses = self.lock(op)?;
            uses.to_wait_for(usage).cloned().collect()
        };
        let mut done: SmallVec<[usize; 4]> = SmallVec::new();
        for m in &seen {
            if m.event()?
                .try_is_complete()
                .map_err(driver(op, "cuEventQuery"))?
            {
                done.push(m.key());
            }
        }
        self.lock(op)?.forget(&done);
        Ok(done.len() == seen.len())
    }

    /// Whether no use is recorded: then [`wait_host`](Self::wait_host) has nothing to wait
    /// for. Asked without waiting (a poisoned lock answers false: the caller then takes the
    /// path that reports it).
    pub(crate) fn is_idle(&self) -> bool {
        if !self.ever_used.load(Ordering::Acquire) {
            return true;
        }
        self.uses
            .lock()
            .map(|u| u.to_wait_for(Usage::Write).next().is_none())
            .unwrap_or(false)
    }

    /// Blocks the calling thread until every recorded use is done.
    pub(crate) fn wait_host(&self, op: &'static str) -> Result<()> {
        if !self.ever_used.load(Ordering::Acquire) {
            return Ok(());
        }
        let seen: Marks<Arc<Mark>> = {
            let uses = self.lock(op)?;
            uses.to_wait_for(Usage::Write).cloned().collect()
        };
        if seen.is_empty() {
            return Ok(());
        }
        for m in &seen {
            m.event()?
                .synchronize()
                .map_err(driver(op, "cuEventSynchronize"))?;
        }
        // Done: forget them (uses recorded meanwhile stay).
        let done: SmallVec<[usize; 4]> = seen.iter().map(Recorded::key).collect();
        self.lock(op)?.forget(&done);
        Ok(())
    }
}

/// Records the work just queued on `stream` as the end of every use in `uses` (each
/// with the record it began on): one event, stored in each record under its lock
/// (records locked in address order, so two calls can never wait on each other). Two
/// uses of one record become one, a write if either writes.
pub(crate) fn finish<'p>(
    op: &'static str,
    stream: &CudaStream,
    uses: impl IntoIterator<Item = (&'p PendingWork, Use)>,
) -> Result<()> {
    let mut merged: SmallVec<[(&'p PendingWork, Use); 2]> = SmallVec::new();
    for (record, u) in uses {
        match merged.iter_mut().find(|(r, _)| std::ptr::eq(*r, record)) {
            Some((_, m)) => {
                if u.usage == Usage::Write {
                    m.usage = Usage::Write;
                }
                m.waited.extend(u.waited);
            }
            None => merged.push((record, u)),
        }
    }
    if merged.is_empty() {
        return Ok(());
    }
    merged.sort_by_key(|(r, _)| *r as *const PendingWork as usize);
    let mut guards = SmallVec::<[MutexGuard<'_, Uses>; 2]>::new();
    for (r, _) in &merged {
        guards.push(r.lock(op)?);
    }
    let done = mark(op, stream)?;
    for ((r, u), g) in merged.iter().zip(guards.iter_mut()) {
        r.ever_used.store(true, Ordering::Release);
        g.apply(u.usage, &u.waited, &done);
    }
    Ok(())
}

/// Makes `stream` wait for the recorded uses that a use of kind `usage` must follow (those
/// on `stream` itself are already before it in the stream); their keys.
fn wait_for_earlier(
    op: &'static str,
    uses: &Uses,
    usage: Usage,
    stream: &CudaStream,
) -> Result<SmallVec<[usize; 4]>> {
    let me = identity(stream);
    let mut waited = SmallVec::new();
    for m in uses.to_wait_for(usage) {
        if m.stream != me {
            stream
                .wait(m.event()?)
                .map_err(driver(op, "cuStreamWaitEvent"))?;
        }
        waited.push(m.key());
    }
    Ok(waited)
}

/// One use of each record in `uses` (a copy's destination and source, say) around
/// `work`, which queues its GPU work on `stream`: the records stay locked from before the
/// work until it is recorded, so [`begin`](PendingWork::begin) and [`finish`] take one
/// lock each instead of two, and nothing needs remembering in between. `stream` first
/// waits for the recorded uses each use must follow; after `work` (also when it fails
/// partway: what it queued is recorded) one event marks the end of every use. Two uses
/// of one record become one, a write if either writes.
///
/// `work` must not use these records itself (their locks are held): for work that only
/// queues device work (copies and launches between device-side memory).
pub(crate) fn around<'p, T>(
    op: &'static str,
    stream: &CudaStream,
    uses: &[(&'p PendingWork, Usage)],
    work: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let mut merged: SmallVec<[(&'p PendingWork, Usage); 2]> = SmallVec::new();
    for &(record, usage) in uses {
        match merged.iter_mut().find(|(r, _)| std::ptr::eq(*r, record)) {
            Some((_, u)) => {
                if usage == Usage::Write {
                    *u = Usage::Write;
                }
            }
            None => merged.push((record, usage)),
        }
    }
    merged.sort_by_key(|(r, _)| *r as *const PendingWork as usize);
    let mut guards = SmallVec::<[MutexGuard<'_, Uses>; 2]>::new();
    for (r, _) in &merged {
        guards.push(r.lock(op)?);
    }
    for ((_, usage), g) in merged.iter().zip(guards.iter()) {
        wait_for_earlier(op, g, *usage, stream)?;
    }
    let queued = work();
    if merged.is_empty() {
        return queued;
    }
    let done = mark(op, stream);
    let done = match done {
        Ok(d) => d,
        Err(e) => return queued.and(Err(e)),
    };
    for ((r, usage), g) in merged.iter().zip(guards.iter_mut()) {
        r.ever_used.store(true, Ordering::Release);
        g.apply_held(*usage, &done);
    }
    queued
}

/// Records the end of the work just queued on `stream`, as one mark (for a loan's
/// start, whose guards record on its event again).
pub(crate) fn mark(op: &'static str, stream: &CudaStream) -> Result<Arc<Mark>> {
    let runtime = Runtime::of_stream(op, stream)?;
    let event = runtime.event(op)?;
    event.record(stream).map_err(driver(op, "cuEventRecord"))?;
    Ok(Arc::new(Mark {
        event: Some(event),
        stream: identity(stream),
        runtime,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake mark: its stream (by number) and a unique identity.
    #[derive(Clone, Debug)]
    struct Fake(Arc<StreamId>);

    impl Recorded for Fake {
        fn stream_id(&self) -> StreamId {
            *self.0
        }
        fn key(&self) -> usize {
            Arc::as_ptr(&self.0) as usize
        }
    }

    fn on(stream: usize) -> Fake {
        Fake(Arc::new(StreamId {
            context: 1,
            stream,
            thread: 0,
        }))
    }

    /// A use's begin: the keys it waits for.
    fn begin(u: &Uses<Fake>, usage: Usage) -> Vec<usize> {
        u.to_wait_for(usage).map(Recorded::key).collect()
    }

    fn keys(m: &[Fake]) -> Vec<usize> {
        m.iter().map(Recorded::key).collect()
    }

    #[test]
    fn an_empty_record_orders_nothing_and_waits_for_nothing() {
        let p = PendingWork::default();
        assert!(p.is_idle());
        p.wait_host("test").unwrap();
        assert!(begin(&Uses::default(), Usage::Write).is_empty());
    }

    #[test]
    fn a_poisoned_record_is_not_idle_and_its_wait_reports_the_poison() {
        let p = PendingWork::default();
        // A record that has stored a use (the GPU work itself needs a device)...
        p.ever_used.store(true, Ordering::Release);
        // ...and a thread that panics while holding the record's lock poisons it.
        let poisoned = std::thread::scope(|s| {
            s.spawn(|| {
                let _held = p.uses.lock().unwrap();
                panic!("poisoning the record on purpose");
            })
            .join()
        });
        assert!(poisoned.is_err());
        // Not idle, so a release takes the waiting path, which reports the poison
        // instead of skipping a wait it cannot prove unnecessary.
        assert!(!p.is_idle());
        let e = p.wait_host("test").unwrap_err();
        assert!(e.to_string().contains("test"), "{e}");
    }

    #[test]
    fn a_record_that_never_stored_a_use_is_idle_without_its_lock() {
        let p = PendingWork::default();
        // Held elsewhere: the answer must not need the lock.
        let _held = p.uses.lock().unwrap();
        assert!(p.is_idle());
        p.wait_host("test").unwrap();
    }

    #[test]
    fn two_readers_that_begin_together_are_both_kept() {
        // The lost reader: both check before either records.
        let mut u = Uses::default();
        let (a, b) = (begin(&u, Usage::Read), begin(&u, Usage::Read));
        let (ra, rb) = (on(10), on(11));
        u.apply(Usage::Read, &a, &ra);
        u.apply(Usage::Read, &b, &rb);
        // A later write waits for both.
        assert_eq!(begin(&u, Usage::Write), keys(&[ra, rb]));
    }

    #[test]
    fn readers_wait_for_writes_only_and_writers_for_everything() {
        let mut u = Uses::default();
        let w = on(1);
        u.apply(Usage::Write, &[], &w);
        let r = on(2);
        assert_eq!(begin(&u, Usage::Read), keys(std::slice::from_ref(&w)));
        u.apply(Usage::Read, &begin(&u, Usage::Read), &r);
        // A second reader on another stream does not wait for the first.
        assert_eq!(begin(&u, Usage::Read), keys(std::slice::from_ref(&w)));
        assert_eq!(begin(&u, Usage::Write), keys(&[w.clone(), r.clone()]));
        // A write that waited for both replaces them.
        let w2 = on(3);
        u.apply(Usage::Write, &begin(&u, Usage::Write), &w2);
        assert_eq!(begin(&u, Usage::Write), keys(&[w2]));
    }

    #[test]
    fn a_write_erases_only_what_it_waited_for() {
        let mut u = Uses::default();
        let seen = begin(&u, Usage::Write); // nothing yet
        let r = on(5);
        u.apply(Usage::Read, &begin(&u, Usage::Read), &r); // a reader slips in
        let w = on(6);
        u.apply(Usage::Write, &seen, &w);
        // The reader the write never waited for is still on the record.
        assert_eq!(begin(&u, Usage::Write), keys(&[w, r]));
    }

    #[test]
    fn concurrent_writes_are_both_kept() {
        let mut u = Uses::default();
        let (a, b) = (begin(&u, Usage::Write), begin(&u, Usage::Write));
        let (wa, wb) = (on(7), on(8));
        u.apply(Usage::Write, &a, &wa);
        u.apply(Usage::Write, &b, &wb);
        assert_eq!(begin(&u, Usage::Read), keys(&[wa, wb]));
    }

    #[test]
    fn a_later_use_on_the_same_stream_covers_the_earlier() {
        let mut u = Uses::default();
        let (r1, r2) = (on(4), on(4));
        u.apply(Usage::Read, &[], &r1);
        u.apply(Usage::Read, &[], &r2);
        assert_eq!(begin(&u, Usage::Write), keys(std::slice::from_ref(&r2)));
        let w = on(4);
        u.apply(Usage::Write, &[], &w);
        assert_eq!(begin(&u, Usage::Write), keys(std::slice::from_ref(&w)));
        u.forget(&keys(std::slice::from_ref(&w)));
        assert!(begin(&u, Usage::Write).is_empty());
    }

    #[test]
    fn a_use_held_under_the_lock_replaces_what_it_waited_for() {
        let mut u = Uses::default();
        let (w, r5, r6) = (on(1), on(5), on(6));
        u.apply_held(Usage::Write, &w);
        u.apply_held(Usage::Read, &r5);
        u.apply_held(Usage::Read, &r6);
        // A read keeps the write (for other readers) and the reads of other streams, and
        // covers the earlier read on its own stream.
        let r5b = on(5);
        u.apply_held(Usage::Read, &r5b);
        assert_eq!(begin(&u, Usage::Read), keys(std::slice::from_ref(&w)));
        assert_eq!(begin(&u, Usage::Write), keys(&[w, r6, r5b.clone()]));
        // A write waited for everything on the record (nothing could slip in while it
        // held the lock), so it alone stays; the same as `apply` told every key.
        let mut v = Uses {
            writes: u.writes.clone(),
            reads: u.reads.clone(),
        };
        let w2 = on(9);
        let all = begin(&v, Usage::Write);
        v.apply(Usage::Write, &all, &w2);
        u.apply_held(Usage::Write, &w2);
        assert_eq!(begin(&u, Usage::Write), keys(std::slice::from_ref(&w2)));
        assert_eq!(begin(&u, Usage::Write), begin(&v, Usage::Write));
        assert!(u.reads.is_empty());
    }

    #[test]
    fn the_per_thread_stream_is_another_stream_on_every_thread() {
        let here = thread_tag();
        let there = std::thread::spawn(thread_tag).join().unwrap();
        assert_ne!(here, there);
        assert_eq!(here, thread_tag());
    }
}
