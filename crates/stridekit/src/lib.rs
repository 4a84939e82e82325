pub use stridekit_layout as layout;
