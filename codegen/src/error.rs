//! Errors of the engine, located at source tokens.

use std::fmt;

use proc_macro2::Span;
use quote::ToTokens;

/// An error in a mechanism description, located at the offending tokens.
///
/// The proc macro turns it into `compile_error!` at `span`; the build.rs
/// [`Builder`](crate::Builder) formats it as `path:line:col: message` with a caret
/// excerpt.
#[derive(Clone, Debug)]
pub struct Error {
    /// Where the problem is (start and end of the offending tokens where the span
    /// can be joined; in a proc macro on stable Rust, the first token).
    pub span: Span,
    /// What is wrong, and where possible how to fix it.
    pub message: String,
    /// The last offending token, so that `compile_error!` underlines the whole range
    /// even where spans cannot be joined.
    end: Span,
}

impl Error {
    /// An error at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
            end: span,
        }
    }

    /// An error covering all tokens of `node`, from its first to its last.
    pub fn spanned(node: &impl ToTokens, message: impl Into<String>) -> Self {
        let tokens = node.to_token_stream();
        // Joined where the platform joins spans (build.rs), else the first token.
        let span = syn::spanned::Spanned::span(&tokens);
        let end = tokens.into_iter().last().map_or(span, |t| t.span());
        Self {
            span,
            message: message.into(),
            end,
        }
    }

    /// Converts into a `syn::Error` (for `compile_error!`), spanning from the first to
    /// the last offending token.
    pub fn to_syn(&self) -> syn::Error {
        let start = proc_macro2::Ident::new("start", self.span);
        let end = proc_macro2::Ident::new("end", self.end);
        syn::Error::new_spanned(quote::quote!(#start #end), &self.message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<syn::Error> for Error {
    fn from(e: syn::Error) -> Self {
        Self::new(e.span(), e.to_string())
    }
}

/// Result type of the engine.
pub type Result<T> = std::result::Result<T, Error>;

/// The name in `known` closest to `name` (Levenshtein distance at most a third of its
/// length, at least 1), for "did you mean" hints.
pub fn nearest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    known
        .into_iter()
        .map(|k| (levenshtein(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
