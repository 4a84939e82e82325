//! Kernels compiled on threads of their own while copies go on.
//!
//! A copy whose kernel is in neither the process, the disk cache nor a kernel pack waits
//! for NVRTC: 50-400 ms on a new machine. Instead, while a copy is *armed* ([`arm`]), a
//! missing kernel is handed to a background thread and the copy runs on the engine's
//! fallback kernel (a generic elementwise kernel shipped compiled inside the library,
//! `copy/kernel/fallback.rs`); once the thread is done, the next copy of that class loads
//! the new kernel (also written to the disk cache) and runs at full speed. On by
//! default; `STRIDEKIT_BACKGROUND_COMPILE=0` (or [`set_background_compile`]) makes every
//! copy wait for its own kernels, as benchmarks that time the first copies may want;
//! [`wait_for_kernels`] waits for the compiles under way.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// What became of one kernel handed to a background thread.
enum Outcome {
    Running,
    /// NVRTC's CUBIN, whole ([`crate::cubin_image::fits`]).
    Done(Vec<u8>),
    Failed,
}

/// A kernel handed to a background thread: the real architecture and the source.
struct Job {
    arch: &'static str,
    source: String,
    outcome: Outcome,
}

static JOBS: Mutex<Vec<Job>> = Mutex::new(Vec::new());
/// Signalled whenever a job finishes.
static FINISHED: Condvar = Condvar::new();
/// Kernels handed to background threads in this process.
static STARTED: AtomicU64 = AtomicU64::new(0);
/// 0: not read yet; 1: off; 2: on.
static SETTING: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// Whether this thread's current copy may run without its kernels.
    static ARMED: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread's copies wait for their kernels whatever the setting (a copy
    /// captured into a CUDA graph keeps the kernels it launches).
    static HELD: Cell<bool> = const { Cell::new(false) };
    /// Whether a kernel of this thread's current copy went to the background.
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
}

/// A thread-local flag; false once the thread's locals are gone (a copy made while the
/// thread exits is then neither armed nor held).
fn get(flag: &'static std::thread::LocalKey<Cell<bool>>) -> bool {
    flag.try_with(Cell::get).unwrap_or(false)
}

fn set(flag: &'static std::thread::LocalKey<Cell<bool>>, value: bool) {
    let _ = flag.try_with(|f| f.set(value));
}

/// Where the job of `source` for `arch` sits in `list`.
fn at(list: &[Job], arch: &str, source: &str) -> Option<usize> {
    list.iter()
        .position(|j| j.arch == arch && j.source == source)
}

fn jobs() -> MutexGuard<'static, Vec<Job>> {
    // A poisoned list is still a list: a panic elsewhere loses no kernel.
    JOBS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether copies hand missing kernels to background threads: [`set_background_compile`]'s
/// last word, else `$STRIDEKIT_BACKGROUND_COMPILE` (`0`, `off`, `false` or `no`: off),
/// else on.
pub(crate) fn enabled() -> bool {
    match SETTING.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let off = std::env::var("STRIDEKIT_BACKGROUND_COMPILE").is_ok_and(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "0" | "off" | "false" | "no"
                )
            });
            // A concurrent `set_background_compile` wins over the environment.
            let _ = SETTING.compare_exchange(
                0,
                if off { 1 } else { 2 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            SETTING.load(Ordering::Relaxed) == 2
        }
    }
}

/// Whether a copy whose kernels are not compiled yet runs at once on the fallback kernel
/// while they compile on background threads (`true`, the default) or waits for them
/// (`false`). Overrides `$STRIDEKIT_BACKGROUND_COMPILE` for the rest of the process.
///
/// ```
/// // A benchmark that times first copies with their own kernels:
/// stridekit::set_background_compile(false);
/// # stridekit::set_background_compile(true);
/// ```
pub fn set_background_compile(enabled: bool) {
    SETTING.store(if enabled { 2 } else { 1 }, Ordering::Relaxed);
}

/// Waits until every kernel handed to a background thread is compiled (or has failed),
/// so that the copies after it run on their own kernels. Returns at once when none is
/// under way.
///
/// ```
/// stridekit::wait_for_kernels();
/// ```
pub fn wait_for_kernels() {
    let mut jobs = jobs();
    while jobs.iter().any(|j| matches!(j.outcome, Outcome::Running)) {
        jobs = FINISHED.wait(jobs).unwrap_or_else(|e| e.into_inner());
    }
}

/// How many kernels this process has handed to background threads (each once).
///
/// ```
/// let before = stridekit::kernels_compiled_in_background();
/// assert!(stridekit::kernels_compiled_in_background() >= before);
/// ```
pub fn kernels_compiled_in_background() -> u64 {
    STARTED.load(Ordering::Relaxed)
}

/// This thread's copy armed: kernels it misses go to the background ([`defer`]) instead of
/// being compiled here. Disarmed when dropped.
pub(crate) struct Armed(());

/// Arms this thread's copy, if background compiles are [`enabled`] and it is not armed
/// already.
pub(crate) fn arm() -> Option<Armed> {
    if !enabled() || get(&ARMED) || get(&HELD) {
        return None;
    }
    set(&ARMED, true);
    set(&DEFERRED, false);
    Some(Armed(()))
}

impl Armed {
    /// Whether a kernel of this copy went to the background (the copy stopped at it).
    pub(crate) fn deferred(&self) -> bool {
        get(&DEFERRED)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        set(&ARMED, false);
        set(&DEFERRED, false);
    }
}

/// This thread's copies wait for their own kernels until dropped ([`hold`]).
pub(crate) struct Held {
    was: bool,
}

/// Makes this thread's copies wait for their own kernels, whatever the setting, until the
/// guard drops: a copy captured into a CUDA graph would keep the fallback kernel in the
/// graph for good.
pub(crate) fn hold() -> Held {
    Held {
        was: HELD.try_with(|h| h.replace(true)).unwrap_or(false),
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        set(&HELD, self.was);
    }
}

/// Whether this thread's current copy is armed.
pub(crate) fn armed() -> bool {
    get(&ARMED)
}

/// Where the kernel of `source` for `arch` stands in the background.
pub(crate) enum Standing {
    /// Never handed to a background thread.
    Absent,
    Running,
    /// Compiled: its CUBIN.
    Done(Vec<u8>),
    Failed,
}

/// Where the kernel of `source` for `arch` stands.
pub(crate) fn standing(arch: &str, source: &str) -> Standing {
    let list = jobs();
    match at(&list, arch, source).map(|i| &list[i].outcome) {
        None => Standing::Absent,
        Some(Outcome::Running) => Standing::Running,
        Some(Outcome::Done(image)) => Standing::Done(image.clone()),
        Some(Outcome::Failed) => Standing::Failed,
    }
}

/// Notes that this thread's armed copy stopped at a kernel now compiling in the
/// background.
pub(crate) fn defer() {
    set(&DEFERRED, true);
}

/// Hands the kernel of `source` (module `name`) for the real architecture `arch` to a
/// background thread, unless one has it already: NVRTC compiles its CUBIN (at most
/// [`compile_slots`] at once), which `store` writes to the disk cache and this process's
/// list keeps. `false` when no thread could be started (the caller compiles it itself).
/// NVRTC must be loaded.
pub(crate) fn start(
    arch: &'static str,
    name: &str,
    source: &str,
    store: impl FnOnce(&[u8]) + Send + 'static,
) -> bool {
    {
        let mut list = jobs();
        if at(&list, arch, source).is_some() {
            return true;
        }
        list.push(Job {
            arch,
            source: source.to_owned(),
            outcome: Outcome::Running,
        });
    }
    // Forced: a warm-up that panicked (inside NVRTC) must not poison every copy after it.
    WARMED.call_once_force(|_| warm_up());
    let (file, owned) = (format!("{name}.cu"), source.to_owned());
    let spawned = std::thread::Builder::new()
        .name("stridekit-nvrtc".into())
        .spawn(move || {
            // Whatever happens below (a panic included), the job ends and its waiters wake.
            let mut job = Finishing {
                arch,
                source: owned,
                outcome: Outcome::Failed,
            };
            // At most `compile_slots()` compiles at once; none starts once the process exits.
            let image = Slot::take().and_then(|_slot| {
                crate::driver::nvrtc_cubin::compile_cubin(&job.source, &file, arch)
                    .ok()
                    .filter(|c| crate::cubin_image::fits(c))
            });
            guard_exit_again();
            if let Some(c) = image {
                store(&c);
                job.outcome = Outcome::Done(c);
            }
        });
    match spawned {
        Ok(_) => {
            STARTED.fetch_add(1, Ordering::Relaxed);
            true
        }
        Err(_) => {
            let mut list = jobs();
            if let Some(i) = at(&list, arch, source) {
                list.remove(i);
            }
            false
        }
    }
}

/// Background compiles running NVRTC now.
static BUSY: Mutex<usize> = Mutex::new(0);
/// Signalled whenever a compile leaves NVRTC.
static FREED: Condvar = Condvar::new();
/// Set when the process begins to exit: compiles not yet started are dropped.
static EXITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How many background compiles run at once: one core fewer than the machine has, at
/// most 8 (each NVRTC compile holds one core and up to a few hundred MB while it runs).
fn compile_slots() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get().saturating_sub(1))
        .clamp(1, 8)
}

/// One of the [`compile_slots`], held while a background compile runs NVRTC.
struct Slot(());

impl Slot {
    /// Waits for a free slot; `None` once the process is exiting.
    fn take() -> Option<Slot> {
        let mut busy = BUSY.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if EXITING.load(Ordering::Relaxed) {
                return None;
            }
            if *busy < compile_slots() {
                *busy += 1;
                return Some(Slot(()));
            }
            busy = FREED.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut busy = BUSY.lock().unwrap_or_else(|e| e.into_inner());
        *busy = busy.saturating_sub(1);
        FREED.notify_all();
    }
}

/// NVRTC loaded and its first compile made (a tiny kernel), then the exit handler
/// registered: once per process, before the first background compile.
static WARMED: std::sync::Once = std::sync::Once::new();

/// Runs `make` (the driver's context creation for a device, 100 ms or more) while another
/// thread warms NVRTC up ([`warm_up`]), the first time in the process with background
/// compiles on, and returns once both are done: a new machine's first copy then finds
/// NVRTC ready (its load and first compile take 30-60 ms) and no NVRTC work is left
/// running when the device is handed out.
pub(crate) fn beside_warm_up<T>(make: impl FnOnce() -> T) -> T {
    if WARMED.is_completed() || !enabled() {
        return make();
    }
    std::thread::scope(|s| {
        let warm = std::thread::Builder::new()
            .name("stridekit-nvrtc".into())
            .spawn_scoped(s, || WARMED.call_once_force(|_| warm_up()));
        let made = make();
        if let Ok(w) = warm {
            // A panic inside NVRTC's warm-up only loses the warm-up.
            let _ = w.join();
        }
        made
    })
}

/// Loads NVRTC and compiles a tiny kernel, then registers the exit handler that waits for
/// background compiles. NVRTC's own exit handlers tear it down, and a thread still inside
/// it then crashes the process; exit handlers run in the reverse order of their
/// registration, so ours must come after NVRTC's, and NVRTC registers some of them during
/// its first compile. Background compiles register the handler again after each of the
/// first ones ([`guard_exit_again`]), after whatever handlers they registered.
fn warm_up() {
    if crate::driver::nvrtc_lib::locate().is_err() {
        return;
    }
    let _ = crate::driver::nvrtc_cubin::compile_cubin(
        "extern \"C\" __global__ void stridekit_warm_up() {}",
        "stridekit_warm_up.cu",
        "sm_80",
    );
    register_exit_handler();
}

/// Registers the exit handler once more, after a background compile (the first 64).
fn guard_exit_again() {
    static AGAIN: AtomicU64 = AtomicU64::new(0);
    if AGAIN.fetch_add(1, Ordering::Relaxed) < 64 {
        register_exit_handler();
    }
}

/// Registers [`wait_for_kernels`] to run at the process's exit.
fn register_exit_handler() {
    #[cfg(unix)]
    {
        extern "C" fn at_exit() {
            // Compiles waiting for a slot give up; those inside NVRTC are waited for.
            EXITING.store(true, Ordering::Relaxed);
            drop(BUSY.lock().unwrap_or_else(|e| e.into_inner()));
            FREED.notify_all();
            wait_for_kernels();
        }
        // SAFETY: `at_exit` is an `extern "C"` function without arguments that never
        // unwinds (the locks it takes recover from poisoning instead of panicking). If
        // registration fails the process exits as it would without it.
        let _ = unsafe { libc::atexit(at_exit) };
    }
}

/// A background compile under way: its outcome is recorded when it drops.
struct Finishing {
    arch: &'static str,
    source: String,
    outcome: Outcome,
}

impl Drop for Finishing {
    fn drop(&mut self) {
        let outcome = std::mem::replace(&mut self.outcome, Outcome::Failed);
        finish(self.arch, &self.source, outcome);
    }
}

/// Records a background compile's outcome and wakes whoever waits.
fn finish(arch: &str, source: &str, outcome: Outcome) {
    let mut list = jobs();
    if let Some(i) = at(&list, arch, source) {
        list[i].outcome = outcome;
    }
    drop(list);
    FINISHED.notify_all();
}

/// Waits for the background compile of `source` for `arch` and returns its CUBIN;
/// `None` when it failed or was never started.
pub(crate) fn wait(arch: &str, source: &str) -> Option<Vec<u8>> {
    let mut list = jobs();
    loop {
        match at(&list, arch, source).map(|i| &list[i].outcome) {
            Some(Outcome::Running) => {
                list = FINISHED.wait(list).unwrap_or_else(|e| e.into_inner());
            }
            Some(Outcome::Done(image)) => return Some(image.clone()),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An armed copy is disarmed (and its deferral forgotten) when its guard drops, and a
    /// copy inside an armed one does not arm again.
    #[test]
    fn arming_is_one_copy_at_a_time_on_this_thread() {
        let before = SETTING.load(Ordering::Relaxed);
        set_background_compile(true);
        let a = arm().expect("armed");
        assert!(armed() && !a.deferred());
        assert!(arm().is_none(), "no nested arming");
        defer();
        assert!(a.deferred());
        drop(a);
        assert!(!armed());
        let b = arm().expect("armed again");
        assert!(!b.deferred(), "a new copy starts undeferred");
        drop(b);
        {
            let _held = hold();
            assert!(arm().is_none(), "held: never armed");
            let _again = hold();
        }
        assert!(arm().is_some(), "no longer held");
        set_background_compile(false);
        assert!(arm().is_none(), "off: never armed");
        SETTING.store(before, Ordering::Relaxed);
    }

    /// A job of `source` for the made-up architecture `sm_test`, running.
    fn running(source: &str) {
        jobs().push(Job {
            arch: "sm_test",
            source: source.into(),
            outcome: Outcome::Running,
        });
    }

    /// A background compile that panics still ends its job (as failed), so that nothing
    /// waits for it forever, the process's exit included.
    #[test]
    fn a_compile_that_panics_ends_its_job() {
        let src = "// a_compile_that_panics_ends_its_job";
        running(src);
        let r = std::panic::catch_unwind(|| {
            let _job = Finishing {
                arch: "sm_test",
                source: src.into(),
                outcome: Outcome::Failed,
            };
            panic!("inside the compile");
        });
        assert!(r.is_err());
        assert!(matches!(standing("sm_test", src), Standing::Failed));
        assert_eq!(wait("sm_test", src), None);
    }

    /// A job that finishes wakes its waiter with its image; a failed one gives `None`;
    /// `wait_for_kernels` returns once none runs.
    #[test]
    fn waiters_get_the_finished_image() {
        let src = "// waiters_get_the_finished_image";
        running(src);
        assert!(matches!(standing("sm_test", src), Standing::Running));
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            finish("sm_test", src, Outcome::Done(vec![1, 2, 3]));
        });
        assert_eq!(wait("sm_test", src), Some(vec![1, 2, 3]));
        t.join().unwrap();
        wait_for_kernels();
        assert!(matches!(standing("sm_test", src), Standing::Done(ref i) if i == &[1, 2, 3]));
        finish("sm_test", src, Outcome::Failed);
        assert_eq!(wait("sm_test", src), None);
        assert!(matches!(standing("sm_test", "other"), Standing::Absent));
        assert_eq!(wait("sm_test", "other"), None);
    }
}
