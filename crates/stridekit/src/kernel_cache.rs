//! Compiled kernels on disk, so that a new process skips NVRTC (and never loads it) for
//! kernels an earlier one compiled.
//!
//! # What is stored
//! A cached kernel is a compiled image keyed by its source and the target architecture:
//! a CUBIN for a real architecture (`sm_90`: the GPU's own code, which the driver loads
//! without compiling it again, whatever the driver's version), PTX for a virtual one
//! (`compute_90`, where the driver would not load NVRTC's CUBIN; keyed by the driver's
//! version too, as the driver compiles it). A cache directory therefore serves every
//! machine with the same GPU architecture: it can be copied into a container image. The file is named by
//! the SHA-256 of that key and records, before the image, the key's SHA-256 and the
//! image's own SHA-256; both are checked on every load. The NVRTC version is not part of
//! the key on purpose: reading it means loading NVRTC, which is the cost the cache
//! avoids; an image that fails to load is compiled again.
//!
//! # Threat model
//! Code from the cache runs inside copies, with access to the caller's memory, so the
//! cache is only as trusted as its directory. stridekit uses a directory only when it
//! belongs to the current user and neither its group nor others may write it (created
//! with mode 0700); any other directory is skipped with a warning on standard error and
//! kernels are compiled in memory. Within a trusted directory, a file that is not the
//! user's, is writable by others, is unreadable, truncated, larger than 64 MiB, or whose
//! hashes do not match is ignored (as is PTX that is not UTF-8 or holds a NUL byte, and
//! a CUBIN that is not an ELF image: `nvrtc.rs` checks those) and the kernel is
//! compiled again (and stored anew). New entries are written to a unique temporary file
//! created without following links (the `tempfile` crate, `O_EXCL`) and renamed into
//! place, so two threads or processes compiling the same kernel never share a file and
//! a planted link is never written through. The hashes detect corruption, not an
//! attacker: one who can write the user's own cache directory can already run code as
//! the user.
//!
//! The directory is `$STRIDEKIT_KERNEL_CACHE`, else `$XDG_CACHE_HOME/stridekit/kernels`,
//! else `$HOME/.cache/stridekit/kernels`; `STRIDEKIT_KERNEL_CACHE=off` turns caching off.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &str = "stridekit kernel cache 3";
/// Larger files are not cached kernels.
const MAX_BYTES: u64 = 64 << 20;

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

/// Why a path cannot be trusted, if it cannot: owned by another user, or writable by
/// its group or others.
#[cfg(unix)]
fn distrust(meta: &std::fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Some(format!(
            "it belongs to user {} (this process runs as {me})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "its mode {:o} lets its group or others write it",
            meta.mode() & 0o777
        ));
    }
    None
}

#[cfg(not(unix))]
fn distrust(_meta: &std::fs::Metadata) -> Option<String> {
    None
}

/// The cache directory if it can be trusted (made, with mode 0700, when missing); a
/// directory that cannot be trusted is skipped with a warning, once per process.
fn trusted_dir() -> Option<PathBuf> {
    let d = dir()?;
    if !d.exists() {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&d).ok()?;
    }
    let meta = std::fs::symlink_metadata(&d).ok()?;
    let why = if !meta.is_dir() {
        Some("it is not a directory (a link is not followed)".to_string())
    } else {
        distrust(&meta)
    };
    match why {
        None => Some(d),
        Some(why) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!(
                    "stridekit: not using the kernel cache {}: {why}; kernels are compiled in memory",
                    d.display()
                )
            });
            None
        }
    }
}

/// What a cached kernel is keyed by.
pub(crate) struct Key<'a> {
    pub name: &'a str,
    pub source: &'a str,
    pub arch: &'a str,
    /// The driver's version (1000 major + 10 minor) for PTX; 0 for a CUBIN.
    pub driver: i32,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

impl Key<'_> {
    /// The SHA-256 of everything the entry depends on.
    fn digest(&self) -> String {
        let mut h = Sha256::new();
        for part in [MAGIC, self.arch, &self.driver.to_string(), self.source] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        hex(&h.finalize())
    }

    fn file_name(&self) -> String {
        let safe: String = self
            .name
            .chars()
            .take(64)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        format!("{safe}-{}.kernel", &self.digest()[..32])
    }

    fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.file_name())
    }
}

/// The entry's bytes: a text header (magic, key hash, image hash), then the image.
fn entry(key: &Key<'_>, image: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{MAGIC}\nkey-sha256={}\nimage-sha256={}\n",
        key.digest(),
        sha256(image)
    )
    .into_bytes();
    out.extend_from_slice(image);
    out
}

/// The first line of `bytes` after `prefix`, and the bytes after that line.
fn line<'a>(bytes: &'a [u8], prefix: &str) -> Option<(&'a [u8], &'a [u8])> {
    let rest = bytes.strip_prefix(prefix.as_bytes())?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    Some((&rest[..end], &rest[end + 1..]))
}

/// The image of an entry's bytes, if every check passes.
fn parse(key: &Key<'_>, bytes: &[u8]) -> Option<Vec<u8>> {
    let (magic, rest) = line(bytes, "")?;
    let (key_hash, rest) = line(rest, "key-sha256=")?;
    let (image_hash, image) = line(rest, "image-sha256=")?;
    let ok = magic == MAGIC.as_bytes()
        && key_hash == key.digest().as_bytes()
        && image_hash == sha256(image).as_bytes()
        && !image.is_empty();
    ok.then(|| image.to_vec())
}

/// The cached image for `key`, if a trusted file holds exactly this key and its hashes
/// match.
pub(crate) fn load(key: &Key<'_>) -> Option<Vec<u8>> {
    load_from(&trusted_dir()?, key)
}

fn load_from(dir: &Path, key: &Key<'_>) -> Option<Vec<u8>> {
    let path = key.path_in(dir);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES || distrust(&meta).is_some() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .ok()?
        .take(MAX_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    parse(key, &bytes)
}

/// Stores `image` for `key` through a unique temporary file; failures leave no file and
/// are otherwise ignored (the kernel is compiled again next time).
pub(crate) fn store(key: &Key<'_>, image: &[u8]) {
    if let Some(d) = trusted_dir() {
        let _ = store_in(&d, key, image);
    }
}

fn store_in(dir: &Path, key: &Key<'_>, image: &[u8]) -> std::io::Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".entry-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(&entry(key, image))?;
    tmp.as_file().sync_data()?;
    tmp.persist(key.path_in(dir))
        .map(|_| ())
        .map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key<'static> {
        Key {
            name: "k/1",
            source: "extern \"C\" __global__ void k() {}",
            arch: "compute_90",
            driver: 13000,
        }
    }

    fn fresh_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sk-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let mut b = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&d).unwrap();
        d
    }

    #[test]
    fn round_trip_and_every_mismatch() {
        let d = fresh_dir("rt");
        let k = key();
        assert_eq!(load_from(&d, &k), None);
        store_in(&d, &k, b".version 8.8\n.target sm_90\n").unwrap();
        assert_eq!(
            load_from(&d, &k).as_deref(),
            Some(&b".version 8.8\n.target sm_90\n"[..])
        );
        // A binary image (a CUBIN holds NUL bytes and newlines) round-trips unchanged.
        let cubin = b"\x7fELF\x02\x01\0\0\n\n\xff\0";
        store_in(&d, &k, cubin).unwrap();
        assert_eq!(load_from(&d, &k).as_deref(), Some(&cubin[..]));
        // Another architecture, driver or source is another entry.
        for other in [
            Key {
                arch: "compute_80",
                ..key()
            },
            Key {
                driver: 13010,
                ..key()
            },
            Key {
                source: "other",
                ..key()
            },
        ] {
            assert_eq!(load_from(&d, &other), None);
        }
        let path = k.path_in(&d);
        // A planted image without the right hash, another key's entry, the previous
        // format's, garbage, truncation, an empty image: ignored.
        let planted = format!(
            "{MAGIC}\nkey-sha256={}\nimage-sha256={}\nevil ptx",
            k.digest(),
            sha256(b"good ptx")
        )
        .into_bytes();
        let other_key = entry(
            &Key {
                source: "other",
                ..key()
            },
            b"ptx",
        );
        let old_format = format!(
            "stridekit kernel cache 2\nkey-sha256={}\nptx-sha256={}\nptx",
            k.digest(),
            sha256(b"ptx")
        )
        .into_bytes();
        let truncated = entry(&k, b"a long enough kernel");
        let empty = entry(&k, b"");
        for bytes in [
            &planted[..],
            &other_key[..],
            &old_format[..],
            b"garbage",
            &truncated[..truncated.len() - 3],
            &empty[..],
        ] {
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(load_from(&d, &k), None, "{bytes:?}");
        }
        // Stored again after a bad entry: good again.
        store_in(&d, &k, b"fresh").unwrap();
        assert_eq!(load_from(&d, &k).as_deref(), Some(&b"fresh"[..]));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn untrusted_directories_and_files_are_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let d = fresh_dir("perm");
        let k = key();
        store_in(&d, &k, b"ptx").unwrap();
        // A file others may write is not trusted.
        let path = k.path_in(&d);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(load_from(&d, &k), None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(load_from(&d, &k).as_deref(), Some(&b"ptx"[..]));
        // A directory others may write is not trusted.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let meta = std::fs::symlink_metadata(&d).unwrap();
        assert!(distrust(&meta)
            .unwrap()
            .contains("lets its group or others write it"));
        // A link planted where an entry goes is replaced, never written through.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        let victim = d.join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        assert_eq!(load_from(&d, &k), None, "a link is not a cached kernel");
        store_in(&d, &k, b"ptx2").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(load_from(&d, &k).as_deref(), Some(&b"ptx2"[..]));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn threads_storing_one_kernel_never_share_a_file() {
        let d = fresh_dir("threads");
        std::thread::scope(|s| {
            for i in 0..8 {
                let d = &d;
                s.spawn(move || {
                    for _ in 0..20 {
                        store_in(d, &key(), format!("ptx from thread {i}").as_bytes()).unwrap();
                        let got = load_from(d, &key()).unwrap();
                        assert!(got.starts_with(b"ptx from thread "), "{got:?}");
                    }
                });
            }
        });
        let leftovers = std::fs::read_dir(&d).unwrap().count();
        assert_eq!(leftovers, 1, "temporary files were left behind");
        let _ = std::fs::remove_dir_all(&d);
    }
}
