//! The adaptive explicit Runge–Kutta driver shared by [`super::dopri5`] and
//! [`super::dop853`]: step-size control, post-step projection, outputs by dense output,
//! events. A method ([`Method`]) supplies its trial step, error estimate and dense output.

use super::{
    all_finite, check_outputs, eval, project, smallest_step, wrms, Dopri5Options, OdeState,
    OdeSystem, Solution, Stats, StepControl,
};
use crate::error::OdeError;

/// A trial step of a method: the new state, the right-hand side there where the method
/// evaluated it (first-same-as-last), the error estimate (weighted RMS norm, `≤ 1`
/// accepts) and the stages its dense output needs.
pub(super) struct Trial<S, K> {
    pub(super) y1: S,
    pub(super) f1: Option<S>,
    pub(super) err: f64,
    pub(super) stages: K,
}

/// One trial step: from `(t, y)` with `k1 = f(t, y)`, of length `h`, ending at `t_new`
/// (`t + h`, or the end time exactly), under the tolerances `rtol` and `atol`.
pub(super) struct Step<'a, S> {
    pub(super) t: f64,
    pub(super) y: &'a S,
    pub(super) k1: &'a S,
    pub(super) h: f64,
    pub(super) t_new: f64,
    pub(super) rtol: f64,
    pub(super) atol: f64,
}

impl<S: OdeState> Step<'_, S> {
    /// `y + h Σ c_j k_j`.
    #[inline(always)]
    pub(super) fn combine(&self, terms: &[(f64, &S)]) -> S {
        let mut ys = self.y.clone();
        for &(c, k) in terms {
            ys.axpy(self.h * c, k);
        }
        ys
    }

    /// The stage `f(t + c h, y + h Σ a_j k_j)` (`terms`: the `(a_j, k_j)`).
    #[inline(always)]
    pub(super) fn stage<Sys: OdeSystem<S>>(
        &self,
        sys: &mut Sys,
        stats: &mut Stats,
        c: f64,
        terms: &[(f64, &S)],
    ) -> Result<S, OdeError<Sys::Error>> {
        eval(sys, stats, self.t + c * self.h, &self.combine(terms))
    }

    /// The first three coefficients of a Dormand–Prince dense output to `y1`, shared by
    /// dopri5 and dop853: `y1 − y`, `h k1 − (y1 − y)` and `(y1 − y) − h f_end − (h k1 −
    /// (y1 − y))`.
    #[inline(always)]
    pub(super) fn dense_head(&self, y1: &S, f_end: &S) -> [S; 3] {
        let mut ydiff = y1.clone();
        ydiff.axpy(-1.0, self.y);
        let mut bspl = self.k1.clone();
        bspl.scale(self.h);
        bspl.axpy(-1.0, &ydiff);
        let mut r4 = ydiff.clone();
        r4.axpy(-self.h, f_end);
        r4.axpy(-1.0, &bspl);
        [ydiff, bspl, r4]
    }
}

/// `Σ c_j k_j` (at least one term).
#[inline(always)]
pub(super) fn sum<S: OdeState>(first: (f64, &S), rest: &[(f64, &S)]) -> S {
    let mut s = first.1.clone();
    s.scale(first.0);
    for &(c, k) in rest {
        s.axpy(c, k);
    }
    s
}

/// An embedded explicit Runge–Kutta pair with dense output.
pub(super) trait Method<S: OdeState> {
    /// The stages kept for the dense output.
    type Stages;
    /// The dense output's coefficients of one step.
    type Dense;
    /// The exponent of the step-size controller, `1/(q + 1)` for an error estimate of
    /// order `q` (Hairer: 1/5 for dopri5, 1/8 for dop853).
    const EXPONENT: f64;
    /// Whether [`Method::dense`] needs the right-hand side at the step's end.
    const DENSE_NEEDS_END: bool;

    /// The stages of the step `step`.
    fn trial<Sys: OdeSystem<S>>(
        sys: &mut Sys,
        stats: &mut Stats,
        step: &Step<'_, S>,
    ) -> Result<Trial<S, Self::Stages>, OdeError<Sys::Error>>;

    /// The dense output of the accepted step `step` to `y1` (`f_end`: the right-hand side
    /// at the step's end where [`Method::DENSE_NEEDS_END`]).
    fn dense<Sys: OdeSystem<S>>(
        sys: &mut Sys,
        stats: &mut Stats,
        step: &Step<'_, S>,
        y1: &S,
        f_end: Option<&S>,
        stages: &Self::Stages,
    ) -> Result<Self::Dense, OdeError<Sys::Error>>;

    /// The dense output at the fraction `s` of the step from `y`.
    fn interpolate(y: &S, dense: &Self::Dense, s: f64) -> S;
}

/// Adaptive integration of `sys` by the method `M` (see [`super::dopri5`] for the
/// contract).
pub(super) fn integrate<S: OdeState, Sys: OdeSystem<S>, M: Method<S>>(
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
            M::EXPONENT,
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

        let step = Step {
            t,
            y: &y,
            k1: &k1,
            h,
            t_new,
            rtol,
            atol,
        };
        let Trial {
            y1,
            f1,
            err,
            stages,
        } = M::trial(sys, &mut stats, &step)?;
        let finite = err.is_finite() && all_finite(&y1) && f1.as_ref().is_none_or(all_finite);

        if !(finite && err <= 1.0) {
            stats.rejected += 1;
            last_rejected = true;
            h *= shrink(if finite { err } else { f64::NAN }, opts, M::EXPONENT);
            continue;
        }
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
            h *= shrink(perr, opts, M::EXPONENT);
            continue;
        }
        stats.max_projection = stats.max_projection.max(perr);
        let control = sys
            .accept(t, &y, t_new, &y_acc)
            .map_err(|source| OdeError::System { t: t_new, source })?;
        if control == StepControl::StopBefore {
            return Ok(out.finish(stats, Some((t, y)), None));
        }
        // The right-hand side at the accepted state: the method's last stage where the
        // projection left the state alone, else evaluated when first needed.
        let mut f_end = if moved { None } else { f1 };
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
        if !crossing.is_empty() {
            let fe = end_rhs::<S, Sys, M>(sys, &mut stats, &mut f_end, t_new, &y_acc)?;
            let dense = M::dense(sys, &mut stats, &step, &y1, fe, &stages)?;
            if let Some((s, k)) =
                locate_event::<S, Sys, M>(sys, t, h, t_new, &y, &dense, &crossing)?
            {
                let te = t + s * h;
                stats.steps += 1;
                while let Some(to) = out.due(te, false) {
                    let mut yo = M::interpolate(&y, &dense, (to - t) / h);
                    project(sys, &mut stats, to, &mut yo)?;
                    out.push(to, yo);
                }
                let mut ye = M::interpolate(&y, &dense, s);
                project(sys, &mut stats, te, &mut ye)?;
                return Ok(out.finish(stats, Some((te, ye)), Some(k)));
            }
        }
        stats.steps += 1;
        // Dense output only when an output time falls inside this step.
        let dense = if out.due(t_new, false).is_some() {
            let fe = end_rhs::<S, Sys, M>(sys, &mut stats, &mut f_end, t_new, &y_acc)?;
            Some(M::dense(sys, &mut stats, &step, &y1, fe, &stages)?)
        } else {
            None
        };
        while let Some(to) = out.due(t_new, true) {
            let yo = match &dense {
                Some(dense) if to != t_new => {
                    let mut yo = M::interpolate(&y, dense, (to - t) / h);
                    project(sys, &mut stats, to, &mut yo)?;
                    yo
                }
                _ => y_acc.clone(),
            };
            out.push(to, yo);
        }
        if control == StepControl::StopAfter {
            return Ok(out.finish(stats, Some((t_new, y_acc)), None));
        }
        k1 = match f_end {
            Some(f) => f,
            None => {
                let k = eval(sys, &mut stats, t_new, &y_acc)?;
                if !all_finite(&k) {
                    return Err(OdeError::NonFinite { t: t_new });
                }
                k
            }
        };
        t = t_new;
        y = y_acc;
        // The next step answers for the projection too.
        let err = err.max(perr);
        let mut fac = if err == 0.0 {
            opts.fac_max
        } else {
            (opts.safety * err.powf(-M::EXPONENT)).clamp(opts.fac_min, opts.fac_max)
        };
        if last_rejected {
            fac = fac.min(1.0);
        }
        last_rejected = false;
        h *= fac;
    }
    Ok(out.finish(stats, None, None))
}

/// The right-hand side at the step's end for a dense output that needs it (`None` for a
/// method whose dense output does not), evaluated at the accepted state if not yet known.
fn end_rhs<'a, S: OdeState, Sys: OdeSystem<S>, M: Method<S>>(
    sys: &mut Sys,
    stats: &mut Stats,
    f_end: &'a mut Option<S>,
    t_new: f64,
    y_acc: &S,
) -> Result<Option<&'a S>, OdeError<Sys::Error>> {
    if !M::DENSE_NEEDS_END {
        return Ok(None);
    }
    if f_end.is_none() {
        let k = eval(sys, stats, t_new, y_acc)?;
        if !all_finite(&k) {
            return Err(OdeError::NonFinite { t: t_new });
        }
        *f_end = Some(k);
    }
    Ok(f_end.as_ref())
}

/// The factor a rejected step is shrunk by: `safety · err^(−exponent)` within
/// `[fac_min, 1]`, `fac_min` for a non-finite error.
fn shrink(err: f64, opts: &Dopri5Options, exponent: f64) -> f64 {
    if err.is_finite() {
        (opts.safety * err.powf(-exponent)).clamp(opts.fac_min, 1.0)
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

/// The earliest root inside the step `(t, t + h)` of the event components `crossing` (each
/// positive at the step's start, not at its end): bisection on the dense output, to a few
/// ulp of the time. Returns the fraction of the step (on the non-positive side) and the
/// component.
fn locate_event<S: OdeState, Sys: OdeSystem<S>, M: Method<S>>(
    sys: &mut Sys,
    t: f64,
    h: f64,
    t_new: f64,
    y: &S,
    dense: &M::Dense,
    crossing: &[usize],
) -> Result<Option<(f64, usize)>, OdeError<Sys::Error>> {
    let mut first: Option<(f64, usize)> = None;
    for &k in crossing {
        // Bisection on the dense output: lo keeps the component positive.
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            let ym = M::interpolate(y, dense, mid);
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

/// Initial step size (Hairer, Nørsett & Wanner, "Solving ODEs I", II.4), for a method
/// of order `1/exponent`.
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
    exponent: f64,
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
        (0.01 / dmax).powf(exponent)
    };
    Ok((100.0 * h0).min(h1).min(h_limit))
}

/// The Dormand–Prince dense output at the fraction `s` of a step from `y`, from its
/// coefficients `c`: `y + s (c₀ + s₁ (c₁ + s (c₂ + s₁ (c₃ + …))))`, `s₁ = 1 − s` (the
/// factor in front of `cᵢ` is `s` for even `i`, `s₁` for odd; Hairer's `contd5`/`contd8`).
pub(super) fn interpolate_alternating<S: OdeState>(y: &S, c: &[S], s: f64) -> S {
    let s1 = 1.0 - s;
    let factor = |i: usize| if i.is_multiple_of(2) { s } else { s1 };
    let Some((last, rest)) = c.split_last() else {
        return y.clone();
    };
    let mut acc = last.clone();
    for (i, ci) in rest.iter().enumerate().rev() {
        let mut next = ci.clone();
        next.axpy(factor(i + 1), &acc);
        acc = next;
    }
    let mut out = y.clone();
    out.axpy(factor(0), &acc);
    out
}
