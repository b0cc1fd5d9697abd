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

/// Name prefix of the placeholder function (or `mod`) whose head stands for one printed by
/// [`fn_header`] (or [`block_head`]), followed by the header's index.
const FN_MARKER: &str = "__mechgen_fn_";

/// Width prettyplease fills (its margin): a line of an item it prints on one line when
/// the whole line, indentation included, is at most this long (bytes).
const MARGIN: usize = 89;

/// Text of the placeholder doc attribute standing for a run of doc attributes in the
/// skeleton (followed by the run's index).
const DOC_MARKER: &str = "__mechgen_doc ";

/// Pretty-prints a generated file: the skeleton by `prettyplease`, flat function bodies
/// by `write_body`. Comment markers become `//` comments. Takes the tokens: when no one else
/// holds them, their bodies are taken apart without a copy.
pub fn pretty_file(tokens: TokenStream) -> Option<String> {
    print_file(tokens, true)
}

/// [`pretty_file`]; with `items` false every item's attributes and signature go through
/// `syn` and prettyplease (the reference the item printer is tested against).
fn print_file(tokens: TokenStream, items: bool) -> Option<String> {
    let mut parts = Parts::default();
    let skeleton = hollow(tokens, &mut parts, items.then_some(0));
    let file: syn::File = syn::parse2(skeleton).ok()?;
    let text = prettyplease::unparse(&file);
    let Parts {
        bodies,
        docs,
        headers,
    } = parts;
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
        } else if let Some(rest) = placeholder_head(trimmed) {
            // A function printed by `fn_header` (a `mod` by `block_head`): its attributes
            // and signature in place of the placeholder's, the rest of the line (` {`) kept.
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let (index, rest) = rest.split_at(digits);
            let rest = rest.strip_prefix("()").unwrap_or(rest);
            let header = headers.get(index.parse::<usize>().ok()?)?;
            let indent = &line[..line.len() - trimmed.len()];
            for (k, l) in header.iter().enumerate() {
                out.push_str(indent);
                out.push_str(l);
                if k + 1 == header.len() {
                    out.push_str(rest);
                }
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

/// What follows [`FN_MARKER`] on a line that starts with a placeholder function's or
/// `mod`'s head (`fn __mechgen_fn_3() {`, `mod __mechgen_fn_4 {`).
fn placeholder_head(trimmed: &str) -> Option<&str> {
    trimmed
        .strip_prefix("fn ")
        .or_else(|| trimmed.strip_prefix("mod "))?
        .strip_prefix(FN_MARKER)
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
    /// Printed attributes and signatures of functions (lines without indentation, the
    /// last without its ` {`), by index.
    headers: Vec<Vec<String>>,
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
            match doc_text(&lit.to_string()) {
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

/// The text of a string literal's inside with the escapes `Literal::string` writes (`\"`,
/// `\\`, `\'`, `\n`, `\t`, `\r`, `\0`, `\u{…}`); `None` for any other (left to syn).
fn unescape_quotes(inside: &str) -> Option<String> {
    let mut out = String::with_capacity(inside.len());
    let mut rest = inside;
    while let Some(k) = rest.find('\\') {
        out.push_str(&rest[..k]);
        let mut skip = 2;
        match rest.as_bytes().get(k + 1) {
            Some(&c @ (b'"' | b'\\' | b'\'')) => out.push(c as char),
            Some(b'n') => out.push('\n'),
            Some(b't') => out.push('\t'),
            Some(b'r') => out.push('\r'),
            Some(b'0') => out.push('\0'),
            Some(b'u') => {
                // `\u{307}`.
                let hex = rest.get(k + 2..)?.strip_prefix('{')?;
                let end = hex.find('}')?;
                out.push(char::from_u32(u32::from_str_radix(&hex[..end], 16).ok()?)?);
                skip = 2 + 1 + end + 1;
            }
            _ => return None,
        }
        rest = &rest[k + skip..];
    }
    out.push_str(rest);
    Some(out)
}

/// Replaces every flat function body (recursively inside `mod` and `impl` blocks) by a
/// placeholder `{ __mechgen_body!(N); }`, pushing the printed body to `parts.bodies`, and
/// every run of one-line outer doc attributes by one placeholder `#[doc = "__mechgen_doc
/// N"]`, pushing their texts to `parts.docs` (syn parses one short attribute instead of
/// each line's, and prettyplease prints each as `///` and its text).
///
/// `items` is the indentation of the items when `tokens` are a list of items (a file, a
/// `mod`, `impl` or `trait` block): there, functions' attributes and signatures and
/// one-line `const` items that [`fn_header`] and [`const_item`] can print are printed here
/// (as prettyplease would) and left out of the skeleton.
fn hollow(tokens: TokenStream, parts: &mut Parts, items: Option<usize>) -> TokenStream {
    match items {
        Some(indent) => hollow_items(tokens, parts, indent),
        None => hollow_seq(tokens.into_iter().collect(), parts, None),
    }
}

/// [`hollow`] of a list of items at indentation `indent`: item by item.
fn hollow_items(tokens: TokenStream, parts: &mut Parts, indent: usize) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let mut tokens = tokens.into_iter();
    // The index of the printed item (`const`, struct) placeholder just pushed, if the last
    // item was one.
    let mut last_body: Option<usize> = None;
    loop {
        let mut item = Vec::new();
        let mut value = false;
        for tt in tokens.by_ref() {
            let end = match &tt {
                TokenTree::Punct(p) if p.as_char() == ';' => true,
                TokenTree::Punct(p) if p.as_char() == '=' => {
                    value = true;
                    false
                }
                TokenTree::Ident(id) if id == "use" || id == "const" || id == "static" => {
                    value = true;
                    false
                }
                TokenTree::Ident(id) if id == "fn" => {
                    // `const fn`: a function after all.
                    value = false;
                    false
                }
                TokenTree::Group(g) => g.delimiter() == Delimiter::Brace && !value,
                _ => false,
            };
            item.push(tt);
            if end {
                break;
            }
        }
        if item.is_empty() {
            break;
        }
        // The item's keyword decides which printer may take it (each checks it after the
        // attributes, which it prints first: a copy of every attribute's tokens).
        let kind = keyword(&item).and_then(|id| {
            ["fn", "const", "struct", "use", "mod", "impl"]
                .into_iter()
                .find(|k| id == k)
        });
        let is = |k: &str| kind == Some(k);
        let mut printed = None;
        // Whether the item is taken apart here (a function printed whole, into `printed`,
        // or its signature, with its body hollowed into `out`; a `mod` or `impl` block
        // likewise).
        let mut taken = false;
        if let Some(header) = is("fn").then(|| fn_header(&item, indent)).flatten() {
            taken = true;
            let Some(TokenTree::Group(body)) = item.pop() else {
                // Not reached: `fn_header` saw the body last.
                break;
            };
            // The group dropped before its stream is read: the tokens are moved, not copied.
            let (span, stream) = (body.span(), body.stream());
            drop(body);
            let toks = own(stream);
            let text = if is_flat(&toks) {
                Some(write_body(&toks))
            } else {
                struct_body(&toks, indent + 4)
            };
            if let Some(text) = text {
                // A flat body (or one struct expression): the whole function printed here,
                // as prettyplease prints a function whose body is one placeholder statement
                // (the signature's last line and ` {`, the body's lines indented by four,
                // `}`).
                printed = Some(block_text(&header, &text));
            } else {
                // `fn __mechgen_fn_N() { … }`: the body hollowed as any function's.
                let index = parts.headers.len();
                parts.headers.push(header);
                let name = Ident::new(&format!("{FN_MARKER}{index}"), Span::call_site());
                let mut placeholder: Vec<TokenTree> = quote!(fn #name()).into_iter().collect();
                let mut g = Group::new(Delimiter::Brace, back(toks));
                g.set_span(span);
                placeholder.push(TokenTree::Group(g));
                out.extend(hollow_seq(placeholder, parts, None));
            }
        } else if (is("mod") || is("impl"))
            && matches!(item.last(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
        {
            if let Some(head) = block_head(&item[..item.len() - 1], indent) {
                let Some(TokenTree::Group(body)) = item.pop() else {
                    // Not reached: the item's last token is its block.
                    break;
                };
                taken = true;
                let (span, stream) = (body.span(), body.stream());
                drop(body);
                let inner = hollow_items(stream, parts, indent + 4);
                match only_placeholder(&inner, parts.bodies.len()) {
                    // Every item inside printed here: the block printed whole.
                    Some(index) => {
                        let text = parts.bodies.remove(index);
                        printed = Some(block_text(&head, &text));
                    }
                    None if is("mod") => {
                        // `mod __mechgen_fn_N { … }`: the head printed here, the items
                        // left in the skeleton.
                        let index = parts.headers.len();
                        parts.headers.push(head);
                        let name = Ident::new(&format!("{FN_MARKER}{index}"), Span::call_site());
                        out.extend(quote!(mod #name));
                        let mut g = Group::new(Delimiter::Brace, inner);
                        g.set_span(span);
                        out.push(TokenTree::Group(g));
                    }
                    None => {
                        // The head (attributes hollowed) and the items hollowed.
                        out.extend(hollow_seq(std::mem::take(&mut item), parts, Some(indent)));
                        let mut g = Group::new(Delimiter::Brace, inner);
                        g.set_span(span);
                        out.push(TokenTree::Group(g));
                    }
                }
            }
        }
        let printed = if taken {
            printed
        } else if is("const") {
            const_item(&item, indent)
        } else if is("struct") {
            struct_item(&item, indent)
        } else if is("use") {
            use_item(&item, indent)
        } else {
            None
        };
        if let Some(text) = printed {
            match last_body {
                // Right after another printed item: one placeholder for both (prettyplease
                // prints consecutive items on consecutive lines at one indentation, so the
                // placeholder's lines are the same; syn parses one item instead of a run).
                Some(index) => parts.bodies[index].push_str(&text),
                None => {
                    last_body = Some(parts.bodies.len());
                    let m = Ident::new(BODY_MARKER, Span::call_site());
                    let index = proc_macro2::Literal::usize_unsuffixed(parts.bodies.len());
                    parts.bodies.push(text);
                    out.extend(quote!(#m!(#index);));
                }
            }
            continue;
        }
        if !taken {
            out.extend(hollow_seq(item, parts, Some(indent)));
        }
        last_body = None;
    }
    out.into_iter().collect()
}

/// The index of the body placeholder when `skeleton` is one placeholder `__mechgen_body!(N);`
/// and nothing else, and `N` is the last of `bodies` bodies.
fn only_placeholder(skeleton: &TokenStream, bodies: usize) -> Option<usize> {
    let toks: Vec<TokenTree> = skeleton.clone().into_iter().collect();
    match toks.as_slice() {
        [TokenTree::Ident(m), TokenTree::Punct(bang), TokenTree::Group(g), TokenTree::Punct(semi)]
            if m == BODY_MARKER && bang.as_char() == '!' && semi.as_char() == ';' =>
        {
            let index: usize = g.stream().to_string().parse().ok()?;
            (index + 1 == bodies).then_some(index)
        }
        _ => None,
    }
}

/// The keyword of the item `item` (its first identifier after the outer attributes and an
/// optional `pub`: `fn`, `const`, `struct`, `impl`, …), if any.
fn keyword(item: &[TokenTree]) -> Option<&Ident> {
    let mut k = 0;
    while let (Some(TokenTree::Punct(hash)), Some(TokenTree::Group(g))) =
        (item.get(k), item.get(k + 1))
    {
        if hash.as_char() != '#' || g.delimiter() != Delimiter::Bracket {
            break;
        }
        k += 2;
    }
    if matches!(item.get(k), Some(TokenTree::Ident(id)) if id == "pub") {
        k += 1;
    }
    match item.get(k) {
        Some(TokenTree::Ident(id)) => Some(id),
        _ => None,
    }
}

/// [`hollow`] of a token sequence: one item when `items` is its indentation (blocks of
/// `mod`, `impl` and `trait` items inside hollowed item by item), or any tokens.
fn hollow_seq(tokens: Vec<TokenTree>, parts: &mut Parts, items: Option<usize>) -> TokenStream {
    let mut out = Vec::new();
    let mut after_fn = false;
    let mut block = false;
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
            TokenTree::Ident(ref id) if id == "mod" || id == "impl" || id == "trait" => {
                block = true;
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
                        hollow(back(body), parts, None)
                    }
                } else {
                    let inner = items.filter(|_| block).map(|indent| indent + 4);
                    hollow(stream, parts, inner)
                };
                let mut ng = Group::new(Delimiter::Brace, inner);
                ng.set_span(span);
                out.push(TokenTree::Group(ng));
                after_fn = false;
                block = false;
            }
            TokenTree::Punct(ref p) if p.as_char() == ';' => {
                after_fn = false;
                block = false;
                out.push(tt);
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// The lines prettyplease prints for the attributes and signature of the function `item`
/// (its tokens, attributes first, body last) at indentation `indent`, without the ` {`
/// after the signature; `None` unless the item is a function of a shape printed here:
/// doc comments and simple attributes (`#[inline]`, `#[allow(a, b::c)]`), `pub` or no
/// visibility, no qualifiers, generics or `where` clause, arguments `name: Type` (or
/// `self`) with the types [`ty`] prints, a non-empty body, and lines within [`MARGIN`].
fn fn_header(item: &[TokenTree], indent: usize) -> Option<Vec<String>> {
    let (mut lines, mut k) = attrs(item)?;
    let mut prefix = String::new();
    if matches!(item.get(k), Some(TokenTree::Ident(id)) if id == "pub") {
        prefix.push_str("pub ");
        k += 1;
    }
    match (item.get(k), item.get(k + 1), item.get(k + 2)) {
        (Some(TokenTree::Ident(f)), Some(TokenTree::Ident(name)), Some(TokenTree::Group(g)))
            if f == "fn" && g.delimiter() == Delimiter::Parenthesis =>
        {
            let _ = write!(prefix, "fn {name}(");
            let args = fn_args(g.stream())?;
            let (body, rest) = item[k + 3..].split_last()?;
            match body {
                TokenTree::Group(b)
                    if b.delimiter() == Delimiter::Brace && !b.stream().is_empty() => {}
                _ => return None,
            }
            let mut suffix = String::from(")");
            match rest {
                [] => {}
                [TokenTree::Punct(minus), TokenTree::Punct(gt), ret @ ..]
                    if minus.as_char() == '-' && gt.as_char() == '>' =>
                {
                    suffix.push_str(" -> ");
                    let mut i = 0;
                    ty(ret, &mut i, &mut suffix)?;
                    if i != ret.len() {
                        return None;
                    }
                }
                _ => return None,
            }
            // ` {` after the signature.
            let one = prefix.len() + args.iter().map(|a| a.len() + 2).sum::<usize>() + suffix.len();
            if indent + one <= MARGIN {
                let mut line = prefix;
                line.push_str(&args.join(", "));
                line.push_str(&suffix);
                lines.push(line);
            } else {
                // The arguments one a line, each with a comma (so shorter than the margin).
                let fits = indent + prefix.len() <= MARGIN
                    && indent + suffix.len() + 2 <= MARGIN
                    && args.iter().all(|a| indent + 4 + a.len() < MARGIN);
                if args.is_empty() || !fits {
                    return None;
                }
                lines.push(prefix);
                lines.extend(args.iter().map(|a| format!("    {a},")));
                lines.push(suffix);
            }
            Some(lines)
        }
        _ => None,
    }
}

/// A one-line `const` item as prettyplease prints it (attributes on the lines before),
/// `None` for any other item or one too long for a line at indentation `indent`.
fn const_item(item: &[TokenTree], indent: usize) -> Option<String> {
    let (lines, mut k) = attrs(item)?;
    let mut line = String::new();
    if matches!(item.get(k), Some(TokenTree::Ident(id)) if id == "pub") {
        line.push_str("pub ");
        k += 1;
    }
    match (item.get(k), item.get(k + 1), item.get(k + 2)) {
        (
            Some(TokenTree::Ident(c)),
            Some(TokenTree::Ident(name)),
            Some(TokenTree::Punct(colon)),
        ) if c == "const" && colon.as_char() == ':' && colon.spacing() == Spacing::Alone => {
            let _ = write!(line, "const {name}: ");
        }
        _ => return None,
    }
    let rest = item.get(k + 3..)?;
    let mut i = 0;
    ty(rest, &mut i, &mut line)?;
    match rest.get(i) {
        Some(TokenTree::Punct(eq)) if eq.as_char() == '=' && eq.spacing() == Spacing::Alone => {
            line.push_str(" = ")
        }
        _ => return None,
    }
    i += 1;
    let value = i;
    let head = line.len();
    expr(rest, &mut i, &mut line)?;
    match rest.get(i..) {
        Some([TokenTree::Punct(semi)]) if semi.as_char() == ';' => line.push(';'),
        _ => return None,
    }
    if indent + line.len() > MARGIN {
        // Too long for a line: an array of other than integer literals is printed an
        // element a line (prettyplease fills lines only with integers, `true`, chars).
        line.truncate(head);
        long_array(rest.get(value)?, indent, &mut line)?;
    }
    Some(lines_text(&lines, &line))
}

/// Prints the array `value` an element a line (`[`, each element at four more columns
/// with a comma, `];`) as prettyplease prints an array too long for the line of its
/// `const` item at indentation `indent`, after the item's head in `line`. `None` unless
/// some element is not an integer literal (prettyplease fills lines with those) and
/// every element fits on its line.
fn long_array(value: &TokenTree, indent: usize, line: &mut String) -> Option<()> {
    let TokenTree::Group(g) = value else {
        return None;
    };
    if g.delimiter() != Delimiter::Bracket || indent + line.len() + 1 >= MARGIN {
        return None;
    }
    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
    let mut elements = Vec::new();
    let mut simple = true;
    let mut j = 0;
    while j < inner.len() {
        let start = j;
        let mut element = String::new();
        expr(&inner, &mut j, &mut element)?;
        simple &= j == start + 1 && filled(&inner[start]);
        if indent + 4 + element.len() + 1 >= MARGIN {
            return None;
        }
        elements.push(element);
        match inner.get(j) {
            None => {}
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => j += 1,
            _ => return None,
        }
    }
    if simple || elements.is_empty() {
        return None;
    }
    line.push_str("[\n");
    for e in elements {
        line.extend(std::iter::repeat_n(' ', 4));
        line.push_str(&e);
        line.push_str(",\n");
    }
    line.push_str("];");
    Some(())
}

/// Whether prettyplease fills lines with an array element `tt` (an integer, byte or
/// character literal, `true`, `false`) rather than printing it on a line of its own.
fn filled(tt: &TokenTree) -> bool {
    match tt {
        TokenTree::Ident(id) => id == "true" || id == "false",
        TokenTree::Literal(l) => {
            let text = l.to_string();
            let radix = ["0x", "0o", "0b"].iter().any(|r| text.starts_with(r));
            text.starts_with('\'')
                || text.starts_with("b'")
                || radix
                || (text.starts_with(|c: char| c.is_ascii_digit())
                    && !text.contains(['.', 'e', 'E'])
                    && !text.ends_with("f32")
                    && !text.ends_with("f64"))
        }
        _ => false,
    }
}

/// A struct with named fields as prettyplease prints it (attributes, `struct Name {`, a
/// field a line with its doc lines, `}`), `None` for any other item or a line too long
/// at indentation `indent`.
fn struct_item(item: &[TokenTree], indent: usize) -> Option<String> {
    let (lines, mut k) = attrs(item)?;
    let mut text = String::new();
    for l in lines {
        text.push_str(&l);
        text.push('\n');
    }
    let mut head = String::new();
    if matches!(item.get(k), Some(TokenTree::Ident(id)) if id == "pub") {
        head.push_str("pub ");
        k += 1;
    }
    let fields = match item.get(k..)? {
        [TokenTree::Ident(s), TokenTree::Ident(name), TokenTree::Group(g)]
            if s == "struct" && g.delimiter() == Delimiter::Brace =>
        {
            let _ = write!(head, "struct {name} {{");
            g.stream().into_iter().collect::<Vec<_>>()
        }
        _ => return None,
    };
    if fields.is_empty() || indent + head.len() > MARGIN {
        return None;
    }
    text.push_str(&head);
    text.push('\n');
    // Fields: `#[doc]`s, `pub`, name, `:`, type, `,` (the last comma optional).
    let mut i = 0;
    while i < fields.len() {
        let end = fields[i..]
            .iter()
            .position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
            .map_or(fields.len(), |e| i + e);
        let field = &fields[i..end];
        let (docs, mut j) = attrs(field)?;
        let mut line = String::from("    ");
        if matches!(field.get(j), Some(TokenTree::Ident(id)) if id == "pub") {
            line.push_str("pub ");
            j += 1;
        }
        name_and_type(field, &mut j, &mut line)?;
        line.push(',');
        if j != field.len() || indent + line.len() > MARGIN {
            return None;
        }
        for d in docs {
            text.push_str("    ");
            text.push_str(&d);
            text.push('\n');
        }
        text.push_str(&line);
        text.push('\n');
        i = end + 1;
    }
    text.push_str("}\n");
    Some(text)
}

/// The attribute lines and the head of a `mod` or `impl` block (`item`: its tokens without
/// the block) as prettyplease prints them, the head without its ` {`: `pub mod name`,
/// `impl Trait for Type`, `impl Type`. `None` for any other shape (generics, `unsafe`,
/// `where`) or a head too long for a line at indentation `indent`.
fn block_head(item: &[TokenTree], indent: usize) -> Option<Vec<String>> {
    let (mut lines, mut k) = attrs(item)?;
    let mut head = String::new();
    if matches!(item.get(k), Some(TokenTree::Ident(id)) if id == "pub") {
        head.push_str("pub ");
        k += 1;
    }
    match item.get(k..)? {
        [TokenTree::Ident(m), TokenTree::Ident(name)] if m == "mod" && !is_keyword(name) => {
            let _ = write!(head, "mod {name}");
        }
        [TokenTree::Ident(i), rest @ ..] if i == "impl" && !rest.is_empty() => {
            head.push_str("impl ");
            let mut j = 0;
            path(rest, &mut j, &mut head, true)?;
            if matches!(rest.get(j), Some(TokenTree::Ident(f)) if f == "for") {
                head.push_str(" for ");
                j += 1;
                ty(rest, &mut j, &mut head)?;
            }
            if j != rest.len() {
                return None;
            }
        }
        _ => return None,
    }
    // ` {` after the head, with room to spare (a head at the margin is left to
    // prettyplease).
    if indent + head.len() + 2 >= MARGIN {
        return None;
    }
    lines.push(head);
    Some(lines)
}

/// A `use` item on one line as prettyplease prints it (attributes on the lines before):
/// paths, `*`, `name as other` and one level of `{…}` groups of those; `None` for any
/// other shape or a line too long at indentation `indent`.
fn use_item(item: &[TokenTree], indent: usize) -> Option<String> {
    let (lines, mut k) = attrs(item)?;
    let mut line = String::new();
    if matches!(item.get(k), Some(TokenTree::Ident(id)) if id == "pub") {
        line.push_str("pub ");
        k += 1;
    }
    match item.get(k) {
        Some(TokenTree::Ident(u)) if u == "use" => line.push_str("use "),
        _ => return None,
    }
    let tree = match item.get(k + 1..)? {
        [tree @ .., TokenTree::Punct(semi)] if semi.as_char() == ';' => tree,
        _ => return None,
    };
    let mut i = 0;
    use_tree(tree, &mut i, &mut line, true)?;
    if i != tree.len() {
        return None;
    }
    line.push(';');
    if indent + line.len() >= MARGIN {
        return None;
    }
    Some(lines_text(&lines, &line))
}

/// Whether `t[i..]` starts with the path separator `::`.
fn path_sep(t: &[TokenTree], i: usize) -> bool {
    matches!(
        (t.get(i), t.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// Prints the use tree at `t[*i]` (`::a::b::C`, `a::*`, `a as b`, `a::{B, C as _}`; a
/// group only when `groups`, and none inside it), moving `i` past it.
fn use_tree(t: &[TokenTree], i: &mut usize, out: &mut String, groups: bool) -> Option<()> {
    let colons = |i: usize| path_sep(t, i);
    if colons(*i) {
        out.push_str("::");
        *i += 2;
    }
    loop {
        match t.get(*i)? {
            TokenTree::Ident(id) if !is_keyword(id) => {
                let _ = write!(out, "{id}");
                *i += 1;
                if colons(*i) {
                    out.push_str("::");
                    *i += 2;
                    continue;
                }
                if matches!(t.get(*i), Some(TokenTree::Ident(a)) if a == "as") {
                    match t.get(*i + 1) {
                        Some(TokenTree::Ident(name)) if name == "_" || !is_keyword(name) => {
                            let _ = write!(out, " as {name}");
                            *i += 2;
                        }
                        _ => return None,
                    }
                }
                return Some(());
            }
            TokenTree::Punct(p) if p.as_char() == '*' => {
                out.push('*');
                *i += 1;
                return Some(());
            }
            TokenTree::Group(g) if groups && g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let mut entries = Vec::new();
                let mut j = 0;
                while j < inner.len() {
                    let mut entry = String::new();
                    use_tree(&inner, &mut j, &mut entry, false)?;
                    entries.push(entry);
                    match inner.get(j) {
                        None => {}
                        Some(TokenTree::Punct(p)) if p.as_char() == ',' => j += 1,
                        _ => return None,
                    }
                }
                match entries.as_slice() {
                    [] => out.push_str("{}"),
                    // One entry: printed without braces (but `self`, never here: a keyword).
                    [one] => out.push_str(one),
                    _ => {
                        out.push('{');
                        out.push_str(&entries.join(", "));
                        out.push('}');
                    }
                }
                *i += 1;
                return Some(());
            }
            _ => return None,
        }
    }
}

/// A function body that is one struct expression `Name { field: value, … }` too wide for
/// one line, as prettyplease prints it at indentation `indent`: `Name {`, a field a line
/// (values as [`expr`] prints them) with a comma, `}`. `None` for any other body, or one
/// whose fields could fit on one line (prettyplease keeps a struct expression of at most 34
/// columns on one line) or not each on theirs.
fn struct_body(toks: &[Tok], indent: usize) -> Option<String> {
    let (name, fields) = match toks {
        [Tok::Leaf(TokenTree::Ident(name)), Tok::Group(Delimiter::Brace, _, fields)]
            if name == "Self" || !is_keyword(name) =>
        {
            (name, fields)
        }
        _ => return None,
    };
    let mut lines = Vec::new();
    let pieces: Vec<&[Tok]> = fields
        .split(|t| matches!(t, Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ','))
        .collect();
    for (k, field) in pieces.iter().enumerate() {
        let value = match field {
            // After a trailing comma.
            [] if k > 0 && k + 1 == pieces.len() => continue,
            [Tok::Leaf(TokenTree::Ident(f)), Tok::Leaf(TokenTree::Punct(colon)), value @ ..]
                if colon.as_char() == ':'
                    && colon.spacing() == Spacing::Alone
                    && !is_keyword(f) =>
            {
                let mut line = format!("{f}: ");
                let leaves: Vec<TokenTree> = value
                    .iter()
                    .map(|t| match t {
                        Tok::Leaf(tt) => Some(tt.clone()),
                        Tok::Group(..) => None,
                    })
                    .collect::<Option<_>>()?;
                let mut j = 0;
                expr(&leaves, &mut j, &mut line)?;
                if j != leaves.len() || leaves.is_empty() {
                    return None;
                }
                line
            }
            _ => return None,
        };
        lines.push(value);
    }
    // The one-line form `Name { a: 1, b: 2 }`, well over 34 columns.
    let one = name.to_string().len() + 4 + lines.iter().map(|l| l.len() + 2).sum::<usize>();
    if lines.is_empty() || one <= 40 || lines.iter().any(|l| indent + 4 + l.len() + 1 >= MARGIN) {
        return None;
    }
    let mut text = format!("{name} {{\n");
    for l in lines {
        text.push_str("    ");
        text.push_str(&l);
        text.push_str(",\n");
    }
    text.push('}');
    Some(text)
}

/// The leading outer attributes of an item as prettyplease prints them (a line each), and
/// the index of the token after them; `None` when one is of a shape not printed here.
fn attrs(item: &[TokenTree]) -> Option<(Vec<String>, usize)> {
    let mut lines = Vec::new();
    let mut k = 0;
    while let (Some(TokenTree::Punct(hash)), Some(TokenTree::Group(g))) =
        (item.get(k), item.get(k + 1))
    {
        if hash.as_char() != '#' || g.delimiter() != Delimiter::Bracket {
            break;
        }
        let toks: Vec<TokenTree> = g.stream().into_iter().collect();
        let line = match toks.as_slice() {
            [TokenTree::Ident(doc), TokenTree::Punct(eq), TokenTree::Literal(lit)]
                if doc == "doc" && eq.as_char() == '=' =>
            {
                let text = doc_text(&lit.to_string())
                    .filter(|d| !d.contains('\n') && !d.starts_with('/'))?;
                let text = text.trim_end_matches(' ');
                let mut line = String::with_capacity(3 + text.len());
                line.push_str("///");
                line.push_str(text);
                line
            }
            [TokenTree::Ident(name)] => format!("#[{name}]"),
            [TokenTree::Ident(name), TokenTree::Group(list)]
                if list.delimiter() == Delimiter::Parenthesis =>
            {
                let mut line = format!("#[{name}(");
                let inner: Vec<TokenTree> = list.stream().into_iter().collect();
                let mut i = 0;
                while i < inner.len() {
                    if i > 0 {
                        match &inner[i] {
                            TokenTree::Punct(p) if p.as_char() == ',' && i + 1 < inner.len() => {
                                line.push_str(", ");
                                i += 1;
                            }
                            _ => return None,
                        }
                    }
                    path(&inner, &mut i, &mut line, false)?;
                }
                line.push_str(")]");
                line
            }
            _ => return None,
        };
        lines.push(line);
        k += 2;
    }
    Some((lines, k))
}

/// The text of a string literal written plainly (`"…"` with no escapes but `\"` and
/// `\\`) or raw (`r"…"`, `r#"…"#`); `None` for any other.
fn doc_text(repr: &str) -> Option<String> {
    if let Some(raw) = repr.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let inner = raw.get(hashes..raw.len().checked_sub(hashes)?)?;
        let inner = inner.strip_prefix('"')?.strip_suffix('"')?;
        return Some(inner.to_string());
    }
    repr.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .and_then(unescape_quotes)
}

/// A function's arguments, printed: `name: Type`, `mut name: Type`, `self`, `&self`,
/// `&mut self`.
fn fn_args(stream: TokenStream) -> Option<Vec<String>> {
    let toks: Vec<TokenTree> = stream.into_iter().collect();
    let mut args = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let mut arg = String::new();
        let is = |i: usize, c: char| matches!(toks.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
        let word = |i: usize, w: &str| matches!(toks.get(i), Some(TokenTree::Ident(id)) if id == w);
        if is(i, '&') && word(i + 1, "self") {
            arg.push_str("&self");
            i += 2;
        } else if is(i, '&') && word(i + 1, "mut") && word(i + 2, "self") {
            arg.push_str("&mut self");
            i += 3;
        } else if word(i, "self") {
            arg.push_str("self");
            i += 1;
        } else {
            if word(i, "mut") {
                arg.push_str("mut ");
                i += 1;
            }
            name_and_type(&toks, &mut i, &mut arg)?;
        }
        args.push(arg);
        match toks.get(i) {
            None => {}
            // A trailing comma only where another argument follows (prettyplease drops one).
            Some(TokenTree::Punct(p)) if p.as_char() == ',' && i + 1 < toks.len() => i += 1,
            _ => return None,
        }
    }
    Some(args)
}

/// Keywords that make a type or path of a shape not printed here.
/// `name: Type` at `t[*i]` (a field or an argument): printed to `out` and `*i` moved past
/// it; `None` where it is not that shape.
fn name_and_type(t: &[TokenTree], i: &mut usize, out: &mut String) -> Option<()> {
    match (t.get(*i), t.get(*i + 1)) {
        (Some(TokenTree::Ident(name)), Some(TokenTree::Punct(colon)))
            if colon.as_char() == ':' && colon.spacing() == Spacing::Alone && !is_keyword(name) =>
        {
            let _ = write!(out, "{name}: ");
        }
        _ => return None,
    }
    *i += 2;
    ty(t, i, out)
}

fn is_keyword(id: &Ident) -> bool {
    [
        "dyn", "impl", "fn", "for", "unsafe", "extern", "mut", "const", "where", "as", "_",
    ]
    .iter()
    .any(|k| id == k)
}

/// Prints the type starting at `t[*i]` as prettyplease does, moving `i` past it: paths
/// with generic arguments, references (`&'a mut T`), arrays and slices, tuples. `None` for
/// any other shape.
fn ty(t: &[TokenTree], i: &mut usize, out: &mut String) -> Option<()> {
    match t.get(*i)? {
        // (`&` is joint before a lifetime's `'`; `&&` is not printed here.)
        TokenTree::Punct(p)
            if p.as_char() == '&'
                && !matches!(t.get(*i + 1), Some(TokenTree::Punct(q)) if q.as_char() == '&') =>
        {
            out.push('&');
            *i += 1;
            if let (Some(TokenTree::Punct(q)), Some(TokenTree::Ident(life))) =
                (t.get(*i), t.get(*i + 1))
            {
                if q.as_char() != '\'' {
                    return None;
                }
                let _ = write!(out, "'{life} ");
                *i += 2;
            }
            if matches!(t.get(*i), Some(TokenTree::Ident(m)) if m == "mut") {
                out.push_str("mut ");
                *i += 1;
            }
            ty(t, i, out)
        }
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let mut j = 0;
            out.push('[');
            ty(&inner, &mut j, out)?;
            match inner.get(j) {
                None => {}
                Some(TokenTree::Punct(semi)) if semi.as_char() == ';' => {
                    out.push_str("; ");
                    j += 1;
                    const_expr(&inner, &mut j, out)?;
                    if j != inner.len() {
                        return None;
                    }
                }
                _ => return None,
            }
            out.push(']');
            *i += 1;
            Some(())
        }
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let mut j = 0;
            out.push('(');
            let mut n = 0;
            while j < inner.len() {
                if n > 0 {
                    match &inner[j] {
                        TokenTree::Punct(p) if p.as_char() == ',' && j + 1 < inner.len() => {
                            out.push_str(", ");
                            j += 1;
                        }
                        _ => return None,
                    }
                }
                ty(&inner, &mut j, out)?;
                n += 1;
            }
            // `(T)` is a parenthesised type, `(T,)` a one-tuple: neither printed here.
            if n == 1 {
                return None;
            }
            out.push(')');
            *i += 1;
            Some(())
        }
        TokenTree::Ident(_) | TokenTree::Punct(_) => path(t, i, out, true),
        _ => None,
    }
}

/// Prints the path starting at `t[*i]` (`a::b::C`, `::a::B`; with `generics`, segments'
/// generic arguments `<T, 3>` too), moving `i` past it.
fn path(t: &[TokenTree], i: &mut usize, out: &mut String, generics: bool) -> Option<()> {
    let colons = |i: usize| path_sep(t, i);
    if colons(*i) {
        out.push_str("::");
        *i += 2;
    }
    loop {
        match t.get(*i) {
            Some(TokenTree::Ident(id)) if !is_keyword(id) => {
                let _ = write!(out, "{id}");
                *i += 1;
            }
            _ => return None,
        }
        // `T::<A>` in a type is printed `T<A>`.
        let turbofish = generics
            && colons(*i)
            && matches!(t.get(*i + 2), Some(TokenTree::Punct(p)) if p.as_char() == '<');
        if turbofish {
            *i += 2;
        }
        if generics && matches!(t.get(*i), Some(TokenTree::Punct(p)) if p.as_char() == '<') {
            out.push('<');
            *i += 1;
            let mut n = 0;
            loop {
                match t.get(*i)? {
                    TokenTree::Punct(p) if p.as_char() == '>' => {
                        *i += 1;
                        break;
                    }
                    TokenTree::Punct(p) if p.as_char() == ',' && n > 0 => {
                        out.push_str(", ");
                        *i += 1;
                        // `<A, B,>`: not printed here.
                        if matches!(t.get(*i), Some(TokenTree::Punct(q)) if q.as_char() == '>') {
                            return None;
                        }
                    }
                    TokenTree::Literal(l) if n == 0 || out.ends_with(", ") => {
                        let _ = write!(out, "{l}");
                        *i += 1;
                        n += 1;
                    }
                    _ if n == 0 || out.ends_with(", ") => {
                        ty(t, i, out)?;
                        n += 1;
                    }
                    _ => return None,
                }
            }
            out.push('>');
        }
        if colons(*i) {
            out.push_str("::");
            *i += 2;
        } else {
            return Some(());
        }
    }
}

/// Prints an array length: identifiers and integer literals joined by `+`, `-` or `*`.
fn const_expr(t: &[TokenTree], i: &mut usize, out: &mut String) -> Option<()> {
    loop {
        match t.get(*i)? {
            TokenTree::Ident(id) if !is_keyword(id) => {
                let _ = write!(out, "{id}");
            }
            TokenTree::Literal(l) => {
                let _ = write!(out, "{l}");
            }
            _ => return None,
        }
        *i += 1;
        match t.get(*i) {
            Some(TokenTree::Punct(p))
                if matches!(p.as_char(), '+' | '-' | '*') && p.spacing() == Spacing::Alone =>
            {
                let _ = write!(out, " {} ", p.as_char());
                *i += 1;
            }
            _ => return Some(()),
        }
    }
}

/// Prints the value of a `const` item on one line: literals (negative ones too), paths,
/// arrays, tuples, and references to them; moves `i` past it. `None` for any other shape.
fn expr(t: &[TokenTree], i: &mut usize, out: &mut String) -> Option<()> {
    match t.get(*i)? {
        TokenTree::Literal(l) => {
            let _ = write!(out, "{l}");
            *i += 1;
            Some(())
        }
        TokenTree::Punct(p) if p.as_char() == '-' && p.spacing() == Spacing::Alone => {
            match t.get(*i + 1) {
                Some(TokenTree::Literal(l)) if !l.to_string().starts_with('-') => {
                    let _ = write!(out, "-{l}");
                    *i += 2;
                    Some(())
                }
                _ => None,
            }
        }
        TokenTree::Punct(p) if p.as_char() == '&' && p.spacing() == Spacing::Alone => {
            out.push('&');
            *i += 1;
            match t.get(*i) {
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => expr(t, i, out),
                _ => None,
            }
        }
        TokenTree::Group(g)
            if matches!(g.delimiter(), Delimiter::Bracket | Delimiter::Parenthesis) =>
        {
            let (open, close) = if g.delimiter() == Delimiter::Bracket {
                ('[', ']')
            } else {
                ('(', ')')
            };
            let inner: Vec<TokenTree> = g.stream().into_iter().collect();
            let mut j = 0;
            let mut n = 0;
            out.push(open);
            while j < inner.len() {
                if n > 0 {
                    match &inner[j] {
                        TokenTree::Punct(p) if p.as_char() == ',' && j + 1 < inner.len() => {
                            out.push_str(", ");
                            j += 1;
                        }
                        _ => return None,
                    }
                }
                expr(&inner, &mut j, out)?;
                n += 1;
            }
            // `(x)` is a parenthesised expression: not printed here.
            if open == '(' && n == 1 {
                return None;
            }
            out.push(close);
            *i += 1;
            Some(())
        }
        TokenTree::Ident(_) | TokenTree::Punct(_) => {
            path(t, i, out, false)?;
            // A call or anything after the path: not printed here.
            match t.get(*i) {
                Some(TokenTree::Group(_)) | Some(TokenTree::Punct(_)) if !matches!(t.get(*i), Some(TokenTree::Punct(p)) if p.as_char() == ',' || p.as_char() == ';') => {
                    None
                }
                _ => Some(()),
            }
        }
        TokenTree::Group(_) => None,
    }
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
                // Multi-character operators: `::`, `+=`, `->`, `=>`, `==`, `<=`, ... (at most
                // three characters, gathered on the stack: no `String` per token).
                let mut buf = [0u8; 12];
                let mut len = p.as_char().encode_utf8(&mut buf).len();
                while p.spacing() == Spacing::Joint && i + 1 < tokens.len() {
                    let op = std::str::from_utf8(&buf[..len]).unwrap_or_default();
                    match leaf(i + 1) {
                        Some(TokenTree::Punct(q)) if op.len() < 3 && joins(op, q.as_char()) => {
                            len += q.as_char().encode_utf8(&mut buf[len..]).len();
                            i += 1;
                            if q.spacing() != Spacing::Joint {
                                break;
                            }
                        }
                        _ => break,
                    }
                }
                let op = std::str::from_utf8(&buf[..len]).unwrap_or_default();
                match op {
                    "," => {
                        out.push_str(", ");
                        breaks.push((out.len(), 2 * depth));
                        prev = Prev::Start;
                    }
                    "." | "::" => {
                        if op == "::" && prev == Prev::Binary {
                            out.push(' ');
                        }
                        out.push_str(op);
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
                        out.push_str(op);
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
                        out.push_str(op);
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

/// The attribute `lines` of an item printed on one line, then that `last` line, each
/// ended by a newline.
fn lines_text(lines: &[String], last: &str) -> String {
    let mut text =
        String::with_capacity(lines.iter().map(|l| l.len() + 1).sum::<usize>() + last.len() + 1);
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(last);
    text.push('\n');
    text
}

/// A block printed whole: its head's lines (` {` after the last), the body's lines indented
/// by four, `}` (as prettyplease prints a function, `mod` or `impl` whose contents are one
/// placeholder).
fn block_text(head: &[String], body: &str) -> String {
    let mut f =
        String::with_capacity(head.iter().map(|l| l.len() + 1).sum::<usize>() + body.len() * 2);
    for (k, l) in head.iter().enumerate() {
        f.push_str(l);
        f.push_str(if k + 1 == head.len() { " {\n" } else { "\n" });
    }
    for l in body.lines() {
        f.push_str("    ");
        f.push_str(l);
        f.push('\n');
    }
    f.push_str("}\n");
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate_str, FunctionList, Options};
    use std::str::FromStr;

    /// The generated files of the repository's `.mech` examples, every function (with the
    /// generic family and the derivatives) and two selections (one in `f32`), print byte for byte as with every signature and `const` item through
    /// prettyplease.
    #[test]
    fn printed_items_are_prettypleases() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
        let files = [
            "iftomm/a01.mech",
            "iftomm/a04.mech",
            "iftomm/a05.mech",
            "seven_body/andrews.mech",
            "seven_body/andrews_frames.mech",
            "stewart_platform/stewart.mech",
            "stewart_platform/stewart_loop.mech",
        ];
        let mut checked = 0;
        for file in files {
            let src = std::fs::read_to_string(format!("{root}/{file}")).expect("example");
            for functions in [None, Some("jacobian, null_space_fixed"), Some("residual")] {
                let mut opts = Options::for_files();
                opts.functions = functions.map(|f| f.parse::<FunctionList>().expect("list"));
                // With every function, also the generic family and the derivatives (as
                // the bench crate's build script generates them), and `f32`.
                opts.generic = functions.is_none();
                opts.derivatives = functions.is_none();
                if functions == Some("residual") {
                    opts.scalar = Some("f32".to_string());
                }
                let g = generate_str(&src, &opts).expect("generates");
                let fast = print_file(g.tokens.clone(), true).expect("prints");
                let reference = print_file(g.tokens, false).expect("prints");
                if let Some(k) = fast
                    .lines()
                    .zip(reference.lines())
                    .position(|(a, b)| a != b)
                {
                    panic!(
                        "{file} {functions:?}: line {k} differs:\n  {}\n  {}",
                        fast.lines().nth(k).unwrap_or_default(),
                        reference.lines().nth(k).unwrap_or_default()
                    );
                }
                assert_eq!(fast, reference, "{file} {functions:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 21);
    }

    /// Signatures and `const` items of every length around the margin, at three depths,
    /// print as prettyplease prints them (one line, or one argument a line).
    #[test]
    fn signatures_and_consts_break_where_prettyplease_does() {
        let rets = [
            "",
            " -> f64",
            " -> (SMatrix<f64, NQ, DOF>, f64)",
            " -> ::a::B<[f64; 3], 2>",
        ];
        let consts = [
            ("usize", "3"),
            (
                "[(&str, usize); 2]",
                "[(\"jacobian\", 7), (\"n\\u{307}\", 12)]",
            ),
            ("[f64; NQ + 1]", "[0.3, -1.4721295802647691, 0.39]"),
            ("&'static [[f64; 1]]", "&[[1.0], [-2.5]]"),
            ("[usize; 0]", "[]"),
        ];
        let (mut headers, mut consts_printed, mut structs) = (0, 0, 0);
        let (mut uses, mut impls) = (0, 0);
        for depth in 0..3 {
            for len in 1..60 {
                let name = "a".repeat(len);
                let mut items = String::new();
                for (k, ret) in rets.iter().enumerate() {
                    let args: Vec<String> = (0..k + 1)
                        .map(|j| format!("x{j}: &mut SVector<f64, N>"))
                        .collect();
                    items += &format!(
                        "/// Doc `{k}`.\n#[inline(always)]\npub fn {name}{k}({}){ret} {{ a(); }}\n",
                        args.join(", ")
                    );
                }
                for (k, (ty, e)) in consts.iter().enumerate() {
                    items += &format!("#[doc = r\" Doc.\"]\npub const {name}_{k}: {ty} = {e};\n");
                }
                items += &format!(
                    "/// S.\n#[derive(Clone, Debug)]\npub struct S{name} {{\n/// Field.\npub {name}: [f64; 3], {name}_b: &'static str }}\n"
                );
                // A `use` item, and an `impl` whose function's body is one struct expression
                // (one line up to 34 columns in prettyplease, a field a line beyond).
                items += &format!(
                    "#[allow(unused_imports)]\nuse ::a::{name}::{{B, C as _}};\nuse ::a::{{{name}}};\nimpl Default for S{name} {{ fn default() -> Self {{ Self {{ {name}: -1.5, {name}_b: \"x\", c: C }} }} }}\n"
                );
                let src = format!("{}{items}{}", "mod m {".repeat(depth), "}".repeat(depth));
                let tokens = TokenStream::from_str(&src).expect("tokens");
                let mut parts = Parts::default();
                let _ = hollow(tokens.clone(), &mut parts, Some(0));
                // Functions printed here: a signature (the body hollowed) or whole (a flat
                // body). Consecutive printed items share a placeholder: counted by line.
                let printed = |what: &str| {
                    parts
                        .bodies
                        .iter()
                        .flat_map(|b| b.lines())
                        .filter(|l| l.trim_start().starts_with(what))
                        .count()
                };
                // (A `mod`'s head printed here is one of `parts.headers` too.)
                let fn_headers = parts
                    .headers
                    .iter()
                    .filter(|h| h.last().is_some_and(|l| l.contains("fn ")))
                    .count();
                headers += fn_headers + printed("pub fn ");
                uses += printed("use ");
                impls += printed("impl Default");
                consts_printed += printed("pub const ");
                structs += printed("pub struct ");
                let file: syn::File = syn::parse2(tokens.clone()).expect("parses");
                assert_eq!(
                    print_file(tokens, true).as_deref(),
                    Some(prettyplease::unparse(&file).as_str()),
                    "{src}"
                );
            }
        }
        // Most items printed here, not by prettyplease (too long ones are left to it).
        assert!(headers > 3 * 59 * rets.len() * 3 / 4, "{headers}");
        assert!(
            consts_printed > 3 * 59 * consts.len() / 2,
            "{consts_printed}"
        );
        assert!(structs > 3 * 59 / 2, "{structs}");
        assert!(uses > 3 * 59, "{uses}");
        assert!(impls > 3 * 59 / 2, "{impls}");
    }
}
