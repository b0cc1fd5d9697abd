//! Doc comments and `//` comment markers of generated code.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{EmitOptions, COMMENT_MARKER};

/// A `//` comment marker statement (nothing unless comments are on).
pub(crate) fn comment(opts: &EmitOptions, text: &str) -> TokenStream {
    if !opts.comments {
        return TokenStream::new();
    }
    let m = format_ident!("{}", COMMENT_MARKER);
    quote!(#m!(#text);)
}

/// One `#[doc]` attribute per line.
pub(crate) fn doc_lines(lines: &[String]) -> TokenStream {
    if let Some(ts) = raw_doc_attrs(lines.iter().map(|l| l.trim_start())) {
        return ts;
    }
    let mut out = TokenStream::new();
    for l in lines {
        let l = format!(" {}", l.trim_start());
        out.extend(quote!(#[doc = #l]));
    }
    out
}

/// `#[doc = r" LINE"]` for each line (a space before each, as `///` writes), all lexed
/// from one text: `Literal::string` escapes its text a character at a time (most of the
/// cost of a doc line), and the lexer reads a raw string's inside as it is. `None` when a
/// line holds a control character (a raw string cannot hold a lone `\r`; such lines get
/// escaped literals).
fn raw_doc_attrs<'a>(lines: impl Iterator<Item = &'a str> + Clone) -> Option<TokenStream> {
    let mut src = String::with_capacity(lines.clone().map(|l| l.len() + 16).sum());
    for line in lines {
        if line.chars().any(char::is_control) {
            return None;
        }
        // As many `#` as needed: one more than the longest run after a `"` in the text.
        let hashes = if line.contains('"') {
            line.match_indices('"')
                .map(|(k, _)| {
                    let after = &line[k + 1..];
                    after.len() - after.trim_start_matches('#').len() + 1
                })
                .max()
                .unwrap_or(1)
        } else {
            0
        };
        src.push_str("#[doc = r");
        src.extend(std::iter::repeat_n('#', hashes));
        src.push_str("\" ");
        src.push_str(line);
        src.push('"');
        src.extend(std::iter::repeat_n('#', hashes));
        src.push_str("]\n");
    }
    src.parse().ok()
}

/// `text` as doc lines wrapped near 92 columns (blank lines between paragraphs, which
/// `\n\n` separates; `- ` list items keep their continuation lines indented).
pub(crate) fn wrapped_doc(text: &str) -> TokenStream {
    wrapped_lines(&wrap(text))
}

/// Lines of [`wrap`] as doc attributes, indentation kept.
pub(crate) fn wrapped_lines(lines: &[String]) -> TokenStream {
    if let Some(ts) = raw_doc_attrs(lines.iter().map(String::as_str)) {
        return ts;
    }
    let mut out = TokenStream::new();
    let mut l = String::new();
    for line in lines {
        l.clear();
        l.push(' ');
        l.push_str(line);
        out.extend(quote!(#[doc = #l]));
    }
    out
}

/// `text` wrapped near 92 columns (see [`wrapped_doc`]).
pub(crate) fn wrap(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (k, para) in text.split("\n\n").enumerate() {
        if k > 0 {
            lines.push(String::new());
        }
        let para = para.trim();
        // A list item's continuation lines are indented under its text.
        let indent = if para.starts_with("- ") { "  " } else { "" };
        // Room for a line and its last word (a line grows a word at a time, and a
        // new `String` reallocates at 8, 16, 32, … bytes).
        const LINE: usize = 128;
        let mut line = String::with_capacity(LINE);
        // `line`'s width in characters, and whether it holds a word yet.
        let (mut width, mut words) = (0, false);
        for word in para.split_whitespace() {
            let word_width = word.chars().count();
            // Width in characters; never break before a word that would start a Markdown
            // block (`+ C_Jᵀ λ` at the start of a line is a list item).
            if !line.is_empty() && width + word_width > 92 && !starts_block(word) {
                lines.push(std::mem::replace(&mut line, String::with_capacity(LINE)));
                line.push_str(indent);
                (width, words) = (indent.len(), false);
            }
            if words {
                line.push(' ');
                width += 1;
            }
            line.push_str(word);
            (width, words) = (width + word_width, true);
        }
        lines.push(line);
    }
    lines
}

/// Whether `word` at the start of a doc line would begin a Markdown block: a list item
/// (`-`, `+`, `*`, `1.`), a quote, a heading or a rule.
fn starts_block(word: &str) -> bool {
    matches!(word, "-" | "+" | "*" | ">" | "=" | "|")
        || word.starts_with('#')
        || word.starts_with("---")
        || word
            .strip_suffix(['.', ')'])
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// `0: `a`, 1: `b`, …` for the docs of functions indexed by coordinate.
pub(crate) fn coord_order_doc(names: &[String]) -> String {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{i}: `{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
