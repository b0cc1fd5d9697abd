//! Index-3 augmented Lagrangian formulation with mass-orthogonal projections (ALI3-P) and
//! the implicit trapezoidal rule, after Cuadrado, Dopico et al. (see e.g. González, Dopico,
//! Pastorino, Cuadrado, "Behaviour of augmented Lagrangian and Hamiltonian methods for
//! multibody dynamics in the proximity of singular configurations", Nonlinear Dyn. 2016).
//!
//! The equations of motion `M q̈ + C_Jᵀ (α C + λ) = f(q, q̇, t)` (`λ` the multipliers of
//! this formulation, `α` a penalty; the runtime's convention `M q̈ = f + C_Jᵀ λ_r` has
//! `λ_r = −(λ + α C)`) are discretised by the trapezoidal rule
//!
//! ```text
//! q̇ₙ₊₁ = (2/h) qₙ₊₁ + q̂̇ₙ,   q̂̇ₙ = −(2/h) qₙ − q̇ₙ
//! q̈ₙ₊₁ = (4/h²) qₙ₊₁ + q̂̈ₙ,  q̂̈ₙ = −(4/h²) qₙ − (4/h) q̇ₙ − q̈ₙ
//! ```
//!
//! and the dynamic equilibrium at `tₙ₊₁`, scaled by `h²/4`,
//! `r(q) = (h²/4) (M q̈ + C_Jᵀ (α C + λ) − f) = 0`, is solved for `qₙ₊₁` by Newton's method
//! with the tangent
//!
//! ```text
//! T = M + (h/2) Cᵥ + (h²/4) (C_Jᵀ α C_J + K),   K = −∂f/∂q,  Cᵥ = −∂f/∂q̇
//! ```
//!
//! (the derivatives of `M(q)` and of `C_J(q)ᵀ` times their factors are left out, as in the
//! papers: where they matter the iteration converges linearly, to the same solution) and the
//! multiplier update `λ ← λ + α C(q)` after each iteration. `T` stays regular (positive
//! definite without velocity-dependent forces) where `C_J` loses rank (the mass matrix carries the directions the constraints
//! stop controlling), which is why the method passes singular configurations (the flat
//! positions of a parallelogram chain) where index-1 and projection methods fail. The
//! converged positions satisfy the constraints up to the penalty-augmented iteration's
//! residual; velocities and accelerations are then projected onto the velocity and
//! acceleration constraints by mass-orthogonal projections with the same penalty:
//!
//! ```text
//! P q̇ = M q̇* − (h²/4) C_Jᵀ α C_t,       P = M + (h²/4) C_Jᵀ α C_J
//! P q̈ = M q̈* + (h²/4) C_Jᵀ α γ(q, q̇)
//! ```
//!
//! (`P` is symmetric positive definite: one Cholesky factorisation. The papers' variant
//! with `W = M + (h/2) Cᵥ + (h²/4) K` in place of `M` is not used: with velocity-dependent
//! forces `W` is not symmetric, and the projection would no longer be orthogonal.)
//!
//! The step is fixed by default (no error estimate): the run reports what it accumulated
//! instead, the largest position- and velocity-level constraint residuals and the energy
//! change ([`SimStats`]). With [`Ali3pOptions::adaptive`] the step follows a local error
//! estimate (Zienkiewicz–Xie, [`Adaptive`]), failed Newton iterations are retried with
//! smaller steps, and a diverging iteration is [`SimError::NoConvergence`]. Use
//! [`simulate_ali3p`].

mod newton;

use nalgebra::SVector;

use crate::assemble::{assemble, AssemblyOptions};
use crate::error::SimError;
use crate::mechanism::Dynamics;
use crate::null_space::DEFAULT_PIVOT_THRESHOLD;
use crate::ode::Stats;
use crate::simulate::{SimStats, Trajectory};
use crate::velocity::project_velocity;

use newton::*;

/// How the tangent `T` of the Newton iteration includes the force derivatives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tangent {
    /// `K = −∂f/∂q` and `Cᵥ = −∂f/∂q̇` by forward differences of [`Dynamics::forces`]
    /// (`2·NQ + 1` force evaluations per step, at the predicted state; the tangent is then
    /// held for the step's iterations). Needed for stiff springs and dampers.
    FiniteDifferences,
    /// `T = M + (h²/4) C_Jᵀ α C_J` only: cheaper per step, converges more slowly (or not at
    /// all) where the forces change fast with the state.
    MassOnly,
}

/// Options of [`simulate_ali3p`].
#[derive(Debug, Clone, PartialEq)]
pub struct Ali3pOptions {
    /// The fixed step size `h` (s). Between two output times the step is `Δt / ⌈Δt / h − 10⁻⁹⌉`
    /// (at most `h (1 + 10⁻⁹)`), so that every output time is the end of a step (no
    /// interpolation). Default 1e-3: the accuracy is the caller's choice (the error of the
    /// trapezoidal rule is ∝ h²; `examples/iftomm/README.md` has step scans: A02 meets 1e-3 m
    /// over 20 s with h ≤ 3e-3, A01's 2000 s need 2.5e-4, Andrews' mechanism 1e-5).
    pub h: f64,
    /// Output times strictly between `t0` and `t1`, ascending (`t0` and `t1` are always
    /// reported).
    pub output_times: Vec<f64>,
    /// The penalty `α`; `None` gives `penalty_factor · max_i M_ii(q0) · 4 / h²`, i.e.
    /// `(h²/4) α = penalty_factor · max_i M_ii`: the constraint part of the tangent is
    /// `penalty_factor` times the mass part whatever the step, so that the multiplier
    /// iteration converges in a few iterations (fewer near a rank loss of `C_J`, where the
    /// constraint part vanishes in one direction) and the projections remove all but
    /// `~1 / penalty_factor` of the velocity and acceleration constraint residuals.
    pub penalty: Option<f64>,
    /// The factor of the default penalty (see `penalty`); `1e5` by default. Larger is not
    /// better: the penalty forces `α C(q)` carry the rounding error of `C`, about
    /// `α · ε · |q|`, into every step. A02 (N = 1, h = 1e-3, 20 s) misses the exact motion by
    /// 1.4e-5 m with 1e5, 7.0e-4 m with 1e6, 3.7e-3 m with 1e7 and 0.5 m with 1e9; with 1e4
    /// and below the multiplier iteration converges too slowly near the flat positions.
    pub penalty_factor: f64,
    /// Newton stops when `‖Δq‖ ≤ tol · (1 + ‖q‖)` (Euclidean norms); with
    /// [`Ali3pOptions::adaptive`] at most a tenth of its `rtol` is used.
    pub tol: f64,
    /// Largest number of Newton iterations per step; more is [`SimError::NoConvergence`].
    pub max_iterations: usize,
    /// Which force derivatives enter the tangent.
    pub tangent: Tangent,
    /// [`Tangent::FiniteDifferences`]: the number of steps that share one evaluation of the
    /// force derivatives `K`, `Cᵥ` (`2·NQ + 1` force evaluations, scaled by each step's `h`);
    /// 1 evaluates them at every step, the default 10. They are evaluated afresh after a
    /// step whose Newton iteration needed more than two iterations, and a failed iteration
    /// is retried with fresh ones. Measured (fixed steps, `examples/iftomm/README.md`): A02
    /// N = 1, 2, 3, 40 and A05 reach the same errors to two digits with 1, 5 and 20, with up
    /// to 17× fewer force evaluations.
    pub tangent_reuse: usize,
    /// Assemble `q0` (independent coordinates kept, [`crate::assemble::assemble`]) and
    /// project `q̇0` (independent velocities kept, [`crate::velocity::project_velocity`])
    /// before the first step. With `false` the initial state is used as given.
    pub project_initial: bool,
    /// Options of the initial assembly.
    pub assembly: AssemblyOptions,
    /// Return the multipliers `λ_r` (`M q̈ = f + C_Jᵀ λ_r`) at the output times, from the
    /// index-1 system at the output's converged state (not the penalty iterate, whose error
    /// grows as the step shrinks).
    pub multipliers: bool,
    /// Largest number of steps before [`SimError::InvalidInput`] (guards against a tiny
    /// `h` over a long span). With [`Ali3pOptions::adaptive`]: the largest number of step
    /// attempts (accepted and rejected), beyond which the run ends with
    /// [`crate::error::OdeError::MaxSteps`].
    pub max_steps: usize,
    /// Error control: `None` (the default) takes the fixed step `h`; `Some` adapts the step
    /// to a local error estimate, `h` being the first step tried (see [`Adaptive`]).
    pub adaptive: Option<Adaptive>,
}

/// Step-size control of [`simulate_ali3p`] by a local error estimate.
///
/// The trapezoidal rule (Newmark `β = 1/4`, `γ = 1/2`) makes the local position error
/// `(β − 1/6) h³ q⃛ = (h³/12) q⃛`, estimated (Zienkiewicz and Xie) from the projected
/// accelerations of the step as `(h²/12) (q̈ₙ₊₁ − q̈ₙ)`; the velocities, the trapezoidal
/// difference `(2/h) (qₙ₊₁ − qₙ) − q̇ₙ`, carry `2/h` times it, `(h/6) (q̈ₙ₊₁ − q̈ₙ)`. A step
/// is accepted when the weighted RMS norm of both, with weights
/// `atol + rtol · max(|qₙ|, |qₙ₊₁|)` per coordinate and `atol + rtol · max(|q̇ₙ|, |q̇ₙ₊₁|)`
/// per velocity, is at most 1 (the position estimate alone let the car axis of the Bari
/// test set end at rtol 1e-6 with a velocity of the wrong sign; the velocity term, an error
/// per unit step of the positions, keeps the global errors proportional to the tolerance:
/// `tests/ali3p_accuracy.rs`). The Newton iteration then stops at a remaining position
/// error of `0.05 h (atol + rtol ‖q̇‖∞)` too (not below `1e-12 (1 + ‖q‖)`). Where the
/// velocity test cannot be met in double precision (the trapezoidal velocity carries a
/// rounding of `~4 ε |q| / h`: A05 at rtol = atol = 1e-10), the run ends with a step-size
/// underflow, not with an answer outside the tolerance; the next step is `h · clamp(0.9 · err^(−1/3), 0.2, 5)`
/// (within `[h_min, h_max]`). A step whose Newton iteration fails (too many iterations, a
/// growing correction, non-finite values at an iterate) is retried with `h / 4`. Steps
/// are shortened to land on every output time. Below `h_min` the run ends with an error
/// ([`SimError::NoConvergence`] after a Newton failure,
/// [`crate::error::OdeError::StepSizeUnderflow`] after an error-test failure).
///
/// Milne's device (the difference of the predictor `qₙ + h q̇ₙ + (h²/2) q̈ₙ` and the
/// converged positions) was tried first and left out: near the flat positions of A02 the
/// difference carries the previous state's unconverged part in the direction where `C_J`
/// loses rank (where a constraint residual `|C|` means a position error `~√|C|`), which does
/// not shrink with the step: at rtol 1e-8 and 1e-9 the step underflowed (N = 2, 3). The
/// estimate bounds the local error of a step, not the global error: over long spans
/// (A02's 20 s of a pendulum-like motion) the phase error accumulates, and a fixed step
/// with the same number of steps can be more accurate (`examples/iftomm/README.md`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    /// Relative tolerance of the local position error.
    pub rtol: f64,
    /// Absolute tolerance of the local position error (in the coordinates' units).
    pub atol: f64,
    /// Smallest step allowed (s).
    pub h_min: f64,
    /// Largest step allowed (s).
    pub h_max: f64,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive {
            rtol: 1e-6,
            atol: 1e-8,
            h_min: 1e-10,
            h_max: f64::INFINITY,
        }
    }
}

impl Default for Ali3pOptions {
    fn default() -> Self {
        Ali3pOptions {
            h: 1e-3,
            output_times: Vec::new(),
            penalty: None,
            penalty_factor: 1e5,
            tol: 1e-8,
            max_iterations: 50,
            tangent: Tangent::FiniteDifferences,
            tangent_reuse: 10,
            project_initial: true,
            assembly: AssemblyOptions::default(),
            multipliers: false,
            max_steps: 100_000_000,
            adaptive: None,
        }
    }
}

/// Simulates `M` from `(q0, q̇0)` over `[t0, t1]` by ALI3-P with the trapezoidal rule and the
/// fixed step `opts.h`, or with step-size control ([`Ali3pOptions::adaptive`], see
/// [`Adaptive`]) (see the [module documentation](self)).
///
/// With `opts.project_initial` the initial state is assembled and its velocities projected
/// first, keeping the independent coordinates and velocities (as
/// [`crate::simulate::simulate_lagrange`] does); the initial accelerations come from an
/// augmented Lagrangian iteration, which (like the steps) works at rank loss of `C_J`.
///
/// Returns the state at `t0`, at `opts.output_times` and at `t1`, with the runtime's
/// [`SimStats`]: `ode.steps` the steps, `ode.rhs_calls` the force evaluations,
/// `newton_iterations`, `max_residual` the largest `‖C(q)‖` after a step's Newton
/// iteration, `max_velocity_residual` the largest `‖C_J q̇ + C_t‖` after its velocity
/// projection, `max_velocity_correction` the largest change the velocity projections made,
/// `energy_change` `max |E − E(t0)|` when the model has an energy (with dampers, the energy
/// dissipated).
///
/// Errors: [`SimError::InvalidInput`] (time span, output times, options, more than
/// `opts.max_steps` steps); [`SimError::Dynamics`] with [`DynamicsError::NonFinite`](crate::DynamicsError::NonFinite) when
/// the initial state or any evaluated quantity (forces, mass matrix, Jacobian, the new
/// state) is NaN or infinite; [`SimError::NoConvergence`] when a step's Newton iteration
/// does not meet its tolerance in `opts.max_iterations` iterations or diverges (its
/// correction grows, or an iterate gives non-finite values: `what` is then
/// `"ALI3-P step (diverging)"`), with error control only once the step is below `h_min`;
/// [`SimError::Integration`] with a step-size underflow or too many attempts (error
/// control);
/// [`SimError::SingularLeadingMatrix`] when the leading matrix is singular (neither Cholesky
/// nor LU: a mass matrix singular on directions the constraints do not control);
/// [`SimError::Assembly`] / [`SimError::Kinematics`] from the initial projection.
pub fn simulate_ali3p<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &Ali3pOptions,
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let grid = crate::simulate::output_grid(t0, t1, &opts.output_times)?;
    if !(opts.h.is_finite() && opts.h > 0.0) {
        return Err(SimError::InvalidInput("step h must be positive and finite"));
    }
    if !(opts.tol.is_finite() && opts.tol > 0.0) {
        return Err(SimError::InvalidInput(
            "Newton tolerance must be positive and finite",
        ));
    }
    if opts.max_iterations == 0 {
        return Err(SimError::InvalidInput("max_iterations must be at least 1"));
    }
    if !(opts.penalty_factor.is_finite() && opts.penalty_factor > 0.0) {
        return Err(SimError::InvalidInput(
            "penalty factor must be positive and finite",
        ));
    }
    if let Some(a) = opts.penalty {
        if !(a.is_finite() && a > 0.0) {
            return Err(SimError::InvalidInput(
                "penalty must be positive and finite",
            ));
        }
    }
    if let Some(ad) = &opts.adaptive {
        let tol_ok = |x: f64| x.is_finite() && x >= 0.0;
        if !(tol_ok(ad.rtol) && tol_ok(ad.atol) && ad.rtol + ad.atol > 0.0) {
            return Err(SimError::InvalidInput(
                "adaptive tolerances must be finite, non-negative and not both zero",
            ));
        }
        if !(ad.h_min.is_finite() && ad.h_min > 0.0 && ad.h_max >= ad.h_min) {
            return Err(SimError::InvalidInput(
                "adaptive step bounds need 0 < h_min <= h_max",
            ));
        }
    }
    // Fixed step: step counts per output interval, checked before any work.
    let mut counts = Vec::with_capacity(grid.len());
    if opts.adaptive.is_none() {
        let mut total = 0usize;
        for w in grid.windows(2) {
            // An interval of k steps up to rounding (output times computed as k·T/n) is k
            // steps, not k + 1.
            let n = ((w[1] - w[0]) / opts.h - 1e-9).ceil().max(1.0);
            if !(n.is_finite() && n <= opts.max_steps as f64) {
                return Err(SimError::InvalidInput("more steps than max_steps"));
            }
            let n = n as usize;
            total = total.saturating_add(n);
            if total > opts.max_steps {
                return Err(SimError::InvalidInput("more steps than max_steps"));
            }
            counts.push(n);
        }
    }
    check_finite::<M, NQ, NC, DOF>("initial coordinates", t0, q0.as_slice())?;
    check_finite::<M, NQ, NC, DOF>("initial velocities", t0, qd0.as_slice())?;

    let mut run = Run::<NQ> {
        calls: 0,
        newton: 0,
        acc: Acc::default(),
        tangent: None,
    };
    let (mut q, mut qd) = (*q0, *qd0);
    if opts.project_initial {
        let asm = assemble::<M, NQ, NC, DOF>(&q, p, t0, &opts.assembly)
            .map_err(|source| SimError::Assembly { t: t0, source })?;
        run.newton += asm.iterations;
        q = asm.q;
        let threshold = if opts.assembly.pivot_threshold.is_finite() {
            opts.assembly.pivot_threshold
        } else {
            DEFAULT_PIVOT_THRESHOLD
        };
        qd = project_velocity::<M, NQ, NC, DOF>(&q, &qd, p, t0, threshold)?;
    }
    let m0 = M::mass_matrix(&q, p, t0);
    check_finite::<M, NQ, NC, DOF>("mass matrix", t0, m0.as_slice())?;
    let mscale = (0..NQ).map(|i| m0[(i, i)].abs()).fold(0.0, f64::max);
    if mscale.is_nan() || mscale <= 0.0 {
        return Err(SimError::SingularLeadingMatrix { t: t0 });
    }
    let alpha0 = opts.penalty_factor * mscale;
    let (qdd, lambda) =
        initial_accelerations::<M, NQ, NC, DOF>(&q, &qd, p, t0, alpha0, opts, &mut run.calls)?;
    let mut state = State { q, qd, qdd, lambda };
    // The penalty of a step of size h.
    let alpha_of = |h: f64| {
        opts.penalty
            .unwrap_or(opts.penalty_factor * mscale * 4.0 / (h * h))
    };

    run.acc.record::<M, NQ, NC, DOF>(&state.q, &state.qd, p, t0);
    let mut ts = vec![t0];
    let mut qs = vec![state.q];
    let mut qds = vec![state.qd];
    let mut lams = match opts.multipliers {
        true => Some(vec![output_multipliers::<M, NQ, NC, DOF>(&state, p, t0)?]),
        false => None,
    };
    let mut steps = 0usize;
    let mut rejected = 0usize;
    let mut h_next = opts.h;

    for (k, w) in grid.windows(2).enumerate() {
        match &opts.adaptive {
            None => {
                let n = counts[k];
                let h = (w[1] - w[0]) / n as f64;
                let alpha = alpha_of(h);
                for s in 0..n {
                    let t = if s + 1 == n {
                        w[1]
                    } else {
                        w[0] + (s + 1) as f64 * h
                    };
                    let a = Attempt {
                        s: &state,
                        p,
                        t,
                        h,
                        alpha,
                        opts,
                    };
                    match step::<M, NQ, NC, DOF>(&a, &mut run)? {
                        Outcome::Converged { next, .. } => state = next,
                        Outcome::Failed { diverged } => {
                            return Err(no_convergence(t, diverged, opts, false));
                        }
                    }
                    steps += 1;
                    run.acc.record::<M, NQ, NC, DOF>(&state.q, &state.qd, p, t);
                }
            }
            Some(ad) => {
                let mut t = w[0];
                while t < w[1] {
                    if steps + rejected >= opts.max_steps {
                        return Err(SimError::Integration(crate::error::OdeError::MaxSteps {
                            t,
                            steps: steps + rejected,
                        }));
                    }
                    let want = h_next.clamp(ad.h_min, ad.h_max);
                    let remaining = w[1] - t;
                    // Land on the output time: the last step ends there exactly, and a
                    // remainder shorter than a step is split in two equal steps.
                    let (h, last) = if want >= remaining * (1.0 - 1e-12) {
                        (remaining, true)
                    } else if 2.0 * want > remaining {
                        (0.5 * remaining, false)
                    } else {
                        (want, false)
                    };
                    let clipped = h < want;
                    let tn = if last { w[1] } else { t + h };
                    let a = Attempt {
                        s: &state,
                        p,
                        t: tn,
                        h,
                        alpha: alpha_of(h),
                        opts,
                    };
                    let outcome = step::<M, NQ, NC, DOF>(&a, &mut run)?;
                    let next = match outcome {
                        Outcome::Converged { next } => next,
                        Outcome::Failed { diverged } => {
                            rejected += 1;
                            h_next = 0.25 * h;
                            if h_next < ad.h_min {
                                return Err(no_convergence(tn, diverged, opts, true));
                            }
                            continue;
                        }
                    };
                    let err = local_error(ad, h, &state, &next);
                    let fac = if err.is_nan() {
                        0.2
                    } else if err == 0.0 {
                        5.0
                    } else {
                        (0.9 * err.powf(-1.0 / 3.0)).clamp(0.2, 5.0)
                    };
                    if err <= 1.0 {
                        state = next;
                        t = tn;
                        steps += 1;
                        run.acc.record::<M, NQ, NC, DOF>(&state.q, &state.qd, p, t);
                        // A step shortened to land on an output time does not shrink the
                        // next one unless its error asks for it.
                        if !(clipped && fac >= 1.0) {
                            h_next = h * fac;
                        }
                    } else {
                        rejected += 1;
                        h_next = h * fac;
                        if h_next < ad.h_min {
                            return Err(SimError::Integration(
                                crate::error::OdeError::StepSizeUnderflow { t, h: h_next },
                            ));
                        }
                    }
                }
            }
        }
        ts.push(w[1]);
        qs.push(state.q);
        qds.push(state.qd);
        if let Some(l) = lams.as_mut() {
            l.push(output_multipliers::<M, NQ, NC, DOF>(&state, p, w[1])?);
        }
    }
    let ode = Stats {
        steps,
        rejected,
        rhs_calls: run.calls,
        ..Stats::default()
    };
    let stats = SimStats {
        max_velocity_residual: run.acc.max_velocity_residual,
        ..run.acc.defects.into_stats(ode, run.newton, 0)
    };
    Ok(Trajectory {
        t: ts,
        q: qs,
        qd: qds,
        lambda: lams,
        stats,
        switch_times: Vec::new(),
        rank_drop_times: Vec::new(),
    })
}

/// The multipliers `λ_r` (`M q̈ = f + C_Jᵀ λ_r`) reported at an output: from the index-1
/// system at the converged, projected state ([`crate::lagrange::lagrange_accelerations`]),
/// not the penalty iteration's `−(λ + α C)`. That iterate balances the trapezoidal
/// accelerations `(4/h²) (qₙ₊₁ − qₙ) − …`, which carry the Newton iteration's remaining
/// position error times `4/h²`, while the penalty `α ∝ 1/h²` multiplies the constraint
/// residual: it degrades as the step shrinks (the car axis' `λ₂` at h = 1e-5 was 5 % off,
/// `tests/ali3p_accuracy.rs`). The index-1 multipliers converge with the state. At a rank
/// loss of `C_J` they are the minimum-norm ones of the kept rows.
fn output_multipliers<M, const NQ: usize, const NC: usize, const DOF: usize>(
    s: &State<NQ, NC>,
    p: &M::Params,
    t: f64,
) -> Result<SVector<f64, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    Ok(crate::lagrange::lagrange_accelerations::<M, NQ, NC, DOF>(&s.q, &s.qd, p, t, None)?.lambda)
}

/// The weighted RMS local error of a step from `s` to `next` of size `h` ([`Adaptive`]):
/// per coordinate the position error `(h²/12) (q̈ₙ₊₁ − q̈ₙ)` (Zienkiewicz–Xie, Newmark
/// `β = 1/4`) against `atol + rtol · max(|qₙ|, |qₙ₊₁|)`, and the velocity error that this
/// position error makes through the trapezoidal velocity `q̇ₙ₊₁ = (2/h) (qₙ₊₁ − qₙ) − q̇ₙ`,
/// `(2/h)` times it, `(h/6) (q̈ₙ₊₁ − q̈ₙ)`, against `atol + rtol · max(|q̇ₙ|, |q̇ₙ₊₁|)`.
///
/// Why the velocities: bounding the positions alone let the car axis (Bari test set) at
/// rtol 1e-6 end with the positions right and a velocity of the wrong sign. The velocity
/// term is one order lower in `h` than the positions' local error: it is an error per
/// unit step of the positions, whose global error then stays proportional to the
/// tolerance (the position test alone let it grow with the number of steps: the car axis
/// at rtol 1e-4 ended 3.6e-2 off).
fn local_error<const NQ: usize, const NC: usize>(
    ad: &Adaptive,
    h: f64,
    s: &State<NQ, NC>,
    next: &State<NQ, NC>,
) -> f64 {
    if NQ == 0 {
        return 0.0;
    }
    let mut sum = 0.0;
    for i in 0..NQ {
        let da = next.qdd[i] - s.qdd[i];
        let sq = ad.atol + ad.rtol * s.q[i].abs().max(next.q[i].abs());
        let sv = ad.atol + ad.rtol * s.qd[i].abs().max(next.qd[i].abs());
        let eq = h * h / 12.0 * da / sq;
        let ev = h / 6.0 * da / sv;
        sum += eq * eq + ev * ev;
    }
    (sum / (2 * NQ) as f64).sqrt()
}
