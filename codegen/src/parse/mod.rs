//! Parsing the mechanism language (the body of `mechanism!` and `.mech` files) with syn.
//! The grammar is in [`ast`].

pub mod ast;
pub mod depth;

use proc_macro2::TokenStream;

use crate::error::Result;

/// Parses a whole input: optional file-level options and one or more `mod` blocks.
pub fn parse_file(tokens: TokenStream) -> Result<ast::File> {
    depth::check_nesting(&tokens)?;
    Ok(syn::parse2::<ast::File>(tokens)?)
}
