//! The error-controlled simulation with dry friction in joints: smooth phases of fixed joint
//! modes on DOPRI5, their ends located as events on its dense output (slip, stop, reversal of
//! a one-row normal).

use crate::contact::phases::{impl_record, Cursor, PhaseError};
use crate::contact::{velocity_correction, Point};
use crate::ode::{Dopri5Options, OdeSystem, Pair};
use nalgebra::SVector;

use super::*;

/// Options of [`simulate_joint_friction_adaptive`].
#[derive(Clone, Debug)]
pub struct AdaptiveJointFrictionOptions {
    /// The solver's options.
    pub friction: JointFrictionOptions,
    /// The integrator's tolerances and step limits.
    pub dopri5: Dopri5Options,
    /// Times at which to report the state besides `t0`, `t1` and the events (ascending,
    /// inside `(t0, t1)`).
    pub output_times: Vec<f64>,
    /// Most events over the whole run before [`JointFrictionError::TooManyEvents`].
    pub max_events: usize,
}

impl Default for AdaptiveJointFrictionOptions {
    fn default() -> Self {
        Self {
            friction: JointFrictionOptions::default(),
            dopri5: Dopri5Options {
                rtol: 1e-10,
                atol: 1e-12,
                ..Dopri5Options::default()
            },
            output_times: Vec::new(),
            max_events: 10_000,
        }
    }
}

/// What ended a phase of [`simulate_joint_friction_adaptive`] at a joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointFrictionEvent {
    /// A sticking joint's friction force reached `μ r ‖N‖` (stick → slide).
    Slip,
    /// A sliding joint's slip velocity reached zero (slide → stick or reversal).
    Stop,
    /// A sliding one-row joint's normal force changed sign.
    Reverse,
}

/// A simulated motion with dry friction in joints.
#[derive(Clone, Debug, Default)]
pub struct JointFrictionTrajectory<const NQ: usize> {
    /// Times: `t0`, the output times, each event and `t1`.
    pub t: Vec<f64>,
    /// Coordinates.
    pub q: Vec<SVector<f64, NQ>>,
    /// Velocities.
    pub qd: Vec<SVector<f64, NQ>>,
    /// The events: time, joint and kind.
    pub events: Vec<(f64, usize, JointFrictionEvent)>,
    /// Each phase's start time and joint modes.
    pub phases: Vec<(f64, Vec<JointMode>)>,
}

impl_record!(JointFrictionTrajectory);

/// The joint-friction simulator reports an integrator failure where it happened.
impl PhaseError for JointFrictionError {
    fn non_finite(t: f64) -> Self {
        JointFrictionError::NonFinite { t }
    }
    fn singular(t: f64) -> Self {
        JointFrictionError::Singular { t }
    }
    fn integrator(at: f64, _start: f64) -> Self {
        JointFrictionError::Integrator { t: at }
    }
    fn too_many_events(t: f64) -> Self {
        JointFrictionError::TooManyEvents { t }
    }
}

/// One smooth phase: fixed modes and one-row normal signs.
struct Phase<'a, M, const NQ: usize, const NC: usize, const DOF: usize, const NS: usize>
where
    M: JointFriction<NQ, NC, DOF, NS>,
{
    p: &'a M::Params,
    opts: &'a AdaptiveJointFrictionOptions,
    modes: Vec<JointMode>,
    /// The normal directions: one-row signs fixed, vector ones the last fixed point.
    nhat: Vec<Vec<f64>>,
    armed: [bool; NS],
    /// Added to each joint's friction (`2k`) and normal (`2k + 1`) event functions: the
    /// consistency tolerance where the phase started with the condition met only within it
    /// (a sticking force at its cone, a one-row normal at zero), so that the event fires once
    /// the condition fails by more than the tolerance instead of never (the function would
    /// start at or below zero, where no crossing is seen); else 0.
    offset: Vec<[f64; 2]>,
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize, const NS: usize>
    Phase<'_, M, NQ, NC, DOF, NS>
where
    M: JointFriction<NQ, NC, DOF, NS>,
{
    fn solve(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<(Pb, Sol), JointFrictionError> {
        let here = Point {
            q: &y.a,
            qd: &y.b,
            p: self.p,
            t,
        };
        let pb = Pb::new::<M, NQ, NC, DOF, NS>(here, &self.opts.friction)?;
        match pb.solve(&self.modes, self.nhat.clone(), &self.opts.friction)? {
            Ok(sol) => {
                self.nhat.clone_from(&sol.nhat);
                Ok((pb, sol))
            }
            Err(joint) => Err(JointFrictionError::NoConvergence { t, joint }),
        }
    }
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize, const NS: usize> OdeSystem<Pair<NQ, NQ>>
    for Phase<'_, M, NQ, NC, DOF, NS>
where
    M: JointFriction<NQ, NC, DOF, NS>,
{
    type Error = JointFrictionError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, JointFrictionError> {
        let (_, sol) = self.solve(t, y)?;
        Ok(Pair::new(
            y.b,
            SVector::<f64, NQ>::from_iterator(sol.a.iter().copied()),
        ))
    }
    fn events(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Option<Vec<f64>>, JointFrictionError> {
        let (pb, sol) = self.solve(t, y)?;
        let slip_tol = self.opts.friction.slip_tol;
        let mut out = Vec::with_capacity(2 * NS);
        for k in 0..NS {
            let g = pb.group(&sol.lambda, k);
            let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
            match self.modes[k] {
                JointMode::Free => out.extend([1.0, 1.0]),
                JointMode::Stick => {
                    out.push(
                        pb.mu[k] * pb.radius[k] * norm - sol.stick[k].abs() + self.offset[k][0],
                    );
                    out.push(1.0);
                }
                JointMode::Slide(sigma) => {
                    let along = sigma * pb.vs[k];
                    if along > 2.0 * slip_tol {
                        self.armed[k] = true;
                    }
                    out.push(if self.armed[k] { along } else { 1.0 });
                    out.push(if pb.rows[k].1 == 1 {
                        g[0] * self.nhat[k][0] + self.offset[k][1]
                    } else {
                        1.0
                    });
                }
            }
        }
        Ok(Some(out))
    }
}

/// `q̇` with the constraints' velocity rows and the sticking joints' slips set to zero by
/// the smallest change in kinetic energy ([`velocity_correction`]).
fn hold_velocities<M, const NQ: usize, const NC: usize, const DOF: usize, const NS: usize>(
    here: Point<'_, M::Params, NQ>,
    modes: &[JointMode],
) -> Result<SVector<f64, NQ>, JointFrictionError>
where
    M: JointFriction<NQ, NC, DOF, NS>,
{
    let Point { q, p, t, .. } = here;
    let js = M::slip_jacobian(q, p, t);
    let st = M::slip_jacobian_t(q, p, t);
    let rows = (0..NS)
        .filter(|&k| modes[k] == JointMode::Stick)
        .map(|k| (js.row(k).iter().copied().collect(), st[k]))
        .collect();
    velocity_correction::<M, NQ, NC, DOF, _>(here, rows)
}

/// Simulates from `(q0, q̇0)` over `[t0, t1]` with dry friction in the joints, on DOPRI5:
/// each phase keeps its joint modes and one-row normal signs (a smooth right-hand side),
/// and the changes are events located on the dense output ([`JointFrictionEvent`]). At each
/// phase start the modes are chosen again by [`joint_friction_accelerations`]' enumeration
/// (a joint that just slipped may not stick at once), and a sticking joint's slip velocity
/// (at most `slip_tol`) is set to zero with the constraints' velocity rows.
///
/// Errors: as [`joint_friction_accelerations`], [`JointFrictionError::TooManyEvents`] past
/// `max_events`, [`JointFrictionError::Integrator`] when the integrator fails and
/// [`JointFrictionError::InvalidOptions`].
pub fn simulate_joint_friction_adaptive<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NS: usize,
>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &AdaptiveJointFrictionOptions,
) -> Result<JointFrictionTrajectory<NQ>, JointFrictionError>
where
    M: JointFriction<NQ, NC, DOF, NS>,
{
    check(&opts.friction)?;
    let (mut at, mut out): (_, JointFrictionTrajectory<NQ>) =
        Cursor::start((t0, q0, qd0), t1, (&opts.output_times, opts.dopri5.h0))
            .map_err(JointFrictionError::InvalidOptions)?;
    let mut no_stick = [false; NS];
    while let Some(rest) = at.rest() {
        let (q, mut qd, t) = (at.q, at.qd, at.t);
        let here = Point {
            q: &q,
            qd: &qd,
            p,
            t,
        };
        let pb = Pb::new::<M, NQ, NC, DOF, NS>(here, &opts.friction)?;
        let (modes, sol) = enumerate(&pb, &opts.friction, &no_stick)?;
        if modes.contains(&JointMode::Stick) {
            qd = hold_velocities::<M, NQ, NC, DOF, NS>(here, &modes)?;
        }
        out.phases.push((t, modes.clone()));
        let modes_armed = modes.clone();
        let vs0 = M::slip_jacobian(&q, p, t) * qd + M::slip_jacobian_t(&q, p, t);
        let tol = opts.friction.tendency_tol * pb.scale();
        let offset = (0..NS)
            .map(|k| {
                let g = pb.group(&sol.lambda, k);
                let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
                let cone = pb.mu[k] * pb.radius[k] * norm - sol.stick[k].abs();
                let along: f64 = g.iter().zip(&sol.nhat[k]).map(|(x, y)| x * y).sum();
                [
                    if modes[k] == JointMode::Stick && cone <= 0.0 {
                        tol
                    } else {
                        0.0
                    },
                    if along <= 0.0 { tol } else { 0.0 },
                ]
            })
            .collect();
        let mut sys = Phase::<M, NQ, NC, DOF, NS> {
            p,
            opts,
            modes,
            nhat: sol.nhat,
            // A joint sliding at the start (faster than `slip_tol`) watches its stop at once;
            // one leaving rest, once its slip exceeds twice that.
            armed: std::array::from_fn(|k| match modes_armed[k] {
                JointMode::Slide(sigma) => sigma * vs0[k] > opts.friction.slip_tol,
                _ => false,
            }),
            offset,
        };
        at.qd = qd;
        let limits = (&opts.dopri5, opts.max_events);
        let Some(e) = at.run(&mut sys, &rest, limits, &mut out, |_, _, _| Ok(()))? else {
            break;
        };
        let k = e / 2;
        let kind = if e % 2 == 1 {
            JointFrictionEvent::Reverse
        } else if sys.modes[k] == JointMode::Stick {
            JointFrictionEvent::Slip
        } else {
            JointFrictionEvent::Stop
        };
        no_stick = [false; NS];
        if kind == JointFrictionEvent::Slip {
            no_stick[k] = true;
        }
        out.events.push((at.t, k, kind));
    }
    Ok(out)
}
