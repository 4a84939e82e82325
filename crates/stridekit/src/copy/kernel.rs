//! The device-side strided copy: CUDA C++ compiled by NVRTC once per variant and cached.

use crate::error::{driver, Error, Result};
use cudarc::driver::{CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use stridekit_layout::CopyPlan;

/// Largest rank a kernel parameter block holds (the layout maximum).
const MAXD: usize = stridekit_layout::MAX_NDIM;
/// The parameter block of ranks up to this (most copies) is the small one.
const SMALLD: usize = 8;

/// The parameter block's array length for a plan of rank `nd`.
fn pmax(nd: usize) -> usize {
    if nd <= SMALLD {
        SMALLD
    } else {
        MAXD
    }
}

/// Declarations every copy kernel shares; `Params` mirrors the Rust struct below.
const PRELUDE: &str = include_str!("kernels/prelude.cu");

/// One thread per element, any layouts.
const SOURCE: &str = include_str!("kernels/strided_copy.cu");

/// A transpose through shared memory: tiles of 32 x 32 WORDs, read coalesced along the
/// source's contiguous axis `a`, written coalesced along the destination's contiguous
/// axis `l`; the other axes are batches (blockIdx.z, looping past the grid limit). With
/// WORD = ELEM the tile holds elements; with a wider WORD (4 or 8 bytes for 1-, 2- and
/// 4-byte elements) each thread moves a word per access.
const TILED_SOURCE: &str = include_str!("kernels/tiled_transpose.cu");

#[repr(C)]
#[derive(Clone, Copy)]
struct Params<const D: usize> {
    shape: [i64; D],
    src: [i64; D],
    dst: [i64; D],
    n: i64,
    mul: [u32; D],
    sh: [u32; D],
}

/// Division of a 32-bit index by a fixed extent `d` as a multiply-high and two shifts
/// (Granlund and Montgomery): `q = (t + ((n - t) >> sh1)) >> sh2` with `t = mulhi(m, n)`,
/// exact for every `n < 2^32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FastDiv {
    mul: u32,
    sh1: u32,
    sh2: u32,
}

impl FastDiv {
    fn new(d: u32) -> FastDiv {
        let d = d.max(1);
        let l = if d == 1 {
            0
        } else {
            32 - (d - 1).leading_zeros()
        };
        let m = ((1u128 << 32) * ((1u128 << l) - d as u128)) / d as u128 + 1;
        FastDiv {
            mul: m as u32,
            sh1: l.min(1),
            sh2: l.saturating_sub(1),
        }
    }

    /// What the kernel computes.
    #[cfg(test)]
    fn div(self, n: u32) -> u32 {
        let t = ((self.mul as u64 * n as u64) >> 32) as u32;
        (t + ((n - t) >> self.sh1)) >> self.sh2
    }
}

// SAFETY: plain C struct matching `Params` in PRELUDE with PMAX = D (64-bit fields, then
// 32-bit arrays of an even length: no padding).
unsafe impl<const D: usize> DeviceRepr for Params<D> {}

/// Which copy kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Variant {
    /// One thread per element, any layout.
    Generic,
    /// Shared-memory tiles of words of this many bytes (the itemsize: plain elements).
    Tiled { word: usize },
}

/// (device, itemsize, rank, 64-bit indexing, kernel).
type Key = (usize, usize, usize, bool, Variant);

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

/// The kernel for (device, itemsize, rank, 64-bit indexing, variant), compiled on first use.
fn function(
    stream: &Arc<CudaStream>,
    itemsize: usize,
    ndim: usize,
    wide: bool,
    variant: Variant,
) -> Result<CudaFunction> {
    const OP: &str = "strided copy kernel";
    let ctx = stream.context();
    let key = (ctx.ordinal(), itemsize, ndim, wide, variant);
    if let Some(f) = cache().lock().map_err(|_| poisoned())?.get(&key) {
        return Ok(f.clone());
    }
    let elem = elem_type(itemsize).ok_or_else(|| Error::Unsupported {
        op: OP,
        reason: format!("itemsize {itemsize}; the kernel moves 1, 2, 4, 8 or 16-byte elements"),
    })?;
    let (body, name, word) = match variant {
        Variant::Generic => (SOURCE, "strided_copy", elem),
        Variant::Tiled { word } => (
            TILED_SOURCE,
            "tiled_transpose",
            match word {
                w if w == itemsize => elem,
                4 => "unsigned int",
                _ => "unsigned long long",
            },
        ),
    };
    let src = format!(
        "#define ELEM {elem}\n#define WORD {word}\n#define NDIM {ndim}\n#define PMAX {}\n{}#define IDX {}\n{PRELUDE}{body}",
        pmax(ndim),
        if wide { "" } else { "#define FASTDIV 1\n" },
        if wide {
            "unsigned long long"
        } else {
            "unsigned int"
        }
    );
    let module = crate::nvrtc::compile(
        OP,
        ctx,
        &format!("stridekit_{name}_{itemsize}_{ndim}"),
        &src,
    )?;
    let f = module
        .load_function(name)
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

/// Launches the copy of `plan` from `src` to `dst` (device-accessible addresses of offset 0):
/// a shared-memory tiled transpose when the plan is one, the generic kernel otherwise.
pub(crate) fn launch(plan: &CopyPlan, dst: u64, src: u64, stream: &Arc<CudaStream>) -> Result<()> {
    if pmax(plan.ndim().max(1)) == SMALLD {
        launch_with::<SMALLD>(plan, dst, src, stream)
    } else {
        launch_with::<MAXD>(plan, dst, src, stream)
    }
}

/// SMs of the stream's device, asked once per device.
fn sm_count(stream: &Arc<CudaStream>) -> Result<u64> {
    static SMS: OnceLock<Mutex<HashMap<usize, u64>>> = OnceLock::new();
    let ctx = stream.context();
    let map = SMS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(&n) = map.lock().map_err(|_| poisoned())?.get(&ctx.ordinal()) {
        return Ok(n);
    }
    let n = ctx
        .attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
        .map_err(driver("strided copy kernel", "cuDeviceGetAttribute"))? as u64;
    map.lock().map_err(|_| poisoned())?.insert(ctx.ordinal(), n);
    Ok(n)
}

fn launch_with<const D: usize>(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    const OP: &str = "strided copy kernel";
    let nd = plan.ndim().max(1);
    let n = plan.volume as u64;
    let mut p = Params::<D> {
        shape: [1; D],
        src: [0; D],
        dst: [0; D],
        n: n as i64,
        mul: [1; D],
        sh: [0; D],
    };
    for k in 0..plan.ndim() {
        let f = FastDiv::new(u32::try_from(plan.shape[k]).unwrap_or(u32::MAX));
        p.mul[k] = f.mul;
        p.sh[k] = f.sh1 | (f.sh2 << 8);
        p.shape[k] = plan.shape[k];
        p.src[k] = plan.src_strides[k];
        p.dst[k] = plan.dst_strides[k];
    }
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);

    if let Some((a, l)) = plan.tiled_transpose_axes() {
        // Words wider than an element when every word access is aligned.
        let word = if packed_ok(plan, a, l, src0, dst0) {
            packed_word(plan.itemsize)
        } else {
            plan.itemsize
        };
        let tile = 32 * (word / plan.itemsize) as u64;
        let (na, nl) = (plan.shape[a] as u64, plan.shape[l] as u64);
        let (ta, tl) = (na.div_ceil(tile), nl.div_ceil(tile));
        if ta <= 65535 && tl <= i32::MAX as u64 {
            let f = function(stream, plan.itemsize, nd, false, Variant::Tiled { word })?;
            let batches = (n / (na * nl)) as i64;
            let cfg = LaunchConfig {
                grid_dim: (tl as u32, ta as u32, batches.clamp(1, 65535) as u32),
                block_dim: (32, 8, 1),
                shared_mem_bytes: 0,
            };
            let (a32, l32) = (a as i32, l as i32);
            let mut launch = stream.launch_builder(&f);
            launch
                .arg(&src0)
                .arg(&dst0)
                .arg(&p)
                .arg(&a32)
                .arg(&l32)
                .arg(&batches);
            // SAFETY: the kernel's parameters are (const ELEM*, ELEM*, Params, int, int,
            // long long), passed in that order; every offset the plan reaches lies inside
            // memory the callers' views validated; word accesses wider than an element are
            // aligned (packed_ok).
            unsafe { launch.launch(cfg) }.map_err(driver(OP, "cuLaunchKernel"))?;
            return Ok(());
        }
    }

    let wide = n > u32::MAX as u64 / 2;
    let f = function(stream, plan.itemsize, nd, wide, Variant::Generic)?;
    let sms = sm_count(stream)?;
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

/// Bytes per word when the tiled kernel moves words wider than an element (0: never).
fn packed_word(itemsize: usize) -> usize {
    match itemsize {
        1 | 2 => 4,
        4 => 8,
        _ => 0,
    }
}

/// Whether every wide word the tiled kernel reads or writes is aligned: 1-, 2- or 4-byte
/// elements, word-aligned bases, and every stride other than the two unit ones a
/// multiple of the word.
fn packed_ok(plan: &CopyPlan, a: usize, l: usize, src0: u64, dst0: u64) -> bool {
    let w = packed_word(plan.itemsize) as i64;
    let isz = plan.itemsize as i64;
    w > 0
        && src0.is_multiple_of(w as u64)
        && dst0.is_multiple_of(w as u64)
        && (0..plan.ndim()).all(|k| {
            (k == a || (plan.src_strides[k] * isz) % w == 0)
                && (k == l || (plan.dst_strides[k] * isz) % w == 0)
        })
}

#[cfg(test)]
mod tests {
    use super::FastDiv;

    #[test]
    fn parameter_blocks_match_the_cuda_struct() {
        // shape, src, dst (PMAX x 8 bytes each), n (8), mul and sh (PMAX x 4 each).
        assert_eq!(std::mem::size_of::<super::Params<8>>(), 3 * 64 + 8 + 2 * 32);
        assert_eq!(
            std::mem::size_of::<super::Params<64>>(),
            3 * 512 + 8 + 2 * 256
        );
        assert_eq!((super::pmax(1), super::pmax(8), super::pmax(9)), (8, 8, 64));
    }

    #[test]
    fn fast_division_is_exact() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut divisors: Vec<u32> = (1..=4096).collect();
        divisors.extend([
            65535,
            65536,
            65537,
            1 << 30,
            (1 << 31) - 1,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ]);
        divisors.extend((0..2000).map(|_| next() as u32 | 1));
        for &d in &divisors {
            let f = FastDiv::new(d);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u32::MAX,
                u32::MAX - 1,
                u32::MAX / 2,
            ];
            for n in edges.into_iter().chain((0..200).map(|_| next() as u32)) {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
            }
        }
    }
}
