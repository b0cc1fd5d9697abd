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

use mechgen_codegen::import::ImportSettings;
pub use mechgen_codegen::import::{mjcf, urdf, Format};
pub use mechgen_codegen::{
    generate_file_text, generate_str, import_source, locate, options_table, pretty, BuildError,
    Error, Errors, FormulaSyntax, Generated, ImportedSource, Options, Timings,
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
    imports: Vec<Import>,
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
            imports: Vec::new(),
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

    /// Adds a robot file to import (URDF or MJCF), with its options and its file of
    /// additions ([`Import`]). Its outputs are named by the module (the robot's name, or
    /// [`Import::module`]): `<OUT_DIR>/<module>.rs` and, for reading and for the error
    /// messages that point into it, the `.mech` text generated, `<OUT_DIR>/<module>.mech`.
    pub fn import(mut self, import: Import) -> Self {
        self.imports.push(import);
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
        for import in &self.imports {
            written.push(self.generate_import(import, &out_dir)?);
        }
        Ok(written)
    }

    fn generate_import(&self, import: &Import, out_dir: &Path) -> Result<PathBuf, BuildError> {
        let read = |path: &Path| {
            if self.emit_cargo {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            std::fs::read_to_string(path).map_err(|source| BuildError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        let robot_text = read(&import.path)?;
        let additions = match &import.additions {
            Some(p) => Some((p.as_path(), read(p)?)),
            None => None,
        };
        let source = import_source(
            &import.path,
            &robot_text,
            &import.settings,
            additions.as_ref().map(|(p, t)| (*p, t.as_str())),
        )?;
        // The elements not imported are listed in the `.mech` text's header (not as cargo
        // warnings: visuals and collisions would repeat on every build).
        // The `.mech` text is written first, so that an error located in it can be read.
        let mech_path = out_dir.join(format!("{}.mech", source.module));
        std::fs::write(&mech_path, &source.mech).map_err(|source| BuildError::Io {
            path: mech_path.clone(),
            source,
        })?;
        let (generated, rust) = source.generate(&mech_path, &self.options)?;
        if self.emit_cargo {
            for m in &generated.modules {
                for n in &m.notes {
                    println!("cargo:warning={}: {}: {n}", mech_path.display(), m.name);
                }
            }
        }
        let out = out_dir.join(format!("{}.rs", source.module));
        std::fs::write(&out, &rust).map_err(|source| BuildError::Io {
            path: out.clone(),
            source,
        })?;
        Ok(out)
    }
}

/// A robot file for [`Builder::import`]: URDF or MJCF (by the extension, `.xml` is MJCF, or
/// as [`Import::format`] says), imported as `mechgen import` does, with an optional `.mech`
/// file of *additions* — items written as inside a module (`constraint`, `input`, `force`,
/// `output`, `spring`, `body`, `param`, …) that go at the end of the imported module and so
/// may name its coordinates (one per moving joint, named as the joint), its frames
/// (`<link>_frame`), bodies and parameters. Errors in the additions are reported at their
/// own line and column.
///
/// ```no_run
/// // build.rs: the UR5 from its URDF, its tool held on a table (a closed loop), a torque
/// // input on the shoulder; `include!(concat!(env!("OUT_DIR"), "/ur5.rs"))` in the crate.
/// use mechgen_build::{Builder, Import};
/// let arm = Import::new("models/ur5_robot.urdf").module("ur5").additions("ur5_table.mech");
/// if let Err(e) = Builder::new().import(arm).generate() {
///     eprintln!("{e}");
///     std::process::exit(1);
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Import {
    path: PathBuf,
    additions: Option<PathBuf>,
    settings: ImportSettings,
}

impl Import {
    /// The robot file at `path`, in the format its extension says, with default options.
    pub fn new(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().to_path_buf();
        let settings = ImportSettings::for_path(&path);
        Self {
            path,
            additions: None,
            settings,
        }
    }

    /// Reads the file as `format` whatever its extension.
    pub fn format(mut self, format: Format) -> Self {
        self.settings.format = format;
        self
    }

    /// The `.mech` file of additions (see [`Import`]).
    pub fn additions(mut self, path: impl AsRef<Path>) -> Self {
        self.additions = Some(path.as_ref().to_path_buf());
        self
    }

    /// The generated module's name (default: the robot's or model's name).
    pub fn module(mut self, name: impl Into<String>) -> Self {
        self.settings = self.settings.module(name);
        self
    }

    /// The URDF importer's options (used when the file is URDF); their `module` is kept
    /// if set here, else the one [`Import::module`] set.
    pub fn urdf(mut self, mut options: urdf::ImportOptions) -> Self {
        if options.module.is_none() {
            options.module = self.settings.urdf.module.take();
        }
        self.settings.urdf = options;
        self
    }

    /// The MJCF importer's options (used when the file is MJCF); their `module` is kept if
    /// set here, else the one [`Import::module`] set.
    pub fn mjcf(mut self, mut options: mjcf::ImportOptions) -> Self {
        if options.module.is_none() {
            options.module = self.settings.mjcf.module.take();
        }
        self.settings.mjcf = options;
        self
    }
}
