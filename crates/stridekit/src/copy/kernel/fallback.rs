//! The fallback kernel: the elementwise kernel of rank 8 (any copy of up to eight axes),
//! compiled ahead for the common GPU architectures and shipped inside the library
//! (`copy/kernels/fallback/`), so that it needs neither NVRTC nor a disk cache. A copy
//! whose own kernels are still compiling on background threads
//! ([`crate::background_compile`]) runs on it meanwhile.
//!
//! The images are NVRTC's CUBINs of exactly the source the engine would compile for
//! `Variant::Generic { ndim: 8, .. }`; `MANIFEST` lists each one's architecture, element
//! size, the SHA-256 of its source and its length, and a test fails when the source has
//! changed since (`STRIDEKIT_BLESS=1` with NVRTC at hand writes them again).

use super::generic::{grid_blocks, NARROW_INDICES_UP_TO};
use super::params::{Params, SMALLD};
use super::{depth, Variant};
use crate::error::{driver, Result};
use crate::runtime::Runtime;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use stridekit_layout::CopyPlan;

/// The real architectures the fallback ships for: `(major, minor, name)`. A GPU runs the
/// image of its major whose minor is at most its own (CUBINs run on later minors).
const ARCHS: [(i32, i32, &str); 5] = [
    (7, 5, "sm_75"),
    (8, 0, "sm_80"),
    (9, 0, "sm_90"),
    (10, 0, "sm_100"),
    (12, 0, "sm_120"),
];

/// The element sizes, in the images' order.
const SIZES: [usize; 5] = [1, 2, 4, 8, 16];

macro_rules! images_of {
    ($($arch:literal),*) => {
        [$([
            include_bytes!(concat!("../kernels/fallback/", $arch, "/strided_copy_1.cubin")).as_slice(),
            include_bytes!(concat!("../kernels/fallback/", $arch, "/strided_copy_2.cubin")).as_slice(),
            include_bytes!(concat!("../kernels/fallback/", $arch, "/strided_copy_4.cubin")).as_slice(),
            include_bytes!(concat!("../kernels/fallback/", $arch, "/strided_copy_8.cubin")).as_slice(),
            include_bytes!(concat!("../kernels/fallback/", $arch, "/strided_copy_16.cubin")).as_slice(),
        ]),*]
    };
}

/// The CUBINs, `[architecture][element size]` as in [`ARCHS`] and [`SIZES`].
static IMAGES: [[&[u8]; 5]; 5] = images_of!("sm_75", "sm_80", "sm_90", "sm_100", "sm_120");

/// The images' record: `arch itemsize source-sha256 bytes` a line.
#[cfg(test)]
const MANIFEST: &str = include_str!("../kernels/fallback/MANIFEST");

/// The variant the fallback is, for `itemsize`-byte elements: rank 8, 32-bit indices,
/// 64-bit offsets, 8 bytes a thread in flight.
fn variant(itemsize: usize) -> Variant {
    Variant::Generic {
        ndim: SMALLD,
        wide: false,
        narrow: false,
        unr: depth(itemsize, true),
    }
}

/// Whether the fallback can run `plan`: at most eight axes, elements of 1 to 16 bytes, few
/// enough for 32-bit indices.
pub(super) fn fits(plan: &CopyPlan) -> bool {
    plan.ndim() <= SMALLD
        && SIZES.contains(&plan.itemsize)
        && plan.volume as u64 <= NARROW_INDICES_UP_TO
}

/// The image for a GPU of compute capability `cc` and `itemsize`-byte elements.
fn image(cc: (i32, i32), itemsize: usize) -> Option<&'static [u8]> {
    let a = ARCHS
        .iter()
        .enumerate()
        .filter(|(_, &(major, minor, _))| major == cc.0 && minor <= cc.1)
        .max_by_key(|(_, &(_, minor, _))| minor)?
        .0;
    let s = SIZES.iter().position(|&x| x == itemsize)?;
    Some(IMAGES[a][s])
}

/// Runs the copy of `plan` between base addresses `dst` and `src` (checked by the caller,
/// as for every step) on the fallback kernel. `Ok(false)`: the plan does not [`fits`], no
/// image ships for this GPU, or its driver refuses the image; nothing ran.
pub(super) fn launch(
    plan: &CopyPlan,
    dst: u64,
    src: u64,
    stream: &Arc<CudaStream>,
) -> Result<bool> {
    const OP: &str = "strided copy kernel";
    if !fits(plan) {
        return Ok(false);
    }
    let runtime = Runtime::of_stream(OP, stream)?;
    let Some(img) = image(runtime.compute_capability(OP)?, plan.itemsize) else {
        return Ok(false);
    };
    let v = variant(plan.itemsize);
    let load = || -> Result<CudaFunction> {
        let refused = || crate::error::Error::Unsupported {
            op: OP,
            reason: "the driver refuses the fallback kernel's image".into(),
        };
        crate::nvrtc::load_cubin(stream.context(), img.to_vec())
            .ok_or_else(refused)?
            .load_function("strided_copy")
            .map_err(driver(OP, "cuModuleGetFunction"))
    };
    let Ok(f) = runtime.function(OP, v.key(plan.itemsize), load) else {
        return Ok(false);
    };
    let unr = depth(plan.itemsize, true);
    let p = Params::<SMALLD>::new(plan);
    let isz = plan.itemsize as i64;
    let src0 = src.wrapping_add_signed(plan.src_offset * isz);
    let dst0 = dst.wrapping_add_signed(plan.dst_offset * isz);
    let cfg = LaunchConfig {
        grid_dim: (grid_blocks(plan.volume as u64, unr), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut launch = stream.launch_builder(&f);
    launch.arg(&src0).arg(&dst0).arg(&p);
    // SAFETY: the image is `strided_copy.cu` compiled for `variant` (the manifest test
    // checks its source), whose parameters are (const ELEM*, ELEM*, Params) with PMAX 8:
    // two 64-bit addresses and a Params<8> of the plan (rank at most 8: `fits`), elements
    // of `plan.itemsize` bytes (the image of that size); it reads and writes exactly the
    // plan's elements, 32-bit indices valid for its volume (`fits`), 64-bit offsets, all
    // inside the regions the caller checked.
    unsafe { launch.launch(cfg) }.map_err(driver(OP, "cuLaunchKernel"))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::kernel_source;
    use super::*;
    use sha2::{Digest, Sha256};
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/copy/kernels/fallback")
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The manifest's line for an image of `source`.
    fn line(arch: &str, itemsize: usize, source: &str, bytes: usize) -> String {
        let sha = hex(&Sha256::digest(source.as_bytes()));
        format!("{arch} {itemsize} {sha} {bytes}")
    }

    /// Every shipped image is a whole CUBIN built from the source the engine compiles for
    /// the fallback variant today: a changed kernel source (or prelude, or defines) fails
    /// here until the images are written again, with `STRIDEKIT_BLESS=1` and NVRTC.
    #[test]
    fn fallback_images_are_built_from_the_current_source() {
        if std::env::var("STRIDEKIT_BLESS").is_ok_and(|v| v == "1") {
            crate::driver::nvrtc_lib::locate().expect("blessing the fallback needs NVRTC");
            let mut manifest = String::new();
            for (_, _, arch) in ARCHS {
                std::fs::create_dir_all(dir().join(arch)).unwrap();
                for isz in SIZES {
                    let (source, _) = kernel_source(isz, variant(isz)).unwrap();
                    let file = format!("{}.cu", super::super::module_name("strided_copy", isz));
                    let cubin = crate::driver::nvrtc_cubin::compile_cubin(&source, &file, arch)
                        .unwrap_or_else(|e| panic!("{arch} {isz}: {e}"));
                    let path = dir().join(arch).join(format!("strided_copy_{isz}.cubin"));
                    std::fs::write(path, &cubin).unwrap();
                    manifest += &line(arch, isz, &source, cubin.len());
                    manifest.push('\n');
                }
            }
            std::fs::write(dir().join("MANIFEST"), manifest).unwrap();
            return;
        }
        let mut expected = String::new();
        for (a, (_, _, arch)) in ARCHS.iter().enumerate() {
            for (s, &isz) in SIZES.iter().enumerate() {
                let (source, _) = kernel_source(isz, variant(isz)).unwrap();
                let img = IMAGES[a][s];
                assert!(
                    crate::cubin_image::fits(img),
                    "{arch} {isz}: not a whole CUBIN"
                );
                expected += &line(arch, isz, &source, img.len());
                expected.push('\n');
            }
        }
        assert_eq!(
            MANIFEST, expected,
            "the fallback images are stale: run STRIDEKIT_BLESS=1 cargo test -p stridekit --lib fallback (needs NVRTC)"
        );
    }

    /// Each GPU takes the image of its major with the highest minor not above its own;
    /// none ships for other majors or element sizes.
    #[test]
    fn gpus_take_their_majors_image() {
        let at = |cc, isz| image(cc, isz).map(|i| i.as_ptr());
        let of = |a: usize, s: usize| Some(IMAGES[a][s].as_ptr());
        assert_eq!(at((9, 0), 4), of(2, 2));
        assert_eq!(at((8, 6), 1), of(1, 0));
        assert_eq!(at((8, 9), 16), of(1, 4));
        assert_eq!(at((10, 3), 2), of(3, 1));
        assert_eq!(at((12, 1), 8), of(4, 3));
        assert_eq!(at((7, 5), 4), of(0, 2));
        assert_eq!(at((7, 0), 4), None);
        assert_eq!(at((6, 1), 4), None);
        assert_eq!(at((9, 0), 3), None);
    }

    /// Plans the fallback takes: up to eight axes, 32-bit indices.
    #[test]
    fn the_fallback_takes_plans_of_up_to_eight_axes() {
        use stridekit_layout::{Order, StridedLayout};
        let plan = |shape: &[i64], axes: &[i64]| {
            let src = StridedLayout::dense(shape, 4, Order::C).unwrap();
            let dst = StridedLayout::dense(shape, 4, Order::Axes(axes)).unwrap();
            CopyPlan::new(&dst, &src).unwrap()
        };
        assert!(fits(&plan(&[64, 48], &[1, 0])));
        let nine: Vec<i64> = (0..9).rev().collect();
        assert!(!fits(&plan(&[2; 9], &nine)), "nine axes stay nine");
        assert!(!fits(&plan(&[1 << 16, 1 << 15], &[1, 0])), "2^31 elements");
    }
}
