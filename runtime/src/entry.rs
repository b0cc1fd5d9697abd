//! The one simulation entry point: [`simulate`].
//!
//! ```ignore
//! use mechgen::runtime::{simulate, Options, State};
//! let start = State::from_independent(m::Model, 0.0, q0, u0);
//! let run = simulate(m::Model, &m::Params::default(), &start, 10.0, &Options::default())?;
//! println!("{} outputs, routes {:?}", run.t.len(), run.stretches);
//! ```
//!
//! No sizes are written: they follow from the model type. Every route takes the same
//! initial [`State`] (positions and full velocities; the dependent parts are completed by
//! assembly and velocity projection, the independent ones kept). The default route
//! ([`Route::Auto`]) runs the projection method (partition switching, stepping over rank
//! drops) and hands any stretch it cannot pass — a step-size underflow, a pivot that fails,
//! a Newton projection that does not converge — to the index-1 Lagrange route and, where
//! that fails too, to ALI3-P with step-size control, then returns to the projection method.
//! What it did is in [`Simulation::stretches`] (the route of each stretch and why it was
//! taken), beside the switch and rank-drop times of the [`Trajectory`].

use nalgebra::SVector;

use crate::ali3p::{simulate_ali3p, Adaptive, Ali3pOptions};
use crate::error::{OdeError, SimError};

mod accuracy;
mod events;
use crate::mechanism::{Dynamics, Mechanism};
use crate::ode::Dopri5Options;
use crate::simulate::{
    add_sim_stats, max_nan, simulate_lagrange, simulate_projection, Integrator, RankDrop,
    SimOptions, SimStats, Trajectory,
};
use accuracy::control;
pub use accuracy::{Accuracy, GlobalError};
use events::Runner;
pub use events::{Event, EventKind};

/// The state a simulation starts from: time, coordinates and their velocities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct State<const NQ: usize> {
    /// Time.
    pub t: f64,
    /// Coordinates (need not satisfy the constraints exactly: the simulation assembles them,
    /// keeping the independent coordinates).
    pub q: SVector<f64, NQ>,
    /// Velocities of all coordinates (the independent ones are kept, the dependent ones
    /// solved from `C_J q̇ + C_t = 0`).
    pub qd: SVector<f64, NQ>,
}

impl<const NQ: usize> State<NQ> {
    /// The state `(q, q̇)` at time `t`.
    pub fn new(t: f64, q: SVector<f64, NQ>, qd: SVector<f64, NQ>) -> Self {
        State { t, q, qd }
    }

    /// The configuration `q` at rest at time `t`.
    pub fn at_rest(t: f64, q: SVector<f64, NQ>) -> Self {
        State {
            t,
            q,
            qd: SVector::zeros(),
        }
    }

    /// The state whose independent velocities ([`Mechanism::INDEPENDENT`], in that order)
    /// are `u`; the dependent velocities are solved by the simulation.
    ///
    /// ```ignore
    /// // A1 of a four-bar: the crank turning at 1 rad/s.
    /// let start = State::from_independent(m::Model, 0.0, q0, [1.0].into());
    /// ```
    pub fn from_independent<M, const NC: usize, const DOF: usize>(
        _model: M,
        t: f64,
        q: SVector<f64, NQ>,
        u: SVector<f64, DOF>,
    ) -> Self
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        let mut qd = SVector::zeros();
        for (k, &i) in M::INDEPENDENT.iter().enumerate() {
            qd[i] = u[k];
        }
        State { t, q, qd }
    }
}

/// Which simulation route [`simulate`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Route {
    /// The projection method, handing stretches it cannot pass to the Lagrange route and
    /// then to ALI3-P (the default; see the module documentation).
    #[default]
    Auto,
    /// The projection method only ([`crate::simulate::simulate_projection`]).
    Projection,
    /// The index-1 Lagrange route only ([`crate::simulate::simulate_lagrange`]).
    Lagrange,
    /// ALI3-P only ([`crate::ali3p::simulate_ali3p`]), with step-size control at the
    /// options' tolerances unless [`Options::ali3p`] sets a fixed step (`adaptive: None`
    /// there and [`Options::ali3p_fixed_step`] on).
    Ali3p,
}

/// Options of [`simulate`]. `Options::default()` passes what a mechanism does: turning
/// points, flat positions and rank drops, stiff stretches, redundant constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The route ([`Route::Auto`] by default).
    pub route: Route,
    /// Relative tolerance of the error-controlled integrators (default 1e-8).
    pub rtol: f64,
    /// Absolute tolerance (default 1e-10).
    pub atol: f64,
    /// Output times strictly between the start and the end time, ascending (the start and
    /// the end are always reported).
    pub output_times: Vec<f64>,
    /// Compute the multipliers `λ` (`M q̈ = f + C_Jᵀ λ`) at the outputs.
    pub multipliers: bool,
    /// What the projection and Lagrange routes do where `C_J` loses rank:
    /// [`RankDrop::Continue`] by default (step over it on the branch the velocity continues).
    pub rank_drop: RankDrop,
    /// [`Route::Auto`]: the most stretches handed to another route before giving up.
    pub max_handovers: usize,
    /// Options of the projection and Lagrange routes for what the fields above do not set
    /// (the integrator's tolerances, output times, multipliers and rank-drop policy are
    /// taken from above).
    pub sim: SimOptions,
    /// Options of ALI3-P for what the fields above do not set (output times and
    /// multipliers from above; its step-size control from `rtol`, `atol` unless
    /// `ali3p_fixed_step`).
    pub ali3p: Ali3pOptions,
    /// [`Route::Ali3p`]: take `ali3p.h` as a fixed step instead of step-size control.
    pub ali3p_fixed_step: bool,
    /// What the tolerances bound: the global error at the outputs by default
    /// ([`Accuracy::Control`]), or only the error of each step ([`Accuracy::Local`]).
    pub accuracy: Accuracy,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            route: Route::Auto,
            rtol: 1e-8,
            atol: 1e-10,
            output_times: Vec::new(),
            multipliers: false,
            rank_drop: RankDrop::Continue,
            max_handovers: 64,
            sim: SimOptions {
                // Ten million steps: a stiff model at rtol 1e-12 (IFToMM A05) takes more
                // than the integrator's own default of 1e5 over 10 s.
                integrator: Integrator::Dop853(Dopri5Options {
                    max_steps: 10_000_000,
                    ..Dopri5Options::default()
                }),
                ..SimOptions::default()
            },
            ali3p: Ali3pOptions::default(),
            ali3p_fixed_step: false,
            accuracy: Accuracy::default(),
        }
    }
}

impl Options {
    /// `n` output steps evenly spaced over `[t0, t1]` (the `n − 1` interior times).
    pub fn with_output_steps(mut self, t0: f64, t1: f64, n: usize) -> Self {
        self.output_times = (1..n)
            .map(|k| t0 + (t1 - t0) * k as f64 / n as f64)
            .collect();
        self
    }
}

/// One stretch of a [`Simulation`] and the route that carried it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    /// Start time.
    pub t0: f64,
    /// End time.
    pub t1: f64,
    /// The route.
    pub route: Route,
    /// Why the route was taken here: `None` for the requested (or primary) route, else the
    /// error of the route before it.
    pub reason: Option<String>,
}

/// The result of [`simulate`]: the trajectory at the output times and what the simulation
/// did. Dereferences to the [`Trajectory`] (`run.t`, `run.q`, `run.qd`, `run.stats`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation<const NQ: usize, const NC: usize> {
    /// The states at the start, the output times and the end.
    pub trajectory: Trajectory<NQ, NC>,
    /// The stretches in time order and the route of each (one for a run without
    /// hand-overs).
    pub stretches: Vec<Stretch>,
    /// The estimated global error at the outputs and whether it meets the tolerances
    /// (`None` with [`Accuracy::Local`], a fixed-step integrator, or the event-located route
    /// of a model with contacts or friction, whose tolerances are local).
    pub global_error: Option<GlobalError>,
    /// The located events of a model with contacts or friction (impacts, lift-offs,
    /// stick–slip transitions) in time order; empty for other models.
    pub events: Vec<Event>,
}

impl<const NQ: usize, const NC: usize> std::ops::Deref for Simulation<NQ, NC> {
    type Target = Trajectory<NQ, NC>;
    fn deref(&self) -> &Trajectory<NQ, NC> {
        &self.trajectory
    }
}

impl<const NQ: usize, const NC: usize> Simulation<NQ, NC> {
    /// Stretches carried by another route than the primary one.
    pub fn handovers(&self) -> usize {
        self.stretches.iter().filter(|s| s.reason.is_some()).count()
    }
}

/// Simulates `model` from `start` to `t_end`: the one entry point of the runtime.
///
/// The sizes follow from the model type (`simulate(m::Model, &p, &start, 10.0, &opts)`).
/// With the default options the projection method carries the motion, switching
/// independent coordinates where they degrade and stepping over rank drops, and any stretch
/// it cannot pass goes to the Lagrange route, then to ALI3-P; [`Simulation::stretches`]
/// says which route carried what.
///
/// A hand-over: where the projection method stops at `t_f` (a step-size underflow, a
/// failed pivot or Newton projection, a switching loop), it is run again from the start of
/// its stretch to `t_s + 0.98 (t_f − t_s)` for the state there; the Lagrange route (with
/// [`RankDrop::Continue`]), or where that fails ALI3-P with step-size control at the same
/// tolerances, carries the motion past `t_f` by a window (a hundredth of the span, doubled
/// at each hand-over), and the projection method takes over again. Every route takes the
/// same [`State`]: positions and full velocities, the independent velocities kept and the
/// others solved. Errors of the input (times, options, a start off the manifold with
/// projection off) are returned at once.
///
/// ```ignore
/// use mechgen::runtime::{simulate, Options, State};
/// let start = State::from_independent(m::Model, 0.0, q0, u0);
/// let run = simulate(m::Model, &m::Params::default(), &start, 10.0, &Options::default())?;
/// println!("{} outputs, {} hand-overs", run.t.len(), run.handovers());
/// ```
/// (`src/guide.rs` of the `mechgen` crate has this as a running example.)
///
/// Errors: [`SimError::InvalidInput`] for unusable input (times, options, a non-finite
/// start); for a model with inequality constraints or joint friction, which `Route::Auto`
/// carries by its event-located route ([`Simulation::events`]), the `contact` simulator's
/// error ([`SimError::Contact`], [`SimError::Friction`], [`SimError::JointFriction`]) or
/// [`SimError::NotSmooth`] when a smooth route is asked for by name; otherwise the last
/// route's error where no route passes a stretch, or after [`Options::max_handovers`]
/// hand-overs.
pub fn simulate<M, const NQ: usize, const NC: usize, const DOF: usize>(
    _model: M,
    p: &M::Params,
    start: &State<NQ>,
    t_end: f64,
    opts: &Options,
) -> Result<Simulation<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let runner = Runner {
        p,
        start,
        t_end,
        opts,
    };
    if opts.route == Route::Auto {
        if let Some(run) = M::event_route(runner) {
            return run;
        }
    }
    if let Some((route, names)) = M::NOT_SMOOTH {
        return Err(SimError::NotSmooth { route, names });
    }
    let grid = runner.checked_grid()?;
    let fixed_step = matches!(opts.sim.integrator, Integrator::Rk4(_))
        || (opts.route == Route::Ali3p && opts.ali3p_fixed_step);
    let first = one_run::<M, NQ, NC, DOF>(runner, &grid)?;
    let max_runs = match opts.accuracy {
        _ if fixed_step => return Ok(first),
        Accuracy::Local => return Ok(first),
        Accuracy::Estimate => 2,
        Accuracy::Control { max_runs } => max_runs.max(2),
    };
    Ok(control::<M, NQ, NC, DOF>(runner, &grid, first, max_runs))
}

/// One simulation of `run` at its options' tolerances: by the route it names, or for
/// [`Route::Auto`] by the projection method with hand-overs of the stretches it cannot pass.
fn one_run<M, const NQ: usize, const NC: usize, const DOF: usize>(
    run: Runner<'_, M::Params, NQ>,
    grid: &[f64],
) -> Result<Simulation<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let (p, start, t_end, opts) = (run.p, run.start, run.t_end, run.opts);
    if opts.route != Route::Auto {
        let trajectory = run_route::<M, NQ, NC, DOF>(opts.route, p, start, t_end, grid, opts)?;
        return Ok(Simulation {
            trajectory,
            stretches: vec![Stretch {
                t0: start.t,
                t1: t_end,
                route: opts.route,
                reason: None,
            }],
            global_error: None,
            events: Vec::new(),
        });
    }
    // `Route::Auto`: the projection method, with hand-overs of the stretches it cannot
    // pass.
    let mut joined = Joined {
        traj: Trajectory {
            t: Vec::new(),
            q: Vec::new(),
            qd: Vec::new(),
            lambda: opts.multipliers.then(Vec::new),
            stats: SimStats::default(),
            switch_times: Vec::new(),
            rank_drop_times: Vec::new(),
        },
        energy0: None,
    };
    let mut stretches = Vec::new();
    let mut state = *start;
    let mut handovers = 0;
    // The hand-over window grows while the projection method keeps failing soon after.
    let span = t_end - start.t;
    let mut window = span / 100.0;
    while state.t < t_end {
        let err = match run_route::<M, NQ, NC, DOF>(Route::Projection, p, &state, t_end, grid, opts)
        {
            Ok(part) => {
                stretches.push(Stretch {
                    t0: state.t,
                    t1: t_end,
                    route: Route::Projection,
                    reason: None,
                });
                joined.push::<M, DOF>(part, grid, p);
                break;
            }
            Err(e) => e,
        };
        let Some(tf) = failure_time(&err) else {
            return Err(err);
        };
        if handovers >= opts.max_handovers {
            return Err(err);
        }
        handovers += 1;
        // The projection method again up to just before the failure, for the state there.
        let tc = if tf.is_finite() && tf > state.t {
            state.t + 0.98 * (tf - state.t)
        } else {
            state.t
        };
        if tc > state.t && (tc - state.t) > 1e-12 * span.max(1.0) {
            if let Ok(part) =
                run_route::<M, NQ, NC, DOF>(Route::Projection, p, &state, tc, grid, opts)
            {
                if let Some(s) = last_state(&part) {
                    stretches.push(Stretch {
                        t0: state.t,
                        t1: s.t,
                        route: Route::Projection,
                        reason: None,
                    });
                    joined.push::<M, DOF>(part, grid, p);
                    state = s;
                }
            }
        }
        // The stretch past the failure by the Lagrange route, else by ALI3-P.
        let past = if tf.is_finite() {
            tf.max(state.t)
        } else {
            state.t
        };
        let t_next = (past + window).min(t_end);
        window *= 2.0;
        let reason = err.to_string();
        let mut last_err = err;
        let mut passed = false;
        for route in [Route::Lagrange, Route::Ali3p] {
            match run_route::<M, NQ, NC, DOF>(route, p, &state, t_next, grid, opts) {
                Ok(part) => {
                    let Some(s) = last_state(&part) else { break };
                    stretches.push(Stretch {
                        t0: state.t,
                        t1: s.t,
                        route,
                        reason: Some(reason.clone()),
                    });
                    joined.push::<M, DOF>(part, grid, p);
                    state = s;
                    passed = true;
                    break;
                }
                Err(e) => last_err = e,
            }
        }
        if !passed {
            return Err(last_err);
        }
    }
    Ok(Simulation {
        trajectory: joined.traj,
        stretches,
        global_error: None,
        events: Vec::new(),
    })
}

/// The output times strictly inside `(a, b)` of the full grid.
fn inside(grid: &[f64], a: f64, b: f64) -> Vec<f64> {
    grid.iter().copied().filter(|&t| t > a && t < b).collect()
}

/// Runs one route over `[start.t, t1]` with the grid's outputs inside.
fn run_route<M, const NQ: usize, const NC: usize, const DOF: usize>(
    route: Route,
    p: &M::Params,
    start: &State<NQ>,
    t1: f64,
    grid: &[f64],
    opts: &Options,
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let outs = inside(grid, start.t, t1);
    match route {
        Route::Auto | Route::Projection | Route::Lagrange => {
            let mut sim = opts.sim.clone();
            sim.integrator = match sim.integrator {
                Integrator::Dopri5(d) => Integrator::Dopri5(Dopri5Options {
                    rtol: opts.rtol,
                    atol: opts.atol,
                    ..d
                }),
                Integrator::Dop853(d) => Integrator::Dop853(Dopri5Options {
                    rtol: opts.rtol,
                    atol: opts.atol,
                    ..d
                }),
                rk4 => rk4,
            };
            sim.output_times = outs;
            sim.multipliers = opts.multipliers;
            sim.rank_drop = opts.rank_drop;
            if route == Route::Lagrange {
                simulate_lagrange::<M, NQ, NC, DOF>(&start.q, &start.qd, p, start.t, t1, &sim)
            } else {
                let mut u = SVector::<f64, DOF>::zeros();
                for (k, &i) in M::INDEPENDENT.iter().enumerate() {
                    u[k] = start.qd[i];
                }
                simulate_projection::<M, NQ, NC, DOF>(&start.q, &u, p, start.t, t1, &sim)
            }
        }
        Route::Ali3p => {
            let mut o = opts.ali3p.clone();
            o.output_times = outs;
            o.multipliers = opts.multipliers;
            if !opts.ali3p_fixed_step || opts.route == Route::Auto {
                let span = t1 - start.t;
                o.h = o.h.min(span / 100.0);
                o.adaptive = Some(Adaptive {
                    rtol: opts.rtol,
                    atol: opts.atol,
                    ..o.adaptive.unwrap_or_default()
                });
            }
            simulate_ali3p::<M, NQ, NC, DOF>(&start.q, &start.qd, p, start.t, t1, &o)
        }
    }
}

/// The time at which a route stopped, for errors a hand-over may pass; `None` for errors of
/// the input, which no other route passes.
fn failure_time(e: &SimError) -> Option<f64> {
    match e {
        SimError::InvalidInput(_)
        | SimError::NotSmooth { .. }
        | SimError::OffManifold { .. }
        | SimError::Contact(_)
        | SimError::Friction(_)
        | SimError::JointFriction(_) => None,
        SimError::Assembly { t, .. }
        | SimError::PartitionCrossed { t_prev: t, .. }
        | SimError::NoHealthyPartition { t, .. }
        | SimError::TooManySwitches { t, .. }
        | SimError::NoConvergence { t, .. }
        | SimError::SingularLeadingMatrix { t }
        | SimError::RankDrop { t, .. } => Some(*t),
        SimError::Integration(o) => match o {
            OdeError::StepSizeUnderflow { t, .. }
            | OdeError::NonFinite { t }
            | OdeError::System { t, .. } => Some(*t),
            // Out of steps or unusable options: another route would not do better.
            OdeError::MaxSteps { .. } | OdeError::InvalidOptions(_) => None,
        },
        // Kinematic and dynamic failures carry no time: the hand-over starts where the
        // failing stretch started.
        SimError::Kinematics(_) | SimError::Dynamics(_) => Some(f64::NAN),
    }
}

/// The trajectory being built from stretches.
struct Joined<const NQ: usize, const NC: usize> {
    traj: Trajectory<NQ, NC>,
    /// `|E(start of stretch) − E(t0)|` is added to each stretch's energy change.
    energy0: Option<f64>,
}

impl<const NQ: usize, const NC: usize> Joined<NQ, NC> {
    /// Appends a stretch's outputs: its first state only for the first stretch, its last
    /// only where that is an output time of the grid.
    fn push<M, const DOF: usize>(&mut self, part: Trajectory<NQ, NC>, grid: &[f64], p: &M::Params)
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        let first = self.traj.t.is_empty();
        let n = part.t.len();
        for k in 0..n {
            let t = part.t[k];
            let keep = if k == 0 {
                first
            } else if k + 1 == n {
                grid.contains(&t)
            } else {
                true
            };
            if !keep {
                continue;
            }
            self.traj.t.push(t);
            self.traj.q.push(part.q[k]);
            self.traj.qd.push(part.qd[k]);
            if let (Some(all), Some(l)) = (self.traj.lambda.as_mut(), part.lambda.as_ref()) {
                if let Some(lk) = l.get(k) {
                    all.push(*lk);
                }
            }
        }
        // Energy change relative to the run's start: the stretch's own change plus the
        // offset of its start (a bound by the triangle inequality).
        let e_start = match (part.q.first(), part.qd.first(), part.t.first()) {
            (Some(q), Some(qd), Some(&t)) => M::energy(q, qd, p, t),
            _ => None,
        };
        if self.energy0.is_none() {
            self.energy0 = e_start;
        }
        let s = part.stats;
        let a = &mut self.traj.stats;
        add_sim_stats(a, &s);
        if let (Some(de), Some(e0), Some(es)) = (s.energy_change, self.energy0, e_start) {
            let d = de + (es - e0).abs();
            a.energy_change = Some(max_nan(a.energy_change.unwrap_or(0.0), d));
        }
        self.traj.switch_times.extend(part.switch_times);
        self.traj.rank_drop_times.extend(part.rank_drop_times);
    }
}

/// The last state of a stretch.
fn last_state<const NQ: usize, const NC: usize>(t: &Trajectory<NQ, NC>) -> Option<State<NQ>> {
    Some(State {
        t: *t.t.last()?,
        q: *t.q.last()?,
        qd: *t.qd.last()?,
    })
}
