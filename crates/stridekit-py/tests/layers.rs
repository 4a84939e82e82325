//! The Python front's module picture has no circle: every module imports only from the
//! modules below it, in this order (lowest first). A new module takes its place in
//! `LAYERS`, and an import that runs up fails here.

#[path = "../../stridekit/tests/support/layers.rs"]
mod support;

/// Lowest first: each module may use the ones before it.
const LAYERS: &[&str] = &[
    "calls",       // method calls with keywords through vectorcall
    "dtype",       // NumPy dtypes and typestrs
    "errors",      // Python exceptions of the crates' errors
    "stream",      // stream arguments
    "layout",      // StridedLayout
    "cview",       // the sk_view capsule for C and Cython
    "memory",      // Buffer and the memory resources
    "view_cell",   // the Rust view of a StridedMemoryView, made at once or on first use
    "import",      // DLPack, CUDA Array Interface and array interface imports
    "nvrtc",       // where NVRTC may live in a Python environment
    "kernels",     // kernel packs: kernels compiled ahead of time
    "view_object", // the StridedMemoryView object: its fields, making and dropping it
    "exchange",    // the DLPack C exchange API of StridedMemoryView
    "tma",         // TensorMapDescriptor
    "view",        // StridedMemoryView's Python methods
    "dist",        // communicators and transfers between ranks
    "lib",
];

#[test]
fn imports_run_down_the_layers() {
    support::assert_imports_run_down(env!("CARGO_MANIFEST_DIR"), LAYERS);
}
