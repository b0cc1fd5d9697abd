//! The `mechanism!` proc macro: a thin adapter over `mechgen-codegen`.
//!
//! Use it through the run-time crate, `mechgen::mechanism!` (default feature `macros`);
//! see the `mechgen` crate docs for the language and the generated API.

use proc_macro::TokenStream;
use proc_macro2::{Delimiter, Spacing, TokenStream as TokenStream2, TokenTree};
use quote::ToTokens as _;

/// Generates a module of straight-line functions for each `mod` block of a mechanism
/// description: residual, Jacobian, null-space basis and dependent solve.
///
/// ```text
/// mechgen::mechanism! {
///     /// Planar slider crank.
///     pub mod slider_crank {
///         param l1 = 0.1;
///         param l2 = 0.3;
///         coord theta = 0.3;
///         coord beta = 1.4721;
///         coord s = 0.3941;
///         constraint vec2(l1 * cos(theta), l1 * sin(theta))
///             + vec2(l2 * sin(beta), -l2 * cos(beta)) == vec2(s, 0.0);
///     }
/// }
/// ```
///
/// The generated code refers to the run-time crate as `::mechgen`. When the dependency
/// has another name (`my_mechgen = { package = "mechgen", ... }`), say so first in the
/// block, beside `#![seed = N]`:
///
/// ```text
/// my_mechgen::mechanism! {
///     #![crate = "::my_mechgen"]
///     pub mod pendulum { ... }
/// }
/// ```
///
/// Mistakes in the description are compile errors at the offending tokens.
#[proc_macro]
pub fn mechanism(input: TokenStream) -> TokenStream {
    let mut opts = mechgen_codegen::Options::default();
    let body = match take_crate_option(input.into()) {
        Ok((Some(path), body)) => {
            opts.crate_path = path;
            body
        }
        Ok((None, body)) => body,
        Err(e) => return e.to_compile_error().into(),
    };
    match mechgen_codegen::expand(body, &opts) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_syn().to_compile_error().into(),
    }
}

/// What a malformed `#![crate = ...]` is told.
const CRATE_USAGE: &str =
    "the crate option names the run-time crate as a string literal path: `#![crate = \"::my_mechgen\"]`";

/// Removes a `#![crate = "path"]` from the leading inner attributes of the input and
/// returns the path (checked to be a plain path such as `::my_mechgen` or
/// `crate::vendored::mechgen`) and the remaining tokens; other attributes stay in place
/// for the engine.
fn take_crate_option(input: TokenStream2) -> syn::Result<(Option<String>, TokenStream2)> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut kept: Vec<TokenTree> = Vec::with_capacity(tokens.len());
    let mut path: Option<String> = None;
    let mut i = 0;
    while let (
        Some(TokenTree::Punct(hash)),
        Some(TokenTree::Punct(bang)),
        Some(TokenTree::Group(g)),
    ) = (tokens.get(i), tokens.get(i + 1), tokens.get(i + 2))
    {
        if hash.as_char() != '#' || bang.as_char() != '!' || g.delimiter() != Delimiter::Bracket {
            break;
        }
        let inner: Vec<TokenTree> = g.stream().into_iter().collect();
        match inner.first() {
            Some(TokenTree::Ident(id)) if id == "crate" => {
                if path.is_some() {
                    return Err(syn::Error::new(
                        g.span(),
                        "the crate option is given twice; keep one `#![crate = \"...\"]`",
                    ));
                }
                path = Some(crate_path(&inner, g.span())?);
            }
            _ => kept.extend(tokens[i..i + 3].iter().cloned()),
        }
        i += 3;
    }
    kept.extend(tokens[i..].iter().cloned());
    Ok((path, kept.into_iter().collect()))
}

/// Checks the tokens inside `#![...]`, `crate = "path"`, and returns the path.
fn crate_path(inner: &[TokenTree], span: proc_macro2::Span) -> syn::Result<String> {
    let value = match inner {
        [_, TokenTree::Punct(eq), value]
            if eq.as_char() == '=' && eq.spacing() == Spacing::Alone =>
        {
            value
        }
        [_] => return Err(syn::Error::new(span, CRATE_USAGE)),
        [_, rest @ ..] => {
            let rest: TokenStream2 = rest.iter().cloned().collect();
            return Err(syn::Error::new_spanned(rest, CRATE_USAGE));
        }
        [] => return Err(syn::Error::new(span, CRATE_USAGE)),
    };
    let lit: syn::LitStr = syn::parse2(value.to_token_stream())
        .map_err(|_| syn::Error::new(value.span(), CRATE_USAGE))?;
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
