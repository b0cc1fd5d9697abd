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
    let mut out = TokenStream::new();
    for l in lines {
        let l = format!(" {}", l.trim_start());
        out.extend(quote!(#[doc = #l]));
    }
    out
}

/// `text` as doc lines wrapped near 92 columns (blank lines between paragraphs, which
/// `\n\n` separates; `- ` list items keep their continuation lines indented).
pub(crate) fn wrapped_doc(text: &str) -> TokenStream {
    wrapped_lines(&wrap(text))
}

/// Lines of [`wrap`] as doc attributes, indentation kept.
pub(crate) fn wrapped_lines(lines: &[String]) -> TokenStream {
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
        let mut line = String::new();
        // `line`'s width in characters, and whether it holds a word yet.
        let (mut width, mut words) = (0, false);
        for word in para.split_whitespace() {
            let word_width = word.chars().count();
            // Width in characters; never break before a word that would start a Markdown
            // block (`+ C_Jᵀ λ` at the start of a line is a list item).
            if !line.is_empty() && width + word_width > 92 && !starts_block(word) {
                lines.push(std::mem::take(&mut line));
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
