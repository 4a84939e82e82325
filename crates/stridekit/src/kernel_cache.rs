//! Compiled kernels on disk, so that a new process skips NVRTC (and never loads it) for
//! kernels an earlier one compiled.
//!
//! A cached kernel is PTX keyed by its source, the target architecture and the CUDA
//! driver's version: the file records all three and is used only when all three match
//! (a hash names the file, but the stored source is compared in full). A missing,
//! corrupt or mismatched file means compiling again; a cache directory that cannot be
//! written means compiling every time, silently. The NVRTC version is not part of the
//! key on purpose: reading it means loading NVRTC, which is the cost the cache avoids;
//! PTX from any NVRTC loads on every driver that accepts its ISA, and a cached file that
//! fails to load is compiled again.
//!
//! The directory is `$STRIDEKIT_KERNEL_CACHE`, else `$XDG_CACHE_HOME/stridekit/kernels`,
//! else `$HOME/.cache/stridekit/kernels`; `STRIDEKIT_KERNEL_CACHE=off` turns caching off.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;

const MAGIC: &str = "stridekit kernel cache 1";

/// The cache directory, or None when caching is off or no place is known.
fn dir() -> Option<PathBuf> {
    match std::env::var_os("STRIDEKIT_KERNEL_CACHE") {
        Some(v) if v == "off" || v == "0" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("stridekit").join("kernels")),
    }
}

/// What a cached kernel is keyed by.
pub(crate) struct Key<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub arch: &'a str,
    pub driver: i32,
}

impl Key<'_> {
    fn header(&self) -> String {
        format!(
            "{MAGIC}\narch={}\ndriver={}\nsource-bytes={}\n",
            self.arch,
            self.driver,
            self.source.len()
        )
    }

    fn path(&self) -> Option<PathBuf> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.source, self.arch, self.driver).hash(&mut h);
        let safe: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        dir().map(|d| d.join(format!("{safe}-{:016x}.ptx", h.finish())))
    }
}

/// The cached PTX for `key`, if a file holds exactly this key.
pub(crate) fn load(key: &Key<'_>) -> Option<String> {
    let text = std::fs::read_to_string(key.path()?).ok()?;
    let rest = text.strip_prefix(&key.header())?;
    let ptx = rest.strip_prefix(key.source)?;
    (!ptx.is_empty()).then(|| ptx.to_owned())
}

/// Stores `ptx` for `key`; failures leave no partial file and are otherwise ignored.
pub(crate) fn store(key: &Key<'_>, ptx: &str) {
    let Some(path) = key.path() else { return };
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let body = format!("{}{}{ptx}", key.header(), key.source);
    if std::fs::write(&tmp, body).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test touches the environment, so that no other test races with it.
    #[test]
    fn round_trip_mismatch_corruption_and_off() {
        let d = std::env::temp_dir().join(format!("sk-cache-test-{}", std::process::id()));
        std::env::set_var("STRIDEKIT_KERNEL_CACHE", &d);
        let key = Key {
            name: "k/1",
            source: "extern \"C\" __global__ void k() {}",
            arch: "compute_90",
            driver: 13000,
        };
        assert_eq!(load(&key), None);
        store(&key, ".version 8.8\n.target sm_90\n");
        assert_eq!(load(&key).as_deref(), Some(".version 8.8\n.target sm_90\n"));
        // Another architecture, driver or source is another entry.
        let other = Key {
            arch: "compute_80",
            ..key
        };
        assert_eq!(load(&other), None);
        let newer = Key {
            driver: 13010,
            ..key
        };
        assert_eq!(load(&newer), None);
        // A corrupt file is not used.
        let path = key.path().unwrap();
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(load(&key), None);
        // A file whose stored source differs (a hash collision) is not used.
        let body = format!("{}{}{}", key.header(), "x".repeat(key.source.len()), "ptx");
        std::fs::write(&path, body).unwrap();
        assert_eq!(load(&key), None);
        // Off: nothing is read or written.
        std::env::set_var("STRIDEKIT_KERNEL_CACHE", "off");
        store(&key, "ptx");
        assert_eq!(load(&key), None);
        // An unwritable place: storing fails quietly.
        std::env::set_var(
            "STRIDEKIT_KERNEL_CACHE",
            "/proc/stridekit-cannot-write-here",
        );
        store(&key, "ptx");
        assert_eq!(load(&key), None);
        std::env::remove_var("STRIDEKIT_KERNEL_CACHE");
        let _ = std::fs::remove_dir_all(&d);
    }
}
