//! The event-located route of [`simulate`](crate::simulate()): models with contacts
//! (`inequality` items, with or without Coulomb friction) or dry friction in joints, whose
//! motion has impacts and stick–slip transitions. The generated `Model` of such a module
//! routes `simulate` here (its `Dynamics::event_route` calls the [`Runner`]'s route that
//! fits it): the start
//! state is assembled as on the smooth routes, the `contact` module's error-controlled
//! simulator runs (DOPRI5 between located events), and its trajectory is reported at the
//! output times with the events beside it.

use nalgebra::SVector;

use super::{Options, Route, Simulation, State, Stretch};
use crate::assemble::{assemble_any, AssemblyOptions};
use crate::contact::{
    simulate_contact_adaptive, simulate_friction_adaptive, simulate_joint_friction_adaptive,
    AdaptiveContactOptions, AdaptiveFrictionOptions, AdaptiveJointFrictionOptions, FrictionEvent,
    JointFrictionEvent,
};
use crate::error::SimError;
use crate::mechanism::{Dynamics, EventRoutes, Friction, Inequalities, JointFriction, Mechanism};
use crate::ode::Dopri5Options;
use crate::simulate::{output_grid, SimStats, Trajectory};
use crate::velocity::project_velocity;

/// What happened at an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A contact reached its boundary (an impact follows where it approaches).
    Touch,
    /// A closed contact's normal force reached zero (lift-off).
    Release,
    /// A sticking contact or joint started sliding (its force reached the friction cone).
    Slip,
    /// A sliding contact or joint's slip velocity reached zero.
    Stop,
    /// A sliding joint's normal force changed sign.
    Reverse,
}

/// An event of the event-located route, located on the integrator's dense output.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Time.
    pub t: f64,
    /// The inequality constraint or frictional joint it happened at.
    pub name: &'static str,
    /// What happened.
    pub kind: EventKind,
}

/// The assembled start `(q, q̇)` and the output grid.
type Start<const NQ: usize> = (SVector<f64, NQ>, SVector<f64, NQ>, Vec<f64>);

/// The checked start: `(q, q̇)` assembled onto the equality constraints as the smooth routes
/// do (positions keeping the independent coordinates, the dependent velocities solved), and
/// the output grid ([`Runner::checked_grid`]).
fn start_of<M, const NQ: usize, const NC: usize, const DOF: usize>(
    run: Runner<'_, M::Params, NQ>,
) -> Result<Start<NQ>, SimError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let grid = run.checked_grid()?;
    let Runner { p, start, .. } = run;
    let (q, qd) = if NC == 0 {
        (start.q, start.qd)
    } else {
        let (a, _) =
            assemble_any::<M, NQ, NC, DOF>(&start.q, p, start.t, &AssemblyOptions::default())
                .map_err(|source| SimError::Assembly { t: start.t, source })?;
        let qd = project_velocity::<M, NQ, NC, DOF>(&a.q, &start.qd, p, start.t, 0.0)
            .map_err(SimError::Kinematics)?;
        (a.q, qd)
    };
    Ok((q, qd, grid))
}

/// The integrator's options at the simulation's tolerances.
fn dopri5(opts: &Options) -> Dopri5Options {
    Dopri5Options {
        rtol: opts.rtol,
        atol: opts.atol,
        ..Dopri5Options::default()
    }
}

/// The states of `(t, q, q̇)` at the grid's times (the event-located simulators also report
/// each event's state), as a [`Simulation`] of one stretch with `events`.
fn at_grid<const NQ: usize, const NC: usize>(
    grid: &[f64],
    t: &[f64],
    q: &[SVector<f64, NQ>],
    qd: &[SVector<f64, NQ>],
    steps: usize,
    events: Vec<Event>,
) -> Result<Simulation<NQ, NC>, SimError> {
    let mut traj = Trajectory::<NQ, NC> {
        t: Vec::with_capacity(grid.len()),
        q: Vec::with_capacity(grid.len()),
        qd: Vec::with_capacity(grid.len()),
        lambda: None,
        stats: SimStats::default(),
        switch_times: Vec::new(),
        rank_drop_times: Vec::new(),
    };
    let mut i = 0;
    for &tg in grid {
        // The first report at this time (an event at an output time is reported twice:
        // before and after its impact; the output keeps the state reached first).
        while i < t.len() && t[i] < tg {
            i += 1;
        }
        if i >= t.len() || t[i] != tg {
            return Err(SimError::InvalidInput(
                "the event-located route did not report an output time",
            ));
        }
        traj.t.push(tg);
        traj.q.push(q[i]);
        traj.qd.push(qd[i]);
    }
    traj.stats.ode.steps = steps;
    Ok(Simulation {
        stretches: vec![Stretch {
            t0: grid.first().copied().unwrap_or(0.0),
            t1: grid.last().copied().unwrap_or(0.0),
            route: Route::Auto,
            reason: None,
        }],
        trajectory: traj,
        global_error: None,
        events,
    })
}

/// A run of one `contact` simulator: its times, states and events.
type Run<const NQ: usize> = (
    Vec<f64>,
    Vec<SVector<f64, NQ>>,
    Vec<SVector<f64, NQ>>,
    Vec<Event>,
);

/// The start of `sim` assembled, `run` (given `q`, `q̇`, the output times inside the span and
/// the integrator's options at the simulation's tolerances), and its states at the output
/// times.
fn event_run<M, const NQ: usize, const NC: usize, const DOF: usize>(
    sim: Runner<'_, M::Params, NQ>,
    run: impl FnOnce(
        &SVector<f64, NQ>,
        &SVector<f64, NQ>,
        Vec<f64>,
        Dopri5Options,
    ) -> Result<Run<NQ>, SimError>,
) -> Result<Simulation<NQ, NC>, SimError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let (q, qd, grid) = start_of::<M, NQ, NC, DOF>(sim)?;
    let inside = grid[1..grid.len() - 1].to_vec();
    let (t, qs, qds, events) = run(&q, &qd, inside, dopri5(sim.opts))?;
    at_grid(&grid, &t, &qs, &qds, t.len(), events)
}

/// `simulate`'s arguments, for the event-located route the model picks.
pub(crate) struct Runner<'a, P, const NQ: usize> {
    pub(crate) p: &'a P,
    pub(crate) start: &'a State<NQ>,
    pub(crate) t_end: f64,
    pub(crate) opts: &'a Options,
}

impl<P, const NQ: usize> Clone for Runner<'_, P, NQ> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P, const NQ: usize> Copy for Runner<'_, P, NQ> {}

impl<P, const NQ: usize> Runner<'_, P, NQ> {
    /// The output grid from the start's time to the end, after the checks every route
    /// makes first: the grid's times, the tolerances (finite and positive) and the start
    /// state (finite).
    pub(crate) fn checked_grid(&self) -> Result<Vec<f64>, SimError> {
        let (start, opts) = (self.start, self.opts);
        let grid = output_grid(start.t, self.t_end, &opts.output_times)?;
        if !(opts.rtol.is_finite() && opts.rtol > 0.0 && opts.atol.is_finite() && opts.atol > 0.0) {
            return Err(SimError::InvalidInput(
                "rtol and atol must be finite and positive",
            ));
        }
        if !(start.q.iter().all(|x| x.is_finite()) && start.qd.iter().all(|x| x.is_finite())) {
            return Err(SimError::InvalidInput("the start state must be finite"));
        }
        Ok(grid)
    }
}

/// The event of `kind` at `t` at the inequality or joint `k` of `names`.
fn event(t: f64, names: &[&'static str], k: usize, kind: EventKind) -> Event {
    Event {
        t,
        name: names.get(k).copied().unwrap_or(""),
        kind,
    }
}

/// [`simulate`](crate::simulate()) of a model with frictionless contacts
/// ([`simulate_contact_adaptive`]), Coulomb friction at its contacts
/// ([`simulate_friction_adaptive`]) or dry friction in its joints
/// ([`simulate_joint_friction_adaptive`]), at the options' tolerances.
impl<M, const NQ: usize, const NC: usize, const DOF: usize> EventRoutes<M, NQ, NC, DOF>
    for Runner<'_, M::Params, NQ>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Output = Result<Simulation<NQ, NC>, SimError>;
    fn contact<const NI: usize>(self) -> Self::Output
    where
        M: Inequalities<NQ, NC, DOF, NI>,
    {
        let (p, t0, t1) = (self.p, self.start.t, self.t_end);
        event_run::<M, NQ, NC, DOF>(self, |q, qd, output_times, dopri5| {
            let o = AdaptiveContactOptions {
                dopri5,
                output_times,
                ..AdaptiveContactOptions::default()
            };
            let tr = simulate_contact_adaptive::<M, NQ, NC, DOF, NI>(q, qd, p, t0, t1, &o)
                .map_err(SimError::Contact)?;
            let events = tr
                .events
                .iter()
                .zip(&tr.event_contacts)
                .map(|(&t, &k)| event(t, &M::INEQUALITY_NAMES, k, EventKind::Touch))
                .collect();
            Ok((tr.t, tr.q, tr.qd, events))
        })
    }
    fn friction<const NI: usize, const NT: usize>(self) -> Self::Output
    where
        M: Friction<NQ, NC, DOF, NI, NT>,
    {
        let (p, t0, t1) = (self.p, self.start.t, self.t_end);
        event_run::<M, NQ, NC, DOF>(self, |q, qd, output_times, dopri5| {
            let o = AdaptiveFrictionOptions {
                dopri5,
                output_times,
                ..AdaptiveFrictionOptions::default()
            };
            let tr = simulate_friction_adaptive::<M, NQ, NC, DOF, NI, NT>(q, qd, p, t0, t1, &o)
                .map_err(SimError::Friction)?;
            let kind = |e| match e {
                FrictionEvent::Touch => EventKind::Touch,
                FrictionEvent::Release => EventKind::Release,
                FrictionEvent::Slip => EventKind::Slip,
                FrictionEvent::Stop => EventKind::Stop,
            };
            let events = tr
                .events
                .iter()
                .map(|&(t, k, e)| event(t, &M::INEQUALITY_NAMES, k, kind(e)))
                .collect();
            Ok((tr.t, tr.q, tr.qd, events))
        })
    }
    fn joint_friction<const NS: usize>(self) -> Self::Output
    where
        M: JointFriction<NQ, NC, DOF, NS>,
    {
        let (p, t0, t1) = (self.p, self.start.t, self.t_end);
        event_run::<M, NQ, NC, DOF>(self, |q, qd, output_times, dopri5| {
            let o = AdaptiveJointFrictionOptions {
                dopri5,
                output_times,
                ..AdaptiveJointFrictionOptions::default()
            };
            let tr = simulate_joint_friction_adaptive::<M, NQ, NC, DOF, NS>(q, qd, p, t0, t1, &o)
                .map_err(SimError::JointFriction)?;
            let kind = |e| match e {
                JointFrictionEvent::Slip => EventKind::Slip,
                JointFrictionEvent::Stop => EventKind::Stop,
                JointFrictionEvent::Reverse => EventKind::Reverse,
            };
            let events = tr
                .events
                .iter()
                .map(|&(t, k, e)| event(t, &M::JOINT_FRICTION_NAMES, k, kind(e)))
                .collect();
            Ok((tr.t, tr.q, tr.qd, events))
        })
    }
}
