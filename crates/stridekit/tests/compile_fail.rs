//! What must not compile: every way of writing the same memory from two places at once,
//! or of keeping a view (or a TMA descriptor) past its memory. Each case's expected
//! compiler error is checked in beside it (`tests/compile_fail/*.stderr`; regenerate with
//! `TRYBUILD=overwrite cargo test -p stridekit --test compile_fail`).

#[test]
fn views_cannot_race_or_dangle() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
