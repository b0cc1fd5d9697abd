//! Derivatives of the model: `C_J = ∂C/∂q` and `C_t = ∂C/∂t`.

use crate::expr::{ExprId, Sym};
use crate::model::Model;

/// The constraint Jacobian `C_J` (`NC × NQ`, row-major), as DAG roots.
pub fn jacobian(model: &mut Model) -> Vec<Vec<ExprId>> {
    let nq = model.coords.len();
    let rows: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    let a = &mut model.arena;
    let zero = a.constant(0.0);
    rows.into_iter()
        .map(|e| {
            // Only the coordinates the row contains can have a nonzero partial.
            let mut row = vec![zero; nq];
            for j in a.coords_of(e) {
                row[j as usize] = a.diff(e, Sym::Coord(j));
            }
            row
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

/// The right-hand side `γ` of the acceleration constraint `C_J q̈ = γ`:
/// `γ = −(C_J q̇)_q q̇ − 2 C_{qt} q̇ − C_tt`, i.e. minus the total time derivative of
/// `w = C_J q̇ + C_t` with `q̇` held fixed. Entries are expressions of `q`, `q̇`
/// (`Sym::Vel`), `p` and `t`.
pub fn gamma(model: &mut Model, jacobian: &[Vec<ExprId>], jacobian_t: &[ExprId]) -> Vec<ExprId> {
    let nq = model.coords.len();
    let a = &mut model.arena;
    jacobian
        .iter()
        .zip(jacobian_t)
        .map(|(row, &ct)| {
            // w depends only on the coordinates of its own equation (the nonzeros of its
            // Jacobian row) and on time.
            let mut w = ct;
            let mut coords = Vec::new();
            for (k, &e) in row.iter().enumerate() {
                if !a.is_zero(e) {
                    coords.push(k);
                    let v = a.sym(Sym::Vel(k as u32));
                    let ev = a.mul(e, v);
                    w = a.add(w, ev);
                }
            }
            let _ = nq;
            let wd = crate::dynamics::time_derivative_over(a, w, &coords);
            a.neg(wd)
        })
        .collect()
}
