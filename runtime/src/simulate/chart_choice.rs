//! The projection route's chart choice: the switch and return thresholds, the chart to
//! continue with at a configuration, and the consistent velocity where the generated chart
//! is singular.

use super::*;
use crate::linalg::DependentFactor;

/// The chart health below which the projection method switches charts for model `M`:
/// `opts.switch_threshold`, or a tenth of the model's typical health
/// ([`Mechanism::TYPICAL_HEALTH`]) where that is lower — health figures are relative to
/// the Frobenius norm of all pivot rows, so large models have small healthy figures (the
/// Stewart platform's is ~0.01 near its nominal pose, where a fixed 1e-2 sent half its
/// runs to the numeric chart) — but never below `opts.pivot_threshold`.
///
/// [`Mechanism::TYPICAL_HEALTH`]: crate::Mechanism::TYPICAL_HEALTH
pub(crate) fn switch_threshold<M, const NQ: usize, const NC: usize, const DOF: usize>(
    opts: &SimOptions,
) -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    // `f64::min`/`max` take the option over a NaN typical health.
    opts.switch_threshold
        .min(0.1 * M::TYPICAL_HEALTH)
        .max(opts.pivot_threshold)
}

/// The generated chart's health from which the projection method takes it back after a
/// switch away from it: half its typical health ([`Mechanism::TYPICAL_HEALTH`]), kept
/// within 2 and 10 times the [`switch_threshold`] (hysteresis; a fixed 10 times was never
/// reached on the Stewart platform, and a run that left the generated chart took the
/// numeric one to its end).
///
/// [`Mechanism::TYPICAL_HEALTH`]: crate::Mechanism::TYPICAL_HEALTH
pub(super) fn return_threshold<M, const NQ: usize, const NC: usize, const DOF: usize>(
    opts: &SimOptions,
) -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    let s = switch_threshold::<M, NQ, NC, DOF>(opts);
    // Not `clamp` (which panics on NaN): `f64::max` takes the bound over a NaN.
    (0.5 * M::TYPICAL_HEALTH).max(2.0 * s).min(10.0 * s)
}

/// The chart to continue with at `q`: the generated one when its health is at least the
/// switch threshold, else the healthiest healthy chart of the pivot atlas, else the one
/// chosen by a complete-pivoting LU of the row-scaled `C_J` — unless the generated chart is
/// about as healthy as that one by the same measure ([`GENERATED_KEEP_RATIO`]), when the
/// generated one is kept; with its health (the figure [`chart_health`] gives for it).
pub(super) fn choose_chart<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &SimOptions,
) -> Result<(Chart<DOF>, f64), SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    // No chart is chosen from a NaN: every health comparison would be false.
    if !linalg::finite(q.as_slice()) {
        return Err(SimError::Kinematics(KinematicsError::NonFinite {
            what: "q at a chart choice",
            t,
        }));
    }
    let generated = Chart::generated::<M, NQ, NC>()?;
    let switch = switch_threshold::<M, NQ, NC, DOF>(opts);
    let h = chart_health::<M, NQ, NC, DOF>(&generated, q, p, t);
    if h >= switch {
        return Ok((generated, h));
    }
    // The generated charts of the pivot atlas next: the healthiest of them, when healthy.
    let mut atlas: Option<(Chart<DOF>, f64)> = None;
    for ind in M::ATLAS_CHARTS {
        let chart = Chart::new(NQ, *ind)?;
        let ha = chart_health::<M, NQ, NC, DOF>(&chart, q, p, t);
        if ha >= switch && atlas.as_ref().is_none_or(|(_, b)| ha > *b) {
            atlas = Some((chart, ha));
        }
    }
    if let Some(found) = atlas {
        return Ok(found);
    }
    let (chart, rank_health) = best_chart::<M, NQ, NC, DOF>(q, p, t)?;
    let h_best = chart_health::<M, NQ, NC, DOF>(&chart, q, p, t);
    if h_best < opts.pivot_threshold || rank_health < opts.pivot_threshold {
        return Err(SimError::NoHealthyPartition {
            t,
            health: h_best.min(rank_health),
        });
    }
    if h >= opts.pivot_threshold
        && generated_as_healthy::<M, NQ, NC, DOF>(&generated, &chart, q, p, t)
    {
        return Ok((generated, h));
    }
    Ok((chart, h_best))
}

/// The projection route's chart choice keeps the generated chart, below the switch
/// threshold, where its numeric health (`min |U_kk| / max |U_kk|` of a full-pivot LU of the
/// dependent Jacobian columns: both charts measured alike) is at least this
/// fraction of that of the chart the complete-pivoting LU picks: a switch there gains no
/// conditioning worth a numeric factorisation per right-hand side in place of the
/// generated code. (The generated code's own health figure is on another scale: A02 with
/// 40 windows switched, near each flat position, from its generated chart to another crank
/// angle whose dependent block was exactly as well conditioned — the constraints lose rank
/// there, every chart degrades alike — and paid an 80 × 80 LU per right-hand side for it.)
pub const GENERATED_KEEP_RATIO: f64 = 0.5;

/// Whether `generated` (the generated chart) is at least [`GENERATED_KEEP_RATIO`] times as
/// healthy as `other` at `q` by their numeric health, and its null-space basis `D` (largest
/// column norm) at most `1 / GENERATED_KEEP_RATIO` times as large as `other`'s (two LUs, two
/// solves: at a chart choice only).
///
/// The basis tells a rank drop the generated chart passes from a turning point of its own
/// independent coordinates that coincides with it: on a branch through a rank drop the
/// chart's basis (the branch's tangent) stays bounded where every chart's dependent block
/// degrades alike (A02's flat positions: each crank angle carries the motion), while at a
/// turning point of the chart the basis grows as `1 / health` — the independent velocity
/// vanishes while the motion does not. (Two Cartesian pendulums coupled by `x₂ = x₁`,
/// `x₁` independent: both `y` cross 0 together, a rank drop, where `x₁` turns. The numeric
/// healths of the `x₁` and `y₁` charts are equal there; kept, the `x₁` chart crept to the
/// point and each jump over it changed the energy by ~5e-4 J.)
pub(super) fn generated_as_healthy<M, const NQ: usize, const NC: usize, const DOF: usize>(
    generated: &Chart<DOF>,
    other: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> bool
where
    M: Mechanism<NQ, NC, DOF>,
{
    if generated == other {
        return true;
    }
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return false;
    }
    let j = linalg::dmatrix(&j);
    let (Some((g, g_norm)), Some((o, o_norm))) = (
        health_and_basis_norm(&j, generated),
        health_and_basis_norm(&j, other),
    ) else {
        return false;
    };
    // Every figure is finite here (`health_and_basis_norm`); a generated chart with health 0
    // is never kept.
    g > 0.0 && g >= GENERATED_KEEP_RATIO * o && GENERATED_KEEP_RATIO * g_norm <= o_norm
}

/// The numeric health of `chart` for the Jacobian `j` (`min |U_kk| / max |U_kk|` of a
/// full-pivot LU of its dependent columns, the figure `chart_health` gives numeric charts)
/// and the largest column norm of its null-space basis `D` (identity rows included: at
/// least 1); `None` where the factorisation or the solve fails or gives non-finite figures.
fn health_and_basis_norm<const DOF: usize>(
    j: &DMatrix<f64>,
    chart: &Chart<DOF>,
) -> Option<(f64, f64)> {
    let f = DependentFactor::new(j, chart.dependent().to_vec())?;
    let x = f.solve(&linalg::columns(j, chart.independent()))?;
    let norm = x
        .column_iter()
        .map(|c| (1.0 + c.norm_squared()).sqrt())
        .fold(1.0, f64::max);
    (f.health.is_finite() && norm.is_finite()).then_some((f.health, norm))
}

/// The consistent velocity at `q` whose generated independent part is `u0`, when the
/// generated chart is singular at `q`: least squares on `[C_J; E] q̇ = [−C_t; u0]`, which
/// must reproduce `u0` (within `1e-9 (1 + |u0|)`).
pub(super) fn velocity_without_chart<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
) -> Result<SVector<f64, NQ>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    let ct = M::jacobian_t(q, p, t);
    let mut a = DMatrix::<f64>::zeros(NC + DOF, NQ);
    let mut b = DMatrix::<f64>::zeros(NC + DOF, 1);
    for i in 0..NC {
        for k in 0..NQ {
            a[(i, k)] = j[(i, k)];
        }
        b[(i, 0)] = -ct[i];
    }
    for (r, &i) in M::INDEPENDENT.iter().enumerate() {
        a[(NC + r, i)] = 1.0;
        b[(NC + r, 0)] = u0[r];
    }
    let (x, _) = linalg::lstsq(&a, &b, 1e-12).ok_or(KinematicsError::DecompositionFailed {
        what: "least-squares initial velocity",
    })?;
    let qd = SVector::<f64, NQ>::from_fn(|i, _| x[(i, 0)]);
    let res = (linalg::dmatrix(&j) * DMatrix::from_column_slice(NQ, 1, qd.as_slice())).norm();
    let ures = M::INDEPENDENT
        .iter()
        .enumerate()
        .map(|(r, &i)| (qd[i] - u0[r]).abs())
        .fold(0.0, f64::max);
    if !(ures <= 1e-9 * (1.0 + u0.amax()) && res.is_finite()) {
        return Err(SimError::Kinematics(KinematicsError::SingularPartition {
            t,
            static_pivot: M::null_space(q, p, t).1,
            health: 0.0,
        }));
    }
    Ok(qd)
}
