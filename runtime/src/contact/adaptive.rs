//! Contacts on the adaptive integrator: [`simulate_contact_adaptive`] integrates the
//! smooth phases with DOPRI5 (accelerations by the active-set solve at every evaluation),
//! locates each crossing of an inequality on the dense output (an event), applies the
//! impact there and restarts.

use nalgebra::SVector;

use super::phases::{impact_due, Cursor};
use super::Point;
use super::{
    accelerations_excluding, contact_accelerations, impact_with, ContactError, ContactOptions,
    ContactPath, ContactTrajectory, Inequalities,
};
use crate::assemble::{assemble_min_norm, AssemblyOptions};
use crate::ode::{Dopri5Options, OdeSystem, Pair};
use crate::velocity::project_velocity_min_norm;

/// Options of [`simulate_contact_adaptive`].
#[derive(Clone, Debug)]
pub struct AdaptiveContactOptions {
    /// The contact solver's options (the active-set method, `active_tol`, Baumgarte's
    /// terms, the LCP fallback). `locate_events` is ignored: events are always located.
    pub contact: ContactOptions,
    /// The integrator's tolerances and step limits.
    pub dopri5: Dopri5Options,
    /// Times at which to report the state besides `t0`, `t1` and the events (ascending,
    /// inside `(t0, t1)`).
    pub output_times: Vec<f64>,
    /// An impact whose bounce would rise less than this (`v² < 2 |a_n| rest_height`, `v`
    /// the approach speed and `a_n` the contact's normal acceleration without it) is taken
    /// as plastic: this ends Zeno sequences of ever smaller bounces (a ball with
    /// restitution 0.8 would bounce infinitely often before a finite time). In the
    /// coordinates' length unit; 0 keeps every restitution (and such a run ends in
    /// [`ContactError::TooManyEvents`]).
    pub rest_height: f64,
    /// Most events over the whole run before [`ContactError::TooManyEvents`].
    pub max_events: usize,
    /// Project the state onto the equality constraints (`C = 0`, `C_J q̇ + C_t = 0`, minimum
    /// norm) after every step, as `simulate_lagrange` does.
    pub project: bool,
}

impl Default for AdaptiveContactOptions {
    fn default() -> Self {
        Self {
            contact: ContactOptions::default(),
            dopri5: Dopri5Options {
                rtol: 1e-9,
                atol: 1e-11,
                ..Dopri5Options::default()
            },
            output_times: Vec::new(),
            rest_height: 1e-6,
            max_events: 10_000,
            project: true,
        }
    }
}

/// The smooth phase: `(q, q̇)' = (q̇, q̈)` with `q̈` from the active-set solve, and one event
/// function per inequality, `g_k` (a contact reaching its boundary from above; `g_k +
/// active_tol / 2` while it is leaving the boundary it started on)
/// for the *armed* contacts, a positive constant for the others. A contact is armed when it
/// is clear of its boundary (`g_k > active_tol` at the phase's start, or `g_k > 2 active_tol`
/// at any evaluation since): a resting contact, held at `g ≈ 0` by the acceleration-level
/// solve, raises no events from the integration's drift, and one that lifts off and comes
/// back does.
struct Phase<'a, M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    p: &'a M::Params,
    opts: &'a AdaptiveContactOptions,
    assembly: AssemblyOptions,
    armed: [bool; NI],
    /// Contacts leaving their boundary after an impact (`ġ_k > 0` at the phase's start):
    /// not active until they are clear of it, so the right-hand side is smooth from the
    /// start of the phase (holding them for the first instants would cost the step-size
    /// control an O(tol) error in their velocity).
    leaving: [bool; NI],
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize> OdeSystem<Pair<NQ, NQ>>
    for Phase<'_, M, NQ, NC, DOF, NI>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    type Error = ContactError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, ContactError> {
        // A leaving contact stays out of the active set while it moves away near the
        // boundary; once clear of it (or turning back) it is an ordinary contact again.
        let mut excluded = [false; NI];
        if self.leaving.iter().any(|&l| l) {
            let g = M::inequality(&y.a, self.p, t);
            let vn = M::inequality_jacobian(&y.a, self.p, t) * y.b
                + M::inequality_jacobian_t(&y.a, self.p, t);
            for k in 0..NI {
                if self.leaving[k] && g[k] > self.opts.contact.active_tol {
                    self.leaving[k] = false;
                }
                excluded[k] = self.leaving[k] && vn[k] > 0.0;
            }
        }
        let at = Point {
            q: &y.a,
            qd: &y.b,
            p: self.p,
            t,
        };
        let s =
            accelerations_excluding::<M, NQ, NC, DOF, NI>(at, &[], &self.opts.contact, &excluded)?;
        Ok(Pair::new(y.b, s.qdd))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, NQ>) -> Result<(), ContactError> {
        if NC == 0 || !self.opts.project {
            return Ok(());
        }
        let asm = assemble_min_norm::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.assembly)
            .map_err(|_| ContactError::Singular { t })?;
        y.a = asm.q;
        y.b = project_velocity_min_norm::<M, NQ, NC, DOF>(&y.a, &y.b, self.p, t)
            .map_err(|_| ContactError::Singular { t })?;
        Ok(())
    }
    fn events(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Option<Vec<f64>>, ContactError> {
        let g = M::inequality(&y.a, self.p, t);
        let tol = self.opts.contact.active_tol;
        Ok(Some(
            (0..NI)
                .map(|k| {
                    if g[k] > 2.0 * tol {
                        self.armed[k] = true;
                    }
                    if self.leaving[k] {
                        // Leaving from the boundary (`g_k = 0` at the start): back at half
                        // the tolerance past it is an event.
                        g[k] + 0.5 * tol
                    } else if self.armed[k] {
                        g[k]
                    } else {
                        1.0
                    }
                })
                .collect(),
        ))
    }
}

/// `q` moved by one minimum-norm Gauss–Newton step onto `C = 0` and `g_k = 0` for the
/// contacts within `tol` of their boundary (unchanged when there are none).
pub(super) fn onto_boundaries<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    tol: f64,
) -> Result<SVector<f64, NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let g = M::inequality(q, p, t);
    let at: Vec<usize> = (0..NI).filter(|&k| g[k].abs() <= tol).collect();
    if at.is_empty() {
        return Ok(*q);
    }
    let (cj, c) = (M::jacobian(q, p, t), M::residual(q, p, t));
    let jg = M::inequality_jacobian(q, p, t);
    let rows = NC + at.len();
    let k = nalgebra::DMatrix::from_fn(rows, NQ, |i, j| {
        if i < NC {
            cj[(i, j)]
        } else {
            jg[(at[i - NC], j)]
        }
    });
    let r = nalgebra::DVector::from_fn(rows, |i, _| if i < NC { c[i] } else { g[at[i - NC]] });
    let dq = k
        .svd(true, true)
        .solve(&r, 1e-12)
        .map_err(|_| ContactError::Singular { t })?;
    let out = q - SVector::<f64, NQ>::from_iterator(dq.iter().copied());
    if out.iter().all(|v| v.is_finite()) {
        Ok(out)
    } else {
        Err(ContactError::NonFinite { t })
    }
}

/// The contacts whose impact is too slow to bounce higher than `rest_height`: plastic
/// (their normal accelerations from the equality-constrained solve of `contact`'s options
/// with no inequality handled).
fn resting<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize>(
    at: Point<'_, M::Params, NQ>,
    (contact, rest_height): (&ContactOptions, f64),
) -> Result<[bool; NI], ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let Point { q, qd, p, t } = at;
    // The accelerations with no inequality handled (none counts as active).
    let free = ContactOptions {
        active_tol: -1.0,
        ..*contact
    };
    let s = contact_accelerations::<M, NQ, NC, DOF, NI>(q, qd, p, t, &[], &free)?;
    let (vn, an) = at.approach::<M, NC, DOF, NI>(&s.qdd);
    Ok(std::array::from_fn(|k| {
        vn[k] < 0.0 && an[k] < 0.0 && vn[k] * vn[k] <= -2.0 * an[k] * rest_height
    }))
}

/// The gaps `g` and normal velocities `v_n` where a phase starts, and which contacts move
/// away from their boundary faster than rounding (`v_n > 10⁻⁹ (1 + max |v_n|)`).
pub(super) struct PhaseStart<const NI: usize> {
    pub(super) g: SVector<f64, NI>,
    pub(super) away: [bool; NI],
}

/// The state a phase starts from, at the cursor: the impact due there first (an active
/// contact approaching; `impact` returns the velocity change for `(q, q̇)` with the contacts
/// given as plastic, see [`resting`] and `rest_height`), then the contacts within the
/// contact options' `active_tol` of their boundary put exactly on it ([`onto_boundaries`]):
/// each phase starts from `g_k = 0`, and the event thresholds do not creep from impact to
/// impact.
pub(super) fn start_phase<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    E,
>(
    at: &mut Cursor<NQ>,
    p: &M::Params,
    limits: (&ContactOptions, f64),
    impact: impl FnOnce(Point<'_, M::Params, NQ>, &[bool; NI]) -> Result<SVector<f64, NQ>, E>,
) -> Result<PhaseStart<NI>, E>
where
    M: Inequalities<NQ, NC, DOF, NI>,
    E: From<ContactError>,
{
    let tol = limits.0.active_tol;
    let (q, mut qd, t) = (at.q, at.qd, at.t);
    let here = Point {
        q: &q,
        qd: &qd,
        p,
        t,
    };
    let (g, _, vn) = here.gaps::<M, NC, DOF, NI>();
    if impact_due(&g, &vn, tol) {
        let plastic = resting::<M, NQ, NC, DOF, NI>(here, limits)?;
        qd += impact(here, &plastic)?;
    }
    at.q = onto_boundaries::<M, NQ, NC, DOF, NI>(&q, p, t, tol)?;
    at.qd = qd;
    let (g, _, vn) = Point {
        q: &at.q,
        qd: &at.qd,
        p,
        t,
    }
    .gaps::<M, NC, DOF, NI>();
    let vtol = 1e-9 * (1.0 + vn.amax());
    Ok(PhaseStart {
        g,
        away: std::array::from_fn(|k| vn[k] > vtol),
    })
}

/// Checks [`AdaptiveContactOptions::rest_height`] (and its friction twin).
pub(super) fn check_rest_height(rest_height: f64) -> Result<(), ContactError> {
    if rest_height >= 0.0 && rest_height.is_finite() {
        Ok(())
    } else {
        Err(ContactError::InvalidOptions(
            "rest_height must be non-negative and finite",
        ))
    }
}

/// Simulates from `(q0, q̇0)` over `[t0, t1]` with the inequality constraints handled by the
/// active-set method at every right-hand side, on DOPRI5 (error-controlled, unlike the
/// fixed steps of [`super::simulate_contact`]). Each crossing of an inequality (a contact
/// reaching `g_k = 0` from above) is an event located on the dense output: the
/// run stops there, applies the impact (the active-set algorithm on impulses with the
/// contacts' restitution; slow impacts plastic, see
/// [`AdaptiveContactOptions::rest_height`]) and restarts. An active contact approaching at
/// the start gets its impact first.
///
/// The trajectory holds `t0`, the output times, every event (before its impact: `q̇` is the
/// approach velocity; the impact's contacts are in `impact_contacts`) and `t1`; `qdd`,
/// `handled` and `iterations` describe the solve at each of those times but the last.
///
/// Errors: [`ContactError::InvalidOptions`], [`ContactError::TooManyEvents`] past
/// `max_events`, the solver's errors, and [`ContactError::Singular`] when the integrator
/// fails (step size underflow, too many steps) or a projection does not converge.
pub fn simulate_contact_adaptive<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &AdaptiveContactOptions,
) -> Result<ContactTrajectory<NQ>, ContactError>
where
    M: Inequalities<NQ, NC, DOF, NI>,
{
    let (mut at, mut out): (_, ContactTrajectory<NQ>) =
        Cursor::start((t0, q0, qd0), t1, (&opts.output_times, opts.dopri5.h0))
            .map_err(ContactError::InvalidOptions)?;
    let tol = opts.contact.active_tol;
    super::check_active_tol(tol)?;
    check_rest_height(opts.rest_height)?;
    let mut sys = Phase::<M, NQ, NC, DOF, NI> {
        p,
        opts,
        assembly: AssemblyOptions::default(),
        armed: [false; NI],
        leaving: [false; NI],
    };
    loop {
        let limits = (&opts.contact, opts.rest_height);
        let start = start_phase::<M, NQ, NC, DOF, NI, _>(&mut at, p, limits, |here, plastic| {
            let imp = impact_with::<M, NQ, NC, DOF, NI>(here, &opts.contact, plastic)?;
            if !imp.handled.is_empty() {
                out.impacts += 1;
                out.impact_contacts.push(imp.handled.clone());
            }
            Ok::<_, ContactError>(imp.qdd)
        })?;
        let (q, qd, t) = (at.q, at.qd, at.t);
        // The solve at the recorded point (for the trajectory's accelerations).
        let s = contact_accelerations::<M, NQ, NC, DOF, NI>(&q, &qd, p, t, &[], &opts.contact)?;
        out.qdd.push(s.qdd);
        out.handled.push(s.handled.clone());
        out.iterations.push(s.iterations);
        if matches!(s.path, ContactPath::Lcp { .. }) {
            out.lcp_steps += 1;
        }
        let Some(rest) = at.rest() else {
            break;
        };
        let g = start.g;
        sys.leaving = std::array::from_fn(|k| g[k] <= tol && start.away[k]);
        // Clear contacts and those leaving their boundary raise events; resting ones do
        // once they are clear of it.
        sys.armed = std::array::from_fn(|k| g[k] > tol || sys.leaving[k]);
        let limits = (&opts.dopri5, opts.max_events);
        let solve = |out: &mut ContactTrajectory<NQ>, tt: f64, y: &Pair<NQ, NQ>| {
            let s =
                contact_accelerations::<M, NQ, NC, DOF, NI>(&y.a, &y.b, p, tt, &[], &opts.contact)?;
            out.qdd.push(s.qdd);
            out.handled.push(s.handled);
            out.iterations.push(s.iterations);
            Ok(())
        };
        let Some(e) = at.run(&mut sys, &rest, limits, &mut out, solve)? else {
            break;
        };
        out.event_contacts.push(e);
        out.events.push(at.t);
    }
    // One fewer solve than recorded times: the last time's is dropped.
    out.qdd.truncate(out.t.len().saturating_sub(1));
    out.handled.truncate(out.t.len().saturating_sub(1));
    out.iterations.truncate(out.t.len().saturating_sub(1));
    Ok(out)
}
