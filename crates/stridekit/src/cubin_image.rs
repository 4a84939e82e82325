//! A CUBIN checked before the driver reads it. `cuModuleLoadData` takes an ELF image by
//! its address alone and trusts the sizes inside it, so an image whose headers point past
//! its end (a truncated file, a bad write) would have the driver read past the buffer;
//! every table and section the headers name is checked to lie inside the bytes held.

/// Reads `N` bytes at `at`, if they lie inside `b`.
fn bytes<const N: usize>(b: &[u8], at: u64) -> Option<[u8; N]> {
    let start = usize::try_from(at).ok()?;
    b.get(start..start.checked_add(N)?)?.try_into().ok()
}

fn u16_at(b: &[u8], at: u64) -> Option<u64> {
    bytes::<2>(b, at).map(|x| u64::from(u16::from_le_bytes(x)))
}

fn u32_at(b: &[u8], at: u64) -> Option<u32> {
    bytes::<4>(b, at).map(u32::from_le_bytes)
}

fn u64_at(b: &[u8], at: u64) -> Option<u64> {
    bytes::<8>(b, at).map(u64::from_le_bytes)
}

/// Whether `[off, off + count * size)` lies inside `len` bytes.
fn inside(off: u64, count: u64, size: u64, len: u64) -> bool {
    count
        .checked_mul(size)
        .and_then(|n| n.checked_add(off))
        .is_some_and(|end| end <= len)
}

/// Whether `image` is a 64-bit little-endian ELF image (what NVRTC makes for every
/// architecture) whose program headers, section headers and sections all lie inside it.
pub(crate) fn fits(image: &[u8]) -> bool {
    check(image).is_some()
}

fn check(b: &[u8]) -> Option<()> {
    const ELFCLASS64: u8 = 2;
    const LITTLE_ENDIAN: u8 = 1;
    const SHT_NOBITS: u32 = 8;
    let len = b.len() as u64;
    if !b.starts_with(b"\x7fELF")
        || b.get(4) != Some(&ELFCLASS64)
        || b.get(5) != Some(&LITTLE_ENDIAN)
    {
        return None;
    }
    let (phoff, shoff) = (u64_at(b, 0x20)?, u64_at(b, 0x28)?);
    let (phentsize, phnum) = (u16_at(b, 0x36)?, u16_at(b, 0x38)?);
    let (shentsize, shnum) = (u16_at(b, 0x3a)?, u16_at(b, 0x3c)?);
    if len < 64 || !inside(phoff, phnum, phentsize, len) || !inside(shoff, shnum, shentsize, len) {
        return None;
    }
    if shnum > 0 && shentsize < 0x28 {
        return None;
    }
    for i in 0..shnum {
        let h = shoff + i * shentsize;
        if u32_at(b, h + 4)? != SHT_NOBITS
            && !inside(u64_at(b, h + 0x18)?, 1, u64_at(b, h + 0x20)?, len)
        {
            return None;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::fits;

    /// A minimal image: the 64-byte header, then `shnum` section headers of 64 bytes at
    /// offset 64, each section `sec_size` bytes at `sec_off`.
    fn image(shnum: u16, sec_off: u64, sec_size: u64, extra: usize) -> Vec<u8> {
        let mut b = vec![0u8; 64 + 64 * shnum as usize + extra];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[0x28..0x30].copy_from_slice(&64u64.to_le_bytes());
        b[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        b[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
        for i in 0..shnum as usize {
            let h = 64 + 64 * i;
            b[h + 4..h + 8].copy_from_slice(&1u32.to_le_bytes());
            b[h + 0x18..h + 0x20].copy_from_slice(&sec_off.to_le_bytes());
            b[h + 0x20..h + 0x28].copy_from_slice(&sec_size.to_le_bytes());
        }
        b
    }

    #[test]
    fn tables_and_sections_must_lie_inside_the_image() {
        // Two sections of 16 bytes right after the headers: fits.
        assert!(fits(&image(2, 192, 16, 16)));
        // A section past the end, a section table past the end (truncated), a size that
        // overflows, a 32-bit or big-endian image, not ELF: refused.
        assert!(!fits(&image(2, 192, 17, 16)));
        let whole = image(2, 192, 16, 16);
        assert!(!fits(&whole[..150]));
        assert!(!fits(&image(1, 1, u64::MAX, 16)));
        let mut b = image(0, 0, 0, 0);
        b[4] = 1;
        assert!(!fits(&b));
        let mut b = image(0, 0, 0, 0);
        b[5] = 2;
        assert!(!fits(&b));
        assert!(!fits(b"\x7fEL"));
        assert!(!fits(b".version 8.8\n.target sm_90\n"));
        // A section table whose count reaches past the end.
        let mut b = image(1, 128, 0, 0);
        b[0x3c..0x3e].copy_from_slice(&1000u16.to_le_bytes());
        assert!(!fits(&b));
    }

    /// NVRTC's own CUBIN passes, and any truncation of it is refused (needs NVRTC, no GPU).
    #[test]
    fn nvrtc_cubins_fit_and_truncated_ones_do_not() {
        if !crate::driver::nvrtc_present() {
            return;
        }
        let src = r#"extern "C" __global__ void f(int* p) { p[threadIdx.x] = 7; }"#;
        let cubin = crate::driver::nvrtc_cubin::compile_cubin(src, "f.cu", "sm_90").unwrap();
        assert!(fits(&cubin));
        for cut in [cubin.len() - 1, cubin.len() / 2, 100, 63] {
            assert!(!fits(&cubin[..cut]), "cut at {cut} of {}", cubin.len());
        }
    }
}
