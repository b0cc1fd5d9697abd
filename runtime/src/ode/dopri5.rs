//! Adaptive Dormand–Prince 5(4) with its fourth-order dense output.

use super::driver::{integrate, sum, Method, Step, Trial};
use super::{eval, wrms, Dopri5Options, OdeState, OdeSystem, Solution, Stats};
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
    integrate::<S, Sys, Dp5>(sys, t0, y0, t_out, opts)
}

/// The Dormand–Prince 5(4) pair ([`Method`]).
struct Dp5;

impl<S: OdeState> Method<S> for Dp5 {
    /// `k1 … k7`.
    type Stages = [S; 7];
    type Dense = [S; 4];
    const EXPONENT: f64 = 0.2;
    const DENSE_NEEDS_END: bool = false;

    fn trial<Sys: OdeSystem<S>>(
        sys: &mut Sys,
        stats: &mut Stats,
        step: &Step<'_, S>,
    ) -> Result<Trial<S, [S; 7]>, OdeError<Sys::Error>> {
        let k1 = step.k1;
        let k2 = step.stage(sys, stats, C2, &[(A21, k1)])?;
        let k3 = step.stage(sys, stats, C3, &[(A31, k1), (A32, &k2)])?;
        let k4 = step.stage(sys, stats, C4, &[(A41, k1), (A42, &k2), (A43, &k3)])?;
        let k5 = step.stage(
            sys,
            stats,
            C5,
            &[(A51, k1), (A52, &k2), (A53, &k3), (A54, &k4)],
        )?;
        let y6 = step.combine(&[(A61, k1), (A62, &k2), (A63, &k3), (A64, &k4), (A65, &k5)]);
        let k6 = eval(sys, stats, step.t_new, &y6)?;
        let y1 = step.combine(&[(A71, k1), (A73, &k3), (A74, &k4), (A75, &k5), (A76, &k6)]);
        let k7 = eval(sys, stats, step.t_new, &y1)?;
        // e = E1 k1 + E3 k3 + ... + E7 k7 (times h below)
        let e = sum(
            (E1, k1),
            &[(E3, &k3), (E4, &k4), (E5, &k5), (E6, &k6), (E7, &k7)],
        );
        let err = step.h * wrms(&e, step.y, &y1, step.rtol, step.atol);
        Ok(Trial {
            y1,
            f1: Some(k7.clone()),
            err,
            stages: [k1.clone(), k2, k3, k4, k5, k6, k7],
        })
    }

    fn dense<Sys: OdeSystem<S>>(
        _sys: &mut Sys,
        _stats: &mut Stats,
        step: &Step<'_, S>,
        y1: &S,
        _f_end: Option<&S>,
        [k1, _, k3, k4, k5, k6, k7]: &[S; 7],
    ) -> Result<[S; 4], OdeError<Sys::Error>> {
        // Hairer's dopri5 continuous extension: `(y1 − y, h k1 − (y1 − y), …)`, its last
        // stage the right-hand side at the step's end (first-same-as-last).
        let [ydiff, bspl, r4] = step.dense_head(y1, k7);
        let h = step.h;
        let r5 = sum(
            (h * D1, k1),
            &[
                (h * D3, k3),
                (h * D4, k4),
                (h * D5, k5),
                (h * D6, k6),
                (h * D7, k7),
            ],
        );
        Ok([ydiff, bspl, r4, r5])
    }

    /// `y + s (ydiff + s1 (bspl + s (r4 + s1 r5)))`, `s1 = 1 − s`.
    fn interpolate(y: &S, dense: &[S; 4], s: f64) -> S {
        super::driver::interpolate_alternating(y, dense, s)
    }
}
