//! Finding NVRTC, which compiles the copy kernels at run time.
//!
//! First on the loader path, under the names cudarc tries (`libnvrtc.so.13`, ...). When
//! none loads (a machine with only the driver and pip packages: PyTorch, cupy or
//! `stridekit[cu13]` install NVRTC as the `nvidia-cuda-nvrtc` wheel, whose folder is not
//! on the loader path), in these folders, in order:
//!
//! 1. `$STRIDEKIT_NVRTC_PATH` (the library itself, or its folder);
//! 2. folders registered with [`add_nvrtc_search_dir`] (the Python package registers the
//!    wheel folders of every `sys.path` entry when it is imported);
//! 3. `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64`, `/usr/local/cuda/lib64`;
//! 4. the wheel folders (`nvidia/cu13/lib`, `nvidia/cuda_nvrtc/lib`) of the site-packages
//!    of `$VIRTUAL_ENV` and `$CONDA_PREFIX`.
//!
//! The first `libnvrtc.so.13` or `libnvrtc.so.12` found is loaded once and kept, with
//! the `libnvrtc-builtins` libraries beside it (which NVRTC opens by name); cudarc and
//! NVRTC then find them by their names, as the libraries are already in the process. When none is
//! found, the error lists every folder looked in.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Library file names, newest first.
const NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// Folders a wheel keeps NVRTC in, below a site-packages folder.
const WHEEL_DIRS: [&str; 2] = ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"];

static EXTRA: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Adds a folder to look for NVRTC in when it is not on the loader path (before NVRTC
/// is first needed; later calls have no effect once it was found or looked for).
///
/// ```
/// stridekit::add_nvrtc_search_dir("/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib");
/// ```
pub fn add_nvrtc_search_dir(dir: impl AsRef<Path>) {
    if let Ok(mut v) = EXTRA.lock() {
        v.push(dir.as_ref().to_path_buf());
    }
}

/// The wheel folders below a site-packages folder.
pub fn wheel_dirs(site_packages: &Path) -> Vec<PathBuf> {
    WHEEL_DIRS.iter().map(|d| site_packages.join(d)).collect()
}

fn env_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os("STRIDEKIT_NVRTC_PATH") {
        out.push(PathBuf::from(p));
    }
    if let Ok(v) = EXTRA.lock() {
        out.extend(v.iter().cloned());
    }
    for var in ["CUDA_PATH", "CUDA_HOME"] {
        if let Some(p) = std::env::var_os(var) {
            out.push(PathBuf::from(p).join("lib64"));
        }
    }
    out.push(PathBuf::from("/usr/local/cuda/lib64"));
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = std::env::var_os(var) {
            let lib = PathBuf::from(prefix).join("lib");
            if let Ok(entries) = std::fs::read_dir(&lib) {
                for e in entries.flatten() {
                    let name = e.file_name();
                    if name.to_string_lossy().starts_with("python3") {
                        out.extend(wheel_dirs(&e.path().join("site-packages")));
                    }
                }
            }
        }
    }
    out
}

/// The `libnvrtc-builtins` libraries in `dir`.
fn builtins(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    v.sort();
    v
}

/// dlopens `path` and keeps it loaded for the life of the process.
fn load_forever(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path; the handle is never closed, so the library (whose
    // initialisers only set up NVRTC's own state) stays mapped while cudarc uses it.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    !h.is_null()
}

/// Ok when NVRTC is loadable (found on the loader path or loaded from a folder above);
/// else the folders looked in.
pub(crate) fn locate() -> Result<(), String> {
    static STATE: OnceLock<Result<(), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            // SAFETY: only tries to dlopen the NVRTC library; no NVRTC function is called.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok(());
            }
            search(&env_dirs())
        })
        .clone()
}

/// Loads the first NVRTC library found in `dirs` (each a folder, or the library itself);
/// Err names every folder looked in.
fn search(dirs: &[PathBuf]) -> Result<(), String> {
    for d in dirs {
        let files: Vec<PathBuf> = if d.is_file() {
            vec![d.clone()]
        } else {
            NAMES.iter().map(|n| d.join(n)).collect()
        };
        for f in files {
            if !f.is_file() {
                continue;
            }
            // NVRTC opens its builtins library by name when it compiles: load the ones
            // beside it first, so that the name finds them.
            if let Some(dir) = f.parent() {
                for b in builtins(dir) {
                    load_forever(&b);
                }
            }
            // SAFETY: only tries to dlopen the NVRTC library just loaded by its path; no
            // NVRTC function is called.
            if load_forever(&f) && unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok(());
            }
        }
    }
    Err(format!(
        "NVRTC (libnvrtc.so.13 or .12) is not on the loader path and was not found in {}; install it (`pip install nvidia-cuda-nvrtc`, or `stridekit[cu13]`) or set STRIDEKIT_NVRTC_PATH",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_that_finds_nothing_loadable_names_every_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let empty = root.join("empty");
        let bogus = root.join("bogus");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::create_dir_all(&bogus).unwrap();
        // A file by the right name that is no library: dlopen refuses it, the search goes on.
        std::fs::write(bogus.join("libnvrtc.so.13"), b"not a library").unwrap();
        let missing = root.join("missing");
        let e =
            search(&[empty.clone(), bogus.join("libnvrtc.so.13"), missing.clone()]).unwrap_err();
        for d in [&empty, &bogus.join("libnvrtc.so.13"), &missing] {
            assert!(
                e.contains(&d.display().to_string()),
                "{d:?} not named in: {e}"
            );
        }
        assert!(e.contains("STRIDEKIT_NVRTC_PATH"), "{e}");
    }

    #[test]
    fn wheel_dirs_sit_below_site_packages() {
        let sp = Path::new("/venv/lib/python3.12/site-packages");
        assert_eq!(
            wheel_dirs(sp),
            [sp.join("nvidia/cu13/lib"), sp.join("nvidia/cuda_nvrtc/lib")]
        );
    }
}
