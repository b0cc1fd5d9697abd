//! Derivatives of the inequality constraints `g(q, p, t) ≥ 0`: their Jacobian `J_g` and the
//! right-hand side `γ_g` of `J_g q̈ = γ_g` (`g̈ = J_g q̈ − γ_g`), by the same machinery as the
//! equality constraints'.

use super::{rows_gamma, rows_jacobian, SymMatrix};
use crate::expr::{Arena, ExprId, Sym};
use crate::model::Model;

/// `J_g`, `∂g/∂t` and `γ_g` of `model.inequalities`, as DAG roots.
#[derive(Clone, Debug)]
pub struct InequalityDerivatives {
    /// `J_g = ∂g/∂q` (`NI × NQ`, sparse).
    pub jacobian: SymMatrix,
    /// `∂g/∂t` (`NI` entries).
    pub jacobian_t: Vec<ExprId>,
    /// `γ_g = −(J_g q̇)_q q̇ − 2 g_qt q̇ − g_tt` (`NI` entries of `q`, `q̇`, `p`, `t`).
    pub gamma: Vec<ExprId>,
}

/// The derivatives of `model.inequalities`.
pub fn inequalities(model: &Model, arena: &mut Arena) -> InequalityDerivatives {
    let nq = model.coords.len();
    let rows: Vec<ExprId> = model.inequalities.iter().map(|g| g.expr).collect();
    let a = &mut *arena;
    let jacobian = rows_jacobian(a, nq, &rows);
    let jacobian_t: Vec<ExprId> = rows.iter().map(|&e| a.diff(e, Sym::Time)).collect();
    let gamma = rows_gamma(a, &jacobian, &jacobian_t);
    InequalityDerivatives {
        jacobian,
        jacobian_t,
        gamma,
    }
}
