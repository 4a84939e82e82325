//! Run-time compilation of CUDA C++ with NVRTC, cached per device and source in the
//! process, and on disk across processes (`kernel_cache`).

use crate::device::Device;
use crate::error::{driver, Error, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;
use std::sync::Arc;

/// The real and the virtual architecture of a device of compute capability `cc`: NVRTC
/// compiles for the first (the GPU's own code, a CUBIN the driver loads as it is) and
/// falls back to PTX for the second where the driver does not load that CUBIN.
pub(crate) fn arch(cc: (i32, i32)) -> Option<(&'static str, &'static str)> {
    Some(match cc {
        (7, 0) => ("sm_70", "compute_70"),
        (7, 2) => ("sm_72", "compute_72"),
        (7, 5) => ("sm_75", "compute_75"),
        (8, 0) => ("sm_80", "compute_80"),
        (8, 6) => ("sm_86", "compute_86"),
        (8, 7) => ("sm_87", "compute_87"),
        (8, 9) => ("sm_89", "compute_89"),
        (9, 0) => ("sm_90", "compute_90"),
        (10, 0) => ("sm_100", "compute_100"),
        (10, 3) => ("sm_103", "compute_103"),
        (12, 0) => ("sm_120", "compute_120"),
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
    // NVRTC takes C strings: a NUL byte would cut the source (or name) short.
    if let Some(at) = source.find('\0') {
        return Err(Error::Invalid {
            op,
            rule: format!("the source of {name:?} holds a NUL byte at {at}: NVRTC takes C strings"),
        });
    }
    if name.contains('\0') {
        return Err(Error::Invalid {
            op,
            rule: format!("the kernel name {name:?} holds a NUL byte: NVRTC takes C strings"),
        });
    }
    Runtime::get(op, ctx.ordinal())?.module(op, source, || compile_uncached(op, ctx, name, source))
}

/// Loads a CUBIN (from the disk cache, whose hashes were checked, or fresh from NVRTC):
/// only an ELF image whose every table and section lies inside it
/// ([`crate::cubin_image::fits`]), as the driver reads it by its address alone.
pub(crate) fn load_cubin(ctx: &Arc<CudaContext>, image: Vec<u8>) -> Option<Arc<CudaModule>> {
    if !crate::cubin_image::fits(&image) {
        return None;
    }
    ctx.load_module(Ptx::from_binary(image)).ok()
}

/// Loads PTX from the disk cache: UTF-8 text without a NUL byte.
fn load_ptx(ctx: &Arc<CudaContext>, image: Vec<u8>) -> Option<Arc<CudaModule>> {
    let text = String::from_utf8(image)
        .ok()
        .filter(|t| !t.contains('\0'))?;
    ctx.load_module(Ptx::from_src(text)).ok()
}

/// The disk cache's key of `source`'s CUBIN for the real architecture `real`. A CUBIN is
/// the GPU's own code, the same whichever driver loads it, so its key leaves the driver's
/// version out: a cache stays good across driver updates and can be copied to other
/// machines with the same GPU (a container image, say); a CUBIN a driver refuses is
/// compiled again and PTX taken. Kernel packs are written under this key.
fn cubin_key<'a>(name: &'a str, source: &'a str, real: &'a str) -> crate::kernel_cache::Key<'a> {
    crate::kernel_cache::Key {
        name,
        source,
        arch: real,
        driver: 0,
    }
}

/// The disk cache's keys of `source` for the architectures `archs` (real, virtual) under
/// a driver of version `driver`: the CUBIN's ([`cubin_key`]) and the PTX's. PTX is
/// compiled by the driver's JIT, so its key keeps the driver's version (and needs it).
fn cache_keys<'a>(
    name: &'a str,
    source: &'a str,
    archs: Option<(&'static str, &'static str)>,
    driver: Option<(i32, i32)>,
) -> (
    Option<crate::kernel_cache::Key<'a>>,
    Option<crate::kernel_cache::Key<'a>>,
) {
    let Some((real, virt)) = archs else {
        return (None, None);
    };
    let ptx_key = driver.map(|(maj, min)| crate::kernel_cache::Key {
        name,
        source,
        arch: virt,
        driver: maj * 1000 + min * 10,
    });
    (Some(cubin_key(name, source, real)), ptx_key)
}

/// Compiles and loads `source`, or loads it from the disk cache. For a device whose
/// architecture is known: its CUBIN, compiled by NVRTC (the driver then loads it as it
/// is, where PTX would be compiled a second time by the driver's JIT) and cached; where
/// the driver does not load that CUBIN (NVRTC newer than the driver), PTX, also cached.
/// For another device: PTX for NVRTC's default architecture, not cached.
fn compile_uncached(
    op: &'static str,
    ctx: &Arc<CudaContext>,
    name: &str,
    source: &str,
) -> Result<Arc<CudaModule>> {
    let cc = ctx
        .compute_capability()
        .map_err(driver(op, "cuDeviceGetAttribute"))?;
    let archs = arch(cc);
    let (real_key, virtual_key) = cache_keys(name, source, archs, crate::driver_version().ok());
    let cached = real_key
        .as_ref()
        .and_then(crate::kernel_cache::load)
        .and_then(|image| load_cubin(ctx, image))
        .or_else(|| {
            virtual_key
                .as_ref()
                .and_then(crate::kernel_cache::load)
                .and_then(|image| load_ptx(ctx, image))
        });
    if let Some(m) = cached {
        return Ok(m);
    }
    if let Err(where_) = crate::driver::nvrtc_lib::locate() {
        return Err(Error::Unsupported {
            op,
            reason: format!("kernels are compiled at run time, but {where_}"),
        });
    }
    if let Some((real, _)) = archs {
        if let Some(m) = from_background(op, ctx, name, source, real)? {
            return Ok(m);
        }
    }
    let file = format!("{name}.cu");
    if let Some((real, _)) = archs {
        // A failed CUBIN (an NVRTC that does not know the architecture, a driver older
        // than NVRTC) falls back to PTX, whose compile reports any error in the source.
        if let Ok(cubin) = crate::driver::nvrtc_cubin::compile_cubin(source, &file, real) {
            if let Some(m) = load_cubin(ctx, cubin.clone()) {
                if let Some(k) = &real_key {
                    crate::kernel_cache::store(k, &cubin);
                }
                return Ok(m);
            }
        }
    }
    let opts = cudarc::nvrtc::CompileOptions {
        arch: archs.map(|(_, virt)| virt),
        name: Some(file),
        ..Default::default()
    };
    let ptx =
        cudarc::nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| Error::Unsupported {
            op,
            reason: format!("NVRTC failed to compile {name}: {e:?}"),
        })?;
    let text = ptx.to_src();
    let module = ctx
        .load_module(ptx)
        .map_err(driver(op, "cuModuleLoadData"))?;
    if let Some(k) = &virtual_key {
        crate::kernel_cache::store(k, text.as_bytes());
    }
    Ok(module)
}

/// The kernel of `source` through the background compiles ([`crate::background_compile`]):
/// its CUBIN once a background thread has compiled it; for an armed copy, handed to a
/// thread (or left to the one that has it) and refused with the copy marked deferred;
/// for any other caller, waited for where a thread has it. `Ok(None)`: not there, not
/// deferred (compile it here); also where the finished CUBIN does not load.
fn from_background(
    op: &'static str,
    ctx: &Arc<CudaContext>,
    name: &str,
    source: &str,
    real: &'static str,
) -> Result<Option<Arc<CudaModule>>> {
    use crate::background_compile::{self as bg, Standing};
    let deferred = || {
        bg::defer();
        Err(Error::Unsupported {
            op,
            reason: format!("{name} is being compiled on a background thread"),
        })
    };
    let image = match bg::standing(real, source) {
        Standing::Done(image) => Some(image),
        Standing::Running if bg::armed() => return deferred(),
        Standing::Running => bg::wait(real, source),
        Standing::Absent if bg::armed() => {
            // The thread writes the disk cache entry this function reads.
            let (n, s) = (name.to_owned(), source.to_owned());
            let store = move |cubin: &[u8]| {
                crate::kernel_cache::store(&cubin_key(&n, &s, real), cubin);
            };
            if bg::start(real, name, source, store) {
                return deferred();
            }
            None
        }
        Standing::Absent | Standing::Failed => None,
    };
    Ok(image.and_then(|i| load_cubin(ctx, i)))
}

/// Compiles `source` (the module `name`) with NVRTC to a CUBIN for the real architecture
/// `real` (`sm_90`: [`arch`]'s first) and stores it in the kernel pack `dir` under the key
/// [`compile`] looks for on such a GPU; returns the CUBIN's size. Needs NVRTC, not a GPU;
/// the caller has found it ([`crate::driver::nvrtc_lib::locate`]). Errors are NVRTC's
/// log, or why the image or the file was refused, as text for the caller's report.
pub(crate) fn precompile_cubin(
    dir: &std::path::Path,
    real: &str,
    name: &str,
    source: &str,
) -> std::result::Result<usize, String> {
    let cubin = crate::driver::nvrtc_cubin::compile_cubin(source, &format!("{name}.cu"), real)?;
    if !crate::cubin_image::fits(&cubin) {
        return Err(format!("{name}: NVRTC's CUBIN is not a whole ELF image"));
    }
    crate::kernel_cache::store_in_pack(dir, &cubin_key(name, source, real), &cubin)
        .map_err(|e| format!("{name}: writing into {}: {e}", dir.display()))?;
    Ok(cubin.len())
}

/// The CUBIN the pack `dir` holds for `source` on a GPU of compute capability `cc`, as
/// [`compile`] would look it up.
#[cfg(test)]
pub(crate) fn packed_cubin(
    dir: &std::path::Path,
    cc: (i32, i32),
    name: &str,
    source: &str,
) -> Option<Vec<u8>> {
    let (real, _) = arch(cc)?;
    crate::kernel_cache::load_pack(dir, &cubin_key(name, source, real))
}

impl Device {
    /// Compiles CUDA C++ `source` with NVRTC for this device's architecture (its own code,
    /// or PTX where the driver refuses that) and loads the module; the same source on the
    /// same device is compiled once per process, and kept in the disk cache across
    /// processes. A source or name holding a NUL byte is refused ([`Error::Invalid`]);
    /// a source NVRTC cannot compile is [`Error::Unsupported`] with NVRTC's log.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// CUBIN keys leave the driver's version out (and need none); PTX keys keep it.
    #[test]
    fn cubin_keys_do_not_depend_on_the_driver() {
        let archs = arch((9, 0));
        for driver in [Some((13, 0)), Some((12, 8)), None] {
            let (real, virt) = cache_keys("k", "src", archs, driver);
            let real = real.unwrap();
            assert_eq!((real.arch, real.driver), ("sm_90", 0));
            match driver {
                Some((maj, min)) => {
                    let virt = virt.unwrap();
                    assert_eq!(
                        (virt.arch, virt.driver),
                        ("compute_90", maj * 1000 + min * 10)
                    );
                }
                None => assert!(virt.is_none()),
            }
        }
        let (real, virt) = cache_keys("k", "src", arch((6, 1)), Some((13, 0)));
        assert!(real.is_none() && virt.is_none());
    }
}
