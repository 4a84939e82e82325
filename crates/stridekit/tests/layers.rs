//! The module picture has no circle: every module of the CUDA crate imports only from
//! the modules below it, in this order (lowest first). A new module takes its place in
//! `LAYERS`, and an import that runs up fails here.

#[path = "support/layers.rs"]
mod support;

/// Lowest first: each module may use the ones before it.
const LAYERS: &[&str] = &[
    "error",              // the error type
    "driver",             // the only caller of cudarc::driver::sys
    "cubin_image",        // CUBINs checked before the driver reads them
    "background_compile", // kernels compiled on threads of their own
    "device_tables",      // constant tables kernels read, made once per key
    "runtime",            // per-device state: context, library stream, kernels, peers, staging
    "device",             // the public device handle
    "kernel_cache",       // compiled kernels on disk
    "nvrtc",              // run-time compilation
    "dtype",              // element types
    "typestr",            // array-interface type strings
    "pointer",            // what the driver knows of an address
    "stream",             // the one stream rule
    "peer",               // peer access
    "memory",             // buffers, resources, regions, pending work
    "copy",               // the copy engine, over operands
    "kernel_pack",        // the copy engine's kernels compiled ahead of time
    "dlpack",             // DLPack structs, checked
    "view",               // views and their entry points
    "tma",                // tensor maps of views
    "managed",            // managed memory
    "graph",              // copies captured into CUDA graphs
    "dist",               // views between ranks: NCCL and in-process transports
    "lib",
];

#[test]
fn imports_run_down_the_layers() {
    support::assert_imports_run_down(env!("CARGO_MANIFEST_DIR"), LAYERS);
}
