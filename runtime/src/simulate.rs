//! Simulation entry points: projection method ([`simulate_projection`]) and Lagrange
//! multipliers ([`simulate_lagrange`]), with drift control by projection after each
//! accepted step.
//!
//! Projection method: the integrated state is `(q, u)`; after each accepted step (and at
//! each interpolated output) the dependent coordinates are Newton-projected onto `C = 0`
//! with the independent ones fixed ([`crate::assemble::assemble`]); velocities are
//! consistent by construction (`q̇ = D u + x_t`). Where the independent coordinates
//! degrade, the simulation switches to others and restarts the integrator from the last
//! accepted step ([`simulate_projection`]).
//!
//! Lagrange multipliers: the integrated state is `(q, q̇)`; with `project = true` the
//! initial state is assembled keeping its independent coordinates and velocities, and
//! after each step positions and velocities get minimum-norm corrections
//! ([`crate::assemble::assemble_min_norm`], [`crate::velocity::project_velocity_min_norm`]):
//! no partition, so no independent coordinates that could fail along the way.

use nalgebra::{DMatrix, SVector};

use crate::assemble::{assemble, assemble_in, assemble_min_norm, AssemblyOptions};
use crate::error::{largest_entries, AssemblyError, DynamicsError, KinematicsError, SimError};
use crate::lagrange::{lagrange_accelerations, lagrange_qdd, row_space, RowSpace, RANK_DROP_RATIO};
use crate::linalg;
use crate::mechanism::{Dynamics, Mechanism};
use crate::null_space::{
    best_chart, chart_health, generated_basis, valid_threshold, Chart, NullSpacePath,
    DEFAULT_PIVOT_THRESHOLD,
};
use crate::ode::{
    dopri5, rk4, Dopri5Options, OdeSystem, Pair, Rk4Options, Solution, Stats, StepControl,
};
use crate::projection::{multipliers, projection_accelerations_in};
use crate::velocity::{project_velocity, project_velocity_min_norm, velocity_from_independent_in};

/// Default health below which [`simulate_projection`] switches to other independent
/// coordinates (well above [`DEFAULT_PIVOT_THRESHOLD`], where the partition fails).
///
/// Near a chart's singularity the post-step projection (independent coordinates held)
/// amplifies the integration error of the independent coordinates by about `1 / health`:
/// a five-bar swinging through aligned distal links gains an energy error of 5e-5 in 1 s
/// at rtol 1e-10 with a threshold of 1e-3, 2e-7 with 1e-2 (the Lagrange route: 4e-8).
pub const DEFAULT_SWITCH_THRESHOLD: f64 = 1e-2;

/// Most partition switches at one time before [`SimError::TooManySwitches`].
pub const MAX_SWITCHES_PER_STEP: usize = 4;

/// Which integrator to use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Integrator {
    /// Adaptive Dormand–Prince 5(4).
    Dopri5(Dopri5Options),
    /// Fixed-step classical Runge–Kutta.
    Rk4(Rk4Options),
}

/// Options of the simulations.
#[derive(Debug, Clone, PartialEq)]
pub struct SimOptions {
    /// Integrator and its options.
    pub integrator: Integrator,
    /// Output times strictly between `t0` and `t1`, ascending (`t0` and `t1` are always
    /// reported).
    pub output_times: Vec<f64>,
    /// Project positions (and, for Lagrange, velocities) after each accepted step.
    pub project: bool,
    /// Options of the post-step Newton projection and of the initial assembly.
    pub assembly: AssemblyOptions,
    /// Smallest relative static pivot trusted (see [`crate::null_space`]).
    pub pivot_threshold: f64,
    /// Compute the multipliers `λ` at the output times.
    pub multipliers: bool,
    /// Baumgarte time constant `τ` (Lagrange formulation only).
    pub baumgarte_tau: Option<f64>,
    /// Projection method: switch independent coordinates where the current ones degrade
    /// (see [`simulate_projection`]); `false` stops with [`SimError::PartitionCrossed`]
    /// instead.
    pub partition_switching: bool,
    /// Projection method: the chart health (see [`crate::null_space::chart_health`]) below
    /// which the independent coordinates are switched. Must lie in `[pivot_threshold, 1]`.
    /// For a model whose typical health ([`crate::Mechanism::TYPICAL_HEALTH`]) is below ten
    /// times this, a tenth of that typical health is used instead (not below
    /// `pivot_threshold`): health figures of large models are small where they are healthy.
    pub switch_threshold: f64,
    /// What to do where the constraint Jacobian loses rank along the motion (a bifurcation:
    /// see [`SimError::RankDrop`] for the Lagrange route, [`SimError::NoHealthyPartition`]
    /// for the projection method).
    pub rank_drop: RankDrop,
}

/// What [`simulate_lagrange`] and [`simulate_projection`] do where `C_J` loses rank along
/// the motion (a bifurcation, e.g. the flat position of a parallelogram, where two branches
/// of the motion cross).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankDrop {
    /// Stop with [`SimError::RankDrop`] (Lagrange) or [`SimError::NoHealthyPartition`]
    /// (projection), the default: beyond a bifurcation a route may follow another branch
    /// than the mechanism.
    Error,
    /// Carry on and list the times in [`Trajectory::rank_drop_times`].
    ///
    /// The projection method steps over the point: where its chart becomes singular within
    /// an accepted step and no chart is better there (the constraints lose rank), the step
    /// across (whose stages missed the singular set, or it would not have been accepted) is
    /// kept and the next chart is chosen past the point; the position projection keeps the
    /// independent coordinates, so the motion stays on the branch its velocity continues.
    /// Where the steps creep towards the point instead, it jumps over it ([`JUMP_RATIO`]).
    /// IFToMM A02 with one to three windows at rtol 1e-10: 20 or 21 rank drops in 20 s,
    /// within 5e-7 m of the exact branch motion; 40 windows 2.7e-5 m.
    ///
    /// The Lagrange route hands the steps near the point over to the projection method
    /// (from the last accepted step whose `σ_r / σ_max` of `C_J` is at least
    /// [`HANDOVER_RATIO`], back once it is [`HANDBACK_RATIO`] and twice its lowest again),
    /// which passes it as above, so it holds the branch too (A02 at rtol 1e-10: within
    /// 1.2e-5 m with one to three windows, 3.7e-5 m with 40). Where the projection method
    /// cannot pass (no chart at the handover state), its error is the route's.
    Continue,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            integrator: Integrator::Dopri5(Dopri5Options::default()),
            output_times: Vec::new(),
            project: true,
            assembly: AssemblyOptions::default(),
            pivot_threshold: DEFAULT_PIVOT_THRESHOLD,
            multipliers: false,
            baumgarte_tau: None,
            partition_switching: true,
            switch_threshold: DEFAULT_SWITCH_THRESHOLD,
            rank_drop: RankDrop::Error,
        }
    }
}

/// Counters and accumulated defects of a simulation.
///
/// The defects are measured at every state passed to the projection (each accepted step
/// and each interpolated output), whatever the integrator: a fixed-step RK4 run does not
/// control its error, and these figures are how it reports what it accumulated. With
/// `project: false` the projection figures stay 0 and `max_residual` is the drift.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SimStats {
    /// Integrator counters.
    pub ode: Stats,
    /// Newton iterations spent in projections.
    pub newton_iterations: usize,
    /// Right-hand-side evaluations that used a numeric (fallback) null-space basis.
    pub numeric_fallbacks: usize,
    /// Largest `‖C(q)‖` (Euclidean) of an integrated state before its projection.
    pub max_residual: f64,
    /// Largest change `max_i |q_i' − q_i|` made by a position projection.
    pub max_position_correction: f64,
    /// Largest change `max_i |q̇_i' − q̇_i|` made by a velocity projection (Lagrange route).
    pub max_velocity_correction: f64,
    /// `max |E(t) − E(t0)|` over the projected states, when the model has an energy
    /// function ([`Dynamics::energy`]); a conservative model should keep it near 0.
    pub energy_change: Option<f64>,
    /// Projection method: how many times the independent coordinates were switched (the
    /// times are in [`Trajectory::switch_times`]; the Lagrange route counts those of its
    /// projection segments, [`RankDrop::Continue`]).
    pub partition_switches: usize,
    /// Largest `‖C_J q̇ + C_t‖` (Euclidean) of a reported state after its velocity
    /// projection: filled by [`crate::ali3p::simulate_ali3p`] (whose penalty projections
    /// leave a small defect); 0 for the other routes, whose projections are exact.
    pub max_velocity_residual: f64,
}

/// Accumulates the defects of [`SimStats`].
#[derive(Default)]
struct Defects {
    max_residual: f64,
    max_position_correction: f64,
    max_velocity_correction: f64,
    energy0: Option<f64>,
    energy_change: Option<f64>,
}

/// `a.max(b)` that keeps a NaN (a NaN defect must show).
pub(crate) fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

impl Defects {
    fn energy(&mut self, e: Option<f64>) {
        let Some(e) = e else { return };
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
    fn into_stats(
        self,
        ode: Stats,
        newton_iterations: usize,
        numeric_fallbacks: usize,
    ) -> SimStats {
        SimStats {
            ode,
            newton_iterations,
            numeric_fallbacks,
            max_residual: self.max_residual,
            max_position_correction: self.max_position_correction,
            max_velocity_correction: self.max_velocity_correction,
            energy_change: self.energy_change,
            partition_switches: 0,
            max_velocity_residual: 0.0,
        }
    }
}

/// A simulated trajectory at the output times.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory<const NQ: usize, const NC: usize> {
    /// Output times.
    pub t: Vec<f64>,
    /// Coordinates.
    pub q: Vec<SVector<f64, NQ>>,
    /// Velocities.
    pub qd: Vec<SVector<f64, NQ>>,
    /// Multipliers (`M q̈ = f + C_Jᵀ λ`), when requested.
    pub lambda: Option<Vec<SVector<f64, NC>>>,
    /// Counters.
    pub stats: SimStats,
    /// Projection method: the times at which the independent coordinates were switched
    /// (ascending; a switch back to the generated coordinates counts too). The Lagrange
    /// route lists those of its projection segments ([`RankDrop::Continue`]).
    pub switch_times: Vec<f64>,
    /// With [`RankDrop::Continue`]: the times at which `C_J` lost rank along the motion (the
    /// points the projection method stepped over, or where the Lagrange route carried on;
    /// ascending; empty otherwise).
    pub rank_drop_times: Vec<f64>,
}

impl<const NQ: usize, const NC: usize> Trajectory<NQ, NC> {
    /// A trajectory with room for `n` outputs (multipliers when `opts` asks for them), its
    /// statistics (the switches counted) and times.
    fn empty(
        n: usize,
        opts: &SimOptions,
        mut stats: SimStats,
        switch_times: Vec<f64>,
        rank_drop_times: Vec<f64>,
    ) -> Self {
        stats.partition_switches = switch_times.len();
        Trajectory {
            t: Vec::with_capacity(n),
            q: Vec::with_capacity(n),
            qd: Vec::with_capacity(n),
            lambda: opts.multipliers.then(|| Vec::with_capacity(n)),
            stats,
            switch_times,
            rank_drop_times,
        }
    }
}

pub(crate) fn output_grid(t0: f64, t1: f64, extra: &[f64]) -> Result<Vec<f64>, SimError> {
    if !(t0.is_finite() && t1.is_finite() && t1 > t0) {
        return Err(SimError::InvalidInput("need finite t0 < t1"));
    }
    let mut grid = Vec::with_capacity(extra.len() + 2);
    grid.push(t0);
    for &t in extra {
        let prev = grid.last().copied().unwrap_or(t0);
        if !(t > prev && t < t1) {
            return Err(SimError::InvalidInput(
                "output times must be ascending and strictly between t0 and t1",
            ));
        }
        grid.push(t);
    }
    grid.push(t1);
    Ok(grid)
}

/// Validates the options the integrators do not check themselves.
fn check_options(opts: &SimOptions) -> Result<(), SimError> {
    if !valid_threshold(opts.pivot_threshold) {
        return Err(SimError::InvalidInput(
            "pivot threshold must be a number in [0, 1]",
        ));
    }
    if !valid_threshold(opts.assembly.pivot_threshold) {
        return Err(SimError::InvalidInput(
            "assembly pivot threshold must be a number in [0, 1]",
        ));
    }
    if !(valid_threshold(opts.switch_threshold) && opts.switch_threshold >= opts.pivot_threshold) {
        return Err(SimError::InvalidInput(
            "switch threshold must be a number in [pivot_threshold, 1]",
        ));
    }
    if !(opts.assembly.tol.is_finite() && opts.assembly.tol > 0.0) {
        return Err(SimError::InvalidInput(
            "assembly tolerance must be positive and finite",
        ));
    }
    Ok(())
}

/// The initial-state check of an unprojected Lagrange simulation.
fn check_on_manifold<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    opts: &SimOptions,
) -> Result<(), SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let tol = opts.assembly.tol.max(1e-9);
    let c = M::residual(q0, p, t0);
    let cv = M::jacobian(q0, p, t0) * qd0 + M::jacobian_t(q0, p, t0);
    let (cn, cvn) = (c.norm(), cv.norm());
    let pos_ok = cn <= tol;
    let vel_ok = cvn <= tol * qd0.norm().max(1.0);
    if pos_ok && vel_ok {
        return Ok(());
    }
    let worst = if pos_ok { &cv } else { &c };
    Err(SimError::OffManifold {
        t: t0,
        residual_norm: cn,
        velocity_residual_norm: cvn,
        tol,
        worst: largest_entries(worst.as_slice(), &[]),
    })
}

fn integrate<S, Sys>(
    sys: &mut Sys,
    t0: f64,
    y0: S,
    grid: &[f64],
    integrator: &Integrator,
) -> Result<Solution<S>, SimError>
where
    S: crate::ode::OdeState,
    Sys: OdeSystem<S, Error = SimError>,
{
    match integrator {
        Integrator::Dopri5(o) => dopri5(sys, t0, y0, grid, o).map_err(SimError::from),
        Integrator::Rk4(o) => rk4(sys, t0, y0, grid, o).map_err(SimError::from),
    }
}

/// The dependent Jacobian columns `J_dep` at `q` (`None` when non-finite or the model's
/// `INDEPENDENT` is invalid).
fn dependent_columns<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Option<DMatrix<f64>>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return None;
    }
    Some(linalg::columns(&linalg::dmatrix(&j), chart.dependent()))
}

/// Whether the linear interpolant `J(s) = J₀ + s (J₁ − J₀)`, `s ∈ [0, 1]`, of the dependent
/// columns is singular somewhere: `J(s) = J₀ (I + s (A − I))` with `A = J₀⁺ J₁`, singular
/// exactly when `A` has a real eigenvalue `μ ≤ 0` (`s = 1 / (1 − μ)`). Parity-free, unlike
/// the sign of `det J_dep` (which an even number of simultaneous flips leaves unchanged).
/// `‖A − I‖_F < 1` rules it out without an eigenvalue computation.
fn crosses_singularity(j0: &DMatrix<f64>, j1: &DMatrix<f64>) -> bool {
    crossing_point(j0, j1).is_some()
}

/// The first `s ∈ [0, 1]` where the interpolant of [`crosses_singularity`] is singular.
///
/// Eigenvalues `μ` with `Re μ ≤ 0` and `|Im μ| ≤ 0.1 |Re μ|` count as real: where several
/// singular directions cross at once (the windows of a parallelogram chain at their flat
/// position) `μ` is a multiple real eigenvalue, which rounding splits into a complex cluster
/// of radius `~ε^(1/k)` (k-fold); a bound of `1e-8` missed A02 with N = 2, whose projection
/// route then kept switching with ever smaller steps for over a minute instead of stopping.
fn crossing_point(j0: &DMatrix<f64>, j1: &DMatrix<f64>) -> Option<f64> {
    let n = j0.ncols();
    if n == 0 || j0.shape() != j1.shape() {
        return None;
    }
    GUARD_DECOMPOSITIONS.with(|c| c.set(c.get() + 1));
    // (`dependent_columns` passes finite matrices only; a NaN here would be a crossing at
    // the step's start, below, never a silent "no crossing".)
    let a = if j0.nrows() == n {
        match j0.clone().full_piv_lu().solve(j1) {
            Some(a) => a,
            None => return Some(0.0),
        }
    } else {
        match linalg::lstsq(j0, j1, 1e-13) {
            Some((a, _)) => a,
            None => return Some(0.0),
        }
    };
    if !linalg::finite(a.as_slice()) {
        return Some(0.0);
    }
    let ident = DMatrix::<f64>::identity(n, n);
    let b = &a - &ident;
    if b.norm() < 1.0 || spectral_radius_bound(&b) < 1.0 {
        return None;
    }
    // nalgebra's `complex_eigenvalues` iterates the Schur decomposition without a bound and
    // did not return on a 40-window chain near its flat position (A02 with N = 40): bounded
    // here, with the sign of `det A` (the classic test: an odd number of real eigenvalues
    // `≤ 0`) as the answer when the iteration does not converge.
    // (The determinant only where the iteration fails: one LU less per call.)
    match nalgebra::linalg::Schur::try_new(
        a.clone(),
        f64::EPSILON,
        SCHUR_MAX_ITERATIONS_PER_ROW * n,
    ) {
        Some(schur) => schur
            .complex_eigenvalues()
            .iter()
            .filter(|mu| mu.re <= 0.0 && mu.im.abs() <= 0.1 * mu.re.abs())
            .map(|mu| 1.0 / (1.0 - mu.re))
            .min_by(f64::total_cmp),
        None => {
            let det = a.determinant();
            (det <= 0.0 || det.is_nan()).then_some(0.5)
        }
    }
}

/// The integrator's smallest error scale `atol + rtol·min_i |q_i|` at `q` (DOPRI5; 0 for the
/// fixed-step RK4, which controls no error), the target of the post-step projection's
/// tightening in [`ProjectionSystem`].
fn integrator_scale<const NQ: usize>(integrator: &Integrator, q: &SVector<f64, NQ>) -> f64 {
    match integrator {
        Integrator::Dopri5(o) => {
            let s = o.atol + o.rtol * q.amin();
            if s.is_finite() {
                s
            } else {
                0.0
            }
        }
        Integrator::Rk4(_) => 0.0,
    }
}

/// Whether the change `dq` of `q` is within the integrator's error scale
/// `atol + rtol·|q_i|` in every coordinate (false for NaN; RK4: never).
fn within_scale<const NQ: usize>(
    integrator: &Integrator,
    dq: &SVector<f64, NQ>,
    q: &SVector<f64, NQ>,
) -> bool {
    match integrator {
        Integrator::Dopri5(o) => dq
            .iter()
            .zip(q.iter())
            .all(|(d, x)| d.abs() <= o.atol + o.rtol * x.abs()),
        Integrator::Rk4(_) => false,
    }
}

/// Newton iterations of the post-step projection's tightening (from a residual below the
/// assembly tolerance, one or two reach rounding).
const TIGHTEN_ITERATIONS: usize = 2;

/// Iterations of the Schur decomposition per row in [`crossing_point`] before it gives up
/// (typical: 2–4 per eigenvalue). Was 30: on A02 with 40 windows near its flat positions
/// the iteration does not converge, and each of those calls cost as much as the rest of a
/// run's steps together before it gave up.
const SCHUR_MAX_ITERATIONS_PER_ROW: usize = 6;

/// An upper bound on the spectral radius of `b` in `O(n²)` per iteration: the
/// Collatz–Wielandt bound `max_i (|B| x)_i / x_i ≥ ρ(|B|) ≥ ρ(B)` for positive `x`, from a few
/// power iterations of `|B|` (which sharpen `x` towards its Perron vector). Below 1, no
/// eigenvalue of `A = I + B` is `≤ 0` and the interpolant of [`crosses_singularity`] is
/// regular without an eigenvalue computation (on A02 with 40 windows `ρ(A − I)` is 0.07–0.33
/// where `‖A − I‖_F` is 1.2–4: the block-triangular `A − I` of a chain). `∞` for non-finite
/// entries.
fn spectral_radius_bound(b: &DMatrix<f64>) -> f64 {
    let n = b.nrows();
    if n == 0 || b.ncols() != n {
        return f64::INFINITY;
    }
    let abs = b.abs();
    let mut x = vec![1.0; n];
    let mut best = f64::INFINITY;
    for _ in 0..SPECTRAL_BOUND_ITERATIONS {
        let y: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| abs[(i, j)] * x[j]).sum::<f64>())
            .collect();
        let bound = y.iter().zip(&x).map(|(yi, xi)| yi / xi).fold(0.0, max_nan);
        if bound.is_nan() {
            return f64::INFINITY;
        }
        best = best.min(bound);
        if best < 1.0 {
            break;
        }
        // Keep `x` positive (a zero entry would make the next ratio 0/0): a floor relative
        // to its largest entry.
        let top = y.iter().copied().fold(0.0, f64::max);
        if !(top > 0.0 && top.is_finite()) {
            return if top == 0.0 { 0.0 } else { f64::INFINITY };
        }
        for (xi, yi) in x.iter_mut().zip(&y) {
            *xi = (yi / top).max(1e-12);
        }
    }
    best
}

/// Dependent coordinates up to which the crossing guard tests every accepted step, whatever
/// the chart's health ([`GUARD_HEALTH_RATIO`]): the test of a block this small costs about
/// what a right-hand side does, and a hand-written model's health figure may not show a
/// singularity (runtime/tests/rank_drop.rs: a parallelogram whose figure stays 0.71 up to its
/// flat positions, which the test then missed).
pub const GUARD_ALWAYS_DEPENDENT: usize = 12;

/// Power iterations of [`spectral_radius_bound`].
const SPECTRAL_BOUND_ITERATIONS: usize = 8;

std::thread_local! {
    /// Dependent-block decompositions of the crossing guard on this thread
    /// ([`crossing_guard_decompositions`]).
    static GUARD_DECOMPOSITIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times the projection method's partition-crossing guard factored the dependent
/// Jacobian columns (`O(NQ³)`: an LU, and where that does not settle it an eigenvalue
/// computation) on the calling thread since it started. The guard runs that test only where
/// the chart's health at either end of a step is below [`GUARD_HEALTH_RATIO`] of the model's
/// typical health (or the model has at most [`GUARD_ALWAYS_DEPENDENT`] dependent
/// coordinates); elsewhere it costs no decomposition. A count for tests and profiling.
pub fn crossing_guard_decompositions() -> usize {
    GUARD_DECOMPOSITIONS.with(|c| c.get())
}

/// The partition-crossing test of the projection method runs only where
/// the chart's health ([`crate::null_space::chart_health`]) at either end of an accepted step
/// is below this fraction of the model's typical health
/// ([`Mechanism::TYPICAL_HEALTH`], capped at 1): a step whose ends are both healthy did not
/// pass through a singularity of the chart. (This trusts the model's health figure; models
/// with at most [`GUARD_ALWAYS_DEPENDENT`] dependent coordinates are tested at every step.)
/// Measured where the tests cross: the chart's health at the lower end of every detected
/// crossing was at most 0.096 of the typical health (a parallelogram's symmetric crossing, 0.037 and 0.041 at its ends with a typical
/// 0.43; the five-bar, natural pendulum and rocker four-bar crossings lower).
pub const GUARD_HEALTH_RATIO: f64 = 0.25;

/// Remembers `J_dep` at the last projected state of the projection method and reports a
/// crossing of a configuration where the independent coordinates fail
/// ([`crosses_singularity`]). Not used by the Lagrange route, which needs no partition.
#[derive(Default)]
struct CrossingGuard {
    last: Option<(f64, DMatrix<f64>)>,
}

impl CrossingGuard {
    fn check<M, const NQ: usize, const NC: usize, const DOF: usize>(
        &mut self,
        chart: &Chart<DOF>,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Result<(), SimError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        if let Some(j1) = dependent_columns::<M, NQ, NC, DOF>(chart, q, p, t) {
            if let Some((t_prev, j0)) = &self.last {
                if crosses_singularity(j0, &j1) {
                    let (a, b) = if *t_prev <= t {
                        (*t_prev, t)
                    } else {
                        (t, *t_prev)
                    };
                    return Err(SimError::PartitionCrossed { t_prev: a, t: b });
                }
            }
            self.last = Some((t, j1));
        }
        Ok(())
    }
}

struct ProjectionSystem<
    'a,
    M: Dynamics<NQ, NC, DOF>,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
> {
    p: &'a M::Params,
    opts: &'a SimOptions,
    newton: usize,
    fallbacks: usize,
    guard: CrossingGuard,
    defects: Defects,
    has_energy: bool,
    /// The current independent coordinates.
    chart: Chart<DOF>,
    /// Why the integration stopped at the last accepted step (none: at the end).
    stop: Option<Stop<NQ, DOF>>,
    /// Health below which a switch is asked for (the switch threshold, lowered when the
    /// chart chosen at a degraded state was the current one).
    floor: f64,
    /// The last right-hand side that failed because the chart was singular at a stage.
    singular_stage: Option<SimError>,
    /// Times of the rank drops stepped over ([`RankDrop::Continue`]).
    rank_drops: Vec<f64>,
    /// [`RankDrop::Continue`]: the rank-drop guard, and the hand-back of a segment of the
    /// Lagrange route ([`simulate_lagrange`] near a rank drop).
    watch: Option<RankWatch>,
    /// `(t, y, σ_r / σ_max)` at the consecutive accepted states where the chart was nearly
    /// singular ([`RankDrop::Continue`]: the approach to a rank drop).
    approach: Vec<(f64, Pair<NQ, DOF>, f64)>,
    /// `(t, health)` of the chart at the last accepted state (cleared by a restart).
    last_health: Option<(f64, f64)>,
}

/// The chart health below which the crossing guard tests a step ([`GUARD_HEALTH_RATIO`]).
fn guard_health<M, const NQ: usize, const NC: usize, const DOF: usize>() -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    // `f64::min` takes the cap over a NaN typical health.
    (GUARD_HEALTH_RATIO * M::TYPICAL_HEALTH).min(GUARD_HEALTH_RATIO)
}

/// Why [`ProjectionSystem::accept`] stopped the integration.
enum Stop<const NQ: usize, const DOF: usize> {
    /// Choose the next chart at `at`; `crossed`: the step crossed a singularity of the
    /// current chart (it was discarded, and `at` is the chord's estimate of the crossing).
    Switch { at: SVector<f64, NQ>, crossed: bool },
    /// A segment of the Lagrange route is past its rank drop ([`RankWatch::handback`]).
    HandBack,
    /// Jump over a rank drop ([`JUMP_RATIO`]).
    Jump(Jump<NQ, DOF>),
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> ProjectionSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// Whether the constraints lose rank at `q` (where the current chart is singular):
    /// `σ_r / σ_max` of `C_J` is below [`HANDOVER_RATIO`] there (`q` is an estimate on the
    /// chord), no chart is healthy there, or the best one is the current chart. (The ratio
    /// first: a model's own health figure can miss a rank drop, e.g. one relative to each
    /// row's scale, and then the charts on either side alternate at the point.)
    fn rank_drop_at(&self, q: &SVector<f64, NQ>, t: f64) -> bool {
        let r = generic_rank::<NQ, NC, DOF>();
        if r > 0
            && row_space::<NQ, NC>(&M::jacobian(q, self.p, t), r)
                .is_some_and(|rs| rs.ratio < HANDOVER_RATIO)
        {
            return true;
        }
        match choose_chart::<M, NQ, NC, DOF>(q, self.p, t, self.opts) {
            Err(SimError::NoHealthyPartition { .. }) => true,
            Ok((c, _)) => {
                c == self.chart
                    && best_chart::<M, NQ, NC, DOF>(q, self.p, t)
                        .is_ok_and(|(b, h)| b == self.chart || h < self.opts.pivot_threshold)
            }
            Err(_) => false,
        }
    }
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, DOF>>
    for ProjectionSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, DOF>) -> Result<Pair<NQ, DOF>, SimError> {
        let nan = || {
            Pair::new(
                SVector::<f64, NQ>::from_element(f64::NAN),
                SVector::<f64, DOF>::from_element(f64::NAN),
            )
        };
        // A later stage of a step whose earlier stage met a singular chart (below) is built
        // from that stage's NaN derivative: pass the NaN on, so that the integrator rejects
        // and shrinks the step, instead of failing on the stage's non-finite state (A02 with
        // 40 windows at rtol 1e-10 stopped with "non-finite u" at t = 10.55 s).
        if self.singular_stage.is_some()
            && !(linalg::finite(y.a.as_slice()) && linalg::finite(y.b.as_slice()))
        {
            return Ok(nan());
        }
        let a = match projection_accelerations_in::<M, NQ, NC, DOF>(
            &self.chart,
            &y.a,
            &y.b,
            self.p,
            t,
            self.opts.pivot_threshold,
        ) {
            Ok(a) => a,
            Err(e @ DynamicsError::Kinematics(KinematicsError::SingularPartition { .. }))
                if self.opts.partition_switching =>
            {
                // A stage state where the chart fails: a non-finite stage makes the
                // adaptive integrator shrink the step, and the accepted steps before the
                // singularity switch charts.
                self.singular_stage = Some(e.into());
                return Ok(nan());
            }
            Err(e) => return Err(e.into()),
        };
        if !matches!(
            a.path,
            Some(NullSpacePath::Static { .. } | NullSpacePath::Atlas { .. })
        ) {
            self.fallbacks += 1;
        }
        Ok(Pair::new(a.qd, a.ud))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, DOF>) -> Result<(), SimError> {
        let c = M::residual(&y.a, self.p, t).norm();
        self.defects.max_residual = max_nan(self.defects.max_residual, c);
        if self.opts.project {
            let mut asm =
                assemble_in::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t, &self.opts.assembly)
                    .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            // The integrator rejects a step whose projection moves the state by more than its
            // tolerance. Newton stops anywhere below the assembly tolerance (1e-12), so the
            // next step's projection moves the coordinates by what this one left, whatever
            // that step's size: with an absolute tolerance below it, every step was rejected
            // (A04 at rtol 1e-12, atol 1e-14: 5e-13 moves against a scale of 2e-13, a
            // step-size underflow at t = 4.53 s). Tightened to a tenth of the integrator's
            // smallest scale (kept when rounding does not allow it).
            let tight = integrator_scale(&self.opts.integrator, &asm.q) * 0.1;
            if tight > 0.0 && asm.residual_norm > tight {
                let o = AssemblyOptions {
                    tol: tight,
                    max_iterations: TIGHTEN_ITERATIONS,
                    ..self.opts.assembly
                };
                let polished =
                    match assemble_in::<M, NQ, NC, DOF>(&self.chart, &asm.q, self.p, t, &o) {
                        Ok(a) => Some((a.q, a.residual_norm, a.iterations)),
                        Err(AssemblyError::NotConverged {
                            iterations,
                            residual_norm,
                            q,
                            ..
                        }) if q.len() == NQ => Some((
                            SVector::<f64, NQ>::from_column_slice(&q),
                            residual_norm,
                            iterations,
                        )),
                        Err(_) => None,
                    };
                // Kept only where it lowers the residual with a move within the integrator's
                // scale (a polish: near a singular chart the rounding of the residual, amplified
                // by the dependent solve, would move the state by more than the next step can
                // accept); otherwise the first projection, which met the assembly tolerance.
                if let Some((q, residual_norm, iterations)) = polished {
                    self.newton += iterations;
                    if residual_norm < asm.residual_norm
                        && within_scale(&self.opts.integrator, &(q - asm.q), &asm.q)
                    {
                        asm.q = q;
                        asm.residual_norm = residual_norm;
                    }
                }
            }
            let dq = (asm.q - y.a).amax();
            self.defects.max_position_correction =
                max_nan(self.defects.max_position_correction, dq);
            y.a = asm.q;
        }
        if !self.opts.partition_switching {
            self.guard
                .check::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t)?;
        }
        if self.has_energy {
            let qd = velocity_from_independent_in::<M, NQ, NC, DOF>(
                &self.chart,
                &y.a,
                &y.b,
                self.p,
                t,
                self.opts.pivot_threshold,
            )?;
            self.defects.energy(M::energy(&y.a, &qd, self.p, t));
        }
        Ok(())
    }
    fn accept(
        &mut self,
        t_prev: f64,
        y_prev: &Pair<NQ, DOF>,
        t: f64,
        y: &Pair<NQ, DOF>,
    ) -> Result<StepControl, SimError> {
        if !self.opts.partition_switching {
            return Ok(StepControl::Continue);
        }
        // Every decision below compares figures computed from the state; a NaN would make
        // them all silently false (no crossing, healthy, no jump): a clear error instead.
        if !(linalg::finite(y.a.as_slice())
            && linalg::finite(y.b.as_slice())
            && linalg::finite(y_prev.a.as_slice()))
        {
            return Err(SimError::Kinematics(KinematicsError::NonFinite {
                what: "accepted state (q, u)",
                t,
            }));
        }
        let health = chart_health::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t);
        // The health at the step's start: remembered from the last accepted step in this
        // chart (a switch or restart clears it).
        let health_prev = match self.last_health {
            Some((tp, h)) if tp == t_prev => h,
            _ => chart_health::<M, NQ, NC, DOF>(&self.chart, &y_prev.a, self.p, t_prev),
        };
        self.last_health = Some((t, health));
        // Crossed a singularity of the chart within the step: back to its start. Only where
        // the chart is weak at either end (`GUARD_HEALTH_RATIO`; a NaN health counts as weak):
        // the test factors the dependent block.
        let level = guard_health::<M, NQ, NC, DOF>();
        let weak = NQ.saturating_sub(DOF) <= GUARD_ALWAYS_DEPENDENT
            || !(health.min(health_prev) >= level && health_prev >= level);
        let (j0, j1) = if weak {
            (
                dependent_columns::<M, NQ, NC, DOF>(&self.chart, &y_prev.a, self.p, t),
                dependent_columns::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t),
            )
        } else {
            (None, None)
        };
        if let (Some(j0), Some(j1)) = (j0, j1) {
            if let Some(s) = crossing_point(&j0, &j1) {
                let q_c = y_prev.a + (y.a - y_prev.a) * s;
                let t_c = t_prev + (t - t_prev) * s;
                if self.opts.rank_drop == RankDrop::Continue && self.rank_drop_at(&q_c, t_c) {
                    // No chart is better than the current one where it is singular: the
                    // constraints lose rank there (a bifurcation), and no switch can avoid
                    // the point. The step across it was accepted by the error control (its
                    // stages missed the singular set): keep it, and choose the next chart
                    // past the point.
                    // (One per approach in a segment of the Lagrange route.)
                    let first = self
                        .watch
                        .as_mut()
                        .is_none_or(|hb| std::mem::take(&mut hb.armed));
                    if first {
                        self.rank_drops.push(t_c);
                    }
                    self.stop = Some(Stop::Switch {
                        at: y.a,
                        crossed: false,
                    });
                    return Ok(StepControl::StopAfter);
                }
                // Choose the next chart where the current one is singular (the estimate on
                // the chord): it cannot be the current one there.
                self.stop = Some(Stop::Switch {
                    at: q_c,
                    crossed: true,
                });
                return Ok(StepControl::StopBefore);
            }
        }
        // `σ_r / σ_max` at this state, when the watch computed it (near singular charts).
        let mut watched = None;
        if let Some(w) = self.watch.as_mut() {
            // Away from singular charts (the whole route, not a segment) nothing to watch:
            // an SVD per step only near one.
            if w.handback.is_none() && health >= watch_health::<M, NQ, NC, DOF>() {
                w.armed = true;
            } else {
                let (drop, ratio) = w.guard.check::<M, NQ, NC, DOF>(self.p, t_prev, &y.a, t);
                watched = ratio;
                if let Some(SimError::RankDrop { t, .. }) = drop {
                    if std::mem::take(&mut w.armed) {
                        self.rank_drops.push(t);
                    }
                }
                if ratio.is_some_and(|r| r >= HANDOVER_RATIO) {
                    w.armed = true;
                }
                if let Some(r) = ratio {
                    w.lowest = w.lowest.min(r);
                }
                let back = w.handback;
                if ratio.is_some_and(|r| back.is_some_and(|b| r >= b) && r >= 2.0 * w.lowest) {
                    self.stop = Some(Stop::HandBack);
                    return Ok(StepControl::StopAfter);
                }
            }
        }
        if health < JUMP_RATIO.sqrt() {
            // Closing in on a rank drop: jump over it once it is near (with
            // `RankDrop::Continue`, whose watch has measured the ratio here: health < 0.1).
            if let Some(r1) = watched {
                if self.approach.last().is_none_or(|(t0, _, _)| *t0 != t_prev) {
                    self.approach.clear();
                }
                let falling = self.approach.last().is_some_and(|(_, _, r0)| r1 < *r0);
                // Only the recent states can be a jump's base: a bounded history (a chart
                // that stays nearly singular for long would otherwise keep every state).
                if self.approach.len() >= APPROACH_HISTORY {
                    self.approach.remove(0);
                }
                self.approach.push((t, *y, r1));
                if falling && r1 < JUMP_RATIO {
                    // From the last state still well away from the point (accelerations
                    // there are accurate), with the one before it for the Hermite
                    // polynomials (measured on A02, one to forty windows: no better with
                    // one two, four or eight times as far from the point).
                    let n = self.approach.len() - 1;
                    let b = self
                        .approach
                        .iter()
                        .rposition(|(_, _, r)| *r >= JUMP_BASE)
                        .unwrap_or(n - 1)
                        .min(n - 1);
                    let a = if b >= 1 { b - 1 } else { 1 };
                    let (ta, ya, _) = self.approach[a];
                    let (tb, yb, rb) = self.approach[b];
                    self.stop = Some(Stop::Jump(Jump {
                        ta,
                        ya,
                        tb,
                        yb,
                        rb,
                        tn: t,
                        rn: r1,
                    }));
                    return Ok(StepControl::StopAfter);
                }
            }
        }
        if health < self.floor {
            self.stop = Some(Stop::Switch {
                at: y.a,
                crossed: false,
            });
            return Ok(StepControl::StopAfter);
        }
        // Back to the generated (static, fast) chart once it is healthy again for this
        // model (`return_threshold`).
        if !self.chart.is_generated::<M, NQ, NC>() {
            let (_, h, _) = generated_basis::<M, NQ, NC, DOF>(&y.a, self.p, t);
            if h >= return_threshold::<M, NQ, NC, DOF>(self.opts) {
                self.stop = Some(Stop::Switch {
                    at: y.a,
                    crossed: false,
                });
                return Ok(StepControl::StopAfter);
            }
        }
        Ok(StepControl::Continue)
    }
}

/// The chart health below which the projection method switches charts for model `M`:
/// `opts.switch_threshold`, or a tenth of the model's typical health
/// ([`Mechanism::TYPICAL_HEALTH`]) where that is lower — health figures are relative to
/// the Frobenius norm of all pivot rows, so large models have small healthy figures (the
/// Stewart platform's is ~0.01 near its nominal pose, where a fixed 1e-2 sent half its
/// runs to the numeric chart) — but never below `opts.pivot_threshold`.
///
/// [`Mechanism::TYPICAL_HEALTH`]: crate::Mechanism::TYPICAL_HEALTH
pub(crate) fn switch_threshold<M, const NQ: usize, const NC: usize, const DOF: usize>(
    opts: &SimOptions,
) -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    // `f64::min`/`max` take the option over a NaN typical health.
    opts.switch_threshold
        .min(0.1 * M::TYPICAL_HEALTH)
        .max(opts.pivot_threshold)
}

/// The generated chart's health from which the projection method takes it back after a
/// switch away from it: half its typical health ([`Mechanism::TYPICAL_HEALTH`]), kept
/// within 2 and 10 times the [`switch_threshold`] (hysteresis; a fixed 10 times was never
/// reached on the Stewart platform, and a run that left the generated chart took the
/// numeric one to its end).
///
/// [`Mechanism::TYPICAL_HEALTH`]: crate::Mechanism::TYPICAL_HEALTH
fn return_threshold<M, const NQ: usize, const NC: usize, const DOF: usize>(opts: &SimOptions) -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    let s = switch_threshold::<M, NQ, NC, DOF>(opts);
    // Not `clamp` (which panics on NaN): `f64::max` takes the bound over a NaN.
    (0.5 * M::TYPICAL_HEALTH).max(2.0 * s).min(10.0 * s)
}

/// The chart to continue with at `q`: the generated one when its health is at least the
/// switch threshold, else the one chosen by a complete-pivoting LU of the row-scaled `C_J`;
/// with its health.
fn choose_chart<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &SimOptions,
) -> Result<(Chart<DOF>, f64), SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    // No chart is chosen from a NaN: every health comparison would be false.
    if !linalg::finite(q.as_slice()) {
        return Err(SimError::Kinematics(KinematicsError::NonFinite {
            what: "q at a chart choice",
            t,
        }));
    }
    let generated = Chart::generated::<M, NQ, NC>()?;
    let switch = switch_threshold::<M, NQ, NC, DOF>(opts);
    let h = chart_health::<M, NQ, NC, DOF>(&generated, q, p, t);
    if h >= switch {
        return Ok((generated, h));
    }
    // The generated charts of the pivot atlas next: the healthiest of them, when healthy.
    let mut atlas: Option<(Chart<DOF>, f64)> = None;
    for ind in M::ATLAS_CHARTS {
        let chart = Chart::new(NQ, *ind)?;
        let ha = chart_health::<M, NQ, NC, DOF>(&chart, q, p, t);
        if ha >= switch && atlas.as_ref().is_none_or(|(_, b)| ha > *b) {
            atlas = Some((chart, ha));
        }
    }
    if let Some(found) = atlas {
        return Ok(found);
    }
    let (chart, rank_health) = best_chart::<M, NQ, NC, DOF>(q, p, t)?;
    let h = chart_health::<M, NQ, NC, DOF>(&chart, q, p, t);
    if h < opts.pivot_threshold || rank_health < opts.pivot_threshold {
        return Err(SimError::NoHealthyPartition {
            t,
            health: h.min(rank_health),
        });
    }
    Ok((chart, h))
}

/// The consistent velocity at `q` whose generated independent part is `u0`, when the
/// generated chart is singular at `q`: least squares on `[C_J; E] q̇ = [−C_t; u0]`, which
/// must reproduce `u0` (within `1e-9 (1 + |u0|)`).
fn velocity_without_chart<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
) -> Result<SVector<f64, NQ>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    let ct = M::jacobian_t(q, p, t);
    let mut a = DMatrix::<f64>::zeros(NC + DOF, NQ);
    let mut b = DMatrix::<f64>::zeros(NC + DOF, 1);
    for i in 0..NC {
        for k in 0..NQ {
            a[(i, k)] = j[(i, k)];
        }
        b[(i, 0)] = -ct[i];
    }
    for (r, &i) in M::INDEPENDENT.iter().enumerate() {
        a[(NC + r, i)] = 1.0;
        b[(NC + r, 0)] = u0[r];
    }
    let (x, _) = linalg::lstsq(&a, &b, 1e-12).ok_or(KinematicsError::DecompositionFailed {
        what: "least-squares initial velocity",
    })?;
    let qd = SVector::<f64, NQ>::from_fn(|i, _| x[(i, 0)]);
    let res = (linalg::dmatrix(&j) * DMatrix::from_column_slice(NQ, 1, qd.as_slice())).norm();
    let ures = M::INDEPENDENT
        .iter()
        .enumerate()
        .map(|(r, &i)| (qd[i] - u0[r]).abs())
        .fold(0.0, f64::max);
    if !(ures <= 1e-9 * (1.0 + u0.amax()) && res.is_finite()) {
        return Err(SimError::Kinematics(KinematicsError::SingularPartition {
            t,
            static_pivot: M::null_space(q, p, t).1,
            health: 0.0,
        }));
    }
    Ok(qd)
}

/// Simulates with the projection method from `q0` (assembled first, independent
/// coordinates kept) and independent velocities `u0` (of [`Mechanism::INDEPENDENT`]), over
/// `[t0, t1]`.
///
/// **Partition switching** (`opts.partition_switching`, the default): after every accepted
/// step the current independent coordinates (the *chart*) are checked: when its health
/// ([`crate::null_space::chart_health`]) falls below `opts.switch_threshold`, or when its
/// dependent Jacobian columns became singular within the step (a real eigenvalue `≤ 0` of
/// `J_dep(q₀)⁻¹ J_dep(q₁)`, parity-free), the integration stops at the end (or, for a
/// crossing, at the start) of that step, a new chart is chosen there — the generated
/// [`Mechanism::INDEPENDENT`] when it is healthy, else the non-pivot columns of a
/// complete-pivoting LU of the row-scaled `C_J` — the velocities are converted
/// (`u_new = q̇[new]`, `q̇ = D_old u_old + x_t`) and the integrator restarts from there on
/// the remaining output times. Off the generated chart, the generated one is taken back
/// once its health reaches half its typical health ([`Mechanism::TYPICAL_HEALTH`]), kept
/// within 2 and 10 times the switch threshold (`opts.switch_threshold`, lowered for models
/// whose typical health is small: see there). Switches are counted in
/// [`SimStats::partition_switches`] and their times recorded in [`Trajectory::switch_times`].
/// Without switching, a crossing stops the simulation with [`SimError::PartitionCrossed`].
/// Where no chart is better than the current one at the crossing (the constraints lose
/// rank), the simulation stops with [`SimError::NoHealthyPartition`], or with
/// [`RankDrop::Continue`] steps over the point (see there).
///
/// When the generated chart is singular at `q0` (a Cartesian pendulum released at the
/// horizontal), the initial velocity is the least-squares solution of
/// `[C_J; E_INDEPENDENT] q̇ = [−C_t; u0]`, which must reproduce `u0`.
///
/// The statistics report the accumulated constraint defect and energy change
/// ([`SimStats`]); a fixed-step RK4 run controls neither, so check them.
///
/// Errors: [`SimError::Assembly`] (initial assembly or a projection), dynamics errors
/// ([`SimError::Dynamics`], e.g. a singular `DᵀMD`), integrator errors
/// ([`SimError::Integration`]: step-size underflow, max steps), [`SimError::InvalidInput`],
/// [`SimError::NoHealthyPartition`] (the constraints lose rank: no chart is healthy),
/// [`SimError::TooManySwitches`] (more than [`MAX_SWITCHES_PER_STEP`] at one time).
///
/// [`Mechanism::INDEPENDENT`]: crate::Mechanism::INDEPENDENT
pub fn simulate_projection<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &SimOptions,
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let grid = output_grid(t0, t1, &opts.output_times)?;
    check_options(opts)?;
    let generated = Chart::generated::<M, NQ, NC>()?;
    let switching = opts.partition_switching;
    // The requested independent coordinates are kept (an unreachable value is an error,
    // never silently replaced: `assemble_any` is the caller's choice).
    let asm = assemble::<M, NQ, NC, DOF>(q0, p, t0, &opts.assembly)
        .map_err(|source| SimError::Assembly { t: t0, source })?;
    let gen_health = chart_health::<M, NQ, NC, DOF>(&generated, &asm.q, p, t0);
    let (chart, qd0) = if !switching || gen_health >= switch_threshold::<M, NQ, NC, DOF>(opts) {
        let qd0 = velocity_from_independent_in::<M, NQ, NC, DOF>(
            &generated,
            &asm.q,
            u0,
            p,
            t0,
            opts.pivot_threshold,
        )?;
        (generated.clone(), qd0)
    } else {
        let qd0 = if gen_health >= opts.pivot_threshold {
            velocity_from_independent_in::<M, NQ, NC, DOF>(
                &generated,
                &asm.q,
                u0,
                p,
                t0,
                opts.pivot_threshold,
            )?
        } else {
            velocity_without_chart::<M, NQ, NC, DOF>(&asm.q, u0, p, t0)?
        };
        let (chart, _) = choose_chart::<M, NQ, NC, DOF>(&asm.q, p, t0, opts)?;
        (chart, qd0)
    };
    let mut defects = Defects::default();
    let e0 = M::energy(&asm.q, &qd0, p, t0);
    defects.energy(e0);
    let mut sys = ProjectionSystem::<M, NQ, NC, DOF> {
        p,
        opts,
        newton: asm.iterations,
        fallbacks: 0,
        guard: CrossingGuard::default(),
        defects,
        has_energy: e0.is_some(),
        chart,
        stop: None,
        floor: switch_threshold::<M, NQ, NC, DOF>(opts),
        singular_stage: None,
        rank_drops: Vec::new(),
        watch: (opts.rank_drop == RankDrop::Continue).then(RankWatch::default),
        approach: Vec::new(),
        last_health: None,
    };
    if !switching {
        sys.guard
            .check::<M, NQ, NC, DOF>(&sys.chart, &asm.q, p, t0)?;
    }
    let y0 = Pair::new(asm.q, sys.chart.independent_part(&qd0));
    let mut run = ProjectionRun::default();
    run_projection(&mut sys, t0, y0, &grid, &mut run)?;
    let ProjectionRun {
        out,
        ode: ode_stats,
        switch_times,
    } = run;
    let stats = sys.defects.into_stats(ode_stats, sys.newton, sys.fallbacks);
    let rank_drops = std::mem::take(&mut sys.rank_drops);
    let mut traj = Trajectory::empty(out.len(), opts, stats, switch_times, rank_drops);
    for (t, y, chart) in out {
        let qd = if let Some(lams) = traj.lambda.as_mut() {
            let a = projection_accelerations_in::<M, NQ, NC, DOF>(
                &chart,
                &y.a,
                &y.b,
                p,
                t,
                opts.pivot_threshold,
            )?;
            lams.push(multipliers::<M, NQ, NC, DOF>(&y.a, &a.qd, &a.qdd, p, t)?);
            a.qd
        } else {
            velocity_from_independent_in::<M, NQ, NC, DOF>(
                &chart,
                &y.a,
                &y.b,
                p,
                t,
                opts.pivot_threshold,
            )?
        };
        traj.t.push(t);
        traj.q.push(y.a);
        traj.qd.push(qd);
    }
    Ok(traj)
}

/// What [`run_projection`] collects: the output states with the chart each is expressed in,
/// the integrator counters over the restarts, and the switch times.
struct ProjectionRun<const NQ: usize, const DOF: usize> {
    out: Vec<(f64, Pair<NQ, DOF>, Chart<DOF>)>,
    ode: Stats,
    switch_times: Vec<f64>,
}

impl<const NQ: usize, const DOF: usize> Default for ProjectionRun<NQ, DOF> {
    fn default() -> Self {
        ProjectionRun {
            out: Vec::new(),
            ode: Stats::default(),
            switch_times: Vec::new(),
        }
    }
}

/// Integrates the projection method from `(t_start, y0)` (in `sys.chart`) over the output
/// times `grid`, restarting in a new chart wherever [`ProjectionSystem::accept`] asks for a
/// switch. Returns the state where a hand-back ([`RankWatch::handback`]) stopped it (`None` at the
/// end of `grid`).
#[allow(clippy::type_complexity)]
fn run_projection<M, const NQ: usize, const NC: usize, const DOF: usize>(
    sys: &mut ProjectionSystem<'_, M, NQ, NC, DOF>,
    t0: f64,
    y0: Pair<NQ, DOF>,
    grid: &[f64],
    run: &mut ProjectionRun<NQ, DOF>,
) -> Result<Option<(f64, Pair<NQ, DOF>)>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let (p, opts) = (sys.p, sys.opts);
    let mut y0 = y0;
    let mut t_start = t0;
    let mut remaining: &[f64] = grid;
    let mut at_same_time = 0usize;
    loop {
        let sol = match integrate(sys, t_start, y0, remaining, &opts.integrator) {
            Ok(sol) => sol,
            Err(SimError::Integration(e)) => {
                // A step size that collapsed on a stage where the chart is singular: say so.
                return Err(sys
                    .singular_stage
                    .take()
                    .unwrap_or(SimError::Integration(e)));
            }
            Err(e) => return Err(e),
        };
        add_stats(&mut run.ode, &sol.stats);
        for (t, y) in sol.t.iter().zip(sol.y) {
            run.out.push((*t, y, sys.chart.clone()));
        }
        let Some((ts, ys)) = sol.stopped else {
            return Ok(None);
        };
        let (q_choice, crossed) = match sys.stop.take() {
            None => return Ok(None),
            Some(Stop::HandBack) => return Ok(Some((ts, ys))),
            Some(Stop::Jump(jump)) => {
                let Some((t_land, y_land)) = jump_over::<M, NQ, NC, DOF>(sys, &jump, grid, run)?
                else {
                    return Ok(None);
                };
                y0 = y_land;
                t_start = t_land;
                remaining = &grid[grid.partition_point(|&g| g <= t_land)..];
                continue;
            }
            Some(Stop::Switch { at, crossed }) => (at, crossed),
        };
        // Never loop: a bounded number of switches at one time.
        if run.switch_times.last() == Some(&ts) {
            at_same_time += 1;
            if at_same_time >= MAX_SWITCHES_PER_STEP {
                return Err(SimError::TooManySwitches {
                    t: ts,
                    switches: at_same_time + 1,
                });
            }
        } else {
            at_same_time = 0;
        }
        let qd = velocity_from_independent_in::<M, NQ, NC, DOF>(
            &sys.chart,
            &ys.a,
            &ys.b,
            p,
            ts,
            opts.pivot_threshold,
        )?;
        let (mut new_chart, h_choice) = choose_chart::<M, NQ, NC, DOF>(&q_choice, p, ts, opts)?;
        if crossed && new_chart == sys.chart {
            new_chart = best_chart::<M, NQ, NC, DOF>(&q_choice, p, ts)?.0;
        }
        let h_start = chart_health::<M, NQ, NC, DOF>(&new_chart, &ys.a, p, ts);
        if h_start < opts.pivot_threshold {
            // Chosen after a crossing, but unusable where the integration restarts.
            let (c, _) = choose_chart::<M, NQ, NC, DOF>(&ys.a, p, ts, opts)?;
            new_chart = c;
        }
        if new_chart == sys.chart {
            if crossed {
                // A crossing where every chart is singular: the constraints lose rank.
                let rank_health = best_chart::<M, NQ, NC, DOF>(&q_choice, p, ts)?.1;
                return Err(SimError::NoHealthyPartition {
                    t: ts,
                    health: rank_health,
                });
            }
            // Degraded, but still the best chart here: ask again only well below.
            sys.floor = 0.1 * h_choice.min(sys.floor);
        } else {
            sys.floor = switch_threshold::<M, NQ, NC, DOF>(opts);
            run.switch_times.push(ts);
            sys.chart = new_chart;
        }
        sys.last_health = None;
        y0 = Pair::new(ys.a, sys.chart.independent_part(&qd));
        t_start = ts;
        let k = grid.partition_point(|&g| g <= ts);
        if k >= grid.len() {
            return Ok(None);
        }
        remaining = &grid[k..];
    }
}

/// Jumps over a rank drop (see [`Jump`]): the point `t*` is where the ratio, linear in
/// time from `(tb, rb)` to `(tn, rn)`, vanishes; the jump lands as far past it as `tb` is
/// before it (capped at the last output time). The independent coordinates and velocities
/// follow cubic Hermite polynomials through the states at `ta` and `tb` (values and
/// derivatives: the chart's accelerations there are accurate), extrapolated; the dependent
/// coordinates are assembled in the chart from a Taylor polynomial of all coordinates at
/// `tb`, which starts on the branch the motion is on. The output times inside the jump get
/// the same polynomials. Records the rank drop at `t*` when a singular value of `C_J`
/// changed sign between `tb` and the landing (one per approach). Returns the landing state
/// (`None` at the end of `grid`).
#[allow(clippy::type_complexity)]
fn jump_over<M, const NQ: usize, const NC: usize, const DOF: usize>(
    sys: &mut ProjectionSystem<'_, M, NQ, NC, DOF>,
    jump: &Jump<NQ, DOF>,
    grid: &[f64],
    run: &mut ProjectionRun<NQ, DOF>,
) -> Result<Option<(f64, Pair<NQ, DOF>)>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let (p, opts) = (sys.p, sys.opts);
    let chart = sys.chart.clone();
    let acc = |t: f64, y: &Pair<NQ, DOF>| {
        projection_accelerations_in::<M, NQ, NC, DOF>(
            &chart,
            &y.a,
            &y.b,
            p,
            t,
            opts.pivot_threshold,
        )
    };
    let (tb, yb) = (jump.tb, &jump.yb);
    let (ta, ya) = (jump.ta, &jump.ya);
    let ab = acc(tb, yb)?;
    let aa = acc(ta, ya)?;
    // The point, where the ratio (linear in time) vanishes; the landing as far past it.
    let t_star = jump.tn + jump.rn * (jump.tn - tb) / (jump.rb - jump.rn);
    let t_end = grid.last().copied().unwrap_or(jump.tn);
    let t_land = (2.0 * t_star - tb).min(t_end);
    let finite = |v: &SVector<f64, DOF>| v.iter().all(|x| x.is_finite());
    if !(t_land > jump.tn && t_land.is_finite() && finite(&aa.ud) && finite(&ab.ud)) {
        return Err(SimError::Kinematics(KinematicsError::SingularPartition {
            t: jump.tn,
            static_pivot: M::null_space(&yb.a, p, tb).1,
            health: jump.rn,
        }));
    }
    let ind = *chart.independent();
    let (qa, qb) = (chart.independent_part(&ya.a), chart.independent_part(&yb.a));
    let state_at = |t: f64| -> Result<Pair<NQ, DOF>, SimError> {
        // Independent coordinates and velocities: cubic Hermite polynomials through the two
        // states (values and derivatives), extrapolated; the others: Taylor from `yb`, a
        // starting point for the assembly.
        let u = hermite(ta, tb, t, [&ya.b, &aa.ud, &yb.b, &ab.ud]);
        let qi = hermite(ta, tb, t, [&qa, &ya.b, &qb, &yb.b]);
        let s = t - tb;
        let mut q = yb.a + ab.qd * s + ab.qdd * (0.5 * s * s);
        for (k, &i) in ind.iter().enumerate() {
            q[i] = qi[k];
        }
        let asm = assemble_in::<M, NQ, NC, DOF>(&chart, &q, p, t, &opts.assembly)
            .map_err(|source| SimError::Assembly { t, source })?;
        Ok(Pair::new(asm.q, u))
    };
    for &g in grid.iter().filter(|&&g| g > jump.tn && g < t_land) {
        run.out.push((g, state_at(g)?, chart.clone()));
    }
    let y_land = state_at(t_land)?;
    // A rank drop only if a singular value changed sign between the two sides (a motion
    // that came this close without crossing is jumped the same way, but not recorded).
    let r = generic_rank::<NQ, NC, DOF>();
    let crossed = row_space::<NQ, NC>(&M::jacobian(&yb.a, p, tb), r).is_some_and(|rs| {
        sign_flips(&rs, &linalg::dmatrix(&M::jacobian(&y_land.a, p, t_land))).is_some()
    });
    let first = crossed
        && sys
            .watch
            .as_mut()
            .is_none_or(|hb| std::mem::take(&mut hb.armed));
    if first {
        sys.rank_drops.push(t_star);
    }
    if let Some(w) = sys.watch.as_mut() {
        w.guard = RankGuard::default();
    }
    sys.approach.clear();
    if t_land >= t_end {
        run.out.push((t_end, y_land, chart));
        return Ok(None);
    }
    Ok(Some((t_land, y_land)))
}

/// The cubic Hermite polynomial with values `p0`, `p1` and derivatives `m0`, `m1` at `t0`,
/// `t1` (`[p0, m0, p1, m1]`), at `t` (also outside `[t0, t1]`).
fn hermite<const DOF: usize>(
    t0: f64,
    t1: f64,
    t: f64,
    [p0, m0, p1, m1]: [&SVector<f64, DOF>; 4],
) -> SVector<f64, DOF> {
    let d = t1 - t0;
    let s = (t - t0) / d;
    let (s2, s3) = (s * s, s * s * s);
    p0 * (2.0 * s3 - 3.0 * s2 + 1.0)
        + m0 * (d * (s3 - 2.0 * s2 + s))
        + p1 * (3.0 * s2 - 2.0 * s3)
        + m1 * (d * (s3 - s2))
}

/// Adds the counters of a restarted integration.
pub(crate) fn add_stats(total: &mut Stats, s: &Stats) {
    total.steps += s.steps;
    total.rejected += s.rejected;
    total.rhs_calls += s.rhs_calls;
    total.projections += s.projections;
    total.projection_rejections += s.projection_rejections;
    total.max_projection = max_nan(total.max_projection, s.max_projection);
}

struct LagrangeSystem<
    'a,
    M: Dynamics<NQ, NC, DOF>,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
> {
    p: &'a M::Params,
    opts: &'a SimOptions,
    newton: usize,
    defects: Defects,
    /// The rank-drop guard.
    guard: RankGuard,
    /// Rank drops passed with [`RankDrop::Continue`].
    rank_drops: Vec<f64>,
    /// The last stop asked for a projection segment ([`RankDrop::Continue`] near a rank
    /// drop, see [`HANDOVER_RATIO`]).
    handover: bool,
}

/// With [`RankDrop::Continue`], the Lagrange route hands a step over to the projection
/// method when it would end with `σ_r / σ_max` of `C_J` below this (or when it crosses a
/// rank drop): the index-1 motion cannot pass a bifurcation on its branch (see
/// [`RANK_DROP_RATIO`]), the projection method steps over it keeping its independent
/// coordinates. The projection segment hands back once the ratio is at least
/// [`HANDBACK_RATIO`].
pub const HANDOVER_RATIO: f64 = 1e-2;

/// See [`HANDOVER_RATIO`]: twice it (a hysteresis, so that the routes do not alternate).
pub const HANDBACK_RATIO: f64 = 2e-2;

/// How many singular values of `C_J` changed sign from the state of `rs0` to the Jacobian
/// `j1` (see [`LagrangeSystem::rank_drop`]); `None` for none.
fn sign_flips(rs0: &RowSpace, j1: &DMatrix<f64>) -> Option<usize> {
    let b1 = rs0.u.tr_mul(&(j1 * &rs0.v));
    let d: Vec<f64> = rs0.sigma.iter().map(|x| 1.0 / x.sqrt()).collect();
    let n = d.len();
    let w = DMatrix::<f64>::from_fn(n, n, |a, b| 0.5 * (b1[(a, b)] + b1[(b, a)]) * d[a] * d[b]);
    if !linalg::finite(w.as_slice()) {
        return None;
    }
    // Bounded (nalgebra's `symmetric_eigenvalues` iterates without a limit): 30 sweeps per
    // row. Where it does not converge, a failed Cholesky factorisation still says that some
    // eigenvalue is not positive (at least one flip), a successful one that none is.
    let Some(eig) = nalgebra::SymmetricEigen::try_new(w.clone(), f64::EPSILON, 30 * n.max(1))
    else {
        return w.cholesky().is_none().then_some(1);
    };
    let n = eig.eigenvalues.iter().filter(|&&m| m <= 0.0).count();
    (n > 0).then_some(n)
}

/// With [`RankDrop::Continue`], the projection method jumps over a rank drop once an accepted
/// state is this close to it (`σ_r / σ_max` of `C_J` below this, and falling): near the
/// point the chart is nearly singular, the error control shrinks the steps, and measured
/// runs crept towards the point without reaching it (A02 with two windows by the Lagrange
/// route's projection segments at rtol 1e-10: steps of 1e-14 s at `σ_r / σ_max = 3.5e-7`).
/// The jump follows cubic Hermite polynomials of the independent coordinates and velocities
/// through two accepted states of the approach ([`JUMP_BASE`]) to as far past the point
/// (where the ratio, linear in time, vanishes), the dependent coordinates assembled in the
/// chart. It is less accurate than a step the error control accepts (A02 with two windows by
/// the Lagrange route: 1.2e-5 m after one jump where the runs without one keep 5e-7 m), and
/// taken only where the integration would stall.
pub const JUMP_RATIO: f64 = RANK_DROP_RATIO;

/// Accepted states of an approach to a rank drop kept for a jump's base ([`JUMP_BASE`]).
const APPROACH_HISTORY: usize = 64;

/// A jump over a rank drop ([`JUMP_RATIO`]): from the accepted state `(tb, yb)` (ratio
/// `rb`), with `(ta, ya)` for the Hermite polynomials, detected at `tn` (ratio `rn`, where
/// the integration stopped).
struct Jump<const NQ: usize, const DOF: usize> {
    ta: f64,
    ya: Pair<NQ, DOF>,
    tb: f64,
    yb: Pair<NQ, DOF>,
    rb: f64,
    tn: f64,
    rn: f64,
}

/// The Taylor polynomial of a jump ([`JUMP_RATIO`]) starts at the last accepted state of
/// the approach whose `σ_r / σ_max` is at least this: closer to the point the chart's
/// accelerations carry the position error of the state amplified by the nearly singular
/// chart (A02 with two windows: the jerk estimated from two states at `1.4e-4` and `5.3e-5`
/// was `−2,467` where the motion's is near 0). Measured on that run (one jump in 20 s), from
/// `1e-2`, `3e-3`, `1e-3`, `1e-4`: B0 off by 3.5e-4, 5.4e-4, 2.2e-5, 3.5e-4 m (with a
/// Taylor polynomial from one state; the Hermite polynomials now: 1.2e-5 m from `1e-3`).
pub const JUMP_BASE: f64 = 1e-3;

/// What the projection method watches with [`RankDrop::Continue`]: the rank drops its steps
/// cross, found by the Lagrange route's guard ([`RankGuard`], at the accepted states where
/// the chart's health is below [`WATCH_HEALTH`], or at all of a segment's), one per approach
/// (`armed` again once the ratio is [`HANDOVER_RATIO`]: where many singular values vanish at
/// once, 40 windows of A02, the guard can see them cross in two consecutive steps; and
/// partition switches pass such points too, where the chart-crossing test sees nothing). A
/// segment of the Lagrange route stops after the first accepted step whose `σ_r / σ_max` of
/// `C_J` is at least `handback` and twice the lowest of the segment (past the closest
/// approach, not on the way in).
struct RankWatch {
    handback: Option<f64>,
    lowest: f64,
    guard: RankGuard,
    armed: bool,
}

impl Default for RankWatch {
    fn default() -> Self {
        RankWatch {
            handback: None,
            lowest: f64::INFINITY,
            guard: RankGuard::default(),
            armed: true,
        }
    }
}

/// The chart health below which the projection method's [`RankWatch`] looks for rank drops
/// (for a model whose typical health is below 0.4, the crossing guard's level
/// [`GUARD_HEALTH_RATIO`] of it instead: A02 with 40 windows, typical health 0.091, ran an
/// SVD of its `80 × 81` Jacobian at nearly every step with a fixed 0.1).
const WATCH_HEALTH: f64 = 0.1;

/// [`WATCH_HEALTH`] for model `M`.
fn watch_health<M, const NQ: usize, const NC: usize, const DOF: usize>() -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    WATCH_HEALTH.min(guard_health::<M, NQ, NC, DOF>())
}

/// The rank-drop guard of the Lagrange route (and of its projection segments): the leading
/// singular triplets of `C_J` at the last accepted state.
#[derive(Default)]
struct RankGuard {
    last: Option<(f64, RowSpace)>,
}

impl RankGuard {
    /// The rank drop ([`SimError::RankDrop`]) at the accepted state `(t, q)` or between it
    /// and the last one checked (`self.last`, when it was at `t_prev`), and the state's
    /// `σ_r / σ_max`. Records the state for the next step. A non-finite Jacobian or a
    /// failed SVD is left to the right-hand side to report (`(None, None)`).
    fn check<M, const NQ: usize, const NC: usize, const DOF: usize>(
        &mut self,
        p: &M::Params,
        t_prev: f64,
        q: &SVector<f64, NQ>,
        t: f64,
    ) -> (Option<SimError>, Option<f64>)
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        let r = generic_rank::<NQ, NC, DOF>();
        if r == 0 {
            return (None, Some(1.0));
        }
        let j1 = M::jacobian(q, p, t);
        let Some(rs1) = row_space::<NQ, NC>(&j1, r) else {
            return (None, None);
        };
        let above = |rs: &RowSpace| {
            rs.sigma
                .iter()
                .filter(|&&x| x > RANK_DROP_RATIO * rs.sigma[0])
                .count()
        };
        let mut found = None;
        if rs1.ratio <= RANK_DROP_RATIO {
            found = Some(SimError::RankDrop {
                t,
                generic_rank: r,
                rank: above(&rs1),
                ratio: rs1.ratio,
            });
        } else if let Some((t0, rs0)) = self.last.as_ref().filter(|(t0, _)| *t0 == t_prev) {
            // The leading block in the previous state's singular bases, B(q) = U₀ᵀ C_J(q) V₀:
            // B(q₀) = Σ₀ is regular; a rank drop between the states makes B singular (a left
            // null vector of C_J there has a component in span U₀). While the singular
            // vectors turn little within the step, B(q₁) is nearly diagonal with the signed
            // singular values at q₁: a singular value that crossed zero shows as a negative
            // eigenvalue of Σ₀^(−1/2) sym(B₁) Σ₀^(−1/2) (symmetric: real eigenvalues,
            // robust where several cross at once — the windows of a parallelogram chain —,
            // which the non-symmetric B₀⁻¹ B₁ splits into complex clusters). Only while the row space turns by less than 45° within the
            // step (else B can turn singular without a rank drop).
            let turn = rs0.v.tr_mul(&rs1.v).singular_values().min();
            if turn >= std::f64::consts::FRAC_1_SQRT_2 {
                if let Some(n) = sign_flips(rs0, &linalg::dmatrix(&j1)) {
                    // Where the smallest singular value, signed, crosses zero on the chord.
                    let (a, b) = (rs0.sigma[r - 1], rs1.sigma[r - 1]);
                    let s = if a + b > 0.0 { a / (a + b) } else { 0.5 };
                    found = Some(SimError::RankDrop {
                        t: t0 + s * (t - t0),
                        generic_rank: r,
                        rank: r.saturating_sub(n),
                        ratio: rs0.ratio.min(rs1.ratio),
                    });
                }
            }
        }
        let ratio = rs1.ratio;
        self.last = Some((t, rs1));
        (found, Some(ratio))
    }
}

/// The model's generic rank `NQ − DOF`, capped at `NC`.
fn generic_rank<const NQ: usize, const NC: usize, const DOF: usize>() -> usize {
    NQ.saturating_sub(DOF).min(NC)
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> LagrangeSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// A segment of the projection method from `(t, y)` over the output times `grid`
    /// ([`RankDrop::Continue`] near a rank drop, see [`HANDOVER_RATIO`]), in the chart
    /// [`choose_chart`] picks at `y`: its outputs (velocities from its chart) go to `out`,
    /// its counters, defects, switches and rank drops to the route's. Returns the state where
    /// it handed back (`None` at the end of `grid`).
    #[allow(clippy::type_complexity)]
    fn across_by_projection(
        &mut self,
        t: f64,
        y: &Pair<NQ, NQ>,
        grid: &[f64],
        out: &mut Vec<(f64, Pair<NQ, NQ>)>,
        ode: &mut Stats,
        switch_times: &mut Vec<f64>,
    ) -> Result<Option<(f64, Pair<NQ, NQ>)>, SimError> {
        let (p, pivot) = (self.p, self.opts.pivot_threshold);
        let opts = SimOptions {
            partition_switching: true,
            rank_drop: RankDrop::Continue,
            ..self.opts.clone()
        };
        let (chart, _) = choose_chart::<M, NQ, NC, DOF>(&y.a, p, t, &opts)?;
        let defects = std::mem::take(&mut self.defects);
        let mut sys = ProjectionSystem::<M, NQ, NC, DOF> {
            p,
            opts: &opts,
            newton: 0,
            fallbacks: 0,
            guard: CrossingGuard::default(),
            has_energy: defects.energy0.is_some(),
            defects,
            chart,
            stop: None,
            floor: switch_threshold::<M, NQ, NC, DOF>(&opts),
            singular_stage: None,
            rank_drops: Vec::new(),
            watch: Some(RankWatch {
                handback: Some(HANDBACK_RATIO),
                ..RankWatch::default()
            }),
            approach: Vec::new(),
            last_health: None,
        };
        let y0 = Pair::new(y.a, sys.chart.independent_part(&y.b));
        let mut run = ProjectionRun::default();
        let back = run_projection(&mut sys, t, y0, grid, &mut run);
        self.defects = std::mem::take(&mut sys.defects);
        self.newton += sys.newton;
        self.rank_drops.append(&mut sys.rank_drops);
        add_stats(ode, &run.ode);
        switch_times.append(&mut run.switch_times);
        let full = |chart: &Chart<DOF>, t: f64, y: &Pair<NQ, DOF>| {
            velocity_from_independent_in::<M, NQ, NC, DOF>(chart, &y.a, &y.b, p, t, pivot)
                .map(|qd| Pair::new(y.a, qd))
        };
        for (t, y, chart) in &run.out {
            out.push((*t, full(chart, *t, y)?));
        }
        match back? {
            Some((tb, yb)) => Ok(Some((tb, full(&sys.chart, tb, &yb)?))),
            None => Ok(None),
        }
    }

    /// Applies [`SimOptions::rank_drop`] to a detected rank drop.
    fn on_rank_drop(&mut self, drop: Option<SimError>) -> Result<(), SimError> {
        match (drop, self.opts.rank_drop) {
            (None, _) => Ok(()),
            (Some(e), RankDrop::Error) => Err(e),
            (Some(SimError::RankDrop { t, .. }), RankDrop::Continue) => {
                self.rank_drops.push(t);
                Ok(())
            }
            (Some(e), RankDrop::Continue) => Err(e),
        }
    }
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, NQ>>
    for LagrangeSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, SimError> {
        let qdd =
            lagrange_qdd::<M, NQ, NC, DOF>(&y.a, &y.b, self.p, t, self.opts.baumgarte_tau)?.qdd;
        Ok(Pair::new(y.b, qdd))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, NQ>) -> Result<(), SimError> {
        let c = M::residual(&y.a, self.p, t).norm();
        self.defects.max_residual = max_nan(self.defects.max_residual, c);
        if self.opts.project {
            // Partition-free: minimum-norm corrections of positions and velocities.
            let asm = assemble_min_norm::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.opts.assembly)
                .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            let dq = (asm.q - y.a).amax();
            self.defects.max_position_correction =
                max_nan(self.defects.max_position_correction, dq);
            y.a = asm.q;
            let v = project_velocity_min_norm::<M, NQ, NC, DOF>(&y.a, &y.b, self.p, t)?;
            let dv = (v - y.b).amax();
            self.defects.max_velocity_correction =
                max_nan(self.defects.max_velocity_correction, dv);
            y.b = v;
        }
        self.defects.energy(M::energy(&y.a, &y.b, self.p, t));
        Ok(())
    }
    fn accept(
        &mut self,
        t_prev: f64,
        _y_prev: &Pair<NQ, NQ>,
        t: f64,
        y: &Pair<NQ, NQ>,
    ) -> Result<StepControl, SimError> {
        let (drop, ratio) = self.guard.check::<M, NQ, NC, DOF>(self.p, t_prev, &y.a, t);
        if self.opts.rank_drop == RankDrop::Continue {
            let near = ratio.is_some_and(|r| r < HANDOVER_RATIO);
            if near || drop.is_some() {
                // Back to the step's start, and across by the projection method.
                self.handover = true;
                return Ok(StepControl::StopBefore);
            }
        }
        self.on_rank_drop(drop)?;
        Ok(StepControl::Continue)
    }
}

/// Simulates with index-1 Lagrange multipliers (optionally Baumgarte-stabilised) from
/// `(q0, qd0)` over `[t0, t1]`. With `opts.project`, `q0` is assembled and `qd0`
/// projected first (independent parts kept), and both are projected after every step.
/// With `project: false` the initial state must already be consistent:
/// `‖C(q0)‖ ≤ tol` and `‖C_J q̇0 + C_t‖ ≤ tol · max(1, ‖q̇0‖)` with
/// `tol = max(opts.assembly.tol, 1e-9)`, else [`SimError::OffManifold`] (an index-1
/// formulation keeps whatever defect it starts with, and lets it grow linearly).
///
/// No partition-crossing guard: after the initial assembly this route needs no
/// independent coordinates. A rank-drop guard instead: where `C_J` loses rank along the
/// motion (at the start, at an accepted state, or between two), a bifurcation the index-1
/// formulation cannot resolve, the run stops with [`SimError::RankDrop`]. With
/// [`RankDrop::Continue`], a step that would end near a rank drop (`σ_r / σ_max <`
/// [`HANDOVER_RATIO`]) or cross one is discarded, and the projection method (partition
/// switching on, stepping over the point) carries the motion from the step's start until
/// the ratio is [`HANDBACK_RATIO`] again; the times of the rank drops are in
/// [`Trajectory::rank_drop_times`], the switches of those segments in
/// [`Trajectory::switch_times`].
/// The statistics report the accumulated defects and energy change ([`SimStats`]).
///
/// Errors as [`simulate_projection`] ([`SimError::Dynamics`] with an indefinite or
/// singular mass on the allowed motions, or non-finite forces), and
/// [`SimError::RankDrop`].
pub fn simulate_lagrange<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &SimOptions,
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let grid = output_grid(t0, t1, &opts.output_times)?;
    check_options(opts)?;
    if !opts.project {
        check_on_manifold::<M, NQ, NC, DOF>(q0, qd0, p, t0, opts)?;
    }
    let mut sys = LagrangeSystem::<M, NQ, NC, DOF> {
        p,
        opts,
        newton: 0,
        defects: Defects::default(),
        guard: RankGuard::default(),
        rank_drops: Vec::new(),
        handover: false,
    };
    let mut y0 = Pair::new(*q0, *qd0);
    if opts.project {
        // The initial state keeps its independent coordinates and velocities.
        let asm = assemble::<M, NQ, NC, DOF>(q0, p, t0, &opts.assembly)
            .map_err(|source| SimError::Assembly { t: t0, source })?;
        sys.newton += asm.iterations;
        y0.a = asm.q;
        y0.b = project_velocity::<M, NQ, NC, DOF>(&y0.a, qd0, p, t0, opts.pivot_threshold)?;
    }
    sys.project(t0, &mut y0)?;
    // Starting at a rank drop is one too (the branch is open from the start).
    let (drop, _) = sys.guard.check::<M, NQ, NC, DOF>(p, t0, &y0.a, t0);
    sys.on_rank_drop(drop)?;
    let mut out: Vec<(f64, Pair<NQ, NQ>)> = Vec::with_capacity(grid.len());
    let mut ode_stats = Stats::default();
    let mut switch_times = Vec::new();
    let (mut t_start, mut remaining) = (t0, &grid[..]);
    loop {
        let sol = integrate(&mut sys, t_start, y0, remaining, &opts.integrator)?;
        add_stats(&mut ode_stats, &sol.stats);
        out.extend(sol.t.into_iter().zip(sol.y));
        let Some((ts, ys)) = sol.stopped else { break };
        if !std::mem::take(&mut sys.handover) {
            break;
        }
        remaining = &remaining[remaining.partition_point(|&g| g <= ts)..];
        if remaining.is_empty() {
            break;
        }
        let Some((tb, yb)) = sys.across_by_projection(
            ts,
            &ys,
            remaining,
            &mut out,
            &mut ode_stats,
            &mut switch_times,
        )?
        else {
            break;
        };
        // The rank-drop guard starts again from the state handed back.
        sys.guard = RankGuard::default();
        let (drop, _) = sys.guard.check::<M, NQ, NC, DOF>(p, tb, &yb.a, tb);
        sys.on_rank_drop(drop)?;
        (t_start, y0) = (tb, yb);
        remaining = &remaining[remaining.partition_point(|&g| g <= tb)..];
        if remaining.is_empty() {
            break;
        }
    }
    let stats = sys.defects.into_stats(ode_stats, sys.newton, 0);
    let mut traj = Trajectory::empty(out.len(), opts, stats, switch_times, sys.rank_drops);
    for (t, y) in out {
        if let Some(lams) = traj.lambda.as_mut() {
            let a = lagrange_accelerations::<M, NQ, NC, DOF>(&y.a, &y.b, p, t, opts.baumgarte_tau)?;
            lams.push(a.lambda);
        }
        traj.t.push(t);
        traj.q.push(y.a);
        traj.qd.push(y.b);
    }
    Ok(traj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::SMatrix;

    /// A unit point mass on the unit circle, `x` independent, under gravity `−y`.
    struct Circle;

    impl Mechanism<2, 1, 1> for Circle {
        type Params = ();
        const NAME: &'static str = "circle";
        const COORD_NAMES: [&'static str; 2] = ["x", "y"];
        const INDEPENDENT: [usize; 1] = [0];
        fn nominal_q() -> SVector<f64, 2> {
            SVector::<f64, 2>::new(0.6, -0.8)
        }
        fn residual(q: &SVector<f64, 2>, _: &(), _: f64) -> SVector<f64, 1> {
            SVector::<f64, 1>::new(q[0] * q[0] + q[1] * q[1] - 1.0)
        }
        fn jacobian(q: &SVector<f64, 2>, _: &(), _: f64) -> SMatrix<f64, 1, 2> {
            SMatrix::<f64, 1, 2>::new(2.0 * q[0], 2.0 * q[1])
        }
        fn jacobian_t(_: &SVector<f64, 2>, _: &(), _: f64) -> SVector<f64, 1> {
            SVector::zeros()
        }
        fn null_space(q: &SVector<f64, 2>, _: &(), _: f64) -> (SMatrix<f64, 2, 1>, f64) {
            let piv = q[1].abs() / q[0].abs().max(q[1].abs());
            (SMatrix::<f64, 2, 1>::new(1.0, -q[0] / q[1]), piv)
        }
        fn solve_dependent(
            q: &SVector<f64, 2>,
            _: &(),
            _: f64,
            b: &SVector<f64, 1>,
        ) -> SVector<f64, 2> {
            SVector::<f64, 2>::new(0.0, b[0] / (2.0 * q[1]))
        }
    }

    impl Dynamics<2, 1, 1> for Circle {
        fn mass_matrix(_: &SVector<f64, 2>, _: &(), _: f64) -> SMatrix<f64, 2, 2> {
            SMatrix::<f64, 2, 2>::identity()
        }
        fn forces(_: &SVector<f64, 2>, _: &SVector<f64, 2>, _: &(), _: f64) -> SVector<f64, 2> {
            SVector::<f64, 2>::new(0.0, -1.0)
        }
        fn gamma(_: &SVector<f64, 2>, qd: &SVector<f64, 2>, _: &(), _: f64) -> SVector<f64, 1> {
            SVector::<f64, 1>::new(-2.0 * qd.norm_squared())
        }
    }

    #[test]
    fn a_nan_state_at_the_chart_decision_is_an_error_not_a_chart() {
        let opts = SimOptions::default();
        let nan = SVector::<f64, 2>::new(f64::NAN, -0.8);
        match choose_chart::<Circle, 2, 1, 1>(&nan, &(), 0.5, &opts) {
            Err(SimError::Kinematics(KinematicsError::NonFinite { t, .. })) => assert_eq!(t, 0.5),
            Err(e) => panic!("another error: {e}"),
            Ok((c, h)) => panic!("a chart chosen from a NaN state: {c:?}, health {h}"),
        }
        // A finite state on the circle still gets its chart (x independent at y = -0.8).
        let q = SVector::<f64, 2>::new(0.6, -0.8);
        let (c, h) =
            choose_chart::<Circle, 2, 1, 1>(&q, &(), 0.0, &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.independent(), &[0]);
        // |y| / max(|x|, |y|): the static pivot of the circle's chart.
        assert_eq!(h, 1.0);
    }

    #[test]
    fn a_nan_accepted_state_is_an_error_not_a_decision() {
        let opts = SimOptions::default();
        let mut sys = ProjectionSystem::<Circle, 2, 1, 1> {
            p: &(),
            opts: &opts,
            newton: 0,
            fallbacks: 0,
            guard: CrossingGuard::default(),
            defects: Defects::default(),
            has_energy: false,
            chart: Chart::generated::<Circle, 2, 1>().unwrap_or_else(|e| panic!("{e}")),
            stop: None,
            floor: DEFAULT_SWITCH_THRESHOLD,
            singular_stage: None,
            rank_drops: Vec::new(),
            watch: Some(RankWatch::default()),
            approach: Vec::new(),
            last_health: None,
        };
        let y0 = Pair::new(
            SVector::<f64, 2>::new(0.6, -0.8),
            SVector::<f64, 1>::new(0.1),
        );
        let y1 = Pair::new(
            SVector::<f64, 2>::new(f64::NAN, -0.8),
            SVector::<f64, 1>::new(0.1),
        );
        match sys.accept(0.0, &y0, 0.1, &y1) {
            Err(SimError::Kinematics(KinematicsError::NonFinite { t, .. })) => assert_eq!(t, 0.1),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a decision made on a NaN state"),
        }
        assert!(sys.stop.is_none());
        // The same step with finite states is accepted (healthy chart: y = -0.8).
        let y1 = Pair::new(
            SVector::<f64, 2>::new(0.6, -0.8),
            SVector::<f64, 1>::new(0.1),
        );
        assert!(matches!(
            sys.accept(0.0, &y0, 0.1, &y1),
            Ok(StepControl::Continue)
        ));
    }

    #[test]
    fn a_numeric_chart_singular_partition_names_no_nan_pivot() {
        let e = KinematicsError::SingularPartition {
            t: 18.934,
            static_pivot: f64::NAN,
            health: 1e-6,
        };
        let m = e.to_string();
        assert!(!m.contains("NaN"), "{m}");
        assert!(m.contains("numeric chart") && m.contains("1.000e-6"), "{m}");
    }
}
