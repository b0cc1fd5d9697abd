//! Checks shared by the tests of every example mechanism (a workspace-only crate, not
//! published). Everything is compared with an independent computation: central finite
//! differences, a direct evaluation of the expression DAG, nalgebra's SVD. The module
//! [`report`] holds the timing and reporting helpers the example programs share.

pub mod report;
pub mod step;

use mechgen::nalgebra::{DMatrix, DVector, SMatrix, SVector};
use mechgen::runtime::Mechanism;
use mechgen_codegen::expr::Sym;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded generator for the tests.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Random points near the nominal configuration (off the manifold; for derivative checks).
pub fn random_points<const NQ: usize>(
    nominal: &SVector<f64, NQ>,
    n: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<SVector<f64, NQ>> {
    (0..n)
        .map(|_| nominal + SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-0.5..0.5)))
        .collect()
}

/// The generated Jacobian equals central differences of the generated residual to
/// `1e-7` relative (to the Jacobian's norm) at `n` random points.
pub fn check_jacobian_fd<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    M: Mechanism<NQ, NC, DOF>,
>(
    p: &M::Params,
    n: usize,
    seed: u64,
) {
    let mut rng = rng(seed);
    for q in random_points(&M::nominal_q(), n, &mut rng) {
        let t: f64 = rng.random_range(0.0..1.0);
        let j = M::jacobian(&q, p, t);
        let h = 1e-6;
        let mut fd = SMatrix::<f64, NC, NQ>::zeros();
        for k in 0..NQ {
            let mut qp = q;
            let mut qm = q;
            qp[k] += h;
            qm[k] -= h;
            let col = (M::residual(&qp, p, t) - M::residual(&qm, p, t)) / (2.0 * h);
            fd.set_column(k, &col);
        }
        let err = (j - fd).norm() / j.norm().max(1e-300);
        assert!(
            err <= 1e-7,
            "{}: Jacobian vs central differences: relative error {err:e} at q = {q:?}",
            M::NAME
        );
        let jt = M::jacobian_t(&q, p, t);
        let ft = (M::residual(&q, p, t + h) - M::residual(&q, p, t - h)) / (2.0 * h);
        assert!(
            (jt - ft).norm() <= 1e-7 * (1.0 + jt.norm()),
            "{}: C_t vs central differences",
            M::NAME
        );
    }
}

/// The generated residual equals a direct evaluation of the model's DAG (parsed again from
/// `source` with the engine) at `n` random points, with every parameter at its default.
pub fn check_residual_against_dag<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    M: Mechanism<NQ, NC, DOF>,
>(
    source: &str,
    module: &str,
    p: &M::Params,
    n: usize,
    seed: u64,
) {
    let tokens: mechgen_codegen::proc_macro2::TokenStream =
        source.parse().expect("source tokenizes");
    let (models, _) = mechgen_codegen::models(tokens).expect("source lowers");
    let (model, arena) = models
        .iter()
        .find(|(m, _)| m.name == module)
        .expect("module present");
    assert_eq!(model.coords.len(), NQ);
    assert_eq!(model.constraints.len(), NC);
    let roots: Vec<_> = model.constraints.iter().map(|c| c.expr).collect();
    let mut rng = rng(seed);
    for q in random_points(&M::nominal_q(), n, &mut rng) {
        let t: f64 = rng.random_range(0.0..1.0);
        let dag = arena.eval(&roots, &|s| match s {
            Sym::Coord(i) => q[i as usize],
            Sym::Param(i) => model.params[i as usize].default.unwrap_or(f64::NAN),
            Sym::Time => t,
            _ => f64::NAN,
        });
        let r = M::residual(&q, p, t);
        for i in 0..NC {
            let scale = 1.0 + dag[i].abs();
            assert!(
                (r[i] - dag[i]).abs() <= 1e-13 * scale,
                "{}: residual[{i}] {} vs DAG {}",
                M::NAME,
                r[i],
                dag[i]
            );
        }
    }
}

/// Newton on the dependent coordinates (independent ones held), with nalgebra's SVD
/// pseudo-inverse of the dependent columns: independent of the generated solve.
pub fn assemble_numeric<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    M: Mechanism<NQ, NC, DOF>,
>(
    q0: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Option<SVector<f64, NQ>> {
    let dep: Vec<usize> = (0..NQ).filter(|i| !M::INDEPENDENT.contains(i)).collect();
    let mut q = *q0;
    for _ in 0..60 {
        let r = M::residual(&q, p, t);
        if r.norm() <= 1e-14 * (1.0 + q.norm()) {
            return Some(q);
        }
        let j = M::jacobian(&q, p, t);
        let jd = DMatrix::from_fn(NC, dep.len(), |i, k| j[(i, dep[k])]);
        let svd = jd.svd(true, true);
        let dx = svd
            .solve(&DVector::from_column_slice(r.as_slice()), 1e-12)
            .ok()?;
        for (k, &i) in dep.iter().enumerate() {
            q[i] -= dx[k];
        }
        if !q.iter().all(|v| v.is_finite()) {
            return None;
        }
    }
    (M::residual(&q, p, t).norm() <= 1e-12).then_some(q)
}

/// `n` configurations on the manifold: a random walk of the independent coordinates
/// (steps of up to `step`), each assembled from the previous one.
pub fn random_configurations<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    M: Mechanism<NQ, NC, DOF>,
>(
    p: &M::Params,
    n: usize,
    step: f64,
    seed: u64,
) -> Vec<SVector<f64, NQ>> {
    let mut rng = rng(seed);
    let mut q = assemble_numeric::<NQ, NC, DOF, M>(&M::nominal_q(), p, 0.0)
        .expect("nominal configuration assembles");
    let mut out = Vec::with_capacity(n);
    let mut failures = 0;
    while out.len() < n {
        let mut trial = q;
        for &i in &M::INDEPENDENT {
            trial[i] += rng.random_range(-step..step);
        }
        match assemble_numeric::<NQ, NC, DOF, M>(&trial, p, 0.0) {
            Some(qa) if (qa - q).norm() < 10.0 * step * (NQ as f64) => {
                q = qa;
                out.push(q);
            }
            _ => {
                failures += 1;
                assert!(failures < 10 * n, "{}: too many failed assemblies", M::NAME);
            }
        }
    }
    out
}

/// Null-space checks at configurations on the manifold: `‖C_J D‖ ≤ 1e-12 ‖C_J‖ ‖D‖`, D of
/// full column rank spanning nalgebra's SVD null space (largest principal angle ≤ 1e-8),
/// identity rows at the independent coordinates, `solve_dependent` to 1e-12 relative.
/// Returns the smallest relative pivot seen.
pub fn check_null_space<
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    M: Mechanism<NQ, NC, DOF>,
>(
    p: &M::Params,
    configs: &[SVector<f64, NQ>],
    seed: u64,
) -> f64 {
    let mut rng = rng(seed);
    let mut min_pivot = f64::INFINITY;
    for q in configs {
        let j = M::jacobian(q, p, 0.0);
        let (d, health) = M::null_space(q, p, 0.0);
        min_pivot = min_pivot.min(health);
        assert!(
            health.is_finite() && health > 0.0,
            "{}: pivot health {health}",
            M::NAME
        );
        let rel = (j * d).norm() / (j.norm() * d.norm());
        assert!(
            rel <= 1e-12,
            "{}: ‖C_J D‖/(‖C_J‖‖D‖) = {rel:e} at {q:?}",
            M::NAME
        );
        for (c, &i) in M::INDEPENDENT.iter().enumerate() {
            for k in 0..DOF {
                assert_eq!(d[(i, k)], if k == c { 1.0 } else { 0.0 }, "identity block");
            }
        }
        // Span: the SVD null space of C_J (right singular vectors of the DOF smallest
        // singular values, found from the full SVD of the square NQ × NQ matrix C_Jᵀ C_J
        // padded... use the dynamic SVD of C_J with all NQ right vectors).
        let jd = DMatrix::from_fn(NQ, NQ, |i, k| if i < NC { j[(i, k)] } else { 0.0 });
        let svd = jd.svd(false, true);
        let vt = svd.v_t.expect("v_t");
        let mut idx: Vec<usize> = (0..NQ).collect();
        idx.sort_by(|&a, &b| svd.singular_values[a].total_cmp(&svd.singular_values[b]));
        let n = DMatrix::from_fn(NQ, DOF, |i, k| vt[(idx[k], i)]);
        let dq = DMatrix::from_fn(NQ, DOF, |i, k| d[(i, k)]).qr().q();
        let resid = &dq - &n * (n.transpose() * &dq);
        let sin_angle = resid.svd(false, false).singular_values.max();
        assert!(
            sin_angle <= 1e-8,
            "{}: largest principal angle {sin_angle:e}",
            M::NAME
        );
        // Solve with zero independent part.
        let y = SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let b = j * y;
        let x = M::solve_dependent(q, p, 0.0, &b);
        for &i in &M::INDEPENDENT {
            assert_eq!(x[i], 0.0);
        }
        let err = (j * x - b).norm() / (j.norm() * x.norm() + b.norm());
        assert!(
            err <= 1e-12,
            "{}: solve_dependent relative residual {err:e}",
            M::NAME
        );
    }
    min_pivot
}

/// The velocity terms of Lagrange's equations from a mass matrix alone:
/// `−Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) q̇_j q̇_k`, with `∂M/∂q` by central differences
/// (step `1e-5`) of `mass`. An independent check of generated `forces`.
pub fn lagrange_velocity_terms<const N: usize>(
    mass: impl Fn(&SVector<f64, N>) -> SMatrix<f64, N, N>,
    q: &SVector<f64, N>,
    qd: &SVector<f64, N>,
) -> SVector<f64, N> {
    let h = 1e-5;
    let dm: Vec<SMatrix<f64, N, N>> = (0..N)
        .map(|k| {
            let (mut qp, mut qm) = (*q, *q);
            qp[k] += h;
            qm[k] -= h;
            (mass(&qp) - mass(&qm)) / (2.0 * h)
        })
        .collect();
    SVector::<f64, N>::from_fn(|i, _| {
        let mut c = 0.0;
        for j in 0..N {
            for k in 0..N {
                c += (dm[k][(i, j)] - 0.5 * dm[i][(j, k)]) * qd[j] * qd[k];
            }
        }
        -c
    })
}

/// `sin` of the largest principal angle between the column space of `d` and the SVD null
/// space of `j` (right singular vectors of the `DOF` smallest singular values), and the
/// rank margin `σ_r / σ_1` of `j` (`r = NQ − DOF`).
pub fn null_space_error<const NQ: usize, const NC: usize, const DOF: usize>(
    j: &SMatrix<f64, NC, NQ>,
    d: &SMatrix<f64, NQ, DOF>,
) -> (f64, f64) {
    let jd = DMatrix::from_fn(NQ, NQ, |i, k| if i < NC { j[(i, k)] } else { 0.0 });
    let svd = jd.svd(false, true);
    let Some(vt) = svd.v_t else {
        return (f64::INFINITY, 0.0);
    };
    let mut idx: Vec<usize> = (0..NQ).collect();
    idx.sort_by(|&a, &b| svd.singular_values[a].total_cmp(&svd.singular_values[b]));
    let n = DMatrix::from_fn(NQ, DOF, |i, k| vt[(idx[k], i)]);
    let dq = DMatrix::from_fn(NQ, DOF, |i, k| d[(i, k)]).qr().q();
    let resid = &dq - &n * (n.transpose() * &dq);
    let s = &svd.singular_values;
    let margin = s[idx[DOF]] / s[idx[NQ - 1]];
    (resid.svd(false, false).singular_values.max(), margin)
}

/// The Jacobian of `f` at `x` by Richardson-extrapolated central differences:
/// `(4 D(h/2) − D(h)) / 3` with `D(h)` the central difference of step `h (1 + |x_j|)`
/// (truncation ~h⁴, rounding ~1e-16/h). `None` when `f` fails at a shifted point (an
/// assembly that does not converge, say).
pub fn richardson_jacobian(
    f: &mut dyn FnMut(&[f64]) -> Option<Vec<f64>>,
    x: &[f64],
    h: f64,
) -> Option<DMatrix<f64>> {
    let m = f(x)?.len();
    let mut out = DMatrix::zeros(m, x.len());
    for j in 0..x.len() {
        let step = h * (1.0 + x[j].abs());
        let mut central = |s: f64| -> Option<Vec<f64>> {
            let (mut a, mut b) = (x.to_vec(), x.to_vec());
            a[j] += s;
            b[j] -= s;
            let (fa, fb) = (f(&a)?, f(&b)?);
            Some(
                fa.iter()
                    .zip(&fb)
                    .map(|(p, q)| (p - q) / (2.0 * s))
                    .collect(),
            )
        };
        let (coarse, fine) = (central(step)?, central(step / 2.0)?);
        for i in 0..m {
            out[(i, j)] = (4.0 * fine[i] - coarse[i]) / 3.0;
        }
    }
    Some(out)
}

/// Closed-form assembly of a two-link chain: `(angle of the first link, angle of the second)` with `base + r1 e(x) + r2 e(y) = tip`,
/// on assembly branch `branch` (±1).
pub fn two_link(
    base: (f64, f64),
    tip: (f64, f64),
    r1: f64,
    r2: f64,
    branch: f64,
) -> Option<(f64, f64)> {
    let (dx, dy) = (tip.0 - base.0, tip.1 - base.1);
    let dist = dx.hypot(dy);
    let c = (r1 * r1 + dist * dist - r2 * r2) / (2.0 * r1 * dist);
    if !(-1.0..=1.0).contains(&c) {
        return None;
    }
    let x = dy.atan2(dx) + branch * c.acos();
    let y = (dy - r1 * x.sin()).atan2(dx - r1 * x.cos());
    Some((x, y))
}

/// The health figure from its definition, independently of the generated code: the LU of
/// the pivot rows and columns of `C_J` without pivoting (`PIVOT_ROWS`, `PIVOT_COLS`), its
/// smallest `|U_kk|` over the Frobenius norm of the pivot rows (each distinct entry, by
/// modulus, once), at most 1; 0 when that is not finite or the rows vanish.
pub fn health_by_definition<const NQ: usize, const NC: usize>(
    j: &SMatrix<f64, NC, NQ>,
    rows: &[usize],
    cols: &[usize],
) -> f64 {
    let mut entries: Vec<u64> = rows
        .iter()
        .flat_map(|&i| (0..NQ).map(move |c| j[(i, c)].abs()))
        .filter(|v| *v != 0.0)
        .map(f64::to_bits)
        .collect();
    entries.sort_unstable();
    entries.dedup();
    let scale = entries
        .iter()
        .map(|&b| f64::from_bits(b).powi(2))
        .sum::<f64>()
        .sqrt();
    let r = rows.len();
    let mut u: Vec<Vec<f64>> = rows
        .iter()
        .map(|&i| cols[..r].iter().map(|&c| j[(i, c)]).collect())
        .collect();
    let mut min = f64::INFINITY;
    for k in 0..r {
        let piv = u[k][k];
        min = min.min(piv.abs());
        let (top, below) = u.split_at_mut(k + 1);
        let pivot_row = &top[k];
        for row in below.iter_mut() {
            let l = row[k] / piv;
            for (x, &y) in row[k + 1..r].iter_mut().zip(&pivot_row[k + 1..r]) {
                *x -= l * y;
            }
        }
    }
    let h = (min / scale).min(1.0);
    if h.is_finite() && scale > 0.0 {
        h
    } else {
        0.0
    }
}
