//! Families: `for` loops, indexed names and constant arrays, expanded on the tokens before
//! the items are parsed.
//!
//! * `for i in A..B { items }` repeats its items for `i = A, …, B − 1` (`A`, `B` constant
//!   integer expressions; loops nest). Inside, `i` is the number `k` (`2.0 * pi * i / 6.0`).
//! * `NAME[index]`, with `index` a constant integer expression of integer literals and loop
//!   variables (`+ - * / %`, parentheses), is the name `NAME_k`: `coord x[i] = …;` declares
//!   `x_0`, `x_1`, …, and `x[i + 1]` reads the next one.
//! * `const NAME = [e0, e1, …];` declares `NAME_0 = e0`, `NAME_1 = e1`, … (any values: numbers,
//!   vectors); `NAME[k]` past its end is an error.
//!
//! Tokens keep their spans, so errors inside a loop point at the loop's source.

use std::collections::HashMap;

use proc_macro2::{Delimiter, Group, Ident, Literal, Span, TokenStream, TokenTree};

use crate::error::{Error, Result};

/// Most repetitions of one loop (a typo such as `0..1000000` would otherwise flood the
/// compiler).
pub const MAX_ITERATIONS: i64 = 10_000;

/// Expands every loop, indexed name and constant array of `tokens`.
pub fn unroll(tokens: TokenStream) -> Result<TokenStream> {
    let mut arrays = HashMap::new();
    expand(tokens, &HashMap::new(), &mut arrays)
}

fn expand(
    tokens: TokenStream,
    vars: &HashMap<String, i64>,
    arrays: &mut HashMap<String, usize>,
) -> Result<TokenStream> {
    let mut tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = TokenStream::new();
    let mut k = 0;
    // A token passed on is moved out of `tts` (the scans above read only from `k` on):
    // no copy of identifiers' text, and a group's stream, owned alone, is read without one.
    let take = |tts: &mut [TokenTree], k: usize| {
        std::mem::replace(
            &mut tts[k],
            TokenTree::Punct(proc_macro2::Punct::new('.', proc_macro2::Spacing::Alone)),
        )
    };
    while k < tts.len() {
        match &tts[k] {
            TokenTree::Ident(id) if id == "for" => {
                k = for_loop(&tts, k, vars, arrays, &mut out)?;
                continue;
            }
            TokenTree::Ident(id) if id == "const" => {
                if let Some(next) = const_array(&tts, k, vars, arrays, &mut out)? {
                    k = next;
                    continue;
                }
                out.extend([take(&mut tts, k)]);
            }
            TokenTree::Ident(id) => {
                if let Some(TokenTree::Group(g)) = tts.get(k + 1) {
                    if g.delimiter() == Delimiter::Bracket && !is_keyword(id) {
                        let (name, next) = indexed_name(&tts, k, vars, arrays)?;
                        out.extend([TokenTree::Ident(family_ident(&name, id.span()))]);
                        k = next;
                        continue;
                    }
                }
                // (No loop variable outside loops: no name to look up.)
                match (!vars.is_empty()).then(|| vars.get(&plain(id))).flatten() {
                    Some(&v) => out.extend(number(v, id.span())),
                    None => out.extend([take(&mut tts, k)]),
                }
            }
            TokenTree::Group(_) => {
                let TokenTree::Group(g) = take(&mut tts, k) else {
                    unreachable!("matched a group")
                };
                let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
                drop(g);
                let inner = expand(stream, vars, arrays)?;
                let mut ng = Group::new(delimiter, inner);
                ng.set_span(span);
                out.extend([TokenTree::Group(ng)]);
            }
            _ => out.extend([take(&mut tts, k)]),
        }
        k += 1;
    }
    Ok(out)
}

/// `NAME[i][j]…` at `tts[k]` (an identifier and at least one bracket): the name
/// `NAME_i_j…` and the index after the last bracket.
fn indexed_name(
    tts: &[TokenTree],
    k: usize,
    vars: &HashMap<String, i64>,
    arrays: &HashMap<String, usize>,
) -> Result<(String, usize)> {
    let mut name = match &tts[k] {
        TokenTree::Ident(id) => plain(id),
        other => other.to_string(),
    };
    let mut next = k + 1;
    while let Some(TokenTree::Group(g)) = tts.get(next) {
        if g.delimiter() != Delimiter::Bracket {
            break;
        }
        let index = eval(g.stream(), vars, g.span())?;
        if let Some(&len) = arrays.get(&name) {
            if index < 0 || index as usize >= len {
                return Err(Error::new(
                    g.span(),
                    format!("index {index} is out of range for `{name}` (length {len})"),
                ));
            }
        }
        if index < 0 {
            return Err(Error::new(
                g.span(),
                format!("index {index} of `{name}` is negative"),
            ));
        }
        name = format!("{name}_{index}");
        next += 1;
    }
    Ok((name, next))
}

/// The name of `id` without the `r#` of a raw identifier (`r#a` and `a` are one name, as
/// in the rest of the language).
fn plain(id: &Ident) -> String {
    syn::ext::IdentExt::unraw(id).to_string()
}

/// The identifier of a family member's name (`a_0`, `match_1`, from the plain name of the
/// family and its indices). Such a name ends in `_` and digits, so it is never a keyword
/// and needs no `r#`; raw anyway where it would be one, so that no spelling panics.
fn family_ident(name: &str, span: Span) -> Ident {
    if crate::model::is_keyword(name) {
        Ident::new_raw(name, span)
    } else {
        Ident::new(name, span)
    }
}

/// `k` as a number of the language (`3.0`, `(-3.0)`).
fn number(v: i64, span: Span) -> TokenStream {
    let mut lit = Literal::f64_unsuffixed(v.unsigned_abs() as f64);
    lit.set_span(span);
    if v < 0 {
        let mut minus = proc_macro2::Punct::new('-', proc_macro2::Spacing::Alone);
        minus.set_span(span);
        let mut g = Group::new(
            Delimiter::Parenthesis,
            [TokenTree::Punct(minus), TokenTree::Literal(lit)]
                .into_iter()
                .collect(),
        );
        g.set_span(span);
        [TokenTree::Group(g)].into_iter().collect()
    } else {
        [TokenTree::Literal(lit)].into_iter().collect()
    }
}

/// Keywords that may precede a bracket without being an indexed name.
fn is_keyword(id: &Ident) -> bool {
    id == "in" || id == "return"
}

/// `for VAR in A..B { body }` at `tts[k]`: the body expanded once per value, appended to
/// `out`; returns the index after the loop.
fn for_loop(
    tts: &[TokenTree],
    k: usize,
    vars: &HashMap<String, i64>,
    arrays: &mut HashMap<String, usize>,
    out: &mut TokenStream,
) -> Result<usize> {
    let span = tts[k].span();
    const SHAPE: &str = "a loop is `for i in A..B { items }` with constant integer bounds";
    let var = match tts.get(k + 1) {
        Some(TokenTree::Ident(v)) => v.clone(),
        _ => return Err(Error::new(span, SHAPE)),
    };
    if !matches!(tts.get(k + 2), Some(TokenTree::Ident(i)) if i == "in") {
        return Err(Error::new(var.span(), SHAPE));
    }
    // The range runs to the body's braces.
    let mut end = k + 3;
    while end < tts.len()
        && !matches!(&tts[end], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace)
    {
        end += 1;
    }
    let Some(TokenTree::Group(body)) = tts.get(end) else {
        return Err(Error::new(
            var.span(),
            format!("{SHAPE}: the `{{ … }}` body is missing"),
        ));
    };
    let range = &tts[k + 3..end];
    let dots = range.windows(2).position(|w| match (&w[0], &w[1]) {
        (TokenTree::Punct(a), TokenTree::Punct(b)) => {
            a.as_char() == '.' && b.as_char() == '.' && a.spacing() == proc_macro2::Spacing::Joint
        }
        _ => false,
    });
    let Some(dots) = dots else {
        return Err(Error::new(
            range.first().map_or(var.span(), TokenTree::span),
            format!("{SHAPE}: expected a range `A..B`"),
        ));
    };
    let range_span = range.first().map_or(var.span(), TokenTree::span);
    let lo = eval(range[..dots].iter().cloned().collect(), vars, range_span)?;
    let hi_tokens: TokenStream = range[dots + 2..].iter().cloned().collect();
    if hi_tokens.is_empty() {
        return Err(Error::new(
            range_span,
            format!("{SHAPE}: the range needs an end"),
        ));
    }
    let hi = eval(hi_tokens, vars, range_span)?;
    if hi - lo > MAX_ITERATIONS {
        return Err(Error::new(
            range_span,
            format!(
                "the loop repeats {} times; at most {MAX_ITERATIONS} are allowed",
                hi - lo
            ),
        ));
    }
    let name = plain(&var);
    for v in lo..hi {
        let mut inner = vars.clone();
        inner.insert(name.clone(), v);
        out.extend(expand(body.stream(), &inner, arrays)?);
    }
    Ok(end + 1)
}

/// `const NAME = [e0, …];` at `tts[k]`: one constant per element, appended to `out`;
/// returns the index after the `;`, or `None` when the constant is not an array.
fn const_array(
    tts: &[TokenTree],
    k: usize,
    vars: &HashMap<String, i64>,
    arrays: &mut HashMap<String, usize>,
    out: &mut TokenStream,
) -> Result<Option<usize>> {
    let (Some(TokenTree::Ident(name)), Some(TokenTree::Punct(eq)), Some(TokenTree::Group(g))) =
        (tts.get(k + 1), tts.get(k + 2), tts.get(k + 3))
    else {
        return Ok(None);
    };
    if eq.as_char() != '=' || g.delimiter() != Delimiter::Bracket {
        return Ok(None);
    }
    if !matches!(tts.get(k + 4), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
        return Err(Error::new(
            g.span(),
            "expected `;` after the constant array",
        ));
    }
    let inner = expand(g.stream(), vars, arrays)?;
    let mut elems: Vec<TokenStream> = vec![TokenStream::new()];
    for tt in inner {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => elems.push(TokenStream::new()),
            _ => elems
                .last_mut()
                .into_iter()
                .for_each(|e| e.extend([tt.clone()])),
        }
    }
    if elems.last().is_some_and(TokenStream::is_empty) {
        elems.pop();
    }
    if elems.is_empty() {
        return Err(Error::new(
            g.span(),
            "a constant array needs at least one element",
        ));
    }
    let base = plain(name);
    for (i, e) in elems.iter().enumerate() {
        let id = family_ident(&format!("{base}_{i}"), name.span());
        let (c, q) = (&tts[k], &tts[k + 4]);
        out.extend(quote::quote!(#c #id #eq #e #q));
    }
    arrays.insert(base, elems.len());
    Ok(Some(k + 5))
}

/// The value of a constant integer expression (integer literals, loop variables, `+ - * /
/// %`, unary `-`, parentheses).
fn eval(tokens: TokenStream, vars: &HashMap<String, i64>, span: Span) -> Result<i64> {
    const WHAT: &str = "an index or loop bound must be a constant integer expression (integer \
                        literals and loop variables with `+ - * / %`)";
    let e: syn::Expr = syn::parse2(tokens.clone()).map_err(|_| Error::new(span, WHAT))?;
    eval_expr(&e, vars).map_err(|(s, m)| Error::new(s.unwrap_or(span), m.unwrap_or(WHAT.into())))
}

type EvalError = (Option<Span>, Option<String>);

fn eval_expr(e: &syn::Expr, vars: &HashMap<String, i64>) -> std::result::Result<i64, EvalError> {
    use syn::spanned::Spanned;
    use syn::{BinOp, Expr, Lit, UnOp};
    let fail = |e: &Expr| (Some(e.span()), None);
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) if i.suffix().is_empty() => i.base10_parse::<i64>().map_err(|_| fail(e)),
            _ => Err(fail(e)),
        },
        Expr::Path(p) => p
            .path
            .get_ident()
            .and_then(|id| vars.get(&id.to_string()).copied())
            .ok_or_else(|| fail(e)),
        Expr::Paren(p) => eval_expr(&p.expr, vars),
        Expr::Group(g) => eval_expr(&g.expr, vars),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => Ok(-eval_expr(&u.expr, vars)?),
        Expr::Binary(b) => {
            let (x, y) = (eval_expr(&b.left, vars)?, eval_expr(&b.right, vars)?);
            let zero = || {
                (
                    Some(b.right.span()),
                    Some("division by zero in an index".into()),
                )
            };
            let r = match b.op {
                BinOp::Add(_) => x.checked_add(y),
                BinOp::Sub(_) => x.checked_sub(y),
                BinOp::Mul(_) => x.checked_mul(y),
                BinOp::Div(_) if y == 0 => return Err(zero()),
                BinOp::Div(_) => x.checked_div(y),
                BinOp::Rem(_) if y == 0 => return Err(zero()),
                BinOp::Rem(_) => x.checked_rem_euclid(y),
                _ => return Err(fail(e)),
            };
            r.ok_or((Some(e.span()), Some("an index overflows".into())))
        }
        _ => Err(fail(e)),
    }
}
