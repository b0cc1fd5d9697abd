//! A bound on how deeply the input nests, checked on the tokens before syn sees them.
//!
//! syn parses nested groups and prefix operators recursively, and the proc macro runs
//! on rustc's thread with whatever stack is left (a debug-built proc macro spends about
//! 13 KiB of stack per level of parentheses: rustc crashed from about 600 levels). The
//! scan below is iterative and rejects, with an error at the offending token, inputs
//! that nest deeper than [`MAX_NESTING`]: groups (`(...)`, `[...]`, `{...}`) inside
//! groups, runs of prefix operators (`- - - x`), and chains of `.` (method calls and
//! fields) at one level. Long flat sums (`a + b + c + ...`) are not nesting: syn parses
//! them in a loop and the lowering flattens them.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::Expr;

use super::ast;

use crate::error::{Error, Result};

/// The deepest nesting accepted: groups within groups, consecutive prefix operators, or
/// chained `.method()`/`.field` accesses in one expression. Real mechanisms nest a few
/// levels; 128 keeps a debug-built proc macro about 1.7 MiB deep into its stack (rustc's
/// main thread has 8 MiB).
pub const MAX_NESTING: usize = 128;

/// Checks that `tokens` nest no deeper than [`MAX_NESTING`], without recursion.
pub fn check_nesting(tokens: &TokenStream) -> Result<()> {
    // One iterator per open group; the stack is the nesting.
    let mut stack: Vec<proc_macro2::token_stream::IntoIter> = vec![tokens.clone().into_iter()];
    // Per open group: consecutive prefix operators and `.` accesses since the last
    // separator.
    let mut runs: Vec<Runs> = vec![Runs::default()];
    while let Some(iter) = stack.last_mut() {
        let Some(tt) = iter.next() else {
            stack.pop();
            runs.pop();
            continue;
        };
        let Some(run) = runs.last_mut() else {
            break;
        };
        run.visit(&tt, stack.len())?;
        if let TokenTree::Group(g) = tt {
            stack.push(g.stream().into_iter());
            runs.push(Runs::default());
        }
    }
    Ok(())
}

/// Counters of one group level.
#[derive(Clone, Copy, Debug)]
pub(super) struct Runs {
    /// Whether the next token starts an operand (so `-` is a prefix operator there).
    expect_operand: bool,
    /// Consecutive prefix operators.
    prefix: usize,
    /// `.` accesses since the last `;` or `,`.
    dots: usize,
}

impl Default for Runs {
    fn default() -> Self {
        Self {
            expect_operand: true,
            prefix: 0,
            dots: 0,
        }
    }
}

impl Runs {
    /// Counts `tt`, a token of this level, which is `depth` groups deep (the outermost
    /// tokens are 1 deep): an error at `tt` when it is a group deeper than
    /// [`MAX_NESTING`], or makes a run of prefix operators or `.` accesses too long.
    pub(super) fn visit(&mut self, tt: &TokenTree, depth: usize) -> Result<()> {
        match tt {
            TokenTree::Group(g) => {
                self.after_operand();
                // A `None`-delimited group is invisible in the source (a macro's
                // `$e`), but syn still recurses into it.
                if depth > MAX_NESTING {
                    return Err(too_deep(
                        g.span_open(),
                        format!(
                            "{} nested deeper than {MAX_NESTING} levels",
                            match g.delimiter() {
                                Delimiter::Parenthesis => "parentheses",
                                Delimiter::Bracket => "brackets",
                                Delimiter::Brace => "braces",
                                Delimiter::None => "groups",
                            }
                        ),
                    ));
                }
            }
            TokenTree::Punct(p) => match p.as_char() {
                ';' | ',' => *self = Runs::default(),
                '.' => {
                    self.prefix = 0;
                    self.dots += 1;
                    if self.dots > MAX_NESTING {
                        return Err(too_deep(
                            p.span(),
                            format!(
                                "more than {MAX_NESTING} chained `.` accesses in one expression"
                            ),
                        ));
                    }
                }
                '-' | '!' | '*' | '&' if self.expect_operand => {
                    self.prefix += 1;
                    if self.prefix > MAX_NESTING {
                        return Err(too_deep(
                            p.span(),
                            format!("more than {MAX_NESTING} prefix operators in a row"),
                        ));
                    }
                }
                _ => {
                    // A binary operator (or the `=`/`==` of an item): an operand follows.
                    self.prefix = 0;
                    self.expect_operand = true;
                }
            },
            TokenTree::Ident(_) | TokenTree::Literal(_) => self.after_operand(),
        }
        Ok(())
    }

    fn after_operand(&mut self) {
        self.prefix = 0;
        self.expect_operand = false;
    }
}

fn too_deep(span: Span, what: String) -> Error {
    Error::new(
        span,
        format!(
            "the input nests too deeply: {what} (the bound protects the parser's stack); \
             split the expression with `let` bindings"
        ),
    )
}

/// Takes `e` apart with a loop, so that dropping a long chain (a sum of 20,000 terms is
/// a syn tree 20,000 deep) does not recurse once per operator.
pub fn dismantle(e: &mut Expr) {
    let mut stack = vec![std::mem::replace(e, Expr::Verbatim(TokenStream::new()))];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Binary(b) => {
                stack.push(*b.left);
                stack.push(*b.right);
            }
            Expr::Unary(u) => stack.push(*u.expr),
            Expr::Paren(p) => stack.push(*p.expr),
            Expr::Group(g) => stack.push(*g.expr),
            Expr::Field(f) => stack.push(*f.base),
            Expr::Call(c) => {
                stack.push(*c.func);
                stack.extend(c.args);
            }
            Expr::MethodCall(m) => {
                stack.push(*m.receiver);
                stack.extend(m.args);
            }
            // Anything else nests only as deep as the token bound allows.
            other => drop(other),
        }
    }
}

impl Drop for ast::Field {
    fn drop(&mut self) {
        dismantle(&mut self.value);
    }
}

impl Drop for ast::Item {
    fn drop(&mut self) {
        match self {
            ast::Item::Param {
                default: Some(e), ..
            }
            | ast::Item::Coord {
                nominal: Some(e), ..
            }
            | ast::Item::Const { value: e, .. }
            | ast::Item::Let { value: e, .. }
            | ast::Item::Frame { value: e, .. }
            | ast::Item::Constraint { equation: e, .. }
            | ast::Item::Joint { value: e, .. }
            | ast::Item::VelocityConstraint { equation: e }
            | ast::Item::Gravity { value: e, .. }
            | ast::Item::Force { value: e, .. } => dismantle(e),
            ast::Item::MassMatrix { entries } => {
                for (_, _, e) in entries {
                    dismantle(e);
                }
            }
            // Fields dismantle themselves.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn check(src: &str) -> std::result::Result<(), String> {
        let ts = TokenStream::from_str(src).map_err(|e| e.to_string())?;
        check_nesting(&ts).map_err(|e| e.message)
    }

    #[test]
    fn bound_is_inclusive() {
        // The module's braces are one level: 127 parentheses inside reach 128.
        let ok = format!("mod m {{ {}x{} }}", "(".repeat(127), ")".repeat(127));
        assert_eq!(check(&ok), Ok(()));
        let bad = format!("mod m {{ {}x{} }}", "(".repeat(128), ")".repeat(128));
        assert_eq!(
            check(&bad),
            Err("the input nests too deeply: parentheses nested deeper than 128 levels (the bound protects the parser's stack); split the expression with `let` bindings".to_string())
        );
    }

    #[test]
    fn prefix_runs_and_dot_chains() {
        let ok = format!("let a = {}x;", "- ".repeat(128));
        assert_eq!(check(&ok), Ok(()));
        let bad = format!("let a = {}x;", "- ".repeat(129));
        assert!(check(&bad)
            .unwrap_err()
            .contains("more than 128 prefix operators"));
        // Binary minus is not a prefix run.
        let sum = format!("let a = x{};", " - x".repeat(10_000));
        assert_eq!(check(&sum), Ok(()));
        let chain = format!("let a = x{};", ".sin()".repeat(129));
        assert!(check(&chain)
            .unwrap_err()
            .contains("more than 128 chained `.` accesses"));
        let chain_ok = format!(
            "let a = x{}; let b = x{};",
            ".sin()".repeat(128),
            ".cos()".repeat(128)
        );
        assert_eq!(check(&chain_ok), Ok(()));
    }
}
