//! The generation options: one table ([`options_table!`](crate::options_table)) from which
//! come the [`Options`] struct, the `#![…]` attributes an input may carry ([`FileOptions`],
//! parsed here), the `mechgen_build::Builder` setters and the command line's flags (the
//! build crate and the CLI expand the same table with their own callback macros), and the
//! one place where an input's attributes meet the caller's options ([`Options::resolve`]).

use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, Meta};

/// Calls `$callback! { flags { … } values { … } }` with the table of generation options,
/// for the engine, `mechgen_build::Builder` and the `mechgen` command line to declare their
/// surface from it (each option is declared here once).
///
/// - `flags`: options that are off by default and turned on by an attribute `#![NAME]`, a
///   builder call `NAME(true)` or a flag `--NAME`. Entry:
///   `/// doc` `NAME, help = "…";` (`help`: what the flag adds, for the error of a flag
///   given a value).
/// - `values`: options with a value. Entry: `/// doc` `NAME: TYPE = DEFAULT, value VALUE,
///   attr = "ATTRIBUTE", usage = "`#![…]`", parse = FUNCTION, builder(ARGUMENT TYPE),
///   cli(CLAP ARGUMENTS);`. `TYPE` is the field of [`Options`](crate::Options), `VALUE` what
///   an attribute, a builder call or a flag gives (`TYPE: From<VALUE>`); an input's attribute
///   wins over the caller's value.
#[macro_export]
macro_rules! options_table {
    ($callback:ident) => {
        $callback! {
            flags {
                /// Also emit the generic family of every module (`pub mod generic`).
                ///
                /// Its functions take any scalar `S: Real`, e.g. dual numbers for exact
                /// derivatives.
                generic, help = "it adds a `generic` submodule whose functions take any scalar `S: Real`";
                /// Also emit the derivatives of the dynamics terms of every module with
                /// dynamics.
                ///
                /// The functions: `forces_jacobian_q`, `forces_jacobian_qd`, `forces_jacobian_p`,
                /// `mass_times_jacobian`, `gamma_jacobian_q`, `gamma_jacobian_qd`,
                /// `null_space_directional`, the parameter derivatives and the fused
                /// `dynamics_jacobian_q`, `dynamics_jacobian_p`, `acceleration_jacobian_p`.
                derivatives, help = "it adds the derivatives of the dynamics terms (`forces_jacobian_q`, …)";
            }
            values {
                /// Seed of the probe points the static pivots are chosen at.
                seed: u64 = 0x6d65_6368_6765_6e00, value u64, attr = "seed",
                    usage = "`#![seed = N]`", parse = parse_seed,
                    builder(u64), cli(value_name = "N");
                /// The scalar type of the generated functions: `f64` (the default) or `f32`.
                scalar: Option<String> = None, value String, attr = "scalar",
                    usage = "`#![scalar = f32]`", parse = parse_scalar,
                    builder(impl Into<String>),
                    cli(value_name = "TYPE", value_parser = ["f64", "f32"]);
                /// Path of the run-time crate (`mechgen`) in the generated code.
                ///
                /// The default is `::mechgen`; another when the dependency is renamed, e.g.
                /// `::rt`.
                crate_path: String = "::mechgen".to_string(), value String, attr = "crate",
                    usage = "`#![crate = \"::path\"]`", parse = parse_crate_path,
                    builder(impl Into<String>), cli(value_name = "PATH");
                /// Generate only these functions of every module (default: all), by name,
                /// each with its `_into` form: e.g. `jacobian, null_space_fixed`.
                ///
                /// `null_space`, `null_space_atlas` and `null_space_in_chart` bring the chart
                /// functions they call. The constants (`NQ`, `INDEPENDENT`, …) and `Params`
                /// stay; the runtime's traits (`Mechanism`, …) are implemented only by a
                /// module with every function. A name no module has is an error that lists
                /// the module's functions. Generation skips the work the selection does not
                /// need: without the atlas functions no further charts are sought (and
                /// `TYPICAL_HEALTH` comes from a few samples), with kinematic functions only
                /// the equations of motion are not derived.
                functions: Option<$crate::FunctionList> = None, value $crate::FunctionList,
                    attr = "functions",
                    usage = "`#![functions(jacobian, null_space_fixed)]`", parse = parse_functions,
                    builder(&[&str]), cli(value_name = "NAMES");
            }
        }
    };
}

/// Expands the table into the engine's [`Options`], [`FileOptions`] and their resolution.
macro_rules! engine_options {
    (
        flags { $( $(#[doc = $fdoc:literal])* $flag:ident, help = $help:literal; )* }
        values { $(
            $(#[doc = $vdoc:literal])*
            $name:ident : $ty:ty = $default:expr, value $vt:ty, attr = $attr:literal,
            usage = $usage:literal, parse = $parse:ident, builder($bty:ty), cli($($cli:tt)*);
        )* }
    ) => {
        /// Options of code generation (shared by the macro, the builder and the CLI; declared
        /// once, in [`options_table!`](crate::options_table)). An input's `#![…]` attributes
        /// are merged in by [`Options::resolve`].
        #[derive(Clone, Debug)]
        pub struct Options {
            $( $(#[doc = $fdoc])* #[doc = ""] #[doc = concat!("As `#![", stringify!($flag), "]` in the input does.")] pub $flag: bool, )*
            $( $(#[doc = $vdoc])* #[doc = ""] #[doc = concat!("As ", $usage, " in the input does (the input's attribute wins).")] pub $name: $ty, )*
            /// Write `//` comments naming each equation (pretty-printed output only; the proc
            /// macro leaves them out).
            pub comments: bool,
            /// Also print the equations as formulas into
            /// [`ModuleStats::formulas`](crate::ModuleStats::formulas) (plain text or LaTeX),
            /// for `mechgen stats --equations` / `--latex`.
            pub formulas: Option<crate::expr::print::Syntax>,
        }

        impl Default for Options {
            fn default() -> Self {
                Self {
                    $( $flag: false, )*
                    $( $name: $default, )*
                    comments: false,
                    formulas: None,
                }
            }
        }

        /// The options an input gives itself in `#![…]` attributes at its top.
        #[derive(Clone, Debug, Default)]
        pub struct FileOptions {
            $( #[doc = concat!("`#![", stringify!($flag), "]`.")] pub $flag: bool, )*
            $( #[doc = concat!($usage, ", if given.")] pub $name: Option<$vt>, )*
        }

        /// The attributes an input may carry, as they are written.
        pub const ATTRIBUTES: &[&str] = &[
            $( $usage, )*
            $( concat!("`#![", stringify!($flag), "]`"), )*
        ];

        impl FileOptions {
            /// Reads the inner attributes of an input; an unknown attribute, a malformed
            /// value or an option given twice is an error at its tokens.
            pub fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
                let mut out = FileOptions::default();
                let mut seen: Vec<&str> = Vec::new();
                for attr in attrs {
                    $(
                        if attr.path().is_ident(stringify!($flag)) {
                            twice(&mut seen, stringify!($flag), attr, concat!("`#![", stringify!($flag), "]`"))?;
                            attr.meta.require_path_only().map_err(|_| {
                                syn::Error::new_spanned(
                                    &attr.meta,
                                    concat!("`#![", stringify!($flag), "]` takes no value: ", $help),
                                )
                            })?;
                            out.$flag = true;
                            continue;
                        }
                    )*
                    $(
                        if attr.path().is_ident($attr) {
                            twice(&mut seen, $attr, attr, $usage)?;
                            out.$name = Some($parse(attr)?);
                            continue;
                        }
                    )*
                    return Err(syn::Error::new(
                        attr.span(),
                        format!("unknown option; the supported options are {}", ATTRIBUTES.join(", ")),
                    ));
                }
                Ok(out)
            }
        }

        impl Options {
            /// These options with an input's attributes merged in: a flag is on when either
            /// turns it on, a value given by the input wins. The one place the two meet.
            pub fn resolve(&self, file: &FileOptions) -> Options {
                let mut out = self.clone();
                $( out.$flag |= file.$flag; )*
                $(
                    if let Some(v) = &file.$name {
                        out.$name = v.clone().into();
                    }
                )*
                out
            }
        }
    };
}

crate::options_table!(engine_options);

impl Options {
    /// The options of a written file (`mechgen_build::Builder`, the command line): the
    /// defaults, with `//` comments naming each equation.
    pub fn for_files() -> Options {
        Options {
            comments: true,
            ..Options::default()
        }
    }
}

/// An error if the option `name` was already given, else records it.
fn twice(
    seen: &mut Vec<&'static str>,
    name: &'static str,
    attr: &Attribute,
    usage: &str,
) -> syn::Result<()> {
    if seen.contains(&name) {
        return Err(syn::Error::new(
            bracket_span(attr),
            format!("the {name} option is given twice; keep one {usage}"),
        ));
    }
    seen.push(name);
    Ok(())
}

/// The span of an attribute's `[…]`.
fn bracket_span(attr: &Attribute) -> Span {
    attr.bracket_token.span.join()
}

/// The functions to generate (the `functions` option): names of generated functions, in
/// the order given, without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionList(pub Vec<String>);

impl FunctionList {
    /// Whether `name` is in the list.
    pub fn contains(&self, name: &str) -> bool {
        self.0.iter().any(|n| n == name)
    }
}

impl From<&[&str]> for FunctionList {
    fn from(names: &[&str]) -> Self {
        let mut out = FunctionList::default();
        for n in names {
            if !out.contains(n) {
                out.0.push((*n).to_string());
            }
        }
        out
    }
}

impl std::str::FromStr for FunctionList {
    type Err = String;
    /// Comma-separated names (`jacobian,null_space_fixed`), as the command line gives them.
    fn from_str(s: &str) -> Result<Self, String> {
        let names: Vec<&str> = s.split(',').map(str::trim).collect();
        if let Some(bad) = names
            .iter()
            .find(|n| syn::parse_str::<syn::Ident>(n).is_err())
        {
            return Err(format!(
                "`{bad}` is not a function name; give names separated by commas: `jacobian,null_space_fixed`"
            ));
        }
        Ok(FunctionList::from(names.as_slice()))
    }
}

/// `#![functions(jacobian, null_space_fixed)]`.
fn parse_functions(attr: &Attribute) -> syn::Result<FunctionList> {
    const FUNCTIONS: &str = "the functions option lists the functions to generate by name: \
         `#![functions(jacobian, null_space_fixed)]`";
    let list = match &attr.meta {
        Meta::List(l) => l,
        _ => return Err(syn::Error::new(bracket_span(attr), FUNCTIONS)),
    };
    let names = list
        .parse_args_with(
            syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated,
        )
        .map_err(|e| syn::Error::new(e.span(), FUNCTIONS))?;
    if names.is_empty() {
        return Err(syn::Error::new(bracket_span(attr), FUNCTIONS));
    }
    let mut out = FunctionList::default();
    for ident in &names {
        let n = ident.to_string();
        if out.contains(&n) {
            return Err(syn::Error::new(
                ident.span(),
                format!("`{n}` is listed twice in the functions option"),
            ));
        }
        out.0.push(n);
    }
    Ok(out)
}

/// `#![seed = N]`.
fn parse_seed(attr: &Attribute) -> syn::Result<u64> {
    const SEED: &str =
        "the seed must be a non-negative integer literal below 2^64: `#![seed = 42]`";
    let nv = attr
        .meta
        .require_name_value()
        .map_err(|e| syn::Error::new(e.span(), SEED))?;
    match &nv.value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i
            .base10_parse::<u64>()
            .map_err(|_| syn::Error::new(i.span(), SEED)),
        other => Err(syn::Error::new_spanned(other, SEED)),
    }
}

/// `#![scalar = f32]` (or `f64`).
fn parse_scalar(attr: &Attribute) -> syn::Result<String> {
    const SCALAR: &str = "the scalar type is `f64` (the default) or `f32`: `#![scalar = f32]`";
    let nv = attr
        .meta
        .require_name_value()
        .map_err(|e| syn::Error::new(e.span(), SCALAR))?;
    match &nv.value {
        Expr::Path(p) if p.path.is_ident("f32") || p.path.is_ident("f64") => {
            Ok(if p.path.is_ident("f32") { "f32" } else { "f64" }.to_string())
        }
        other => Err(syn::Error::new_spanned(other, SCALAR)),
    }
}

/// What a malformed `#![crate = ...]` is told.
const CRATE_USAGE: &str =
    "the crate option names the run-time crate as a string literal path: `#![crate = \"::my_mechgen\"]`";

/// `#![crate = "::path"]`: a plain path (`::my_mechgen`, `crate::vendored::mechgen`).
fn parse_crate_path(attr: &Attribute) -> syn::Result<String> {
    let value = match &attr.meta {
        Meta::NameValue(nv) => &nv.value,
        Meta::Path(_) => return Err(syn::Error::new(bracket_span(attr), CRATE_USAGE)),
        Meta::List(l) => return Err(syn::Error::new_spanned(&l.tokens, CRATE_USAGE)),
    };
    let lit = match value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s,
        other => return Err(syn::Error::new_spanned(other, CRATE_USAGE)),
    };
    let text = lit.value();
    let parsed: syn::Path = syn::parse_str(&text).map_err(|_| {
        syn::Error::new(lit.span(), format!("`{text}` is not a path; {CRATE_USAGE}"))
    })?;
    if parsed.segments.iter().any(|s| !s.arguments.is_none()) {
        return Err(syn::Error::new(
            lit.span(),
            format!("`{text}` has generic arguments; {CRATE_USAGE}"),
        ));
    }
    Ok(text)
}
