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
    // The depth first (the passes below and syn recurse into groups), in the same walk
    // as the stray characters: a depth error is the one reported, whatever else the
    // tokens hold, as [`depth::check_nesting`] would report it.
    let mut errors = crate::error::Errors::new();
    let mut seen = Seen::default();
    let tokens = stray_characters(tokens, &mut errors, &mut seen)?;
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
/// copy of them). Checks the nesting on the way ([`depth::Runs`], as
/// [`depth::check_nesting`] does), without recursion: the first token nested too deeply
/// is the error, in the order `check_nesting` meets the tokens.
fn stray_characters(
    tokens: TokenStream,
    errors: &mut crate::error::Errors,
    seen: &mut Seen,
) -> Result<TokenStream> {
    use proc_macro2::{Delimiter, Group, Span, TokenTree};
    /// One open group: its tokens still to read, those read, its nesting counters,
    /// whether the last token read was an identifier, and its delimiter and span (`None`
    /// for the outermost level).
    struct Level {
        tokens: proc_macro2::token_stream::IntoIter,
        out: Vec<TokenTree>,
        runs: depth::Runs,
        after_ident: bool,
        group: Option<(Delimiter, Span)>,
    }
    let level = |tokens: TokenStream, group| Level {
        tokens: tokens.into_iter(),
        out: Vec::new(),
        runs: depth::Runs::default(),
        after_ident: false,
        group,
    };
    let mut stack = vec![level(tokens, None)];
    loop {
        let depth = stack.len();
        let Some(top) = stack.last_mut() else {
            // Not reached: the outermost level returns below.
            return Ok(TokenStream::new());
        };
        let Some(tt) = top.tokens.next() else {
            let Some(done) = stack.pop() else {
                return Ok(TokenStream::new());
            };
            let stream: TokenStream = done.out.into_iter().collect();
            match (done.group, stack.last_mut()) {
                (Some((delimiter, span)), Some(parent)) => {
                    let mut g = Group::new(delimiter, stream);
                    g.set_span(span);
                    parent.out.push(TokenTree::Group(g));
                }
                _ => return Ok(stream),
            }
            continue;
        };
        top.runs.visit(&tt, depth)?;
        let ident = matches!(tt, TokenTree::Ident(_));
        match &tt {
            TokenTree::Ident(id) => {
                if id == "for" || id == "const" {
                    seen.families = true;
                } else if id == "fn" {
                    seen.functions = true;
                }
            }
            TokenTree::Group(g) if top.after_ident && g.delimiter() == Delimiter::Bracket => {
                seen.families = true;
            }
            _ => {}
        }
        top.after_ident = ident;
        match tt {
            TokenTree::Punct(ref p) if STRAY.contains(p.as_char()) => {
                errors.push(crate::error::Error::new(
                    p.span(),
                    format!(
                        "unexpected character `{}`: not part of the mechanism language",
                        p.as_char()
                    ),
                ));
                top.out.push(tt);
            }
            TokenTree::Group(g) => {
                // The group dropped before its stream is read: its tokens are moved.
                let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
                drop(g);
                stack.push(level(stream, Some((delimiter, span))));
            }
            other => top.out.push(other),
        }
    }
}
