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
//! The options of [`Builder`] (`seed`, `scalar`, `generic`, `derivatives`, `crate_path`) are
//! the `#![…]` options a file may carry and the command line's flags: all come from one table,
//! [`mechgen_codegen::options_table!`]; a file's own attribute wins over the builder's value.
//!
//! The `mechgen` command line is the package `mechgen-cli` (it shares
//! [`generate_file_text`] with [`Builder`]).

use std::path::{Path, PathBuf};

pub use mechgen_codegen::{
    generate_file_text, generate_str, locate, options_table, pretty, BuildError, Error, Errors,
    FormulaSyntax, Generated, Options, Timings,
};

/// Generates Rust from `.mech` files in a build script, in the spirit of `prost-build`.
///
/// In `build.rs` (and `include!(concat!(env!("OUT_DIR"), "/stewart.rs"));` in the crate):
///
/// ```no_run
/// if let Err(e) = mechgen_build::Builder::new().file("mechanisms/stewart.mech").generate() {
///     eprintln!("{e}");
///     std::process::exit(1);
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Builder {
    files: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    emit_cargo: bool,
    options: Options,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// The generation options' setters, one per entry of [`options_table!`].
macro_rules! builder_setters {
    (
        flags { $( $(#[doc = $fdoc:literal])* $flag:ident, help = $help:literal; )* }
        values { $(
            $(#[doc = $vdoc:literal])*
            $name:ident : $ty:ty = $default:expr, value $vt:ty, attr = $attr:literal,
            usage = $usage:literal, parse = $parse:ident, builder($bty:ty), cli($($cli:tt)*);
        )* }
    ) => {
        impl Builder {
            $(
                $(#[doc = $fdoc])*
                #[doc = ""]
                #[doc = concat!("As `#![", stringify!($flag), "]` in a file does (either turns it on).")]
                pub fn $flag(mut self, on: bool) -> Self {
                    self.options.$flag = on;
                    self
                }
            )*
            $(
                $(#[doc = $vdoc])*
                #[doc = ""]
                #[doc = concat!("As ", $usage, " in a file does (the file's attribute wins; a bad value is an error of [`Builder::generate`]).")]
                pub fn $name(mut self, value: $bty) -> Self {
                    let value: $vt = value.into();
                    self.options.$name = value.into();
                    self
                }
            )*
        }
    };
}

options_table!(builder_setters);

impl Builder {
    /// A builder with no files, writing to `OUT_DIR`, printing `cargo:` directives, with
    /// `//` comments naming each equation in the generated files.
    pub fn new() -> Self {
        Self {
            files: Vec::new(),
            out_dir: None,
            emit_cargo: true,
            options: Options::for_files(),
        }
    }

    /// Adds a `.mech` file. Its output is `<OUT_DIR>/<file stem>.rs`.
    pub fn file(mut self, path: impl AsRef<Path>) -> Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds several `.mech` files.
    pub fn files<P: AsRef<Path>>(mut self, paths: impl IntoIterator<Item = P>) -> Self {
        self.files
            .extend(paths.into_iter().map(|p| p.as_ref().to_path_buf()));
        self
    }

    /// Writes into `dir` instead of `OUT_DIR`.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to print `cargo:rerun-if-changed` and `cargo:warning` lines (default on).
    pub fn emit_cargo_directives(mut self, on: bool) -> Self {
        self.emit_cargo = on;
        self
    }

    /// The generation options the builder passes (before each file's own attributes are
    /// merged in).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Generates every file. Returns the paths written.
    pub fn generate(&self) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(BuildError::NoOutDir)?,
        };
        let mut written = Vec::new();
        for path in &self.files {
            if self.emit_cargo {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            let src = std::fs::read_to_string(path).map_err(|source| BuildError::Io {
                path: path.clone(),
                source,
            })?;
            let (generated, text) = generate_file_text(path, &src, &self.options)?;
            if self.emit_cargo {
                for m in &generated.modules {
                    for n in &m.notes {
                        println!("cargo:warning={}: {}: {n}", path.display(), m.name);
                    }
                }
            }
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "mechanism".to_string());
            let out = out_dir.join(format!("{stem}.rs"));
            std::fs::write(&out, text).map_err(|source| BuildError::Io {
                path: out.clone(),
                source,
            })?;
            written.push(out);
        }
        Ok(written)
    }
}
