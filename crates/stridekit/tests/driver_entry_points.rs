//! `docs/driver-entry-points.md` stays true: every driver entry point the crates call
//! directly is listed with the CUDA version that introduced it; every one newer than the
//! minimum (12.0) is looked up by name before use; and, given CUDA 12.0's `cuda.h`
//! (`STRIDEKIT_CUDA12_HEADER`, which CI takes from the `nvidia-cuda-runtime-cu12==12.0.*`
//! wheel), every entry marked 12.0 is declared there and no entry marked newer is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (entry point -> CUDA version, how it is called) from the table.
fn table() -> BTreeMap<String, (String, String)> {
    let text = std::fs::read_to_string(root().join("docs/driver-entry-points.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() >= 4 && cells[1].starts_with("cu") {
            out.insert(
                cells[1].to_string(),
                (cells[2].to_string(), cells[3].to_string()),
            );
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for c in ["stridekit", "stridekit-capi", "stridekit-py"] {
        rust_files(&root().join("crates").join(c).join("src"), &mut files);
    }
    files
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect()
}

fn idents(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices(prefix) {
        let name: String = text[i + prefix.len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.starts_with("cu") && name.len() > 2 {
            out.insert(name);
        }
    }
    out
}

fn newer(version: &str) -> bool {
    version != "12.0"
}

#[test]
fn every_direct_call_is_listed_and_every_newer_one_is_looked_up_first() {
    let t = table();
    assert!(t.len() > 40, "the table was not read: {} rows", t.len());
    let src = sources();
    let mut unlisted = BTreeSet::new();
    for (path, text) in &src {
        for name in idents(text, "sys::") {
            if name == "culib" {
                continue; // the library handle, not an entry point
            }
            if !t.contains_key(&name) {
                unlisted.insert(format!("{name} ({})", path.display()));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "driver entry points called but not in docs/driver-entry-points.md: {unlisted:?}"
    );
    let mut unchecked = Vec::new();
    for (name, (version, how)) in &t {
        if newer(version) && how.contains("directly") {
            let quoted = format!("\"{name}\"");
            let looked_up = src.iter().any(|(_, text)| {
                text.contains(&format!("has_symbol({quoted})"))
                    || text.contains(&format!(", {quoted})"))
                    || text.contains(&format!("&str = {quoted};"))
            });
            if !looked_up {
                unchecked.push(name.clone());
            }
        }
    }
    assert!(
        unchecked.is_empty(),
        "entry points newer than CUDA 12.0 called without a lookup by name first: {unchecked:?}"
    );
}

#[test]
fn the_table_matches_cuda_12_0() {
    let Some(header) = std::env::var_os("STRIDEKIT_CUDA12_HEADER") else {
        assert!(
            std::env::var_os("STRIDEKIT_REQUIRE_CUDA12_HEADER").is_none(),
            "STRIDEKIT_CUDA12_HEADER (CUDA 12.0's cuda.h) is required here"
        );
        eprintln!("STRIDEKIT_CUDA12_HEADER is not set: the table was not compared with CUDA 12.0");
        return;
    };
    let h = std::fs::read_to_string(header).unwrap();
    assert!(
        h.contains("#define CUDA_VERSION 12000"),
        "not CUDA 12.0's cuda.h"
    );
    let declared: BTreeSet<String> = h
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("cu") && w.len() > 2)
        .map(str::to_string)
        .collect();
    let mut wrong = Vec::new();
    for (name, (version, _)) in table() {
        let there = declared.contains(&name);
        if newer(&version) == there {
            wrong.push(format!(
                "{name}: listed as CUDA {version}, {} CUDA 12.0's cuda.h",
                if there {
                    "but declared in"
                } else {
                    "but missing from"
                }
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
