//! The layer check every crate's `tests/layers.rs` runs over its own sources: each
//! top-level module of `src` has a place in the crate's list (lowest first), imports only
//! from the modules before it (`crate::name` naming a later one fails), and every module
//! the list names still exists. Unit tests (`tests.rs`, `#[cfg(test)] mod tests`) may
//! reach anywhere.

use std::collections::BTreeSet;
use std::path::Path;

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

/// Panics, naming every import that runs up `layers` (lowest first), every module
/// without a place in it, and every name in it without a module.
pub fn assert_imports_run_down(crate_dir: &str, layers: &[&str]) {
    let src = Path::new(crate_dir).join("src");
    let rank = |m: &str| layers.iter().position(|&l| l == m);
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
    let gone: Vec<_> = layers.iter().filter(|l| !seen.contains(**l)).collect();
    assert!(
        gone.is_empty(),
        "LAYERS names modules that are gone: {gone:?}"
    );
}
