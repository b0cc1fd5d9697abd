//! The contact step and its Jacobians by the clamping-set linearisation (Nimble, the seed
//! `004`): within a neighbourhood where the handled (clamping) contacts do not change, one
//! semi-implicit Euler step of the contact dynamics is a smooth map of the state, with the
//! handled inequalities acting as equality constraints. [`contact_step_jacobians`] finds
//! the clamping set by the active-set solve at the state and differentiates the step with
//! that set held, by dual numbers through the generated generic functions.

use nalgebra::{SMatrix, SVector};

use super::phases::PhaseError;
use super::{contact_accelerations, ContactError, ContactOptions};
use crate::dual::Dual;
use crate::mechanism::{GenericDynamics, GenericInequalities};
use crate::real::Real;

/// One row of a KKT system `[M −Bᵀ; A 0] [q̈; λ] = [f; d]`: the row `a` of `A q̈ = d`, and
/// the direction `b` its multiplier acts along in `M q̈ = f + Bᵀ λ` (`b = a` for an equality
/// constraint; a sliding contact's normal row acts along `J_n − μ uᵀ J_t`).
pub(crate) struct KktRow<S, const NQ: usize> {
    pub(crate) a: SVector<S, NQ>,
    pub(crate) b: SVector<S, NQ>,
    pub(crate) d: S,
}

impl<S: Real, const NQ: usize> KktRow<S, NQ> {
    /// An equality row: its multiplier acts along the row itself.
    pub(crate) fn equal(a: SVector<S, NQ>, d: S) -> Self {
        Self { b: a, a, d }
    }
}

/// `q̈` of `[M −Bᵀ; A 0] [q̈; λ] = [f; d]` by a dense LU with partial pivoting over any
/// scalar (pivots chosen on the values); `None` when it is singular.
pub(crate) fn kkt_solve<S: Real, const NQ: usize>(
    m: &SMatrix<S, NQ, NQ>,
    f: &SVector<S, NQ>,
    rows: &[KktRow<S, NQ>],
) -> Option<SVector<S, NQ>> {
    let n = NQ + rows.len();
    let zero = S::from_f64(0.0);
    let mut a = vec![zero; n * n];
    let mut b = vec![zero; n];
    let at = |i: usize, j: usize| i * n + j;
    for i in 0..NQ {
        for j in 0..NQ {
            a[at(i, j)] = m[(i, j)];
        }
        b[i] = f[i];
    }
    for (r, row) in rows.iter().enumerate() {
        let i = NQ + r;
        for j in 0..NQ {
            a[at(i, j)] = row.a[j];
            a[at(j, i)] = row.b[j];
        }
        b[i] = row.d;
    }
    // LU with partial pivoting (on the values), then the two triangular solves.
    let mut perm: Vec<usize> = (0..n).collect();
    for k in 0..n {
        let piv = (k..n).max_by(|&x, &y| {
            a[at(x, k)]
                .value()
                .abs()
                .total_cmp(&a[at(y, k)].value().abs())
        })?;
        if a[at(piv, k)].value() == 0.0 || !a[at(piv, k)].value().is_finite() {
            return None;
        }
        if piv != k {
            for j in 0..n {
                a.swap(at(k, j), at(piv, j));
            }
            b.swap(k, piv);
            perm.swap(k, piv);
        }
        let pivot = a[at(k, k)];
        for i in k + 1..n {
            let factor = a[at(i, k)] / pivot;
            if factor.value() == 0.0 && factor.is_zero() {
                continue;
            }
            for j in k..n {
                let v = a[at(k, j)];
                a[at(i, j)] -= factor * v;
            }
            let bk = b[k];
            b[i] -= factor * bk;
        }
    }
    let mut x = vec![zero; n];
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= a[at(i, j)] * x[j];
        }
        x[i] = s / a[at(i, i)];
    }
    Some(SVector::<S, NQ>::from_fn(|i, _| x[i]))
}

/// One semi-implicit Euler step of length `h` of the contact dynamics with the `handled`
/// inequalities held as equalities: `q̇' = q̇ + h q̈`, `q' = q + h q̇'`, over any scalar,
/// `q̈` from the KKT system of the equality constraints and the `handled` inequalities (as
/// equalities), with Baumgarte's terms: `[M Aᵀ; A 0] [q̈; −ν] = [f; d]`, `A = [C_J; J_H]`
/// (a dense LU with partial pivoting, pivots chosen on the values).
/// `None` when the KKT system is singular (redundant rows, a contact handled twice).
#[allow(clippy::too_many_arguments)]
pub fn contact_step_generic<
    M,
    S,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NP: usize,
>(
    q: &SVector<S, NQ>,
    qd: &SVector<S, NQ>,
    p: &[S; NP],
    t: S,
    h: S,
    handled: &[usize],
    baumgarte: (f64, f64),
) -> Option<(SVector<S, NQ>, SVector<S, NQ>)>
where
    M: GenericInequalities<NQ, NC, DOF, NI, NP>,
    S: Real,
{
    let m = M::mass_matrix_s(q, p, t);
    let f = M::forces_s(q, qd, p, t);
    let cj = M::jacobian_s(q, p, t);
    let g = M::inequality_s(q, p, t);
    let jg = M::inequality_jacobian_s(q, p, t);
    let (gt, gg) = (
        M::inequality_jacobian_t_s(q, p, t),
        M::inequality_gamma_s(q, qd, p, t),
    );
    let capacity = NC + handled.len();
    let mut rows = equality_rows::<M, S, NQ, NC, DOF, NP>(&cj, q, qd, p, t, baumgarte, capacity);
    for &k in handled {
        if k >= NI {
            return None;
        }
        let row = SVector::<S, NQ>::from_fn(|j, _| jg[(k, j)]);
        let d = baumgarte_rhs(&row, qd, g[k], gt[k], gg[k], baumgarte);
        rows.push(KktRow::equal(row, d));
    }
    let qdd = kkt_solve(&m, &f, &rows)?;
    Some(euler_step(q, qd, &qdd, h))
}

/// The KKT rows `C_J q̈ = d_C` of the equality constraints (`cj` their Jacobian at `q`) with
/// Baumgarte's terms ([`baumgarte_rhs`]), over any scalar, in a vector with room for
/// `capacity` rows in all.
#[allow(clippy::too_many_arguments)]
pub(crate) fn equality_rows<
    M,
    S,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    cj: &SMatrix<S, NC, NQ>,
    q: &SVector<S, NQ>,
    qd: &SVector<S, NQ>,
    p: &[S; NP],
    t: S,
    baumgarte: (f64, f64),
    capacity: usize,
) -> Vec<KktRow<S, NQ>>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
    S: Real,
{
    let (c, ct, gamma) = (
        M::residual_s(q, p, t),
        M::jacobian_t_s(q, p, t),
        M::gamma_s(q, qd, p, t),
    );
    let mut rows = Vec::with_capacity(capacity);
    for r in 0..NC {
        let a = SVector::<S, NQ>::from_fn(|j, _| cj[(r, j)]);
        let d = baumgarte_rhs(&a, qd, c[r], ct[r], gamma[r], baumgarte);
        rows.push(KktRow::equal(a, d));
    }
    rows
}

/// Baumgarte's right-hand side of one constraint row `a`:
/// `d = γ − 2α (a·q̇ + ∂/∂t) − β² value`.
pub(crate) fn baumgarte_rhs<S: Real, const NQ: usize>(
    a: &SVector<S, NQ>,
    qd: &SVector<S, NQ>,
    value: S,
    dt: S,
    gamma: S,
    (alpha, beta): (f64, f64),
) -> S {
    let mut w = dt;
    for (x, v) in a.iter().zip(qd.iter()) {
        w += *x * *v;
    }
    gamma - w * S::from_f64(2.0 * alpha) - value * S::from_f64(beta * beta)
}

/// One semi-implicit Euler step from the accelerations `q̈`: `q̇' = q̇ + h q̈`, `q' = q + h q̇'`.
pub(crate) fn euler_step<S: Real, const NQ: usize>(
    q: &SVector<S, NQ>,
    qd: &SVector<S, NQ>,
    qdd: &SVector<S, NQ>,
    h: S,
) -> (SVector<S, NQ>, SVector<S, NQ>) {
    let v = SVector::<S, NQ>::from_fn(|i, _| qd[i] + qdd[i] * h);
    (SVector::<S, NQ>::from_fn(|i, _| q[i] + v[i] * h), v)
}

/// The Jacobians of one contact step at `(q, q̇)`: `∂q'/∂q`, `∂q'/∂q̇`, `∂q̇'/∂q`,
/// `∂q̇'/∂q̇`, `∂q'/∂p`, `∂q̇'/∂p`, and the clamping set they hold.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactStepJacobians<const NQ: usize, const NP: usize> {
    /// `∂q'/∂q`.
    pub pos_pos: SMatrix<f64, NQ, NQ>,
    /// `∂q'/∂q̇`.
    pub pos_vel: SMatrix<f64, NQ, NQ>,
    /// `∂q̇'/∂q`.
    pub vel_pos: SMatrix<f64, NQ, NQ>,
    /// `∂q̇'/∂q̇`.
    pub vel_vel: SMatrix<f64, NQ, NQ>,
    /// `∂q'/∂p` (the parameters in the order of `generic::PARAM_NAMES`).
    pub pos_par: SMatrix<f64, NQ, NP>,
    /// `∂q̇'/∂p`.
    pub vel_par: SMatrix<f64, NQ, NP>,
    /// The handled (clamping) inequalities at `(q, q̇)`, held in the linearisation.
    pub clamping: Vec<usize>,
    /// The step itself: `(q', q̇')`.
    pub next: (SVector<f64, NQ>, SVector<f64, NQ>),
}

/// The exact Jacobians of one semi-implicit Euler contact step of length `h` at `(q, q̇)`
/// by the clamping-set linearisation: the active-set solve ([`contact_accelerations`] with
/// `opts`) gives the handled set; the step with that set held as equality constraints is
/// differentiated by dual numbers through the generated generic functions (eight
/// directions a pass, over the state and the parameters). Inactive contacts do not enter; a contact about to activate or to
/// release within the step is outside the linearisation's neighbourhood (as in Nimble).
///
/// Errors: the solver's, and [`ContactError::Singular`] when the KKT system with the
/// clamping set is singular.
pub fn contact_step_jacobians<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NP: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &ContactOptions,
) -> Result<ContactStepJacobians<NQ, NP>, ContactError>
where
    M: GenericInequalities<NQ, NC, DOF, NI, NP>,
{
    let solve = contact_accelerations::<M, NQ, NC, DOF, NI>(q, qd, p, t, &[], opts)?;
    let pv = M::param_values(p);
    let handled = &solve.handled;
    let baumgarte = opts.baumgarte;
    let next =
        contact_step_generic::<M, f64, NQ, NC, DOF, NI, NP>(q, qd, &pv, t, h, handled, baumgarte);
    let held = (q, qd, &pv, t, h);
    jacobians_by_duals(held, handled.clone(), next, |qs, qds, pd, td, hd| {
        contact_step_generic::<M, Dual<DUAL_LANES>, NQ, NC, DOF, NI, NP>(
            qs, qds, pd, td, hd, handled, baumgarte,
        )
    })
}

/// The dual-number lanes of one pass of [`jacobians_by_duals`].
pub(crate) const DUAL_LANES: usize = 8;

impl<const NQ: usize, const NP: usize> ContactStepJacobians<NQ, NP> {
    /// `Some(self)` when every entry is finite.
    pub(crate) fn finite(self) -> Option<Self> {
        let all = [
            self.pos_pos.as_slice(),
            self.pos_vel.as_slice(),
            self.vel_pos.as_slice(),
            self.vel_vel.as_slice(),
            self.pos_par.as_slice(),
            self.vel_par.as_slice(),
        ];
        all.iter()
            .all(|s| s.iter().all(|v| v.is_finite()))
            .then_some(self)
    }
}

/// The state, the parameters' values, the time and the step length a held step is taken
/// from.
type HeldAt<'a, const NQ: usize, const NP: usize> = (
    &'a SVector<f64, NQ>,
    &'a SVector<f64, NQ>,
    &'a [f64; NP],
    f64,
    f64,
);

/// The Jacobians of a step held on `clamping` (`(q, q̇, p) ↦ (q', q̇')`) at `(q, q̇, p)` of
/// `at` (`(q, q̇, p, t, h)`): `next` its value there, `step` its evaluation over dual
/// numbers (given `t` and `h` as dual constants), seeded `DUAL_LANES` directions a pass over
/// the state and the parameters. Errors: singular (`E::singular`) when the value or a pass
/// fails (a singular system), non-finite (`E::non_finite`) for a non-finite entry.
#[allow(clippy::type_complexity)]
pub(crate) fn jacobians_by_duals<const NQ: usize, const NP: usize, E: PhaseError>(
    (q, qd, pv, t, h): HeldAt<'_, NQ, NP>,
    clamping: Vec<usize>,
    next: Option<(SVector<f64, NQ>, SVector<f64, NQ>)>,
    step: impl Fn(
        &SVector<Dual<DUAL_LANES>, NQ>,
        &SVector<Dual<DUAL_LANES>, NQ>,
        &[Dual<DUAL_LANES>; NP],
        Dual<DUAL_LANES>,
        Dual<DUAL_LANES>,
    ) -> Option<(SVector<Dual<DUAL_LANES>, NQ>, SVector<Dual<DUAL_LANES>, NQ>)>,
) -> Result<ContactStepJacobians<NQ, NP>, E> {
    let next = next.ok_or_else(|| E::singular(t))?;
    let (td, hd) = (Dual::constant(t), Dual::constant(h));
    let step = |qs: &_, qds: &_, pd: &_| step(qs, qds, pd, td, hd);
    directional_jacobians(q, qd, pv, clamping, next, step)
        .ok_or_else(|| E::singular(t))?
        .finite()
        .ok_or_else(|| E::non_finite(t))
}

/// The Jacobians of `step` (`(q, q̇, p) ↦ (q', q̇')`, over dual numbers) at `(q, q̇, p)`,
/// seeded `DUAL_LANES` directions a pass over the state and the parameters; `None` when a
/// pass fails. `next` is the step's value at the point and `clamping` the set it held.
fn directional_jacobians<const NQ: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    pv: &[f64; NP],
    clamping: Vec<usize>,
    next: (SVector<f64, NQ>, SVector<f64, NQ>),
    step: impl Fn(
        &SVector<Dual<DUAL_LANES>, NQ>,
        &SVector<Dual<DUAL_LANES>, NQ>,
        &[Dual<DUAL_LANES>; NP],
    ) -> Option<(SVector<Dual<DUAL_LANES>, NQ>, SVector<Dual<DUAL_LANES>, NQ>)>,
) -> Option<ContactStepJacobians<NQ, NP>> {
    const N: usize = DUAL_LANES;
    let mut out = ContactStepJacobians {
        pos_pos: SMatrix::zeros(),
        pos_vel: SMatrix::zeros(),
        vel_pos: SMatrix::zeros(),
        vel_vel: SMatrix::zeros(),
        pos_par: SMatrix::zeros(),
        vel_par: SMatrix::zeros(),
        clamping,
        next,
    };
    // Directions: q (0 … NQ−1), q̇ (NQ … 2NQ−1), p (2NQ … 2NQ+NP−1), N a pass.
    let total = 2 * NQ + NP;
    for first in (0..total).step_by(N) {
        let seeded = |x: f64, dir: usize| {
            if dir >= first && dir < first + N {
                Dual::variable(x, dir - first)
            } else {
                Dual::constant(x)
            }
        };
        let qs = SVector::<Dual<N>, NQ>::from_fn(|i, _| seeded(q[i], i));
        let qds = SVector::<Dual<N>, NQ>::from_fn(|i, _| seeded(qd[i], NQ + i));
        let pd: [Dual<N>; NP] = core::array::from_fn(|k| seeded(pv[k], 2 * NQ + k));
        let (qn, qdn) = step(&qs, &qds, &pd)?;
        for k in 0..N {
            let dir = first + k;
            if dir >= total {
                break;
            }
            for i in 0..NQ {
                let (a, b) = (qn[i].eps[k], qdn[i].eps[k]);
                if dir < NQ {
                    out.pos_pos[(i, dir)] = a;
                    out.vel_pos[(i, dir)] = b;
                } else if dir < 2 * NQ {
                    out.pos_vel[(i, dir - NQ)] = a;
                    out.vel_vel[(i, dir - NQ)] = b;
                } else {
                    out.pos_par[(i, dir - 2 * NQ)] = a;
                    out.vel_par[(i, dir - 2 * NQ)] = b;
                }
            }
        }
    }
    Some(out)
}
