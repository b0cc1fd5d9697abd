//! Lowering: AST → scalar model (vectors to scalars, `let` inlined, `const` folded).

use super::Model;
use crate::error::{Error, Result};
use crate::parse::ast;

/// Lowers one parsed `mod` block to a [`Model`].
pub fn lower(module: &ast::Module) -> Result<Model> {
    Err(Error::new(module.span, "lowering is not implemented yet"))
}
