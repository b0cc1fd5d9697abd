//! Pretty-printing generated code quickly.
//!
//! `prettyplease` needs a `syn` syntax tree, and parsing the whole generated file back
//! into one costs most of the generation time of a large mechanism. Generated function
//! bodies are flat, though — a sequence of `let`s and assignments with no nested blocks —
//! so they are printed here straight from the tokens, one statement per line, and only
//! the skeleton around them (module, docs, items, signatures) goes through `syn` and
//! `prettyplease`. A body with any nested `{ … }` is left to `prettyplease`.

use std::fmt::Write as _;

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::quote;

use crate::emit::COMMENT_MARKER;

/// Placeholder macro standing for a hollowed-out body in the skeleton.
const BODY_MARKER: &str = "__mechgen_body";

/// Text of the placeholder doc attribute standing for a run of doc attributes in the
/// skeleton (followed by the run's index).
const DOC_MARKER: &str = "__mechgen_doc ";

/// Pretty-prints a generated file: the skeleton by `prettyplease`, flat function bodies
/// by `write_body`. Comment markers become `//` comments. Takes the tokens: when no one else
/// holds them, their bodies are taken apart without a copy.
pub fn pretty_file(tokens: TokenStream) -> Option<String> {
    let mut parts = Parts::default();
    let skeleton = hollow(tokens, &mut parts);
    let file: syn::File = syn::parse2(skeleton).ok()?;
    let text = prettyplease::unparse(&file);
    let Parts { bodies, docs } = parts;
    let marker = format!("{BODY_MARKER}!(");
    let doc_marker = format!("///{DOC_MARKER}");
    let mut next_doc = 0;
    let mut out = String::with_capacity(
        text.len()
            + bodies.iter().map(|b| b.len()).sum::<usize>()
            + docs.iter().flatten().map(|d| d.len() + 12).sum::<usize>(),
    );
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(&marker) {
            let index: usize = rest.trim_end_matches(");").trim().parse().ok()?;
            let indent = &line[..line.len() - trimmed.len()];
            for stmt in bodies.get(index)?.lines() {
                out.push_str(indent);
                out.push_str(stmt);
                out.push('\n');
            }
        } else if let Some(run) = trimmed
            .strip_prefix(&doc_marker)
            .filter(|rest| rest.parse() == Ok(next_doc))
            .and_then(|_| docs.get(next_doc))
        {
            // A run of doc attributes, as prettyplease prints each: `///` and the text
            // without its trailing spaces, at the item's indentation.
            next_doc += 1;
            let indent = &line[..line.len() - trimmed.len()];
            for doc in run {
                out.push_str(indent);
                out.push_str("///");
                out.push_str(doc.trim_end_matches(' '));
                out.push('\n');
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Some(out)
}

/// A token tree owned outright: a group's tokens in a `Vec`. proc_macro2 shares a group's
/// stream (reading a borrowed one copies its tokens, identifiers' text included), so the
/// bodies are taken apart once, by moving, and read as often as needed.
enum Tok {
    /// Anything but a group.
    Leaf(TokenTree),
    /// A group: delimiter, span, tokens.
    Group(Delimiter, Span, Vec<Tok>),
}

/// Takes `ts` apart by moving (each group dropped before its stream is read: no copies).
fn own(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
                drop(g);
                Tok::Group(delimiter, span, own(stream))
            }
            other => Tok::Leaf(other),
        })
        .collect()
}

/// Puts owned tokens back into a stream.
fn back(toks: Vec<Tok>) -> TokenStream {
    toks.into_iter()
        .map(|t| match t {
            Tok::Leaf(tt) => tt,
            Tok::Group(delimiter, span, inner) => {
                let mut g = Group::new(delimiter, back(inner));
                g.set_span(span);
                TokenTree::Group(g)
            }
        })
        .collect()
}

/// What [`hollow`] takes out of the skeleton: printed bodies, and runs of doc lines.
#[derive(Default)]
struct Parts {
    /// Flat function bodies, printed, by index.
    bodies: Vec<String>,
    /// Runs of consecutive outer doc attributes (their texts), by index.
    docs: Vec<Vec<String>>,
}

/// The text of an outer doc attribute `#[doc = "…"]` (the `[…]` group after `#`) that
/// prettyplease prints as one `///` line (one line, not starting with `/`), or the group
/// given back. Takes the group apart by moving (no copy of its tokens).
fn line_doc(group: Group) -> Result<String, Group> {
    if group.delimiter() != Delimiter::Bracket {
        return Err(group);
    }
    let (span, stream) = (group.span(), group.stream());
    drop(group);
    let toks: Vec<TokenTree> = stream.into_iter().collect();
    let doc = match toks.as_slice() {
        [TokenTree::Ident(name), TokenTree::Punct(eq), TokenTree::Literal(lit)]
            if name == "doc" && eq.as_char() == '=' =>
        {
            let repr = lit.to_string();
            match repr
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .and_then(unescape_quotes)
            {
                Some(text) => Some(text),
                None => match syn::Lit::new(lit.clone()) {
                    syn::Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
            }
        }
        _ => None,
    };
    match doc.filter(|d| !d.contains('\n') && !d.starts_with('/')) {
        Some(doc) => Ok(doc),
        None => {
            let mut g = Group::new(Delimiter::Bracket, toks.into_iter().collect());
            g.set_span(span);
            Err(g)
        }
    }
}

/// The text of a string literal's inside whose only escapes are `\"` and `\\` (what
/// `Literal::string` writes for printable text); `None` for any other escape (left to syn).
fn unescape_quotes(inside: &str) -> Option<String> {
    let mut out = String::with_capacity(inside.len());
    let mut rest = inside;
    while let Some(k) = rest.find('\\') {
        out.push_str(&rest[..k]);
        match rest.as_bytes().get(k + 1) {
            Some(&c @ (b'"' | b'\\')) => out.push(c as char),
            _ => return None,
        }
        rest = &rest[k + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// Replaces every flat function body (recursively inside `mod` and `impl` blocks) by a
/// placeholder `{ __mechgen_body!(N); }`, pushing the printed body to `parts.bodies`, and
/// every run of one-line outer doc attributes by one placeholder `#[doc = "__mechgen_doc
/// N"]`, pushing their texts to `parts.docs` (syn parses one short attribute instead of
/// each line's, and prettyplease prints each as `///` and its text).
fn hollow(tokens: TokenStream, parts: &mut Parts) -> TokenStream {
    let mut out = Vec::new();
    let mut after_fn = false;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(tt) = tokens.next() {
        match tt {
            TokenTree::Punct(ref p)
                if p.as_char() == '#'
                    && matches!(tokens.peek(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket) =>
            {
                let mut run = Vec::new();
                let mut pending = Some(tt);
                loop {
                    let Some(hash) = pending.take() else { break };
                    let Some(TokenTree::Group(g)) = tokens.next() else {
                        // Not reached: the peek above saw a group.
                        out.push(hash);
                        break;
                    };
                    match line_doc(g) {
                        Ok(doc) => run.push(doc),
                        Err(g) => {
                            push_docs(&mut out, &mut run, parts);
                            out.push(hash);
                            out.push(TokenTree::Group(g));
                            break;
                        }
                    }
                    // The next attribute of the run, if one follows.
                    if matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '#') {
                        let next = tokens.next();
                        if matches!(tokens.peek(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket)
                        {
                            pending = next;
                        } else {
                            push_docs(&mut out, &mut run, parts);
                            out.extend(next);
                        }
                    }
                }
                push_docs(&mut out, &mut run, parts);
            }
            TokenTree::Ident(ref id) if id == "fn" => {
                after_fn = true;
                out.push(tt);
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let (span, stream) = (g.span(), g.stream());
                drop(g);
                let m = Ident::new(BODY_MARKER, Span::call_site());
                let inner = if after_fn {
                    let body = own(stream);
                    if is_flat(&body) {
                        let index = proc_macro2::Literal::usize_unsuffixed(parts.bodies.len());
                        parts.bodies.push(write_body(&body));
                        quote!(#m!(#index);)
                    } else if let Some(end) = flat_prefix(&body) {
                        // A long flat run of statements before the first nested block (a
                        // basis's lets before its health figure's `if`): printed directly,
                        // the rest by `prettyplease`.
                        let index = proc_macro2::Literal::usize_unsuffixed(parts.bodies.len());
                        parts.bodies.push(write_body(&body[..end]));
                        let mut inner = quote!(#m!(#index););
                        let mut body = body;
                        inner.extend(back(body.split_off(end)));
                        inner
                    } else {
                        hollow(back(body), parts)
                    }
                } else {
                    hollow(stream, parts)
                };
                let mut ng = Group::new(Delimiter::Brace, inner);
                ng.set_span(span);
                out.push(TokenTree::Group(ng));
                after_fn = false;
            }
            TokenTree::Punct(ref p) if p.as_char() == ';' => {
                after_fn = false;
                out.push(tt);
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Puts a placeholder for the doc lines of `run` (if any) into `out`, and the lines into
/// `parts.docs`.
fn push_docs(out: &mut Vec<TokenTree>, run: &mut Vec<String>, parts: &mut Parts) {
    if run.is_empty() {
        return;
    }
    let text = format!("{DOC_MARKER}{}", parts.docs.len());
    parts.docs.push(std::mem::take(run));
    let attr: TokenStream = [
        TokenTree::Ident(Ident::new("doc", Span::call_site())),
        TokenTree::Punct(Punct::new('=', Spacing::Alone)),
        TokenTree::Literal(proc_macro2::Literal::string(&text)),
    ]
    .into_iter()
    .collect();
    out.push(TokenTree::Punct(Punct::new('#', Spacing::Alone)));
    out.push(TokenTree::Group(Group::new(Delimiter::Bracket, attr)));
}

/// The end of a body's statements before its first nested block, when there are at least
/// [`MIN_PREFIX`] of them.
fn flat_prefix(tts: &[Tok]) -> Option<usize> {
    let mut end = 0;
    let mut statements = 0;
    for (k, tt) in tts.iter().enumerate() {
        match tt {
            Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ';' => {
                end = k + 1;
                statements += 1;
            }
            Tok::Group(d, _, inner) if *d == Delimiter::Brace || !is_flat(inner) => break,
            _ => {}
        }
    }
    (statements >= MIN_PREFIX).then_some(end)
}

/// Fewest statements worth printing apart from the rest of a body.
const MIN_PREFIX: usize = 8;

/// Whether a body has no nested block.
fn is_flat(tokens: &[Tok]) -> bool {
    tokens.iter().all(|t| match t {
        Tok::Group(d, _, inner) => *d != Delimiter::Brace && is_flat(inner),
        Tok::Leaf(_) => true,
    })
}

/// One statement a line; comment markers as `// …`.
fn write_body(tokens: &[Tok]) -> String {
    let mut out = String::new();
    let mut stmt: Vec<&Tok> = Vec::new();
    let flush = |stmt: &mut Vec<&Tok>, out: &mut String, semi: bool| {
        if stmt.is_empty() {
            return;
        }
        if let Some(text) = comment(stmt) {
            out.push_str("// ");
            out.push_str(&text);
        } else {
            let mut line = String::new();
            let mut breaks = Vec::new();
            write_tokens(stmt, &mut line, &mut breaks, 0);
            if semi {
                line.push(';');
            }
            wrap(&line, &breaks, out);
        }
        out.push('\n');
        stmt.clear();
    };
    for tt in tokens {
        match tt {
            Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ';' => {
                flush(&mut stmt, &mut out, true)
            }
            _ => stmt.push(tt),
        }
    }
    flush(&mut stmt, &mut out, false);
    out
}

/// Width of a statement line (the body sits 8 columns in, inside `mod` and `fn`).
const WIDTH: usize = 92;

/// Writes `line`, broken at `breaks` (byte offsets, with their rank: twice the nesting
/// depth, plus one before a factor of a product) into lines of at most [`WIDTH`] where
/// possible — at the lowest-ranked break that fits, the last of those — continuation lines
/// indented by four spaces.
fn wrap(line: &str, breaks: &[(usize, usize)], out: &mut String) {
    let mut start = 0;
    let mut first = true;
    while line.len() - start > if first { WIDTH } else { WIDTH - 4 } {
        let limit = start + if first { WIDTH } else { WIDTH - 4 };
        let fitting = breaks.iter().filter(|&&(b, _)| b > start && b <= limit);
        let shallowest = fitting.clone().map(|&(_, d)| d).min();
        let cut = shallowest
            .and_then(|d| {
                fitting
                    .filter(|&&(_, e)| e == d)
                    .map(|&(b, _)| b)
                    .next_back()
            })
            .or_else(|| breaks.iter().map(|&(b, _)| b).find(|&b| b > limit));
        let Some(cut) = cut else { break };
        if !first {
            out.push_str("    ");
        }
        out.push_str(line[start..cut].trim_end());
        out.push('\n');
        start = cut;
        while line[start..].starts_with(' ') {
            start += 1;
        }
        first = false;
    }
    if !first {
        out.push_str("    ");
    }
    out.push_str(&line[start..]);
}

/// The text of a `__mechgen_comment!("…")` statement.
fn comment(stmt: &[&Tok]) -> Option<String> {
    use Tok::{Group, Leaf};
    match stmt {
        [Leaf(TokenTree::Ident(id)), Leaf(TokenTree::Punct(bang)), Group(_, _, inner)]
            if id == COMMENT_MARKER && bang.as_char() == '!' =>
        {
            match inner.as_slice() {
                [Tok::Leaf(TokenTree::Literal(l))] => {
                    let lit: syn::LitStr =
                        syn::parse2(TokenStream::from(TokenTree::Literal(l.clone()))).ok()?;
                    Some(lit.value())
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// What came last, for spacing.
#[derive(Clone, Copy, PartialEq)]
enum Prev {
    /// Start of a statement or group: no space.
    Start,
    /// A word (identifier or literal) or a closing group: space before words and
    /// binary operators, none before `(`/`[` (calls, indexing).
    Word,
    /// A binary operator or `=`: space after.
    Binary,
    /// Glue: `.`, `::`, unary `-`/`!`/`&`, `<` of generics: no space after.
    Glue,
}

/// Writes tokens with Rust's usual spacing (`a * b`, `f(x, y)`, `-x`, `a::<T>::f()`).
fn write_tokens<T: std::borrow::Borrow<Tok>>(
    tokens: &[T],
    out: &mut String,
    breaks: &mut Vec<(usize, usize)>,
    depth: usize,
) {
    let mut prev = Prev::Start;
    let mut generics = 0usize;
    let leaf = |k: usize| match tokens.get(k).map(|t| t.borrow()) {
        Some(Tok::Leaf(tt)) => Some(tt),
        _ => None,
    };
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i].borrow() {
            Tok::Leaf(TokenTree::Ident(id)) => {
                if matches!(prev, Prev::Word | Prev::Binary) {
                    out.push(' ');
                }
                // Written straight into the line (no `String` per token).
                let _ = write!(out, "{id}");
                prev = Prev::Word;
            }
            // Never built: `own` turns every group into `Tok::Group`.
            Tok::Leaf(TokenTree::Group(_)) => {}
            Tok::Leaf(TokenTree::Literal(l)) => {
                if matches!(prev, Prev::Word | Prev::Binary) {
                    out.push(' ');
                }
                let _ = write!(out, "{l}");
                prev = Prev::Word;
            }
            Tok::Group(delimiter, _, inner) => {
                let (open, close) = match delimiter {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                // `let (a, b)`, `return (x)`: a keyword is not a callee.
                let after_keyword = matches!(
                    leaf(i.wrapping_sub(1)),
                    Some(TokenTree::Ident(k)) if ["let", "mut", "return", "in", "as"].iter().any(|w| k == w)
                );
                if prev == Prev::Binary || (prev == Prev::Word && after_keyword) {
                    out.push(' ');
                }
                out.push_str(open);
                write_tokens(inner, out, breaks, depth + 1);
                out.push_str(close);
                prev = Prev::Word;
            }
            Tok::Leaf(TokenTree::Punct(p)) => {
                let c = p.as_char();
                // Multi-character operators: `::`, `+=`, `->`, `=>`, `==`, `<=`, ...
                let mut op = c.to_string();
                while p.spacing() == Spacing::Joint && i + 1 < tokens.len() {
                    match leaf(i + 1) {
                        Some(TokenTree::Punct(q)) if op.len() < 3 && joins(&op, q.as_char()) => {
                            op.push(q.as_char());
                            i += 1;
                            if q.spacing() != Spacing::Joint {
                                break;
                            }
                        }
                        _ => break,
                    }
                }
                match op.as_str() {
                    "," => {
                        out.push_str(", ");
                        breaks.push((out.len(), 2 * depth));
                        prev = Prev::Start;
                    }
                    "." | "::" => {
                        if op == "::" && prev == Prev::Binary {
                            out.push(' ');
                        }
                        out.push_str(&op);
                        prev = Prev::Glue;
                    }
                    "<" if matches!(leaf(i.wrapping_sub(1)), Some(TokenTree::Punct(q)) if q.as_char() == ':') =>
                    {
                        out.push('<');
                        generics += 1;
                        prev = Prev::Glue;
                    }
                    ">" if generics > 0 => {
                        out.push('>');
                        generics -= 1;
                        prev = Prev::Word;
                    }
                    "-" | "!" | "&" | "*"
                        if matches!(prev, Prev::Start | Prev::Binary | Prev::Glue) =>
                    {
                        // Unary.
                        if prev == Prev::Binary {
                            out.push(' ');
                        }
                        out.push_str(&op);
                        prev = Prev::Glue;
                    }
                    "!" => {
                        // Macro call `name!(…)`.
                        out.push('!');
                        prev = Prev::Glue;
                    }
                    _ => {
                        if prev != Prev::Start {
                            // A line may break before any binary operator (inside a
                            // call's parentheses too: a long sum under `sqrt`); `wrap`
                            // takes the shallowest.
                            if op != "=" {
                                // Before a product's factor only where no sum breaks.
                                let rank = 2 * depth + usize::from(op == "*" || op == "/");
                                breaks.push((out.len(), rank));
                            }
                            out.push(' ');
                        }
                        out.push_str(&op);
                        prev = Prev::Binary;
                    }
                }
            }
        }
        i += 1;
    }
}

/// Whether `op` followed by `c` is one Rust operator.
fn joins(op: &str, c: char) -> bool {
    matches!(
        (op, c),
        (":", ':')
            | ("-", '>')
            | ("=", '>')
            | ("=", '=')
            | ("!", '=')
            | ("<", '=')
            | (">", '=')
            | ("+", '=')
            | ("-", '=')
            | ("*", '=')
            | ("/", '=')
            | ("&", '&')
            | ("|", '|')
            | (".", '.')
    )
}

/// Pretty-prints generated items (prettyplease for the skeleton, flat bodies printed from
/// tokens), turning comment markers into `//` comments. Tokens that are not a Rust file
/// (never generated ones) come back as their unformatted text.
pub fn pretty(tokens: &TokenStream) -> String {
    match pretty_owned(tokens.clone()) {
        Some(text) => text,
        None => tokens.to_string(),
    }
}

/// [`pretty`] of tokens no one else holds (the generated module, once generation is
/// done): read without copying them. `None` when the tokens are not a Rust file.
pub fn pretty_owned(tokens: TokenStream) -> Option<String> {
    // (Bodies' markers are printed as comments already; most files have no other.)
    pretty_file(tokens).map(|text| {
        if text.contains(COMMENT_MARKER) {
            comments_to_lines(&text)
        } else {
            text
        }
    })
}

/// Turns the comment-marker statements left by `prettyplease` into `//` comments.
fn comments_to_lines(text: &str) -> String {
    let marker = format!("{COMMENT_MARKER}!(");
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(&marker) {
            // prettyplease may wrap a long marker call over several lines.
            let mut call = rest.trim().to_string();
            while !call.ends_with(");") {
                match lines.next() {
                    Some(l) => call.push_str(l.trim()),
                    None => break,
                }
            }
            let indent = &line[..line.len() - trimmed.len()];
            let lit = call
                .trim_end_matches(';')
                .trim_end_matches(')')
                .trim()
                .trim_end_matches(',');
            let text = syn::parse_str::<syn::LitStr>(lit)
                .map(|l| l.value())
                .unwrap_or_else(|_| lit.to_string());
            out.push_str(indent);
            out.push_str("// ");
            out.push_str(&text);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}
