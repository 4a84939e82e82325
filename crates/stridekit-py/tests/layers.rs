//! The Python front's module picture has no circle: every module imports only from the
//! modules below it, in this order (lowest first). A new module takes its place in
//! `LAYERS`, and an import that runs up fails here.

use std::path::Path;

/// Lowest first: each module may use the ones before it.
const LAYERS: &[&str] = &[
    "dtype",       // NumPy dtypes and typestrs
    "errors",      // Python exceptions of the crates' errors
    "stream",      // stream arguments
    "layout",      // StridedLayout
    "cview",       // the sk_view capsule for C and Cython
    "memory",      // Buffer and the memory resources
    "import",      // DLPack, CUDA Array Interface and array interface imports
    "nvrtc",       // where NVRTC may live in a Python environment
    "view_object", // the StridedMemoryView object: its fields, making and dropping it
    "exchange",    // the DLPack C exchange API of StridedMemoryView
    "tma",         // TensorMapDescriptor
    "view",        // StridedMemoryView's Python methods
    "lib",
];

#[test]
fn imports_run_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut up = Vec::new();
    let mut seen = Vec::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let here = LAYERS
            .iter()
            .position(|&l| l == name)
            .unwrap_or_else(|| panic!("module {name} has no place in LAYERS"));
        seen.push(name.clone());
        let text = std::fs::read_to_string(&p).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for (i, _) in code.match_indices("crate::") {
            let used: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if let Some(there) = LAYERS.iter().position(|&l| l == used) {
                if there > here {
                    up.push(format!("{name} uses crate::{used}"));
                }
            }
        }
    }
    assert!(up.is_empty(), "imports that run up the layers: {up:?}");
    for l in LAYERS {
        assert!(
            seen.iter().any(|s| s == l),
            "LAYERS names {l}, which is gone"
        );
    }
}
