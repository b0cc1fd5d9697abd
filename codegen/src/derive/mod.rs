//! Derivatives of the model: `C_J = ∂C/∂q` and `C_t = ∂C/∂t`, the velocity constraints'
//! rows ([`velocity`]), the equations of motion and, after pivoting, the derivatives that
//! need the null-space basis ([`outputs`], [`sensitivity`]).

pub mod inequality;
pub mod matrix;
pub mod motion;
pub mod outputs;
pub mod recursion;
pub mod root;
pub mod sensitivity;
pub mod tree;
pub mod velocity;

pub use matrix::SymMatrix;

use crate::expr::{Arena, ExprId, Sym};
use crate::model::Model;

/// Equations over more coordinates than this get their Jacobian row by one reverse pass
/// ([`crate::expr::Arena::gradient`]); smaller ones (every shipped example) by forward
/// derivatives, whose generated code is unchanged.
pub const GRADIENT_ABOVE: usize = 64;

/// What the differentiation stage returns for the constraints: `C_J`, `C_t` and `γ`.
#[derive(Clone, Debug)]
pub struct Kinematics {
    /// `C_J = ∂C/∂q` (`NC × NQ`, sparse).
    pub jacobian: SymMatrix,
    /// `C_t = ∂C/∂t` (`NC` entries).
    pub jacobian_t: Vec<ExprId>,
    /// `γ` of `C_J q̈ = γ` (expressions of `q`, `q̇`, `p`, `t`; see [`gamma`]).
    pub gamma: Vec<ExprId>,
}

/// The constraints' derivatives: [`jacobian`], [`jacobian_t`] and [`gamma`].
pub fn kinematics(model: &Model, arena: &mut Arena) -> Kinematics {
    let jacobian = jacobian(model, arena);
    let jacobian_t = jacobian_t(model, arena);
    let gamma = gamma(arena, &jacobian, &jacobian_t);
    Kinematics {
        jacobian,
        jacobian_t,
        gamma,
    }
}

/// What the dynamics stages return: the equations of motion and, with `#![derivatives]`,
/// their derivatives.
#[derive(Clone, Debug)]
pub struct Dynamics {
    /// Mass matrix, forces and energy.
    pub eom: motion::EquationsOfMotion,
    /// The derivatives of the dynamics terms, when `#![derivatives]` asks for them.
    pub derivatives: Option<sensitivity::DynamicsDerivatives>,
}

/// What differentiation adds once the pivot stage has chosen the independent coordinates:
/// the outputs' derivatives (their manipulator Jacobian needs the null-space basis), the
/// inequalities' and the dynamics (with, under `#![derivatives]`, their derivatives).
#[derive(Clone, Debug)]
pub struct Pivoted {
    /// The named outputs' derivatives, when the model has any.
    pub outputs: Option<outputs::OutputDerivatives>,
    /// The inequality constraints' derivatives, when the model has any.
    pub inequalities: Option<inequality::InequalityDerivatives>,
    /// The slips of the joints with dry friction, when the model has any.
    pub joint_slips: Option<inequality::JointSlipDerivatives>,
    /// The equations of motion and their derivatives, when the model has dynamics.
    pub dynamics: Option<Dynamics>,
}

/// The differentiation after pivoting (see [`Pivoted`]): `eom` are the model's equations
/// of motion, `basis` and `solve` the primary chart's null-space basis and dependent solve.
pub fn pivoted(
    model: &Model,
    arena: &mut Arena,
    kin: &Kinematics,
    eom: Option<motion::EquationsOfMotion>,
    basis: &[Vec<ExprId>],
    solve: &[ExprId],
    derivatives: bool,
) -> Pivoted {
    let outputs = (!model.outputs.is_empty()).then(|| outputs::outputs(model, arena, basis));
    let inequalities =
        (!model.inequalities.is_empty()).then(|| inequality::inequalities(model, arena));
    let joint_slips =
        (!model.joint_friction.is_empty()).then(|| inequality::joint_slips(model, arena));
    let dynamics = eom.map(|eom| {
        let derivatives = derivatives.then(|| {
            sensitivity::dynamics_derivatives(
                model,
                arena,
                &eom,
                &kin.jacobian,
                &kin.gamma,
                basis,
                solve,
            )
        });
        Dynamics { eom, derivatives }
    });
    Pivoted {
        outputs,
        inequalities,
        joint_slips,
        dynamics,
    }
}

/// The constraint Jacobian `C_J` (`NC × NQ`, sparse: only the coordinates a row contains
/// can have a nonzero partial), as DAG roots.
pub fn jacobian(model: &Model, arena: &mut Arena) -> SymMatrix {
    let nq = model.coords.len();
    let rows: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    rows_jacobian(arena, nq, &rows)
}

/// The Jacobian (`rows.len() × nq`, sparse) of the expressions `rows`.
pub fn rows_jacobian(a: &mut crate::expr::Arena, nq: usize, rows: &[ExprId]) -> SymMatrix {
    let rows = rows.to_vec();
    let mut m = SymMatrix::new(nq);
    for e in rows {
        let coords = a.coords_of(e);
        let entries: Vec<(usize, ExprId)> = if coords.len() > GRADIENT_ABOVE {
            // One reverse pass instead of one forward derivative per coordinate.
            let g = a.gradient(e, &coords);
            coords.iter().map(|&j| j as usize).zip(g).collect()
        } else {
            coords
                .iter()
                .map(|&j| (j as usize, a.diff(e, Sym::Coord(j))))
                .collect()
        };
        m.push_row(a, entries);
    }
    m
}

/// The partial time derivative `C_t` (`NC` entries), as DAG roots.
pub fn jacobian_t(model: &Model, arena: &mut Arena) -> Vec<ExprId> {
    model
        .constraints
        .iter()
        .map(|c| arena.diff(c.expr, Sym::Time))
        .collect()
}

/// The right-hand side `γ` of the acceleration constraint `C_J q̈ = γ`:
/// `γ = −(C_J q̇)_q q̇ − 2 C_{qt} q̇ − C_tt`, i.e. minus the total time derivative of
/// `w = C_J q̇ + C_t` with `q̇` held fixed. Entries are expressions of `q`, `q̇`
/// (`Sym::Vel`), `p` and `t`.
pub fn gamma(arena: &mut Arena, jacobian: &SymMatrix, jacobian_t: &[ExprId]) -> Vec<ExprId> {
    rows_gamma(arena, jacobian, jacobian_t)
}

/// [`gamma`] of any rows given their Jacobian and partial time derivative.
pub fn rows_gamma(
    a: &mut crate::expr::Arena,
    jacobian: &SymMatrix,
    jacobian_t: &[ExprId],
) -> Vec<ExprId> {
    jacobian
        .rows()
        .zip(jacobian_t)
        .map(|(row, &ct)| {
            // w depends only on the coordinates of its own equation (the nonzeros of its
            // Jacobian row) and on time.
            let mut w = ct;
            for &(k, e) in row {
                let v = a.sym(Sym::Vel(k as u32));
                let ev = a.mul(e, v);
                w = a.add(w, ev);
            }
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
