//! Errors of the engine, located at source tokens.

use std::fmt;

use proc_macro2::Span;
use quote::ToTokens;

/// An error in a mechanism description, located at the offending tokens.
///
/// The proc macro turns it into `compile_error!` at `span`;
/// [`generate_file_text`](crate::generate_file_text) (what `mechgen_build::Builder` and the
/// command line call) formats it as `path:line:col: message` with a caret excerpt.
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
    /// Further independent errors of the same input, found in the same pass.
    others: Vec<Error>,
    /// A consequence of an earlier error (a use of a name whose declaration failed):
    /// dropped when errors are collected, so that one mistake is reported once.
    cascade: bool,
}

impl Error {
    /// An error at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Self {
            span,
            message: message.into(),
            end: span,
            others: Vec::new(),
            cascade: false,
        }
    }

    /// An error caused by an earlier one (see [`Error::is_cascade`]).
    pub fn cascade(span: Span, message: impl Into<String>) -> Self {
        Self {
            cascade: true,
            ..Self::new(span, message)
        }
    }

    /// Whether this error only follows from an earlier one (a use of a name whose
    /// declaration was in error); [`Errors`] drops these.
    pub fn is_cascade(&self) -> bool {
        self.cascade
    }

    /// Adds the errors of `other` after those of `self`.
    pub fn combine(&mut self, mut other: Error) {
        let more = std::mem::take(&mut other.others);
        self.others.push(other);
        self.others.extend(more);
    }

    /// This error and the others found with it, in source order of discovery.
    pub fn iter(&self) -> impl Iterator<Item = &Error> {
        std::iter::once(self).chain(self.others.iter())
    }

    /// How many errors this carries (1 plus the others).
    pub fn count(&self) -> usize {
        1 + self.others.len()
    }

    /// An error covering all tokens of `node`, from its first to its last ([`Located`]:
    /// expressions are bounded without being printed).
    pub fn spanned(node: &impl Located, message: impl Into<String>) -> Self {
        let (span, end) = node.bounds();
        Self {
            // Joined where the platform joins spans (build.rs), else the first token.
            span: span.join(end).unwrap_or(span),
            message: message.into(),
            end,
            others: Vec::new(),
            cascade: false,
        }
    }

    /// Converts into a `syn::Error` (for `compile_error!`), spanning from the first to
    /// the last offending token.
    /// Converts into a `syn::Error` (for `compile_error!`), spanning from the first to
    /// the last offending token; the other errors are combined into it (one
    /// `compile_error!` each).
    pub fn to_syn(&self) -> syn::Error {
        let one = |e: &Error| {
            let start = proc_macro2::Ident::new("start", e.span);
            let end = proc_macro2::Ident::new("end", e.end);
            syn::Error::new_spanned(quote::quote!(#start #end), &e.message)
        };
        let mut all = one(self);
        for e in &self.others {
            all.combine(one(e));
        }
        all
    }
}

impl fmt::Display for Error {
    /// The message; with several errors, one per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for e in &self.others {
            write!(f, "\n{}", e.message)?;
        }
        Ok(())
    }
}

/// Collects the independent errors of one pass (serde_derive's `Ctxt` pattern): push
/// each, then [`Errors::finish`] gives all of them as one [`Error`].
#[derive(Debug, Default)]
pub struct Errors {
    first: Option<Error>,
}

impl Errors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `e` (with the errors it carries); cascades of earlier errors are dropped.
    pub fn push(&mut self, e: Error) {
        let all: Vec<Error> = e
            .iter()
            .filter(|x| !x.cascade)
            .map(|x| Error {
                others: Vec::new(),
                ..x.clone()
            })
            .collect();
        if all.is_empty() {
            // Only cascades: keep one so that the pass still fails, if nothing else.
            if self.first.is_none() {
                self.first = Some(e);
            }
            return;
        }
        for x in all {
            match &mut self.first {
                Some(f) if f.cascade => self.first = Some(x),
                Some(f) => f.combine(x),
                None => self.first = Some(x),
            }
        }
    }

    /// Records the error of `r`, if any, and gives its value.
    pub fn check<T>(&mut self, r: Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(e);
                None
            }
        }
    }

    /// Whether an error was recorded.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// `Ok(())` if nothing was recorded, else all errors as one.
    pub fn finish(self) -> Result<()> {
        match self.first {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

impl std::error::Error for Error {}

impl From<syn::Error> for Error {
    /// Every message of a combined `syn::Error`, each at its own span.
    fn from(e: syn::Error) -> Self {
        let mut all = e.into_iter().map(|x| Self::new(x.span(), x.to_string()));
        let mut first = match all.next() {
            Some(f) => f,
            None => return Self::new(proc_macro2::Span::call_site(), "parse error"),
        };
        for x in all {
            first.combine(x);
        }
        first
    }
}

/// Result type of the engine.
pub type Result<T> = std::result::Result<T, Error>;

/// The name in `known` closest to `name` (edit distance at most a third of its length, at
/// least 1; an adjacent transposition, `rdo2` for `rod2`, counts as one edit), for "did you
/// mean" hints.
pub fn nearest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    known
        .into_iter()
        .map(|k| (osa_distance(name, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of adjacent characters, each one edit.
fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for j in 0..=b.len() {
        d[j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// A syntax node an [`Error`] can cover: the spans of its first and last tokens.
///
/// Expressions are bounded with loops down their operands: syn prints
/// a tree recursively, once per operator of a long sum, and an error on a sum of tens of
/// thousands of terms (found by the fuzzer) overflowed the stack. Other nodes are small and
/// are printed.
pub trait Located {
    /// The spans of the first and the last token.
    fn bounds(&self) -> (Span, Span);
}

impl Located for syn::Expr {
    fn bounds(&self) -> (Span, Span) {
        expr_bounds(self)
    }
}

impl Located for syn::ExprCall {
    fn bounds(&self) -> (Span, Span) {
        (expr_bounds(&self.func).0, self.paren_token.span.close())
    }
}

impl Located for syn::ExprMethodCall {
    fn bounds(&self) -> (Span, Span) {
        (expr_bounds(&self.receiver).0, self.paren_token.span.close())
    }
}

impl Located for syn::ExprAssign {
    fn bounds(&self) -> (Span, Span) {
        (expr_bounds(&self.left).0, expr_bounds(&self.right).1)
    }
}

/// The bounds themselves: the first and the last token of a range built from several
/// nodes (the operands of a chain of operators).
impl Located for (Span, Span) {
    fn bounds(&self) -> (Span, Span) {
        *self
    }
}

impl<T: Located + ?Sized> Located for &T {
    fn bounds(&self) -> (Span, Span) {
        (**self).bounds()
    }
}

impl<T: Located + ?Sized> Located for Box<T> {
    fn bounds(&self) -> (Span, Span) {
        (**self).bounds()
    }
}

/// The span of `node` from its first to its last token where spans join (else the first
/// token): syn's `Spanned` without printing expressions.
pub(crate) fn joined(node: &impl Located) -> Span {
    let (first, last) = node.bounds();
    first.join(last).unwrap_or(first)
}

/// Nodes without operands: printed.
macro_rules! printed {
    ($($t:ty),* $(,)?) => {$(
        impl Located for $t {
            fn bounds(&self) -> (Span, Span) {
                printed_bounds(self)
            }
        }
    )*};
}

printed!(syn::Ident, syn::Lit, syn::ExprLit);

/// The spans of the first and the last token of `e`, found with loops down the operands of
/// binary, unary, call, method and field nodes instead of printing the whole tree (syn's
/// `Spanned` prints it, recursing once per operator of a long sum). Other nodes (paths,
/// assignments, arrays, …) are printed.
pub(crate) fn expr_bounds(e: &syn::Expr) -> (Span, Span) {
    use syn::spanned::Spanned;
    use syn::Expr;
    let mut first = e;
    let first_span = loop {
        match first {
            Expr::Binary(b) => first = &b.left,
            Expr::MethodCall(m) => first = &m.receiver,
            Expr::Field(f) => first = &f.base,
            Expr::Call(c) => first = &c.func,
            Expr::Unary(u) => break u.op.span(),
            Expr::Paren(p) => break p.paren_token.span.open(),
            Expr::Lit(l) => break l.lit.span(),
            Expr::Path(p) if plain_path(p) => {
                break match &p.path.leading_colon {
                    Some(c) => c.spans[0],
                    None => p.path.segments[0].ident.span(),
                }
            }
            other => break printed_bounds(other).0,
        }
    };
    let mut last = e;
    let last_span = loop {
        match last {
            Expr::Binary(b) => last = &b.right,
            Expr::Unary(u) => last = &u.expr,
            Expr::MethodCall(m) => break m.paren_token.span.close(),
            Expr::Call(c) => break c.paren_token.span.close(),
            Expr::Field(f) => break f.member.span(),
            Expr::Paren(p) => break p.paren_token.span.close(),
            Expr::Lit(l) => break l.lit.span(),
            Expr::Path(p) if plain_path(p) => {
                break p.path.segments[p.path.segments.len() - 1].ident.span()
            }
            other => break printed_bounds(other).1,
        }
    };
    (first_span, last_span)
}

/// Whether `p` prints as its segments' identifiers alone (with a leading `::` at most):
/// no attributes, no `<T>::` qualifier, no generic arguments, at least one segment. Its
/// first token is then the leading `::` or the first identifier, its last token the last
/// identifier (what [`printed_bounds`] finds, without printing it).
fn plain_path(p: &syn::ExprPath) -> bool {
    p.attrs.is_empty()
        && p.qself.is_none()
        && !p.path.segments.is_empty()
        && p.path.segments.iter().all(|s| s.arguments.is_none())
}

/// The first and last token spans of `node`, printed (once: the tokens are read by moving).
fn printed_bounds(node: &impl ToTokens) -> (Span, Span) {
    let mut tokens = node.to_token_stream().into_iter();
    let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
    let last = tokens.last().map_or(first, |t| t.span());
    (first, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transposition_is_one_edit() {
        assert_eq!(osa_distance("rdo2", "rod2"), 1);
        assert_eq!(osa_distance("theta", "thetta"), 1);
        assert_eq!(osa_distance("abc", "xyz"), 3);
        assert_eq!(nearest("rdo2", ["rod2", "crank"]), Some("rod2"));
    }
}
