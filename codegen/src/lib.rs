//! The mechgen engine.
//!
//! Pipeline: `parse` (syn) → `model` (lowering to scalar equations) → `expr` (hash-consed
//! DAG, derivatives) → `derive` (Jacobians, γ, equations of motion) → `pivot` (checks,
//! static pivots by probing, the atlas, symbolic LU) → `emit` (schedule, straight-line Rust,
//! formatting). docs/ARCHITECTURE.md draws it. The API: [`generate_str`] / [`generate`]
//! (text or tokens in, [`Generated`] out), [`pretty`], [`generate_file_text`] (one `.mech` file to Rust text, what
//! `mechgen_build::Builder` and the command line call), [`Options`] (from
//! [`options_table!`]).

#![allow(clippy::needless_range_loop)] // index loops read best in the numeric code

// The stages, in pipeline order (docs/ARCHITECTURE.md). Their items are the engine's
// internals: public for the workspace's tests, benchmarks and fuzzer only (hidden from the
// docs, no stability promise). The curated API is re-exported below.
#[doc(hidden)]
pub mod derive;
#[doc(hidden)]
pub mod emit;
#[doc(hidden)]
pub mod expr;
pub mod import;
#[doc(hidden)]
pub mod model;
#[doc(hidden)]
pub mod parse;
#[doc(hidden)]
pub mod pivot;

mod error;
mod file;
mod generate;
mod options;

pub use emit::format::pretty;
pub use emit::{FunctionStats, ModuleStats};
pub use error::{Error, Errors, Located, Result};
/// The syntax of [`Options::formulas`]: plain text or LaTeX.
pub use expr::print::Syntax as FormulaSyntax;
pub use file::{generate_file_text, import_source, locate, BuildError, ImportedSource};
pub use generate::{
    check_names, expand, generate, generate_str, models, Generated, Lowered, Timings,
};
pub use options::{FileOptions, FunctionList, Options, ATTRIBUTES};

/// Re-exported so that callers can build token streams for [`generate`] and [`models`].
pub use proc_macro2;
