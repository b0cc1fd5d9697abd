//! Explicit ODE integrators: fixed-step classical Runge–Kutta ([`rk4`]) and adaptive
//! Dormand–Prince 5(4) with dense output ([`dopri5`]).
//!
//! Both are generic over a small state trait [`OdeState`] (implemented for
//! `SVector<f64, N>`, `DVector<f64>`, `Vec<f64>` and the two-block [`Pair`]) so that a
//! fixed-size state never allocates in a step. A system is anything implementing
//! [`OdeSystem`]: a closure `FnMut(f64, &S) -> Result<S, E>` works directly; implement the
//! trait by hand to add a projection after every accepted step (used by the
//! projection method to pull the coordinates back onto `C(q) = 0`).
//!
//! (Written here rather than taken from `ode_solvers`, which depends on a different
//! nalgebra, or `diffsol`, which is far heavier than what the runtime needs.)
//!
//! ```
//! use mechgen_runtime::ode::{dopri5, Dopri5Options};
//! use mechgen_runtime::nalgebra::SVector;
//! use std::convert::Infallible;
//!
//! // y' = -y, y(0) = 1
//! let mut f = |_t: f64, y: &SVector<f64, 1>| Ok::<_, Infallible>(-y);
//! let opts = Dopri5Options { rtol: 1e-10, atol: 1e-12, ..Default::default() };
//! let sol = dopri5(&mut f, 0.0, SVector::<f64, 1>::new(1.0), &[1.0, 2.0], &opts)?;
//! assert!((sol.y[1][0] - (-2.0f64).exp()).abs() < 1e-9);
//! # Ok::<(), mechgen_runtime::OdeError<Infallible>>(())
//! ```

use nalgebra::{DVector, SVector};

use crate::error::OdeError;

/// A state vector the integrators can work on.
pub trait OdeState: Clone {
    /// Number of scalar components.
    fn dim(&self) -> usize;
    /// `self += a * x` (componentwise; `x` has the same dimension).
    fn axpy(&mut self, a: f64, x: &Self);
    /// `self *= a`.
    fn scale(&mut self, a: f64);
    /// The scalar components, in a fixed order.
    fn components(&self) -> impl Iterator<Item = f64> + '_;
}

impl<const N: usize> OdeState for SVector<f64, N> {
    fn dim(&self) -> usize {
        N
    }
    fn axpy(&mut self, a: f64, x: &Self) {
        for (s, xi) in self.iter_mut().zip(x.iter()) {
            *s += a * xi;
        }
    }
    fn scale(&mut self, a: f64) {
        for s in self.iter_mut() {
            *s *= a;
        }
    }
    fn components(&self) -> impl Iterator<Item = f64> + '_ {
        self.iter().copied()
    }
}

impl OdeState for DVector<f64> {
    fn dim(&self) -> usize {
        self.len()
    }
    fn axpy(&mut self, a: f64, x: &Self) {
        for (s, xi) in self.iter_mut().zip(x.iter()) {
            *s += a * xi;
        }
    }
    fn scale(&mut self, a: f64) {
        for s in self.iter_mut() {
            *s *= a;
        }
    }
    fn components(&self) -> impl Iterator<Item = f64> + '_ {
        self.iter().copied()
    }
}

impl OdeState for Vec<f64> {
    fn dim(&self) -> usize {
        self.len()
    }
    fn axpy(&mut self, a: f64, x: &Self) {
        for (s, xi) in self.iter_mut().zip(x.iter()) {
            *s += a * xi;
        }
    }
    fn scale(&mut self, a: f64) {
        for s in self.iter_mut() {
            *s *= a;
        }
    }
    fn components(&self) -> impl Iterator<Item = f64> + '_ {
        self.iter().copied()
    }
}

/// A state made of two fixed-size blocks, e.g. coordinates and velocities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair<const A: usize, const B: usize> {
    /// First block (coordinates `q`).
    pub a: SVector<f64, A>,
    /// Second block (velocities `u` or `q̇`).
    pub b: SVector<f64, B>,
}

impl<const A: usize, const B: usize> Pair<A, B> {
    /// Builds a pair from its blocks.
    pub fn new(a: SVector<f64, A>, b: SVector<f64, B>) -> Self {
        Pair { a, b }
    }
}

impl<const A: usize, const B: usize> OdeState for Pair<A, B> {
    fn dim(&self) -> usize {
        A + B
    }
    fn axpy(&mut self, s: f64, x: &Self) {
        self.a.axpy(s, &x.a, 1.0);
        self.b.axpy(s, &x.b, 1.0);
    }
    fn scale(&mut self, s: f64) {
        self.a *= s;
        self.b *= s;
    }
    fn components(&self) -> impl Iterator<Item = f64> + '_ {
        self.a.iter().chain(self.b.iter()).copied()
    }
}

/// An ODE `y' = f(t, y)` with an optional projection applied after every accepted step
/// (and to every output point).
pub trait OdeSystem<S: OdeState> {
    /// Error of the right-hand side or of the projection.
    type Error;
    /// Evaluates `f(t, y)`.
    fn rhs(&mut self, t: f64, y: &S) -> Result<S, Self::Error>;
    /// Projects an accepted state (e.g. onto a constraint manifold). Default: no-op.
    fn project(&mut self, _t: f64, _y: &mut S) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Called after each accepted (and projected) step from `(t_prev, y_prev)` to `(t, y)`,
    /// before the outputs inside the step are produced: [`StepControl::Continue`] (the
    /// default) carries on, the other two end the integration early with
    /// [`Solution::stopped`] set (e.g. to change the system's coordinates and restart).
    fn accept(
        &mut self,
        _t_prev: f64,
        _y_prev: &S,
        _t: f64,
        _y: &S,
    ) -> Result<StepControl, Self::Error> {
        Ok(StepControl::Continue)
    }
}

/// What an integrator does after an accepted step ([`OdeSystem::accept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepControl {
    /// Carry on.
    Continue,
    /// Keep the step (and the outputs inside it), then stop at its end.
    StopAfter,
    /// Discard the step and stop at its start (outputs after it are not produced).
    StopBefore,
}

impl<S, E, F> OdeSystem<S> for F
where
    S: OdeState,
    F: FnMut(f64, &S) -> Result<S, E>,
{
    type Error = E;
    fn rhs(&mut self, t: f64, y: &S) -> Result<S, E> {
        self(t, y)
    }
}

/// Counters of an integration.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected steps (error too large, non-finite stage, or — [`dopri5`] — a projection
    /// that moved the state by more than the tolerance).
    pub rejected: usize,
    /// Evaluations of the right-hand side.
    pub rhs_calls: usize,
    /// Calls of [`OdeSystem::project`].
    pub projections: usize,
    /// [`dopri5`]: steps rejected because the post-step projection moved the state by more
    /// than the local error tolerance (counted in `rejected` too).
    pub projection_rejections: usize,
    /// [`dopri5`]: the largest post-step projection correction of an accepted step, in the
    /// weighted RMS norm of the error test (`≤ 1`: within the tolerance). [`rk4`]: the same
    /// norm with `rtol = 1e-6`, `atol = 1e-9` (reported only; a fixed step cannot react).
    pub max_projection: f64,
}

/// States at the requested output times.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution<S> {
    /// Output times (as requested).
    pub t: Vec<f64>,
    /// State at each output time.
    pub y: Vec<S>,
    /// Counters.
    pub stats: Stats,
    /// Where the integration ended early because [`OdeSystem::accept`] asked it to: the
    /// time and state (outputs up to that time are in `t`, `y`). `None` when it reached
    /// the last output time.
    pub stopped: Option<(f64, S)>,
}

/// Options of [`dopri5`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dopri5Options {
    /// Relative tolerance (per component).
    pub rtol: f64,
    /// Absolute tolerance (per component).
    pub atol: f64,
    /// Initial step; `None` selects one automatically (Hairer–Nørsett–Wanner's `hinit`).
    pub h0: Option<f64>,
    /// Largest step allowed.
    pub h_max: f64,
    /// Largest number of steps (accepted + rejected).
    pub max_steps: usize,
    /// Safety factor of the step-size controller.
    pub safety: f64,
    /// Smallest factor by which one step may shrink the step size.
    pub fac_min: f64,
    /// Largest factor by which one step may grow the step size.
    pub fac_max: f64,
}

impl Default for Dopri5Options {
    fn default() -> Self {
        Dopri5Options {
            rtol: 1e-6,
            atol: 1e-9,
            h0: None,
            h_max: f64::INFINITY,
            max_steps: 100_000,
            safety: 0.9,
            fac_min: 0.2,
            fac_max: 10.0,
        }
    }
}

/// Options of [`rk4`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rk4Options {
    /// Largest step size (each interval between output times is split into equal steps).
    pub h: f64,
    /// Largest number of steps.
    pub max_steps: usize,
}

impl Default for Rk4Options {
    fn default() -> Self {
        Rk4Options {
            h: 1e-3,
            max_steps: 10_000_000,
        }
    }
}

fn all_finite<S: OdeState>(y: &S) -> bool {
    y.components().all(f64::is_finite)
}

fn smallest_step(t: f64) -> f64 {
    16.0 * f64::EPSILON * t.abs().max(f64::MIN_POSITIVE)
}

fn check_outputs<E>(t0: f64, t_out: &[f64]) -> Result<f64, OdeError<E>> {
    if !t0.is_finite() {
        return Err(OdeError::InvalidOptions("initial time is not finite"));
    }
    let Some(&t_end) = t_out.last() else {
        return Err(OdeError::InvalidOptions("no output times requested"));
    };
    let mut prev = t0;
    for &t in t_out {
        if !t.is_finite() || t < prev {
            return Err(OdeError::InvalidOptions(
                "output times must be finite, ascending and not before the initial time",
            ));
        }
        prev = t;
    }
    Ok(t_end)
}

fn eval<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    stats: &mut Stats,
    t: f64,
    y: &S,
) -> Result<S, OdeError<Sys::Error>> {
    stats.rhs_calls += 1;
    let dy = sys
        .rhs(t, y)
        .map_err(|source| OdeError::System { t, source })?;
    if dy.dim() != y.dim() {
        return Err(OdeError::InvalidOptions(
            "right-hand side returned a state of a different dimension",
        ));
    }
    Ok(dy)
}

fn project<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    stats: &mut Stats,
    t: f64,
    y: &mut S,
) -> Result<(), OdeError<Sys::Error>> {
    stats.projections += 1;
    sys.project(t, y)
        .map_err(|source| OdeError::System { t, source })?;
    if !all_finite(y) {
        return Err(OdeError::NonFinite { t });
    }
    Ok(())
}

/// Weighted RMS norm `sqrt(mean((x_i / (atol + rtol max(|a_i|, |b_i|)))²))`.
fn wrms<S: OdeState>(x: &S, a: &S, b: &S, rtol: f64, atol: f64) -> f64 {
    let n = x.dim().max(1) as f64;
    let sum: f64 = x
        .components()
        .zip(a.components())
        .zip(b.components())
        .map(|((xi, ai), bi)| {
            let sc = atol + rtol * ai.abs().max(bi.abs());
            let r = xi / sc;
            r * r
        })
        .sum();
    (sum / n).sqrt()
}

/// Integrates with the classical fourth-order Runge–Kutta method at fixed step
/// `opts.h`, reporting the state at each time of `t_out` (ascending, `≥ t0`). Each
/// interval between output times is split into equal steps no longer than `opts.h`; the
/// system's projection runs after every step.
///
/// No error control: the result can be wrong without an error. The size of the
/// projections is reported in [`Stats::max_projection`] (and the simulations report the
/// constraint defect and energy change, [`crate::SimStats`]): check them, or halve `h` and
/// compare.
///
/// ```
/// use mechgen_runtime::ode::{rk4, Rk4Options};
/// use std::convert::Infallible;
///
/// let mut f = |_t: f64, y: &Vec<f64>| Ok::<_, Infallible>(vec![-y[0]]);
/// let sol = rk4(&mut f, 0.0, vec![1.0], &[1.0], &Rk4Options { h: 0.01, ..Default::default() })?;
/// assert!((sol.y[0][0] - (-1.0f64).exp()).abs() < 1e-9);
/// # Ok::<(), mechgen_runtime::OdeError<Infallible>>(())
/// ```
pub fn rk4<S: OdeState, Sys: OdeSystem<S>>(
    sys: &mut Sys,
    t0: f64,
    y0: S,
    t_out: &[f64],
    opts: &Rk4Options,
) -> Result<Solution<S>, OdeError<Sys::Error>> {
    check_outputs::<Sys::Error>(t0, t_out)?;
    if !(opts.h.is_finite() && opts.h > 0.0) {
        return Err(OdeError::InvalidOptions(
            "step size must be positive and finite",
        ));
    }
    if !all_finite(&y0) {
        return Err(OdeError::NonFinite { t: t0 });
    }
    let mut stats = Stats::default();
    let mut sol = Solution {
        t: Vec::with_capacity(t_out.len()),
        y: Vec::with_capacity(t_out.len()),
        stats,
        stopped: None,
    };
    let mut t = t0;
    let mut y = y0;
    for &t_target in t_out {
        // Equal steps no longer than `opts.h` that land exactly on the output time.
        let span = t_target - t;
        let n = (span / opts.h - 1e-9).ceil().max(1.0);
        let h_seg = span / n;
        let t_start = t;
        let mut i = 0.0;
        while t < t_target {
            if stats.steps >= opts.max_steps {
                return Err(OdeError::MaxSteps {
                    t,
                    steps: stats.steps,
                });
            }
            i += 1.0;
            let t_next = if i >= n {
                t_target
            } else {
                t_start + i * h_seg
            };
            let h = t_next - t;
            if h < smallest_step(t) {
                return Err(OdeError::StepSizeUnderflow { t, h });
            }
            let k1 = eval(sys, &mut stats, t, &y)?;
            let mut y2 = y.clone();
            y2.axpy(0.5 * h, &k1);
            let k2 = eval(sys, &mut stats, t + 0.5 * h, &y2)?;
            let mut y3 = y.clone();
            y3.axpy(0.5 * h, &k2);
            let k3 = eval(sys, &mut stats, t + 0.5 * h, &y3)?;
            let mut y4 = y.clone();
            y4.axpy(h, &k3);
            let k4 = eval(sys, &mut stats, t_next, &y4)?;
            let mut y1 = y.clone();
            y1.axpy(h / 6.0, &k1);
            y1.axpy(h / 3.0, &k2);
            y1.axpy(h / 3.0, &k3);
            y1.axpy(h / 6.0, &k4);
            if !all_finite(&y1) {
                return Err(OdeError::NonFinite { t: t_next });
            }
            let y_unprojected = y1.clone();
            project(sys, &mut stats, t_next, &mut y1)?;
            let mut dy = y1.clone();
            dy.axpy(-1.0, &y_unprojected);
            let perr = wrms(&dy, &y, &y_unprojected, 1e-6, 1e-9);
            stats.max_projection = if perr.is_nan() {
                f64::NAN
            } else {
                stats.max_projection.max(perr)
            };
            let control = sys
                .accept(t, &y, t_next, &y1)
                .map_err(|source| OdeError::System { t: t_next, source })?;
            if control == StepControl::StopBefore {
                sol.stats = stats;
                sol.stopped = Some((t, y));
                return Ok(sol);
            }
            stats.steps += 1;
            t = t_next;
            y = y1;
            if control == StepControl::StopAfter {
                if t >= t_target {
                    sol.t.push(t_target);
                    sol.y.push(y.clone());
                }
                sol.stats = stats;
                sol.stopped = Some((t, y));
                return Ok(sol);
            }
        }
        sol.t.push(t_target);
        sol.y.push(y.clone());
    }
    sol.stats = stats;
    Ok(sol)
}

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
            let dense = if needs_dense {
                let mut ydiff = y1.clone();
                ydiff.axpy(-1.0, &y);
                // bspl = h k1 - ydiff
                let mut bspl = k1.clone();
                bspl.scale(h);
                bspl.axpy(-1.0, &ydiff);
                // r4 = ydiff - h k7 - bspl
                let mut r4 = ydiff.clone();
                r4.axpy(-h, &k7);
                r4.axpy(-1.0, &bspl);
                // r5 = h (D1 k1 + D3 k3 + ... + D7 k7)
                let mut r5 = k1.clone();
                r5.scale(h * D1);
                r5.axpy(h * D3, &k3);
                r5.axpy(h * D4, &k4);
                r5.axpy(h * D5, &k5);
                r5.axpy(h * D6, &k6);
                r5.axpy(h * D7, &k7);
                Some((ydiff, bspl, r4, r5))
            } else {
                None
            };
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
                } else if let Some((ydiff, bspl, r4, r5)) = &dense {
                    let s = (to - t) / h;
                    let s1 = 1.0 - s;
                    // y(s) = y + s (ydiff + s1 (bspl + s (r4 + s1 r5)))
                    let mut inner = r4.clone();
                    inner.axpy(s1, r5);
                    let mut mid = bspl.clone();
                    mid.axpy(s, &inner);
                    let mut outer = ydiff.clone();
                    outer.axpy(s1, &mid);
                    let mut yo = y_prev.clone();
                    yo.axpy(s, &outer);
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
    })
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
