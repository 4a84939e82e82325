//! `LocalComm`: ranks of one process, each on a device of its own or all on one, whose
//! transfers are device copies. For programs that drive several GPUs from threads of one
//! process without NCCL, and for testing distributed code on one GPU: the packing,
//! checks and records are those of every transport.

use super::comm::{wire::Wire, Communicator};
use crate::device::Device;
use crate::error::{driver, invalid, Error, Result};
use crate::memory::{copy_bytes_across_devices_unchecked, copy_bytes_unchecked};
use cudarc::driver::{CudaEvent, CudaStream};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long a rank waits for a peer to post the other side of a transfer before the
/// world is aborted with an error (a missing peer would otherwise hang the program).
pub const LOCAL_WAIT: Duration = Duration::from_secs(60);

/// Makes one [`LocalComm`] per entry of `devices` (rank `i` on device `devices[i]`; an
/// ordinal may repeat, so any number of ranks can share one GPU). Hand each to the
/// thread that runs that rank.
///
/// ```no_run
/// let world = stridekit::dist::local_world(&[0, 0, 0, 0])?; // four ranks on GPU 0
/// assert_eq!(world.len(), 4);
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn local_world(devices: &[usize]) -> Result<Vec<LocalComm>> {
    local_world_with_wait(devices, LOCAL_WAIT)
}

/// [`local_world`] whose ranks wait at most `wait` (instead of [`LOCAL_WAIT`]) for a peer
/// before the world is aborted with an error.
pub fn local_world_with_wait(devices: &[usize], wait: Duration) -> Result<Vec<LocalComm>> {
    const OP: &str = "dist::local_world";
    if devices.is_empty() {
        return Err(invalid(OP, "a world needs at least one rank"));
    }
    for &d in devices {
        Device::open(d)?;
    }
    let world = Arc::new(World {
        size: devices.len(),
        wait,
        state: Mutex::new(State::default()),
        cv: Condvar::new(),
    });
    Ok(devices
        .iter()
        .enumerate()
        .map(|(rank, &device)| LocalComm {
            world: world.clone(),
            rank,
            device,
            group: RefCell::new(None),
        })
        .collect())
}

/// One rank of a [`local_world`]: a [`Communicator`] whose sends and receives are device
/// copies between the ranks' memory (the receiver copies, ordered after the sender's
/// stream; the sender's stream then waits for the copy).
pub struct LocalComm {
    world: Arc<World>,
    rank: usize,
    device: usize,
    /// The transfers of the open group, if one is open.
    group: RefCell<Option<Vec<Queued>>>,
}

struct World {
    size: usize,
    wait: Duration,
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    /// Letters posted and not yet received, per (sender, receiver), in order.
    mail: HashMap<(usize, usize), VecDeque<Letter>>,
    /// Per letter: the receiver's copy (an event on its stream) or why it failed.
    receipts: HashMap<u64, Result<Arc<CudaEvent>, String>>,
    next: u64,
    /// Set when a transfer failed: every rank's later or waiting transfer fails.
    aborted: Option<String>,
}

struct Letter {
    id: u64,
    ptr: u64,
    len: usize,
    /// The sender's device.
    device: usize,
    /// The sender's stream when the letter was posted.
    ready: Arc<CudaEvent>,
}

struct Queued {
    send: bool,
    ptr: u64,
    len: usize,
    peer: usize,
    stream: Arc<CudaStream>,
}

impl Communicator for LocalComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.world.size
    }
    fn device(&self) -> usize {
        self.device
    }
}

impl World {
    fn lock(&self, op: &'static str) -> Result<MutexGuard<'_, State>> {
        self.state.lock().map_err(|_| Error::Internal {
            op,
            what: "a local world's lock was poisoned by a panic in another rank".into(),
        })
    }

    /// Waits until `ready` finds what it looks for, the world is aborted, or
    /// [`LOCAL_WAIT`] passes (which aborts it).
    fn wait_for<T>(
        &self,
        op: &'static str,
        what: &str,
        mut ready: impl FnMut(&mut State) -> Option<T>,
    ) -> Result<T> {
        let deadline = Instant::now() + self.wait;
        let mut st = self.lock(op)?;
        loop {
            if let Some(why) = &st.aborted {
                return Err(invalid(op, format!("the local world was aborted: {why}")));
            }
            if let Some(t) = ready(&mut st) {
                return Ok(t);
            }
            let now = Instant::now();
            if now >= deadline {
                let why = format!("{what} was not posted within {:?}", self.wait);
                st.aborted = Some(why.clone());
                self.cv.notify_all();
                return Err(invalid(op, why));
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .map_err(|_| Error::Internal {
                    op,
                    what: "a local world's lock was poisoned by a panic in another rank".into(),
                })?
                .0;
        }
    }

    /// The receipt of letter `id` in box `key`, once its receiver has copied it (or
    /// failed to). A letter still in its box is withdrawn (`None`) when `withdraw` is
    /// set, when the world is aborted, or after the wait: then nobody will read it. A
    /// letter taken always gets its receipt; only a receiver thread stalled for twice
    /// the wait between taking a letter and recording its copy makes the sender give up
    /// with an error while that copy may still be queued.
    fn receipt(
        &self,
        op: &'static str,
        id: u64,
        key: (usize, usize),
        withdraw: bool,
    ) -> Result<Option<Result<Arc<CudaEvent>, String>>> {
        let deadline = Instant::now() + self.wait;
        let mut st = self.lock(op)?;
        loop {
            if let Some(r) = st.receipts.remove(&id) {
                return Ok(Some(r));
            }
            let now = Instant::now();
            if withdraw || st.aborted.is_some() || now >= deadline {
                let mut taken = true;
                if let Some(b) = st.mail.get_mut(&key) {
                    if let Some(i) = b.iter().position(|l| l.id == id) {
                        b.remove(i);
                        taken = false;
                    }
                }
                if !taken {
                    if !withdraw && st.aborted.is_none() {
                        let why = format!(
                            "rank {} did not receive a send of rank {} within {:?}",
                            key.1, key.0, self.wait
                        );
                        st.aborted = Some(why);
                        self.cv.notify_all();
                    }
                    return Ok(None);
                }
                if now >= deadline + self.wait {
                    return Err(invalid(
                        op,
                        format!(
                            "rank {}'s copy of a send of rank {} did not finish",
                            key.1, key.0
                        ),
                    ));
                }
            }
            let until = if now < deadline {
                deadline
            } else {
                deadline + self.wait
            };
            st = self
                .cv
                .wait_timeout(st, until.saturating_duration_since(now))
                .map_err(|_| Error::Internal {
                    op,
                    what: "a local world's lock was poisoned by a panic in another rank".into(),
                })?
                .0;
        }
    }

    fn abort(&self, why: String) {
        if let Ok(mut st) = self.state.lock() {
            st.aborted.get_or_insert(why);
        }
        self.cv.notify_all();
    }
}

impl LocalComm {
    /// Queues a send or receive in the open group, or runs it as a group of its own.
    fn queue(
        &self,
        op: &'static str,
        send: bool,
        ptr: u64,
        len: usize,
        peer: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let q = Queued {
            send,
            ptr,
            len,
            peer,
            stream: stream.clone(),
        };
        let open = self.group.borrow().is_some();
        if open {
            if let Some(g) = self.group.borrow_mut().as_mut() {
                g.push(q);
            }
            return Ok(());
        }
        self.group_start(op)?;
        if let Some(g) = self.group.borrow_mut().as_mut() {
            g.push(q);
        }
        self.group_end(op)
    }

    fn run_group(&self, op: &'static str, ops: Vec<Queued>) -> Result<()> {
        // Post every send first, so that no two ranks wait on each other.
        let mut posted = Vec::new();
        let mut result = Ok(());
        for q in ops.iter().filter(|q| q.send) {
            match self.post(op, q) {
                Ok(id) => posted.push((id, q)),
                Err(e) => {
                    result = Err(self.fail(op, e));
                    break;
                }
            }
        }
        if result.is_ok() {
            result = self.receive_all(op, &ops);
        }
        let settled = self.settle(op, &posted, result.is_err());
        result.and(settled)
    }

    /// Posts a send: a letter in the receiver's box, with an event of the sender's stream.
    fn post(&self, op: &'static str, q: &Queued) -> Result<u64> {
        let ready = Arc::new(
            q.stream
                .record_event(None)
                .map_err(driver(op, "cuEventRecord"))?,
        );
        let mut st = self.world.lock(op)?;
        let id = st.next;
        st.next += 1;
        st.mail
            .entry((self.rank, q.peer))
            .or_default()
            .push_back(Letter {
                id,
                ptr: q.ptr,
                len: q.len,
                device: self.device,
                ready,
            });
        self.world.cv.notify_all();
        Ok(id)
    }

    /// Receives, in order per sender.
    fn receive_all(&self, op: &'static str, ops: &[Queued]) -> Result<()> {
        let world = &self.world;
        for q in ops.iter().filter(|q| !q.send) {
            let key = (q.peer, self.rank);
            let what = format!("a send from rank {} to rank {}", q.peer, self.rank);
            let letter = world.wait_for(op, &what, |st| {
                st.mail.get_mut(&key).and_then(VecDeque::pop_front)
            })?;
            // A popped letter always gets a receipt, so that its sender can settle.
            let receipt = self.receive(op, q, &letter);
            let mut st = world.lock(op)?;
            let failed = receipt.as_ref().err().map(|e| e.to_string());
            st.receipts
                .insert(letter.id, receipt.map(Arc::new).map_err(|e| e.to_string()));
            if let Some(why) = failed {
                st.aborted.get_or_insert(why.clone());
                world.cv.notify_all();
                return Err(invalid(op, why));
            }
            world.cv.notify_all();
        }
        Ok(())
    }

    /// Each send is done once its receiver's copy is: the sender's stream waits for it.
    /// After a failure here or an abort, a letter nobody took is withdrawn, so that nobody
    /// reads the memory once this returns.
    fn settle(&self, op: &'static str, posted: &[(u64, &Queued)], failed: bool) -> Result<()> {
        let mut first = Ok(());
        for &(id, q) in posted {
            let r = match self.world.receipt(op, id, (self.rank, q.peer), failed)? {
                Some(Ok(done)) => q
                    .stream
                    .wait(&done)
                    .map_err(driver(op, "cuStreamWaitEvent")),
                Some(Err(why)) => Err(invalid(op, why)),
                None => Err(invalid(
                    op,
                    format!(
                        "rank {} did not receive a send of rank {}",
                        q.peer, self.rank
                    ),
                )),
            };
            first = first.and(r);
        }
        first
    }

    /// Copies a letter into the receive `q`, on `q`'s stream after the sender's.
    fn receive(&self, op: &'static str, q: &Queued, letter: &Letter) -> Result<CudaEvent> {
        if letter.len != q.len {
            return Err(invalid(
                op,
                format!(
                    "rank {} sends {} bytes and rank {} receives {}; a transfer moves the same bytes on both sides",
                    q.peer, letter.len, self.rank, q.len
                ),
            ));
        }
        q.stream
            .wait(&letter.ready)
            .map_err(driver(op, "cuStreamWaitEvent"))?;
        if letter.device == self.device {
            // SAFETY: the sender's span is device memory it keeps unwritten and alive
            // until its stream waited for this copy (`run_group` of the sender waits for
            // the receipt); the receiving span is the caller's promise (`recv_bytes`).
            unsafe { copy_bytes_unchecked(op, q.ptr, letter.ptr, q.len, &q.stream)? };
        } else {
            // Between two devices: cuMemcpyPeerAsync, which the driver stages where the
            // devices have no peer access (as the copy engine's own moves across devices).
            // SAFETY: as above, for the two devices' spans.
            unsafe {
                copy_bytes_across_devices_unchecked(
                    op,
                    (q.ptr, self.device),
                    (letter.ptr, letter.device),
                    q.len,
                    &q.stream,
                )?
            };
        }
        q.stream
            .record_event(None)
            .map_err(driver(op, "cuEventRecord"))
    }
}

impl Wire for LocalComm {
    fn check_usable(&self, op: &'static str) -> Result<()> {
        match &self.world.lock(op)?.aborted {
            Some(why) => Err(invalid(op, format!("the local world was aborted: {why}"))),
            None => Ok(()),
        }
    }

    fn group_start(&self, op: &'static str) -> Result<()> {
        let mut g = self.group.borrow_mut();
        if g.is_some() {
            return Err(invalid(op, "a group is already open on this rank"));
        }
        *g = Some(Vec::new());
        Ok(())
    }

    fn group_end(&self, op: &'static str) -> Result<()> {
        let ops = self
            .group
            .borrow_mut()
            .take()
            .ok_or_else(|| invalid(op, "no group is open on this rank"))?;
        self.run_group(op, ops)
    }

    unsafe fn send_bytes(
        &self,
        op: &'static str,
        ptr: u64,
        len: usize,
        peer: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.queue(op, true, ptr, len, peer, stream)
    }

    unsafe fn recv_bytes(
        &self,
        op: &'static str,
        ptr: u64,
        len: usize,
        peer: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.queue(op, false, ptr, len, peer, stream)
    }

    fn fail(&self, _op: &'static str, error: Error) -> Error {
        self.world.abort(error.to_string());
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_world_needs_ranks_and_devices_that_exist() {
        let e = local_world(&[]).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("at least one rank")),
            "{e:?}"
        );
        // Without a driver (CI) the device check fails with an error, never a panic; with
        // one, no machine has a device 1000.
        let e = local_world(&[1000]).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("1000") || e.contains("no CUDA driver")),
            "{e:?}"
        );
    }
}
