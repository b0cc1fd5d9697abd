//! Generation of one `.mech` file to Rust text, with errors located in its source: the
//! function `mechgen_build::Builder` and the command line call.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::emit::format::pretty_owned;
use crate::generate::generate_str;
use crate::Options;

/// An error of generating a `.mech` file: a located error in the file, or a file that
/// could not be read or written (`mechgen_build::Builder::generate`, the command line).
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
    /// The engine failed on a valid input (a bug of mechgen).
    Internal {
        /// The `.mech` file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A robot file (URDF or MJCF) could not be imported.
    Import {
        /// The robot file.
        path: PathBuf,
        /// 1-based line of the offending element (0: not tied to a place).
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
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
        /// Further errors of the same file found in the same pass (each a `Mechanism`).
        more: Vec<BuildError>,
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
            BuildError::Internal { path, message } => {
                write!(f, "{}: internal error: {message}", path.display())
            }
            BuildError::Import {
                path,
                line,
                column,
                message,
            } => {
                if *line == 0 {
                    write!(f, "{}: {message}", path.display())
                } else {
                    write!(f, "{}:{line}:{column}: {message}", path.display())
                }
            }
            BuildError::Mechanism {
                path,
                line,
                column,
                message,
                excerpt,
                more,
            } => {
                write!(
                    f,
                    "{}:{line}:{column}: {message}\n{excerpt}",
                    path.display()
                )?;
                for e in more {
                    write!(f, "\n{e}")?;
                }
                Ok(())
            }
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
/// excerpt, one after the other for each error it carries.
///
/// Columns count characters; the caret line is aligned by display columns (tabs copied
/// from the source line, East Asian wide characters two columns).
pub fn locate(path: &Path, src: &str, err: &crate::error::Error) -> BuildError {
    let mut all = err.iter().map(|e| locate_one(path, src, e));
    let first = all.next();
    let rest: Vec<BuildError> = all.collect();
    match first {
        Some(BuildError::Mechanism {
            path,
            line,
            column,
            message,
            excerpt,
            ..
        }) => BuildError::Mechanism {
            path,
            line,
            column,
            message,
            excerpt,
            more: rest,
        },
        Some(other) => other,
        None => BuildError::NoOutDir,
    }
}

fn locate_one(path: &Path, src: &str, err: &crate::error::Error) -> BuildError {
    let start = err.span.start();
    let end = err.span.end();
    let line = start.line.max(1);
    let column = start.column + 1;
    let text = src.lines().nth(line - 1).unwrap_or("");
    let chars: Vec<char> = text.chars().collect();
    let from = start.column.min(chars.len());
    let to = if end.line == start.line && end.column > start.column {
        end.column.min(chars.len())
    } else if end.line == start.line && end.column == start.column {
        // An empty span (a tokenizer error) marks one character.
        (from + 1).min(chars.len())
    } else {
        chars.len()
    };
    // Under each character before the span: a tab stays a tab (it expands as it does in
    // the source line above), anything else becomes as many spaces as it is wide.
    let pad: String = chars[..from]
        .iter()
        .map(|&c| {
            if c == '\t' {
                "\t".to_string()
            } else {
                " ".repeat(char_width(c))
            }
        })
        .collect();
    let width = chars[from..to.max(from)]
        .iter()
        .map(|&c| char_width(c).max(1))
        .sum::<usize>()
        .max(1);
    let gutter = " ".repeat(line.to_string().len());
    let excerpt = format!(
        "{gutter} |\n{line} | {text}\n{gutter} | {pad}{}",
        "^".repeat(width)
    );
    BuildError::Mechanism {
        path: path.to_path_buf(),
        line,
        column,
        message: err.message.clone(),
        excerpt,
        more: Vec::new(),
    }
}

/// Display width of a character in a terminal: 2 for East Asian wide and fullwidth
/// characters (CJK, Hangul, kana, fullwidth forms, most emoji), 0 for combining marks and
/// zero-width characters, else 1.
pub(crate) fn char_width(c: char) -> usize {
    let u = c as u32;
    let zero = matches!(
        u,
        0x0300..=0x036F | 0x200B..=0x200F | 0x20D0..=0x20FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F
    );
    if zero {
        return 0;
    }
    let wide = matches!(u,
        0x1100..=0x115F        // Hangul Jamo initials
        | 0x2E80..=0x303E      // CJK radicals, punctuation
        | 0x3041..=0x33FF      // kana, CJK symbols
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xA000..=0xA4CF      // Yi
        | 0xAC00..=0xD7A3      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFE30..=0xFE4F      // CJK compatibility forms
        | 0xFF00..=0xFF60      // fullwidth forms
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F    // pictographs, emoticons
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD); // CJK extensions B and later
    if wide {
        2
    } else {
        1
    }
}

/// Generates the Rust text of one `.mech` source (read from `path`, which names it in the
/// header and in error messages): the header line, then the pretty-printed modules. The
/// one function the build script and the command line share. The returned [`Generated`]
/// carries the statistics and timings; its `tokens` are empty (printing took them apart
/// without copying them: use [`generate_str`] for the tokens).
///
/// [`Generated`]: crate::Generated
pub fn generate_file_text(
    path: &Path,
    src: &str,
    opts: &Options,
) -> Result<(crate::generate::Generated, String), BuildError> {
    let generated = generate_str(src, opts).map_err(|e| locate(path, src, &e))?;
    let header = format!(
        "// Generated by mechgen from {}. Do not edit.\n\n",
        path.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string())
    );
    let mut generated = generated;
    let tokens = std::mem::take(&mut generated.tokens);
    // Generated tokens are always a Rust file (the fuzzer's oracle checks the printed text
    // parses); if not, that is the engine's bug, reported rather than printed unformatted.
    let body = pretty_owned(tokens).ok_or_else(|| BuildError::Internal {
        path: path.to_path_buf(),
        message: "the generated code is not a Rust file; please report this input".to_string(),
    })?;
    Ok((generated, header + &body))
}

/// A robot file imported, with its additions inside the module ([`import_source`]): the
/// `.mech` text to write and generate.
#[derive(Clone, Debug)]
pub struct ImportedSource {
    /// The `.mech` source: the import with the additions inside its module.
    pub mech: String,
    /// The elements of the robot file not imported.
    pub notes: Vec<crate::import::Note>,
    /// The module's name in `mech`.
    pub module: String,
    additions: Option<(PathBuf, crate::import::Spliced)>,
}

/// Imports a robot file (`robot`, its text `robot_text`, as `settings` say) and appends the
/// `.mech` items of `additions` (a file's path and text) inside the imported module
/// ([`crate::import::splice`]). An import error is located in the robot file.
pub fn import_source(
    robot: &Path,
    robot_text: &str,
    settings: &crate::import::ImportSettings,
    additions: Option<(&Path, &str)>,
) -> Result<ImportedSource, BuildError> {
    let imported = crate::import::import(robot_text, settings).map_err(|e| BuildError::Import {
        path: robot.to_path_buf(),
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    let Some((path, text)) = additions else {
        return Ok(ImportedSource {
            mech: imported.mech,
            notes: imported.notes,
            module: imported.module,
            additions: None,
        });
    };
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let spliced = crate::import::splice(&imported.mech, text, &name).map_err(|message| {
        BuildError::Internal {
            path: robot.to_path_buf(),
            message,
        }
    })?;
    Ok(ImportedSource {
        mech: spliced.text.clone(),
        notes: imported.notes,
        module: imported.module,
        additions: Some((path.to_path_buf(), spliced)),
    })
}

impl ImportedSource {
    /// Generates the Rust text as [`generate_file_text`] does. An error in the additions
    /// is located at their own line and column, any other in the imported text, named
    /// `mech_path` (where the caller writes [`ImportedSource::mech`] for reading).
    pub fn generate(
        &self,
        mech_path: &Path,
        opts: &Options,
    ) -> Result<(crate::generate::Generated, String), BuildError> {
        generate_file_text(mech_path, &self.mech, opts).map_err(|e| match &self.additions {
            Some((path, s)) => relocate(e, path, s),
            None => e,
        })
    }
}

/// Moves a located error (and those it carries) that falls in the additions to their file.
fn relocate(e: BuildError, additions: &Path, s: &crate::import::Spliced) -> BuildError {
    match e {
        BuildError::Mechanism {
            path,
            line,
            column,
            message,
            excerpt,
            more,
        } => {
            let more = more
                .into_iter()
                .map(|m| relocate(m, additions, s))
                .collect();
            match s.additions_line(line) {
                Some(own) => BuildError::Mechanism {
                    path: additions.to_path_buf(),
                    line: own,
                    column,
                    // The excerpt's gutter shows the line number: rebuild it for the
                    // additions' own line (the line's text is the same).
                    excerpt: renumber(&excerpt, line, own),
                    message,
                    more,
                },
                None => BuildError::Mechanism {
                    path,
                    line,
                    column,
                    message,
                    excerpt,
                    more,
                },
            }
        }
        other => other,
    }
}

/// The excerpt `{gutter} |\n{line} | text\n{gutter} | carets` with `from` replaced by `to`.
fn renumber(excerpt: &str, from: usize, to: usize) -> String {
    let (old, new) = (from.to_string(), to.to_string());
    let gutter = " ".repeat(new.len());
    let mut out = String::with_capacity(excerpt.len());
    for (i, l) in excerpt.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if let Some(rest) = l.strip_prefix(old.as_str()).filter(|r| r.starts_with(" |")) {
            out.push_str(&new);
            out.push_str(rest);
        } else if let Some(rest) = l
            .strip_prefix(&" ".repeat(old.len()))
            .filter(|r| r.starts_with(" |"))
        {
            out.push_str(&gutter);
            out.push_str(rest);
        } else {
            out.push_str(l);
        }
    }
    out
}
