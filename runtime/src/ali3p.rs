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

use nalgebra::{SMatrix, SVector};

use crate::assemble::{assemble, AssemblyOptions};
use crate::error::{non_finite_entries, DynamicsError, SimError};
use crate::mechanism::Dynamics;
use crate::null_space::DEFAULT_PIVOT_THRESHOLD;
use crate::ode::Stats;
use crate::simulate::{SimStats, Trajectory};
use crate::velocity::project_velocity;

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

/// A factorisation of a leading matrix: Cholesky where it is positive definite, LU else.
enum Factor<const N: usize> {
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
    fn new(a: &SMatrix<f64, N, N>) -> Option<Self> {
        let scale = a.amax();
        if (a - a.transpose()).amax() <= 1e-12 * scale {
            if let Some(c) = a.cholesky() {
                return Some(Factor::Cholesky(c));
            }
        }
        let lu = crate::linalg::dmatrix(a).lu();
        lu.is_invertible().then_some(Factor::Lu(lu))
    }
    fn solve(&self, b: &SVector<f64, N>) -> Option<SVector<f64, N>> {
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

fn non_finite<M, const NQ: usize, const NC: usize, const DOF: usize>(
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

fn check_finite<M, const NQ: usize, const NC: usize, const DOF: usize>(
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
fn forces<M, const NQ: usize, const NC: usize, const DOF: usize>(
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
fn gram<const NC: usize, const NQ: usize>(j: &SMatrix<f64, NC, NQ>) -> SMatrix<f64, NQ, NQ> {
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
fn force_derivatives<M, const NQ: usize, const NC: usize, const DOF: usize>(
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

/// The accumulated defects of a run.
#[derive(Default)]
struct Acc {
    max_residual: f64,
    max_velocity_residual: f64,
    max_velocity_correction: f64,
    energy0: Option<f64>,
    energy_change: Option<f64>,
}

/// `a.max(b)` keeping NaN.
fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

impl Acc {
    fn record<M, const NQ: usize, const NC: usize, const DOF: usize>(
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
        self.max_residual = max_nan(self.max_residual, c);
        self.max_velocity_residual = max_nan(self.max_velocity_residual, cv);
        if let Some(e) = M::energy(q, qd, p, t) {
            match self.energy0 {
                None => {
                    self.energy0 = Some(e);
                    self.energy_change = Some(0.0);
                }
                Some(e0) => {
                    let d = (e - e0).abs();
                    self.energy_change = Some(max_nan(self.energy_change.unwrap_or(0.0), d));
                }
            }
        }
    }
}

/// Largest number of iterations for the initial accelerations (each contracts the
/// constraint error by about `1 / penalty_factor`).
const INITIAL_ITERATIONS: usize = 50;

/// The consistent initial accelerations by the augmented Lagrangian iteration
/// `(M + C_Jᵀ α₀ C_J) q̈ = f + C_Jᵀ (α₀ γ − λ)`, `λ ← λ + α₀ (C_J q̈ − γ)`, with
/// `α₀ = penalty_factor · max_i M_ii` (no step in it), to `‖Δq̈‖ ≤ tol (1 + ‖q̈‖)` within
/// [`INITIAL_ITERATIONS`].
/// Returns `q̈` and the multipliers `λ` of the formulation.
#[allow(clippy::too_many_arguments)]
fn initial_accelerations<M, const NQ: usize, const NC: usize, const DOF: usize>(
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
/// `opts.max_steps` steps); [`SimError::Dynamics`] with [`DynamicsError::NonFinite`] when
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
                    match step::<M, NQ, NC, DOF>(&state, p, t, h, alpha, opts, &mut run)? {
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
                    let outcome =
                        step::<M, NQ, NC, DOF>(&state, p, tn, h, alpha_of(h), opts, &mut run)?;
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
    let acc = run.acc;
    let stats = SimStats {
        ode: Stats {
            steps,
            rejected,
            rhs_calls: run.calls,
            ..Stats::default()
        },
        newton_iterations: run.newton,
        max_residual: acc.max_residual,
        max_velocity_correction: acc.max_velocity_correction,
        max_velocity_residual: acc.max_velocity_residual,
        energy_change: acc.energy_change,
        ..SimStats::default()
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

/// The counters of a run, and the force derivatives `(K, Cᵥ)` kept for
/// [`Ali3pOptions::tangent_reuse`] steps with the number of steps they served.
struct Run<const NQ: usize> {
    calls: usize,
    newton: usize,
    acc: Acc,
    #[allow(clippy::type_complexity)]
    tangent: Option<(SMatrix<f64, NQ, NQ>, SMatrix<f64, NQ, NQ>, usize)>,
}

/// The state carried from step to step: `q`, `q̇`, `q̈` and the multipliers of the
/// formulation.
#[derive(Clone, Copy)]
struct State<const NQ: usize, const NC: usize> {
    q: SVector<f64, NQ>,
    qd: SVector<f64, NQ>,
    qdd: SVector<f64, NQ>,
    lambda: SVector<f64, NC>,
}

/// The outcome of one step attempt.
enum Outcome<const NQ: usize, const NC: usize> {
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
fn newton_tol(opts: &Ali3pOptions) -> f64 {
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
fn newton_limit<const NQ: usize>(
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
const NEWTON_FLOOR: f64 = 1e-12;

/// Largest ratio of successive Newton corrections with which a step keeps the tangent's
/// factorisation (modified Newton); above it the tangent is refactored at the new iterate.
const REFACTOR_RATIO: f64 = 0.1;

/// The error of a step whose Newton iteration failed; `at_h_min`: with error control, the
/// retried step fell below [`Adaptive::h_min`].
fn no_convergence(t: f64, diverged: bool, opts: &Ali3pOptions, at_h_min: bool) -> SimError {
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
fn step_hint(opts: &Ali3pOptions, diverged: bool, at_h_min: bool) -> &'static str {
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
#[allow(clippy::too_many_arguments)]
fn step<M, const NQ: usize, const NC: usize, const DOF: usize>(
    s: &State<NQ, NC>,
    p: &M::Params,
    t: f64,
    h: f64,
    alpha: f64,
    opts: &Ali3pOptions,
    run: &mut Run<NQ>,
) -> Result<Outcome<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let before = run.newton;
    let kept = run.tangent.as_ref().is_some_and(|(_, _, age)| *age > 0);
    let out = step_once::<M, NQ, NC, DOF>(s, p, t, h, alpha, opts, run)?;
    let failed = matches!(out, Outcome::Failed { .. });
    if failed || run.newton - before > 2 {
        run.tangent = None;
    }
    if failed && kept && opts.tangent == Tangent::FiniteDifferences {
        return step_once::<M, NQ, NC, DOF>(s, p, t, h, alpha, opts, run);
    }
    Ok(out)
}

/// One attempt of [`step`].
#[allow(clippy::too_many_arguments)]
fn step_once<M, const NQ: usize, const NC: usize, const DOF: usize>(
    s: &State<NQ, NC>,
    p: &M::Params,
    t: f64,
    h: f64,
    alpha: f64,
    opts: &Ali3pOptions,
    run: &mut Run<NQ>,
) -> Result<Outcome<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
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
                let (kq, cv) = force_derivatives::<M, NQ, NC, DOF>(&x, &v, p, t, &mut run.calls)?;
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
    run.acc.max_velocity_correction = max_nan(run.acc.max_velocity_correction, (v - vstar).amax());
    Ok(Outcome::Converged {
        next: State {
            q: x,
            qd: v,
            qdd: a,
            lambda,
        },
    })
}
