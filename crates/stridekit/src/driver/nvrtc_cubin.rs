//! NVRTC compiling straight to a GPU's own code (a CUBIN), not PTX: the driver then loads
//! the module without compiling it again, and the disk cache can keep the result.

use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};

/// A program while it lives: destroyed on every path out.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: self.0 came from `create_program` and is destroyed once, here.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

/// Compiles CUDA C++ `source` (file name `name`) for the real architecture `sm` (such as
/// `sm_90`) and returns the CUBIN. `Err` holds NVRTC's status and log. NVRTC must already
/// be loaded (`nvrtc_lib::locate`).
pub(crate) fn compile_cubin(source: &str, name: &str, sm: &str) -> Result<Vec<u8>, String> {
    let src = CString::new(source).map_err(|_| "the source holds a NUL byte".to_string())?;
    let file = CString::new(name).map_err(|_| "the name holds a NUL byte".to_string())?;
    // cudarc turns each option into a C string and panics on a NUL byte.
    if sm.contains('\0') {
        return Err("the architecture holds a NUL byte".to_string());
    }
    let prog =
        Program(result::create_program(&src, Some(&file)).map_err(|e| format!("create: {e:?}"))?);
    let opts = [format!("--gpu-architecture={sm}")];
    // SAFETY: prog.0 is a live program (destroyed only when `prog` drops, after the
    // last use below); `src` and `file` outlive it.
    if let Err(e) = unsafe { result::compile_program(prog.0, &opts) } {
        // SAFETY: as above.
        let log = unsafe { result::get_program_log(prog.0) }
            .ok()
            .map(|raw| {
                let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).collect();
                CStr::from_bytes_until_nul(&bytes)
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        return Err(format!("{e:?} ({opts:?}): {log}"));
    }
    let mut size = 0usize;
    // SAFETY: as above; `size` is a valid place for the size.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| format!("nvrtcGetCUBINSize: {e:?}"))?;
    if size == 0 {
        return Err(format!("NVRTC made no CUBIN for {sm}"));
    }
    let mut cubin = Vec::new();
    cubin
        .try_reserve_exact(size)
        .map_err(|_| format!("no host memory for a CUBIN of {size} bytes"))?;
    cubin.resize(size, 0u8);
    // SAFETY: as above; `cubin` holds the `size` bytes NVRTC writes.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| format!("nvrtcGetCUBIN: {e:?}"))?;
    Ok(cubin)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With NVRTC present, a kernel compiles to an ELF image and a broken one reports
    /// NVRTC's log (needs no GPU).
    #[test]
    fn cubins_are_elf_images_and_errors_carry_the_log() {
        if !crate::driver::nvrtc_present() {
            return;
        }
        let ok = r#"extern "C" __global__ void f(int* p) { p[threadIdx.x] = 7; }"#;
        let cubin = compile_cubin(ok, "f.cu", "sm_90").unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF");
        let err = compile_cubin("this is not C++", "bad.cu", "sm_90").unwrap_err();
        assert!(err.contains("bad.cu"), "{err}");
        assert!(compile_cubin("a\0b", "nul.cu", "sm_90").is_err());
        assert!(compile_cubin(ok, "f.cu", "sm_\090").is_err());
    }
}
