//! Small numeric helpers shared by the solvers (crate-private).

use nalgebra::{DMatrix, DVector, Dyn, FullPivLU, SMatrix, SVector, SVD};

use crate::real::Real;

mod sparse;
pub(crate) use sparse::SparseColumns;

/// `a⁻¹ b` for a reduced mass matrix `a` (`DᵀMD`) by a static Cholesky of its symmetrised
/// part, without allocation, when that proves `a` well inside positive definiteness
/// (`λ_min > MASS_RTOL · trace A ≥ MASS_RTOL · λ_max`) and the solution is finite; `None`
/// otherwise (the caller's eigenvalue path classifies the failure).
///
/// The proof of `λ_min`: first the `O(N²)` bound of [`lambda_min_bound`] from the factor;
/// where that is too pessimistic, `λ_min ≥ 1/‖A⁻¹‖_F` from the inverse (`O(N³)`).
pub(crate) fn definite_solve<const N: usize>(
    a: &SMatrix<f64, N, N>,
    b: &SVector<f64, N>,
) -> Option<SVector<f64, N>> {
    let sym = (a + a.transpose()) * 0.5;
    let ch = sym.cholesky()?;
    let trace = sym.trace();
    if !trace.is_finite() {
        return None;
    }
    let bound = MASS_RTOL * trace;
    let definite = lambda_min_bound(ch.l_dirty()) > bound || {
        let inv_norm = ch.inverse().norm();
        inv_norm.is_finite() && 1.0 / inv_norm > bound
    };
    if definite {
        let x = ch.solve(b);
        finite(x.as_slice()).then_some(x)
    } else {
        None
    }
}

/// A lower bound on the smallest eigenvalue of `L Lᵀ` for the lower triangle `L` of `l`
/// (its upper triangle is not read), in `O(N²)`: `λ_min = 1/‖L⁻¹‖₂² ≥ 1/(‖L⁻¹‖₁ ‖L⁻¹‖_∞)`,
/// and `|L⁻¹| ≤ W⁻¹` entrywise for the comparison matrix `W` (`|l_ii|` on the diagonal,
/// `−|l_ij|` off it: Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
/// Theorem 8.12), whose inverse is non-negative, so `‖L⁻¹‖_∞ ≤ max(W⁻¹ e)` and
/// `‖L⁻¹‖₁ ≤ max(W⁻ᵀ e)`: one forward and one backward substitution. Pessimistic where
/// `L⁻¹` has entries of both signs that cancel; `0` when a diagonal entry is zero or a
/// value is not finite. The sums are of non-negative terms, so their rounding is a
/// relative `N ε`, far inside the margin the callers ask for.
pub(crate) fn lambda_min_bound<const N: usize>(l: &SMatrix<f64, N, N>) -> f64 {
    let mut x = [0.0f64; N];
    let mut y = [0.0f64; N];
    let (mut xmax, mut ymax) = (0.0f64, 0.0f64);
    for i in 0..N {
        let mut s = 1.0;
        for j in 0..i {
            s += l[(i, j)].abs() * x[j];
        }
        x[i] = s / l[(i, i)].abs();
        if !x[i].is_finite() {
            return 0.0;
        }
        xmax = xmax.max(x[i]);
    }
    for j in (0..N).rev() {
        let mut s = 1.0;
        for i in j + 1..N {
            s += l[(i, j)].abs() * y[i];
        }
        y[j] = s / l[(j, j)].abs();
        if !y[j].is_finite() {
            return 0.0;
        }
        ymax = ymax.max(y[j]);
    }
    let r = 1.0 / (xmax * ymax);
    if r.is_finite() {
        r
    } else {
        0.0
    }
}

/// Converts a fixed-size matrix to a dynamic one.
pub(crate) fn dmatrix<const R: usize, const C: usize>(m: &SMatrix<f64, R, C>) -> DMatrix<f64> {
    DMatrix::from_column_slice(R, C, m.as_slice())
}

/// True when every entry is finite.
#[inline]
pub(crate) fn finite(s: &[f64]) -> bool {
    finite_by(s, |&x| x)
}

/// True when `value(x)` is finite for every entry `x`.
///
/// From 16 entries on branch-free, so that the compiler vectorises it: `v · 0` is `±0` for a
/// finite `v` and NaN for an infinite or NaN one, summed in eight independent lanes and
/// then pairwise (about one instruction per entry; `all(is_finite)` took five to seven, and
/// the checks of the mass matrix and forces were 13 % of the Stewart platform's projection
/// right-hand side). Shorter slices take `all(is_finite)`, whose early exits cost less than
/// the sums' latency there.
#[inline]
pub(crate) fn finite_by<T>(s: &[T], value: impl Fn(&T) -> f64) -> bool {
    if s.len() < 16 {
        return s.iter().all(|x| value(x).is_finite());
    }
    let mut acc = [0.0f64; 8];
    let mut chunks = s.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += value(x) * 0.0;
        }
    }
    for (a, x) in acc.iter_mut().zip(chunks.remainder()) {
        *a += value(x) * 0.0;
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) == 0.0
}

/// True when the mass matrix's listed structural nonzeros
/// ([`Dynamics::MASS_NONZEROS`](crate::Dynamics::MASS_NONZEROS)) are finite, or with no list
/// (or an index out of range) every entry: the entries outside the list are zero by the
/// trait's contract, and [`mass_mul`] never reads them. Branch-free over the list (`x · 0` is
/// `±0` for finite `x`, NaN otherwise), inlined so that the model's constant list unrolls:
/// the Stewart platform's 66 of 576 entries.
#[inline(always)]
pub(crate) fn mass_finite<const NQ: usize>(
    nonzeros: Option<&[(usize, usize)]>,
    mass: &SMatrix<f64, NQ, NQ>,
) -> bool {
    let Some(nonzeros) = nonzeros else {
        return finite(mass.as_slice());
    };
    let mut acc = 0.0;
    for &(i, k) in nonzeros {
        if i >= NQ || k >= NQ {
            return finite(mass.as_slice());
        }
        acc += mass[(i, k)] * 0.0;
    }
    acc == 0.0
}

/// `M x` over the mass matrix's structural nonzeros when the model lists them
/// ([`Dynamics::MASS_NONZEROS`](crate::Dynamics::MASS_NONZEROS), column by column), else
/// [`mat_mul`]: for each entry of the result the same products summed in the same order.
/// A list with an index out of range falls back to the dense product. Inlined, so that the
/// model's constant list unrolls into the products it names.
#[inline(always)]
pub(crate) fn mass_mul<S: Real, const NQ: usize, const C: usize>(
    nonzeros: Option<&[(usize, usize)]>,
    mass: &SMatrix<S, NQ, NQ>,
    x: &SMatrix<S, NQ, C>,
) -> SMatrix<S, NQ, C> {
    let Some(nonzeros) = nonzeros else {
        return mat_mul(mass, x);
    };
    let mut out = SMatrix::<S, NQ, C>::from_fn(|_, _| S::from_f64(0.0));
    for &(i, k) in nonzeros {
        if i >= NQ || k >= NQ {
            return mat_mul(mass, x);
        }
        let m = mass[(i, k)];
        for j in 0..C {
            out[(i, j)] += m * x[(k, j)];
        }
    }
    out
}

/// The reduced system `(Dᵀ M D, Dᵀ r)` of the projection method for a basis `d` whose rows
/// at `independent` are the identity (row `independent[c]` is `e_c`, as every partition's
/// basis is), over the mass matrix's listed nonzeros (`nonzeros`, as [`mass_mul`]) or all
/// its entries: an independent column of `M` adds one entry to `M D` and an independent
/// row of `M D` is one row of `Dᵀ M D`, so only the `NQ − DOF` dependent rows of `D` are
/// multiplied (rows packed contiguously, so the inner loops vectorise). The same sums as
/// the dense products but for the terms that are exact zeros and exact ones, added in
/// another order. Where `d`'s rows at `independent` are not exactly the identity, or `M D`
/// is not finite (where a skipped zero could hide it), the dense products; also below
/// three degrees of freedom, where packing the rows costs about what it saves (`2 NQ DOF`
/// copies against `DOF` products per independent entry of `M` and `DOF²` per independent
/// row), so those mechanisms' numbers stay those of the dense products.
pub(crate) fn reduced_system<const NQ: usize, const DOF: usize>(
    nonzeros: Option<&[(usize, usize)]>,
    mass: &SMatrix<f64, NQ, NQ>,
    d: &SMatrix<f64, NQ, DOF>,
    independent: &[usize; DOF],
    r: &SVector<f64, NQ>,
) -> (SMatrix<f64, DOF, DOF>, SVector<f64, DOF>) {
    let dense = || {
        let md = mass_mul(nonzeros, mass, d);
        (d.tr_mul(&md), d.transpose() * r)
    };
    if DOF < 3 {
        return dense();
    }
    // Which column each independent coordinate's identity row is, `DOF` for a dependent one.
    let mut col_of = [DOF; NQ];
    for (c, &k) in independent.iter().enumerate() {
        if k >= NQ || col_of[k] != DOF || (0..DOF).any(|j| d[(k, j)] != f64::from(j == c)) {
            return dense();
        }
        col_of[k] = c;
    }
    // D's and M D's rows, row-major.
    let mut dr = [[0.0f64; DOF]; NQ];
    for (k, row) in dr.iter_mut().enumerate() {
        if col_of[k] == DOF {
            for (j, x) in row.iter_mut().enumerate() {
                *x = d[(k, j)];
            }
        }
    }
    let mut mdr = [[0.0f64; DOF]; NQ];
    match nonzeros {
        Some(list) if list.iter().all(|&(i, k)| i < NQ && k < NQ) => {
            for &(i, k) in list {
                add_entry(&mut mdr[i], &dr[k], col_of[k], mass[(i, k)]);
            }
        }
        _ => {
            for k in 0..NQ {
                for i in 0..NQ {
                    add_entry(&mut mdr[i], &dr[k], col_of[k], mass[(i, k)]);
                }
            }
        }
    }
    if !finite(mdr.as_flattened()) {
        return dense();
    }
    let mut a = [[0.0f64; DOF]; DOF];
    let mut b = [0.0f64; DOF];
    for k in 0..NQ {
        let c = col_of[k];
        if c < DOF {
            for j in 0..DOF {
                a[c][j] += mdr[k][j];
            }
            b[c] += r[k];
        } else {
            for c1 in 0..DOF {
                let w = dr[k][c1];
                if w != 0.0 {
                    let (row, mk) = (&mut a[c1], &mdr[k]);
                    for j in 0..DOF {
                        row[j] += w * mk[j];
                    }
                    b[c1] += w * r[k];
                }
            }
        }
    }
    (SMatrix::from_fn(|i, j| a[i][j]), SVector::from(b))
}

/// Row `i` of `M D` gains `m = M_ik` times row `k` of `D`: the identity row's one entry
/// (column `c < DOF`) or the dependent row `dk`.
#[inline(always)]
fn add_entry<const DOF: usize>(row: &mut [f64; DOF], dk: &[f64; DOF], c: usize, m: f64) {
    if c < DOF {
        row[c] += m;
    } else {
        for j in 0..DOF {
            row[j] += m * dk[j];
        }
    }
}

/// `a b` without nalgebra's `Zero`/`One` bounds (dual numbers have neither), skipping
/// exact zeros (mass matrices and bases are sparse: the Stewart platform's 24 × 24 `M` has
/// 10 % nonzeros, and a product of dual numbers costs `2N + 1` multiplications).
pub(crate) fn mat_mul<S: Real, const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<S, R, K>,
    b: &SMatrix<S, K, C>,
) -> SMatrix<S, R, C> {
    let mut out = SMatrix::<S, R, C>::from_fn(|_, _| S::from_f64(0.0));
    for k in 0..K {
        for i in 0..R {
            let aik = a[(i, k)];
            if aik.is_zero() {
                continue;
            }
            for j in 0..C {
                let bkj = b[(k, j)];
                if !bkj.is_zero() {
                    out[(i, j)] += aik * bkj;
                }
            }
        }
    }
    out
}

/// SVD with a bounded iteration count, checked: `None` on an empty or non-finite input,
/// non-convergence, or when no attempt reconstructs `a`.
///
/// nalgebra's bidiagonal SVD can return orthogonal factors that do not reconstruct the
/// matrix when a singular value is near rounding level (nalgebra issues #1072, #1172; a
/// 5 × 5 constraint Jacobian of the Bricard linkage, one redundant row, 1e-12 off its
/// manifold: `‖A − UΣVᵀ‖ = 6e-2` with `‖A‖ ≈ 2.4`), and which convergence tolerance
/// avoids it varies from matrix to matrix. So each decomposition is checked,
/// `max |A − UΣVᵀ| ≤ 1000 ε max(m, n) ‖A‖_F`, and on failure recomputed with looser
/// tolerances (`1e-13 … 1e-11`) and from `Aᵀ`; when none of those passes, a one-sided
/// Jacobi SVD ([`jacobi_svd`]: slower, always accurate) decides, and the most accurate
/// attempt is returned when within `1e-8 ‖A‖_F`.
pub(crate) fn svd(a: DMatrix<f64>) -> Option<SVD<f64, Dyn, Dyn>> {
    if a.is_empty() || !finite(a.as_slice()) {
        return None;
    }
    let iters = 200 * (a.nrows() + a.ncols() + 1);
    let norm = a.norm();
    let tol = 1e3 * f64::EPSILON * a.nrows().max(a.ncols()) as f64 * norm;
    let mut best: Option<(f64, SVD<f64, Dyn, Dyn>)> = None;
    for eps in [f64::EPSILON, 1e-13, 1e-12, 1e-11] {
        for transpose in [false, true] {
            let s = if transpose {
                SVD::try_new(a.transpose(), true, true, eps, iters).and_then(|t| {
                    Some(SVD {
                        u: Some(t.v_t?.transpose()),
                        v_t: Some(t.u?.transpose()),
                        singular_values: t.singular_values,
                    })
                })
            } else {
                SVD::try_new(a.clone(), true, true, eps, iters)
            };
            let Some(s) = s else { continue };
            let err = reconstruction_error(&a, &s);
            if err <= tol {
                return Some(s);
            }
            if best.as_ref().is_none_or(|(e, _)| err < *e) {
                best = Some((err, s));
            }
        }
    }
    if let Some(s) = jacobi_svd(&a) {
        let err = reconstruction_error(&a, &s);
        if best.as_ref().is_none_or(|(e, _)| err < *e) {
            best = Some((err, s));
        }
    }
    best.filter(|(e, _)| *e <= 1e-8 * norm).map(|(_, s)| s)
}

/// One-sided (Hestenes) Jacobi SVD of `a` (`m × n`): thin factors `U` (`m × k`), `Vᵀ`
/// (`k × n`), `k = min(m, n)`, singular values unordered. Rotations of column pairs until
/// every pair is orthogonal to `ε` (at most 60 sweeps); `U`'s columns for zero singular
/// values are completed to an orthonormal set. `None` when the sweeps do not converge.
pub(crate) fn jacobi_svd(a: &DMatrix<f64>) -> Option<SVD<f64, Dyn, Dyn>> {
    let (m, n) = a.shape();
    if m < n {
        let t = jacobi_svd(&a.transpose())?;
        return Some(SVD {
            u: Some(t.v_t?.transpose()),
            v_t: Some(t.u?.transpose()),
            singular_values: t.singular_values,
        });
    }
    let mut g = a.clone();
    let mut v = DMatrix::<f64>::identity(n, n);
    let mut converged = false;
    for _ in 0..60 {
        let mut rotated = false;
        for i in 0..n {
            for j in i + 1..n {
                let alpha = g.column(i).norm_squared();
                let beta = g.column(j).norm_squared();
                let gamma = g.column(i).dot(&g.column(j));
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for mat in [&mut g, &mut v] {
                    for r in 0..mat.nrows() {
                        let (x, y) = (mat[(r, i)], mat[(r, j)]);
                        mat[(r, i)] = c * x - s * y;
                        mat[(r, j)] = s * x + c * y;
                    }
                }
            }
        }
        if !rotated {
            converged = true;
            break;
        }
    }
    if !converged || !finite(g.as_slice()) {
        return None;
    }
    let sigma = DVector::<f64>::from_fn(n, |k, _| g.column(k).norm());
    let smax = sigma.max();
    let mut u = DMatrix::<f64>::zeros(m, n);
    let mut missing = Vec::new();
    for k in 0..n {
        if sigma[k] > f64::EPSILON * smax && sigma[k] > 0.0 {
            u.set_column(k, &(g.column(k) / sigma[k]));
        } else {
            missing.push(k);
        }
    }
    // Complete U: Gram–Schmidt (twice) of the unit vectors against the columns so far.
    let mut e = 0;
    for k in missing {
        while e < m {
            let mut w = DVector::<f64>::zeros(m);
            w[e] = 1.0;
            e += 1;
            for _ in 0..2 {
                for c in 0..n {
                    let uc = u.column(c).clone_owned();
                    w -= &uc * uc.dot(&w);
                }
            }
            let wn = w.norm();
            if wn > 0.5 {
                u.set_column(k, &(w / wn));
                break;
            }
        }
    }
    Some(SVD {
        u: Some(u),
        v_t: Some(v.transpose()),
        singular_values: sigma,
    })
}

/// `max |A − U Σ Vᵀ|` of a decomposition with both factors (`∞` without them or when not
/// finite).
fn reconstruction_error(a: &DMatrix<f64>, s: &SVD<f64, Dyn, Dyn>) -> f64 {
    let (Some(u), Some(vt)) = (s.u.as_ref(), s.v_t.as_ref()) else {
        return f64::INFINITY;
    };
    let mut us = u.clone();
    for (k, sv) in s.singular_values.iter().enumerate() {
        us.column_mut(k).scale_mut(*sv);
    }
    let err = (us * vt - a).amax();
    if err.is_finite() {
        err
    } else {
        f64::INFINITY
    }
}

/// Singular values (descending, `n` of them: zero-padded when `m < n`) and the full
/// `n × n` matrix of right singular vectors (as columns) of an `m × n` matrix.
pub(crate) fn full_svd_v(a: &DMatrix<f64>) -> Option<(DVector<f64>, DMatrix<f64>)> {
    let (m, n) = a.shape();
    let padded = if m < n {
        let mut p = DMatrix::zeros(n, n);
        p.view_mut((0, 0), (m, n)).copy_from(a);
        p
    } else {
        a.clone()
    };
    let s = svd(padded)?;
    let v = s.v_t.as_ref()?.transpose();
    Some((s.singular_values.clone(), v))
}

/// Minimum-norm least-squares solution `A⁺ b`, singular values below `rcond·σ_max`
/// treated as zero. Returns the solution and `σ_min / σ_max` over the first
/// `min(m, n)` singular values.
pub(crate) fn lstsq(a: &DMatrix<f64>, b: &DMatrix<f64>, rcond: f64) -> Option<(DMatrix<f64>, f64)> {
    if a.is_empty() {
        // No equations (a model without constraints): the minimum-norm solution is zero.
        return finite(b.as_slice()).then(|| (DMatrix::zeros(a.ncols(), b.ncols()), 1.0));
    }
    let s = svd(a.clone())?;
    let smax = s.singular_values.iter().copied().fold(0.0, f64::max);
    let smin = s
        .singular_values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let health = if smax > 0.0 { smin / smax } else { 0.0 };
    let x = s.solve(b, rcond * smax).ok()?;
    if !finite(x.as_slice()) {
        return None;
    }
    Some((x, health))
}

/// Complement of `independent` in `0..nq`, or `None` when the indices are out of range
/// or repeated.
pub(crate) fn dependent_indices(nq: usize, independent: &[usize]) -> Option<Vec<usize>> {
    let mut used = vec![false; nq];
    for &i in independent {
        if i >= nq || used[i] {
            return None;
        }
        used[i] = true;
    }
    Some((0..nq).filter(|&i| !used[i]).collect())
}

/// Columns `cols` of `a`.
pub(crate) fn columns(a: &DMatrix<f64>, cols: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(a.nrows(), cols.len(), |i, k| a[(i, cols[k])])
}

/// A numeric factorisation of the dependent columns `J_dep` of a Jacobian.
pub(crate) struct DependentFactor {
    /// Indices of the dependent coordinates.
    pub dep: Vec<usize>,
    kind: FactorKind,
    /// `min |U_kk| / max |U_kk|` (square, full-pivot LU) or `σ_min / σ_max` (rectangular).
    pub health: f64,
}

enum FactorKind {
    Lu(FullPivLU<f64, Dyn, Dyn>),
    Pinv(DMatrix<f64>),
}

impl DependentFactor {
    /// Factorises the dependent columns of `j`; `None` when the decomposition fails.
    pub fn new(j: &DMatrix<f64>, dep: Vec<usize>) -> Option<Self> {
        if !finite(j.as_slice()) {
            return None;
        }
        let jd = columns(j, &dep);
        let (m, n) = jd.shape();
        if n == 0 {
            return Some(DependentFactor {
                dep,
                kind: FactorKind::Pinv(DMatrix::zeros(0, m)),
                health: 1.0,
            });
        }
        if m == n {
            let lu = jd.full_piv_lu();
            let u = lu.u();
            let diag: Vec<f64> = (0..n).map(|k| u[(k, k)].abs()).collect();
            let max = diag.iter().copied().fold(0.0, f64::max);
            let min = diag.iter().copied().fold(f64::INFINITY, f64::min);
            let health = if max > 0.0 && min.is_finite() {
                min / max
            } else {
                0.0
            };
            Some(DependentFactor {
                dep,
                kind: FactorKind::Lu(lu),
                health,
            })
        } else {
            let s = svd(jd)?;
            let sv = &s.singular_values;
            let smax = sv.iter().copied().fold(0.0, f64::max);
            let health = if m < n || smax == 0.0 {
                0.0
            } else {
                sv.iter().copied().fold(f64::INFINITY, f64::min) / smax
            };
            let pinv = s.pseudo_inverse(1e-13 * smax).ok()?;
            Some(DependentFactor {
                dep,
                kind: FactorKind::Pinv(pinv),
                health,
            })
        }
    }

    /// Solves `J_dep X = B` (least squares when `J_dep` is not square).
    pub fn solve(&self, b: &DMatrix<f64>) -> Option<DMatrix<f64>> {
        let x = match &self.kind {
            FactorKind::Lu(lu) => lu.solve(b)?,
            FactorKind::Pinv(p) => {
                if p.ncols() != b.nrows() {
                    return None;
                }
                p * b
            }
        };
        finite(x.as_slice()).then_some(x)
    }
}

/// Why a reduced mass matrix could not be solved.
pub(crate) enum MassFailure {
    /// Non-finite entries or eigenvalues.
    NonFinite,
    /// A negative eigenvalue: `(λ_min, λ_max, eigenvector of λ_min)`.
    Indefinite(f64, f64, DVector<f64>),
    /// An eigenvalue `≤ 1e-14 λ_max` (in magnitude): eigenvector of `λ_min`.
    Singular(DVector<f64>),
}

/// Relative size below which an eigenvalue of a reduced mass matrix counts as zero (the
/// same bound for the projection method's `DᵀMD` and the Lagrange route's `NᵀMN`).
pub(crate) const MASS_RTOL: f64 = 1e-14;

/// Solves `A x = b` for a symmetric reduced mass matrix `A` after testing that it is
/// positive definite by its eigenvalues: every eigenvalue must exceed `MASS_RTOL · λ_max`.
/// A NaN entry or eigenvalue is reported as non-finite, a negative eigenvalue beyond the
/// rounding bound as indefinite, the rest as singular — NaN never passes a comparison.
pub(crate) fn reduced_mass_solve(
    a: DMatrix<f64>,
    b: &DVector<f64>,
) -> Result<DVector<f64>, MassFailure> {
    let n = a.nrows();
    if n == 0 {
        return Ok(DVector::zeros(0));
    }
    if !finite(a.as_slice()) || !finite(b.as_slice()) {
        return Err(MassFailure::NonFinite);
    }
    // Symmetrise (the products DᵀMD round asymmetrically).
    let a = (&a + a.transpose()) * 0.5;
    let eig = nalgebra::SymmetricEigen::try_new(a, f64::EPSILON, 200 * (n + 1))
        .ok_or(MassFailure::NonFinite)?;
    let ev = &eig.eigenvalues;
    if !finite(ev.as_slice()) {
        return Err(MassFailure::NonFinite);
    }
    let mut kmin = 0;
    let mut kmax = 0;
    for k in 1..n {
        if ev[k] < ev[kmin] {
            kmin = k;
        }
        if ev[k] > ev[kmax] {
            kmax = k;
        }
    }
    let (lmin, lmax) = (ev[kmin], ev[kmax]);
    let scale = lmax.abs().max(lmin.abs());
    let vmin = eig.eigenvectors.column(kmin).into_owned();
    if lmin < 0.0 && -lmin > MASS_RTOL * scale {
        return Err(MassFailure::Indefinite(lmin, lmax, vmin));
    }
    // (NaN already excluded above.)
    if lmin <= MASS_RTOL * lmax {
        return Err(MassFailure::Singular(vmin));
    }
    let qtb = eig.eigenvectors.tr_mul(b);
    let y = DVector::from_fn(n, |k, _| qtb[k] / ev[k]);
    Ok(&eig.eigenvectors * y)
}

#[cfg(test)]
mod tests;

/// `a b` for `f64` ([`product_columns`]).
pub(crate) fn mul<const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
) -> SMatrix<f64, R, C> {
    let mut out = SMatrix::<f64, R, C>::zeros();
    product_columns(a, b, out.as_mut_slice(), |col, acc| {
        col.copy_from_slice(acc)
    });
    out
}

/// `out = a b` for `f64`, every entry written ([`product_columns`]; no temporary).
pub(crate) fn mul_to<const R: usize, const K: usize, const C: usize>(
    out: &mut SMatrix<f64, R, C>,
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
) {
    product_columns(a, b, out.as_mut_slice(), |col, acc| {
        col.copy_from_slice(acc)
    });
}

/// `out += alpha a b`, in place (the products as in [`mul`]'s column-by-column form).
pub(crate) fn mul_acc<const R: usize, const K: usize, const C: usize>(
    out: &mut SMatrix<f64, R, C>,
    alpha: f64,
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
) {
    product_columns(a, b, out.as_mut_slice(), |col, acc| {
        for (o, x) in col.iter_mut().zip(acc) {
            *o += alpha * x;
        }
    });
}

/// Column `j` of `a b`, accumulated in a local array, handed to `store` with column `j` of
/// `out` (column-major, `R` rows). With fewer than four rows and fewer rows than the inner
/// dimension, one dot product per entry; otherwise contiguous inner loops over `a`'s
/// columns, which the compiler vectorises, skipping the exact zeros of `b` (the generated
/// derivative matrices are sparse; every zero of `b` saves a column of `a`) and `a`'s zero
/// columns.
fn product_columns<const R: usize, const K: usize, const C: usize>(
    a: &SMatrix<f64, R, K>,
    b: &SMatrix<f64, K, C>,
    out: &mut [f64],
    mut store: impl FnMut(&mut [f64], &[f64; R]),
) {
    // Column-major storage: column `k` of `a` is `a[k R .. (k + 1) R]`.
    let (av, bv) = (a.as_slice(), b.as_slice());
    if R < 4 && R < K {
        // A few rows (the `DOF`-row reductions of small mechanisms): one dot product per
        // entry, no branches (a zero test per entry costs more than the product).
        for (j, col) in out.chunks_exact_mut(R).enumerate() {
            let bcol = &bv[j * K..(j + 1) * K];
            let acc: [f64; R] = std::array::from_fn(|i| {
                let mut acc = 0.0;
                for (k, &x) in bcol.iter().enumerate() {
                    acc += av[k * R + i] * x;
                }
                acc
            });
            store(col, &acc);
        }
        return;
    }
    let live: [bool; K] = std::array::from_fn(|k| av[k * R..(k + 1) * R].iter().any(|&x| x != 0.0));
    for (j, col) in out.chunks_exact_mut(R).enumerate() {
        // The column accumulates in a local array (kept in registers for the small `R` of
        // mechanisms: one store per entry instead of one per term).
        let mut acc = [0.0f64; R];
        for k in 0..K {
            let bkj = bv[j * K + k];
            if bkj == 0.0 || !live[k] {
                continue;
            }
            for (o, x) in acc.iter_mut().zip(&av[k * R..(k + 1) * R]) {
                *o += x * bkj;
            }
        }
        store(col, &acc);
    }
}

/// Solves `a x = b` (any number of right-hand sides) by LU with partial pivoting on the values (for dual numbers the pivot
/// order is the value's, and the derivative parts follow it exactly). `None` when a pivot
/// is at most `1e-14` of the largest entry.
pub(crate) fn lu_solve<S: Real, const N: usize, const C: usize>(
    mut a: SMatrix<S, N, N>,
    mut b: SMatrix<S, N, C>,
) -> Result<SMatrix<S, N, C>, f64> {
    let scale = a.iter().fold(0.0f64, |m, x| m.max(x.value().abs()));
    let mut worst = f64::INFINITY;
    for k in 0..N {
        let mut p = k;
        for i in k + 1..N {
            if a[(i, k)].value().abs() > a[(p, k)].value().abs() {
                p = i;
            }
        }
        let piv = a[(p, k)].value().abs();
        worst = worst.min(piv / scale);
        // (NaN fails the comparison too.)
        if piv.partial_cmp(&(1e-14 * scale)) != Some(std::cmp::Ordering::Greater) {
            return Err(worst);
        }
        if p != k {
            a.swap_rows(p, k);
            b.swap_rows(p, k);
        }
        for i in k + 1..N {
            let l = a[(i, k)] / a[(k, k)];
            for j in k..N {
                let akj = a[(k, j)];
                a[(i, j)] -= l * akj;
            }
            for c in 0..C {
                let bk = b[(k, c)];
                b[(i, c)] -= l * bk;
            }
        }
    }
    back_substitute(&a, &mut b);
    Ok(b)
}

/// `b ← U⁻¹ b` for the upper triangle `U` of `a` (its diagonal included), column by column
/// from the last row up: the back substitution of [`lu_solve`] and of the step Jacobian's
/// factored LU.
#[inline(always)]
pub(crate) fn back_substitute<S: Real, const N: usize, const C: usize>(
    a: &SMatrix<S, N, N>,
    b: &mut SMatrix<S, N, C>,
) {
    for c in 0..C {
        for k in (0..N).rev() {
            let mut acc = b[(k, c)];
            for j in k + 1..N {
                acc -= a[(k, j)] * b[(j, c)];
            }
            b[(k, c)] = acc / a[(k, k)];
        }
    }
}

#[cfg(test)]
mod product_tests;
