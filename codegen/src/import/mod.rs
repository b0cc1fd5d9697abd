//! Importers: robot descriptions in other formats turned into `.mech` text a user can
//! read, edit and extend, which then goes through the normal pipeline.
//!
//! - [`urdf`]: URDF (fixed-base kinematic trees).
//! - [`mjcf`]: MJCF, MuJoCo's format (body trees with hinge and slide joints; equality
//!   constraints as exact closed loops).
//!
//! [`import`] reads either format ([`Format`], chosen by the file's extension or named),
//! and [`splice`] appends a `.mech` file of *additions* — loops, inputs, forces, outputs
//! that name the imported coordinates, frames and bodies — inside the imported module:
//! what `mechgen_build::Import` and `mechgen import --additions` do.

use std::path::Path;

pub mod mjcf;
pub mod urdf;

pub use urdf::{ImportError, Note};

/// The format of a robot file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// URDF (`urdf::import`).
    Urdf,
    /// MJCF, MuJoCo's format (`mjcf::import`).
    Mjcf,
}

impl Format {
    /// The format a file's name says: `.xml` or `.mjcf` is MJCF, anything else URDF.
    ///
    /// ```
    /// use mechgen_codegen::import::Format;
    /// assert_eq!(Format::of_path("models/cassie.xml".as_ref()), Format::Mjcf);
    /// assert_eq!(Format::of_path("ur5.urdf".as_ref()), Format::Urdf);
    /// ```
    pub fn of_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("xml") || e.eq_ignore_ascii_case("mjcf") => {
                Format::Mjcf
            }
            _ => Format::Urdf,
        }
    }

    /// The format named `urdf` or `mjcf` (any case); `None` for another name.
    pub fn from_name(name: &str) -> Option<Format> {
        if name.eq_ignore_ascii_case("urdf") {
            Some(Format::Urdf)
        } else if name.eq_ignore_ascii_case("mjcf") {
            Some(Format::Mjcf)
        } else {
            None
        }
    }
}

/// How to import a robot file of either format: the format and each importer's options
/// (only the chosen format's are used).
#[derive(Clone, Debug)]
pub struct ImportSettings {
    /// The file's format.
    pub format: Format,
    /// The URDF importer's options.
    pub urdf: urdf::ImportOptions,
    /// The MJCF importer's options.
    pub mjcf: mjcf::ImportOptions,
}

impl ImportSettings {
    /// Default options for a file of the format its name says ([`Format::of_path`]).
    pub fn for_path(path: &Path) -> Self {
        Self::new(Format::of_path(path))
    }

    /// Default options for `format`.
    pub fn new(format: Format) -> Self {
        Self {
            format,
            urdf: urdf::ImportOptions::default(),
            mjcf: mjcf::ImportOptions::default(),
        }
    }

    /// Names the generated module (both formats' `module`).
    pub fn module(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.urdf.module = Some(name.clone());
        self.mjcf.module = Some(name);
        self
    }
}

/// What either importer returns, in the shape both share.
#[derive(Clone, Debug)]
pub struct ImportedText {
    /// The `.mech` source.
    pub mech: String,
    /// Elements not imported, in document order (also in the text's header).
    pub notes: Vec<Note>,
    /// The module's name in `mech`.
    pub module: String,
    /// The number of coordinates.
    pub coords: usize,
}

/// Imports `text` (a URDF or MJCF document, as `settings.format` says) as `.mech` source.
///
/// ```
/// use mechgen_codegen::import::{import, Format, ImportSettings};
/// let urdf = r#"<robot name="r"><link name="a"/><link name="b">
///   <inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
///   </link><joint name="j" type="revolute"><parent link="a"/><child link="b"/>
///   <axis xyz="0 0 1"/></joint></robot>"#;
/// let imported = import(urdf, &ImportSettings::new(Format::Urdf)).unwrap();
/// assert_eq!((imported.module.as_str(), imported.coords), ("r", 1));
/// ```
pub fn import(text: &str, settings: &ImportSettings) -> Result<ImportedText, ImportError> {
    match settings.format {
        Format::Urdf => urdf::import(text, &settings.urdf).map(|i| ImportedText {
            coords: i.coords.len(),
            mech: i.mech,
            notes: i.notes,
            module: i.module,
        }),
        Format::Mjcf => mjcf::import(text, &settings.mjcf).map(|i| ImportedText {
            coords: i.coords.len(),
            mech: i.mech,
            notes: i.notes,
            module: i.module,
        }),
    }
}

/// An imported module with a file of additions inside it (see [`splice`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spliced {
    /// The whole `.mech` source.
    pub text: String,
    /// The 1-based line of `text` where the additions' first line is.
    pub first_line: usize,
    /// How many lines the additions take.
    pub lines: usize,
}

impl Spliced {
    /// The additions' own 1-based line for a line of [`Spliced::text`], if it is one of
    /// theirs.
    pub fn additions_line(&self, line: usize) -> Option<usize> {
        (line >= self.first_line && line < self.first_line + self.lines)
            .then(|| line - self.first_line + 1)
    }
}

/// Appends `additions` — items of the language (`constraint`, `input`, `force`, `output`,
/// `body`, `spring`, `param`, …), written as inside a module — at the end of the module of
/// an imported `.mech` text, so they may name everything the import declared: its
/// coordinates, its frames (`<link>_frame`), its bodies and parameters. `name` (the
/// additions' file name) goes in a comment above them. The additions keep their lines and
/// columns, so [`Spliced::additions_line`] maps an error back to their file.
///
/// An error if `imported` does not end with a module's closing brace (it always does when
/// it comes from [`import`]).
///
/// ```
/// use mechgen_codegen::import::splice;
/// let imported = "pub mod arm {\n    coord q = 0.0;\n}\n";
/// let s = splice(imported, "output tip = q;\n", "arm_additions.mech").unwrap();
/// assert!(s.text.contains("output tip = q;\n}"));
/// assert_eq!(s.additions_line(s.first_line), Some(1));
/// ```
pub fn splice(imported: &str, additions: &str, name: &str) -> Result<Spliced, String> {
    let body = imported.trim_end();
    let Some(head) = body.strip_suffix('}') else {
        return Err("the imported text does not end with its module's `}`".to_string());
    };
    let mut text = String::with_capacity(imported.len() + additions.len() + name.len() + 32);
    text.push_str(head.trim_end());
    text.push_str("\n\n    // Additions from ");
    text.push_str(name);
    text.push_str(".\n");
    let first_line = text.lines().count() + 1;
    text.push_str(additions);
    if !additions.ends_with('\n') {
        text.push('\n');
    }
    let lines = additions.lines().count();
    text.push_str("}\n");
    Ok(Spliced {
        text,
        first_line,
        lines,
    })
}
