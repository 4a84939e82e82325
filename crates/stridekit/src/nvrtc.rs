//! Run-time compilation of CUDA C++ with NVRTC, cached per device and source in the
//! process, and on disk across processes (`kernel_cache`).

use crate::device::Device;
use crate::error::{driver, Error, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;

/// The virtual architecture NVRTC compiles for on a device of compute capability `cc`.
pub(crate) fn arch(cc: (i32, i32)) -> Option<&'static str> {
    Some(match cc {
        (7, 0) => "compute_70",
        (7, 2) => "compute_72",
        (7, 5) => "compute_75",
        (8, 0) => "compute_80",
        (8, 6) => "compute_86",
        (8, 7) => "compute_87",
        (8, 9) => "compute_89",
        (9, 0) => "compute_90",
        (10, 0) => "compute_100",
        (10, 3) => "compute_103",
        (12, 0) => "compute_120",
        _ => return None,
    })
}

/// Compiles `source` for the device behind `ctx` and loads it, once per (device, source).
pub(crate) fn compile(
    op: &'static str,
    ctx: &Arc<CudaContext>,
    name: &str,
    source: &str,
) -> Result<Arc<CudaModule>> {
    Runtime::get(op, ctx.ordinal())?.module(op, source, || compile_uncached(op, ctx, name, source))
}

/// Compiles and loads `source` (or loads it from the disk cache).
fn compile_uncached(
    op: &'static str,
    ctx: &Arc<CudaContext>,
    name: &str,
    source: &str,
) -> Result<Arc<CudaModule>> {
    let cc = ctx
        .compute_capability()
        .map_err(driver(op, "cuDeviceGetAttribute"))?;
    let arch_name = arch(cc);
    let disk_key = match (arch_name, crate::driver_version()) {
        (Some(a), Ok((maj, min))) => Some(crate::kernel_cache::Key {
            name,
            source,
            arch: a,
            driver: maj * 1000 + min * 10,
        }),
        _ => None,
    };
    let cached = disk_key
        .as_ref()
        .and_then(crate::kernel_cache::load)
        .and_then(|ptx| ctx.load_module(Ptx::from_src(ptx)).ok());
    let module = match cached {
        Some(m) => m,
        None => {
            if let Err(where_) = crate::driver::nvrtc_lib::locate() {
                return Err(Error::Unsupported {
                    op,
                    reason: format!("kernels are compiled at run time, but {where_}"),
                });
            }
            let opts = cudarc::nvrtc::CompileOptions {
                arch: arch_name,
                name: Some(format!("{name}.cu")),
                ..Default::default()
            };
            let ptx = cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| {
                Error::Unsupported {
                    op,
                    reason: format!("NVRTC failed to compile {name}: {e:?}"),
                }
            })?;
            if let Some(k) = &disk_key {
                crate::kernel_cache::store(k, &ptx.to_src());
            }
            ctx.load_module(ptx)
                .map_err(driver(op, "cuModuleLoadData"))?
        }
    };
    Ok(module)
}

impl Device {
    /// Compiles CUDA C++ `source` with NVRTC for this device's architecture and loads the
    /// module; the same source on the same device is compiled once per process.
    ///
    /// ```no_run
    /// use stridekit::cudarc::driver::{LaunchConfig, PushKernelArg};
    /// let dev = stridekit::Device::open(0)?;
    /// let module = dev.compile_module(
    ///     "fill",
    ///     r#"extern "C" __global__ void fill(int* p, int v) { p[threadIdx.x] = v; }"#,
    /// )?;
    /// let f = module.load_function("fill").unwrap();
    /// # Ok::<(), stridekit::Error>(())
    /// ```
    pub fn compile_module(&self, name: &str, source: &str) -> Result<Arc<CudaModule>> {
        compile("Device::compile_module", self.context(), name, source)
    }
}
