//! The build.rs entry point: read `.mech` files, write pretty-printed Rust into `OUT_DIR`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::generate::{generate_str, pretty, Options};

/// Generates Rust from `.mech` files in a build script, in the spirit of `prost-build`.
///
/// In `build.rs` (and `include!(concat!(env!("OUT_DIR"), "/stewart.rs"));` in the crate):
///
/// ```no_run
/// if let Err(e) = mechgen_codegen::Builder::new().file("mechanisms/stewart.mech").generate() {
///     eprintln!("{e}");
///     std::process::exit(1);
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder {
    files: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    seed: Option<u64>,
    crate_path: Option<String>,
    emit_cargo: bool,
}

/// An error of [`Builder::generate`].
#[derive(Debug)]
pub enum BuildError {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// `OUT_DIR` is not set and no output directory was given.
    NoOutDir,
    /// The mechanism description has an error.
    Mechanism {
        /// The `.mech` file.
        path: PathBuf,
        /// 1-based line of the offending tokens.
        line: usize,
        /// 1-based column of the offending tokens.
        column: usize,
        /// What is wrong.
        message: String,
        /// The source line and a caret line under the offending tokens.
        excerpt: String,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BuildError::NoOutDir => write!(
                f,
                "OUT_DIR is not set: call Builder::out_dir or run from build.rs"
            ),
            BuildError::Mechanism {
                path,
                line,
                column,
                message,
                excerpt,
            } => write!(
                f,
                "{}:{line}:{column}: {message}\n{excerpt}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Formats an engine error against its source text: `path:line:col: message` and a caret
/// excerpt.
pub fn locate(path: &Path, src: &str, err: &crate::Error) -> BuildError {
    let start = err.span.start();
    let end = err.span.end();
    let line = start.line.max(1);
    let column = start.column + 1;
    let text = src.lines().nth(line - 1).unwrap_or("");
    let width = if end.line == start.line && end.column > start.column {
        end.column - start.column
    } else {
        text.chars().count().saturating_sub(start.column).max(1)
    };
    let gutter = " ".repeat(line.to_string().len());
    let excerpt = format!(
        "{gutter} |\n{line} | {text}\n{gutter} | {}{}",
        " ".repeat(start.column),
        "^".repeat(width)
    );
    BuildError::Mechanism {
        path: path.to_path_buf(),
        line,
        column,
        message: err.message.clone(),
        excerpt,
    }
}

impl Builder {
    /// A builder with no files, writing to `OUT_DIR`, printing `cargo:` directives.
    pub fn new() -> Self {
        Self {
            emit_cargo: true,
            ..Self::default()
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

    /// Seed of the probe points (a `#![seed = N]` in a file wins).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Path of the facade crate in generated code (default `::mechgen`).
    pub fn crate_path(mut self, path: impl Into<String>) -> Self {
        self.crate_path = Some(path.into());
        self
    }

    /// Whether to print `cargo:rerun-if-changed` and `cargo:warning` lines (default on).
    pub fn emit_cargo_directives(mut self, on: bool) -> Self {
        self.emit_cargo = on;
        self
    }

    /// Generates every file. Returns the paths written.
    pub fn generate(&self) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(BuildError::NoOutDir)?,
        };
        let mut opts = Options {
            comments: true,
            ..Options::default()
        };
        if let Some(s) = self.seed {
            opts.seed = s;
        }
        if let Some(c) = &self.crate_path {
            opts.crate_path = c.clone();
        }
        let mut written = Vec::new();
        for path in &self.files {
            if self.emit_cargo {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            let src = std::fs::read_to_string(path).map_err(|source| BuildError::Io {
                path: path.clone(),
                source,
            })?;
            let generated = generate_str(&src, &opts).map_err(|e| locate(path, &src, &e))?;
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
            let header = format!(
                "// Generated by mechgen from {}. Do not edit.\n\n",
                path.file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            let text = header + &pretty(&generated.tokens);
            std::fs::write(&out, text).map_err(|source| BuildError::Io {
                path: out.clone(),
                source,
            })?;
            written.push(out);
        }
        Ok(written)
    }
}
