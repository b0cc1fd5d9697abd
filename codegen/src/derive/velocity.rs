//! Velocity constraints `A q̇ + a₀ = 0` stacked below the constraint rows (after the
//! holonomic rows are checked: the velocity-level stage of differentiation).

use super::{rows_gamma, Kinematics, SymMatrix};
use crate::error::{Error, Result};
use crate::expr::Arena;
use crate::model::{self, Model};

/// Appends the velocity constraints `A q̇ + a₀ = 0` below the constraint rows: `A` to the
/// Jacobian (the velocity-level constraint matrix `[C_J; A]` whose null space is `D`), `a₀`
/// to `C_t` (so that `[C_J; A] q̇ = −[C_t; a₀]`), `−d(A q̇ + a₀)/dt` (with `q̇` held) to `γ`,
/// and an identically zero row to the residual (a velocity constraint restricts no
/// configuration: the module's `VELOCITY_ROWS` counts these rows, and the runtime's position
/// assembly solves the holonomic rows above them only).
pub fn stack(model: &mut Model, arena: &mut Arena, kin: &mut Kinematics) {
    if model.velocity_constraints.is_empty() {
        return;
    }
    let nq = model.coords.len();
    let mut rows = SymMatrix::new(nq);
    let mut rest = Vec::new();
    for v in &model.velocity_constraints {
        rows.push_row(arena, v.row.clone());
        kin.jacobian.push_row(arena, v.row.clone());
        rest.push(v.rest);
    }
    kin.gamma.extend(rows_gamma(arena, &rows, &rest));
    kin.jacobian_t.extend(rest);
    let zero = arena.constant(0.0);
    for v in model.velocity_constraints.clone() {
        model.constraints.push(model::Equation {
            expr: zero,
            label: v.label,
            span: v.span,
        });
    }
}

/// `#![derivatives]` and velocity constraints do not go together yet: an error at the first
/// velocity constraint when both are asked for.
pub fn supported(model: &Model, derivatives: bool) -> Result<()> {
    match model.velocity_constraints.first() {
        Some(v) if derivatives => Err(Error::new(
            v.span,
            "`#![derivatives]` is not supported with velocity constraints yet",
        )),
        _ => Ok(()),
    }
}
