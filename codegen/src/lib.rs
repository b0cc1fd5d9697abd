//! The mechgen engine.
//!
//! Pipeline: [`parse`] (syn) → [`model`] (lowering to scalar equations) → [`expr`]
//! (hash-consed DAG, derivatives) → [`derive`] (Jacobians) → [`pivot`] (static pivots by
//! probing, symbolic LU) → `schedule` → `emit` (straight-line Rust).

#![allow(clippy::needless_range_loop)] // index loops read best in the numeric code

pub mod check;
pub mod derive;
pub mod dynamics;
pub mod error;
pub mod expr;
pub mod model;
pub mod parse;
pub mod pivot;

pub use error::{Error, Errors, Result};
pub mod generate;

pub use generate::{expand, generate, generate_str, models, pretty, Generated, Options, Timings};
mod builder;
pub mod emit;
mod format;
pub mod schedule;

pub use builder::{file_options, generate_file_text, locate, BuildError, Builder};

/// Re-exported so that callers can build token streams for [`generate`] and [`models`].
pub use proc_macro2;
