//! Explicit ODE integrators: fixed-step classical Runge–Kutta ([`rk4`]), adaptive
//! Dormand–Prince 5(4) with dense output ([`dopri5`]) and adaptive Dormand–Prince 8(5,3)
//! with dense output ([`dop853`], fewer right-hand sides at tight tolerances). The two
//! adaptive methods share one driver (step-size control, projection, outputs, events) and
//! one options struct ([`Dopri5Options`]).
//!
//! All are generic over a small state trait [`OdeState`] (implemented for
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

/// `OdeState` for a vector type of `f64` with `len`, `iter` and `iter_mut`: the same
/// arithmetic for each.
macro_rules! ode_state_for_vector {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> OdeState for $ty {
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
    )*};
}

ode_state_for_vector! {
    [const N: usize] SVector<f64, N>;
    [] DVector<f64>;
    [] Vec<f64>;
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
    /// Event functions of the state (`None`, the default: no events). [`dopri5`] and
    /// [`dop853`] stop at the first time inside an accepted step where a component positive
    /// at the step's start reaches zero, located by bisection on the step's dense output ([`Solution::event`]
    /// names the component; [`Solution::stopped`] holds the time and the projected state).
    fn events(&mut self, _t: f64, _y: &S) -> Result<Option<Vec<f64>>, Self::Error> {
        Ok(None)
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
    /// Rejected steps (error too large, non-finite stage, or — [`dopri5`], [`dop853`] — a
    /// projection that moved the state by more than the tolerance).
    pub rejected: usize,
    /// Evaluations of the right-hand side.
    pub rhs_calls: usize,
    /// Calls of [`OdeSystem::project`].
    pub projections: usize,
    /// [`dopri5`], [`dop853`]: steps rejected because the post-step projection moved the
    /// state by more than the local error tolerance (counted in `rejected` too).
    pub projection_rejections: usize,
    /// [`dopri5`], [`dop853`]: the largest post-step projection correction of an accepted
    /// step, in the weighted RMS norm of the error test (`≤ 1`: within the tolerance). [`rk4`]: the same
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
    /// The event function component that stopped the integration ([`OdeSystem::events`]),
    /// if an event did.
    pub event: Option<usize>,
}

/// Options of [`dopri5`] and [`dop853`].
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
#[inline(never)]
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

mod dop853;
mod dopri5;
mod driver;
mod rk4;

pub use dop853::dop853;
pub(crate) use dop853::dop853_step;
pub use dopri5::dopri5;
pub use rk4::rk4;
