//! Derivatives of the named outputs (`output NAME = expr;`): their Jacobian `∂o/∂q`, their
//! velocity `ȯ = ∂o/∂q q̇ + ∂o/∂t`, the velocity-independent part of their acceleration
//! (`ö = ∂o/∂q q̈ + bias`), and the manipulator Jacobian `∂o/∂u = ∂o/∂q D` through the
//! null-space basis.

use super::SymMatrix;
use crate::expr::{Arena, ExprId, Sym};
use crate::model::Model;

/// The outputs' derivatives, as DAG roots.
#[derive(Clone, Debug)]
pub struct OutputDerivatives {
    /// `∂o/∂q` (`NO × NQ`, sparse).
    pub jacobian: SymMatrix,
    /// `ȯ = ∂o/∂q q̇ + ∂o/∂t` (expressions of `q`, `q̇`, `p`, `t`).
    pub velocity: Vec<ExprId>,
    /// `ö − ∂o/∂q q̈ = (∂ȯ/∂q) q̇ + ∂ȯ/∂t` (the acceleration at `q̈ = 0`).
    pub acceleration_bias: Vec<ExprId>,
    /// The manipulator Jacobian `∂o/∂q · D` (`NO × DOF`, dense rows) through the
    /// null-space basis `D` the pivot stage chose ([`manipulator_jacobian`]).
    pub manipulator: Vec<Vec<ExprId>>,
}

/// The derivatives of `model.outputs`, the manipulator Jacobian through the null-space
/// basis `basis` (`NQ × DOF`).
pub fn outputs(model: &Model, arena: &mut Arena, basis: &[Vec<ExprId>]) -> OutputDerivatives {
    let nq = model.coords.len();
    let roots: Vec<ExprId> = model.outputs.iter().map(|o| o.expr).collect();
    let a = &mut *arena;
    let mut jacobian = SymMatrix::new(nq);
    for &e in &roots {
        let coords = a.coords_of(e);
        let entries = coords
            .iter()
            .map(|&j| (j as usize, a.diff(e, Sym::Coord(j))))
            .collect();
        jacobian.push_row(a, entries);
    }
    // Total time derivatives with q̇ as the coordinates' direction (one tangent pass each).
    let along_velocity = |a: &mut Arena, s: Sym| match s {
        Sym::Coord(k) => Some(a.sym(Sym::Vel(k))),
        Sym::Time => Some(a.constant(1.0)),
        _ => None,
    };
    let velocity: Vec<ExprId> = roots
        .iter()
        .map(|&e| a.tangent_with(e, &mut { along_velocity }))
        .collect();
    // The same derivative of ȯ with q̇ held fixed (q̈ = 0): what remains of ö besides ∂o/∂q q̈.
    let acceleration_bias = velocity
        .iter()
        .map(|&e| a.tangent_with(e, &mut { along_velocity }))
        .collect();
    let manipulator = manipulator_jacobian(a, &jacobian, basis);
    OutputDerivatives {
        jacobian,
        velocity,
        acceleration_bias,
        manipulator,
    }
}

/// `∂o/∂q · D` (`NO × DOF`, dense rows of DAG roots) for a basis `D` (`NQ × DOF`).
pub fn manipulator_jacobian(
    arena: &mut Arena,
    jacobian: &SymMatrix,
    basis: &[Vec<ExprId>],
) -> Vec<Vec<ExprId>> {
    let dof = basis.first().map_or(0, Vec::len);
    jacobian
        .rows()
        .map(|row| {
            (0..dof)
                .map(|j| {
                    let mut sum = arena.constant(0.0);
                    for &(k, e) in row {
                        let d = basis[k][j];
                        if arena.is_zero(d) {
                            continue;
                        }
                        let term = arena.mul(e, d);
                        sum = arena.add(sum, term);
                    }
                    sum
                })
                .collect()
        })
        .collect()
}
