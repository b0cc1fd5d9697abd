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

use std::collections::VecDeque;

use nalgebra::{DMatrix, SMatrix, SVector};

use crate::assemble::{assemble, assemble_in, assemble_min_norm, AssemblyOptions};
use crate::error::{largest_entries, AssemblyError, DynamicsError, KinematicsError, SimError};
use crate::lagrange::{
    lagrange_accelerations, lagrange_qdd, leading_singular_values, row_space, RowSpace,
    RANK_DROP_RATIO,
};
use crate::linalg;
use crate::mechanism::{Dynamics, Mechanism};
use crate::null_space::{
    best_chart, chart_health, generated_basis, valid_threshold, Chart, NullSpacePath,
    DEFAULT_PIVOT_THRESHOLD,
};
use crate::ode::{
    dop853, dopri5, rk4, Dopri5Options, OdeSystem, Pair, Rk4Options, Solution, Stats, StepControl,
};
use crate::projection::{accelerations_in_buffer, multipliers, projection_accelerations_in};
use crate::velocity::{project_velocity, project_velocity_min_norm, velocity_from_independent_in};

mod blocks;
mod chart_choice;
mod guard;
mod lagrange_route;
mod projection;
mod rank_drop;
mod stage;

use chart_choice::*;
use guard::*;

use projection::*;
use rank_drop::*;
use stage::*;

pub use chart_choice::GENERATED_KEEP_RATIO;
pub use guard::{crossing_guard_decompositions, GUARD_ALWAYS_DEPENDENT, GUARD_HEALTH_RATIO};
pub use lagrange_route::simulate_lagrange;
pub use projection::simulate_projection;
pub use rank_drop::{HANDBACK_RATIO, HANDOVER_RATIO, JUMP_BASE, JUMP_RATIO};

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
    /// Adaptive Dormand–Prince 8(5,3) (the same options; fewer right-hand sides at tight
    /// tolerances).
    Dop853(Dopri5Options),
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
pub(crate) struct Defects {
    /// Largest `‖C(q)‖` of a reported state.
    pub(crate) max_residual: f64,
    /// Largest change made by a position projection.
    pub(crate) max_position_correction: f64,
    /// Largest change made by a velocity projection.
    pub(crate) max_velocity_correction: f64,
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
    /// Takes the constraint residual `‖C(q)‖` of a reported state.
    pub(crate) fn residual(&mut self, c: f64) {
        self.max_residual = max_nan(self.max_residual, c);
    }
    /// Takes a position projection from `q` to `to` (its largest change).
    pub(crate) fn position_correction<const N: usize>(
        &mut self,
        q: &SVector<f64, N>,
        to: &SVector<f64, N>,
    ) {
        self.max_position_correction = max_nan(self.max_position_correction, (to - q).amax());
    }
    /// Takes a velocity projection from `v` to `to` (its largest change).
    pub(crate) fn velocity_correction<const N: usize>(
        &mut self,
        v: &SVector<f64, N>,
        to: &SVector<f64, N>,
    ) {
        self.max_velocity_correction = max_nan(self.max_velocity_correction, (to - v).amax());
    }
    /// Takes the energy `e` of a reported state (the first one is the reference).
    pub(crate) fn energy(&mut self, e: Option<f64>) {
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
    /// The statistics of a run with these defects.
    pub(crate) fn into_stats(
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

/// The output times after `t` (of an ascending `grid`): what remains to be reported from a
/// restart at `t`.
fn after(grid: &[f64], t: f64) -> &[f64] {
    &grid[grid.partition_point(|&g| g <= t)..]
}

/// The output grid of a route over `[t0, t1]` ([`output_grid`]) after the options the
/// integrators do not check themselves are validated: the checks the Lagrange and the
/// projection route make first.
fn checked_grid(t0: f64, t1: f64, opts: &SimOptions) -> Result<Vec<f64>, SimError> {
    let grid = output_grid(t0, t1, &opts.output_times)?;
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
    Ok(grid)
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
        Integrator::Dop853(o) => dop853(sys, t0, y0, grid, o).map_err(SimError::from),
        Integrator::Rk4(o) => rk4(sys, t0, y0, grid, o).map_err(SimError::from),
    }
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

/// Adds the statistics `s` of a later part of a run to `total`: the counters summed, the
/// largest defects kept (a NaN shows); the energy change, which the callers bound in their
/// own ways, is left to them.
pub(crate) fn add_sim_stats(total: &mut SimStats, s: &SimStats) {
    add_stats(&mut total.ode, &s.ode);
    total.newton_iterations += s.newton_iterations;
    total.numeric_fallbacks += s.numeric_fallbacks;
    total.max_residual = max_nan(total.max_residual, s.max_residual);
    total.max_position_correction =
        max_nan(total.max_position_correction, s.max_position_correction);
    total.max_velocity_correction =
        max_nan(total.max_velocity_correction, s.max_velocity_correction);
    total.max_velocity_residual = max_nan(total.max_velocity_residual, s.max_velocity_residual);
    total.partition_switches += s.partition_switches;
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
        let chart = Chart::generated::<Circle, 2, 1>().unwrap_or_else(|e| panic!("{e}"));
        let watch = Some(RankWatch::default());
        let mut sys =
            ProjectionSystem::<Circle, 2, 1, 1>::new(&(), &opts, chart, Defects::default(), watch);
        sys.floor = DEFAULT_SWITCH_THRESHOLD;
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
