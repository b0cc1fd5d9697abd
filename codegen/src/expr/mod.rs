//! The expression DAG: a hash-consed arena of scalar expressions.
//!
//! Every distinct subexpression is stored once and named by a `Copy` [`ExprId`].
//! Smart constructors fold constants, apply the algebraic identities
//! (`x + 0`, `x·1`, `x·0`, `−(−x)`, `x/1`, `x^0`, `x^1`, …) and order the operands of
//! commutative operations canonically, so that equal expressions get equal ids.
//! Children are always created before their parents: ids are a topological order.

mod arena;
mod diff;
mod eval;
mod func;
pub mod hash;
mod node;
pub mod print;
mod subst;
mod tangent;

pub use arena::Arena;
pub use eval::{Evaluator, Scalar};
pub use func::{CostClass, Func, Parity};
pub use node::{ExprId, Node, Sym};
