//! The syntax tree of the mechanism language.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};

/// A whole input: file-level options and its `mod` blocks.
#[derive(Debug)]
pub struct File {
    /// Seed for probing given in the input (`#![seed = N]`), if any.
    pub seed: Option<u64>,
    /// The mechanism modules.
    pub modules: Vec<Module>,
}

/// One `mod NAME { ... }` block.
#[derive(Debug)]
pub struct Module {
    /// Span of the module name.
    pub span: Span,
}

impl Parse for File {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Err(input.error("parsing is not implemented yet"))
    }
}
