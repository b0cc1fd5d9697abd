//! The classical fourth-order Runge–Kutta method at a fixed step.

use super::{
    all_finite, check_outputs, eval, project, smallest_step, wrms, OdeState, OdeSystem, Rk4Options,
    Solution, Stats, StepControl,
};
use crate::error::OdeError;

/// Integrates with the classical fourth-order Runge–Kutta method at fixed step
/// `opts.h`, reporting the state at each time of `t_out` (ascending, `≥ t0`). Each
/// interval between output times is split into equal steps no longer than `opts.h`; the
/// system's projection runs after every step.
///
/// No error control: the result can be wrong without an error. The size of the
/// projections is reported in [`Stats::max_projection`] (and the simulations report the
/// constraint defect and energy change, [`crate::simulate::SimStats`]): check them, or halve `h` and
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
        event: None,
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
