//! Helpers shared by the test files (included with `mod common;`).
#![allow(dead_code)]

/// Deterministic pseudo-random bytes (never all zeros).
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// True when a CUDA driver library can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library.
    unsafe { stridekit::cudarc::driver::sys::is_culib_present() }
}
