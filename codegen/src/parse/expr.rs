//! Expressions of the common shapes, parsed straight off the tokens.
//!
//! Most expressions in a mechanism are literals, names, calls `f(a, b)`, parentheses,
//! unary `-` and the binary operators `+ - * /` and comparisons. syn's general `Expr`
//! parser tries every Rust form at every token (most of the parse time of a small
//! mechanism); [`expr`] parses these shapes by precedence climbing into the very `syn::Expr`
//! syn builds (same nodes, same spans), and hands anything else — any other token, an
//! operator written with other spacing, a chained comparison, a tuple — to syn, from the
//! expression's first token. syn then parses the input as it always did: its result and
//! its errors are unchanged.

use proc_macro2::{Delimiter, Spacing, Span};
use syn::buffer::Cursor;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{BinOp, Expr, ExprBinary, ExprCall, ExprLit, ExprParen, ExprPath, ExprUnary, Lit, UnOp};

/// An expression, as `input.parse::<Expr>()` parses it.
pub fn expr(input: ParseStream) -> syn::Result<Expr> {
    let fast = input.step(|c| {
        Ok(match binary(*c, Prec::Compare, 0) {
            Some((e, rest)) => (Some(e), rest),
            None => (None, *c),
        })
    })?;
    match fast {
        Some(e) => Ok(e),
        None => input.parse(),
    }
}

/// Binding strength of the binary operators parsed here (syn's order: weakest first).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    /// `==`, `!=`, `<`, `<=`, `>`, `>=` (not associative).
    Compare,
    /// `+`, `-`.
    Sum,
    /// `*`, `/`.
    Product,
}

impl Prec {
    /// The next stronger level (`Product` has none above it: its right operands are unary).
    fn above(self) -> Option<Prec> {
        match self {
            Prec::Compare => Some(Prec::Sum),
            Prec::Sum => Some(Prec::Product),
            Prec::Product => None,
        }
    }
}

/// Consecutive prefix `-` parsed here before the rest goes to syn (the nesting check bounds
/// them at [`super::depth::MAX_NESTING`]; this keeps the recursion here shallow whatever).
const MAX_PREFIX: usize = 32;

/// What follows an operand: a binary operator, the end of the expression (`,`, `;` or the
/// end of the tokens), or `None` for anything else (left to syn).
enum Next<'a> {
    /// A binary operator, its level and the cursor after it.
    Op(BinOp, Prec, Cursor<'a>),
    /// The expression ends here.
    End,
}

/// Whether the cursor is at an invisible (`Delimiter::None`) group: syn parses one as
/// `Expr::Group`, and the cursor's token readers would look through it.
fn at_none_group(c: Cursor) -> bool {
    c.group(Delimiter::None).is_some()
}

/// A `Punct` with its spacing at `c` (not inside an invisible group).
fn punct(c: Cursor) -> Option<(char, Spacing, Span, Cursor)> {
    if at_none_group(c) {
        return None;
    }
    c.punct()
        .map(|(p, rest)| (p.as_char(), p.spacing(), p.span(), rest))
}

fn next_op(c: Cursor) -> Option<Next> {
    if c.eof() {
        return Some(Next::End);
    }
    let (ch, spacing, span, rest) = punct(c)?;
    if ch == ',' || ch == ';' {
        return Some(Next::End);
    }
    if spacing == Spacing::Alone {
        let (op, prec) = match ch {
            '+' => (BinOp::Add(syn::token::Plus { spans: [span] }), Prec::Sum),
            '-' => (BinOp::Sub(syn::token::Minus { spans: [span] }), Prec::Sum),
            '*' => (
                BinOp::Mul(syn::token::Star { spans: [span] }),
                Prec::Product,
            ),
            '/' => (
                BinOp::Div(syn::token::Slash { spans: [span] }),
                Prec::Product,
            ),
            '<' => (BinOp::Lt(syn::token::Lt { spans: [span] }), Prec::Compare),
            '>' => (BinOp::Gt(syn::token::Gt { spans: [span] }), Prec::Compare),
            _ => return None,
        };
        return Some(Next::Op(op, prec, rest));
    }
    // Two characters: `==`, `!=`, `<=`, `>=` (the second one not joined to a third).
    let (second, spacing2, span2, rest2) = punct(rest)?;
    if second != '=' || spacing2 != Spacing::Alone {
        return None;
    }
    let spans = [span, span2];
    let op = match ch {
        '=' => BinOp::Eq(syn::token::EqEq { spans }),
        '!' => BinOp::Ne(syn::token::Ne { spans }),
        '<' => BinOp::Le(syn::token::Le { spans }),
        '>' => BinOp::Ge(syn::token::Ge { spans }),
        _ => return None,
    };
    Some(Next::Op(op, Prec::Compare, rest2))
}

/// Whether `e` is a comparison (syn rejects a comparison whose left operand is one).
fn is_comparison(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Binary(ExprBinary {
            op: BinOp::Eq(_)
                | BinOp::Ne(_)
                | BinOp::Lt(_)
                | BinOp::Le(_)
                | BinOp::Gt(_)
                | BinOp::Ge(_),
            ..
        })
    )
}

/// Operators of level `min` and stronger, left-associative (syn's tree); `depth` counts
/// the prefix `-` around.
fn binary(c: Cursor, min: Prec, depth: usize) -> Option<(Expr, Cursor)> {
    let (mut lhs, mut c) = unary(c, depth)?;
    loop {
        let (op, prec, rest) = match next_op(c) {
            Some(Next::Op(op, prec, rest)) => (op, prec, rest),
            Some(Next::End) => return Some((lhs, c)),
            None => return discard(lhs),
        };
        if prec < min {
            return Some((lhs, c));
        }
        if prec == Prec::Compare && is_comparison(&lhs) {
            return discard(lhs);
        }
        let right = match prec.above() {
            Some(p) => binary(rest, p, depth),
            None => unary(rest, depth),
        };
        let Some((right, after)) = right else {
            return discard(lhs);
        };
        lhs = Expr::Binary(ExprBinary {
            attrs: Vec::new(),
            left: Box::new(lhs),
            op,
            right: Box::new(right),
        });
        c = after;
    }
}

/// A prefix `-` and its operand, or an operand.
fn unary(c: Cursor, depth: usize) -> Option<(Expr, Cursor)> {
    if let Some((ch, spacing, span, rest)) = punct(c) {
        if ch != '-' || spacing != Spacing::Alone || depth >= MAX_PREFIX {
            return None;
        }
        let (operand, rest) = unary(rest, depth + 1)?;
        return Some((
            Expr::Unary(ExprUnary {
                attrs: Vec::new(),
                op: UnOp::Neg(syn::token::Minus { spans: [span] }),
                expr: Box::new(operand),
            }),
            rest,
        ));
    }
    operand(c)
}

/// A literal, a name, a call of a name, or a parenthesised expression.
fn operand(c: Cursor) -> Option<(Expr, Cursor)> {
    if at_none_group(c) {
        return None;
    }
    if let Some((lit, rest)) = c.literal() {
        let e = Expr::Lit(ExprLit {
            attrs: Vec::new(),
            lit: Lit::new(lit),
        });
        return Some((e, rest));
    }
    if let Some((inner, span, rest)) = c.group(Delimiter::Parenthesis) {
        let (e, end) = binary(inner, Prec::Compare, 0)?;
        if !end.eof() {
            // `(a, b)`, `(a,)`: a tuple.
            return discard(e);
        }
        let e = Expr::Paren(ExprParen {
            attrs: Vec::new(),
            paren_token: syn::token::Paren { span },
            expr: Box::new(e),
        });
        return Some((e, rest));
    }
    let (ident, rest) = c.ident()?;
    if is_reserved(&ident) {
        return None;
    }
    let path = Expr::Path(ExprPath {
        attrs: Vec::new(),
        qself: None,
        path: syn::Path::from(ident),
    });
    if at_none_group(rest) {
        return None;
    }
    let Some((args, span, after)) = rest.group(Delimiter::Parenthesis) else {
        return Some((path, rest));
    };
    let mut list = Punctuated::new();
    let mut a = args;
    while !a.eof() {
        let Some((e, end)) = binary(a, Prec::Compare, 0) else {
            return discard_all(list);
        };
        list.push_value(e);
        if end.eof() {
            break;
        }
        match punct(end) {
            Some((',', _, comma, next)) => {
                list.push_punct(syn::token::Comma { spans: [comma] });
                a = next;
            }
            _ => return discard_all(list),
        }
    }
    let e = Expr::Call(ExprCall {
        attrs: Vec::new(),
        func: Box::new(path),
        paren_token: syn::token::Paren { span },
        args: list,
    });
    Some((e, after))
}

/// Gives up on an expression built so far, taken apart without recursion (a long sum is a
/// chain as deep as it is long: dropped recursively, it would overflow the stack).
fn discard<T>(mut e: Expr) -> Option<T> {
    super::depth::dismantle(&mut e);
    None
}

/// [`discard`] of a call's arguments parsed so far.
fn discard_all<T>(list: Punctuated<Expr, syn::token::Comma>) -> Option<T> {
    for e in list {
        super::depth::dismantle(&mut { e });
    }
    None
}

/// Identifiers syn does not take as a name in an expression (keywords, `true`, `false`,
/// `_`): left to syn.
fn is_reserved(ident: &proc_macro2::Ident) -> bool {
    matches!(
        ident.to_string().as_str(),
        "_" | "abstract"
            | "as"
            | "async"
            | "await"
            | "become"
            | "box"
            | "break"
            | "builtin"
            | "const"
            | "continue"
            | "crate"
            | "do"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "final"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "macro"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "override"
            | "priv"
            | "pub"
            | "raw"
            | "ref"
            | "return"
            | "Self"
            | "self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "try"
            | "type"
            | "typeof"
            | "union"
            | "unsafe"
            | "unsized"
            | "use"
            | "virtual"
            | "where"
            | "while"
            | "yield"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;
    use syn::parse::Parser;

    /// The expression (debug form), every token's span, and the tokens left after it, or
    /// the error's message and span: as `parse` reads `text`.
    fn read(
        tokens: &proc_macro2::TokenStream,
        parse: fn(ParseStream) -> syn::Result<Expr>,
    ) -> String {
        let tokens = tokens.clone();
        let parser = |input: ParseStream| -> syn::Result<String> {
            let e = parse(input)?;
            let spans: Vec<String> = e
                .to_token_stream()
                .into_iter()
                .map(|t| span_text(&t))
                .collect();
            let rest: proc_macro2::TokenStream = input.parse()?;
            Ok(format!("{e:?} | {spans:?} | {rest}"))
        };
        match parser.parse2(tokens) {
            Ok(s) => s,
            Err(e) => format!("error {} at {:?}", e, e.span().start()),
        }
    }

    /// Start and end of the token's span, with those of a group's tokens.
    fn span_text(t: &proc_macro2::TokenTree) -> String {
        let s = t.span();
        let mut out = format!("{:?}-{:?}", s.start(), s.end());
        if let proc_macro2::TokenTree::Group(g) = t {
            for inner in g.stream() {
                out.push(' ');
                out.push_str(&span_text(&inner));
            }
        }
        out
    }

    #[test]
    fn same_tree_spans_and_errors_as_syn() {
        let cases = [
            "1.0",
            "x",
            "-x",
            "- - x",
            "l1 * cos(theta)",
            "vec2(l1 * cos(theta), l1 * sin(theta))",
            "crank + rod == vec2(s, 0.0)",
            "a - b - c * d / e + -f",
            "-a * b",
            "-f(x) / 2.0",
            "(a + b) * (c - d)",
            "((a))",
            "f()",
            "f(a,)",
            "f(a, b, c)",
            "g(f(a), -b, (c))",
            "a >= b",
            "a <= b, restitution = 0.5",
            "a < b",
            "a > -b;",
            "a != b",
            "m1 * l1 * l1 / 12.0, com = crank / 2.0",
            "1e-3 * x",
            "2 * x",
            "a == b == c",
            "a < b > c",
            "(a, b)",
            "(a,)",
            "()",
            "a.b",
            "a.sin()",
            "x[0]",
            "a::b",
            "f(a)(b)",
            "a as f64",
            "a += b",
            "a = b",
            "a..b",
            "a % b",
            "a && b",
            "a +- b",
            "a <- b",
            "a -= b",
            "a ==- b",
            "!a",
            "*a",
            "&a",
            "true",
            "if a { b } else { c }",
            "S { a: 1 }",
            "m!(a)",
            "self",
            "a + ",
            "f(a; b)",
            "f(a b)",
            "1.0.max(2.0)",
            "r#match + 1",
            "\"text\"",
            "a b",
            "#[x] a",
            "-",
            "",
        ];
        for case in cases {
            // Lexed once: both read the same spans.
            let tokens: proc_macro2::TokenStream = case.parse().expect("test input lexes");
            assert_eq!(read(&tokens, expr), read(&tokens, |i| i.parse()), "{case}");
        }
    }

    #[test]
    fn common_shapes_are_parsed_here() {
        let tokens: proc_macro2::TokenStream = "vec2(l1 * cos(theta), -l2 * (a + b)) == x"
            .parse()
            .expect("lexes");
        let parsed = (|input: ParseStream| {
            input.step(|c| {
                Ok(match binary(*c, Prec::Compare, 0) {
                    Some((e, rest)) => (Some(e), rest),
                    None => (None, *c),
                })
            })
        })
        .parse2(tokens)
        .expect("parses");
        assert!(parsed.is_some());
    }
}
