//! Mistakes in a `mechanism!` block are compile errors at the offending tokens.
//!
//! Each `tests/ui/*.rs` has one mistake (`syntax_errors_together.rs` three, reported in one
//! pass); its `.stderr` is the expected diagnostic
//! (regenerate with `TRYBUILD=overwrite cargo test --test compile_fail`, then review).

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
