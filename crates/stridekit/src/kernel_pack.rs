//! Kernel packs: the copy engine's kernels compiled ahead of time, so that a new
//! machine's first copies load them instead of waiting for NVRTC.
//!
//! Kernels are compiled at run time by NVRTC and kept in the disk cache; on a machine
//! whose cache is empty the first copy of each class waits for its kernel's compile,
//! 50-400 ms. [`precompile_kernels`] compiles the common set for a GPU architecture into
//! a directory (it needs NVRTC, not a GPU: a build machine or a container build step
//! will do); that directory, shipped with an application or a container image, is a
//! *pack*: named in `$STRIDEKIT_KERNEL_PACKS` or given to [`add_kernel_pack`], it is
//! searched after the cache. A kernel the pack lacks (or whose source has changed since)
//! is compiled as before. Entries are the cache's: SHA-256 hashes of key and image,
//! checked on every load. A pack's directory and files must belong to the user or to root
//! and be writable by no one else, or the pack is skipped with a warning.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// What [`precompile_kernels`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precompiled {
    /// Kernels compiled and stored.
    pub kernels: usize,
    /// Their CUBINs' bytes, in all.
    pub bytes: usize,
    /// The kernels NVRTC could not compile for this architecture, each with NVRTC's
    /// reason; they compile at run time as before (or report the error there).
    pub failed: Vec<String>,
}

/// Compiles the copy engine's common kernels for GPUs of compute capability `cc` (major,
/// minor; `(9, 0)` for the H100) with NVRTC and writes them into the kernel pack `dir`
/// (made with mode 0755 where missing), on as many threads as the machine has cores. No
/// GPU is needed. Kernels already in `dir` are written again.
///
/// Errors: [`Error::Unsupported`] when `cc` is not an architecture stridekit compiles
/// for or NVRTC cannot be loaded; [`Error::Invalid`] when `dir` cannot be made or
/// written (checked before anything is compiled).
///
/// ```no_run
/// let dir = std::path::Path::new("/opt/app/stridekit-kernels");
/// let done = stridekit::precompile_kernels(dir, (9, 0))?;
/// println!("{} kernels, {} bytes", done.kernels, done.bytes);
/// // Later, in the application (or STRIDEKIT_KERNEL_PACKS=/opt/app/stridekit-kernels):
/// stridekit::add_kernel_pack(dir);
/// # Ok::<(), stridekit::Error>(())
/// ```
pub fn precompile_kernels(dir: &Path, cc: (i32, i32)) -> Result<Precompiled> {
    const OP: &str = "precompile_kernels";
    let Some((real, _)) = crate::nvrtc::arch(cc) else {
        return Err(Error::Unsupported {
            op: OP,
            reason: format!(
                "compute capability {}.{}: not an architecture stridekit compiles for",
                cc.0, cc.1
            ),
        });
    };
    // Made, and written once, before anything is compiled: a directory that cannot take
    // the pack fails at once rather than after every kernel's compile.
    crate::kernel_cache::create_pack_dir(dir)
        .and_then(|()| tempfile::tempfile_in(dir).map(drop))
        .map_err(|e| Error::Invalid {
            op: OP,
            rule: format!(
                "the pack directory {} cannot be made or written: {e}",
                dir.display()
            ),
        })?;
    if let Err(where_) = crate::driver::nvrtc_lib::locate() {
        return Err(Error::Unsupported {
            op: OP,
            reason: format!("kernels are compiled by NVRTC, but {where_}"),
        });
    }
    let kernels = crate::copy::common_kernels()?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Each worker takes the next kernel not yet taken until none is left.
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some((name, source)) = kernels.get(i) else {
                return done;
            };
            done.push((i, crate::nvrtc::precompile_cubin(dir, real, name, source)));
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results: Vec<(usize, std::result::Result<usize, String>)> = std::thread::scope(|s| {
        // One worker on this thread, the others on threads of their own where they can
        // be started (a thread that cannot be started leaves its share to the rest).
        let workers: Vec<_> = (1..threads.min(kernels.len()))
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("stridekit-precompile".into())
                    .spawn_scoped(s, work)
                    .ok()
            })
            .collect();
        let mut all = work();
        for w in workers {
            match w.join() {
                Ok(done) => all.extend(done),
                Err(_) => all.push((usize::MAX, Err("a compile thread panicked".into()))),
            }
        }
        all
    });
    let mut out = Precompiled {
        kernels: 0,
        bytes: 0,
        failed: Vec::new(),
    };
    for (i, r) in results {
        match r {
            Ok(bytes) => {
                out.kernels += 1;
                out.bytes = out.bytes.saturating_add(bytes);
            }
            Err(why) => {
                let name = kernels.get(i).map_or("?", |k| k.0.as_str());
                out.failed.push(format!("{name}: {why}"));
            }
        }
    }
    Ok(out)
}

/// Adds `dir` to the kernel packs searched (after the disk cache and the packs of
/// `$STRIDEKIT_KERNEL_PACKS`) for a kernel before NVRTC compiles it. A directory that
/// is missing, not the user's or root's, or writable by group or others is skipped with
/// a warning on standard error when kernels are looked for.
pub fn add_kernel_pack(dir: impl Into<PathBuf>) {
    crate::kernel_cache::add_pack(dir.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An architecture outside the table is refused before anything is written.
    #[test]
    fn unknown_architectures_are_refused() {
        let dir = std::env::temp_dir().join(format!("sk-pack-none-{}", std::process::id()));
        match precompile_kernels(&dir, (6, 1)) {
            Err(Error::Unsupported { op, reason }) => {
                assert_eq!(op, "precompile_kernels");
                assert!(reason.contains("6.1"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!dir.exists());
    }

    /// A directory that cannot be written is refused before anything is compiled.
    #[cfg(unix)]
    #[test]
    fn an_unwritable_directory_is_refused_first() {
        let file = std::env::temp_dir().join(format!("sk-pack-file-{}", std::process::id()));
        std::fs::write(&file, b"not a directory").unwrap();
        // Refused before NVRTC is looked for: the same answer with or without it.
        match precompile_kernels(&file.join("pack"), (9, 0)) {
            Err(Error::Invalid { rule, .. }) => assert!(rule.contains("cannot be made"), "{rule}"),
            other => panic!("{other:?}"),
        }
        let _ = std::fs::remove_file(&file);
    }

    /// Every kernel of the set compiles for Hopper without a GPU, and the pack holds each
    /// one under the key a run on an H100 looks for, as a whole ELF image.
    #[test]
    fn a_pack_holds_every_common_kernel_for_hopper() {
        if !crate::driver::nvrtc_present() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("sk-pack-90-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let done = precompile_kernels(&dir, (9, 0)).unwrap();
        assert_eq!(done.failed, Vec::<String>::new());
        let kernels = crate::copy::common_kernels().unwrap();
        assert_eq!(done.kernels, kernels.len());
        for (name, source) in &kernels {
            let cubin = crate::nvrtc::packed_cubin(&dir, (9, 0), name, source);
            assert!(
                cubin.is_some_and(|c| crate::cubin_image::fits(&c)),
                "{name} is not in the pack"
            );
        }
        // Another architecture's key finds nothing.
        let (name, source) = &kernels[0];
        assert!(crate::nvrtc::packed_cubin(&dir, (8, 0), name, source).is_none());
        eprintln!("{} kernels, {} bytes", done.kernels, done.bytes);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
