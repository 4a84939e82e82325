//! Asks the driver where its TMA limits lie (cuTensorMapEncodeTiled / Im2col called
//! directly, bisecting) and prints what it found; `tma/validate.rs` encodes the results.
//! Run on a GPU: `cargo run --release --example tma_probe`.

use stridekit::cudarc::driver::sys::{self, CUresult, CUtensorMapDataType as T};
use stridekit::{Device, DeviceMemoryResource, MemoryResource};

type R<T> = Result<T, Box<dyn std::error::Error>>;

struct Probe {
    addr: u64,
}

impl Probe {
    /// Driver-order (innermost first) dims/box; strides in bytes for axes 1..
    #[allow(clippy::too_many_arguments)]
    fn tiled(&self, ty: T, isz: u64, dims: &[u64], boxd: &[u32], il: u32, swz: u32) -> bool {
        let rank = dims.len();
        let mut strides = vec![0u64; rank.saturating_sub(1)];
        let mut s = isz * dims[0];
        for i in 1..rank {
            s = s.next_multiple_of(32);
            strides[i - 1] = s;
            s *= dims[i];
        }
        let es = vec![1u32; rank];
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: arrays hold `rank` (strides rank - 1) entries; the address is a live
        // 64 MiB device allocation; enum values come from the driver's own tables.
        let r = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                ty,
                rank as u32,
                self.addr as *mut _,
                dims.as_ptr(),
                strides.as_ptr(),
                boxd.as_ptr(),
                es.as_ptr(),
                std::mem::transmute::<u32, sys::CUtensorMapInterleave>(il),
                std::mem::transmute::<u32, sys::CUtensorMapSwizzle>(swz),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        r == CUresult::CUDA_SUCCESS
    }

    /// Rank-4 NHWC im2col with the given channels and pixels.
    fn im2col(&self, ty: T, isz: u64, c: u32, pixels: u32, il: u32, swz: u32) -> bool {
        let dims = [256u64, 64, 64, 4];
        let mut strides = [0u64; 3];
        let mut s = isz * dims[0];
        for i in 1..4 {
            s = s.next_multiple_of(32);
            strides[i - 1] = s;
            s *= dims[i];
        }
        let (lo, hi) = ([0i32, 0], [0i32, 0]);
        let es = [1u32; 4];
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: as in `tiled`, for the im2col entry point's arrays.
        let r = unsafe {
            sys::cuTensorMapEncodeIm2col(
                &mut map,
                ty,
                4,
                self.addr as *mut _,
                dims.as_ptr(),
                strides.as_ptr(),
                lo.as_ptr(),
                hi.as_ptr(),
                c,
                pixels,
                es.as_ptr(),
                std::mem::transmute::<u32, sys::CUtensorMapInterleave>(il),
                std::mem::transmute::<u32, sys::CUtensorMapSwizzle>(swz),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        r == CUresult::CUDA_SUCCESS
    }
}

/// The largest `x` in [lo, hi] with `ok(x)`, assuming ok is monotone (true then false).
fn last_true(lo: u32, hi: u32, ok: impl Fn(u32) -> bool) -> Option<u32> {
    if !ok(lo) {
        return None;
    }
    let (mut a, mut b) = (lo, hi + 1);
    while b - a > 1 {
        let m = (a + b) / 2;
        if ok(m) {
            a = m
        } else {
            b = m
        }
    }
    Some(a)
}

fn main() -> R<()> {
    let dev = Device::open(0)?;
    let (maj, min) = stridekit::driver_version()?;
    println!(
        "device: {} (cc {:?}), driver CUDA {maj}.{min}",
        dev.name()?,
        dev.compute_capability()?
    );
    let stream = dev.new_stream()?;
    let buf = DeviceMemoryResource::new(&dev)?.allocate(64 << 20, &stream)?;
    dev.context().bind_to_thread()?;
    let p = Probe { addr: buf.ptr() };

    // 1. Total bytes of a tiled box (no interleave, no swizzle): for each dtype, the
    //    largest accepted box and the smallest refused one.
    for (ty, isz, name) in [
        (T::CU_TENSOR_MAP_DATA_TYPE_UINT8, 1u64, "u8"),
        (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, "f32"),
        (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 8, "f64"),
    ] {
        let (mut best_ok, mut least_bad) = (0u64, u64::MAX);
        let step = (16 / isz) as u32;
        for b0 in (step..=256).step_by(step as usize) {
            let dims = [256u64, 256, 256];
            let got = last_true(1, 256, |b2| p.tiled(ty, isz, &dims, &[b0, 256, b2], 0, 0));
            let b2 = got.unwrap_or(0) as u64;
            best_ok = best_ok.max(b0 as u64 * 256 * b2 * isz);
            if b2 < 256 {
                least_bad = least_bad.min(b0 as u64 * 256 * (b2 + 1) * isz);
            }
        }
        println!(
            "tiled box bytes {name}: largest accepted {best_ok}, smallest refused {least_bad}"
        );
    }
    // 2. Inner box bytes with interleave (rank 3, u8 so that any byte count is possible),
    //    for each swizzle.
    for (il, il_name) in [(1u32, "interleave 16B"), (2, "interleave 32B")] {
        for (swz, swz_name) in [(0u32, "none"), (1, "32B"), (2, "64B"), (3, "128B")] {
            let ok: Vec<u32> = (1..=16u32)
                .map(|k| k * 8)
                .filter(|&bytes| {
                    p.tiled(
                        T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
                        1,
                        &[256, 64, 64],
                        &[bytes, 8, 8],
                        il,
                        swz,
                    )
                })
                .collect();
            println!(
                "{il_name} swizzle {swz_name}: accepted inner box bytes {ok:?} (of 8..=128 step 8)"
            );
        }
    }
    // 3. Inner box bytes without interleave, per swizzle.
    for (swz, swz_name) in [(0u32, "none"), (1, "32B"), (2, "64B"), (3, "128B")] {
        let ok: Vec<u32> = (1..=32u32)
            .map(|k| k * 8)
            .filter(|&bytes| {
                p.tiled(
                    T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
                    1,
                    &[256, 64, 64],
                    &[bytes, 8, 8],
                    0,
                    swz,
                )
            })
            .collect();
        println!("no interleave, swizzle {swz_name}: accepted inner box bytes {ok:?} (of 8..=256 step 8)");
    }
    // 4. im2col: channels x element size, and channels x pixels.
    for (ty, isz, name) in [
        (T::CU_TENSOR_MAP_DATA_TYPE_UINT8, 1u64, "u8"),
        (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, "f16"),
        (T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, "f32"),
    ] {
        let ok: Vec<u32> = (1..=64u32)
            .filter(|&c| p.im2col(ty, isz, c, 16, 0, 0))
            .collect();
        println!("im2col {name}: accepted channels (1..=64, 16 pixels) {ok:?}");
        let (mut best_ok, mut least_bad) = (0u64, u64::MAX);
        let step = (16 / isz) as u32;
        for c in (step..=256).step_by(step as usize) {
            let got = last_true(1, 1024, |px| p.im2col(ty, isz, c, px, 0, 0)).unwrap_or(0) as u64;
            best_ok = best_ok.max(c as u64 * got * isz);
            if got < 1024 {
                least_bad = least_bad.min(c as u64 * (got + 1) * isz);
            }
        }
        println!("im2col {name}: channels x pixels bytes: largest accepted {best_ok}, smallest refused {least_bad}");
    }
    for (swz, swz_name) in [(0u32, "none"), (1, "32B"), (2, "64B"), (3, "128B")] {
        let ok: Vec<u32> = (1..=32u32)
            .map(|k| k * 8)
            .filter(|&c| p.im2col(T::CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, c, 16, 0, swz))
            .collect();
        println!("im2col u8 swizzle {swz_name}: accepted channel bytes {ok:?} (of 8..=256 step 8)");
    }
    Ok(())
}
