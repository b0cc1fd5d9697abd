//! Simulation with a controller in the loop: the model's `input`s (fields of `Params`) are
//! set by a Rust callback at the start of every control interval and held over it
//! (zero-order hold), so a controller closes the loop without regenerating the model; or,
//! with [`simulate_feedback`], before every evaluation of the dynamics (continuous
//! feedback: no hold, the controller is part of the right-hand side).

use nalgebra::SVector;

use crate::assemble::assemble_min_norm;
use crate::error::SimError;
use crate::lagrange::lagrange_qdd;
use crate::mechanism::Dynamics;
use crate::ode::{dop853, dopri5, rk4, OdeSystem, Pair};
use crate::simulate::{
    add_sim_stats, max_nan, output_grid, simulate_lagrange, simulate_projection, Integrator,
    SimOptions, SimStats, Trajectory,
};
use crate::velocity::project_velocity_min_norm;

/// The formulation [`simulate_controlled`] integrates each interval with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlRoute {
    /// [`simulate_projection`]: the state is `q` and the independent velocities.
    Projection,
    /// [`simulate_lagrange`]: the state is `q` and `q̇`.
    Lagrange,
}

/// Most control intervals of one [`simulate_controlled`] run.
pub const MAX_CONTROL_INTERVALS: usize = 10_000_000;

/// Simulates from `(q0, q̇0)` over `[t0, t1]` with a controller: at `t0` and then every
/// `interval` seconds, `control(t, q, q̇, &mut params)` sets the inputs (any field of
/// `Params`, usually those declared `input`), which are held until the next call; each
/// interval is integrated by `route` with `opts`. The trajectory holds the states at `t0`,
/// at `opts.output_times` and at `t1`, as [`simulate_projection`] reports them; counters
/// are summed and maxima kept (`energy_change` is the largest change within one interval:
/// the controller does work between intervals).
///
/// For [`ControlRoute::Projection`], `q̇0` gives the initial independent velocities (its
/// entries at `Mechanism::INDEPENDENT`).
///
/// Errors: [`SimError::InvalidInput`] for an interval that is not positive and finite or
/// that would need more than [`MAX_CONTROL_INTERVALS`]; any error of the route, at the
/// time it occurred.
#[allow(clippy::too_many_arguments)]
pub fn simulate_controlled<M, const NQ: usize, const NC: usize, const DOF: usize>(
    route: ControlRoute,
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    params: &M::Params,
    t0: f64,
    t1: f64,
    interval: f64,
    opts: &SimOptions,
    mut control: impl FnMut(f64, &SVector<f64, NQ>, &SVector<f64, NQ>, &mut M::Params),
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
    M::Params: Clone,
{
    if !(interval.is_finite() && interval > 0.0) {
        return Err(SimError::InvalidInput(
            "the control interval must be positive and finite",
        ));
    }
    if !(t0.is_finite() && t1.is_finite() && t1 > t0) {
        return Err(SimError::InvalidInput("need finite t0 < t1"));
    }
    if (t1 - t0) / interval > MAX_CONTROL_INTERVALS as f64 {
        return Err(SimError::InvalidInput(
            "too many control intervals (more than MAX_CONTROL_INTERVALS)",
        ));
    }
    let mut p = params.clone();
    let (mut q, mut qd) = (*q0, *qd0);
    let mut out: Option<Trajectory<NQ, NC>> = None;
    let mut k = 0usize;
    loop {
        let t = t0 + k as f64 * interval;
        // The last interval ends at t1 (no sliver shorter than a thousandth of one).
        let tn = if t + interval * 1.001 >= t1 {
            t1
        } else {
            t + interval
        };
        control(t, &q, &qd, &mut p);
        // A requested output time within rounding of the interval's end is that end.
        let near_end = |s: f64| (s - tn).abs() <= 1e-9 * interval;
        let o = SimOptions {
            output_times: opts
                .output_times
                .iter()
                .copied()
                // (one near the start was this interval's start, reported before)
                .filter(|&s| s > t + 1e-9 * interval && s < tn && !near_end(s))
                .collect(),
            ..opts.clone()
        };
        let end_requested = tn >= t1 || opts.output_times.iter().any(|&s| near_end(s));
        let tr = match route {
            ControlRoute::Projection => {
                let u = SVector::<f64, DOF>::from_fn(|j, _| qd[M::INDEPENDENT[j]]);
                simulate_projection::<M, NQ, NC, DOF>(&q, &u, &p, t, tn, &o)?
            }
            ControlRoute::Lagrange => simulate_lagrange::<M, NQ, NC, DOF>(&q, &qd, &p, t, tn, &o)?,
        };
        let (Some(&ql), Some(&qdl)) = (tr.q.last(), tr.qd.last()) else {
            return Err(SimError::InvalidInput("an interval returned no state"));
        };
        (q, qd) = (ql, qdl);
        let mut all = match out {
            None => tr,
            Some(mut all) => {
                append(&mut all, tr);
                all
            }
        };
        // Interval ends are reported only where an output was asked for (and at t1).
        if !end_requested {
            all.t.pop();
            all.q.pop();
            all.qd.pop();
            if let Some(l) = all.lambda.as_mut() {
                l.pop();
            }
        }
        out = Some(all);
        if tn >= t1 {
            break;
        }
        k += 1;
    }
    out.ok_or(SimError::InvalidInput("no interval was simulated"))
}

/// Appends interval `b` (whose first output repeats `a`'s last) to `a`.
fn append<const NQ: usize, const NC: usize>(a: &mut Trajectory<NQ, NC>, b: Trajectory<NQ, NC>) {
    a.t.extend(b.t.into_iter().skip(1));
    a.q.extend(b.q.into_iter().skip(1));
    a.qd.extend(b.qd.into_iter().skip(1));
    if let (Some(la), Some(lb)) = (a.lambda.as_mut(), b.lambda) {
        la.extend(lb.into_iter().skip(1));
    }
    let (s, r) = (&mut a.stats, &b.stats);
    add_sim_stats(s, r);
    s.energy_change = match (s.energy_change, r.energy_change) {
        (Some(x), Some(y)) => Some(max_nan(x, y)),
        (x, y) => x.or(y),
    };
    a.switch_times.extend(b.switch_times);
    a.rank_drop_times.extend(b.rank_drop_times);
}

/// The Lagrange route with the controller called before every right-hand side.
struct Feedback<'a, M, C, const NQ: usize, const NC: usize, const DOF: usize>
where
    M: Dynamics<NQ, NC, DOF>,
{
    p: M::Params,
    control: C,
    opts: &'a SimOptions,
    newton: usize,
    max_residual: f64,
}

impl<M, C, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, NQ>>
    for Feedback<'_, M, C, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
    C: FnMut(f64, &SVector<f64, NQ>, &SVector<f64, NQ>, &mut M::Params),
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, SimError> {
        (self.control)(t, &y.a, &y.b, &mut self.p);
        let qdd =
            lagrange_qdd::<M, NQ, NC, DOF>(&y.a, &y.b, &self.p, t, self.opts.baumgarte_tau)?.qdd;
        Ok(Pair::new(y.b, qdd))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, NQ>) -> Result<(), SimError> {
        self.max_residual = max_nan(self.max_residual, M::residual(&y.a, &self.p, t).norm());
        if NC == 0 || !self.opts.project {
            return Ok(());
        }
        let asm = assemble_min_norm::<M, NQ, NC, DOF>(&y.a, &self.p, t, &self.opts.assembly)
            .map_err(|source| SimError::Assembly { t, source })?;
        self.newton += asm.iterations;
        y.a = asm.q;
        y.b = project_velocity_min_norm::<M, NQ, NC, DOF>(&y.a, &y.b, &self.p, t)?;
        Ok(())
    }
}

/// Simulates from `(q0, q̇0)` over `[t0, t1]` with continuous feedback: before every
/// evaluation of the dynamics, `control(t, q, q̇, &mut params)` sets the inputs from the
/// state being evaluated (no zero-order hold: the controller is part of the right-hand
/// side, and the integrator controls the error of the closed loop). The Lagrange route
/// (`q` and `q̇`, minimum-norm projections after every step with `opts.project`), with
/// `opts.integrator`; the trajectory holds `t0`, `opts.output_times` and `t1`.
///
/// A controller with internal state (an integrator, a filter) must not update it here:
/// it is called at trial stages and rejected steps too; use [`simulate_controlled`] for
/// discrete-time controllers.
///
/// Errors: [`SimError::InvalidInput`] for a bad time span or output times, the route's
/// errors ([`SimError::Dynamics`], [`SimError::Assembly`], the integrator's).
#[allow(clippy::too_many_arguments)]
pub fn simulate_feedback<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    params: &M::Params,
    t0: f64,
    t1: f64,
    opts: &SimOptions,
    control: impl FnMut(f64, &SVector<f64, NQ>, &SVector<f64, NQ>, &mut M::Params),
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
    M::Params: Clone,
{
    let grid = output_grid(t0, t1, &opts.output_times)?;
    let mut sys = Feedback::<M, _, NQ, NC, DOF> {
        p: params.clone(),
        control,
        opts,
        newton: 0,
        max_residual: 0.0,
    };
    let mut y0 = Pair::new(*q0, *qd0);
    sys.project(t0, &mut y0)?;
    let sol = match &opts.integrator {
        Integrator::Dopri5(o) => dopri5(&mut sys, t0, y0, &grid[1..], o)?,
        Integrator::Dop853(o) => dop853(&mut sys, t0, y0, &grid[1..], o)?,
        Integrator::Rk4(o) => rk4(&mut sys, t0, y0, &grid[1..], o)?,
    };
    let mut traj = Trajectory {
        t: vec![t0],
        q: vec![y0.a],
        qd: vec![y0.b],
        lambda: None,
        stats: SimStats {
            ode: sol.stats,
            newton_iterations: sys.newton,
            max_residual: sys.max_residual,
            ..SimStats::default()
        },
        switch_times: Vec::new(),
        rank_drop_times: Vec::new(),
    };
    for (t, y) in sol.t.into_iter().zip(sol.y) {
        traj.t.push(t);
        traj.q.push(y.a);
        traj.qd.push(y.b);
    }
    Ok(traj)
}
