//! Null-space bases with a pivot-health fallback, and plain numeric null-space
//! routines (benchmark baselines).
//!
//! The generated [`Mechanism::null_space`] runs an LU with *statically* chosen pivots. It
//! reports its smallest relative pivot; when that falls below a threshold the static order
//! is breaking down and [`null_space_checked`] switches to a numeric basis:
//!
//! 1. the same parametrisation (identity rows at [`Mechanism::INDEPENDENT`],
//!    `D_dep = −J_dep⁻¹ J_ind`) from nalgebra's full-pivot LU of the dependent columns,
//!    when those are well conditioned;
//! 2. otherwise an orthonormal basis from the SVD of `C_J` (right singular vectors of the
//!    `DOF` smallest singular values). This basis no longer has identity rows: the
//!    independent coordinates do not parametrise the mechanism there (a toggle or
//!    dead-centre position).

mod chart;
mod partition;

pub use chart::{best_chart, chart_health, Chart};
pub(crate) use chart::{generated_basis, sane_health};
pub(crate) use partition::{
    healthy_generated_partition, partition, partition_full, partition_in, try_partition, Partition,
};

use nalgebra::{DMatrix, SMatrix, SVector};

use crate::error::KinematicsError;
use crate::linalg;
use crate::mechanism::Mechanism;

/// Default threshold on the smallest relative pivot (and on the numeric LU health).
pub const DEFAULT_PIVOT_THRESHOLD: f64 = 1e-6;

/// Whether `threshold` is a usable pivot threshold: a number in `[0, 1]` (NaN, negative
/// values and values above 1 — a relative pivot never exceeds 1 — are rejected).
pub fn valid_threshold(threshold: f64) -> bool {
    (0.0..=1.0).contains(&threshold)
}

/// Which computation produced a null-space basis, with its health figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NullSpacePath {
    /// The generated straight-line basis; `min_pivot` is its smallest relative pivot.
    Static {
        /// Smallest relative pivot of the static LU.
        min_pivot: f64,
    },
    /// Numeric basis with the same independent coordinates (full-pivot LU of `J_dep`).
    NumericSameCoordinates {
        /// Smallest relative pivot of the static LU (below the threshold).
        min_pivot: f64,
        /// `min |U_kk| / max |U_kk|` of the full-pivot LU of `J_dep` (or `σ_min/σ_max`
        /// when `J_dep` is not square, with redundant constraints).
        lu_health: f64,
    },
    /// The generated basis of a further chart of the pivot atlas
    /// ([`Mechanism::ATLAS_CHARTS`]): after a partition switch, or one with the generated
    /// chart's independent coordinates where the primary pivot order degrades.
    Atlas {
        /// Index into [`Mechanism::ATLAS_CHARTS`].
        chart: usize,
        /// Its health figure.
        min_pivot: f64,
    },
    /// Orthonormal basis from the SVD of `C_J`.
    NumericSvd {
        /// Smallest relative pivot of the static LU (below the threshold).
        min_pivot: f64,
        /// Health of the dependent columns (below the threshold).
        lu_health: f64,
        /// `σ_r / σ_1`, `r = NQ − DOF`: how far `C_J` is from losing rank (near 0: the
        /// constraints themselves are singular here and the basis is not unique).
        rank_margin: f64,
    },
}

/// A null-space basis and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NullSpaceOutcome<const NQ: usize, const DOF: usize> {
    /// Basis `D` (`NQ × DOF`, `C_J D ≈ 0`).
    pub d: SMatrix<f64, NQ, DOF>,
    /// Path taken.
    pub path: NullSpacePath,
}

impl<const NQ: usize, const DOF: usize> NullSpaceOutcome<NQ, DOF> {
    /// The health figure of the path taken: the static relative pivot, the numeric LU
    /// health, or the SVD rank margin (all in `[0, 1]`, larger is healthier).
    pub fn health(&self) -> f64 {
        match self.path {
            NullSpacePath::Static { min_pivot } | NullSpacePath::Atlas { min_pivot, .. } => {
                min_pivot
            }
            NullSpacePath::NumericSameCoordinates { lu_health, .. } => lu_health,
            NullSpacePath::NumericSvd { rank_margin, .. } => rank_margin,
        }
    }

    /// True when `D` has identity rows at the independent coordinates.
    pub fn same_coordinates(&self) -> bool {
        !matches!(self.path, NullSpacePath::NumericSvd { .. })
    }
}

/// Null-space basis of `C_J(q, p, t)` with a pivot-health check.
///
/// Returns the generated basis when its smallest relative pivot is `≥ threshold`
/// ([`NullSpacePath::Static`]), or that of a pivot-atlas chart with the same independent
/// coordinates where the primary one degrades and it is that healthy
/// ([`NullSpacePath::Atlas`]); otherwise the numeric basis with the same independent
/// coordinates when the dependent columns are healthy (LU health `≥ threshold`,
/// [`NullSpacePath::NumericSameCoordinates`]); otherwise an orthonormal SVD basis
/// ([`NullSpacePath::NumericSvd`]). [`DEFAULT_PIVOT_THRESHOLD`] is a sensible threshold.
///
/// Errors: non-finite `q` or Jacobian, failed SVD, invalid `INDEPENDENT`.
pub fn null_space_checked<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<NullSpaceOutcome<NQ, DOF>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    match try_partition::<M, NQ, NC, DOF>(q, p, t, threshold)? {
        Ok(part) => Ok(part.outcome()),
        Err((min_pivot, lu_health, jd)) => {
            let (d, rank_margin) = svd_basis::<NQ, DOF>(&jd)?;
            Ok(NullSpaceOutcome {
                d,
                path: NullSpacePath::NumericSvd {
                    min_pivot,
                    lu_health,
                    rank_margin,
                },
            })
        }
    }
}

/// Null-space basis with identity rows at [`Mechanism::INDEPENDENT`] — its columns are the
/// derivatives `∂q/∂q[INDEPENDENT]` — or an error where those coordinates do not
/// parametrise the mechanism: [`null_space_checked`] without its SVD fallback (whose basis
/// has no identity rows). The generated basis while its health is at least `threshold`
/// ([`NullSpacePath::Static`], or [`NullSpacePath::Atlas`] for a pivot-atlas chart with the
/// same independent coordinates), else the numeric basis of a full-pivot LU of the
/// dependent columns ([`NullSpacePath::NumericSameCoordinates`]).
///
/// Errors: [`KinematicsError::SingularPartition`] where that LU's health is below
/// `threshold` (the independent coordinates do not parametrise the mechanism at `q`: a
/// Cartesian pendulum at the horizontal with `x` independent); non-finite `q` or Jacobian;
/// an invalid threshold or `INDEPENDENT`.
pub fn null_space_independent<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<NullSpaceOutcome<NQ, DOF>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    partition_full::<M, NQ, NC, DOF>(q, p, t, threshold).map(|part| part.outcome())
}

fn svd_basis<const NQ: usize, const DOF: usize>(
    j: &DMatrix<f64>,
) -> Result<(SMatrix<f64, NQ, DOF>, f64), KinematicsError> {
    let (sv, v) = linalg::full_svd_v(j).ok_or(KinematicsError::DecompositionFailed {
        what: "SVD of the constraint Jacobian",
    })?;
    if v.nrows() != NQ || v.ncols() != NQ || DOF > NQ {
        return Err(KinematicsError::InvalidModel(
            "Jacobian shape does not match NQ",
        ));
    }
    let r = NQ - DOF;
    let s1 = sv.get(0).copied().unwrap_or(0.0);
    let rank_margin = if r == 0 {
        1.0
    } else if s1 > 0.0 {
        sv.get(r - 1).copied().unwrap_or(0.0) / s1
    } else {
        0.0
    };
    let mut d = SMatrix::<f64, NQ, DOF>::zeros();
    for c in 0..DOF {
        d.set_column(c, &v.column(r + c));
    }
    Ok((d, rank_margin))
}

/// Orthonormal null-space basis of an `NC × NQ` Jacobian from nalgebra's SVD: the right
/// singular vectors of the `DOF` smallest singular values (a benchmark baseline for the
/// generated basis; any `C_J`).
///
/// ```
/// use mechgen_runtime::null_space::svd_null_space;
/// use mechgen_runtime::nalgebra::SMatrix;
///
/// let j = SMatrix::<f64, 1, 2>::new(1.0, 1.0);
/// let d = svd_null_space::<1, 2, 1>(&j)?;
/// assert!((j * d).norm() < 1e-15 && (d.norm() - 1.0).abs() < 1e-15);
/// # Ok::<(), mechgen_runtime::KinematicsError>(())
/// ```
pub fn svd_null_space<const NC: usize, const NQ: usize, const DOF: usize>(
    jacobian: &SMatrix<f64, NC, NQ>,
) -> Result<SMatrix<f64, NQ, DOF>, KinematicsError> {
    svd_basis::<NQ, DOF>(&linalg::dmatrix(jacobian)).map(|(d, _)| d)
}

/// Null-space basis of an `NC × NQ` Jacobian from nalgebra's full-pivot LU
/// `P C_J Q = L U`: with `U = [U1 U2]` (`U1` the leading `NQ − DOF` square block),
/// `D = Q [−U1⁻¹ U2; I]` (a benchmark baseline: the numeric counterpart of the generated
/// basis, with pivots chosen at run time).
///
/// Errors: non-finite input, or `U1` singular (rank below `NQ − DOF`).
///
/// ```
/// use mechgen_runtime::null_space::lu_null_space;
/// use mechgen_runtime::nalgebra::SMatrix;
///
/// let j = SMatrix::<f64, 1, 2>::new(1.0, 2.0);
/// let d = lu_null_space::<1, 2, 1>(&j)?;
/// assert!((j * d).norm() < 1e-15);
/// # Ok::<(), mechgen_runtime::KinematicsError>(())
/// ```
pub fn lu_null_space<const NC: usize, const NQ: usize, const DOF: usize>(
    jacobian: &SMatrix<f64, NC, NQ>,
) -> Result<SMatrix<f64, NQ, DOF>, KinematicsError> {
    if !linalg::finite(jacobian.as_slice()) {
        return Err(KinematicsError::DecompositionFailed {
            what: "full-pivot LU: non-finite Jacobian",
        });
    }
    if DOF > NQ || NQ - DOF > NC {
        return Err(KinematicsError::InvalidModel(
            "NQ - DOF exceeds the number of constraint rows",
        ));
    }
    let r = NQ - DOF;
    let lu = linalg::dmatrix(jacobian).full_piv_lu();
    let (_p, _l, u, qperm) = lu.unpack();
    // perm[k] = original column that ended in position k.
    let mut perm = DMatrix::<f64>::from_fn(1, NQ, |_, k| k as f64);
    qperm.permute_columns(&mut perm);
    let u1 = u.view((0, 0), (r, r)).into_owned();
    let u2 = u.view((0, r), (r, DOF)).into_owned();
    let umax = (0..r).map(|k| u1[(k, k)].abs()).fold(0.0, f64::max);
    let umin = (0..r)
        .map(|k| u1[(k, k)].abs())
        .fold(f64::INFINITY, f64::min);
    if r > 0 && (umin.is_nan() || umin <= f64::EPSILON * umax) {
        return Err(KinematicsError::DecompositionFailed {
            what: "full-pivot LU: rank of the Jacobian below NQ - DOF",
        });
    }
    let top = u1
        .solve_upper_triangular(&u2)
        .ok_or(KinematicsError::DecompositionFailed {
            what: "full-pivot LU: singular leading block",
        })?;
    let mut d = SMatrix::<f64, NQ, DOF>::zeros();
    for k in 0..NQ {
        let row = perm[(0, k)] as usize;
        for c in 0..DOF {
            d[(row, c)] = if k < r {
                -top[(k, c)]
            } else if k - r == c {
                1.0
            } else {
                0.0
            };
        }
    }
    if !linalg::finite(d.as_slice()) {
        return Err(KinematicsError::DecompositionFailed {
            what: "full-pivot LU: non-finite null-space basis",
        });
    }
    Ok(d)
}
