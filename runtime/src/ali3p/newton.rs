//! One ALI3-P step: the leading matrix's factorisation, the Newton iteration on the
//! trapezoidal rule, the projections, and the initial accelerations.

use nalgebra::{SMatrix, SVector};

use crate::error::{non_finite_entries, DynamicsError, SimError};
use crate::mechanism::Dynamics;
use crate::simulate::{max_nan, Defects};

use super::*;

/// A factorisation of a leading matrix: Cholesky where it is positive definite, LU else.
pub(super) enum Factor<const N: usize> {
    Cholesky(nalgebra::Cholesky<f64, nalgebra::Const<N>>),
    /// On a heap copy: nalgebra's LU of a const-generic size needs bounds the callers
    /// cannot name (a non-symmetric tangent: velocity-dependent forces, whose `Cᵥ` has a
    /// skew gyroscopic part).
    Lu(nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>),
}

impl<const N: usize> Factor<N> {
    /// Cholesky when `a` is symmetric (to `1e-12 · max |a_ij|`) and positive definite, else
    /// LU (invertible), else `None`. nalgebra's Cholesky reads only the lower triangle: a
    /// non-symmetric matrix must not reach it (it would factor another matrix).
    pub(super) fn new(a: &SMatrix<f64, N, N>) -> Option<Self> {
        let scale = a.amax();
        if (a - a.transpose()).amax() <= 1e-12 * scale {
            if let Some(c) = a.cholesky() {
                return Some(Factor::Cholesky(c));
            }
        }
        let lu = crate::linalg::dmatrix(a).lu();
        lu.is_invertible().then_some(Factor::Lu(lu))
    }
    pub(super) fn solve(&self, b: &SVector<f64, N>) -> Option<SVector<f64, N>> {
        let x = match self {
            Factor::Cholesky(c) => c.solve(b),
            Factor::Lu(lu) => {
                let x = lu.solve(&nalgebra::DVector::from_column_slice(b.as_slice()))?;
                SVector::<f64, N>::from_column_slice(x.as_slice())
            }
        };
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}

pub(super) fn non_finite<M, const NQ: usize, const NC: usize, const DOF: usize>(
    what: &'static str,
    t: f64,
    v: &[f64],
) -> SimError
where
    M: Dynamics<NQ, NC, DOF>,
{
    let names: &[&'static str] = if v.len() == NQ { &M::COORD_NAMES } else { &[] };
    SimError::Dynamics(DynamicsError::NonFinite {
        what,
        t,
        entries: non_finite_entries(v, names),
    })
}

pub(super) fn check_finite<M, const NQ: usize, const NC: usize, const DOF: usize>(
    what: &'static str,
    t: f64,
    v: &[f64],
) -> Result<(), SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(non_finite::<M, NQ, NC, DOF>(what, t, v))
    }
}

/// The generalised forces, checked finite.
pub(super) fn forces<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    calls: &mut usize,
) -> Result<SVector<f64, NQ>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    *calls += 1;
    let f = M::forces(q, qd, p, t);
    check_finite::<M, NQ, NC, DOF>("forces", t, f.as_slice())?;
    Ok(f)
}

/// `C_Jᵀ C_J`, row by row over each row's non-zero entries (constraint Jacobians are
/// sparse: a chain's rows have a handful of entries, so this is `Σ_rows nnz²` instead of
/// `NC · NQ²` operations). The dense product's sum of the same terms, the zero ones left
/// out.
pub(super) fn gram<const NC: usize, const NQ: usize>(
    j: &SMatrix<f64, NC, NQ>,
) -> SMatrix<f64, NQ, NQ> {
    let mut g = SMatrix::<f64, NQ, NQ>::zeros();
    let mut idx = [0usize; NQ];
    for r in 0..NC {
        let mut n = 0;
        for c in 0..NQ {
            if j[(r, c)] != 0.0 {
                idx[n] = c;
                n += 1;
            }
        }
        for &a in &idx[..n] {
            let ja = j[(r, a)];
            for &b in &idx[..n] {
                g[(a, b)] += ja * j[(r, b)];
            }
        }
    }
    g
}

/// `K = −∂f/∂q` and `Cᵥ = −∂f/∂q̇` by forward differences of the forces at `(q, q̇)`.
#[allow(clippy::type_complexity)]
pub(super) fn force_derivatives<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    calls: &mut usize,
) -> Result<(SMatrix<f64, NQ, NQ>, SMatrix<f64, NQ, NQ>), SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let f0 = forces::<M, NQ, NC, DOF>(q, qd, p, t, calls)?;
    let mut kq = SMatrix::<f64, NQ, NQ>::zeros();
    let mut cv = SMatrix::<f64, NQ, NQ>::zeros();
    let eps = f64::EPSILON.sqrt();
    for j in 0..NQ {
        let dq = eps * q[j].abs().max(1.0);
        let mut qp = *q;
        qp[j] += dq;
        let fq = forces::<M, NQ, NC, DOF>(&qp, qd, p, t, calls)?;
        let dv = eps * qd[j].abs().max(1.0);
        let mut vp = *qd;
        vp[j] += dv;
        let fv = forces::<M, NQ, NC, DOF>(q, &vp, p, t, calls)?;
        for i in 0..NQ {
            kq[(i, j)] = -(fq[i] - f0[i]) / dq;
            cv[(i, j)] = -(fv[i] - f0[i]) / dv;
        }
    }
    Ok((kq, cv))
}

/// The accumulated defects of a run: the routes' [`Defects`] and the velocity residual the
/// penalty projections leave.
#[derive(Default)]
pub(super) struct Acc {
    pub(super) defects: Defects,
    pub(super) max_velocity_residual: f64,
}

impl Acc {
    pub(super) fn record<M, const NQ: usize, const NC: usize, const DOF: usize>(
        &mut self,
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) where
        M: Dynamics<NQ, NC, DOF>,
    {
        let c = M::residual(q, p, t).norm();
        let cv = (M::jacobian(q, p, t) * qd + M::jacobian_t(q, p, t)).norm();
        self.defects.residual(c);
        self.max_velocity_residual = max_nan(self.max_velocity_residual, cv);
        self.defects.energy(M::energy(q, qd, p, t));
    }
}

/// Largest number of iterations for the initial accelerations (each contracts the
/// constraint error by about `1 / penalty_factor`).
pub(super) const INITIAL_ITERATIONS: usize = 50;

/// The consistent initial accelerations by the augmented Lagrangian iteration
/// `(M + C_Jᵀ α₀ C_J) q̈ = f + C_Jᵀ (α₀ γ − λ)`, `λ ← λ + α₀ (C_J q̈ − γ)`, with
/// `α₀ = penalty_factor · max_i M_ii` (no step in it), to `‖Δq̈‖ ≤ tol (1 + ‖q̈‖)` within
/// [`INITIAL_ITERATIONS`].
/// Returns `q̈` and the multipliers `λ` of the formulation.
#[allow(clippy::too_many_arguments)]
pub(super) fn initial_accelerations<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    alpha0: f64,
    opts: &Ali3pOptions,
    calls: &mut usize,
) -> Result<(SVector<f64, NQ>, SVector<f64, NC>), SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let m = M::mass_matrix(q, p, t);
    check_finite::<M, NQ, NC, DOF>("mass matrix", t, m.as_slice())?;
    let j = M::jacobian(q, p, t);
    check_finite::<M, NQ, NC, DOF>("constraint Jacobian", t, j.as_slice())?;
    let g = M::gamma(q, qd, p, t);
    check_finite::<M, NQ, NC, DOF>("gamma", t, g.as_slice())?;
    let f = forces::<M, NQ, NC, DOF>(q, qd, p, t, calls)?;
    let a = m + j.transpose() * j * alpha0;
    let fac = Factor::new(&a).ok_or(SimError::SingularLeadingMatrix { t })?;
    let mut lambda = SVector::<f64, NC>::zeros();
    let mut qdd = SVector::<f64, NQ>::zeros();
    for k in 0..INITIAL_ITERATIONS {
        let rhs = f + j.transpose() * (g * alpha0 - lambda);
        let next = fac
            .solve(&rhs)
            .ok_or_else(|| non_finite::<M, NQ, NC, DOF>("initial accelerations", t, &[]))?;
        let d = (next - qdd).norm();
        qdd = next;
        lambda += (j * qdd - g) * alpha0;
        if k > 0 && d <= opts.tol * (1.0 + qdd.norm()) {
            return Ok((qdd, lambda));
        }
    }
    Err(SimError::NoConvergence {
        t,
        what: "initial accelerations",
        iterations: INITIAL_ITERATIONS,
        hint: if opts.project_initial {
            "the initial accelerations' multiplier iteration converges slowly where \
             constraint rows are nearly dependent: loosen Ali3pOptions::tol or start from a \
             configuration away from a singular one"
        } else {
            "assemble the initial state and project its velocities first \
             (Ali3pOptions::project_initial), or start from a configuration away from a \
             singular one"
        },
    })
}

/// The counters of a run, and the force derivatives `(K, Cᵥ)` kept for
/// [`Ali3pOptions::tangent_reuse`] steps with the number of steps they served.
pub(super) struct Run<const NQ: usize> {
    pub(super) calls: usize,
    pub(super) newton: usize,
    pub(super) acc: Acc,
    #[allow(clippy::type_complexity)]
    pub(super) tangent: Option<(SMatrix<f64, NQ, NQ>, SMatrix<f64, NQ, NQ>, usize)>,
}

/// The state carried from step to step: `q`, `q̇`, `q̈` and the multipliers of the
/// formulation.
#[derive(Clone, Copy)]
pub(super) struct State<const NQ: usize, const NC: usize> {
    pub(super) q: SVector<f64, NQ>,
    pub(super) qd: SVector<f64, NQ>,
    pub(super) qdd: SVector<f64, NQ>,
    pub(super) lambda: SVector<f64, NC>,
}

/// The outcome of one step attempt.
pub(super) enum Outcome<const NQ: usize, const NC: usize> {
    /// Newton converged: the projected new state.
    Converged { next: State<NQ, NC> },
    /// Newton did not converge within the iterations allowed, or diverged.
    Failed { diverged: bool },
}

/// The Newton tolerance: `opts.tol`, and with error control at most a tenth of the error
/// control's `rtol` (`atol` when `rtol` is 0): the iteration's own error must stay below the
/// local error it is compared with, or the estimate carries the unconverged part, which
/// does not shrink with the step, and the step size underflows (measured on A02 at rtol
/// 1e-9: with the default `tol` 1e-8 or with `tol = rtol`, N = 2 and 3 underflow at a flat
/// position; with `rtol / 10` they run).
pub(super) fn newton_tol(opts: &Ali3pOptions) -> f64 {
    match &opts.adaptive {
        None => opts.tol,
        Some(ad) => opts
            .tol
            .min(0.1 * if ad.rtol > 0.0 { ad.rtol } else { ad.atol }),
    }
}

/// The bound on the Newton iteration's remaining position error (Euclidean) of a step of
/// size `h` from the velocities `qd` to positions of norm `xn`: [`newton_tol`] relative to
/// `1 + xn`, and with error control also `0.05 h (atol + rtol ‖q̇‖∞)`, not below
/// [`NEWTON_FLOOR`] `(1 + xn)`. The velocities are the trapezoidal difference
/// `(2/h) (qₙ₊₁ − qₙ) − q̇ₙ`: a position error `δ` left by the iteration is a velocity error
/// `2δ/h`, which the position tolerance alone let grow without bound as the step shrinks.
pub(super) fn newton_limit<const NQ: usize>(
    opts: &Ali3pOptions,
    h: f64,
    qd: &SVector<f64, NQ>,
    xn: f64,
) -> f64 {
    let pos = newton_tol(opts) * (1.0 + xn);
    match &opts.adaptive {
        None => pos,
        Some(ad) => {
            let vel = 0.05 * h * (ad.atol + ad.rtol * qd.amax());
            pos.min(vel.max(NEWTON_FLOOR * (1.0 + xn)))
        }
    }
}

/// The smallest relative remaining error [`newton_limit`] asks of the Newton iteration
/// (`1e-12`, some 5,000 ε: the penalty's conditioning `~ penalty_factor` leaves the
/// corrections a rounding noise of that order).
pub(super) const NEWTON_FLOOR: f64 = 1e-12;

/// Largest ratio of successive Newton corrections with which a step keeps the tangent's
/// factorisation (modified Newton); above it the tangent is refactored at the new iterate.
pub(super) const REFACTOR_RATIO: f64 = 0.1;

/// The error of a step whose Newton iteration failed; `at_h_min`: with error control, the
/// retried step fell below [`Adaptive::h_min`].
pub(super) fn no_convergence(
    t: f64,
    diverged: bool,
    opts: &Ali3pOptions,
    at_h_min: bool,
) -> SimError {
    SimError::NoConvergence {
        t,
        what: if diverged {
            "ALI3-P step (diverging)"
        } else {
            "ALI3-P step"
        },
        iterations: opts.max_iterations,
        hint: step_hint(opts, diverged, at_h_min),
    }
}

/// The hint of a failed step's [`SimError::NoConvergence`]: only options the run does not
/// already have. The finite-difference tangent is named only to a run with the mass-only
/// one; step-size control only to a fixed-step run; more iterations only where the
/// iteration was still converging (not diverging).
pub(super) fn step_hint(opts: &Ali3pOptions, diverged: bool, at_h_min: bool) -> &'static str {
    let mass_only = opts.tangent == Tangent::MassOnly;
    match (opts.adaptive.is_some(), mass_only, diverged) {
        (false, true, _) => {
            "use the finite-difference tangent (Tangent::FiniteDifferences) or reduce the step h"
        }
        (false, false, true) => {
            "reduce the step h, or use step-size control (Ali3pOptions::adaptive), which \
             retries a failed step with a smaller one"
        }
        (false, false, false) => {
            "reduce the step h, raise Ali3pOptions::max_iterations, or use step-size control \
             (Ali3pOptions::adaptive)"
        }
        (true, true, _) if at_h_min => {
            "the retried step fell below Adaptive::h_min: use the finite-difference tangent \
             (Tangent::FiniteDifferences)"
        }
        (true, false, true) if at_h_min => {
            "the retried step fell below Adaptive::h_min: loosen the tolerances (the Newton \
             iteration's follows them) or lower h_min"
        }
        (true, false, false) if at_h_min => {
            "the retried step fell below Adaptive::h_min: raise Ali3pOptions::max_iterations, \
             loosen the tolerances or lower h_min"
        }
        (true, true, _) => "use the finite-difference tangent (Tangent::FiniteDifferences)",
        (true, false, _) => {
            "raise Ali3pOptions::max_iterations, or check the model's forces for a \
             discontinuity at this time"
        }
    }
}

/// One trapezoidal step of size `h` from `s` to the time `t` with the penalty `alpha`:
/// Newton on the scaled equilibrium (see the [module documentation](self)), then the
/// mass-orthogonal projections of velocities and accelerations.
///
/// Divergence: a correction more than 4 times the previous one, or three growing in a row,
/// or a non-finite value at an iterate after the first correction, is
/// [`Outcome::Failed`] with `diverged` (the caller retries with a smaller step or reports
/// [`SimError::NoConvergence`]); non-finite values at the predictor itself are errors.
///
/// With force derivatives kept from earlier steps ([`Ali3pOptions::tangent_reuse`]), a
/// failed iteration or one that needed more than two iterations drops them; a failed one is
/// retried at once with fresh derivatives.
pub(super) fn step<M, const NQ: usize, const NC: usize, const DOF: usize>(
    a: &Attempt<'_, M::Params, NQ, NC>,
    run: &mut Run<NQ>,
) -> Result<Outcome<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let before = run.newton;
    let kept = run.tangent.as_ref().is_some_and(|(_, _, age)| *age > 0);
    let out = a.once::<M, DOF>(run)?;
    let failed = matches!(out, Outcome::Failed { .. });
    if failed || run.newton - before > 2 {
        run.tangent = None;
    }
    if failed && kept && a.opts.tangent == Tangent::FiniteDifferences {
        return a.once::<M, DOF>(run);
    }
    Ok(out)
}

/// A step to take: from `s` to the time `t`, of size `h`, with the penalty `alpha`.
pub(super) struct Attempt<'a, P, const NQ: usize, const NC: usize> {
    pub(super) s: &'a State<NQ, NC>,
    pub(super) p: &'a P,
    pub(super) t: f64,
    pub(super) h: f64,
    pub(super) alpha: f64,
    pub(super) opts: &'a Ali3pOptions,
}

impl<P, const NQ: usize, const NC: usize> Attempt<'_, P, NQ, NC> {
    /// One attempt of [`step`].
    fn once<M, const DOF: usize>(&self, run: &mut Run<NQ>) -> Result<Outcome<NQ, NC>, SimError>
    where
        M: Dynamics<NQ, NC, DOF, Params = P>,
    {
        let &Attempt {
            s,
            p,
            t,
            h,
            alpha,
            opts,
        } = self;
        let (q, qd, qdd) = (s.q, s.qd, s.qdd);
        let mut lambda = s.lambda;
        let (h2, hh4) = (2.0 / h, 0.25 * h * h);
        let vhat = -(q * h2 + qd);
        let ahat = -(q * (4.0 / (h * h)) + qd * (4.0 / h) + qdd);
        // Predictor.
        let mut x = q + qd * h + qdd * (0.5 * h * h);
        let wf = match opts.tangent {
            Tangent::FiniteDifferences => {
                let reuse = opts.tangent_reuse.max(1);
                if run.tangent.as_ref().is_none_or(|(_, _, age)| *age >= reuse) {
                    let v = x * h2 + vhat;
                    let (kq, cv) =
                        force_derivatives::<M, NQ, NC, DOF>(&x, &v, p, t, &mut run.calls)?;
                    run.tangent = Some((kq, cv, 0));
                }
                match run.tangent.as_mut() {
                    Some((kq, cv, age)) => {
                        *age += 1;
                        *kq * hh4 + *cv * (0.5 * h)
                    }
                    None => SMatrix::<f64, NQ, NQ>::zeros(),
                }
            }
            Tangent::MassOnly => SMatrix::<f64, NQ, NQ>::zeros(),
        };
        #[allow(clippy::type_complexity)]
        let mut last: Option<(
            SMatrix<f64, NQ, NQ>,
            SMatrix<f64, NC, NQ>,
            SMatrix<f64, NQ, NQ>,
        )> = None;
        let mut prev_dx = f64::INFINITY;
        let mut growing = 0usize;
        // Modified Newton: the tangent's factorisation is kept while the iteration contracts
        // well (ratio of successive corrections ≤ REFACTOR_RATIO), and refreshed otherwise. An
        // iterate from a fresh factorisation stops on its correction (as full Newton), one from
        // a kept one on the estimated remaining error θ/(1 − θ)·‖Δq‖ of a linear iteration.
        let mut fac: Option<Factor<NQ>> = None;
        for it in 0..opts.max_iterations {
            run.newton += 1;
            // After the first correction, a non-finite value is a symptom of divergence.
            let eval = || -> Result<_, SimError> {
                let v = x * h2 + vhat;
                let a = x * (4.0 / (h * h)) + ahat;
                let m = M::mass_matrix(&x, p, t);
                check_finite::<M, NQ, NC, DOF>("mass matrix", t, m.as_slice())?;
                let c = M::residual(&x, p, t);
                check_finite::<M, NQ, NC, DOF>("constraint residual", t, c.as_slice())?;
                let j = M::jacobian(&x, p, t);
                check_finite::<M, NQ, NC, DOF>("constraint Jacobian", t, j.as_slice())?;
                Ok((v, a, m, c, j))
            };
            let (v, a, m, c, j) = match eval() {
                Ok(e) => e,
                Err(_) if it > 0 => return Ok(Outcome::Failed { diverged: true }),
                Err(e) => return Err(e),
            };
            if it > 0 {
                lambda += c * alpha;
            }
            let f = match forces::<M, NQ, NC, DOF>(&x, &v, p, t, &mut run.calls) {
                Ok(f) => f,
                Err(_) if it > 0 => return Ok(Outcome::Failed { diverged: true }),
                Err(e) => return Err(e),
            };
            let r = (m * a + j.transpose() * (c * alpha + lambda) - f) * hh4;
            let jtj = gram(&j);
            let fresh = fac.is_none();
            if fresh {
                let tm = m + wf + jtj * (alpha * hh4);
                fac = Some(Factor::new(&tm).ok_or(SimError::SingularLeadingMatrix { t })?);
            }
            let Some(dx) = fac.as_ref().and_then(|f| f.solve(&(-r))) else {
                if it > 0 {
                    return Ok(Outcome::Failed { diverged: true });
                }
                return Err(non_finite::<M, NQ, NC, DOF>("Newton correction", t, &[]));
            };
            x += dx;
            let dn = dx.norm();
            // With a kept factorisation the iteration converges linearly with the ratio θ:
            // the remaining error is about θ/(1 − θ) times the last correction.
            let theta = if prev_dx.is_finite() && prev_dx > 0.0 {
                dn / prev_dx
            } else {
                0.0
            };
            let remaining = if fresh {
                dn
            } else if theta < 1.0 {
                dn.max(dn * theta / (1.0 - theta))
            } else {
                f64::INFINITY
            };
            if remaining <= newton_limit(opts, h, &qd, x.norm()) {
                last = Some((m, j, jtj));
                break;
            }
            if it > 0 && theta > REFACTOR_RATIO {
                fac = None;
            }
            if dn > prev_dx {
                growing += 1;
                if dn > 4.0 * prev_dx || growing >= 3 {
                    return Ok(Outcome::Failed { diverged: true });
                }
            } else {
                growing = 0;
            }
            prev_dx = dn;
        }
        let Some((m0, j0, jtj0)) = last else {
            return Ok(Outcome::Failed { diverged: false });
        };
        if !crate::linalg::finite(x.as_slice()) {
            return Ok(Outcome::Failed { diverged: true });
        }
        let c = M::residual(&x, p, t);
        lambda += c * alpha;
        // Mass-orthogonal projections with `P = M + (h²/4) C_Jᵀ α C_J` (symmetric positive
        // definite; `M`, `C_J` of the last iteration, one correction of size ≤ tol away).
        // Without constraints they are the identity.
        let vstar = x * h2 + vhat;
        let astar = x * (4.0 / (h * h)) + ahat;
        let ct = M::jacobian_t(&x, p, t);
        let pm = m0 + jtj0 * (alpha * hh4);
        let fac = Factor::new(&pm).ok_or(SimError::SingularLeadingMatrix { t })?;
        let v = fac
            .solve(&(m0 * vstar - j0.transpose() * ct * (alpha * hh4)))
            .ok_or_else(|| non_finite::<M, NQ, NC, DOF>("velocities", t, vstar.as_slice()))?;
        let g = M::gamma(&x, &v, p, t);
        check_finite::<M, NQ, NC, DOF>("gamma", t, g.as_slice())?;
        let a = fac
            .solve(&(m0 * astar + j0.transpose() * g * (alpha * hh4)))
            .ok_or_else(|| non_finite::<M, NQ, NC, DOF>("accelerations", t, astar.as_slice()))?;
        run.acc.defects.velocity_correction(&vstar, &v);
        Ok(Outcome::Converged {
            next: State {
                q: x,
                qd: v,
                qdd: a,
                lambda,
            },
        })
    }
}
