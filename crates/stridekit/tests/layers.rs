//! The module picture has no circle: every module of the CUDA crate imports only from
//! the modules below it, in this order (lowest first). A new module takes its place in
//! `LAYERS`, and an import that runs up fails here.

use std::collections::BTreeSet;
use std::path::Path;

/// Lowest first: each module may use the ones before it.
const LAYERS: &[&str] = &[
    "error",        // the error type
    "driver",       // the only caller of cudarc::driver::sys
    "runtime",      // per-device state: context, library stream, kernels, peers, staging
    "device",       // the public device handle
    "kernel_cache", // compiled kernels on disk
    "nvrtc",        // run-time compilation
    "dtype",        // element types
    "typestr",      // array-interface type strings
    "pointer",      // what the driver knows of an address
    "stream",       // the one stream rule
    "peer",         // peer access
    "memory",       // buffers, resources, regions, pending work
    "copy",         // the copy engine, over operands
    "dlpack",       // DLPack structs, checked
    "view",         // views and their entry points
    "tma",          // tensor maps of views
    "managed",      // managed memory
    "graph",        // copies captured into CUDA graphs
    "lib",
];

fn rank(m: &str) -> Option<usize> {
    LAYERS.iter().position(|&l| l == m)
}

fn visit(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            visit(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
}

#[test]
fn imports_run_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    visit(&src, &mut files);
    let mut seen = BTreeSet::new();
    let mut up = Vec::new();
    for (path, text) in &files {
        let rel = path
            .strip_prefix(&src.display().to_string())
            .unwrap()
            .trim_start_matches('/');
        if rel.ends_with("tests.rs") {
            continue; // unit tests may reach anywhere
        }
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let here =
            rank(&top).unwrap_or_else(|| panic!("module {top} ({rel}) has no place in LAYERS"));
        seen.insert(top.clone());
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if let Some(there) = rank(&name) {
                if there > here {
                    up.push(format!("{rel}: {top} uses crate::{name}"));
                }
            }
        }
    }
    assert!(
        up.is_empty(),
        "imports that run up the layers:\n{}",
        up.join("\n")
    );
    assert!(seen.len() > 10, "the source tree was not found: {seen:?}");
}
