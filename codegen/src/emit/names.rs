//! Local names in generated code: the user's names are allocated around the names the
//! generated code binds itself ([`vocabulary`]), before emission, so that the module is
//! emitted once with its final names. [`bound_names`] reads the bound names off emitted
//! tokens: the test of the vocabulary's contract
//! ([`EmitOptions::check_names`](super::EmitOptions::check_names)).

use std::collections::HashSet;

use proc_macro2::{Ident, TokenStream};
use quote::format_ident;

use super::expr::SymNames;
use super::table::{Entry, Shape};

/// Prefix of the placeholder names of the emission that checks the vocabulary
/// ([`EmitOptions::check_names`](super::EmitOptions::check_names)).
pub(crate) const PLACEHOLDER: &str = "__mechgen_sym";

/// The names generated code binds in the value namespace, read off the emitted tokens:
/// `let` patterns (`let x`, `let mut x`, `let (s, c)`), function parameters, `const`s,
/// `static`s, structs and associated types. A user name bound in a generated function
/// must differ from all of them (it would shadow them, or be shadowed, or be a pattern).
/// Function names are left out (see below), and so are placeholder names.
///
/// Takes the tokens and gives them back: the scan descends into brace-delimited groups
/// only (modules, impls, function bodies, blocks: where items and statements are), each
/// dropped before its stream is read, so that no token is copied (a borrowed stream is
/// copied, identifiers' text included, once per level of nesting).
pub fn bound_names(ts: TokenStream) -> (TokenStream, HashSet<String>) {
    let mut out = HashSet::new();
    let ts = collect_bound(ts, &mut out);
    out.retain(|n| !n.starts_with(PLACEHOLDER));
    (ts, out)
}

fn collect_bound(ts: TokenStream, out: &mut HashSet<String>) -> TokenStream {
    use crate::model::plain;
    use proc_macro2::{Delimiter, TokenTree};
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    let mut k = 0;
    while k < tokens.len() {
        if let TokenTree::Ident(kw) = &tokens[k] {
            // (Compared without `to_string`: this scan reads every token of the module.)
            let mut next = k + 1;
            if kw == "let" {
                if matches!(tokens.get(next), Some(TokenTree::Ident(m)) if m == "mut") {
                    next += 1;
                }
                match tokens.get(next) {
                    Some(TokenTree::Ident(id)) => {
                        out.insert(plain(id));
                    }
                    Some(TokenTree::Group(g)) => {
                        for tt in g.stream() {
                            if let TokenTree::Ident(id) = tt {
                                if id != "mut" {
                                    out.insert(plain(&id));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            } else if kw == "fn"
                || kw == "const"
                || kw == "static"
                || kw == "struct"
                || kw == "type"
            {
                // A local may shadow a function: no generated body that binds a user's
                // name calls a generated function but its chunks (`residual_part0`, a
                // shape user names never keep), so `gamma` stays a coordinate's name.
                if let (Some(TokenTree::Ident(id)), false) = (tokens.get(next), kw == "fn") {
                    out.insert(plain(id));
                }
                if kw == "fn" {
                    // Generic parameters (`<S: Real>`): each type parameter is taken too.
                    let mut after = next + 1;
                    if matches!(tokens.get(after), Some(TokenTree::Punct(p)) if p.as_char() == '<')
                    {
                        let mut depth = 0usize;
                        while let Some(tt) = tokens.get(after) {
                            if let TokenTree::Punct(p) = tt {
                                match p.as_char() {
                                    '<' => depth += 1,
                                    '>' => depth -= 1,
                                    // `S:` right after `<` or `,` (not a path's `::`).
                                    ':' if depth == 1 => {
                                        let opens = match tokens.get(after - 2) {
                                            Some(TokenTree::Punct(o)) => {
                                                matches!(o.as_char(), '<' | ',')
                                            }
                                            _ => false,
                                        };
                                        if let (Some(TokenTree::Ident(id)), true) =
                                            (tokens.get(after - 1), opens)
                                        {
                                            out.insert(plain(id));
                                        }
                                    }
                                    _ => {}
                                }
                            }
                            after += 1;
                            if depth == 0 {
                                break;
                            }
                        }
                    }
                    // Parameters: the identifier before each top-level `:`.
                    if let Some(TokenTree::Group(g)) = tokens.get(after) {
                        if g.delimiter() == Delimiter::Parenthesis {
                            let ps: Vec<TokenTree> = g.stream().into_iter().collect();
                            for w in ps.windows(2) {
                                if let (TokenTree::Ident(id), TokenTree::Punct(c)) = (&w[0], &w[1])
                                {
                                    if c.as_char() == ':'
                                        && c.spacing() == proc_macro2::Spacing::Alone
                                    {
                                        out.insert(plain(id));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        k += 1;
    }
    tokens
        .into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let (span, stream) = (g.span(), g.stream());
                drop(g);
                let mut ng = proc_macro2::Group::new(Delimiter::Brace, collect_bound(stream, out));
                ng.set_span(span);
                TokenTree::Group(ng)
            }
            other => other,
        })
        .collect()
}

/// An identifier for a user's name: raw (`r#match`) where the name is a Rust keyword of
/// any edition (`gen`, `async`, `try`, …), so that generated code compiles everywhere.
/// (`self`, `Self`, `super`, `crate` and `_` cannot be raw: lowering rejects them, and
/// here they get a trailing `_`.)
pub fn rust_ident(name: &str) -> Ident {
    if matches!(name, "self" | "Self" | "super" | "crate" | "_") {
        // No raw form exists (lowering rejects these; never a panic here).
        format_ident!("{}_", name.trim_start_matches('_'))
    } else if crate::model::is_keyword(name) {
        Ident::new_raw(name, proc_macro2::Span::call_site())
    } else {
        format_ident!("{}", name)
    }
}

/// Names for the user's coordinates, velocities and parameters, differing from the names
/// in `taken` (the names the generated code binds) and from the shapes of temporaries;
/// the names given are added to `taken`.
pub(crate) fn sym_names(
    coords: &[String],
    params: &[String],
    taken: &mut HashSet<String>,
) -> SymNames {
    let mut fresh = |base: String| -> Ident {
        let mut name = base;
        loop {
            if is_temp_name(&name) {
                // `sin_x`, `t12`, `b_3`, `f_part2`: prefixed and suffixed, the name leaves
                // the temporaries' name space for good.
                name = format!("v_{name}_");
            } else if taken.contains(&name) {
                name.push('_');
            } else {
                break;
            }
        }
        taken.insert(name.clone());
        rust_ident(&name)
    };
    let coord: Vec<Ident> = coords.iter().map(|c| fresh(c.clone())).collect();
    let param: Vec<Ident> = params.iter().map(|c| fresh(c.clone())).collect();
    let vel: Vec<Ident> = coords.iter().map(|c| fresh(format!("{c}_dot"))).collect();
    let field = params.iter().map(|p| rust_ident(p)).collect();
    SymNames {
        coord,
        vel,
        param,
        field,
    }
}

/// Whether `s` has the shape of a name emission gives its own temporaries: `t12`,
/// `live3`, `b_0`, `w_1`, `sin_…`, `cos_…`, `forces_part1`.
pub(crate) fn is_temp_name(s: &str) -> bool {
    let digits_after = |prefix: &str| {
        s.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit()))
    };
    digits_after("t")
        || digits_after("live")
        || digits_after("b_")
        || digits_after("w_")
        || s.starts_with("sin_")
        || s.starts_with("cos_")
        || s.rsplit_once("_part")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// Prefix of the placeholders of generated locals in the emission that checks the
/// vocabulary: see [`Locals`].
const LOCAL: &str = "__mechgen_sym_local_";

/// The names of the generated code's own locals that read like user names (output buffers,
/// the health figure's terms): each gives way to the user's names, `base` unless a
/// coordinate, velocity or parameter (or a name of [`vocabulary`]) is named so, else
/// `base_`, `base__`, …. The user's names are the ones users read and write in docs and
/// diffs; the locals are the generated code's own.
pub(crate) enum Locals {
    /// Names free of these (the vocabulary and the user's names as given).
    Around(HashSet<String>),
    /// Placeholders `__mechgen_sym_local_base`, for [`bound_names`] to leave out.
    Placeholders,
}

impl Locals {
    /// The local named after `base`.
    pub(crate) fn local(&self, base: &str) -> Ident {
        match self {
            Locals::Around(taken) => {
                let mut name = base.to_string();
                while taken.contains(&name) {
                    name.push('_');
                }
                format_ident!("{}", name)
            }
            Locals::Placeholders => format_ident!("{}{}", LOCAL, base),
        }
    }
}

/// Names every module binds in the value namespace besides temporaries ([`is_temp_name`]),
/// the [`Locals`] and what [`vocabulary`] adds for its functions: the arguments every
/// function takes, the types and the constants. (`str` is read off `&'static str`.)
const BOUND: &[&str] = &[
    "q",
    "p",
    "t",
    "str",
    // Types.
    "Params",
    "Model",
    "Kinematics",
    // Constants.
    "ATLAS_CHARTS",
    "CHARTS",
    "COORD_NAMES",
    "DOF",
    "FRICTION",
    "FRICTION_RADIUS",
    "FRICTION_ROWS",
    "INDEPENDENT",
    "INEQUALITY_NAMES",
    "JOINT_FRICTION",
    "JOINT_FRICTION_NAMES",
    "LU",
    "MASS_NONZEROS",
    "NAME",
    "NC",
    "NCHARTS",
    "NI",
    "NO",
    "NOMINAL_Q",
    "NOT_SMOOTH",
    "NP",
    "NQ",
    "NS",
    "NT",
    "OP_COUNTS",
    "OUTPUT_NAMES",
    "PARAM_NAMES",
    "PIVOT_COLS",
    "PIVOT_ROWS",
    "RANK",
    "REDUNDANT",
    "RESTITUTION",
    "RHEONOMIC",
    "TANGENT_CONTACT",
    "TYPICAL_HEALTH",
    "VELOCITY_ROWS",
];

/// The names the module of `table` binds besides temporaries and [`Locals`], which the
/// user's names must differ from: [`BOUND`]; the functions' arguments (`qd`, `b`, `w`);
/// `k` with charts beyond the primary (`null_space_in_chart`, `null_space_in_atlas`);
/// with the runtime's traits, `buffer` (`mass_matrix_into`) and `routes`, `R`
/// (`event_route`, with inequalities or joint friction); with the generic family, `S`,
/// and with the derivatives too, `out`, `out_p`, `o0`–`o2` (`GenericDynamics`'
/// reductions); each named chart's type and constant
/// ([`chart_item_names`](crate::model::chart_item_names)); the sparse outputs' constants
/// (`JACOBIAN_NNZ`, `…_COLPTR`, `…_ROWIDX`).
///
/// Known before emission, so that the module is emitted once with its final names; may
/// hold a name the module does not bind (a user's `k` is then `k_` needlessly), never miss
/// one: [`EmitOptions::check_names`](super::EmitOptions::check_names) checks it against the
/// names read off the emitted tokens, and the test suite runs every model of the
/// repository so.
pub(crate) fn vocabulary(
    model: &crate::model::Model,
    table: &[Entry],
    opts: &super::EmitOptions,
) -> HashSet<String> {
    let mut out: HashSet<String> = BOUND.iter().map(|s| s.to_string()).collect();
    let mut add = |n: &str| {
        out.insert(n.to_string());
    };
    let traits = opts.functions.is_none();
    if opts.generic || opts.scalar.is_generic() {
        add("S");
    }
    for entry in table {
        match entry {
            Entry::Function(f) => {
                f.inputs.names().iter().for_each(|n| add(n));
                if let Shape::Values { prefix, .. } = &f.shape {
                    for suffix in ["NNZ", "COLPTR", "ROWIDX"] {
                        add(&format!("{prefix}_{suffix}"));
                    }
                }
                if traits && f.name == "mass_matrix" {
                    add("buffer");
                }
            }
            // `null_space_in_chart`'s chart index, the trait's `null_space_in_atlas(k, …)`.
            Entry::Atlas(charts) if charts.len() > 1 => add("k"),
            Entry::InequalityNames(_) | Entry::JointFriction(_) if traits => {
                add("routes");
                add("R");
            }
            _ => {}
        }
    }
    // `impl GenericDynamics`'s reductions (`let [o0, o1, o2] = &mut out;`).
    let derivatives = table.iter().any(|e| {
        matches!(e, Entry::Function(f) if super::table::DERIVATIVE_FNS.contains(&f.name.as_str()))
    });
    if traits && opts.generic && derivatives {
        ["out", "out_p", "o0", "o1", "o2"]
            .iter()
            .for_each(|n| add(n));
    }
    for chart in &model.charts {
        let (ty, konst) = crate::model::chart_item_names(&chart.name);
        add(&ty);
        add(&konst);
    }
    out
}
