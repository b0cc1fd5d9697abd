//! Local names in generated code: the user's names are allocated around the names the
//! generated code binds itself, read off the emitted tokens.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, TokenStream};
use quote::format_ident;

use super::expr::SymNames;

/// Prefix of the placeholder names of [`module`]'s first emission.
pub(crate) const PLACEHOLDER: &str = "__mechgen_sym";

/// Replaces the placeholders throughout `ts`: those named in `map` (by their text), and
/// every [`local`] by its name free of `taken` (found as it is met: one pass over the
/// tokens, one reused buffer for the identifiers' text).
pub(crate) fn replace_idents(
    ts: TokenStream,
    map: &mut HashMap<String, Ident>,
    taken: &HashSet<String>,
) -> TokenStream {
    let mut buf = String::new();
    replace_in(ts, map, taken, &mut buf)
}

fn replace_in(
    ts: TokenStream,
    map: &mut HashMap<String, Ident>,
    taken: &HashSet<String>,
    buf: &mut String,
) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    use std::fmt::Write as _;
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Ident(id) => {
                buf.clear();
                let _ = write!(buf, "{id}");
                if !buf.starts_with(PLACEHOLDER) {
                    return TokenTree::Ident(id);
                }
                if let Some(new) = map.get(buf.as_str()) {
                    return TokenTree::Ident(new.clone());
                }
                match buf.strip_prefix(LOCAL) {
                    Some(base) => {
                        let new = local_name(base, taken);
                        map.insert(buf.clone(), new.clone());
                        TokenTree::Ident(new)
                    }
                    None => TokenTree::Ident(id),
                }
            }
            TokenTree::Group(g) => {
                // The group is dropped before its stream is iterated: proc_macro2 then owns
                // the stream's tokens alone and moves them instead of copying them (every
                // identifier's text) once per level of nesting.
                let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
                drop(g);
                let mut ng = Group::new(delimiter, replace_in(stream, map, taken, buf));
                ng.set_span(span);
                TokenTree::Group(ng)
            }
            other => other,
        })
        .collect()
}

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
/// `live3`, `b_0`, `sin_…`, `cos_…`, `forces_part1`.
fn is_temp_name(s: &str) -> bool {
    let digits_after = |prefix: &str| {
        s.strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|c| c.is_ascii_digit()))
    };
    digits_after("t")
        || digits_after("live")
        || digits_after("b_")
        || s.starts_with("sin_")
        || s.starts_with("cos_")
        || s.rsplit_once("_part")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// Prefix of the placeholders of generated locals (output buffers, the health figure's
/// terms), named after the user's names: see [`local`].
const LOCAL: &str = "__mechgen_sym_local_";

/// A local of generated code that gives way to the user's names: `base` unless a
/// coordinate, velocity or parameter (or an item) is named so, else `base_`, `base__`, …
/// (see [`replace_idents`]). The user's names are the ones users read and write in docs
/// and diffs; the locals are the generated code's own.
pub(crate) fn local(base: &str) -> Ident {
    format_ident!("{}{}", LOCAL, base)
}

/// The name of the [`local`] `base`: `base`, or `base_`, `base__`, … free of `taken`.
fn local_name(base: &str, taken: &HashSet<String>) -> Ident {
    let mut name = base.to_string();
    while taken.contains(&name) {
        name.push('_');
    }
    format_ident!("{}", name)
}
