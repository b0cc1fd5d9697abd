//! Inequality (unilateral) constraints `g(q, p, t) ≥ 0` in the Lagrange-multiplier
//! formulation, after Jonquet, Nocent and Remion, "The art to keep in touch: the good use
//! of Lagrange multipliers" (GRAPP 2007):
//!
//! `M q̈ = f + C_Jᵀ μ + J_Hᵀ λ`, `C_J q̈ = d_C`, `J_H q̈ = d_H`, with `H` the *handled*
//! inequalities and Baumgarte's stabilisation in `d` (`d = γ − 2α ẇ − β² w` for a
//! constraint value `w`).
//!
//! * [`ActiveSet::Right`] (the paper's algorithm 3, the default): at each evaluation the
//!   active inequalities (`|g_k| ≤ active_tol`) are found, `H` starts empty, and every active
//!   `k` whose *violation tendency* `J_k q̈ < d_k` holds for the current accelerations is
//!   added, until none is. The result is then checked for complementarity (`λ_k ≥ 0` on `H`,
//!   `J_k q̈ ≥ d_k` on the rest of the active set); where that fails (the paper's algorithm
//!   never removes a row), a principal-pivoting LCP solve (Murty's least-index rule, from
//!   `H`) finishes, and [`ContactPath::Lcp`] says so. Every loop is bounded: an
//!   [`ContactError::NoConvergence`] instead of a cycle.
//! * [`ActiveSet::Platt`] (algorithm 1) and [`ActiveSet::Tendency`] (algorithm 2): the
//!   earlier methods the paper shows failing, to reproduce its figures.
//!
//! [`simulate_contact`] integrates with semi-implicit Euler steps, locates the first
//! crossing of an inactive inequality inside a step (bisection on the step length), and
//! applies an impact there: the same active-set algorithm on impulses,
//! `M Δq̇ = J_Hᵀ Λ`, `J_k (q̇ + Δq̇) ≥ −e_k J_k q̇`, so kinetic energy never increases for
//! `e ≤ 1`.

use nalgebra::{DMatrix, DVector, SMatrix, SVector};

mod active_set;
mod adaptive;
mod friction;
mod joint_friction;
mod linearise;
mod phases;
/// The friction data a model provides ([`crate::Friction`], here for the solvers' callers).
pub use crate::mechanism::Friction;
pub use adaptive::{simulate_contact_adaptive, AdaptiveContactOptions};
pub use friction::{
    friction_accelerations, friction_accelerations_with_modes, friction_impact,
    friction_step_generic, friction_step_jacobians, simulate_friction_adaptive,
    AdaptiveFrictionOptions, ContactMode, FrictionError, FrictionEvent, FrictionOptions,
    FrictionSolve, FrictionTrajectory,
};
pub use joint_friction::{
    joint_friction_accelerations, joint_friction_step_generic, joint_friction_step_jacobians,
    simulate_joint_friction_adaptive, AdaptiveJointFrictionOptions, JointFrictionError,
    JointFrictionEvent, JointFrictionOptions, JointFrictionSolve, JointFrictionTrajectory,
    JointMode,
};
pub use linearise::{contact_step_generic, contact_step_jacobians, ContactStepJacobians};

use crate::error::ContactError;
use crate::mechanism::Inequalities;
use active_set::{active_set_solve, Problem};

/// Which active-set method chooses the handled inequalities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActiveSet {
    /// Algorithm 3 of the paper, completed by an LCP solve where complementarity fails.
    Right,
    /// Algorithm 1 (Platt): `H` carried from step to step, a row dropped when its
    /// multiplier is `≤ 0`, added when its inequality is violated (`g_k < 0`) after a step.
    Platt,
    /// Algorithm 2: the active rows whose violation tendency holds for the accelerations
    /// without inequalities, solved once.
    Tendency,
}

/// Options of the contact solver and simulator.
#[derive(Clone, Copy, Debug)]
pub struct ContactOptions {
    /// The active-set method.
    pub algorithm: ActiveSet,
    /// `|g_k| ≤ active_tol` makes inequality `k` active.
    pub active_tol: f64,
    /// A violation tendency `J_k q̈ < d_k − tendency_tol`, a negative multiplier
    /// `λ_k < −tendency_tol` (relative to the largest of `|d|`, `|f|` and 1).
    pub tendency_tol: f64,
    /// Baumgarte's `α` (velocity feedback `2α`) and `β` (position feedback `β²`).
    pub baumgarte: (f64, f64),
    /// Finish with the LCP solve where algorithm 3's result fails complementarity.
    pub lcp_fallback: bool,
    /// Locate crossings of inactive inequalities inside a step and apply impacts there
    /// ([`simulate_contact`]); off, a step may end beyond a boundary (as in the paper's
    /// comparison of the algorithms).
    pub locate_events: bool,
    /// Most events (crossings) located in one step before [`ContactError::TooManyEvents`].
    pub max_events_per_step: usize,
}

impl Default for ContactOptions {
    fn default() -> Self {
        Self {
            algorithm: ActiveSet::Right,
            active_tol: 1e-9,
            tendency_tol: 1e-12,
            baumgarte: (0.0, 0.0),
            lcp_fallback: true,
            locate_events: true,
            max_events_per_step: 64,
        }
    }
}

/// How the handled set of a solve was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactPath {
    /// The active-set method alone.
    ActiveSet,
    /// Algorithm 3 left a negative multiplier (or an unhandled violation); the LCP solve
    /// finished in this many pivots.
    Lcp {
        /// Principal pivots taken.
        pivots: usize,
    },
}

/// The result of one contact solve.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactSolve<const NQ: usize> {
    /// Accelerations `q̈` (or, for an impact, the velocity change `Δq̇`).
    pub qdd: SVector<f64, NQ>,
    /// Handled inequalities, ascending.
    pub handled: Vec<usize>,
    /// Their multipliers (impulses for an impact), in the order of `handled`.
    pub lambda: Vec<f64>,
    /// Multipliers of the equality constraints.
    pub mu: Vec<f64>,
    /// Linear solves made.
    pub iterations: usize,
    /// How the handled set was found.
    pub path: ContactPath,
}

/// The equations of motion with the equality constraints at one state, `M a = f + C_Jᵀ μ`,
/// `C_J a = d_C`: what each contact problem borders with its own contact or slip rows.
pub(super) struct Motion {
    /// The mass matrix `M`.
    pub(super) m: DMatrix<f64>,
    /// The forces `f`.
    pub(super) f: DVector<f64>,
    /// The constraint Jacobian `C_J`.
    pub(super) cj: DMatrix<f64>,
    /// The constraints' acceleration right-hand side `d_C`.
    pub(super) dc: DVector<f64>,
    /// Time.
    pub(super) t: f64,
}

impl Motion {
    /// The equations at `here`, with Baumgarte's stabilisation `(α, β)` in `d_C`.
    pub(super) fn at<M, const NQ: usize, const NC: usize, const DOF: usize>(
        here: Point<'_, M::Params, NQ>,
        baumgarte: (f64, f64),
    ) -> Self
    where
        M: crate::mechanism::Dynamics<NQ, NC, DOF>,
    {
        let Point { q, qd, p, t } = here;
        let (cj, dc) = here.equalities::<M, NC, DOF>(baumgarte);
        Self {
            m: dmat(&M::mass_matrix(q, p, t)),
            f: dvec(&M::forces(q, qd, p, t)),
            cj: dmat(&cj),
            dc: dvec(&dc),
            t,
        }
    }

    /// Whether `M`, `f`, `d_C` and the caller's `more` values are all finite (a non-finite
    /// `C_J` makes `d_C` non-finite).
    #[inline]
    pub(super) fn finite(&self, more: &[&[f64]]) -> bool {
        let finite = crate::linalg::finite;
        finite(self.m.as_slice())
            && finite(self.f.as_slice())
            && finite(self.dc.as_slice())
            && more.iter().all(|s| finite(s))
    }

    /// The scale of a problem's tolerances: the largest of `|f|`, `|d_C|`, the caller's
    /// right-hand sides `more` and 1.
    #[inline]
    pub(super) fn scale(&self, more: &[&DVector<f64>]) -> f64 {
        more.iter()
            .fold(self.f.amax().max(self.dc.amax()), |s, d| s.max(d.amax()))
            .max(1.0)
    }

    /// The saddle-point system `[M, −C_Jᵀ; C_J, 0] (q̈, μ) = (f, d_C)`, bordered by `extra`
    /// zero rows and columns (and zero right-hand sides) for the caller's rows.
    pub(super) fn saddle(&self, extra: usize) -> (DMatrix<f64>, DVector<f64>) {
        let nq = self.m.nrows();
        let nc = self.cj.nrows();
        let n = nq + nc + extra;
        let mut k = DMatrix::<f64>::zeros(n, n);
        let mut rhs = DVector::<f64>::zeros(n);
        k.view_mut((0, 0), (nq, nq)).copy_from(&self.m);
        rhs.rows_mut(0, nq).copy_from(&self.f);
        for i in 0..nc {
            hold(&mut k, &mut rhs, nq + i, (&self.cj, i), self.dc[i]);
        }
        (k, rhs)
    }
}

/// Writes the held row `J_r a = d` (row `r` of `j`) into a saddle-point system at index
/// `at`: the row in row `at`, its negative in column `at`, `d` on the right-hand side.
#[inline]
pub(super) fn hold(
    k: &mut DMatrix<f64>,
    rhs: &mut DVector<f64>,
    at: usize,
    (j, r): (&DMatrix<f64>, usize),
    d: f64,
) {
    for c in 0..j.ncols() {
        k[(at, c)] = j[(r, c)];
        k[(c, at)] = -j[(r, c)];
    }
    rhs[at] = d;
}

/// Solves a saddle-point system `k x = rhs` by LU; where that fails or is not finite
/// (dependent rows: more contacts than directions), the least-squares solution of the
/// consistent system. `None`: singular and inconsistent (residual above `1e-8` relative).
pub(super) fn solve_saddle(k: &DMatrix<f64>, rhs: &DVector<f64>) -> Option<DVector<f64>> {
    match k.clone().lu().solve(rhs) {
        Some(x) if x.iter().all(|v| v.is_finite()) => Some(x),
        _ => {
            let svd = crate::linalg::svd(k.clone())?;
            let x = svd.solve(rhs, 1e-12 * svd.singular_values.max()).ok()?;
            let res = (k * &x - rhs).norm();
            if res.is_nan() || res > 1e-8 * rhs.norm().max(1.0) {
                return None;
            }
            Some(x)
        }
    }
}

/// The minimum-kinetic-energy velocity correction at `here`: the `q̇ + Δq̇` nearest `q̇` in
/// the mass matrix's metric that satisfies `a_i q̇ + c_i = 0` for the velocity rows of the
/// equality constraints (`C_J q̇ + C_t = 0`) and each of the caller's rows `(a_i, c_i)` (no
/// rows at all leave `q̇` as it is). `Δq̇ = M⁻¹Aᵀ λ` with `A M⁻¹Aᵀ λ = −(A q̇ + c)`, solved in
/// the least-squares sense (dependent rows allowed). Errors: singular (`E::singular`) where
/// `M` or the reduced system is singular, non-finite (`E::non_finite`) for a non-finite
/// result.
pub(super) fn velocity_correction<M, const NQ: usize, const NC: usize, const DOF: usize, E>(
    here: Point<'_, M::Params, NQ>,
    more: Vec<(Vec<f64>, f64)>,
) -> Result<SVector<f64, NQ>, E>
where
    M: crate::mechanism::Dynamics<NQ, NC, DOF>,
    E: phases::PhaseError,
{
    let Point { q, qd, p, t } = here;
    let (cj, ct) = (M::jacobian(q, p, t), M::jacobian_t(q, p, t));
    let mut rows: Vec<(Vec<f64>, f64)> = (0..NC)
        .map(|i| (cj.row(i).iter().copied().collect(), ct[i]))
        .collect();
    rows.extend(more);
    let out = if rows.is_empty() {
        *qd
    } else {
        let m = dmat(&M::mass_matrix(q, p, t));
        let a = DMatrix::from_fn(rows.len(), NQ, |i, j| rows[i].0[j]);
        let r = DVector::from_fn(rows.len(), |i, _| -((a.row(i) * dvec(qd))[0] + rows[i].1));
        let minv_at = m.lu().solve(&a.transpose()).ok_or_else(|| E::singular(t))?;
        let s = &a * &minv_at;
        let svd = crate::linalg::svd(s).ok_or_else(|| E::singular(t))?;
        let lam = svd
            .solve(&r, 1e-12 * svd.singular_values.max())
            .map_err(|_| E::singular(t))?;
        qd + SVector::<f64, NQ>::from_iterator((minv_at * lam).iter().copied())
    };
    if out.iter().all(|v| v.is_finite()) {
        Ok(out)
    } else {
        Err(E::non_finite(t))
    }
}

/// A state `(q, q̇)` of a model with parameters `p` at time `t`: where the contact solvers
/// evaluate the rows they share.
pub(super) struct Point<'a, P, const NQ: usize> {
    pub(super) q: &'a SVector<f64, NQ>,
    pub(super) qd: &'a SVector<f64, NQ>,
    pub(super) p: &'a P,
    pub(super) t: f64,
}

impl<P, const NQ: usize> Clone for Point<'_, P, NQ> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P, const NQ: usize> Copy for Point<'_, P, NQ> {}

impl<P, const NQ: usize> Point<'_, P, NQ> {
    /// The equality constraints' acceleration rows with Baumgarte's stabilisation `(α, β)`:
    /// `C_J` and `d_C = γ − 2α (C_J q̇ + C_t) − β² C`.
    pub(super) fn equalities<M, const NC: usize, const DOF: usize>(
        &self,
        (alpha, beta): (f64, f64),
    ) -> (SMatrix<f64, NC, NQ>, SVector<f64, NC>)
    where
        M: crate::mechanism::Dynamics<NQ, NC, DOF, Params = P>,
    {
        let Point { q, qd, p, t } = *self;
        let cj = M::jacobian(q, p, t);
        let w = cj * qd + M::jacobian_t(q, p, t);
        let dc = M::gamma(q, qd, p, t) - w * (2.0 * alpha) - M::residual(q, p, t) * (beta * beta);
        (cj, dc)
    }

    /// The gaps `g`, their Jacobian `J_g` and the normal velocities `v_n = J_g q̇ + ∂g/∂t`.
    #[allow(clippy::type_complexity)]
    pub(super) fn gaps<M, const NC: usize, const DOF: usize, const NI: usize>(
        &self,
    ) -> (SVector<f64, NI>, SMatrix<f64, NI, NQ>, SVector<f64, NI>)
    where
        M: Inequalities<NQ, NC, DOF, NI, Params = P>,
    {
        let Point { q, qd, p, t } = *self;
        let jg = M::inequality_jacobian(q, p, t);
        let vn = jg * qd + M::inequality_jacobian_t(q, p, t);
        (M::inequality(q, p, t), jg, vn)
    }

    /// The normal velocities `v_n` and, for the accelerations `qdd`, the normal accelerations
    /// `a_n = J_g q̈ − γ_g` (negative: towards the contact).
    pub(super) fn approach<M, const NC: usize, const DOF: usize, const NI: usize>(
        &self,
        qdd: &SVector<f64, NQ>,
    ) -> (SVector<f64, NI>, SVector<f64, NI>)
    where
        M: Inequalities<NQ, NC, DOF, NI, Params = P>,
    {
        let (_, jg, vn) = self.gaps::<M, NC, DOF, NI>();
        (
            vn,
            jg * qdd - M::inequality_gamma(self.q, self.qd, self.p, self.t),
        )
    }

    /// The inequality rows with Baumgarte's stabilisation `(α, β)`: [`Point::gaps`] and
    /// `d_g = γ_g − 2α v_n − β² g`.
    #[allow(clippy::type_complexity)]
    pub(super) fn inequalities<M, const NC: usize, const DOF: usize, const NI: usize>(
        &self,
        (alpha, beta): (f64, f64),
    ) -> (SVector<f64, NI>, SMatrix<f64, NI, NQ>, SVector<f64, NI>)
    where
        M: Inequalities<NQ, NC, DOF, NI, Params = P>,
    {
        let (g, jg, vn) = self.gaps::<M, NC, DOF, NI>();
        let dg = M::inequality_gamma(self.q, self.qd, self.p, self.t)
            - vn * (2.0 * alpha)
            - g * (beta * beta);
        (g, jg, dg)
    }
}

/// How many assignments the per-contact choices `radices` make (their product), if at
/// most `max` (`None`: more, or an overflow).
pub(super) fn assignments(radices: &[usize], max: usize) -> Option<usize> {
    radices
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&n| n <= max)
}

/// The mode enumeration of the frictional solvers: calls `visit` with the digits of each
/// of the `total` assignments of the per-contact choices `radices` (mixed radix, the first
/// contact's choice varying fastest, so that each contact's preferred choice is tried first)
/// until it returns a value.
pub(super) fn first_assignment<T, E>(
    radices: &[usize],
    total: usize,
    mut visit: impl FnMut(&[usize]) -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    let mut digits = vec![0; radices.len()];
    for mut code in 0..total {
        for (d, &n) in digits.iter_mut().zip(radices) {
            *d = code % n;
            code /= n;
        }
        if let Some(found) = visit(&digits)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Checks [`ContactOptions::active_tol`] (the simulators' and the frictional solver's).
fn check_active_tol(active_tol: f64) -> Result<(), ContactError> {
    if active_tol > 0.0 && active_tol.is_finite() {
        Ok(())
    } else {
        Err(ContactError::InvalidOptions(
            "active_tol must be positive and finite",
        ))
    }
}

fn dmat<const R: usize, const C: usize>(m: &SMatrix<f64, R, C>) -> DMatrix<f64> {
    DMatrix::from_fn(R, C, |i, j| m[(i, j)])
}

fn dvec<const R: usize>(v: &SVector<f64, R>) -> DVector<f64> {
    DVector::from_iterator(R, v.iter().copied())
}

/// The accelerations with the inequality constraints handled by `opts.algorithm`
/// (`carried`: for [`ActiveSet::Platt`], the handled set of the last step; ignored by the
/// others).
pub fn contact_accelerations<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    carried: &[usize],
    opts: &ContactOptions,
) -> Result<ContactSolve<NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let at = Point { q, qd, p, t };
    accelerations_excluding::<M, NQ, NC, DOF, NI>(at, carried, opts, &[false; NI])
}

/// [`contact_accelerations`] with the contacts marked `excluded` never active (a contact
/// leaving its boundary after an impact, for the adaptive simulator).
pub(super) fn accelerations_excluding<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
>(
    at: Point<'_, M::Params, NQ>,
    carried: &[usize],
    opts: &ContactOptions,
    excluded: &[bool; NI],
) -> Result<ContactSolve<NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let motion = Motion::at::<M, NQ, NC, DOF>(at, opts.baumgarte);
    let (g, jg, dg) = at.inequalities::<M, NC, DOF, NI>(opts.baumgarte);
    if !motion.finite(&[g.as_slice(), jg.as_slice(), dg.as_slice()]) {
        return Err(ContactError::NonFinite { t: at.t });
    }
    let active: Vec<usize> = (0..NI)
        .filter(|&k| g[k].abs() <= opts.active_tol && !excluded[k])
        .collect();
    active_set_solve(&Problem::new(motion, &jg, &dg), &active, carried, opts)
}

/// The impact at `(q, q̇)`: the velocity change `Δq̇` (in `qdd`) and impulses for the
/// active contacts, by algorithm 3 on impulses with restitution: `M Δq̇ = C_Jᵀ μ + J_Hᵀ Λ`,
/// `C_J (q̇ + Δq̇) = −C_t`, and for each active `k` with normal velocity `v_k = J_k q̇ + ∂g_k/∂t`
/// the post-impact `J_k (q̇ + Δq̇) + ∂g_k/∂t ≥ −e_k min(v_k, 0)`, complementary with
/// `Λ ≥ 0` (a resting contact, `v_k = 0`, takes part: a ball struck in a row of touching
/// balls passes the impulse on).
pub fn contact_impact<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &ContactOptions,
) -> Result<ContactSolve<NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    impact_with::<M, NQ, NC, DOF, NI>(Point { q, qd, p, t }, opts, &[false; NI])
}

/// [`contact_impact`] with the restitution of the contacts marked `plastic` taken as 0.
fn impact_with<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>(
    here: Point<'_, M::Params, NQ>,
    opts: &ContactOptions,
    plastic: &[bool; NI],
) -> Result<ContactSolve<NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let Point { q, qd, p, t } = here;
    let cj = M::jacobian(q, p, t);
    let motion = Motion {
        m: dmat(&M::mass_matrix(q, p, t)),
        f: DVector::<f64>::zeros(NQ),
        cj: dmat(&cj),
        dc: dvec(&-(cj * qd + M::jacobian_t(q, p, t))),
        t,
    };
    let g = M::inequality(q, p, t);
    let jg = M::inequality_jacobian(q, p, t);
    let vn = jg * qd + M::inequality_jacobian_t(q, p, t);
    let e = |k: usize| if plastic[k] { 0.0 } else { M::RESTITUTION[k] };
    let dg = SVector::<f64, NI>::from_fn(|k, _| -vn[k] - e(k) * vn[k].min(0.0));
    let active: Vec<usize> = (0..NI).filter(|&k| g[k].abs() <= opts.active_tol).collect();
    let pb = Problem::new(motion, &jg, &dg);
    let right = ContactOptions {
        algorithm: ActiveSet::Right,
        ..*opts
    };
    active_set_solve(&pb, &active, &[], &right)
}

/// A simulated motion with contacts, at the step times.
#[derive(Clone, Debug, Default)]
pub struct ContactTrajectory<const NQ: usize> {
    /// Times: `t0` and the end of each step.
    pub t: Vec<f64>,
    /// Coordinates.
    pub q: Vec<SVector<f64, NQ>>,
    /// Velocities.
    pub qd: Vec<SVector<f64, NQ>>,
    /// Accelerations of each step (from its start), one fewer than `t`.
    pub qdd: Vec<SVector<f64, NQ>>,
    /// Handled inequalities of each step.
    pub handled: Vec<Vec<usize>>,
    /// Linear solves of each step's active-set method.
    pub iterations: Vec<usize>,
    /// Steps finished by the LCP fallback.
    pub lcp_steps: usize,
    /// Times of the located events (impacts and activations).
    pub events: Vec<f64>,
    /// The inequality whose crossing each event is ([`simulate_contact_adaptive`]; empty
    /// for the fixed-step route).
    pub event_contacts: Vec<usize>,
    /// Impacts applied (events where some contact took an impulse).
    pub impacts: usize,
    /// Contacts that took an impulse at each impact.
    pub impact_contacts: Vec<Vec<usize>>,
}

phases::impl_record!(ContactTrajectory);

/// The contacts whose impact is a *micro-impact*, taken as plastic (restitution 0): the
/// approach speed `|v_k|` is at most what the step's acceleration `q̈` gives the contact
/// over two steps, `2 h |J_k q̈ − γ_k|` with the acceleration towards the contact. A
/// bounce off such an impact comes back within a step or two: with restitution it becomes
/// a Zeno sequence of ever smaller impacts, one per step, and the contact never settles
/// into the acceleration-level handled set (a slider resting on its stop under a steady
/// force took 2,478 impulses in 3,000 steps). The threshold is the model's own
/// acceleration times the step, so it has the units and scale of the motion.
fn micro_impacts<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>(
    here: Point<'_, M::Params, NQ>,
    qdd: Option<&SVector<f64, NQ>>,
    h: f64,
) -> [bool; NI]
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let Some(qdd) = qdd else {
        return [false; NI];
    };
    let (vn, an) = here.approach::<M, NC, DOF, NI>(qdd);
    std::array::from_fn(|k| an[k] < 0.0 && vn[k] < 0.0 && -vn[k] <= -2.0 * h * an[k])
}

/// One semi-implicit Euler step of length `h`: `q̇' = q̇ + h q̈`, `q' = q + h q̇'`.
fn euler<const NQ: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    qdd: &SVector<f64, NQ>,
    h: f64,
) -> (SVector<f64, NQ>, SVector<f64, NQ>) {
    let v = qd + qdd * h;
    (q + v * h, v)
}

/// Simulates `steps` semi-implicit Euler steps of length `h` from `(q0, q̇0)` at `t0` with
/// the inequality constraints handled by `opts.algorithm`; with `opts.locate_events`, a step
/// that would carry an inactive inequality below `−active_tol` is cut at the crossing
/// (bisection on the step length, to `active_tol`), an impact is applied there, and the
/// step goes on.
pub fn simulate_contact<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    h: f64,
    steps: usize,
    opts: &ContactOptions,
) -> Result<ContactTrajectory<NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    if !(h > 0.0 && h.is_finite()) {
        return Err(ContactError::InvalidOptions(
            "the step must be positive and finite",
        ));
    }
    check_active_tol(opts.active_tol)?;
    let mut out = ContactTrajectory::<NQ> {
        t: vec![t0],
        q: vec![*q0],
        qd: vec![*qd0],
        ..Default::default()
    };
    let (mut q, mut qd, mut t) = (*q0, *qd0, t0);
    // Platt's handled set, carried from step to step: the active ones at the start.
    let g0 = M::inequality(&q, p, t);
    let mut carried: Vec<usize> = (0..NI)
        .filter(|&k| g0[k].abs() <= opts.active_tol)
        .collect();
    for _ in 0..steps {
        let t_end = t + h;
        let mut first = true;
        let mut events = 0;
        while t < t_end {
            if opts.locate_events {
                // An active contact approaching (reached at the end of the last step, or
                // within the tolerance): the impact first.
                let here = Point {
                    q: &q,
                    qd: &qd,
                    p,
                    t,
                };
                let (g, _, vn) = here.gaps::<M, NC, DOF, NI>();
                if phases::impact_due(&g, &vn, opts.active_tol) {
                    events += 1;
                    if events > opts.max_events_per_step {
                        return Err(ContactError::TooManyEvents { t });
                    }
                    let plastic = micro_impacts::<M, NQ, NC, DOF, NI>(here, out.qdd.last(), h);
                    let imp = impact_with::<M, NQ, NC, DOF, NI>(here, opts, &plastic)?;
                    if !imp.handled.is_empty() {
                        out.impacts += 1;
                        out.impact_contacts.push(imp.handled.clone());
                        out.events.push(t);
                    }
                    qd += imp.qdd;
                }
            }
            let hs = t_end - t;
            let s = contact_accelerations::<M, NQ, NC, DOF, NI>(&q, &qd, p, t, &carried, opts)?;
            if first {
                out.qdd.push(s.qdd);
                out.handled.push(s.handled.clone());
                out.iterations.push(s.iterations);
                if matches!(s.path, ContactPath::Lcp { .. }) {
                    out.lcp_steps += 1;
                }
                first = false;
            }
            let (q1, qd1) = euler(&q, &qd, &s.qdd, hs);
            if !(q1.iter().all(|v| v.is_finite()) && qd1.iter().all(|v| v.is_finite())) {
                return Err(ContactError::NonFinite { t });
            }
            let g_start = M::inequality(&q, p, t);
            let crossing = |qq: &SVector<f64, NQ>, tt: f64| {
                let g = M::inequality(qq, p, tt);
                (0..NI)
                    .filter(|&k| g_start[k] > opts.active_tol)
                    .map(|k| g[k])
                    .fold(f64::INFINITY, f64::min)
            };
            if opts.locate_events && crossing(&q1, t_end) < -opts.active_tol {
                events += 1;
                if events > opts.max_events_per_step {
                    return Err(ContactError::TooManyEvents { t });
                }
                // Bisection on the step length: the largest step whose new position keeps
                // every inactive inequality above −active_tol.
                let (mut lo, mut hi) = (0.0, hs);
                for _ in 0..200 {
                    let mid = 0.5 * (lo + hi);
                    let (qm, _) = euler(&q, &qd, &s.qdd, mid);
                    let gm = crossing(&qm, t + mid);
                    if gm < -opts.active_tol {
                        hi = mid;
                    } else {
                        lo = mid;
                        if gm <= opts.active_tol {
                            break;
                        }
                    }
                    if hi - lo <= 1e-15 * hs.max(t.abs()) {
                        break;
                    }
                }
                let (qe, qde) = euler(&q, &qd, &s.qdd, lo);
                q = qe;
                qd = qde;
                t += lo;
                out.events.push(t);
                let here = Point {
                    q: &q,
                    qd: &qd,
                    p,
                    t,
                };
                let plastic = micro_impacts::<M, NQ, NC, DOF, NI>(here, Some(&s.qdd), h);
                let imp = impact_with::<M, NQ, NC, DOF, NI>(here, opts, &plastic)?;
                if !imp.handled.is_empty() {
                    out.impacts += 1;
                    out.impact_contacts.push(imp.handled.clone());
                }
                qd += imp.qdd;
                if lo == 0.0 && imp.handled.is_empty() {
                    // No progress and nothing to change: the crossing is not resolvable by
                    // an impact (e.g. a separating contact below the tolerance).
                    return Err(ContactError::TooManyEvents { t });
                }
                continue;
            }
            q = q1;
            qd = qd1;
            t = t_end;
            if opts.algorithm == ActiveSet::Platt {
                // Rows with a multiplier ≤ 0 leave, violated rows enter.
                let g = M::inequality(&q, p, t);
                let mut next: Vec<usize> = s
                    .handled
                    .iter()
                    .zip(&s.lambda)
                    .filter(|(_, &l)| l > 0.0)
                    .map(|(&k, _)| k)
                    .collect();
                next.extend((0..NI).filter(|&k| g[k] < 0.0 && !s.handled.contains(&k)));
                carried = next;
            }
        }
        out.t.push(t);
        out.q.push(q);
        out.qd.push(qd);
    }
    Ok(out)
}
