//! Parsing the mechanism language (the body of `mechanism!` and `.mech` files) with syn.
//! The grammar is in [`ast`].

pub mod ast;
pub mod depth;
mod expr;
pub mod functions;
pub mod unroll;

use proc_macro2::TokenStream;

use crate::error::Result;

/// Parses a whole input: optional file-level options and one or more `mod` blocks.
///
/// Characters that mean nothing in the language (`$`, `@`, `~`, `?`, `\`) are reported
/// first, all of them, each named at its location.
pub fn parse_file(tokens: TokenStream) -> Result<ast::File> {
    // The depth first: the scans below (and syn) recurse into groups.
    depth::check_nesting(&tokens)?;
    let mut errors = crate::error::Errors::new();
    let mut seen = Seen::default();
    let tokens = stray_characters(tokens, &mut errors, &mut seen);
    errors.finish()?;
    // Each pass rebuilds every group: skipped when the tokens hold nothing it expands
    // (it would give them back unchanged).
    let tokens = if seen.families {
        unroll::unroll(tokens)?
    } else {
        tokens
    };
    let tokens = if seen.functions || seen.families {
        functions::inline(tokens)?
    } else {
        tokens
    };
    Ok(syn::parse2::<ast::File>(tokens)?)
}

/// Characters with no meaning anywhere in a mechanism description.
const STRAY: &str = "$@~?\\";

/// What [`stray_characters`] saw on its way that the passes after it act on.
#[derive(Default)]
struct Seen {
    /// A `for` or `const` identifier, or an identifier followed by `[…]`: something
    /// [`unroll::unroll`] may expand.
    families: bool,
    /// A `fn` identifier: a definition for [`functions::inline`].
    functions: bool,
}

/// Reports every stray character of `tokens` to `errors`, and notes in `seen` what the
/// later passes act on; gives the tokens back (taken apart and put together by moving: no
/// copy of them).
fn stray_characters(
    tokens: TokenStream,
    errors: &mut crate::error::Errors,
    seen: &mut Seen,
) -> TokenStream {
    use proc_macro2::{Delimiter, Group, TokenTree};
    let mut after_ident = false;
    tokens
        .into_iter()
        .map(|tt| {
            let ident = matches!(tt, TokenTree::Ident(_));
            match &tt {
                TokenTree::Ident(id) => {
                    if id == "for" || id == "const" {
                        seen.families = true;
                    } else if id == "fn" {
                        seen.functions = true;
                    }
                }
                TokenTree::Group(g) if after_ident && g.delimiter() == Delimiter::Bracket => {
                    seen.families = true;
                }
                _ => {}
            }
            after_ident = ident;
            match tt {
                TokenTree::Punct(ref p) if STRAY.contains(p.as_char()) => {
                    errors.push(crate::error::Error::new(
                        p.span(),
                        format!(
                            "unexpected character `{}`: not part of the mechanism language",
                            p.as_char()
                        ),
                    ));
                    tt
                }
                TokenTree::Group(g) => {
                    let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
                    drop(g);
                    let mut ng = Group::new(delimiter, stray_characters(stream, errors, seen));
                    ng.set_span(span);
                    TokenTree::Group(ng)
                }
                other => other,
            }
        })
        .collect()
}
