//! The whole pipeline, from tokens to generated Rust.

use proc_macro2::TokenStream;

use crate::error::Result;
use crate::model::{self, Model};
use crate::parse;

/// Options of code generation (shared by the macro, the builder and the CLI).
#[derive(Clone, Debug)]
pub struct Options {
    /// Seed of the probe points (overridden by `#![seed = N]` in the input).
    pub seed: u64,
    /// Path under which generated code finds the runtime and nalgebra
    /// (`::mechgen` for users of the facade crate).
    pub crate_path: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seed: 0x6d65_6368_6765_6e00,
            crate_path: "::mechgen".to_string(),
        }
    }
}

/// Parses and lowers every `mod` block of the input.
pub fn models(input: TokenStream) -> Result<(Vec<Model>, Option<u64>)> {
    let file = parse::parse_file(input)?;
    let models = file
        .modules
        .iter()
        .map(model::lower)
        .collect::<Result<Vec<_>>>()?;
    Ok((models, file.seed))
}

/// Expands a `mechanism!` body (or a `.mech` file's tokens) to Rust items.
pub fn expand(input: TokenStream, opts: &Options) -> Result<TokenStream> {
    let (_models, _seed) = models(input)?;
    let _ = opts;
    Ok(TokenStream::new())
}
