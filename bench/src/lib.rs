//! mechgen's benchmark suite: the mechanisms it measures and the measurements.
//!
//! `cargo run --release -p mechgen-bench` runs everything and writes
//! `bench/results/latest.md`, `latest.json` and `growth.svg` (see `src/main.rs`).

pub mod compile;
pub mod families;
pub mod generated;
pub mod generation;
pub mod growth;
pub mod harness;
pub mod pathological;
pub mod percall;
pub mod pivot_lu;
pub mod report;
pub mod rhs;
pub mod sim;
pub mod sources;
