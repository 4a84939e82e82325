//! The C front's module picture has no circle: every module imports only from the
//! modules below it, in this order (lowest first). A new module takes its place in
//! `LAYERS`, and an import that runs up fails here.

#[path = "../../stridekit/tests/support/layers.rs"]
mod support;

/// Lowest first: each module may use the ones before it.
const LAYERS: &[&str] = &[
    "status",  // status codes, the last error, the panic guard
    "types",   // the C structs and constants: sk_view, sk_vtable, sk_tma_options
    "kernels", // kernel packs and background compiles: sk_precompile_kernels, sk_add_kernel_pack, sk_wait_for_kernels
    "handle",  // the registry behind sk_view's owner
    "route",   // another library copy's table: checked, and calls forwarded to it
    "view",    // entry points on a live view: read, export, release
    "copy",    // sk_view_copy and sk_view_copy_bits
    "tma",     // sk_tensor_map_tiled
    "vtable",  // this copy's table of the entry points above
    "acquire", // views made: from a pointer, from DLPack, from a Rust view
    "lib",
];

#[test]
fn imports_run_down_the_layers() {
    support::assert_imports_run_down(env!("CARGO_MANIFEST_DIR"), LAYERS);
}
