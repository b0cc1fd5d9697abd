//! Projections to rounding near a singular chart (the projection route's stages, accepted
//! states, restarts and a jump's landing: see `ProjectionSystem::project_stages`), and the
//! integrator scale the post-step projection aims at.

use super::*;

/// Newton iterations of a stage's projection ([`project_stage`]; from within a step's local
/// error, two or three reach rounding).
pub(super) const STAGE_PROJECTION_ITERATIONS: usize = 3;

/// A stage's coordinates `q` projected onto the constraints in `chart` (independent ones
/// held) to rounding, and the Newton steps taken: up to [`STAGE_PROJECTION_ITERATIONS`]
/// steps, each kept only while it lowers `‖C‖` (no line search: at rounding a step that does
/// not lower it ends the iteration). Generated chart: the generated dependent solve (where
/// its static pivot is trusted); other charts: [`assemble_in`] to the assembly tolerance.
/// `None` where the projection fails (a singular chart at `q`, non-finite values).
pub(super) fn project_stage<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &SimOptions,
) -> Option<(SVector<f64, NQ>, usize)>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if !(chart.is_generated::<M, NQ, NC>() && M::VELOCITY_ROWS == 0) {
        return assemble_in::<M, NQ, NC, DOF>(chart, q, p, t, &opts.assembly)
            .ok()
            .map(|a| (a.q, a.iterations));
    }
    let mut q = *q;
    let mut c = M::residual(&q, p, t);
    let mut norm = c.norm();
    if !norm.is_finite() {
        return None;
    }
    let mut iterations = 0;
    while iterations < STAGE_PROJECTION_ITERATIONS && norm > 0.0 {
        // (A NaN pivot is no trusted pivot either.)
        let pivot = M::null_space(&q, p, t).1;
        if pivot.is_nan() || pivot < opts.pivot_threshold {
            return None;
        }
        let mut x = M::solve_dependent(&q, p, t, &c);
        for &i in M::INDEPENDENT.iter() {
            x[i] = 0.0;
        }
        let q_try = q - x;
        let c_try = M::residual(&q_try, p, t);
        let n_try = c_try.norm();
        iterations += 1;
        // (A NaN residual ends the iteration as one that does not fall.)
        if n_try.is_nan() || n_try >= norm {
            break;
        }
        (q, c, norm) = (q_try, c_try, n_try);
    }
    // Still far off after the steps: not a state this projection can serve.
    (norm <= opts.assembly.tol).then_some((q, iterations))
}

/// The integrator's smallest error scale `atol + rtol·min_i |q_i|` at `q` (DOPRI5; 0 for the
/// fixed-step RK4, which controls no error), the target of the post-step projection's
/// tightening in [`ProjectionSystem`].
pub(super) fn integrator_scale<const NQ: usize>(
    integrator: &Integrator,
    q: &SVector<f64, NQ>,
) -> f64 {
    match integrator {
        Integrator::Dopri5(o) | Integrator::Dop853(o) => {
            let s = o.atol + o.rtol * q.amin();
            if s.is_finite() {
                s
            } else {
                0.0
            }
        }
        Integrator::Rk4(_) => 0.0,
    }
}

/// Whether the change `dq` of `q` is within the integrator's error scale
/// `atol + rtol·|q_i|` in every coordinate (false for NaN; RK4: never).
pub(super) fn within_scale<const NQ: usize>(
    integrator: &Integrator,
    dq: &SVector<f64, NQ>,
    q: &SVector<f64, NQ>,
) -> bool {
    match integrator {
        Integrator::Dopri5(o) | Integrator::Dop853(o) => dq
            .iter()
            .zip(q.iter())
            .all(|(d, x)| d.abs() <= o.atol + o.rtol * x.abs()),
        Integrator::Rk4(_) => false,
    }
}

/// The fraction of the assembly tolerance beyond which the residual of an accepted state
/// near a singular chart makes the projection route restart from it, polished (see
/// `ProjectionSystem::accept`).
pub(super) const DRIFT_RESTART: f64 = 0.25;

/// Newton iterations of the post-step projection's tightening (from a residual below the
/// assembly tolerance, one or two reach rounding).
pub(super) const TIGHTEN_ITERATIONS: usize = 2;
