//! One state per device: everything stridekit learns or makes for a device once and
//! reuses, in one place.
//!
//! A [`Runtime`] owns the device's primary context, the library stream (where work
//! ordered on no stream of the caller's runs), the compute capability, SM count and
//! kernel occupancies, the compiled kernels (in memory; the disk cache sits behind it),
//! the peer-access table and the pool list that peer access must reach, and the pinned
//! staging ring of pageable host copies. Runtimes are made on first use and live for the
//! process. A lock poisoned by a panic elsewhere is [`Error::Internal`], never a wrong answer.

use crate::device_tables::{DeviceTable, DeviceTables, Made};
use crate::driver::{self, types::CUdevice_attribute};
use crate::error::{driver as driver_err, Error, Result};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream};
use foldhash::{HashMap, HashMapExt};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A compiled kernel's key: its name and up to three numbers that shape it.
pub(crate) type FunctionKey = (&'static str, [usize; 4]);

/// The per-device state. See the module docs.
pub(crate) struct Runtime {
    ctx: Arc<CudaContext>,
    library_stream: Mutex<Option<Arc<CudaStream>>>,
    pipeline_stream: Mutex<Option<Arc<CudaStream>>>,
    compute_capability: OnceLock<(i32, i32)>,
    sm_count: OnceLock<u64>,
    occupancy: Mutex<HashMap<(FunctionKey, usize), u64>>,
    functions: Mutex<HashMap<FunctionKey, CudaFunction>>,
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    /// Peer access to this device's memory from each accessor device: true on, false
    /// off (or impossible).
    peers: Mutex<HashMap<usize, bool>>,
    /// Pools made on this device (`CUmemoryPool` as integers), default pool excluded.
    pools: Mutex<Vec<usize>>,
    /// Idle pinned staging rings.
    staging: Mutex<Vec<driver::PinnedBlock>>,
    /// Events no mark holds any more, ready to record again.
    events: Mutex<Vec<CudaEvent>>,
    /// Constant tables kernels read, made once per key.
    tables: DeviceTables,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Runtime({})", self.ordinal())
    }
}

fn lock<'m, T>(op: &'static str, what: &'static str, m: &'m Mutex<T>) -> Result<MutexGuard<'m, T>> {
    m.lock().map_err(|_| Error::Internal {
        op,
        what: format!("the {what} lock was poisoned by a panic in another thread"),
    })
}

impl Runtime {
    /// The runtime of device `ordinal`, made on first use.
    pub(crate) fn get(op: &'static str, ordinal: usize) -> Result<Arc<Runtime>> {
        /// Devices whose runtimes are also found without a lock (every copy asks).
        const FAST_DEVICES: usize = 64;
        static FAST: [OnceLock<Arc<Runtime>>; FAST_DEVICES] =
            [const { OnceLock::new() }; FAST_DEVICES];
        static ALL: OnceLock<Mutex<Vec<Option<Arc<Runtime>>>>> = OnceLock::new();
        // Set only after the driver was ensured and the runtime made (below).
        if let Some(rt) = FAST.get(ordinal).and_then(OnceLock::get) {
            return Ok(rt.clone());
        }
        driver::ensure(op)?;
        let all = ALL.get_or_init(|| Mutex::new(Vec::new()));
        if let Some(Some(rt)) = lock(op, "device runtime table", all)?.get(ordinal) {
            return Ok(rt.clone());
        }
        let count = driver::device_count(op)?;
        if ordinal >= count {
            return Err(Error::NoDevice { op, ordinal, count });
        }
        let mut table = lock(op, "device runtime table", all)?;
        if table.len() <= ordinal {
            table.resize(ordinal + 1, None);
        }
        if let Some(rt) = &table[ordinal] {
            return Ok(rt.clone());
        }
        // The first device of the process: NVRTC warms up meanwhile, for the copies that
        // compile their kernels in the background.
        let ctx = crate::background_compile::beside_warm_up(|| CudaContext::new(ordinal))
            .map_err(driver_err(op, "cuDevicePrimaryCtxRetain"))?;
        let rt = Arc::new(Runtime {
            ctx,
            library_stream: Mutex::new(None),
            pipeline_stream: Mutex::new(None),
            compute_capability: OnceLock::new(),
            sm_count: OnceLock::new(),
            occupancy: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
            peers: Mutex::new(HashMap::new()),
            pools: Mutex::new(Vec::new()),
            staging: Mutex::new(Vec::new()),
            events: Mutex::new(Vec::new()),
            tables: DeviceTables::new(),
        });
        table[ordinal] = Some(rt.clone());
        if let Some(slot) = FAST.get(ordinal) {
            // Made under the table's lock, so at most once per device.
            let _ = slot.set(rt.clone());
        }
        Ok(rt)
    }

    /// The runtime of the device a stream belongs to.
    pub(crate) fn of_stream(op: &'static str, stream: &CudaStream) -> Result<Arc<Runtime>> {
        Runtime::get(op, stream.context().ordinal())
    }

    /// The device ordinal.
    pub(crate) fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The device's primary context (retained for the process).
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Makes the primary context current on the calling thread.
    pub(crate) fn bind(&self, op: &'static str) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(driver_err(op, "cuCtxSetCurrent"))
    }

    /// Makes sure the calling thread has a current context, binding the primary context
    /// when it has none (some driver calls fail on a thread that never touched CUDA).
    pub(crate) fn bind_if_none(&self, op: &'static str) -> Result<()> {
        if driver::has_current_context(op)? {
            Ok(())
        } else {
            self.bind(op)
        }
    }

    /// stridekit's own non-blocking stream on this device, made once.
    pub(crate) fn library_stream(&self, op: &'static str) -> Result<Arc<CudaStream>> {
        self.own_stream(op, "library stream", &self.library_stream)
    }

    /// The non-blocking stream on which transfers in pieces are packed and unpacked
    /// (`dist::Batch`), made once.
    pub(crate) fn pipeline_stream(&self, op: &'static str) -> Result<Arc<CudaStream>> {
        self.own_stream(op, "pipeline stream", &self.pipeline_stream)
    }

    fn own_stream(
        &self,
        op: &'static str,
        what: &'static str,
        slot: &Mutex<Option<Arc<CudaStream>>>,
    ) -> Result<Arc<CudaStream>> {
        let mut s = lock(op, what, slot)?;
        if let Some(s) = s.as_ref() {
            return Ok(s.clone());
        }
        let made = self
            .ctx
            .new_stream()
            .map_err(driver_err(op, "cuStreamCreate"))?;
        *s = Some(made.clone());
        Ok(made)
    }

    /// An attribute of the device.
    pub(crate) fn attribute(&self, op: &'static str, attr: CUdevice_attribute) -> Result<i32> {
        self.ctx
            .attribute(attr)
            .map_err(driver_err(op, "cuDeviceGetAttribute"))
    }

    /// Compute capability (major, minor), asked once.
    pub(crate) fn compute_capability(&self, op: &'static str) -> Result<(i32, i32)> {
        if let Some(&cc) = self.compute_capability.get() {
            return Ok(cc);
        }
        let cc = self
            .ctx
            .compute_capability()
            .map_err(driver_err(op, "cuDeviceGetAttribute"))?;
        Ok(*self.compute_capability.get_or_init(|| cc))
    }

    /// Streaming multiprocessors, asked once.
    pub(crate) fn sm_count(&self, op: &'static str) -> Result<u64> {
        if let Some(&n) = self.sm_count.get() {
            return Ok(n);
        }
        let n = self.attribute(
            op,
            CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )?;
        Ok(*self.sm_count.get_or_init(|| n.max(1) as u64))
    }

    /// A compiled kernel, or `make`'s, remembered under `key`.
    pub(crate) fn function(
        &self,
        op: &'static str,
        key: FunctionKey,
        make: impl FnOnce() -> Result<CudaFunction>,
    ) -> Result<CudaFunction> {
        if let Some(f) = lock(op, "kernel table", &self.functions)?.get(&key) {
            return Ok(f.clone());
        }
        let f = make()?;
        lock(op, "kernel table", &self.functions)?.insert(key, f.clone());
        Ok(f)
    }

    /// Whether the kernel of `key` is compiled and loaded already.
    pub(crate) fn has_function(&self, op: &'static str, key: FunctionKey) -> Result<bool> {
        Ok(lock(op, "kernel table", &self.functions)?.contains_key(&key))
    }

    /// A loaded module for `source`, or `make`'s, remembered.
    pub(crate) fn module(
        &self,
        op: &'static str,
        source: &str,
        make: impl FnOnce() -> Result<Arc<CudaModule>>,
    ) -> Result<Arc<CudaModule>> {
        if let Some(m) = lock(op, "module table", &self.modules)?.get(source) {
            return Ok(m.clone());
        }
        let m = make()?;
        lock(op, "module table", &self.modules)?.insert(source.to_owned(), m.clone());
        Ok(m)
    }

    /// Resident blocks per SM of a kernel with `shared` bytes of dynamic shared memory,
    /// or `ask`'s answer, remembered.
    pub(crate) fn occupancy(
        &self,
        op: &'static str,
        key: FunctionKey,
        shared: usize,
        ask: impl FnOnce() -> Result<u64>,
    ) -> Result<u64> {
        if let Some(&n) = lock(op, "occupancy table", &self.occupancy)?.get(&(key, shared)) {
            return Ok(n);
        }
        let n = ask()?;
        lock(op, "occupancy table", &self.occupancy)?.insert((key, shared), n);
        Ok(n)
    }

    /// What is known of `accessor`'s access to this device's memory.
    pub(crate) fn peer_state(&self, op: &'static str, accessor: usize) -> Result<Option<bool>> {
        Ok(lock(op, "peer-access table", &self.peers)?
            .get(&accessor)
            .copied())
    }

    /// Runs `change` under the peer-access table's lock, storing what it answers.
    pub(crate) fn set_peer_state(
        &self,
        op: &'static str,
        accessor: usize,
        change: impl FnOnce(Option<bool>) -> Result<bool>,
    ) -> Result<bool> {
        let mut peers = lock(op, "peer-access table", &self.peers)?;
        let on = change(peers.get(&accessor).copied())?;
        peers.insert(accessor, on);
        Ok(on)
    }

    /// Every pool of this device: its default pool and the ones made on it.
    pub(crate) fn pools(&self, op: &'static str) -> Result<Vec<driver::types::CUmemoryPool>> {
        let mut default: driver::types::CUmemoryPool = std::ptr::null_mut();
        // SAFETY: a device handle from the runtime's live primary context.
        driver::check(op, "cuDeviceGetDefaultMemPool", unsafe {
            driver::memory::default_pool(&mut default, self.ctx.cu_device())
        })?;
        let mut all = vec![default];
        all.extend(
            lock(op, "pool list", &self.pools)?
                .iter()
                .map(|&h| h as driver::types::CUmemoryPool),
        );
        Ok(all)
    }

    /// Remembers a pool made on this device and gives it the peer access already enabled
    /// towards this device (context peer access does not cover pools).
    pub(crate) fn register_pool(
        &self,
        op: &'static str,
        pool: driver::types::CUmemoryPool,
    ) -> Result<()> {
        let peers = lock(op, "peer-access table", &self.peers)?;
        for (&accessor, _) in peers.iter().filter(|(&a, &on)| on && a != self.ordinal()) {
            // SAFETY: a live pool of this device, another device as accessor.
            driver::check(op, "cuMemPoolSetAccess", unsafe {
                driver::memory::pool_set_access(pool, accessor as i32, true)
            })?;
        }
        lock(op, "pool list", &self.pools)?.push(pool as usize);
        Ok(())
    }

    /// Forgets a destroyed pool.
    pub(crate) fn unregister_pool(
        &self,
        op: &'static str,
        pool: driver::types::CUmemoryPool,
    ) -> Result<()> {
        lock(op, "pool list", &self.pools)?.retain(|&h| h != pool as usize);
        Ok(())
    }

    /// An idle pinned staging ring of `bytes` bytes, or a new one (idle rings of other
    /// sizes stay for their users).
    pub(crate) fn take_staging(
        &self,
        op: &'static str,
        bytes: usize,
    ) -> Result<driver::PinnedBlock> {
        let mut idle = lock(op, "staging ring", &self.staging)?;
        if let Some(i) = idle.iter().rposition(|r| r.size() == bytes) {
            return Ok(idle.swap_remove(i));
        }
        drop(idle);
        driver::PinnedBlock::new(op, &self.ctx, bytes)
    }

    /// Returns a ring whose transfers have all completed.
    pub(crate) fn give_back_staging(
        &self,
        op: &'static str,
        ring: driver::PinnedBlock,
    ) -> Result<()> {
        lock(op, "staging ring", &self.staging)?.push(ring);
        Ok(())
    }

    /// An event to record (from the pool, or new; no timing).
    pub(crate) fn event(&self, op: &'static str) -> Result<CudaEvent> {
        if let Some(e) = lock(op, "event pool", &self.events)?.pop() {
            return Ok(e);
        }
        self.ctx
            .new_event(None)
            .map_err(driver_err(op, "cuEventCreate"))
    }

    /// The constant table of `key` kernels read, made by `make` and uploaded once (see
    /// `device_tables`); `upload` false takes only a table made already.
    pub(crate) fn table(
        &self,
        op: &'static str,
        key: &[i64],
        upload: bool,
        make: impl FnOnce() -> Made,
    ) -> Result<Option<Arc<DeviceTable>>> {
        self.tables.get(op, &self.ctx, key, upload, make)
    }

    /// Takes an event back into the pool (at most 256 are kept).
    pub(crate) fn recycle_event(&self, event: CudaEvent) {
        if let Ok(mut pool) = self.events.lock() {
            if pool.len() < 256 {
                pool.push(event);
            }
        }
    }
}
