//! Simulation entry points: projection method ([`simulate_projection`]) and Lagrange
//! multipliers ([`simulate_lagrange`]), with drift control by projection after each
//! accepted step.
//!
//! Projection method: the integrated state is `(q, u)`; after each accepted step (and at
//! each interpolated output) the dependent coordinates are Newton-projected onto `C = 0`
//! with the independent ones fixed ([`crate::assemble::assemble`]); velocities are
//! consistent by construction (`q̇ = D u + x_t`).
//!
//! Lagrange multipliers: the integrated state is `(q, q̇)`; with `project = true` the
//! same position projection is applied and `q̇` is projected onto `C_J q̇ + C_t = 0`
//! keeping its independent part ([`crate::velocity::project_velocity`]).

use nalgebra::SVector;

use crate::assemble::{assemble, AssemblyOptions};
use crate::error::SimError;
use crate::lagrange::lagrange_accelerations;
use crate::linalg;
use crate::mechanism::Dynamics;
use crate::null_space::{NullSpacePath, DEFAULT_PIVOT_THRESHOLD};
use crate::ode::{dopri5, rk4, Dopri5Options, OdeSystem, Pair, Rk4Options, Solution, Stats};
use crate::projection::{multipliers, projection_accelerations};
use crate::velocity::{project_velocity, velocity_from_independent};

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
        }
    }
}

/// Counters of a simulation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Integrator counters.
    pub ode: Stats,
    /// Newton iterations spent in projections.
    pub newton_iterations: usize,
    /// Right-hand-side evaluations that used a numeric (fallback) null-space basis.
    pub numeric_fallbacks: usize,
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
}

fn output_grid(t0: f64, t1: f64, extra: &[f64]) -> Result<Vec<f64>, SimError> {
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

/// Sign of `det J_dep` (square dependent columns only; `None` with redundant
/// constraints, where the check is skipped).
fn partition_sign<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Option<f64>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if NC + DOF != NQ {
        return None;
    }
    let dep = linalg::dependent_indices(NQ, &M::INDEPENDENT)?;
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return None;
    }
    let det = linalg::columns(&linalg::dmatrix(&j), &dep).determinant();
    det.is_finite().then_some(det.signum())
}

/// Remembers the sign of `det J_dep` at the last projected state and reports a change.
#[derive(Default)]
struct CrossingGuard {
    last: Option<(f64, f64)>,
}

impl CrossingGuard {
    fn check<M, const NQ: usize, const NC: usize, const DOF: usize>(
        &mut self,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Result<(), SimError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        if let Some(sign) = partition_sign::<M, NQ, NC, DOF>(q, p, t) {
            if let Some((t_prev, prev)) = self.last {
                if prev != sign {
                    return Err(SimError::PartitionCrossed { t_prev, t });
                }
            }
            self.last = Some((t, sign));
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
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, DOF>>
    for ProjectionSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, DOF>) -> Result<Pair<NQ, DOF>, SimError> {
        let a = projection_accelerations::<M, NQ, NC, DOF>(
            &y.a,
            &y.b,
            self.p,
            t,
            self.opts.pivot_threshold,
        )?;
        if !matches!(a.path, Some(NullSpacePath::Static { .. })) {
            self.fallbacks += 1;
        }
        Ok(Pair::new(a.qd, a.ud))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, DOF>) -> Result<(), SimError> {
        if self.opts.project {
            let asm = assemble::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.opts.assembly)
                .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            y.a = asm.q;
        }
        self.guard.check::<M, NQ, NC, DOF>(&y.a, self.p, t)
    }
}

/// Simulates with the projection method from `q0` (assembled first, independent
/// coordinates kept) and independent velocities `u0`, over `[t0, t1]`.
///
/// After every projection the sign of `det J_dep` (dependent Jacobian columns) is
/// compared with the previous one; a change means the trajectory crossed a
/// configuration where the independent coordinates fail, reported as
/// [`SimError::PartitionCrossed`] (with redundant constraints this check is skipped).
///
/// Errors: [`SimError::Assembly`] (initial assembly or a projection), dynamics errors
/// ([`SimError::Dynamics`], e.g. a singular `DᵀMD`), integrator errors
/// ([`SimError::Integration`]: step-size underflow, max steps), [`SimError::InvalidInput`].
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
    let asm = assemble::<M, NQ, NC, DOF>(q0, p, t0, &opts.assembly)
        .map_err(|source| SimError::Assembly { t: t0, source })?;
    let mut sys = ProjectionSystem::<M, NQ, NC, DOF> {
        p,
        opts,
        newton: asm.iterations,
        fallbacks: 0,
        guard: CrossingGuard::default(),
    };
    sys.guard.check::<M, NQ, NC, DOF>(&asm.q, p, t0)?;
    let sol = integrate(&mut sys, t0, Pair::new(asm.q, *u0), &grid, &opts.integrator)?;
    let mut traj = Trajectory {
        t: sol.t,
        q: Vec::with_capacity(grid.len()),
        qd: Vec::with_capacity(grid.len()),
        lambda: opts.multipliers.then(|| Vec::with_capacity(grid.len())),
        stats: SimStats {
            ode: sol.stats,
            newton_iterations: sys.newton,
            numeric_fallbacks: sys.fallbacks,
        },
    };
    for (&t, y) in traj.t.iter().zip(sol.y.iter()) {
        let qd = if let Some(lams) = traj.lambda.as_mut() {
            let a =
                projection_accelerations::<M, NQ, NC, DOF>(&y.a, &y.b, p, t, opts.pivot_threshold)?;
            lams.push(multipliers::<M, NQ, NC, DOF>(&y.a, &a.qd, &a.qdd, p, t)?);
            a.qd
        } else {
            velocity_from_independent::<M, NQ, NC, DOF>(&y.a, &y.b, p, t, opts.pivot_threshold)?
        };
        traj.q.push(y.a);
        traj.qd.push(qd);
    }
    Ok(traj)
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
    guard: CrossingGuard,
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, NQ>>
    for LagrangeSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, SimError> {
        let a = lagrange_accelerations::<M, NQ, NC, DOF>(
            &y.a,
            &y.b,
            self.p,
            t,
            self.opts.baumgarte_tau,
        )?;
        Ok(Pair::new(y.b, a.qdd))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, NQ>) -> Result<(), SimError> {
        if self.opts.project {
            let asm = assemble::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.opts.assembly)
                .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            y.a = asm.q;
            y.b = project_velocity::<M, NQ, NC, DOF>(
                &y.a,
                &y.b,
                self.p,
                t,
                self.opts.pivot_threshold,
            )?;
            self.guard.check::<M, NQ, NC, DOF>(&y.a, self.p, t)?;
        }
        Ok(())
    }
}

/// Simulates with index-1 Lagrange multipliers (optionally Baumgarte-stabilised) from
/// `(q0, qd0)` over `[t0, t1]`. With `opts.project`, `q0` is assembled and `qd0`
/// projected first (independent parts kept), and both are projected after every step.
///
/// Errors as [`simulate_projection`] ([`SimError::Dynamics`] with a singular augmented
/// matrix).
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
    let mut sys = LagrangeSystem::<M, NQ, NC, DOF> {
        p,
        opts,
        newton: 0,
        guard: CrossingGuard::default(),
    };
    let mut y0 = Pair::new(*q0, *qd0);
    sys.project(t0, &mut y0)?;
    let sol = integrate(&mut sys, t0, y0, &grid, &opts.integrator)?;
    let mut traj = Trajectory {
        t: sol.t,
        q: Vec::with_capacity(grid.len()),
        qd: Vec::with_capacity(grid.len()),
        lambda: opts.multipliers.then(|| Vec::with_capacity(grid.len())),
        stats: SimStats {
            ode: sol.stats,
            newton_iterations: sys.newton,
            numeric_fallbacks: 0,
        },
    };
    for (&t, y) in traj.t.iter().zip(sol.y.iter()) {
        if let Some(lams) = traj.lambda.as_mut() {
            let a = lagrange_accelerations::<M, NQ, NC, DOF>(&y.a, &y.b, p, t, opts.baumgarte_tau)?;
            lams.push(a.lambda);
        }
        traj.q.push(y.a);
        traj.qd.push(y.b);
    }
    Ok(traj)
}
