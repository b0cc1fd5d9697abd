//! The global-error control of [`super::simulate`]: [`Accuracy`], [`GlobalError`].

use super::{one_run, Options, Runner, Simulation};
use crate::mechanism::Dynamics;
use crate::simulate::Trajectory;

/// What [`Options::rtol`] and [`Options::atol`] bound.
///
/// The integrators control the error of each step (the local error); over a long span the
/// error at the outputs (the global error) grows past it — a thousand periods of a
/// pendulum at a local tolerance of 1e-6 end two metres off. [`Accuracy::Control`] (the
/// default) measures the global error by tolerance proportionality and tightens the local
/// tolerances until it is within `rtol·scale_i + atol` at every output, for every
/// coordinate and velocity `i` (`scale_i`: the largest `|q_i|`, `|q̇_i|` over the
/// outputs). [`Simulation::global_error`] says what was achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accuracy {
    /// One run with the tolerances as local tolerances (no estimate: cheapest).
    Local,
    /// A second run at a tenth of the tolerances; the global error of that run is
    /// estimated from the difference (error proportional to the tolerance) and reported,
    /// and that run returned.
    Estimate,
    /// As [`Accuracy::Estimate`], then runs at tighter local tolerances (chosen from the
    /// estimate's proportionality, down to [`Accuracy::MIN_LOCAL_RTOL`]) until the estimate is within
    /// the tolerances, at most `max_runs` runs in all (2 or more).
    Control {
        /// The most runs, the first included.
        max_runs: usize,
    },
}

impl Default for Accuracy {
    fn default() -> Self {
        Accuracy::Control { max_runs: 4 }
    }
}

impl Accuracy {
    /// The smallest local relative tolerance [`Accuracy::Control`] tightens to. Near the
    /// rounding of `f64` the integrators' error estimates and the projections stop being
    /// reliable: measured, Dormand–Prince 8(5,3) at 1e-13 passes the flat positions of IFToMM
    /// A02 2e-2 off (1e-8 at 1e-12).
    pub const MIN_LOCAL_RTOL: f64 = 1e-12;
    /// The smallest absolute tolerance [`Accuracy::Control`] scales `atol` down to with
    /// the relative one (unless `atol` itself is smaller): its analogue of
    /// [`MIN_LOCAL_RTOL`](Self::MIN_LOCAL_RTOL) for coordinates near zero. Below it, near a
    /// flat position the chart's rounding (amplified by the inverse square of
    /// `σ_r / σ_max`) exceeds the tolerance and the steps shrink to nothing: IFToMM A02 with
    /// 40 windows at local rtol 1e-12 took 24 s with atol 1e-16 (what the control asked for
    /// a user's rtol 1e-8, atol 1e-12) and 0.75 s with atol 1e-14.
    pub const MIN_LOCAL_ATOL: f64 = 1e-14;
}

/// What [`Accuracy::Estimate`] and [`Accuracy::Control`] achieved
/// ([`Simulation::global_error`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalError {
    /// The estimated global error of the returned run, the largest over the outputs and the
    /// components of `q` and `q̇` relative to `rtol·scale_i + atol` (`≤ 1`: the tolerances
    /// are met). Infinite where two runs could not be compared (different output times).
    pub ratio: f64,
    /// The estimated global error of the returned run, the largest absolute value over the
    /// outputs and the components of `q` and `q̇`.
    pub max_abs: f64,
    /// `ratio ≤ 1`.
    pub converged: bool,
    /// The local relative tolerance of the returned run (its absolute tolerance is
    /// `atol` scaled by the same factor, not below [`Accuracy::MIN_LOCAL_ATOL`] unless `atol`
    /// is).
    pub local_rtol: f64,
    /// The runs made (the returned one included).
    pub runs: usize,
    /// The right-hand sides evaluated over all runs (the returned run's are in its
    /// [`Trajectory::stats`]).
    pub rhs_calls: usize,
    /// Why the control stopped before converging (a run that failed at a tighter
    /// tolerance, the smallest tolerance reached, the most runs), else `None`.
    pub stopped: Option<String>,
}

/// [`Accuracy::Estimate`] and [`Accuracy::Control`]: runs at tighter local tolerances after
/// `first`, each compared with the one before.
///
/// The estimate rests on one assumption: a run at a tolerance `ρ ≥ 2` times tighter has at
/// most `1/min(ρ, 10)` of the global error. Then `|y_a − y_b| ≥ e_a − e_b` bounds the error
/// of the tighter run by `|y_a − y_b| / (min(ρ, 10) − 1)` (a ninth of the difference for
/// `ρ ≥ 10`). The next tolerance aims at half the target with the error proportional to the
/// tolerance, between 1e-4 and a tenth of the one before, not below
/// [`Accuracy::MIN_LOCAL_RTOL`]. The control stops when the estimate is within the target,
/// after `max_runs` runs, at the smallest tolerance, when a run fails, or when an estimate is
/// not at least halved by a tighter run (the error does not follow the tolerance: e.g. it is
/// made where a rank drop is passed); it returns the run with the smallest estimate. A
/// request at the smallest tolerance already is estimated by a run at ten times it.
pub(super) fn control<M, const NQ: usize, const NC: usize, const DOF: usize>(
    runner: Runner<'_, M::Params, NQ>,
    grid: &[f64],
    first: Simulation<NQ, NC>,
    max_runs: usize,
) -> Simulation<NQ, NC>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let opts = runner.opts;
    let floor = Accuracy::MIN_LOCAL_RTOL.min(opts.rtol);
    let with_tol = |tau: f64| Options {
        rtol: tau,
        atol: (opts.atol * (tau / opts.rtol)).max(opts.atol.min(Accuracy::MIN_LOCAL_ATOL)),
        accuracy: Accuracy::Local,
        ..opts.clone()
    };
    let mut rhs_calls = first.stats.ode.rhs_calls;
    let mut runs = 1;
    let mut stopped = None;
    // The run returned, its local tolerance and its estimate (ratio, max_abs).
    let (mut sim, local_rtol, (ratio, max_abs)) = if opts.rtol / 10.0 < floor * 0.5 {
        // At the smallest tolerance already: estimate by a looser run.
        runs += 1;
        let estimate = match one_run::<M, NQ, NC, DOF>(
            Runner {
                opts: &with_tol(opts.rtol * 10.0),
                ..runner
            },
            grid,
        ) {
            Ok(loose) => {
                rhs_calls += loose.stats.ode.rhs_calls;
                compare(&loose, &first, opts.rtol, opts.atol, 1.0 / 9.0)
            }
            Err(e) => {
                stopped = Some(format!(
                    "the comparison run at local rtol {:e} failed: {e}",
                    opts.rtol * 10.0
                ));
                (f64::INFINITY, f64::INFINITY)
            }
        };
        if stopped.is_none() {
            stopped = Some(format!(
                "the requested rtol is at the smallest local tolerance ({:e}): estimated, not tightened",
                Accuracy::MIN_LOCAL_RTOL
            ));
        }
        (first, opts.rtol, estimate)
    } else {
        let mut best: Option<(Simulation<NQ, NC>, f64, (f64, f64))> = None;
        let mut prev = first;
        let mut tau = opts.rtol;
        let mut next = opts.rtol / 10.0;
        let mut last_ratio = f64::INFINITY;
        loop {
            if runs >= max_runs {
                stopped = Some(format!("{max_runs} runs made"));
                break;
            }
            let tau_b = next.max(floor);
            if tau_b > 0.5 * tau {
                stopped = Some(format!(
                    "the smallest local tolerance ({:e}) reached",
                    Accuracy::MIN_LOCAL_RTOL
                ));
                break;
            }
            runs += 1;
            let run = match one_run::<M, NQ, NC, DOF>(
                Runner {
                    opts: &with_tol(tau_b),
                    ..runner
                },
                grid,
            ) {
                Ok(run) => run,
                Err(e) => {
                    stopped = Some(format!("the run at local rtol {tau_b:e} failed: {e}"));
                    break;
                }
            };
            rhs_calls += run.stats.ode.rhs_calls;
            let rho = (tau / tau_b).min(10.0);
            let estimate = compare(&prev, &run, opts.rtol, opts.atol, 1.0 / (rho - 1.0));
            let ratio = estimate.0;
            tau = tau_b;
            let improves = best.as_ref().is_none_or(|b| ratio < b.2 .0);
            let progress = ratio <= 0.5 * last_ratio;
            last_ratio = ratio;
            if improves {
                best = Some((run.clone(), tau, estimate));
            }
            if ratio <= 1.0 || opts.accuracy == Accuracy::Estimate {
                break;
            }
            if !progress {
                stopped = Some(format!(
                    "the estimate did not halve at local rtol {tau:e} (the error does not follow the tolerance)"
                ));
                break;
            }
            next = if ratio.is_finite() {
                tau * (0.5 / ratio).clamp(1e-4, 0.1)
            } else {
                tau / 10.0
            };
            prev = run;
        }
        match best {
            Some(b) => b,
            None => (prev, tau, (f64::INFINITY, f64::INFINITY)),
        }
    };
    let converged = ratio <= 1.0;
    sim.global_error = Some(GlobalError {
        ratio,
        max_abs,
        converged,
        local_rtol,
        runs,
        rhs_calls,
        stopped: if converged { None } else { stopped },
    });
    sim
}

/// The estimated global error of `b` from its difference to `a` times `factor`: the largest
/// relative to `rtol·scale_i + atol` and the largest absolute, over the outputs and the
/// components of `q`, `q̇` (infinite where the output times differ).
fn compare<const NQ: usize, const NC: usize>(
    a: &Trajectory<NQ, NC>,
    b: &Trajectory<NQ, NC>,
    rtol: f64,
    atol: f64,
    factor: f64,
) -> (f64, f64) {
    if a.t != b.t {
        return (f64::INFINITY, f64::INFINITY);
    }
    let mut scale = [[0.0f64; NQ]; 2];
    for traj in [a, b] {
        for (q, qd) in traj.q.iter().zip(&traj.qd) {
            for i in 0..NQ {
                scale[0][i] = scale[0][i].max(q[i].abs());
                scale[1][i] = scale[1][i].max(qd[i].abs());
            }
        }
    }
    let (mut ratio, mut max_abs) = (0.0f64, 0.0f64);
    for k in 0..a.t.len() {
        for (part, (ya, yb)) in [(&a.q[k], &b.q[k]), (&a.qd[k], &b.qd[k])]
            .into_iter()
            .enumerate()
        {
            for i in 0..NQ {
                let e = (ya[i] - yb[i]).abs() * factor;
                // NaN shows as not converged.
                let r = e / (rtol * scale[part][i] + atol);
                ratio = if r.is_nan() {
                    f64::INFINITY
                } else {
                    ratio.max(r)
                };
                max_abs = if e.is_nan() {
                    f64::INFINITY
                } else {
                    max_abs.max(e)
                };
            }
        }
    }
    (ratio, max_abs)
}
