//! Parsing the mechanism language (the body of `mechanism!` and `.mech` files) with syn.
//! The grammar is in [`ast`].

pub mod ast;
pub mod depth;
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
    let tokens = stray_characters(tokens, &mut errors);
    errors.finish()?;
    let tokens = unroll::unroll(tokens)?;
    let tokens = functions::inline(tokens)?;
    Ok(syn::parse2::<ast::File>(tokens)?)
}

/// Characters with no meaning anywhere in a mechanism description.
const STRAY: &str = "$@~?\\";

/// Reports every stray character of `tokens` to `errors`; gives the tokens back (taken
/// apart and put together by moving: no copy of them).
fn stray_characters(tokens: TokenStream, errors: &mut crate::error::Errors) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|tt| match tt {
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
                let mut ng = Group::new(delimiter, stray_characters(stream, errors));
                ng.set_span(span);
                TokenTree::Group(ng)
            }
            other => other,
        })
        .collect()
}
