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
//! initial state is assembled keeping its independent coordinates and velocities, and
//! after each step positions and velocities get minimum-norm corrections
//! ([`crate::assemble::assemble_min_norm`], [`crate::velocity::project_velocity_min_norm`]):
//! no partition, so no independent coordinates that could fail along the way.

use nalgebra::{DMatrix, SVector};

use crate::assemble::{assemble, assemble_min_norm, AssemblyOptions};
use crate::error::{largest_entries, SimError};
use crate::lagrange::lagrange_accelerations;
use crate::linalg;
use crate::mechanism::Dynamics;
use crate::null_space::{valid_threshold, NullSpacePath, DEFAULT_PIVOT_THRESHOLD};
use crate::ode::{dopri5, rk4, Dopri5Options, OdeSystem, Pair, Rk4Options, Solution, Stats};
use crate::projection::{multipliers, projection_accelerations};
use crate::velocity::{project_velocity, project_velocity_min_norm, velocity_from_independent};

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
fn max_nan(a: f64, b: f64) -> f64 {
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
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Option<DMatrix<f64>>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let dep = linalg::dependent_indices(NQ, &M::INDEPENDENT)?;
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return None;
    }
    Some(linalg::columns(&linalg::dmatrix(&j), &dep))
}

/// Whether the linear interpolant `J(s) = J₀ + s (J₁ − J₀)`, `s ∈ [0, 1]`, of the dependent
/// columns is singular somewhere: `J(s) = J₀ (I + s (A − I))` with `A = J₀⁺ J₁`, singular
/// exactly when `A` has a real eigenvalue `μ ≤ 0` (`s = 1 / (1 − μ)`). Parity-free, unlike
/// the sign of `det J_dep` (which an even number of simultaneous flips leaves unchanged).
/// `‖A − I‖_F < 1` rules it out without an eigenvalue computation.
fn crosses_singularity(j0: &DMatrix<f64>, j1: &DMatrix<f64>) -> bool {
    let n = j0.ncols();
    if n == 0 || j0.shape() != j1.shape() {
        return false;
    }
    let a = if j0.nrows() == n {
        match j0.clone().full_piv_lu().solve(j1) {
            Some(a) => a,
            None => return true,
        }
    } else {
        match linalg::lstsq(j0, j1, 1e-13) {
            Some((a, _)) => a,
            None => return true,
        }
    };
    if !linalg::finite(a.as_slice()) {
        return true;
    }
    let ident = DMatrix::<f64>::identity(n, n);
    if (&a - &ident).norm() < 1.0 {
        return false;
    }
    a.complex_eigenvalues()
        .iter()
        .any(|mu| mu.re <= 0.0 && mu.im.abs() <= 1e-8 * mu.re.abs().max(1.0))
}

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
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Result<(), SimError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        if let Some(j1) = dependent_columns::<M, NQ, NC, DOF>(q, p, t) {
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
        let c = M::residual(&y.a, self.p, t).norm();
        self.defects.max_residual = max_nan(self.defects.max_residual, c);
        if self.opts.project {
            let asm = assemble::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.opts.assembly)
                .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            let dq = (asm.q - y.a).amax();
            self.defects.max_position_correction =
                max_nan(self.defects.max_position_correction, dq);
            y.a = asm.q;
        }
        self.guard.check::<M, NQ, NC, DOF>(&y.a, self.p, t)?;
        if self.has_energy {
            let qd = velocity_from_independent::<M, NQ, NC, DOF>(
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
}

/// Simulates with the projection method from `q0` (assembled first, independent
/// coordinates kept) and independent velocities `u0`, over `[t0, t1]`.
///
/// After every projection the dependent Jacobian columns are compared with the previous
/// ones: when `J_dep` is singular on the segment between them (a real eigenvalue `≤ 0` of
/// `J_dep(q₀)⁺ J_dep(q₁)`, parity-free) the trajectory crossed a configuration where the
/// independent coordinates fail, reported as [`SimError::PartitionCrossed`].
///
/// The statistics report the accumulated constraint defect and energy change
/// ([`SimStats`]); a fixed-step RK4 run controls neither, so check them.
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
    check_options(opts)?;
    let asm = assemble::<M, NQ, NC, DOF>(q0, p, t0, &opts.assembly)
        .map_err(|source| SimError::Assembly { t: t0, source })?;
    let qd0 = velocity_from_independent::<M, NQ, NC, DOF>(&asm.q, u0, p, t0, opts.pivot_threshold)?;
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
    };
    sys.guard.check::<M, NQ, NC, DOF>(&asm.q, p, t0)?;
    let sol = integrate(&mut sys, t0, Pair::new(asm.q, *u0), &grid, &opts.integrator)?;
    let mut traj = Trajectory {
        t: sol.t,
        q: Vec::with_capacity(grid.len()),
        qd: Vec::with_capacity(grid.len()),
        lambda: opts.multipliers.then(|| Vec::with_capacity(grid.len())),
        stats: sys.defects.into_stats(sol.stats, sys.newton, sys.fallbacks),
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
    defects: Defects,
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
/// independent coordinates.
/// The statistics report the accumulated defects and energy change ([`SimStats`]).
///
/// Errors as [`simulate_projection`] ([`SimError::Dynamics`] with an indefinite or
/// singular mass on the allowed motions, or non-finite forces).
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
    let sol = integrate(&mut sys, t0, y0, &grid, &opts.integrator)?;
    let mut traj = Trajectory {
        t: sol.t,
        q: Vec::with_capacity(grid.len()),
        qd: Vec::with_capacity(grid.len()),
        lambda: opts.multipliers.then(|| Vec::with_capacity(grid.len())),
        stats: sys.defects.into_stats(sol.stats, sys.newton, 0),
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
