//! Small numeric helpers shared by the solvers (crate-private).

use nalgebra::{DMatrix, DVector, Dyn, FullPivLU, SMatrix, SVD};

/// Converts a fixed-size matrix to a dynamic one.
pub(crate) fn dmatrix<const R: usize, const C: usize>(m: &SMatrix<f64, R, C>) -> DMatrix<f64> {
    DMatrix::from_column_slice(R, C, m.as_slice())
}

/// True when every entry is finite.
pub(crate) fn finite(s: &[f64]) -> bool {
    s.iter().all(|x| x.is_finite())
}

/// SVD with a bounded iteration count; `None` on an empty or non-finite input or
/// non-convergence.
pub(crate) fn svd(a: DMatrix<f64>) -> Option<SVD<f64, Dyn, Dyn>> {
    if a.is_empty() || !finite(a.as_slice()) {
        return None;
    }
    let iters = 200 * (a.nrows() + a.ncols() + 1);
    SVD::try_new(a, true, true, f64::EPSILON, iters)
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
