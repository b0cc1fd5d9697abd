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
    if !all_finite(&y0) {
        return Err(OdeError::NonFinite { t: t0 });
    }

    let mut stats = Stats::default();
    let mut out_t = Vec::with_capacity(t_out.len());
    let mut out_y = Vec::with_capacity(t_out.len());
    let mut next_out = 0;
    while next_out < t_out.len() && t_out[next_out] <= t0 {
        out_t.push(t_out[next_out]);
        out_y.push(y0.clone());
        next_out += 1;
    }
    if next_out == t_out.len() {
        return Ok(Solution {
            t: out_t,
            y: out_y,
            stats,
            stopped: None,
            event: None,
        });
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

        let mut ys = y.clone();
        ys.axpy(h * A21, &k1);
        let k2 = eval(sys, &mut stats, t + C2 * h, &ys)?;
        let mut ys = y.clone();
        ys.axpy(h * A31, &k1);
        ys.axpy(h * A32, &k2);
        let k3 = eval(sys, &mut stats, t + C3 * h, &ys)?;
        let mut ys = y.clone();
        ys.axpy(h * A41, &k1);
        ys.axpy(h * A42, &k2);
        ys.axpy(h * A43, &k3);
        let k4 = eval(sys, &mut stats, t + C4 * h, &ys)?;
        let mut ys = y.clone();
        ys.axpy(h * A51, &k1);
        ys.axpy(h * A52, &k2);
        ys.axpy(h * A53, &k3);
        ys.axpy(h * A54, &k4);
        let k5 = eval(sys, &mut stats, t + C5 * h, &ys)?;
        let mut ys = y.clone();
        ys.axpy(h * A61, &k1);
        ys.axpy(h * A62, &k2);
        ys.axpy(h * A63, &k3);
        ys.axpy(h * A64, &k4);
        ys.axpy(h * A65, &k5);
        let k6 = eval(sys, &mut stats, t_new, &ys)?;
        let mut y1 = y.clone();
        y1.axpy(h * A71, &k1);
        y1.axpy(h * A73, &k3);
        y1.axpy(h * A74, &k4);
        y1.axpy(h * A75, &k5);
        y1.axpy(h * A76, &k6);
        let k7 = eval(sys, &mut stats, t_new, &y1)?;

        // e = E1 k1 + E3 k3 + ... + E7 k7 (times h below)
        let mut e = k1.clone();
        e.scale(E1);
        e.axpy(E3, &k3);
        e.axpy(E4, &k4);
        e.axpy(E5, &k5);
        e.axpy(E6, &k6);
        e.axpy(E7, &k7);
        let err = h * wrms(&e, &y, &y1, rtol, atol);
        let finite = err.is_finite() && all_finite(&y1) && all_finite(&k7);

        if finite && err <= 1.0 {
            // Dense output coefficients, only when an output time falls inside this step.
            let needs_dense = t_out[next_out] < t_new;
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
                let fac = if perr.is_finite() {
                    (opts.safety * perr.powf(-0.2)).clamp(opts.fac_min, 1.0)
                } else {
                    opts.fac_min
                };
                h *= fac;
                continue;
            }
            stats.max_projection = stats.max_projection.max(perr);
            let control = sys
                .accept(t, &y, t_new, &y_acc)
                .map_err(|source| OdeError::System { t: t_new, source })?;
            if control == StepControl::StopBefore {
                return Ok(Solution {
                    t: out_t,
                    y: out_y,
                    stats,
                    stopped: Some((t, y)),
                    event: None,
                });
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
                let mut first: Option<(f64, usize)> = None;
                for &k in &crossing {
                    // Bisection on the dense output: lo keeps the component positive.
                    let (mut lo, mut hi) = (0.0f64, 1.0f64);
                    for _ in 0..60 {
                        let mid = 0.5 * (lo + hi);
                        let ym = interpolate(&y, &dense, mid);
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
                first.map(|(s, k)| (t + s * h, s, k, dense))
            };
            if let Some((te, s, k, dense)) = event {
                stats.steps += 1;
                while next_out < t_out.len() && t_out[next_out] < te {
                    let to = t_out[next_out];
                    let mut yo = interpolate(&y, &dense, (to - t) / h);
                    project(sys, &mut stats, to, &mut yo)?;
                    out_t.push(to);
                    out_y.push(yo);
                    next_out += 1;
                }
                let mut ye = interpolate(&y, &dense, s);
                project(sys, &mut stats, te, &mut ye)?;
                return Ok(Solution {
                    t: out_t,
                    y: out_y,
                    stats,
                    stopped: Some((te, ye)),
                    event: Some(k),
                });
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
            while next_out < t_out.len() && t_out[next_out] <= t_new {
                let to = t_out[next_out];
                let yo = if to == t_new {
                    y_acc.clone()
                } else if let Some(dense) = &dense {
                    let mut yo = interpolate(&y_prev, dense, (to - t) / h);
                    project(sys, &mut stats, to, &mut yo)?;
                    yo
                } else {
                    y_acc.clone()
                };
                out_t.push(to);
                out_y.push(yo);
                next_out += 1;
            }
            t = t_new;
            y = y_acc;
            if control == StepControl::StopAfter {
                return Ok(Solution {
                    t: out_t,
                    y: out_y,
                    stats,
                    stopped: Some((t, y)),
                    event: None,
                });
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
            let fac = if finite {
                (opts.safety * err.powf(-0.2)).clamp(opts.fac_min, 1.0)
            } else {
                opts.fac_min
            };
            h *= fac;
        }
    }
    Ok(Solution {
        t: out_t,
        y: out_y,
        stats,
        stopped: None,
        event: None,
    })
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
