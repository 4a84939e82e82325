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
//!
//! # Kernel packs
//! A pack is a directory of entries in the same format, written ahead of time
//! ([`crate::precompile_kernels`], which needs NVRTC but no GPU) and only read: a kernel
//! missing from the cache is looked for in each pack before NVRTC compiles it (and a hit
//! is not copied into the cache). Packs are the directories in `$STRIDEKIT_KERNEL_PACKS`
//! (a path list, like `PATH`) and those given to [`crate::add_kernel_pack`]. A pack may
//! be installed by the administrator, so its directory and files may belong to the user
//! or to root; neither may be writable by group or others, else the pack is skipped with
//! a warning. Every entry's hashes are checked as the cache's are.

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
fn distrust(meta: &std::fs::Metadata) -> Option<String> {
    distrust_owned(meta, false)
}

/// Why a path of a kernel pack cannot be trusted, if it cannot: as [`distrust`], but root
/// may own it too (a pack installed by the administrator).
fn distrust_pack(meta: &std::fs::Metadata) -> Option<String> {
    distrust_owned(meta, true)
}

#[cfg(unix)]
fn distrust_owned(meta: &std::fs::Metadata, root_too: bool) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && !(root_too && meta.uid() == 0) {
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
fn distrust_owned(_meta: &std::fs::Metadata, _root_too: bool) -> Option<String> {
    None
}

/// The cache directory if it can be trusted (made, with mode 0700, when missing); a
/// directory that cannot be trusted is skipped with a warning, once per process.
fn trusted_dir() -> Option<PathBuf> {
    let d = dir()?;
    if !d.exists() {
        create_dir(&d, 0o700).ok()?;
    }
    match dir_distrust(&d, distrust) {
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

/// Why the directory `d` (the cache or a pack) cannot be trusted, if it cannot: it cannot
/// be read, is not a directory (a link is not followed), or `distrust` says why.
fn dir_distrust(d: &Path, distrust: fn(&std::fs::Metadata) -> Option<String>) -> Option<String> {
    match std::fs::symlink_metadata(d) {
        Err(e) => Some(format!("it cannot be read ({e})")),
        Ok(m) if !m.is_dir() => Some("it is not a directory (a link is not followed)".into()),
        Ok(m) => distrust(&m),
    }
}

/// Makes `d` and its parents, with mode `mode` (on Unix) where they are new.
fn create_dir(d: &Path, mode: u32) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, mode);
    #[cfg(not(unix))]
    let _ = mode;
    b.create(d)
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

/// The cached image for `key`, if a trusted file of the cache or of a kernel pack holds
/// exactly this key and its hashes match.
pub(crate) fn load(key: &Key<'_>) -> Option<Vec<u8>> {
    load_in(trusted_dir().as_deref(), key)
}

/// The image for `key` from the cache `cache` (if any), else from the first pack that
/// holds it.
fn load_in(cache: Option<&Path>, key: &Key<'_>) -> Option<Vec<u8>> {
    cache
        .and_then(|d| load_from(d, key))
        .or_else(|| trusted_packs().iter().find_map(|d| load_pack(d, key)))
}

fn load_from(dir: &Path, key: &Key<'_>) -> Option<Vec<u8>> {
    load_checked(dir, key, distrust)
}

pub(crate) fn load_pack(dir: &Path, key: &Key<'_>) -> Option<Vec<u8>> {
    load_checked(dir, key, distrust_pack)
}

fn load_checked(
    dir: &Path,
    key: &Key<'_>,
    distrust: fn(&std::fs::Metadata) -> Option<String>,
) -> Option<Vec<u8>> {
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

/// Packs added in this process ([`add_pack`]), after those of `$STRIDEKIT_KERNEL_PACKS`.
static ADDED_PACKS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Adds `dir` to the kernel packs searched after the cache.
pub(crate) fn add_pack(dir: PathBuf) {
    // A poisoned list is still a list: a panic elsewhere does not lose the packs.
    let mut packs = ADDED_PACKS.lock().unwrap_or_else(|e| e.into_inner());
    if !packs.contains(&dir) {
        packs.push(dir);
    }
}

/// The kernel packs that can be trusted, in search order; each one that cannot is
/// skipped with a warning, once per directory and process.
fn trusted_packs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("STRIDEKIT_KERNEL_PACKS")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    dirs.extend(
        ADDED_PACKS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned(),
    );
    dirs.retain(|d| match dir_distrust(d, distrust_pack) {
        None => true,
        Some(why) => {
            static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
            let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
            if !warned.contains(d) {
                eprintln!(
                    "stridekit: not using the kernel pack {}: {why}",
                    d.display()
                );
                warned.push(d.clone());
            }
            false
        }
    });
    dirs
}

/// Makes `dir` (and its parents) for a kernel pack, with mode 0755 where it is new: others
/// may read a pack, no one else may write it.
pub(crate) fn create_pack_dir(dir: &Path) -> std::io::Result<()> {
    create_dir(dir, 0o755)
}

fn store_in(dir: &Path, key: &Key<'_>, image: &[u8]) -> std::io::Result<()> {
    store_with_mode(dir, key, image, 0o600)
}

/// Writes the entry of `key` and `image` into the pack `dir`, readable by all (mode 0644).
pub(crate) fn store_in_pack(dir: &Path, key: &Key<'_>, image: &[u8]) -> std::io::Result<()> {
    store_with_mode(dir, key, image, 0o644)
}

/// Writes the entry through a unique temporary file of mode `mode` (on Unix), renamed
/// into place.
fn store_with_mode(dir: &Path, key: &Key<'_>, image: &[u8], mode: u32) -> std::io::Result<()> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".entry-").suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(mode));
    #[cfg(not(unix))]
    let _ = mode;
    let mut tmp = builder.tempfile_in(dir)?;
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

    /// A pack is searched after the cache: its entries are found, readable by all, with
    /// their hashes checked; a pack others may write, or a missing one, is skipped.
    #[cfg(unix)]
    #[test]
    fn packs_are_searched_after_the_cache_and_trusted_as_it_is() {
        use std::os::unix::fs::PermissionsExt;
        let pack = fresh_dir("pack");
        std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o755)).unwrap();
        let k = Key {
            name: "packed",
            arch: "sm_90",
            driver: 0,
            ..key()
        };
        assert_eq!(load_pack(&pack, &k), None);
        store_in_pack(&pack, &k, b"\x7fELF cubin").unwrap();
        let meta = std::fs::metadata(k.path_in(&pack)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o644);
        assert_eq!(load_pack(&pack, &k).as_deref(), Some(&b"\x7fELF cubin"[..]));
        // Another key (the driver's version in it, another source) misses.
        assert_eq!(load_pack(&pack, &Key { driver: 13000, ..k }), None);
        assert_eq!(load_pack(&pack, &Key { source: "x", ..k }), None);
        // Found through the search once added, after a cache that lacks it.
        let cache = fresh_dir("pack-cache");
        assert_eq!(dir_distrust(&pack, distrust_pack), None);
        assert!(dir_distrust(&pack.join("missing"), distrust_pack).is_some());
        assert_eq!(load_in(Some(&cache), &k), None);
        add_pack(pack.clone());
        assert_eq!(
            load_in(Some(&cache), &k).as_deref(),
            Some(&b"\x7fELF cubin"[..])
        );
        // The cache's own entry comes first.
        store_in(&cache, &k, b"cached").unwrap();
        assert_eq!(load_in(Some(&cache), &k).as_deref(), Some(&b"cached"[..]));
        // A pack its group may write is skipped.
        std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o775)).unwrap();
        assert!(dir_distrust(&pack, distrust_pack)
            .unwrap()
            .contains("lets its group or others write it"));
        assert_eq!(load_in(None, &k), None);
        std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o755)).unwrap();
        // An entry others may write, or whose image was changed, is not loaded.
        let path = k.path_in(&pack);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(load_pack(&pack, &k), None);
        let mut bytes = entry(&k, b"\x7fELF cubin");
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(load_pack(&pack, &k), None);
        let _ = std::fs::remove_dir_all(&pack);
        let _ = std::fs::remove_dir_all(&cache);
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
