//! Derivatives of the model: `C_J = ∂C/∂q` and `C_t = ∂C/∂t`.

pub mod motion;

use crate::expr::{ExprId, Sym};
use crate::model::Model;

/// Equations over more coordinates than this get their Jacobian row by one reverse pass
/// ([`crate::expr::Arena::gradient`]); smaller ones (every shipped example) by forward
/// derivatives, whose generated code is unchanged.
pub const GRADIENT_ABOVE: usize = 64;

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
            let coords = a.coords_of(e);
            if coords.len() > GRADIENT_ABOVE {
                // One reverse pass instead of one forward derivative per coordinate.
                let g = a.gradient(e, &coords);
                for (&j, d) in coords.iter().zip(g) {
                    row[j as usize] = d;
                }
            } else {
                for j in coords {
                    row[j as usize] = a.diff(e, Sym::Coord(j));
                }
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
            let _ = (nq, coords);
            // dw/dt with q̇ fixed: one forward tangent pass along (q → q̇, t → 1), not
            // one partial derivative per coordinate (NQ² of them for dense rows).
            let wd = a.tangent_with(w, &mut |a, s| match s {
                Sym::Coord(k) => Some(a.sym(Sym::Vel(k))),
                Sym::Time => Some(a.constant(1.0)),
                _ => None,
            });
            a.neg(wd)
        })
        .collect()
}
