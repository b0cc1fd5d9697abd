//! Newton assembly: solve `C(q, p, t) = 0` for the dependent coordinates with the
//! independent ones ([`Mechanism::INDEPENDENT`]) held fixed.
//!
//! Each Newton step is `q ← q − α x` with `x` the zero-independent-part solution of
//! `C_J x = C`. It comes from the generated [`Mechanism::solve_dependent`] while the static
//! pivots are healthy, and from a numeric least-squares solve (nalgebra SVD of the
//! dependent columns of [`Mechanism::jacobian`]) when the smallest relative pivot falls
//! below the threshold or a static step fails to reduce `‖C‖`. A backtracking line search
//! (`α = 1, ½, ¼, …`) keeps `‖C‖` decreasing.
//!
//! Only the holonomic rows of `C_J` enter a position step: a model's velocity constraints
//! (its last [`Mechanism::VELOCITY_ROWS`] rows) restrict velocities, not configurations, and
//! a coordinate that no holonomic row involves keeps its value exactly (the Whipple
//! bicycle's pitch is assembled without turning its yaw, its wheels or moving its contact
//! point). With velocity rows the steps are the numeric ones (the generated dependent solve
//! uses every row).

use nalgebra::{DMatrix, SVector};

use crate::error::{largest_entries, AssemblyError, Located};
use crate::linalg;
use crate::mechanism::Mechanism;
use crate::null_space::DEFAULT_PIVOT_THRESHOLD;
use crate::null_space::{best_chart, valid_threshold, Chart};

/// Options of [`assemble`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AssemblyOptions {
    /// Convergence when the Euclidean norm `‖C(q)‖ ≤ tol`.
    pub tol: f64,
    /// Largest number of Newton steps.
    pub max_iterations: usize,
    /// Smallest relative static pivot for which the generated solve is trusted.
    pub pivot_threshold: f64,
}

impl Default for AssemblyOptions {
    fn default() -> Self {
        AssemblyOptions {
            tol: 1e-12,
            max_iterations: 50,
            pivot_threshold: DEFAULT_PIVOT_THRESHOLD,
        }
    }
}

/// A converged assembly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assembly<const NQ: usize> {
    /// Coordinates with `‖C(q)‖ ≤ tol`; independent coordinates equal to the input's.
    pub q: SVector<f64, NQ>,
    /// Newton steps taken.
    pub iterations: usize,
    /// `‖C(q)‖` (Euclidean).
    pub residual_norm: f64,
    /// Whether any step used the numeric fallback.
    pub used_numeric: bool,
}

const LINE_SEARCH_HALVINGS: usize = 30;

/// The Newton step `q − α x` with the largest `α` among 1, ½, ¼, … (at most
/// [`LINE_SEARCH_HALVINGS`] halvings) whose residual norm is finite and below `norm`: the new
/// coordinates, their residual and its norm, or `None` where no such step exists.
fn line_search<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    x: &SVector<f64, NQ>,
    norm: f64,
    p: &M::Params,
    t: f64,
) -> Option<(SVector<f64, NQ>, SVector<f64, NC>, f64)>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let mut alpha = 1.0;
    for _ in 0..LINE_SEARCH_HALVINGS {
        let q_try = q - x * alpha;
        let c_try = M::residual(&q_try, p, t);
        let n_try = c_try.norm();
        if n_try.is_finite() && n_try < norm {
            return Some((q_try, c_try, n_try));
        }
        alpha *= 0.5;
    }
    None
}

/// Solves `C(q, p, t) = 0` for the dependent coordinates starting from `q0`, whose
/// independent coordinates are kept.
///
/// Errors: [`AssemblyError::NonFinite`] for a non-finite input or residual,
/// [`AssemblyError::SingularJacobian`] when the dependent columns are singular and the
/// residual cannot be reduced, [`AssemblyError::NotConverged`] when the iteration limit is
/// reached or the residual stops decreasing above the tolerance,
/// [`AssemblyError::InvalidOptions`].
///
/// ```
/// use mechgen_runtime::assemble::{assemble, AssemblyOptions};
/// use mechgen_runtime::nalgebra::{SMatrix, SVector};
/// use mechgen_runtime::Mechanism;
///
/// /// Point on the unit circle, x independent.
/// struct Circle;
/// impl Mechanism<2, 1, 1> for Circle {
///     type Params = ();
///     const NAME: &'static str = "circle";
///     const COORD_NAMES: [&'static str; 2] = ["x", "y"];
///     const INDEPENDENT: [usize; 1] = [0];
///     fn nominal_q() -> SVector<f64, 2> { SVector::<f64, 2>::new(0.6, 0.8) }
///     fn residual(q: &SVector<f64, 2>, _: &(), _: f64) -> SVector<f64, 1> {
///         SVector::<f64, 1>::new(q[0] * q[0] + q[1] * q[1] - 1.0)
///     }
///     fn jacobian(q: &SVector<f64, 2>, _: &(), _: f64) -> SMatrix<f64, 1, 2> {
///         SMatrix::<f64, 1, 2>::new(2.0 * q[0], 2.0 * q[1])
///     }
///     fn jacobian_t(_: &SVector<f64, 2>, _: &(), _: f64) -> SVector<f64, 1> { SVector::zeros() }
///     fn null_space(q: &SVector<f64, 2>, _: &(), _: f64) -> (SMatrix<f64, 2, 1>, f64) {
///         let piv = q[1].abs() / q[0].abs().max(q[1].abs());
///         (SMatrix::<f64, 2, 1>::new(1.0, -q[0] / q[1]), piv)
///     }
///     fn solve_dependent(q: &SVector<f64, 2>, _: &(), _: f64, b: &SVector<f64, 1>) -> SVector<f64, 2> {
///         SVector::<f64, 2>::new(0.0, b[0] / (2.0 * q[1]))
///     }
/// }
///
/// let a = assemble::<Circle, 2, 1, 1>(&SVector::<f64, 2>::new(0.6, 1.0), &(), 0.0, &AssemblyOptions::default())?;
/// assert!((a.q[1] - 0.8).abs() < 1e-12 && a.q[0] == 0.6);
/// # Ok::<(), mechgen_runtime::AssemblyError>(())
/// ```
pub fn assemble<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &AssemblyOptions,
) -> Result<Assembly<NQ>, AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let task = Task {
        p,
        t,
        opts,
        independent: &M::INDEPENDENT,
    };
    assemble_core::<M, NQ, NC, DOF>(q0, &task, true)
}

/// [`assemble`] keeping the independent coordinates of `chart` fixed (the generated code
/// for the generated chart, numeric least-squares steps for any other).
///
/// Errors as [`assemble`].
pub fn assemble_in<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q0: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &AssemblyOptions,
) -> Result<Assembly<NQ>, AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let generated = chart.is_generated::<M, NQ, NC>();
    let task = Task {
        p,
        t,
        opts,
        independent: chart.independent(),
    };
    assemble_core::<M, NQ, NC, DOF>(q0, &task, generated)
}

/// Assembly that may change partition: [`assemble`] with the generated independent
/// coordinates; when that fails (the generated dependent columns are singular at the
/// requested point, the requested values are unreachable, no convergence), assembly keeping
/// the coordinates of the chart chosen at `q0` ([`crate::null_space::best_chart`]), and
/// last the partition-free minimum-norm projection ([`assemble_min_norm`]). Returns the
/// assembly and the chart whose independent coordinates it kept (for the minimum-norm
/// projection, the chart chosen at the result).
///
/// Errors: the error of the generated-chart assembly when every attempt fails.
pub fn assemble_any<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &AssemblyOptions,
) -> Result<(Assembly<NQ>, Chart<DOF>), AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let first = match assemble::<M, NQ, NC, DOF>(q0, p, t, opts) {
        Ok(a) => {
            let chart = Chart::generated::<M, NQ, NC>()
                .map_err(|_| AssemblyError::InvalidModel("invalid INDEPENDENT"))?;
            return Ok((a, chart));
        }
        Err(
            e @ (AssemblyError::InvalidOptions(_)
            | AssemblyError::InvalidModel(_)
            | AssemblyError::NonFinite { .. }),
        ) => return Err(e),
        Err(e) => e,
    };
    if let Ok((chart, health)) = best_chart::<M, NQ, NC, DOF>(q0, p, t) {
        if health > 0.0 && !chart.is_generated::<M, NQ, NC>() {
            if let Ok(a) = assemble_in::<M, NQ, NC, DOF>(&chart, q0, p, t, opts) {
                return Ok((a, chart));
            }
        }
    }
    if let Ok(a) = assemble_min_norm::<M, NQ, NC, DOF>(q0, p, t, opts) {
        if let Ok((chart, _)) = best_chart::<M, NQ, NC, DOF>(&a.q, p, t) {
            return Ok((a, chart));
        }
    }
    Err(first)
}

/// One assembly problem: the parameters, the time, the options and the coordinates held.
struct Task<'a, P, const DOF: usize> {
    p: &'a P,
    t: f64,
    opts: &'a AssemblyOptions,
    independent: &'a [usize; DOF],
}

/// Newton's iteration from `q0` for `task` (`use_static`: the generated dependent solve
/// may serve), rescued by [`rescue`] where it fails.
fn assemble_core<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    task: &Task<'_, M::Params, DOF>,
    use_static: bool,
) -> Result<Assembly<NQ>, AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    match newton::<M, NQ, NC, DOF>(q0, task, use_static) {
        Ok(a) => Ok(a),
        Err(e @ (AssemblyError::SingularJacobian { .. } | AssemblyError::NotConverged { .. })) => {
            let q_fail = match &e {
                AssemblyError::SingularJacobian { q, .. }
                | AssemblyError::NotConverged { q, .. } => {
                    SVector::<f64, NQ>::from_iterator(q.iter().copied())
                }
                _ => *q0,
            };
            rescue::<M, NQ, NC, DOF>(&q_fail, task, e)
        }
        Err(e) => Err(e),
    }
}

/// After a failed Newton iteration: Levenberg–Marquardt on the dependent coordinates from
/// the last iterate and from two perturbations of it (a Newton iteration stuck at a
/// stationary point of `‖C‖` that is not a minimum, such as a Cartesian pendulum started at
/// `y = 0` with `y` dependent). Success when one reaches the tolerance; otherwise, when the
/// best point is a least-squares minimum with `‖C‖ > tol` (relative gradient
/// `‖J_depᵀ C‖ / (‖C_J‖_F ‖C‖) ≤ 1e-7`), [`AssemblyError::Unreachable`]; else `failure`.
fn rescue<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q_fail: &SVector<f64, NQ>,
    task: &Task<'_, M::Params, DOF>,
    failure: AssemblyError,
) -> Result<Assembly<NQ>, AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let &Task {
        p,
        t,
        opts,
        independent,
    } = task;
    let Some(dep) = linalg::dependent_indices(NQ, independent) else {
        return Err(failure);
    };
    if !linalg::finite(q_fail.as_slice()) {
        return Err(failure);
    }
    let mut best: Option<(SVector<f64, NQ>, f64, f64, usize)> = None;
    for sign in [0.0, 1.0, -1.0] {
        let mut q = *q_fail;
        for &i in &dep {
            q[i] += sign * 1e-3 * (1.0 + q[i].abs());
        }
        let (q, norm, grad, its) = levenberg_marquardt::<M, NQ, NC, DOF>(q, task, &dep);
        if norm <= opts.tol {
            return Ok(Assembly {
                q,
                iterations: its,
                residual_norm: norm,
                used_numeric: true,
            });
        }
        if norm.is_finite() && best.as_ref().is_none_or(|b| norm < b.1) {
            best = Some((q, norm, grad, its));
        }
    }
    match best {
        Some((q, norm, grad, _)) if grad <= 1e-7 && norm > opts.tol => {
            let c = M::residual(&q, p, t);
            Err(AssemblyError::Unreachable {
                independent: independent
                    .iter()
                    .map(|&i| Located {
                        index: i,
                        name: M::COORD_NAMES.get(i).copied(),
                        value: q[i],
                    })
                    .collect(),
                residual_norm: norm,
                worst: largest_entries(c.as_slice(), &[]),
                q: q.as_slice().to_vec(),
            })
        }
        _ => Err(failure),
    }
}

/// Levenberg–Marquardt minimisation of `½‖C‖²` over the coordinates `dep` (at most
/// `max_iterations` steps). Returns the last point, `‖C‖` there, the relative
/// gradient `‖J_depᵀ C‖ / (‖C_J‖_F ‖C‖)` and the steps taken.
fn levenberg_marquardt<M, const NQ: usize, const NC: usize, const DOF: usize>(
    mut q: SVector<f64, NQ>,
    task: &Task<'_, M::Params, DOF>,
    dep: &[usize],
) -> (SVector<f64, NQ>, f64, f64, usize)
where
    M: Mechanism<NQ, NC, DOF>,
{
    let &Task { p, t, opts, .. } = task;
    let mut c = M::residual(&q, p, t);
    let mut norm = c.norm();
    let mut mu = 1e-3;
    let mut grad_rel = f64::INFINITY;
    let n = dep.len();
    let limit = opts.max_iterations;
    let mut its = 0;
    while its < limit && norm.is_finite() && norm > opts.tol {
        its += 1;
        let j = M::jacobian(&q, p, t);
        if !linalg::finite(j.as_slice()) {
            break;
        }
        let (jh, cd) = holonomic::<M, NQ, NC, DOF>(&j, &c);
        let jd = linalg::columns(&jh, dep);
        let g = jd.transpose() * &cd;
        // Relative to the whole Jacobian: at a least-squares point the dependent columns
        // themselves may vanish (a Cartesian pendulum at y = 0 with y dependent).
        let jn = jh.norm();
        grad_rel = if jn > 0.0 && norm > 0.0 {
            g.norm() / (jn * norm)
        } else {
            0.0
        };
        if grad_rel <= 1e-12 {
            break;
        }
        let jtj = jd.transpose() * &jd;
        let scale = (0..n).map(|k| jtj[(k, k)]).fold(0.0, f64::max).max(1e-300);
        let mut improved = false;
        for _ in 0..40 {
            let mut a = jtj.clone();
            for k in 0..n {
                a[(k, k)] += mu * scale;
            }
            let Some(step) = a.cholesky().map(|ch| ch.solve(&g)) else {
                mu *= 10.0;
                continue;
            };
            let mut q_try = q;
            for (k, &i) in dep.iter().enumerate() {
                q_try[i] -= step[(k, 0)];
            }
            let c_try = M::residual(&q_try, p, t);
            let n_try = c_try.norm();
            if n_try.is_finite() && n_try < norm {
                q = q_try;
                c = c_try;
                norm = n_try;
                mu = (mu / 3.0).max(1e-15);
                improved = true;
                break;
            }
            mu *= 4.0;
        }
        if !improved {
            break;
        }
    }
    (q, norm, grad_rel, its)
}

/// Newton iteration on the dependent coordinates (the complement of `independent`).
fn newton<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    task: &Task<'_, M::Params, DOF>,
    use_static: bool,
) -> Result<Assembly<NQ>, AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let &Task {
        p,
        t,
        opts,
        independent,
    } = task;
    check_tolerance(opts)?;
    if !valid_threshold(opts.pivot_threshold) {
        return Err(AssemblyError::InvalidOptions(
            "pivot threshold must be a number in [0, 1]",
        ));
    }
    let dep = linalg::dependent_indices(NQ, independent).ok_or(AssemblyError::InvalidModel(
        "INDEPENDENT has out-of-range or repeated indices",
    ))?;
    check_start(q0, t)?;
    // The generated dependent solve uses every row, the velocity constraints' too: a model
    // with velocity constraints takes the numeric steps on its holonomic rows.
    let use_static = use_static && M::VELOCITY_ROWS == 0;
    let mut q = *q0;
    let mut c = M::residual(&q, p, t);
    let mut norm = c.norm();
    if !norm.is_finite() {
        return Err(AssemblyError::NonFinite {
            what: "residual",
            iteration: 0,
        });
    }
    let mut numeric = false;
    let mut used_numeric = false;
    let mut last_rcond = 1.0;
    let mut iterations = 0;
    loop {
        if let Some(end) = finished(&q, &c, norm, (iterations, used_numeric), opts) {
            return end;
        }
        // Up to two attempts: the static step, then the numeric one.
        let mut accepted = false;
        for _attempt in 0..2 {
            let x = if numeric {
                let (x, rcond) = numeric_step::<M, NQ, NC, DOF>(&q, p, t, &c, &dep, iterations)?;
                last_rcond = rcond;
                Some(x)
            } else if !use_static {
                None
            } else {
                let (_, piv) = M::null_space(&q, p, t);
                if piv >= opts.pivot_threshold {
                    let mut x = M::solve_dependent(&q, p, t, &c);
                    for &i in M::INDEPENDENT.iter() {
                        x[i] = 0.0;
                    }
                    linalg::finite(x.as_slice()).then_some(x)
                } else {
                    None
                }
            };
            let Some(x) = x else {
                numeric = true;
                used_numeric = true;
                continue;
            };
            if let Some((q_new, c_new, n_new)) = line_search::<M, NQ, NC, DOF>(&q, &x, norm, p, t) {
                (q, c, norm) = (q_new, c_new, n_new);
                accepted = true;
                break;
            }
            if numeric {
                break;
            }
            numeric = true;
            used_numeric = true;
        }
        iterations += 1;
        if !accepted {
            return Err(if last_rcond < 1e-10 {
                AssemblyError::SingularJacobian {
                    iterations,
                    residual_norm: norm,
                    rcond: last_rcond,
                    worst: largest_entries(c.as_slice(), &[]),
                    q: q.as_slice().to_vec(),
                }
            } else {
                not_converged(iterations, norm, &c, &q)
            });
        }
    }
}

/// Minimum-norm least-squares Newton step on the dependent columns; returns the step and
/// `σ_min / σ_max` of `J_dep`.
fn numeric_step<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    c: &SVector<f64, NC>,
    dep: &[usize],
    iteration: usize,
) -> Result<(SVector<f64, NQ>, f64), AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return Err(AssemblyError::NonFinite {
            what: "jacobian",
            iteration,
        });
    }
    let (jh, b) = holonomic::<M, NQ, NC, DOF>(&j, c);
    // Coordinates no holonomic row involves here (a zero column) keep their values exactly
    // (the minimum-norm step has no component along them).
    let moved: Vec<usize> = dep
        .iter()
        .copied()
        .filter(|&i| jh.column(i).iter().any(|&v| v != 0.0))
        .collect();
    let mut x = SVector::<f64, NQ>::zeros();
    if moved.is_empty() {
        // No dependent coordinate enters the equations: singular.
        return Ok((x, 0.0));
    }
    let jd = linalg::columns(&jh, &moved);
    let (xd, rcond) =
        linalg::lstsq(&jd, &b, 1e-13).ok_or_else(|| AssemblyError::SingularJacobian {
            iterations: iteration,
            residual_norm: c.norm(),
            rcond: 0.0,
            worst: largest_entries(c.as_slice(), &[]),
            q: q.as_slice().to_vec(),
        })?;
    for (k, &i) in moved.iter().enumerate() {
        x[i] = xd[(k, 0)];
    }
    // `σ_min / σ_max` of the whole dependent block: the zero columns add no nonzero singular
    // value, but zeros where they make the block's smaller dimension exceed the others'.
    let rows = jh.nrows();
    let rcond = if rows.min(moved.len()) < rows.min(dep.len()) {
        0.0
    } else {
        rcond
    };
    Ok((x, rcond))
}

/// The number of holonomic (position) constraint rows: the first `NC −`
/// [`Mechanism::VELOCITY_ROWS`] rows (the velocity constraints below them restrict no
/// configuration).
pub(crate) fn holonomic_rows<M, const NQ: usize, const NC: usize, const DOF: usize>() -> usize
where
    M: Mechanism<NQ, NC, DOF>,
{
    NC.saturating_sub(M::VELOCITY_ROWS)
}

/// The holonomic rows of the Jacobian `j` and of the residual `c` (see [`holonomic_rows`]).
fn holonomic<M, const NQ: usize, const NC: usize, const DOF: usize>(
    j: &nalgebra::SMatrix<f64, NC, NQ>,
    c: &SVector<f64, NC>,
) -> (DMatrix<f64>, DMatrix<f64>)
where
    M: Mechanism<NQ, NC, DOF>,
{
    let nh = holonomic_rows::<M, NQ, NC, DOF>();
    (
        DMatrix::from_fn(nh, NQ, |i, k| j[(i, k)]),
        DMatrix::from_fn(nh, 1, |i, _| c[i]),
    )
}

/// Projects `q0` onto `C(q, p, t) = 0` by Gauss–Newton steps `q ← q − α C_J⁺ C`
/// (minimum-norm, from nalgebra's SVD with singular values below
/// [`crate::lagrange::RANK_RTOL`]` · σ_max` treated as zero — the Lagrange route's rank
/// decision), with the same backtracking line search as [`assemble`]. Unlike
/// [`assemble`] it keeps no coordinate fixed and needs no partition: it works at
/// configurations where the independent coordinates fail (a Cartesian pendulum at the
/// horizontal) and with redundant constraints. Only the holonomic rows enter (see the
/// module's docs). Used for the post-step projection of
/// [`crate::simulate::simulate_lagrange`].
///
/// Errors as [`assemble`] ([`AssemblyError::NotConverged`] naming the largest residuals).
pub fn assemble_min_norm<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &AssemblyOptions,
) -> Result<Assembly<NQ>, AssemblyError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    check_tolerance(opts)?;
    check_start(q0, t)?;
    let mut q = *q0;
    let mut c = M::residual(&q, p, t);
    let mut norm = c.norm();
    let mut iterations = 0;
    loop {
        if !norm.is_finite() {
            return Err(AssemblyError::NonFinite {
                what: "residual",
                iteration: iterations,
            });
        }
        if let Some(end) = finished(&q, &c, norm, (iterations, true), opts) {
            return end;
        }
        let j = M::jacobian(&q, p, t);
        if !linalg::finite(j.as_slice()) {
            return Err(AssemblyError::NonFinite {
                what: "jacobian",
                iteration: iterations,
            });
        }
        let (jh, b) = holonomic::<M, NQ, NC, DOF>(&j, &c);
        let (x, _) = linalg::lstsq(&jh, &b, crate::lagrange::RANK_RTOL)
            .ok_or_else(|| not_converged(iterations, norm, &c, &q))?;
        let x = SVector::<f64, NQ>::from_fn(|i, _| x[(i, 0)]);
        iterations += 1;
        let Some((q_new, c_new, n_new)) = line_search::<M, NQ, NC, DOF>(&q, &x, norm, p, t) else {
            return Err(not_converged(iterations, norm, &c, &q));
        };
        (q, c, norm) = (q_new, c_new, n_new);
    }
}

/// [`AssemblyError::InvalidOptions`] unless the tolerance is positive and finite.
fn check_tolerance(opts: &AssemblyOptions) -> Result<(), AssemblyError> {
    if !(opts.tol.is_finite() && opts.tol > 0.0) {
        return Err(AssemblyError::InvalidOptions(
            "tolerance must be positive and finite",
        ));
    }
    Ok(())
}

/// [`AssemblyError::NonFinite`] unless the starting coordinates and the time are finite.
fn check_start<const NQ: usize>(q0: &SVector<f64, NQ>, t: f64) -> Result<(), AssemblyError> {
    if !linalg::finite(q0.as_slice()) || !t.is_finite() {
        return Err(AssemblyError::NonFinite {
            what: "initial coordinates or time",
            iteration: 0,
        });
    }
    Ok(())
}

/// [`AssemblyError::NotConverged`] at `q`, whose residual `c` has the norm `norm`.
fn not_converged<const NQ: usize, const NC: usize>(
    iterations: usize,
    norm: f64,
    c: &SVector<f64, NC>,
    q: &SVector<f64, NQ>,
) -> AssemblyError {
    AssemblyError::NotConverged {
        iterations,
        residual_norm: norm,
        worst: largest_entries(c.as_slice(), &[]),
        q: q.as_slice().to_vec(),
    }
}

/// Where an iteration stops at `q` (residual `c` of norm `norm`) after `iterations` steps
/// (`used_numeric`: whether any was numeric): assembled when `norm ≤ tol`, else
/// [`AssemblyError::NotConverged`] when the steps are used up, else `None` (go on).
fn finished<const NQ: usize, const NC: usize>(
    q: &SVector<f64, NQ>,
    c: &SVector<f64, NC>,
    norm: f64,
    (iterations, used_numeric): (usize, bool),
    opts: &AssemblyOptions,
) -> Option<Result<Assembly<NQ>, AssemblyError>> {
    if norm <= opts.tol {
        return Some(Ok(Assembly {
            q: *q,
            iterations,
            residual_norm: norm,
            used_numeric,
        }));
    }
    (iterations >= opts.max_iterations).then(|| Err(not_converged(iterations, norm, c, q)))
}
