//! Writes a kernel pack: the copy engine's common kernels compiled by NVRTC for the GPU
//! architectures named, no GPU needed.
//!
//! `cargo run --release --example precompile -- DIR [9.0 8.0 ...]` (compute capabilities;
//! without one, the GPU of this machine's device 0, else 9.0). Then run with
//! `STRIDEKIT_KERNEL_PACKS=DIR` (or call `stridekit::add_kernel_pack(DIR)`): a first copy
//! loads its kernel from the pack instead of compiling it.

use std::time::Instant;

fn parse_cc(arg: &str) -> Option<(i32, i32)> {
    let arg = arg.strip_prefix("sm_").unwrap_or(arg);
    match arg.split_once('.') {
        Some((maj, min)) => Some((maj.parse().ok()?, min.parse().ok()?)),
        // "90" as in sm_90: the last digit is the minor version.
        None if arg.len() >= 2 => {
            let (maj, min) = arg.split_at(arg.len() - 1);
            Some((maj.parse().ok()?, min.parse().ok()?))
        }
        None => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or("usage: precompile DIR [COMPUTE_CAPABILITY ...] (e.g. 9.0 or sm_90)")?;
    let mut ccs = Vec::new();
    for a in args {
        ccs.push(parse_cc(&a).ok_or_else(|| format!("{a:?} is not a compute capability"))?);
    }
    if ccs.is_empty() {
        let own = stridekit::cuda_available()
            .then(|| stridekit::Device::open(0).ok())
            .flatten()
            .and_then(|d| d.context().compute_capability().ok());
        ccs.push(own.unwrap_or((9, 0)));
    }
    for cc in ccs {
        let t = Instant::now();
        let done = stridekit::precompile_kernels(std::path::Path::new(&dir), cc)?;
        println!(
            "sm_{}{}: {} kernels, {:.1} MB, in {:.1} s",
            cc.0,
            cc.1,
            done.kernels,
            done.bytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
        for f in &done.failed {
            println!("  not compiled: {f}");
        }
    }
    Ok(())
}
