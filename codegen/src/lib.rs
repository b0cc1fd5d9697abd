//! The mechgen engine.
//!
//! Pipeline: [`parse`] (syn) → [`model`] (lowering to scalar equations) → [`expr`]
//! (hash-consed DAG, derivatives) → `pivot` / `lu` (static pivots by probing, symbolic LU)
//! → `schedule` → `emit` (straight-line Rust).

pub mod expr;
