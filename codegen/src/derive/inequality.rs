//! Derivatives of the inequality constraints `g(q, p, t) ≥ 0`: their Jacobian `J_g` and the
//! right-hand side `γ_g` of `J_g q̈ = γ_g` (`g̈ = J_g q̈ − γ_g`), by the same machinery as the
//! equality constraints'.

use super::{rows_gamma, rows_jacobian, smaller_gamma, SymMatrix};
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
    /// `J_t`, the slip rows of the frictional contacts, in order (`NT × NQ`, sparse; empty
    /// without friction).
    pub tangent_jacobian: SymMatrix,
    /// `a₀` of the slip velocity `v_t = J_t q̇ + a₀` (`NT` entries).
    pub tangent_t: Vec<ExprId>,
    /// `γ_t = −d(J_t q̇ + a₀)/dt` with `q̇` held: `v̇_t = J_t q̈ − γ_t` (`NT` entries).
    pub tangent_gamma: Vec<ExprId>,
}

/// The derivatives of `model.inequalities`.
pub fn inequalities(model: &Model, arena: &mut Arena) -> InequalityDerivatives {
    let nq = model.coords.len();
    let rows: Vec<ExprId> = model.inequalities.iter().map(|g| g.expr).collect();
    let a = &mut *arena;
    let jacobian = rows_jacobian(a, nq, &rows);
    let jacobian_t: Vec<ExprId> = rows.iter().map(|&e| a.diff(e, Sym::Time)).collect();
    let mut gamma = rows_gamma(a, &jacobian, &jacobian_t);
    if let Some(nested) = smaller_gamma(a, &rows, &gamma) {
        gamma = nested;
    }
    let mut tangent_jacobian = SymMatrix::new(nq);
    let mut tangent_t = Vec::new();
    for t in model.inequalities.iter().flat_map(|g| &g.tangents) {
        tangent_jacobian.push_row(a, t.row.clone());
        tangent_t.push(t.rest);
    }
    let tangent_gamma = rows_gamma(a, &tangent_jacobian, &tangent_t);
    InequalityDerivatives {
        jacobian,
        jacobian_t,
        gamma,
        tangent_jacobian,
        tangent_t,
        tangent_gamma,
    }
}

/// The slip velocities `v_s = J_s q̇ + s₀` of the joints with dry friction and their
/// acceleration terms, as DAG roots.
#[derive(Clone, Debug)]
pub struct JointSlipDerivatives {
    /// `J_s` (`NS × NQ`, sparse; one row per joint with friction).
    pub jacobian: SymMatrix,
    /// `s₀`, the part of the slip velocities free of `q̇` (`NS` entries).
    pub slip_t: Vec<ExprId>,
    /// `γ_s = −d(J_s q̇ + s₀)/dt` with `q̇` held: `v̇_s = J_s q̈ − γ_s` (`NS` entries).
    pub gamma: Vec<ExprId>,
}

/// The derivatives of `model.joint_friction`'s slips.
pub fn joint_slips(model: &Model, arena: &mut Arena) -> JointSlipDerivatives {
    let mut jacobian = SymMatrix::new(model.coords.len());
    let mut slip_t = Vec::new();
    for j in &model.joint_friction {
        jacobian.push_row(arena, j.slip.row.clone());
        slip_t.push(j.slip.rest);
    }
    let gamma = rows_gamma(arena, &jacobian, &slip_t);
    JointSlipDerivatives {
        jacobian,
        slip_t,
        gamma,
    }
}
