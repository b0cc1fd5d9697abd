//! Errors of the engine, located at source tokens.

use std::fmt;

use proc_macro2::Span;

/// An error in a mechanism description, located at the offending tokens.
///
/// The proc macro turns it into `compile_error!` at `span`; the build.rs
/// [`Builder`](crate::Builder) formats it as `path:line:col: message` with a caret
/// excerpt.
#[derive(Clone, Debug)]
pub struct Error {
    /// Where the problem is (start and end of the offending tokens).
    pub span: Span,
    /// What is wrong, and where possible how to fix it.
    pub message: String,
}

impl Error {
    /// An error at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
        }
    }

    /// Converts into a `syn::Error` (for `compile_error!`).
    pub fn to_syn(&self) -> syn::Error {
        syn::Error::new(self.span, &self.message)
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
        Self {
            span: e.span(),
            message: e.to_string(),
        }
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
