//! Symbolic derivatives of the dynamics terms (`#![derivatives]`): what
//! linearisation, MPC and exact step Jacobians need, from the same DAG (memoised
//! differentiation, shared subexpressions).

use super::cancel::Cancel;
use super::matrix::SymMatrix;
use super::motion::EquationsOfMotion;
use crate::expr::{Arena, ExprId, Sym};
use crate::model::Model;

/// `∂f/∂q`, `∂f/∂q̇`, `∂f/∂p`, `∂(M(q) a)/∂q` (for a vector `a`, `Sym::Rhs`), `∂γ/∂q`,
/// `∂γ/∂q̇`, and with respect to the parameters `∂(M a)/∂p`, `∂γ/∂p`, `∂C/∂p`, `∂(C_J a)/∂p`,
/// each sparse.
#[derive(Clone, Debug)]
pub struct DynamicsDerivatives {
    /// `∂f/∂q` (`NQ × NQ`).
    pub forces_q: SymMatrix,
    /// `∂f/∂q̇` (`NQ × NQ`).
    pub forces_qd: SymMatrix,
    /// `∂f/∂p` (`NQ × NP`).
    pub forces_p: SymMatrix,
    /// `∂(M(q) a)/∂q` (`NQ × NQ`), `a` the symbols `Sym::Rhs(0..NQ)`.
    pub mass_a_q: SymMatrix,
    /// `∂γ/∂q` (`NC × NQ`).
    pub gamma_q: SymMatrix,
    /// `∂γ/∂q̇` (`NC × NQ`).
    pub gamma_qd: SymMatrix,
    /// `∂(M(q) a)/∂p` (`NQ × NP`), `a` the symbols `Sym::Rhs(0..NQ)`.
    pub mass_a_p: SymMatrix,
    /// `∂γ/∂p` (`NC × NP`).
    pub gamma_p: SymMatrix,
    /// `∂C/∂p` (`NC × NP`).
    pub residual_p: SymMatrix,
    /// `∂(C_J a)/∂p` (`NC × NP`), `a` the symbols `Sym::Rhs(0..NQ)`.
    pub jacobian_a_p: SymMatrix,
    /// `(∂D/∂q) v` (`NQ × DOF`, dense rows) for the primary chart's basis `D`, the
    /// direction `v` the velocity symbols (`Ḋ` along `q̇` for scleronomic constraints).
    pub basis_q_v: Vec<Vec<ExprId>>,
    /// `∂(f − M(q) a)/∂q` (`NQ × NQ`), `a` the symbols `Sym::Rhs(0..NQ)`: the linearised
    /// equations of motion in one body (the trigonometry of `f` and `M` shared).
    pub dynamics_q: SymMatrix,
    /// `∂(f − M(q) a)/∂p` (`NQ × NP`).
    pub dynamics_p: SymMatrix,
    /// `∂(γ − C_J a)/∂p` (`NC × NP`): the linearised acceleration constraints.
    pub acceleration_p: SymMatrix,
    /// The primary chart's dependent solve as a matrix (`NQ × NC`): `x = S b` solves
    /// `C_J x = b` with zero independent part (the solve is linear in `b`: `S = ∂x/∂b`).
    pub solve_b: SymMatrix,
    /// `Wᵀ ∂(f − M(q) a)/∂p` (`DOF × NP`), `W` (`NQ × DOF`) the symbols
    /// `Sym::Weight(i + NQ j)` (column-major): a reduction of [`Self::dynamics_p`] by `DOF`
    /// weight rows without the `NQ × NP` matrix.
    pub dynamics_wp: SymMatrix,
    /// `Wᵀ ∂(γ − C_J a)/∂p` (`DOF × NP`), `W` (`NC × DOF`) the symbols
    /// `Sym::Weight(i + NC j)`.
    pub acceleration_wp: SymMatrix,
    /// Row `j`: `∂(W_jᵀ C_J B_j)/∂p` (`DOF × NP`), `B` (`NQ × DOF`) the symbols
    /// `Sym::Rhs(i + NQ j)` and `W` (`NC × DOF`) the symbols `Sym::Weight(i + NC j)`.
    pub jacobian_wp: SymMatrix,
    /// `Wᵀ ∂(f − M(q) a)/∂q` (`DOF × NQ`), `W` (`NQ × DOF`) the symbols `Sym::Weight(i + NQ j)`.
    pub dynamics_wq: SymMatrix,
    /// `Wᵀ ∂f/∂q̇` (`DOF × NQ`), `W` (`NQ × DOF`) the weight symbols.
    pub forces_wqd: SymMatrix,
    /// `Wᵀ ∂γ/∂q` (`DOF × NQ`), `W` (`NC × DOF`) the weight symbols.
    pub gamma_wq: SymMatrix,
    /// `Wᵀ ∂γ/∂q̇` (`DOF × NQ`), `W` (`NC × DOF`) the weight symbols.
    pub gamma_wqd: SymMatrix,
    /// [`Self::gamma_wqd`] taken at `q̇ = b`: the velocities replaced by `Sym::Rhs(0..NQ)`.
    pub gamma_wqd_b: SymMatrix,
    /// Row `j`: `(∂²(wᵀγ)/∂q̇² B_j)ᵀ` (`DOF × NQ`), `B` (`NQ × DOF`) the symbols
    /// `Sym::Rhs(i + NQ j)` and `w` (`NC`) the symbols `Sym::Weight(i)`: for constraints
    /// whose `γ` is quadratic in `q̇` (time-independent ones) `wᵀ ∂γ/∂q̇` taken at `q̇ = B_j`.
    pub gamma_hqd: SymMatrix,
    /// `−S ∂C/∂p` (`NQ × NP`): how the assembled configuration moves with the parameters
    /// when the independent coordinates are held (the dependent coordinates' sensitivity).
    pub dependent_p: SymMatrix,
}

/// `Wᵀ m` (`k × m.ncols()`) for the weight symbols `W = Sym::Weight(i + m.nrows() j)`
/// (`m.nrows() × k`, column-major): per row `j` and column, the column's structural nonzeros
/// times their row's weight.
fn weighted_columns(a: &mut Arena, m: &SymMatrix, k: usize) -> SymMatrix {
    let zero = a.constant(0.0);
    let n = m.nrows();
    let mut out = SymMatrix::new(m.ncols());
    for j in 0..k {
        let mut acc = vec![zero; m.ncols()];
        for (i, row) in m.rows().enumerate() {
            let w = a.sym(Sym::Weight((i + n * j) as u32));
            for &(c, e) in row {
                let t = a.mul(w, e);
                acc[c] = a.add(acc[c], t);
            }
        }
        let entries = acc.into_iter().enumerate().collect();
        out.push_row(a, entries);
    }
    out
}

/// `Σ_c e_c · sym(c)` over a sparse row's entries `(c, e_c)`, in column order: the row times
/// a vector of symbols.
fn row_dot(a: &mut Arena, row: &[(usize, ExprId)], sym: impl Fn(usize) -> Sym) -> ExprId {
    let zero = a.constant(0.0);
    row.iter().fold(zero, |acc, &(c, e)| {
        let v = a.sym(sym(c));
        let t = a.mul(e, v);
        a.add(acc, t)
    })
}

/// `s m` for sparse `s` (`R × K`) and `m` (`K × C`), with only the structural products.
fn product(a: &mut Arena, s: &SymMatrix, m: &SymMatrix) -> SymMatrix {
    let zero = a.constant(0.0);
    let mut out = SymMatrix::new(m.ncols());
    for srow in s.rows() {
        let mut acc = vec![zero; m.ncols()];
        for &(k, x) in srow {
            for &(j, e) in m.row(k) {
                let t = a.mul(x, e);
                acc[j] = a.add(acc[j], t);
            }
        }
        let entries = acc
            .into_iter()
            .enumerate()
            .filter(|&(_, e)| !a.is_zero(e))
            .collect();
        out.push_row(a, entries);
    }
    out
}

/// The Jacobian of `rows` with respect to the symbols `sym(0..n)`: each row's partials
/// with respect to the symbols it contains.
fn jacobian_of(a: &mut Arena, rows: &[ExprId], n: usize, sym: impl Fn(u32) -> Sym) -> SymMatrix {
    let mut m = SymMatrix::new(n);
    for &e in rows {
        let present: std::collections::BTreeSet<Sym> = a.symbols(&[e]).into_iter().collect();
        let entries: Vec<(usize, ExprId)> = (0..n as u32)
            .filter(|&j| present.contains(&sym(j)))
            .map(|j| (j as usize, a.diff(e, sym(j))))
            .collect();
        m.push_row(a, entries);
    }
    m
}

/// The matrices `ms` with their sums' cancelling terms removed ([`Cancel`]), where their
/// shared DAG comes out smaller; otherwise `ms` unchanged and the arena rolled back.
fn cancelled<const K: usize>(a: &mut Arena, ms: [SymMatrix; K]) -> [SymMatrix; K] {
    let roots: Vec<ExprId> = ms
        .iter()
        .flat_map(|m| m.rows().flatten().map(|&(_, e)| e).collect::<Vec<_>>())
        .collect();
    let before = a.dag_size(&roots);
    let mark = a.mark();
    let new = Cancel::default().roots(a, &roots);
    if a.dag_size(&new) >= before {
        a.rollback(mark);
        return ms;
    }
    let mut it = new.into_iter();
    ms.map(|m| {
        let mut out = SymMatrix::new(m.ncols());
        for row in m.rows() {
            let entries = row.iter().map(|&(c, _)| c).zip(&mut it).collect();
            out.push_row(a, entries);
        }
        out
    })
}

/// The derivatives of the equations of motion `eom` and of `γ`.
pub fn dynamics_derivatives(
    model: &Model,
    arena: &mut Arena,
    eom: &EquationsOfMotion,
    jacobian: &SymMatrix,
    gamma: &[ExprId],
    basis: &[Vec<ExprId>],
    solve: &[ExprId],
) -> DynamicsDerivatives {
    let residual: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    let nq = model.coords.len();
    let np = model.params.len();
    let a = &mut *arena;
    let forces_q = jacobian_of(a, &eom.forces, nq, Sym::Coord);
    let forces_qd = jacobian_of(a, &eom.forces, nq, Sym::Vel);
    let forces_p = jacobian_of(a, &eom.forces, np, Sym::Param);
    let zero = a.constant(0.0);
    let ma: Vec<ExprId> = eom
        .mass
        .iter()
        .map(|row| {
            row.iter().enumerate().fold(zero, |acc, (j, &m)| {
                let aj = a.sym(Sym::Rhs(j as u32));
                let t = a.mul(m, aj);
                a.add(acc, t)
            })
        })
        .collect();
    let mass_a_q = jacobian_of(a, &ma, nq, Sym::Coord);
    let mass_a_p = jacobian_of(a, &ma, np, Sym::Param);
    let gamma_p = jacobian_of(a, gamma, np, Sym::Param);
    let residual_p = jacobian_of(a, &residual, np, Sym::Param);
    let ja: Vec<ExprId> = jacobian
        .rows()
        .map(|row| row_dot(a, row, |j| Sym::Rhs(j as u32)))
        .collect();
    let jacobian_a_p = jacobian_of(a, &ja, np, Sym::Param);
    let gamma_q = jacobian_of(a, gamma, nq, Sym::Coord);
    let gamma_qd = jacobian_of(a, gamma, nq, Sym::Vel);
    let basis_q_v = basis
        .iter()
        .map(|row| {
            row.iter()
                .map(|&e| {
                    let coords = a.coords_of(e);
                    coords.into_iter().fold(zero, |acc, k| {
                        let d = a.diff(e, Sym::Coord(k));
                        let v = a.sym(Sym::Vel(k));
                        let t = a.mul(d, v);
                        a.add(acc, t)
                    })
                })
                .collect()
        })
        .collect();
    let solve_b = jacobian_of(a, solve, model.constraints.len(), Sym::Rhs);
    let f_ma: Vec<ExprId> = eom
        .forces
        .iter()
        .zip(&ma)
        .map(|(&f, &m)| a.sub(f, m))
        .collect();
    let g_ja: Vec<ExprId> = gamma.iter().zip(&ja).map(|(&g, &j)| a.sub(g, j)).collect();
    let dynamics_q = jacobian_of(a, &f_ma, nq, Sym::Coord);
    let dynamics_p = jacobian_of(a, &f_ma, np, Sym::Param);
    let acceleration_p = jacobian_of(a, &g_ja, np, Sym::Param);
    let dof = basis.first().map_or(0, Vec::len);
    let dynamics_wp = weighted_columns(a, &dynamics_p, dof);
    let acceleration_wp = weighted_columns(a, &acceleration_p, dof);
    // Row `j`: `W_jᵀ C_J B_j` differentiated (the derivatives of `C_J`'s entries are
    // memoised, so the rows share them).
    let nc = model.constraints.len();
    let bilinear: Vec<ExprId> = (0..dof)
        .map(|j| {
            jacobian.rows().enumerate().fold(zero, |acc, (r, row)| {
                let jb = row_dot(a, row, |c| Sym::Rhs((c + nq * j) as u32));
                let w = a.sym(Sym::Weight((r + nc * j) as u32));
                let t = a.mul(w, jb);
                a.add(acc, t)
            })
        })
        .collect();
    let jacobian_wp = jacobian_of(a, &bilinear, np, Sym::Param);
    let s_cp = product(a, &solve_b, &residual_p);
    let mut dependent_p = SymMatrix::new(np);
    for row in s_cp.rows() {
        let entries = row.iter().map(|&(j, e)| (j, a.neg(e))).collect();
        dependent_p.push_row(a, entries);
    }
    let dynamics_wq = weighted_columns(a, &dynamics_q, dof);
    let forces_wqd = weighted_columns(a, &forces_qd, dof);
    let gamma_wq = weighted_columns(a, &gamma_q, dof);
    let gamma_wqd = weighted_columns(a, &gamma_qd, dof);
    let rhs: Vec<ExprId> = (0..nq).map(|k| a.sym(Sym::Rhs(k as u32))).collect();
    let mut gamma_wqd_b = SymMatrix::new(nq);
    for row in gamma_wqd.rows() {
        let roots: Vec<ExprId> = row.iter().map(|&(_, e)| e).collect();
        let at_b = a.subst(&roots, &|s| match s {
            Sym::Vel(k) => rhs.get(k as usize).copied(),
            _ => None,
        });
        let entries = row.iter().map(|&(c, _)| c).zip(at_b).collect();
        gamma_wqd_b.push_row(a, entries);
    }
    // `∂(wᵀγ)/∂q̇`, then its derivatives along the velocities, applied to each column `B_j`.
    let grad = weighted_columns(a, &gamma_qd, 1).dense_row(0, zero);
    let hess = jacobian_of(a, &grad, nq, Sym::Vel);
    let mut gamma_hqd = SymMatrix::new(nq);
    for j in 0..dof {
        let entries = hess
            .rows()
            .enumerate()
            .map(|(c, row)| (c, row_dot(a, row, |k| Sym::Rhs((k + nq * j) as u32))))
            .collect();
        gamma_hqd.push_row(a, entries);
    }
    // The weighted reductions the step Jacobians evaluate, with the product rule's
    // cancelling sums removed where that makes their DAG smaller (otherwise rolled back).
    // (`dynamics_reductions(_p)`'s matrices and `gamma_reductions(_p)`'s, each group kept
    // or rolled back on its own.)
    let [dynamics_wq, forces_wqd, dynamics_wp] =
        cancelled(a, [dynamics_wq, forces_wqd, dynamics_wp]);
    let [gamma_wq, gamma_wqd, acceleration_wp] =
        cancelled(a, [gamma_wq, gamma_wqd, acceleration_wp]);
    DynamicsDerivatives {
        dynamics_wq,
        forces_wqd,
        gamma_wq,
        gamma_wqd,
        gamma_wqd_b,
        gamma_hqd,
        dynamics_wp,
        acceleration_wp,
        jacobian_wp,
        dependent_p,
        dynamics_q,
        dynamics_p,
        acceleration_p,
        solve_b,
        forces_q,
        forces_qd,
        forces_p,
        mass_a_q,
        gamma_q,
        gamma_qd,
        mass_a_p,
        gamma_p,
        residual_p,
        jacobian_a_p,
        basis_q_v,
    }
}
