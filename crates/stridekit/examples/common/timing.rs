//! How the copy benchmarks time a copy (shared by `copy_bench` and `random_bench`).
//!
//! - [`Timer::device`]: the copy's device time. Each run is queued behind a read-only
//!   pass over 256 MiB, so the GPU is still busy when the host has queued the copy (the
//!   host's planning and launch never show as idle GPU time) and the 50 MB L2 cache holds
//!   none of the copy's data (every byte comes from DRAM). This is the figure the
//!   roofline ratios use; `bench/timing.py` times PyTorch and CuPy the same way.
//! - [`Timer::alone`]: each run on an idle GPU between two events, synchronized after
//!   each: the time between the first event and the copy's first kernel includes the
//!   host's planning and launch, which weighs on copies of a few tens of microseconds.
//! - the host time of the call itself (wall clock, median), from the device runs.
//!
//! Median of the runs in each case.

#![allow(dead_code)] // each benchmark uses part of it

use std::sync::Arc;
use std::time::Instant;
use stridekit::cudarc::driver::sys::CUevent_flags;
use stridekit::cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use stridekit::{Buffer, CudaStream, Device, DeviceMemoryResource, MemoryResource};

type R<T> = Result<T, stridekit::Error>;

fn err(e: impl std::fmt::Display) -> stridekit::Error {
    stridekit::Error::Invalid {
        op: "bench timing",
        rule: e.to_string(),
    }
}

const FLUSH_SOURCE: &str = r#"
extern "C" __global__ void l2_flush(const uint4* p, unsigned long long n, unsigned int* sink) {
    unsigned int acc = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    // Never true for the buffer's fill; keeps the loads.
    if (acc == 0x9e3779b9u) *sink = acc;
}
"#;

/// Device time and host time of copies on one stream.
pub struct Timer {
    stream: Arc<CudaStream>,
    flush: CudaFunction,
    buf: Buffer,
    sms: u32,
}

/// What [`Timer::device`] measured: median device milliseconds and median host
/// microseconds of the call.
pub struct Timing {
    pub ms: f64,
    pub host_us: f64,
}

impl Timer {
    pub fn new(dev: &Device, stream: &Arc<CudaStream>) -> R<Self> {
        let mut buf = DeviceMemoryResource::new(dev)?.allocate(256 << 20, stream)?;
        buf.fill(0x5A, stream)?;
        let flush = dev
            .compile_module("bench_l2_flush", FLUSH_SOURCE)?
            .load_function("l2_flush")
            .map_err(err)?;
        let sms = stream
            .context()
            .attribute(stridekit::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(err)? as u32;
        Ok(Self {
            stream: stream.clone(),
            flush,
            buf,
            sms,
        })
    }

    fn event(&self) -> R<stridekit::CudaEvent> {
        self.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(err)
    }

    fn queue_flush(&self) -> R<()> {
        let (p, n) = (self.buf.ptr(), (self.buf.size() / 16) as u64);
        let mut l = self.stream.launch_builder(&self.flush);
        l.arg(&p).arg(&n).arg(&p);
        // SAFETY: the kernel reads `n` 16-byte words of the live 256 MiB buffer and writes
        // at most one word of it.
        unsafe {
            l.launch(LaunchConfig {
                grid_dim: (self.sms * 8, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map(|_| ())
        .map_err(err)
    }

    /// Median device time of `reps` runs of `f`, each queued behind the flush; with the
    /// median host time of the calls.
    pub fn device(&self, reps: usize, mut f: impl FnMut() -> R<()>) -> R<Timing> {
        for _ in 0..3 {
            f()?;
        }
        // First copies of a class run on the fallback kernel while their own compile in
        // the background: timed, they run on their own.
        stridekit::wait_for_kernels();
        f()?;
        let (mut ms, mut host) = (vec![], vec![]);
        for _ in 0..reps {
            self.queue_flush()?;
            let a = self.event()?;
            let t = Instant::now();
            f()?;
            host.push(t.elapsed().as_secs_f64() * 1e6);
            let b = self.event()?;
            ms.push(a.elapsed_ms(&b).map_err(err)? as f64);
        }
        Ok(Timing {
            ms: median(ms),
            host_us: median(host),
        })
    }

    /// Median time of `reps` runs of `f`, each alone on an idle GPU.
    pub fn alone(&self, reps: usize, mut f: impl FnMut() -> R<()>) -> R<f64> {
        f()?;
        stridekit::wait_for_kernels();
        f()?;
        let mut ms = vec![];
        for _ in 0..reps {
            self.stream.synchronize().map_err(err)?;
            let a = self.event()?;
            f()?;
            let b = self.event()?;
            ms.push(a.elapsed_ms(&b).map_err(err)? as f64);
        }
        Ok(median(ms))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
