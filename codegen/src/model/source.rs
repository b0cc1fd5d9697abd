//! Where an expression is in the source and what it says there: spans and source text
//! for errors and constraint labels, found without recursing along long operator chains.

use syn::Expr;

use crate::error::joined;

/// The source text of `e` (for labels), found without recursing along a long binary
/// chain: syn's `Spanned` and `ToTokens` recurse once per operator, so a sum of 20,000
/// terms would overflow the stack there.
///
/// Where the span does not cover the whole expression (in a proc macro on stable, a span
/// is only the first token's), the tokens printed.
pub(super) fn source_text(e: &Expr) -> String {
    if deeper_than(e, crate::parse::depth::MAX_NESTING) {
        return joined(e)
            .source_text()
            .unwrap_or_else(|| "(a long expression)".to_string());
    }
    let tokens = quote::ToTokens::to_token_stream(e).to_string();
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    match joined(e).source_text() {
        Some(text) if squash(&text) == squash(&tokens) => text,
        _ => tokens,
    }
}

/// Whether the syntax tree of `e` is deeper than `limit` (an explicit stack: printing or
/// cloning a tree, which syn does recursively, overflows the stack on a long chain such as
/// a 20,000-term sum, also inside parentheses).
fn deeper_than(e: &Expr, limit: usize) -> bool {
    let mut stack = vec![(e, 0usize)];
    while let Some((e, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match e {
            Expr::Binary(b) => {
                stack.push((&b.left, d + 1));
                stack.push((&b.right, d + 1));
            }
            Expr::Paren(p) => stack.push((&p.expr, d + 1)),
            Expr::Group(g) => stack.push((&g.expr, d + 1)),
            Expr::Unary(u) => stack.push((&u.expr, d + 1)),
            Expr::Field(f) => stack.push((&f.base, d + 1)),
            Expr::Call(c) => {
                stack.push((&c.func, d + 1));
                stack.extend(c.args.iter().map(|a| (a, d + 1)));
            }
            Expr::MethodCall(m) => {
                stack.push((&m.receiver, d + 1));
                stack.extend(m.args.iter().map(|a| (a, d + 1)));
            }
            _ => {}
        }
    }
    false
}
