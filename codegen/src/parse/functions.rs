//! User functions, inlined on the tokens before the items are parsed:
//!
//! ```text
//! fn leg(base, angle, length) -> vec3 {
//!     let dir = rot_z(angle) * vec3(1.0, 0.0, 0.0);
//!     base + length * dir
//! }
//! ```
//!
//! A call `leg(a, b, c)` anywhere after loops are expanded becomes the body with each
//! parameter and `let` replaced by its (parenthesised) value, so the expression DAG shares
//! whatever the calls have in common. The return type is documentation (the body's value is
//! checked where it is used); a function may call functions defined anywhere in the module
//! but not itself, directly or through others.

use std::collections::HashMap;

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};

use crate::error::{Error, Result};

/// A function: its parameters, its `let`s (in order) and its value.
struct Function {
    params: Vec<String>,
    lets: Vec<(String, TokenStream)>,
    value: TokenStream,
    span: Span,
}

/// Removes every `fn` definition from `tokens` and inlines every call of one.
pub fn inline(tokens: TokenStream) -> Result<TokenStream> {
    let mut defs = HashMap::new();
    let rest = collect(tokens, &mut defs)?;
    if defs.is_empty() {
        return Ok(rest);
    }
    substitute(rest, &defs, &mut Vec::new())
}

fn collect(tokens: TokenStream, defs: &mut HashMap<String, Function>) -> Result<TokenStream> {
    let mut tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(tts.len());
    let mut k = 0;
    while k < tts.len() {
        if matches!(&tts[k], TokenTree::Ident(id) if id == "fn") {
            k = definition(&tts, k, defs)?;
            continue;
        }
        // Moved out (`definition` reads only from `k` on): no copy of the token, and a
        // group's stream, owned alone, is read without one.
        let tt = std::mem::replace(
            &mut tts[k],
            TokenTree::Punct(proc_macro2::Punct::new('.', proc_macro2::Spacing::Alone)),
        );
        match tt {
            TokenTree::Group(g) => {
                let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
                drop(g);
                let mut ng = Group::new(delimiter, collect(stream, defs)?);
                ng.set_span(span);
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other),
        }
        k += 1;
    }
    Ok(out.into_iter().collect())
}

/// `fn NAME(params) (-> TYPE)? { body }` at `tts[k]`; returns the index after it.
fn definition(tts: &[TokenTree], k: usize, defs: &mut HashMap<String, Function>) -> Result<usize> {
    const SHAPE: &str = "a function is `fn NAME(a, b) -> TYPE { let x = …; value }`";
    let span = tts[k].span();
    let Some(TokenTree::Ident(name)) = tts.get(k + 1) else {
        return Err(Error::new(span, SHAPE));
    };
    let Some(TokenTree::Group(params)) = tts.get(k + 2) else {
        return Err(Error::new(name.span(), SHAPE));
    };
    if params.delimiter() != Delimiter::Parenthesis {
        return Err(Error::new(params.span(), SHAPE));
    }
    let mut names = Vec::new();
    for part in split_commas(params.stream()) {
        let mut it = part.into_iter();
        match (it.next(), it.next()) {
            (Some(TokenTree::Ident(p)), None) => {
                let p = p.to_string();
                if names.contains(&p) {
                    return Err(Error::new(
                        params.span(),
                        format!("parameter `{p}` is given twice"),
                    ));
                }
                names.push(p);
            }
            (first, _) => {
                return Err(Error::new(
                    first.map_or(params.span(), |t| t.span()),
                    "a parameter is a plain name (no type: every value is a number or a vector)",
                ))
            }
        }
    }
    // The body: the first brace group after the name (an `-> TYPE` may come before it).
    let mut b = k + 3;
    while b < tts.len()
        && !matches!(&tts[b], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace)
    {
        b += 1;
    }
    let Some(TokenTree::Group(body)) = tts.get(b) else {
        return Err(Error::new(
            name.span(),
            format!("{SHAPE}: the `{{ … }}` body is missing"),
        ));
    };
    let mut lets = Vec::new();
    let mut stmts = split_semicolons(body.stream());
    let value = stmts.pop().unwrap_or_default();
    if value.is_empty() {
        return Err(Error::new(
            body.span(),
            "a function's body ends with its value (an expression without `;`)",
        ));
    }
    for st in stmts {
        let v: Vec<TokenTree> = st.into_iter().collect();
        match (v.first(), v.get(1), v.get(2)) {
            (Some(TokenTree::Ident(l)), Some(TokenTree::Ident(x)), Some(TokenTree::Punct(eq)))
                if l == "let" && eq.as_char() == '=' =>
            {
                lets.push((x.to_string(), v[3..].iter().cloned().collect()));
            }
            _ => {
                return Err(Error::new(
                    v.first().map_or(body.span(), TokenTree::span),
                    "a function's body holds `let NAME = value;` statements, then its value",
                ))
            }
        }
    }
    let key = name.to_string();
    if defs.contains_key(&key) {
        return Err(Error::new(
            name.span(),
            format!("function `{key}` is defined twice"),
        ));
    }
    defs.insert(
        key,
        Function {
            params: names,
            lets,
            value,
            span: name.span(),
        },
    );
    Ok(b + 1)
}

fn split_commas(ts: TokenStream) -> Vec<TokenStream> {
    split(ts, ',')
}

fn split_semicolons(ts: TokenStream) -> Vec<TokenStream> {
    split(ts, ';')
}

/// The parts of `ts` between top-level `sep`s (a trailing empty part is dropped for `,`).
fn split(ts: TokenStream, sep: char) -> Vec<TokenStream> {
    let mut parts = vec![TokenStream::new()];
    for tt in ts {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == sep => parts.push(TokenStream::new()),
            _ => parts
                .last_mut()
                .into_iter()
                .for_each(|x| x.extend([tt.clone()])),
        }
    }
    if sep == ',' && parts.last().is_some_and(TokenStream::is_empty) {
        parts.pop();
    }
    parts
}

/// Inlines the calls in `tokens`; `stack` holds the functions being inlined (recursion).
fn substitute(
    tokens: TokenStream,
    defs: &HashMap<String, Function>,
    stack: &mut Vec<String>,
) -> Result<TokenStream> {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = TokenStream::new();
    let mut k = 0;
    while k < tts.len() {
        match &tts[k] {
            TokenTree::Ident(id) if defs.contains_key(&id.to_string()) && !after_dot(&tts, k) => {
                if let Some(TokenTree::Group(args)) = tts.get(k + 1) {
                    if args.delimiter() == Delimiter::Parenthesis {
                        out.extend([call(id, args, defs, stack)?]);
                        k += 2;
                        continue;
                    }
                }
                out.extend([tts[k].clone()]);
            }
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), substitute(g.stream(), defs, stack)?);
                ng.set_span(g.span());
                out.extend([TokenTree::Group(ng)]);
            }
            other => out.extend([other.clone()]),
        }
        k += 1;
    }
    Ok(out)
}

/// Whether `tts[k]` follows a `.` (a field or method name, never a function's).
fn after_dot(tts: &[TokenTree], k: usize) -> bool {
    k > 0 && matches!(&tts[k - 1], TokenTree::Punct(p) if p.as_char() == '.')
}

/// The inlined value of the call `name(args)`, parenthesised.
fn call(
    name: &Ident,
    args: &Group,
    defs: &HashMap<String, Function>,
    stack: &mut Vec<String>,
) -> Result<TokenTree> {
    let key = name.to_string();
    let Some(f) = defs.get(&key) else {
        return Ok(TokenTree::Ident(name.clone()));
    };
    if stack.contains(&key) {
        return Err(Error::new(
            name.span(),
            format!(
                "function `{key}` calls itself (through {}): recursion is not allowed",
                stack.join(" → ")
            ),
        ));
    }
    let args = split_commas(substitute(args.stream(), defs, stack)?);
    if args.len() != f.params.len() {
        return Err(Error::new(
            args_span(name, &args),
            format!(
                "function `{key}` takes {} argument{}, {} given",
                f.params.len(),
                if f.params.len() == 1 { "" } else { "s" },
                args.len()
            ),
        ));
    }
    let mut env: HashMap<String, TokenStream> = HashMap::new();
    for (p, a) in f.params.iter().zip(args) {
        env.insert(p.clone(), paren(a, name.span()));
    }
    stack.push(key);
    for (x, e) in &f.lets {
        let v = substitute(replace(e.clone(), &env), defs, stack)?;
        env.insert(x.clone(), paren(v, f.span));
    }
    let value = substitute(replace(f.value.clone(), &env), defs, stack)?;
    stack.pop();
    Ok(TokenTree::Group(Group::new(Delimiter::Parenthesis, value)))
}

fn args_span(name: &Ident, args: &[TokenStream]) -> Span {
    args.first()
        .and_then(|a| a.clone().into_iter().next())
        .map_or(name.span(), |t| t.span())
}

/// `ts` in parentheses, unless it is one token (a name, a number or a group already).
fn paren(ts: TokenStream, span: Span) -> TokenStream {
    if ts.clone().into_iter().count() == 1 {
        return ts;
    }
    let mut g = Group::new(Delimiter::Parenthesis, ts);
    g.set_span(span);
    [TokenTree::Group(g)].into_iter().collect()
}

/// `ts` with every name of `env` (not after a `.`) replaced by its value.
fn replace(ts: TokenStream, env: &HashMap<String, TokenStream>) -> TokenStream {
    let tts: Vec<TokenTree> = ts.into_iter().collect();
    let mut out = TokenStream::new();
    for (k, tt) in tts.iter().enumerate() {
        match tt {
            TokenTree::Ident(id) if !after_dot(&tts, k) => match env.get(&id.to_string()) {
                Some(v) => out.extend(v.clone()),
                None => out.extend([tt.clone()]),
            },
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), replace(g.stream(), env));
                ng.set_span(g.span());
                out.extend([TokenTree::Group(ng)]);
            }
            other => out.extend([other.clone()]),
        }
    }
    out
}
