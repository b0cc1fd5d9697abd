//! What the three event-located simulators ([`super::simulate_contact_adaptive`],
//! [`super::simulate_friction_adaptive`], [`super::simulate_joint_friction_adaptive`])
//! share: their output grid, how they record a state, the first step after an event, and
//! the loop that integrates one smooth phase to its end or its first event ([`Cursor`]).

use nalgebra::SVector;

use crate::error::{ContactError, OdeError};
use crate::ode::{dopri5, Dopri5Options, OdeSystem, Pair};

/// The times a run over `[t0, t1]` stops at: the output times strictly inside, ascending,
/// then `t1`. The error names what is wrong.
pub(super) fn phase_grid(t0: f64, t1: f64, output_times: &[f64]) -> Result<Vec<f64>, &'static str> {
    if !(t0.is_finite() && t1.is_finite() && t1 > t0) {
        return Err("need finite t0 < t1");
    }
    let mut grid: Vec<f64> = output_times
        .iter()
        .copied()
        .filter(|&x| x > t0 && x < t1)
        .collect();
    if grid.windows(2).any(|w| w[1] <= w[0]) {
        return Err("output times must be strictly ascending");
    }
    grid.push(t1);
    Ok(grid)
}

/// The first step of the phase after an event at `te`: as long as the last phase's steps
/// (from `t` in `steps` steps), at least a rounding of `te`.
pub(super) fn next_h0(t: f64, te: f64, steps: usize) -> f64 {
    ((te - t) / steps.max(1) as f64).max(f64::EPSILON * te.abs().max(1.0))
}

/// A trajectory the simulators append states to.
pub(super) trait Record<const NQ: usize> {
    /// Appends `(t, q, q̇)`.
    fn record(&mut self, t: f64, q: &SVector<f64, NQ>, qd: SVector<f64, NQ>);
}

/// [`Record`] for trajectory types with `t`, `q` and `qd` vectors.
macro_rules! impl_record {
    ($($ty:ident),*) => {$(
        impl<const NQ: usize> $crate::contact::phases::Record<NQ> for $ty<NQ> {
            fn record(&mut self, t: f64, q: &SVector<f64, NQ>, qd: SVector<f64, NQ>) {
                self.t.push(t);
                self.q.push(*q);
                self.qd.push(qd);
            }
        }
    )*};
}
pub(super) use impl_record;

/// The errors of an event-located simulator (what an integrator failure and too many events
/// become) and of the machinery the solvers share (a singular system, a non-finite value).
pub(crate) trait PhaseError {
    /// The state, or a value computed from it, became non-finite at `t`.
    fn non_finite(t: f64) -> Self;
    /// A system at `t` was singular.
    fn singular(t: f64) -> Self;
    /// The integrator gave up at `at` (step-size underflow, too many steps) in the phase
    /// that started at `start` (`at == start` for unusable options).
    fn integrator(at: f64, start: f64) -> Self;
    /// More events than the options allow, the last at `t`.
    fn too_many_events(t: f64) -> Self;
}

/// The contact and friction simulators report an integrator failure as a singular
/// system at the phase's start.
impl<E: From<ContactError>> PhaseError for E {
    fn non_finite(t: f64) -> Self {
        ContactError::NonFinite { t }.into()
    }
    fn singular(t: f64) -> Self {
        ContactError::Singular { t }.into()
    }
    fn integrator(_at: f64, start: f64) -> Self {
        ContactError::Singular { t: start }.into()
    }
    fn too_many_events(t: f64) -> Self {
        ContactError::TooManyEvents { t }.into()
    }
}

/// Where an event-located run stands: the state `(t, q, q̇)` the next phase starts from,
/// the first step it tries, the events so far and the times still to reach.
pub(super) struct Cursor<const NQ: usize> {
    pub(super) t: f64,
    pub(super) q: SVector<f64, NQ>,
    pub(super) qd: SVector<f64, NQ>,
    h0: Option<f64>,
    events: usize,
    grid: Vec<f64>,
    t1: f64,
}

impl<const NQ: usize> Cursor<NQ> {
    /// A run from `(t0, q0, q̇0)` over `[t0, t1]` stopping at `output_times`, starting with
    /// the step `h0` (see [`phase_grid`] for the errors), and the trajectory it records into,
    /// holding the first state.
    pub(super) fn start<R: Record<NQ> + Default>(
        (t0, q0, qd0): (f64, &SVector<f64, NQ>, &SVector<f64, NQ>),
        t1: f64,
        (output_times, h0): (&[f64], Option<f64>),
    ) -> Result<(Self, R), &'static str> {
        let grid = phase_grid(t0, t1, output_times)?;
        let mut out = R::default();
        out.record(t0, q0, *qd0);
        let at = Self {
            t: t0,
            q: *q0,
            qd: *qd0,
            h0,
            events: 0,
            grid,
            t1,
        };
        Ok((at, out))
    }

    /// The output times (and `t1`) after the current time; `None` when the run is over.
    pub(super) fn rest(&self) -> Option<Vec<f64>> {
        let rest: Vec<f64> = self.grid.iter().copied().filter(|&x| x > self.t).collect();
        (!rest.is_empty()).then_some(rest)
    }

    /// Integrates the phase `sys` from the current state over `rest` by DOPRI5 (`opts`,
    /// with the cursor's first step), recording each output time before `t1` in `out`
    /// (after `output` has seen it). At an event it moves to the event's state, records
    /// it and returns the event component (an error past `max_events`); at `t1` it records
    /// the end state and returns `None`.
    pub(super) fn run<Sys, R, E>(
        &mut self,
        sys: &mut Sys,
        rest: &[f64],
        (opts, max_events): (&Dopri5Options, usize),
        out: &mut R,
        mut output: impl FnMut(&mut R, f64, &Pair<NQ, NQ>) -> Result<(), E>,
    ) -> Result<Option<usize>, E>
    where
        Sys: OdeSystem<Pair<NQ, NQ>, Error = E>,
        R: Record<NQ>,
        E: PhaseError,
    {
        let start = self.t;
        let dopts = Dopri5Options {
            h0: self.h0,
            ..*opts
        };
        let sol =
            dopri5(sys, start, Pair::new(self.q, self.qd), rest, &dopts).map_err(|e| match e {
                OdeError::System { source, .. } => source,
                OdeError::NonFinite { t } => E::non_finite(t),
                OdeError::StepSizeUnderflow { t, .. } | OdeError::MaxSteps { t, .. } => {
                    E::integrator(t, start)
                }
                OdeError::InvalidOptions(_) => E::integrator(start, start),
            })?;
        for (&tt, y) in sol.t.iter().zip(&sol.y) {
            if tt != self.t1 {
                output(out, tt, y)?;
                out.record(tt, &y.a, y.b);
            }
        }
        match (sol.stopped, sol.event) {
            (Some((te, ye)), Some(e)) => {
                self.events += 1;
                if self.events > max_events {
                    return Err(E::too_many_events(te));
                }
                // The next phase starts with a step like the last ones.
                self.h0 = Some(next_h0(start, te, sol.stats.steps));
                (self.t, self.q, self.qd) = (te, ye.a, ye.b);
                out.record(te, &ye.a, ye.b);
                Ok(Some(e))
            }
            _ => {
                let last = sol.y.last().copied().unwrap_or(Pair::new(self.q, self.qd));
                out.record(self.t1, &last.a, last.b);
                Ok(None)
            }
        }
    }
}

/// Whether an impact is due: a contact at its boundary (`|g_k| ≤ tol`) approaching faster
/// than rounding (`v_n < −10⁻¹² (1 + max |v_n|)`).
pub(super) fn impact_due<const NI: usize>(
    g: &SVector<f64, NI>,
    vn: &SVector<f64, NI>,
    tol: f64,
) -> bool {
    let vtol = 1e-12 * (1.0 + vn.amax());
    (0..NI).any(|k| g[k].abs() <= tol && vn[k] < -vtol)
}
