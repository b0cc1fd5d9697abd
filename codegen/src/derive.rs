//! Derivatives of the model: `C_J = ∂C/∂q` and `C_t = ∂C/∂t`.

use crate::expr::{ExprId, Sym};
use crate::model::Model;

/// The constraint Jacobian `C_J` (`NC × NQ`, row-major), as DAG roots.
pub fn jacobian(model: &mut Model) -> Vec<Vec<ExprId>> {
    let nq = model.coords.len();
    let rows: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    rows.into_iter()
        .map(|e| {
            (0..nq)
                .map(|j| model.arena.diff(e, Sym::Coord(j as u32)))
                .collect()
        })
        .collect()
}

/// The partial time derivative `C_t` (`NC` entries), as DAG roots.
pub fn jacobian_t(model: &mut Model) -> Vec<ExprId> {
    let rows: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    rows.into_iter()
        .map(|e| model.arena.diff(e, Sym::Time))
        .collect()
}
