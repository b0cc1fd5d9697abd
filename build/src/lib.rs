//! # mechgen-build
//!
//! Generates mechgen mechanisms in a build script, in the spirit of `prost-build`: read
//! `.mech` files, write pretty-printed Rust into `OUT_DIR`, `include!` it in the crate.
//! This crate is the build-time half of mechgen; it compiles the engine (syn,
//! prettyplease, the probing) for the host only and does not depend on the runtime or on
//! nalgebra. The generated code depends on the run-time crate `mechgen` alone, which the
//! crate itself lists without its default `macros` feature:
//!
//! ```toml
//! [dependencies]
//! mechgen = { version = "0.1", default-features = false }
//!
//! [build-dependencies]
//! mechgen-build = "0.1"
//!
//! # Generation runs in build.rs, which Cargo compiles without optimisation by default.
//! [profile.dev.build-override]
//! opt-level = 3
//! [profile.release.build-override]
//! opt-level = 3
//! ```
//!
//! ```no_run
//! // build.rs, in `fn main()`:
//! if let Err(e) = mechgen_build::Builder::new().file("stewart.mech").generate() {
//!     eprintln!("{e}"); // path:line:col: message, with a caret excerpt
//!     std::process::exit(1);
//! }
//! ```
//!
//! and in the crate: `include!(concat!(env!("OUT_DIR"), "/stewart.rs"));`. When `mechgen`
//! is renamed in `[dependencies]` (`rt = { package = "mechgen", ... }`), tell the generated
//! code where to find it with [`Builder::crate_path`]`("::rt")`.
//!
//! The `mechgen` command line is the package `mechgen-cli` (it shares
//! [`generate_file_text`] with [`Builder`]).

pub use mechgen_codegen::{
    file_options, generate_file_text, generate_str, locate, pretty, BuildError, Builder, Error,
    Errors, FormulaSyntax, Generated, Options, Timings,
};
