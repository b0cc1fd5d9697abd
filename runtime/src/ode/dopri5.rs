//! Adaptive Dormand–Prince 5(4) with its fourth-order dense output.

use super::{
    all_finite, check_outputs, eval, project, smallest_step, wrms, Dopri5Options, OdeState,
    OdeSystem, Solution, Stats, StepControl,
};
use crate::error::OdeError;

// Dormand–Prince 5(4) tableau.
const C2: f64 = 1.0 / 5.0;
const C3: f64 = 3.0 / 10.0;
const C4: f64 = 4.0 / 5.0;
const C5: f64 = 8.0 / 9.0;
const A21: f64 = 1.0 / 5.0;
const A31: f64 = 3.0 / 40.0;
const A32: f64 = 9.0 / 40.0;
const A41: f64 = 44.0 / 45.0;
const A42: f64 = -56.0 / 15.0;
const A43: f64 = 32.0 / 9.0;
const A51: f64 = 19372.0 / 6561.0;
const A52: f64 = -25360.0 / 2187.0;
const A53: f64 = 64448.0 / 6561.0;
const A54: f64 = -212.0 / 729.0;
const A61: f64 = 9017.0 / 3168.0;
const A62: f64 = -355.0 / 33.0;
const A63: f64 = 46732.0 / 5247.0;
const A64: f64 = 49.0 / 176.0;
const A65: f64 = -5103.0 / 18656.0;
const A71: f64 = 35.0 / 384.0;
const A73: f64 = 500.0 / 1113.0;
const A74: f64 = 125.0 / 192.0;
const A75: f64 = -2187.0 / 6784.0;
const A76: f64 = 11.0 / 84.0;
const E1: f64 = 71.0 / 57600.0;
const E3: f64 = -71.0 / 16695.0;
const E4: f64 = 71.0 / 1920.0;
const E5: f64 = -17253.0 / 339200.0;
const E6: f64 = 22.0 / 525.0;
const E7: f64 = -1.0 / 40.0;
// Dense output (Hairer's dopri5 continuous extension of order 4).
const D1: f64 = -12715105075.0 / 11282082432.0;
const D3: f64 = 87487479700.0 / 32700410799.0;
const D4: f64 = -10690763975.0 / 1880347072.0;
const D5: f64 = 701980252875.0 / 199316789632.0;
const D6: f64 = -1453857185.0 / 822651844.0;
const D7: f64 = 69997945.0 / 29380423.0;

/// Adaptive Dormand–Prince 5(4) integration of `sys` from `(t0, y0)`, reporting the state
/// at each time of `t_out` (ascending, `≥ t0`; the last one is the end time).
///
/// Step-size control: error estimate in the weighted RMS norm with weights
/// `atol + rtol·max(|y_n|, |y_{n+1}|)`, new step `h·clamp(safety·err^(−1/5), fac_min,
/// fac_max)` (no growth right after a rejection). A step whose stages are non-finite is
/// rejected and shrunk. Output times inside a step use the fourth-order dense output
/// and are passed through the system's projection. Local extrapolation (the fifth-order
/// solution is propagated). The state is projected after each accepted step, and
/// the FSAL stage is re-evaluated when the projection moved the state. A step whose
/// projection moves the state by more than the tolerance (weighted RMS norm `> 1`, the
/// same norm as the error test) is rejected and retried with a smaller step
/// ([`Stats::projection_rejections`]); the largest accepted correction is
/// [`Stats::max_projection`].
///
/// Errors: [`OdeError::StepSizeUnderflow`] when the step falls below 16 ulp of `t`,
/// [`OdeError::MaxSteps`], [`OdeError::System`] when the right-hand side or projection
/// fails, [`OdeError::InvalidOptions`].
pub fn dopri5<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    t0: f64,
    y0: S,
    t_out: &[f64],
    opts: &Dopri5Options,
) -> Result<Solution<S>, OdeError<Sys::Error>> {
    let t_end = check_outputs::<Sys::Error>(t0, t_out)?;
    check_options::<Sys::Error>(opts)?;
    let (rtol, atol) = (opts.rtol, opts.atol);
    if !all_finite(&y0) {
        return Err(OdeError::NonFinite { t: t0 });
    }

    let mut stats = Stats::default();
    let mut out = Outputs::new(t_out);
    while let Some(to) = out.due(t0, true) {
        out.push(to, y0.clone());
    }
    if out.done() {
        return Ok(out.finish(stats, None, None));
    }

    let mut t = t0;
    let mut y = y0;
    let mut k1 = eval(sys, &mut stats, t, &y)?;
    if !all_finite(&k1) {
        return Err(OdeError::NonFinite { t });
    }
    let span = t_end - t0;
    let mut h = match opts.h0 {
        Some(h0) => h0,
        None => initial_step(
            sys,
            &mut stats,
            t,
            &y,
            &k1,
            rtol,
            atol,
            span.min(opts.h_max),
        )?,
    };
    let mut last_rejected = false;
    let mut total = 0usize;
    let mut ev_prev = events(sys, t, &y)?;

    while t < t_end {
        if total >= opts.max_steps {
            return Err(OdeError::MaxSteps { t, steps: total });
        }
        total += 1;
        h = h.min(opts.h_max);
        let remaining = t_end - t;
        // Take the end point when within 1 % of a step (no slivers left over).
        let last = h * 1.01 >= remaining;
        if last {
            h = remaining;
        }
        if h < smallest_step(t) || !h.is_finite() {
            return Err(OdeError::StepSizeUnderflow { t, h });
        }
        let t_new = if last { t_end } else { t + h };

        let Trial {
            y1,
            k: [_, _, k3, k4, k5, k6, k7],
            err,
        } = trial(sys, &mut stats, t, &y, &k1, h, t_new, rtol, atol)?;
        let finite = err.is_finite() && all_finite(&y1) && all_finite(&k7);

        if finite && err <= 1.0 {
            // Dense output coefficients, only when an output time falls inside this step.
            let needs_dense = out.due(t_new, false).is_some();
            let dense =
                needs_dense.then(|| dense_coefficients(h, &y, &y1, &k1, &k3, &k4, &k5, &k6, &k7));
            let y_prev = y.clone();
            let mut y_acc = y1.clone();
            project(sys, &mut stats, t_new, &mut y_acc)?;
            let moved = y_acc.components().zip(y1.components()).any(|(a, b)| a != b);
            // A projection that moves the state by more than the tolerance means the error
            // estimate missed part of the error (the drift off the manifold): reject the
            // step as if its error were that large, never accept it silently.
            let perr = if moved {
                let mut dy = y_acc.clone();
                dy.axpy(-1.0, &y1);
                wrms(&dy, &y, &y1, rtol, atol)
            } else {
                0.0
            };
            if perr.is_nan() || perr > 1.0 {
                stats.rejected += 1;
                stats.projection_rejections += 1;
                last_rejected = true;
                h *= shrink(perr, opts);
                continue;
            }
            stats.max_projection = stats.max_projection.max(perr);
            let control = sys
                .accept(t, &y, t_new, &y_acc)
                .map_err(|source| OdeError::System { t: t_new, source })?;
            if control == StepControl::StopBefore {
                return Ok(out.finish(stats, Some((t, y)), None));
            }
            // Events: a component positive at the step's start and not at its end.
            let crossing = match &ev_prev {
                Some(prev) => {
                    let now = events(sys, t_new, &y_acc)?.unwrap_or_default();
                    let hit: Vec<usize> = (0..prev.len().min(now.len()))
                        .filter(|&k| prev[k] > 0.0 && now[k] <= 0.0)
                        .collect();
                    ev_prev = Some(now);
                    hit
                }
                None => Vec::new(),
            };
            let event = if crossing.is_empty() {
                None
            } else {
                let dense = dense_coefficients(h, &y, &y1, &k1, &k3, &k4, &k5, &k6, &k7);
                locate_event(sys, t, h, t_new, &y, &dense, &crossing)?
                    .map(|(s, k)| (t + s * h, s, k, dense))
            };
            if let Some((te, s, k, dense)) = event {
                stats.steps += 1;
                while let Some(to) = out.due(te, false) {
                    let mut yo = interpolate(&y, &dense, (to - t) / h);
                    project(sys, &mut stats, to, &mut yo)?;
                    out.push(to, yo);
                }
                let mut ye = interpolate(&y, &dense, s);
                project(sys, &mut stats, te, &mut ye)?;
                return Ok(out.finish(stats, Some((te, ye)), Some(k)));
            }
            k1 = if control == StepControl::StopAfter {
                k7
            } else if moved {
                let k = eval(sys, &mut stats, t_new, &y_acc)?;
                if !all_finite(&k) {
                    return Err(OdeError::NonFinite { t: t_new });
                }
                k
            } else {
                k7
            };
            stats.steps += 1;
            while let Some(to) = out.due(t_new, true) {
                let yo = if to == t_new {
                    y_acc.clone()
                } else if let Some(dense) = &dense {
                    let mut yo = interpolate(&y_prev, dense, (to - t) / h);
                    project(sys, &mut stats, to, &mut yo)?;
                    yo
                } else {
                    y_acc.clone()
                };
                out.push(to, yo);
            }
            t = t_new;
            y = y_acc;
            if control == StepControl::StopAfter {
                return Ok(out.finish(stats, Some((t, y)), None));
            }
            // The next step answers for the projection too.
            let err = err.max(perr);
            let mut fac = if err == 0.0 {
                opts.fac_max
            } else {
                (opts.safety * err.powf(-0.2)).clamp(opts.fac_min, opts.fac_max)
            };
            if last_rejected {
                fac = fac.min(1.0);
            }
            last_rejected = false;
            h *= fac;
        } else {
            stats.rejected += 1;
            last_rejected = true;
            h *= shrink(if finite { err } else { f64::NAN }, opts);
        }
    }
    Ok(out.finish(stats, None, None))
}

/// The factor a rejected step is shrunk by: `safety · err^(−1/5)` within `[fac_min, 1]`,
/// `fac_min` for a non-finite error.
fn shrink(err: f64, opts: &Dopri5Options) -> f64 {
    if err.is_finite() {
        (opts.safety * err.powf(-0.2)).clamp(opts.fac_min, 1.0)
    } else {
        opts.fac_min
    }
}

/// The outputs produced so far, against the requested times.
struct Outputs<'a, S> {
    times: &'a [f64],
    t: Vec<f64>,
    y: Vec<S>,
}

impl<'a, S> Outputs<'a, S> {
    fn new(times: &'a [f64]) -> Self {
        Outputs {
            times,
            t: Vec::with_capacity(times.len()),
            y: Vec::with_capacity(times.len()),
        }
    }

    /// The next requested time if it is before `bound` (or at it, with `inclusive`).
    fn due(&self, bound: f64, inclusive: bool) -> Option<f64> {
        self.times
            .get(self.t.len())
            .copied()
            .filter(|&to| to < bound || (inclusive && to == bound))
    }

    fn push(&mut self, t: f64, y: S) {
        self.t.push(t);
        self.y.push(y);
    }

    fn done(&self) -> bool {
        self.t.len() == self.times.len()
    }

    fn finish(self, stats: Stats, stopped: Option<(f64, S)>, event: Option<usize>) -> Solution<S> {
        Solution {
            t: self.t,
            y: self.y,
            stats,
            stopped,
            event,
        }
    }
}

/// The step-size controller's and tolerances' validity.
fn check_options<E>(opts: &Dopri5Options) -> Result<(), OdeError<E>> {
    let (rtol, atol) = (opts.rtol, opts.atol);
    if !(rtol.is_finite() && atol.is_finite() && rtol >= 0.0 && atol >= 0.0)
        || (rtol == 0.0 && atol == 0.0)
    {
        return Err(OdeError::InvalidOptions(
            "tolerances must be finite, non-negative and not both zero",
        ));
    }
    let controller_ok = opts.h_max > 0.0
        && opts.safety > 0.0
        && opts.safety <= 1.0
        && opts.fac_min > 0.0
        && opts.fac_min <= 1.0
        && opts.fac_max >= 1.0
        && opts.fac_max.is_finite();
    if !controller_ok {
        return Err(OdeError::InvalidOptions(
            "need h_max > 0, 0 < safety <= 1, 0 < fac_min <= 1 <= fac_max < inf",
        ));
    }
    if let Some(h0) = opts.h0 {
        if !(h0.is_finite() && h0 > 0.0) {
            return Err(OdeError::InvalidOptions(
                "initial step must be positive and finite",
            ));
        }
    }
    Ok(())
}

/// One trial step: the fifth-order solution, the stages `k1 … k7` (`k[0]` is `k1`, given)
/// and the error estimate in the weighted RMS norm (times `h`).
struct Trial<S> {
    y1: S,
    k: [S; 7],
    err: f64,
}

/// The Dormand–Prince stages of a step of length `h` from `(t, y)` with `k1 = f(t, y)`.
#[allow(clippy::too_many_arguments)]
fn trial<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    stats: &mut Stats,
    t: f64,
    y: &S,
    k1: &S,
    h: f64,
    t_new: f64,
    rtol: f64,
    atol: f64,
) -> Result<Trial<S>, OdeError<Sys::Error>> {
    let stage = |coeffs: &[(f64, &S)]| {
        let mut ys = y.clone();
        for &(c, k) in coeffs {
            ys.axpy(h * c, k);
        }
        ys
    };
    let k2 = eval(sys, stats, t + C2 * h, &stage(&[(A21, k1)]))?;
    let k3 = eval(sys, stats, t + C3 * h, &stage(&[(A31, k1), (A32, &k2)]))?;
    let k4 = eval(
        sys,
        stats,
        t + C4 * h,
        &stage(&[(A41, k1), (A42, &k2), (A43, &k3)]),
    )?;
    let k5 = eval(
        sys,
        stats,
        t + C5 * h,
        &stage(&[(A51, k1), (A52, &k2), (A53, &k3), (A54, &k4)]),
    )?;
    let k6 = eval(
        sys,
        stats,
        t_new,
        &stage(&[(A61, k1), (A62, &k2), (A63, &k3), (A64, &k4), (A65, &k5)]),
    )?;
    let y1 = stage(&[(A71, k1), (A73, &k3), (A74, &k4), (A75, &k5), (A76, &k6)]);
    let k7 = eval(sys, stats, t_new, &y1)?;
    // e = E1 k1 + E3 k3 + ... + E7 k7 (times h below)
    let mut e = k1.clone();
    e.scale(E1);
    e.axpy(E3, &k3);
    e.axpy(E4, &k4);
    e.axpy(E5, &k5);
    e.axpy(E6, &k6);
    e.axpy(E7, &k7);
    let err = h * wrms(&e, y, &y1, rtol, atol);
    Ok(Trial {
        y1,
        k: [k1.clone(), k2, k3, k4, k5, k6, k7],
        err,
    })
}

/// The earliest root inside the step `(t, t + h)` of the event components `crossing` (each
/// positive at the step's start, not at its end): bisection on the dense output, to a few
/// ulp of the time. Returns the fraction of the step (on the non-positive side) and the
/// component.
fn locate_event<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    t: f64,
    h: f64,
    t_new: f64,
    y: &S,
    dense: &[S; 4],
    crossing: &[usize],
) -> Result<Option<(f64, usize)>, OdeError<Sys::Error>> {
    let mut first: Option<(f64, usize)> = None;
    for &k in crossing {
        // Bisection on the dense output: lo keeps the component positive.
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            let ym = interpolate(y, dense, mid);
            let v = events(sys, t + mid * h, &ym)?
                .and_then(|e| e.get(k).copied())
                .unwrap_or(f64::INFINITY);
            if v > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
            if (hi - lo) * h <= 4.0 * f64::EPSILON * t_new.abs().max(h) {
                break;
            }
        }
        if first.is_none_or(|(s, _)| hi < s) {
            first = Some((hi, k));
        }
    }
    Ok(first)
}

/// The system's event functions at `(t, y)`, its error mapped.
fn events<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    t: f64,
    y: &S,
) -> Result<Option<Vec<f64>>, OdeError<Sys::Error>> {
    sys.events(t, y)
        .map_err(|source| OdeError::System { t, source })
}

/// The dense output's coefficients of a step of length `h` from `y` to `y1` (Hairer's
/// dopri5 continuous extension): `(y1 − y, h k1 − (y1 − y), …)`.
#[allow(clippy::too_many_arguments)]
fn dense_coefficients<S: OdeState>(
    h: f64,
    y: &S,
    y1: &S,
    k1: &S,
    k3: &S,
    k4: &S,
    k5: &S,
    k6: &S,
    k7: &S,
) -> [S; 4] {
    let mut ydiff = y1.clone();
    ydiff.axpy(-1.0, y);
    let mut bspl = k1.clone();
    bspl.scale(h);
    bspl.axpy(-1.0, &ydiff);
    let mut r4 = ydiff.clone();
    r4.axpy(-h, k7);
    r4.axpy(-1.0, &bspl);
    let mut r5 = k1.clone();
    r5.scale(h * D1);
    r5.axpy(h * D3, k3);
    r5.axpy(h * D4, k4);
    r5.axpy(h * D5, k5);
    r5.axpy(h * D6, k6);
    r5.axpy(h * D7, k7);
    [ydiff, bspl, r4, r5]
}

/// The dense output at the fraction `s` of the step from `y`:
/// `y + s (ydiff + s1 (bspl + s (r4 + s1 r5)))`, `s1 = 1 − s`.
fn interpolate<S: OdeState>(y: &S, [ydiff, bspl, r4, r5]: &[S; 4], s: f64) -> S {
    let s1 = 1.0 - s;
    let mut inner = r4.clone();
    inner.axpy(s1, r5);
    let mut mid = bspl.clone();
    mid.axpy(s, &inner);
    let mut outer = ydiff.clone();
    outer.axpy(s1, &mid);
    let mut out = y.clone();
    out.axpy(s, &outer);
    out
}

/// Initial step size (Hairer, Nørsett & Wanner, "Solving ODEs I", II.4).
#[allow(clippy::too_many_arguments)]
fn initial_step<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    stats: &mut Stats,
    t: f64,
    y: &S,
    f0: &S,
    rtol: f64,
    atol: f64,
    h_limit: f64,
) -> Result<f64, OdeError<Sys::Error>> {
    let d0 = wrms(y, y, y, rtol, atol);
    let d1 = wrms(f0, y, y, rtol, atol);
    let mut h0 = if d0 < 1e-5 || d1 < 1e-5 {
        1e-6
    } else {
        0.01 * d0 / d1
    };
    h0 = h0.min(h_limit);
    let mut y1 = y.clone();
    y1.axpy(h0, f0);
    let f1 = eval(sys, stats, t + h0, &y1)?;
    let mut df = f1;
    df.axpy(-1.0, f0);
    let d2 = wrms(&df, y, y, rtol, atol) / h0;
    if !d2.is_finite() {
        return Ok(h0);
    }
    let dmax = d1.max(d2);
    let h1 = if dmax <= 1e-15 {
        (h0 * 1e-3).max(1e-6)
    } else {
        (0.01 / dmax).powf(0.2)
    };
    Ok((100.0 * h0).min(h1).min(h_limit))
}
