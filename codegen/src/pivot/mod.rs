//! Static pivoting by numeric probing, and the symbolic LU it drives.
//!
//! See DESIGN §3: evaluate `C_J` at real probe points on the constraint manifold and at
//! complex unit-circle points, run complete-pivoting elimination on all probes at once
//! with shared choices, record the permutations, then factor symbolically.

use crate::error::{Error, Result};
use crate::expr::ExprId;
use crate::model::Model;

/// Options of the pivot analysis.
#[derive(Clone, Debug)]
pub struct PivotOptions {
    /// Seed of the probe-point generator (same seed ⇒ same pivots ⇒ same code).
    pub seed: u64,
}

/// The result of probing and symbolic LU: everything emission needs for `null_space`
/// and `solve_dependent`.
#[derive(Clone, Debug)]
pub struct NullSpace {
    /// Rank `r` of `C_J` found by probing.
    pub rank: usize,
    /// Constraint rows used, in pivot order (`r` of them).
    pub rows: Vec<usize>,
    /// Constraint rows found dependent on the others (dropped from the factorisation).
    pub redundant: Vec<usize>,
    /// Coordinates in pivot order: the first `r` are dependent, the rest independent.
    pub cols: Vec<usize>,
    /// Independent coordinates (`cols[r..]`), the identity block of the basis.
    pub independent: Vec<usize>,
    /// The pivots `U_kk`, `k < r`.
    pub pivots: Vec<ExprId>,
    /// For pivot `k`, the structurally nonzero entries of Jacobian row `rows[k]` (the
    /// scale that `|U_kk|` is compared with for the health figure).
    pub row_scale: Vec<Vec<ExprId>>,
    /// The basis `D`, `NQ × DOF`, row-major: `basis[i][j]`.
    pub basis: Vec<Vec<ExprId>>,
    /// Solution `x` (`NQ` entries) of `C_J x = b` with zero independent part, as expressions
    /// of `Sym::Rhs(i)` (`b[i]`, `i < NC`) and the model's symbols.
    pub solve: Vec<ExprId>,
    /// Human-readable notes of the analysis (probe retries, projection failures,
    /// redundant rows), for generated docs and build warnings.
    pub notes: Vec<String>,
}

/// Probes `jacobian` (`NC × NQ`, row-major, entries in `model.arena`), chooses static pivots
/// and runs the symbolic LU.
pub fn analyze(
    model: &mut Model,
    jacobian: &[Vec<ExprId>],
    opts: &PivotOptions,
) -> Result<NullSpace> {
    let _ = (jacobian, opts);
    Err(Error::new(
        model.span,
        "null-space analysis is not implemented yet",
    ))
}
