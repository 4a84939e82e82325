//! The device-side strided copy: CUDA C++ compiled by NVRTC once per variant and cached.

use crate::error::{driver, Error, Result};
use cudarc::driver::{CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use stridekit_layout::CopyPlan;

/// Largest rank a kernel parameter block holds (the layout maximum).
const MAXD: usize = stridekit_layout::MAX_NDIM;

const SOURCE: &str = r#"
struct __align__(16) b16 { unsigned long long lo, hi; };
struct Params { long long shape[64]; long long src[64]; long long dst[64]; long long n; };
extern "C" __global__ void __launch_bounds__(256) strided_copy(const ELEM* __restrict__ src, ELEM* __restrict__ dst, const Params p) {
    const IDX n = (IDX)p.n;
    const IDX step = (IDX)gridDim.x * blockDim.x;
    for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        IDX rem = i;
        long long so = 0, d = 0;
#pragma unroll
        for (int k = NDIM - 1; k >= 0; --k) {
            const IDX e = (IDX)p.shape[k];
            const IDX q = rem / e;
            const IDX j = rem - q * e;
            rem = q;
            so += (long long)j * p.src[k];
            d += (long long)j * p.dst[k];
        }
        dst[d] = src[so];
    }
}
"#;

#[repr(C)]
#[derive(Clone, Copy)]
struct Params {
    shape: [i64; MAXD],
    src: [i64; MAXD],
    dst: [i64; MAXD],
    n: i64,
}

// SAFETY: plain C struct matching `Params` in SOURCE (64-bit fields, no padding).
unsafe impl DeviceRepr for Params {}

type Key = (usize, usize, usize, bool);

fn cache() -> &'static Mutex<HashMap<Key, CudaFunction>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, CudaFunction>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn elem_type(itemsize: usize) -> Option<&'static str> {
    Some(match itemsize {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        16 => "b16",
        _ => return None,
    })
}

/// The kernel for (device, itemsize, rank, 64-bit indexing), compiled on first use.
fn function(
    stream: &Arc<CudaStream>,
    itemsize: usize,
    ndim: usize,
    wide: bool,
) -> Result<CudaFunction> {
    const OP: &str = "strided copy kernel";
    let ctx = stream.context();
    let key = (ctx.ordinal(), itemsize, ndim, wide);
    if let Some(f) = cache().lock().map_err(|_| poisoned())?.get(&key) {
        return Ok(f.clone());
    }
    let elem = elem_type(itemsize).ok_or_else(|| Error::Unsupported {
        op: OP,
        reason: format!("itemsize {itemsize}; the kernel moves 1, 2, 4, 8 or 16-byte elements"),
    })?;
    let src = format!(
        "#define ELEM {elem}\n#define NDIM {ndim}\n#define IDX {}\n{SOURCE}",
        if wide {
            "unsigned long long"
        } else {
            "unsigned int"
        }
    );
    let module =
        crate::nvrtc::compile(OP, ctx, &format!("stridekit_copy_{itemsize}_{ndim}"), &src)?;
    let f = module
        .load_function("strided_copy")
        .map_err(driver(OP, "cuModuleGetFunction"))?;
    cache()
        .lock()
        .map_err(|_| poisoned())?
        .insert(key, f.clone());
    Ok(f)
}

fn poisoned() -> Error {
    Error::Invalid {
        op: "strided copy kernel",
        rule: "the kernel cache lock was poisoned by a panic in another thread".into(),
    }
}

/// Launches the copy of `plan` from `src` to `dst` (device-accessible addresses of offset 0).
pub(crate) fn launch(plan: &CopyPlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    const OP: &str = "strided copy kernel";
    let nd = plan.ndim().max(1);
    let n = plan.volume as u64;
    let wide = n > u32::MAX as u64 / 2;
    let f = function(stream, plan.itemsize, nd, wide)?;
    let mut p = Params {
        shape: [1; MAXD],
        src: [0; MAXD],
        dst: [0; MAXD],
        n: n as i64,
    };
    for k in 0..plan.ndim() {
        p.shape[k] = plan.shape[k];
        p.src[k] = plan.src_strides[k];
        p.dst[k] = plan.dst_strides[k];
    }
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let sms = stream
        .context()
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .map_err(driver(OP, "cuDeviceGetAttribute"))? as u64;
    let blocks = n.div_ceil(256).clamp(1, sms.max(1) * 16) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&p);
    // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params) and we pass two
    // 64-bit addresses and a Params by value; every offset the plan reaches lies inside
    // memory the callers' views validated.
    unsafe { launch.launch(cfg) }.map_err(driver(OP, "cuLaunchKernel"))?;
    Ok(())
}
