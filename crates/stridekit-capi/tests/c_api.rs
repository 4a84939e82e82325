//! Builds the C tests against the static library with the system C compiler (through the
//! `cc` crate), runs them, and runs them again under valgrind's memcheck when it is
//! installed (no leak, no invalid access). Also compiles the header as C11 and C++17
//! with `-Wall -Werror`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    // The test binary is target/<profile>/deps/c_api-*; the libraries are in target/<profile>.
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include")
}

fn compiler(cpp: bool) -> Command {
    let tool = cc::Build::new()
        .cpp(cpp)
        .opt_level(0)
        .target("x86_64-unknown-linux-gnu")
        .host("x86_64-unknown-linux-gnu")
        .cargo_metadata(false)
        .get_compiler();
    tool.to_command()
}

/// The static library, built now: `cargo test` builds only the crate's rlib for its tests.
fn static_lib() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "-p", "stridekit-capi", "--lib"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let profile = target_dir();
    if profile.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "building libstridekit_capi.a");
    let lib = profile.join("libstridekit_capi.a");
    assert!(lib.exists(), "{} is missing after the build", lib.display());
    lib
}

fn build_c_test(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let out = target_dir().join(format!("c-{name}"));
    let lib = static_lib();
    let status = compiler(false)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .arg("-I")
        .arg(include_dir())
        .arg(&src)
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "compiling {}", src.display());
    out
}

#[test]
fn the_header_compiles_as_c11_and_cpp17_with_warnings_as_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let c = compiler(false)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            "-x",
            "c",
        ])
        .arg("-I")
        .arg(include_dir())
        .arg(include_dir().join("stridekit.h"))
        .status()
        .unwrap();
    assert!(c.success(), "stridekit.h as C11");
    let cpp = compiler(true)
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
        .arg("-I")
        .arg(include_dir())
        .arg(dir.join("header_cpp.cpp"))
        .status()
        .unwrap();
    assert!(cpp.success(), "stridekit.h as C++17");
}

#[test]
fn the_c_host_tests_pass_and_are_clean_under_valgrind() {
    let exe = build_c_test("host_test");
    let out = Command::new(&exe).output().unwrap();
    assert!(
        out.status.success(),
        "host_test failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let has_valgrind = Command::new("valgrind").arg("--version").output().is_ok();
    if !has_valgrind {
        eprintln!("valgrind is not installed: the memcheck run is skipped here (CI installs it)");
        assert!(
            std::env::var_os("STRIDEKIT_REQUIRE_VALGRIND").is_none(),
            "valgrind required"
        );
        return;
    }
    let out = Command::new("valgrind")
        .args([
            "--tool=memcheck",
            "--leak-check=full",
            "--errors-for-leak-kinds=all",
            "--error-exitcode=3",
        ])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "host_test under valgrind (exit {:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn views_work_across_two_copies_of_the_library() {
    // The shared library, loaded twice under two names (dlopen keeps them apart).
    static_lib();
    let so = target_dir().join("libstridekit_capi.so");
    assert!(so.exists(), "{} is missing after the build", so.display());
    let (a, b) = (
        target_dir().join("libsk_copy_a.so"),
        target_dir().join("libsk_copy_b.so"),
    );
    std::fs::copy(&so, &a).unwrap();
    std::fs::copy(&so, &b).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/two_copies.c");
    let exe = target_dir().join("c-two_copies");
    let status = compiler(false)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .arg("-I")
        .arg(include_dir())
        .arg(&src)
        .args(["-pthread", "-ldl", "-o"])
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success(), "compiling {}", src.display());
    let out = Command::new(&exe).arg(&a).arg(&b).output().unwrap();
    assert!(
        out.status.success(),
        "two_copies failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Stale views, a release racing a copy, edited and garbage tables: no invalid read,
    // no use after free, nothing leaked.
    if Command::new("valgrind").arg("--version").output().is_err() {
        eprintln!("valgrind is not installed: the memcheck run is skipped here (CI installs it)");
        assert!(
            std::env::var_os("STRIDEKIT_REQUIRE_VALGRIND").is_none(),
            "valgrind required"
        );
        return;
    }
    let out = Command::new("valgrind")
        .args([
            "--tool=memcheck",
            "--error-exitcode=3",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
        ])
        .arg(&exe)
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "two_copies under valgrind (exit {:?}):\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
