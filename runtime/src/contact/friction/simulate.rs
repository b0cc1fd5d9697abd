//! The error-controlled simulation with frictional contacts: smooth phases of fixed contact
//! modes on DOPRI5, their ends located as events on its dense output (touch, release, slip,
//! stop), impacts with friction between them.

use crate::contact::adaptive::{check_rest_height, start_phase};
use crate::contact::phases::{impl_record, Cursor};
use crate::contact::{velocity_correction, Point};
use crate::error::ContactError;
use crate::mechanism::Friction;
use crate::ode::{Dopri5Options, OdeSystem, Pair};
use nalgebra::SVector;

use super::*;

/// Options of [`simulate_friction_adaptive`].
#[derive(Clone, Debug)]
pub struct AdaptiveFrictionOptions {
    /// The frictional solver's options.
    pub friction: FrictionOptions,
    /// The integrator's tolerances and step limits.
    pub dopri5: Dopri5Options,
    /// Times at which to report the state besides `t0`, `t1` and the events (ascending,
    /// inside `(t0, t1)`).
    pub output_times: Vec<f64>,
    /// An impact slower than `v² < 2 |a_n| rest_height` is plastic (as in
    /// [`AdaptiveContactOptions::rest_height`](crate::contact::AdaptiveContactOptions::rest_height)).
    pub rest_height: f64,
    /// Most events over the whole run before [`ContactError::TooManyEvents`].
    pub max_events: usize,
}

impl Default for AdaptiveFrictionOptions {
    fn default() -> Self {
        Self {
            friction: FrictionOptions::default(),
            dopri5: Dopri5Options {
                rtol: 1e-10,
                atol: 1e-12,
                ..Dopri5Options::default()
            },
            output_times: Vec::new(),
            rest_height: 1e-6,
            max_events: 10_000,
        }
    }
}

/// What ended a phase of [`simulate_friction_adaptive`] at a contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrictionEvent {
    /// An open contact reached its boundary (an impact with friction follows).
    Touch,
    /// A closed contact's normal force reached zero (lift-off).
    Release,
    /// A sticking contact's force reached its cone (stick → slide).
    Slip,
    /// A sliding contact's slip velocity reached zero (slide → stick or reversal).
    Stop,
}

/// A simulated motion with frictional contacts.
#[derive(Clone, Debug, Default)]
pub struct FrictionTrajectory<const NQ: usize> {
    /// Times: `t0`, the output times, each event and `t1`.
    pub t: Vec<f64>,
    /// Coordinates.
    pub q: Vec<SVector<f64, NQ>>,
    /// Velocities.
    pub qd: Vec<SVector<f64, NQ>>,
    /// The events: time, contact and kind.
    pub events: Vec<(f64, usize, FrictionEvent)>,
    /// Each phase's start time and contact modes.
    pub phases: Vec<(f64, Vec<ContactMode>)>,
    /// Impacts applied (with friction: [`friction_impact`]).
    pub impacts: usize,
}

impl_record!(FrictionTrajectory);

/// One smooth phase: fixed contact modes, one event function per contact.
struct Phase<
    'a,
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
> where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    p: &'a M::Params,
    opts: &'a AdaptiveFrictionOptions,
    modes: Vec<ContactMode>,
    /// Open contacts clear of their boundary, sliding contacts clear of rest.
    armed: [bool; NI],
    leaving: [bool; NI],
    /// Added to each contact's normal (`2k`) and friction (`2k + 1`) event functions: the
    /// consistency tolerance where the phase started with the condition met only within it
    /// (a normal force at zero, a sticking force at its cone), so that the event fires once
    /// the condition fails by more than the tolerance instead of never (the function would
    /// start at or below zero, where no crossing is seen); else 0.
    offset: Vec<[f64; 2]>,
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize, const NT: usize>
    Phase<'_, M, NQ, NC, DOF, NI, NT>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    /// The frictional solve of the phase's modes at `(t, y)`.
    fn solve(&self, t: f64, y: &Pair<NQ, NQ>) -> Result<FrictionSolve<NQ>, FrictionError> {
        friction_accelerations_with_modes::<M, NQ, NC, DOF, NI, NT>(
            &y.a,
            &y.b,
            self.p,
            t,
            &self.opts.friction,
            &self.modes,
        )
    }
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize, const NT: usize>
    OdeSystem<Pair<NQ, NQ>> for Phase<'_, M, NQ, NC, DOF, NI, NT>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    type Error = FrictionError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, FrictionError> {
        Ok(Pair::new(y.b, self.solve(t, y)?.qdd))
    }
    fn events(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Option<Vec<f64>>, FrictionError> {
        let s = self.solve(t, y)?;
        let g = M::inequality(&y.a, self.p, t);
        let vt =
            M::tangent_jacobian(&y.a, self.p, t) * y.b + M::tangent_jacobian_t(&y.a, self.p, t);
        let tol = self.opts.friction.contact.active_tol;
        let slip_tol = self.opts.friction.slip_tol;
        let rows = |k: usize| (0..NT).filter(move |&r| M::TANGENT_CONTACT[r] == k);
        // Two event functions per contact: `2k` its normal condition (an open contact's gap:
        // `Touch`; a closed one's force: `Release`), `2k + 1` its friction condition (a
        // sticking force reaching the cone: `Slip`; a sliding contact's slip reaching zero:
        // `Stop`), so that each event is named by the condition that caused it.
        let mut out = Vec::with_capacity(2 * NI);
        for k in 0..NI {
            let (normal, friction) = match &self.modes[k] {
                ContactMode::Open => {
                    if g[k] > 2.0 * tol {
                        self.armed[k] = true;
                    }
                    let gap = if self.leaving[k] {
                        g[k] + 0.5 * tol
                    } else if self.armed[k] {
                        g[k]
                    } else {
                        1.0
                    };
                    (gap, 1.0)
                }
                ContactMode::Closed => (s.normal[k], 1.0),
                ContactMode::Stick => {
                    let ft = rows(k).map(|r| s.tangential[r].powi(2)).sum::<f64>().sqrt();
                    (s.normal[k], M::FRICTION[k] * s.normal[k] - ft)
                }
                ContactMode::Slide(u) => {
                    let along: f64 = rows(k).zip(u).map(|(r, &ur)| ur * vt[r]).sum();
                    if along > 2.0 * slip_tol {
                        self.armed[k] = true;
                    }
                    (s.normal[k], if self.armed[k] { along } else { 1.0 })
                }
            };
            out.push(normal + self.offset[k][0]);
            out.push(friction + self.offset[k][1]);
        }
        Ok(Some(out))
    }
}

/// `q̇` with the velocity rows of the equality constraints, the closed contacts' normal
/// velocities and the sticking contacts' slip velocities set to zero by the smallest change
/// in kinetic energy ([`velocity_correction`]).
fn hold_velocities<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    here: Point<'_, M::Params, NQ>,
    modes: &[ContactMode],
) -> Result<SVector<f64, NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    let Point { q, p, t, .. } = here;
    let jg = M::inequality_jacobian(q, p, t);
    let gt = M::inequality_jacobian_t(q, p, t);
    let jt = M::tangent_jacobian(q, p, t);
    let tt = M::tangent_jacobian_t(q, p, t);
    let mut rows: Vec<(Vec<f64>, f64)> = Vec::new();
    for k in 0..NI {
        if modes[k] != ContactMode::Open {
            rows.push((jg.row(k).iter().copied().collect(), gt[k]));
        }
        if modes[k] == ContactMode::Stick {
            for r in (0..NT).filter(|&r| M::TANGENT_CONTACT[r] == k) {
                rows.push((jt.row(r).iter().copied().collect(), tt[r]));
            }
        }
    }
    velocity_correction::<M, NQ, NC, DOF, _>(here, rows)
}

/// Simulates from `(q0, q̇0)` over `[t0, t1]` with Coulomb friction at the contacts, on
/// DOPRI5: each phase keeps its contact modes (an exact, smooth right-hand side), and the
/// mode changes are events located on the dense output — a contact touching
/// ([`FrictionEvent::Touch`], an impact with friction follows, [`friction_impact`]), releasing
/// ([`FrictionEvent::Release`]), a sticking contact's force reaching `μ λ_n`
/// ([`FrictionEvent::Slip`]) and a sliding contact's slip velocity reaching zero
/// ([`FrictionEvent::Stop`]). At each phase start the modes are chosen again by
/// [`friction_accelerations`]' enumeration (a contact that just slipped may not stick at
/// once), and a sticking contact's slip velocity (at most `slip_tol`) is set to zero.
///
/// Errors: as [`friction_accelerations`], [`ContactError::TooManyEvents`] past
/// `max_events`, [`ContactError::InvalidOptions`], and [`ContactError::Singular`] when the
/// integrator fails.
pub fn simulate_friction_adaptive<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &AdaptiveFrictionOptions,
) -> Result<FrictionTrajectory<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    check(&opts.friction)?;
    let (mut at, mut out): (_, FrictionTrajectory<NQ>) =
        Cursor::start((t0, q0, qd0), t1, (&opts.output_times, opts.dopri5.h0))
            .map_err(ContactError::InvalidOptions)?;
    check_rest_height(opts.rest_height)?;
    let tol = opts.friction.contact.active_tol;
    let mut no_stick = [false; NI];
    // A contact whose normal force just reached zero (`Release`) starts the next phase open:
    // at the event its force is zero to rounding, and re-enumerating would let it close again
    // with a force of −0 (tolerated) that then grows negative unseen (a floor that holds on).
    let mut released = [false; NI];
    loop {
        // An active contact approaching: the (frictionless) impact first.
        let limits = (&opts.friction.contact, opts.rest_height);
        let start = start_phase::<M, NQ, NC, DOF, NI, _>(&mut at, p, limits, |here, plastic| {
            let imp = impact_modes::<M, NQ, NC, DOF, NI, NT>(here, &opts.friction, plastic)?;
            if imp.normal.iter().any(|&l| l != 0.0) {
                out.impacts += 1;
            }
            Ok::<_, FrictionError>(imp.qdd)
        })?;
        let Some(rest) = at.rest() else {
            break;
        };
        let (q, mut qd, t) = (at.q, at.qd, at.t);
        let g = start.g;
        let leaving: [bool; NI] =
            std::array::from_fn(|k| g[k].abs() <= tol && (start.away[k] || released[k]));
        let here = Point {
            q: &q,
            qd: &qd,
            p,
            t,
        };
        let pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(here, &opts.friction)?;
        let (modes, sol, _) = enumerate(&pb, &opts.friction, &no_stick, &leaving)?;
        let ttol = opts.friction.contact.tendency_tol * pb.scale();
        let vt0 = M::tangent_jacobian(&q, p, t) * qd + M::tangent_jacobian_t(&q, p, t);
        let offset = (0..NI)
            .map(|k| {
                let ft = pb.rows[k]
                    .iter()
                    .map(|&r| sol.tangential[r] * sol.tangential[r])
                    .sum::<f64>()
                    .sqrt();
                let closed = modes[k] != ContactMode::Open;
                let cone = pb.mu[k] * sol.normal[k] - ft;
                [
                    if closed && sol.normal[k] <= 0.0 {
                        ttol
                    } else {
                        0.0
                    },
                    if modes[k] == ContactMode::Stick && cone <= 0.0 {
                        ttol
                    } else {
                        0.0
                    },
                ]
            })
            .collect();
        if modes.contains(&ContactMode::Stick) {
            qd = hold_velocities::<M, NQ, NC, DOF, NI, NT>(here, &modes)?;
        }
        out.phases.push((t, modes.clone()));
        let mut sys = Phase::<M, NQ, NC, DOF, NI, NT> {
            p,
            opts,
            // Open contacts clear of their boundary watch it at once; a contact sliding at the
            // start (faster than `slip_tol`) watches its stop at once, one leaving rest once
            // its slip exceeds twice that.
            armed: std::array::from_fn(|k| {
                g[k] > tol
                    || leaving[k]
                    || match &modes[k] {
                        ContactMode::Slide(u) => {
                            let along: f64 =
                                pb.rows[k].iter().zip(u).map(|(&r, &ur)| ur * vt0[r]).sum();
                            along > opts.friction.slip_tol
                        }
                        _ => false,
                    }
            }),
            leaving,
            modes,
            offset,
        };
        at.qd = qd;
        let limits = (&opts.dopri5, opts.max_events);
        let Some(e) = at.run(&mut sys, &rest, limits, &mut out, |_, _, _| Ok(()))? else {
            break;
        };
        // By the condition that crossed (see `Phase::events`).
        let k = e / 2;
        let kind = match (&sys.modes[k], e % 2) {
            (ContactMode::Open, _) => FrictionEvent::Touch,
            (_, 0) => FrictionEvent::Release,
            (ContactMode::Stick, _) => FrictionEvent::Slip,
            _ => FrictionEvent::Stop,
        };
        no_stick = [false; NI];
        released = [false; NI];
        match kind {
            FrictionEvent::Slip => no_stick[k] = true,
            FrictionEvent::Release => released[k] = true,
            _ => {}
        }
        out.events.push((at.t, k, kind));
    }
    Ok(out)
}
