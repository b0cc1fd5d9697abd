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

use nalgebra::{DMatrix, SMatrix, SVector};

use crate::error::KinematicsError;
use crate::linalg::{self, DependentFactor};
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

/// How to solve `C_J x = b` with zero independent part at one configuration.
pub(crate) enum DependentSolve {
    /// Use the generated `solve_dependent`.
    Static,
    /// Use a numeric factorisation of `J_dep`.
    Numeric(DependentFactor),
    /// Use the generated dependent solve of atlas chart `k`.
    Atlas(usize),
}

/// The independent-coordinate partition at one configuration: basis and dependent solve.
pub(crate) struct Partition<const NQ: usize, const DOF: usize> {
    pub d: SMatrix<f64, NQ, DOF>,
    pub solve: DependentSolve,
    pub path: NullSpacePath,
    /// The independent coordinates of this partition (the identity rows of `d`).
    pub independent: [usize; DOF],
}

/// A choice of independent coordinates (a chart of the constraint manifold): the identity
/// rows of the null-space basis and the coordinates held fixed by assembly. The generated
/// code serves [`Mechanism::INDEPENDENT`] ([`Chart::generated`]); any other set is served
/// by a numeric factorisation of its dependent Jacobian columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart<const DOF: usize> {
    independent: [usize; DOF],
    dependent: Vec<usize>,
}

impl<const DOF: usize> Chart<DOF> {
    /// The chart of the independent coordinates `independent` among `nq` coordinates.
    ///
    /// Errors: [`KinematicsError::InvalidModel`] for out-of-range or repeated indices.
    pub fn new(nq: usize, independent: [usize; DOF]) -> Result<Self, KinematicsError> {
        let dependent = linalg::dependent_indices(nq, &independent).ok_or(
            KinematicsError::InvalidModel("independent coordinates out of range or repeated"),
        )?;
        Ok(Chart {
            independent,
            dependent,
        })
    }

    /// The generated chart, [`Mechanism::INDEPENDENT`].
    ///
    /// Errors: [`KinematicsError::InvalidModel`] when `INDEPENDENT` is invalid.
    pub fn generated<M, const NQ: usize, const NC: usize>() -> Result<Self, KinematicsError>
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        Chart::new(NQ, M::INDEPENDENT)
    }

    /// The independent coordinates (in the order of the columns of `D` and of `u`).
    pub fn independent(&self) -> &[usize; DOF] {
        &self.independent
    }

    /// The dependent coordinates (ascending).
    pub fn dependent(&self) -> &[usize] {
        &self.dependent
    }

    /// The index of this chart in [`Mechanism::ATLAS_CHARTS`] (a generated chart of the
    /// pivot atlas), if it is one.
    pub fn atlas_index<M, const NQ: usize, const NC: usize>(&self) -> Option<usize>
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        M::ATLAS_CHARTS.iter().position(|c| *c == self.independent)
    }

    /// Whether this is the generated chart [`Mechanism::INDEPENDENT`].
    pub fn is_generated<M, const NQ: usize, const NC: usize>(&self) -> bool
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        self.independent == M::INDEPENDENT
    }

    /// The independent part `v[independent]` of a coordinate or velocity vector.
    pub fn independent_part<const NQ: usize>(&self, v: &SVector<f64, NQ>) -> SVector<f64, DOF> {
        SVector::<f64, DOF>::from_fn(|k, _| v.get(self.independent[k]).copied().unwrap_or(0.0))
    }
}

/// The health figure cannot lie: a NaN or infinite pivot (or a non-finite basis) is health
/// 0, never compared as-is (NaN fails every comparison, and `f64::min` skips it); else `h`
/// clamped to `[0, 1]`.
#[inline(always)]
fn sane_health<const NQ: usize, const DOF: usize>(d: &SMatrix<f64, NQ, DOF>, h: f64) -> f64 {
    if h.is_finite() && linalg::finite(d.as_slice()) {
        h.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The generated chart's basis at `q`, its health in `[0, 1]` (0 where the basis or the
/// figure is not finite) and the atlas chart used: the primary static LU
/// ([`Mechanism::null_space`], `None`) or, where its health is below a tenth of the
/// model's typical health ([`Mechanism::TYPICAL_HEALTH`]), the healthiest of the pivot
/// atlas's charts with the same independent coordinates (`Some(k)`: another pivot order of
/// the same dependent block, e.g. a five-bar whose fixed order divides by zero where a
/// distal link is vertical), when it is healthier.
pub(crate) fn generated_basis<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> (SMatrix<f64, NQ, DOF>, f64, Option<usize>)
where
    M: Mechanism<NQ, NC, DOF>,
{
    let sane = sane_health::<NQ, DOF>;
    let (d, h) = M::null_space(q, p, t);
    let h = sane(&d, h);
    let mut best = (d, h, None);
    // A NaN typical health looks at the atlas too (`h` is a number here).
    let below = 0.1 * M::TYPICAL_HEALTH;
    if below.is_nan() || h < below {
        for (k, independent) in M::ATLAS_CHARTS.iter().enumerate() {
            if *independent != M::INDEPENDENT {
                continue;
            }
            if let Some((d, h)) = M::null_space_in_atlas(k, q, p, t) {
                let h = sane(&d, h);
                if h > best.1 {
                    best = (d, h, Some(k));
                }
            }
        }
    }
    best
}

/// Health in `[0, 1]` of `chart` at `q`: the generated `null_space`'s health figure for the
/// generated chart (or that of the atlas's charts with the same independent coordinates,
/// where the primary one degrades), the numeric LU health `min |U_kk| / max |U_kk|` of its
/// dependent columns otherwise (0 for non-finite values or a failed factorisation).
pub fn chart_health<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    if chart.is_generated::<M, NQ, NC>() {
        return generated_basis::<M, NQ, NC, DOF>(q, p, t).1;
    }
    let generated = {
        chart
            .atlas_index::<M, NQ, NC>()
            .and_then(|k| M::null_space_in_atlas(k, q, p, t))
    };
    if let Some((d, h)) = generated {
        return if h.is_finite() && linalg::finite(d.as_slice()) {
            h.clamp(0.0, 1.0)
        } else {
            0.0
        };
    }
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return 0.0;
    }
    DependentFactor::new(&linalg::dmatrix(&j), chart.dependent.clone())
        .map(|f| f.health)
        .filter(|h| h.is_finite())
        .unwrap_or(0.0)
}

/// The chart chosen at `q` by a complete-pivoting LU of `C_J` with its rows scaled to unit
/// length: the `NQ − DOF` pivot columns are dependent, the others independent (ascending).
/// Returns the chart and its health in `[0, 1]`: the smallest pivot relative to the
/// largest, times the smallest norm of a pivot row relative to the largest row norm (near
/// 0 the constraints themselves lose rank here — also where a whole row vanishes — and no
/// chart is healthy).
///
/// Errors: non-finite Jacobian.
pub fn best_chart<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Result<(Chart<DOF>, f64), KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) || DOF > NQ {
        return Err(KinematicsError::NonFinite {
            what: "jacobian",
            t,
        });
    }
    let mut a = linalg::dmatrix(&j);
    let mut norms = vec![0.0; NC];
    for (i, n_i) in norms.iter_mut().enumerate() {
        let n = a.row(i).norm();
        *n_i = n;
        if n > 0.0 {
            a.row_mut(i).scale_mut(1.0 / n);
        }
    }
    let max_norm = norms.iter().copied().fold(0.0, f64::max);
    let r = NQ - DOF;
    let mut rows: Vec<usize> = (0..NC).collect();
    let mut cols: Vec<usize> = (0..NQ).collect();
    let mut first = 0.0;
    let mut last = 0.0;
    for k in 0..r.min(NC) {
        // Largest remaining entry (first in row-major order on ties: deterministic).
        let mut best = (k, k, -1.0);
        for ri in k..NC {
            for ci in k..NQ {
                let v = a[(rows[ri], cols[ci])].abs();
                if v > best.2 {
                    best = (ri, ci, v);
                }
            }
        }
        rows.swap(k, best.0);
        cols.swap(k, best.1);
        let (pr, pc) = (rows[k], cols[k]);
        let piv = a[(pr, pc)];
        if k == 0 {
            first = piv.abs();
        }
        last = piv.abs();
        if piv == 0.0 {
            break;
        }
        for &ri in &rows[k + 1..] {
            let f = a[(ri, pc)] / piv;
            if f != 0.0 {
                for &ci in &cols[k..] {
                    let v = a[(pr, ci)];
                    a[(ri, ci)] -= f * v;
                }
            }
        }
    }
    let mut ind: Vec<usize> = cols[r..].to_vec();
    ind.sort_unstable();
    let mut independent = [0usize; DOF];
    independent.copy_from_slice(&ind);
    // Row scaling chooses the columns; the health also shows pivot rows that vanish
    // relative to the Jacobian (a rank drop where a whole row goes to zero).
    let min_pivot_row = rows[..r.min(NC)]
        .iter()
        .map(|&i| norms[i])
        .fold(f64::INFINITY, f64::min);
    let health = if r == 0 {
        1.0
    } else if first > 0.0 && r <= NC && max_norm > 0.0 {
        (last / first * (min_pivot_row / max_norm)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Ok((Chart::new(NQ, independent)?, health))
}

/// The partition of `chart` at `q`: the generated code for the generated chart when its
/// health is at least `threshold` (else the numeric factorisation), a numeric
/// factorisation of the dependent columns for any other chart;
/// [`KinematicsError::SingularPartition`] when that factorisation's health is below
/// `threshold`.
pub(crate) fn partition_in<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<Partition<NQ, DOF>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    if chart.is_generated::<M, NQ, NC>() {
        return partition::<M, NQ, NC, DOF>(q, p, t, threshold);
    }
    // A chart of the atlas: its generated code while healthy.
    if let Some(k) = chart.atlas_index::<M, NQ, NC>() {
        if let Some((d, h)) = M::null_space_in_atlas(k, q, p, t) {
            if h >= threshold && h.is_finite() && linalg::finite(d.as_slice()) {
                return Ok(Partition {
                    d,
                    solve: DependentSolve::Atlas(k),
                    path: NullSpacePath::Atlas {
                        chart: k,
                        min_pivot: h,
                    },
                    independent: chart.independent,
                });
            }
        }
    }
    if !valid_threshold(threshold) {
        return Err(KinematicsError::InvalidOptions(
            "pivot threshold must be a number in [0, 1]",
        ));
    }
    if !linalg::finite(q.as_slice()) {
        return Err(KinematicsError::NonFinite { what: "q", t });
    }
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return Err(KinematicsError::NonFinite {
            what: "jacobian",
            t,
        });
    }
    let jd = linalg::dmatrix(&j);
    match numeric_partition::<NQ, DOF>(&jd, &chart.independent, &chart.dependent, threshold)? {
        Ok((d, factor, lu_health)) => Ok(Partition {
            d,
            solve: DependentSolve::Numeric(factor),
            path: NullSpacePath::NumericSameCoordinates {
                min_pivot: f64::NAN,
                lu_health,
            },
            independent: chart.independent,
        }),
        Err(health) => Err(KinematicsError::SingularPartition {
            t,
            static_pivot: f64::NAN,
            health,
        }),
    }
}

/// `D = [I; −J_dep⁻¹ J_ind]` (rows permuted) from a numeric factorisation of the dependent
/// columns, or `Err(health)` when it is below `threshold`.
#[allow(clippy::type_complexity)]
fn numeric_partition<const NQ: usize, const DOF: usize>(
    jd: &DMatrix<f64>,
    independent: &[usize; DOF],
    dependent: &[usize],
    threshold: f64,
) -> Result<Result<(SMatrix<f64, NQ, DOF>, DependentFactor, f64), f64>, KinematicsError> {
    let factor = DependentFactor::new(jd, dependent.to_vec()).ok_or(
        KinematicsError::DecompositionFailed {
            what: "factorisation of the dependent Jacobian columns",
        },
    )?;
    let lu_health = factor.health;
    if lu_health >= threshold {
        let ind = linalg::columns(jd, independent);
        if let Some(x) = factor.solve(&ind) {
            let mut d = SMatrix::<f64, NQ, DOF>::zeros();
            for (c, &i) in independent.iter().enumerate() {
                d[(i, c)] = 1.0;
            }
            for (k, &i) in factor.dep.iter().enumerate() {
                for c in 0..DOF {
                    d[(i, c)] = -x[(k, c)];
                }
            }
            return Ok(Ok((d, factor, lu_health)));
        }
    }
    Ok(Err(lu_health))
}

impl<const NQ: usize, const DOF: usize> Partition<NQ, DOF> {
    /// Solves `C_J x = b` for `x` with zero independent part.
    ///
    /// The generated primary chart's solve is inlined into the caller (its trigonometry is
    /// then shared with the caller's other generated bodies at `q`); the other charts' and
    /// the numeric solve are out of line.
    #[inline(always)]
    pub fn solve_dependent<M, const NC: usize>(
        &self,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
        b: &SVector<f64, NC>,
    ) -> Result<SVector<f64, NQ>, KinematicsError>
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        match &self.solve {
            DependentSolve::Static => self.finish_solve(M::solve_dependent(q, p, t, b), t),
            _ => self.solve_dependent_other::<M, NC>(q, p, t, b),
        }
    }

    /// [`Self::solve_dependent`] in an atlas chart or numerically.
    #[inline(never)]
    fn solve_dependent_other<M, const NC: usize>(
        &self,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
        b: &SVector<f64, NC>,
    ) -> Result<SVector<f64, NQ>, KinematicsError>
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        let x = match &self.solve {
            DependentSolve::Static => M::solve_dependent(q, p, t, b),
            DependentSolve::Atlas(k) => M::solve_dependent_in_atlas(*k, q, p, t, b).ok_or(
                KinematicsError::InvalidModel("an atlas chart without its dependent solve"),
            )?,
            DependentSolve::Numeric(f) => {
                let bd = DMatrix::from_column_slice(NC, 1, b.as_slice());
                let xd = f.solve(&bd).ok_or(KinematicsError::NonFinite {
                    what: "numeric dependent solve",
                    t,
                })?;
                let mut x = SVector::<f64, NQ>::zeros();
                for (k, &i) in f.dep.iter().enumerate() {
                    x[i] = xd[(k, 0)];
                }
                x
            }
        };
        self.finish_solve(x, t)
    }

    /// `x` with its independent entries zeroed, checked finite.
    #[inline(always)]
    fn finish_solve(
        &self,
        mut x: SVector<f64, NQ>,
        t: f64,
    ) -> Result<SVector<f64, NQ>, KinematicsError> {
        for &i in self.independent.iter() {
            if let Some(xi) = x.get_mut(i) {
                *xi = 0.0;
            }
        }
        if !linalg::finite(x.as_slice()) {
            return Err(KinematicsError::NonFinite {
                what: "dependent solve",
                t,
            });
        }
        Ok(x)
    }
}

/// Static pivot, dependent-column health and Jacobian when neither LU path is usable.
type Unhealthy = (f64, f64, DMatrix<f64>);

/// Static basis when healthy, else the numeric same-coordinate basis; `Err(health)` with
/// the static pivot and LU health when neither is usable.
fn try_partition<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<Result<Partition<NQ, DOF>, Unhealthy>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    if !valid_threshold(threshold) {
        return Err(KinematicsError::InvalidOptions(
            "pivot threshold must be a number in [0, 1]",
        ));
    }
    if !linalg::finite(q.as_slice()) {
        return Err(KinematicsError::NonFinite { what: "q", t });
    }
    // Health 0 for a non-finite figure or basis (see `generated_basis`).
    let (d, min_pivot, atlas) = generated_basis::<M, NQ, NC, DOF>(q, p, t);
    if min_pivot > 0.0 && min_pivot >= threshold {
        let (solve, path) = match atlas {
            None => (DependentSolve::Static, NullSpacePath::Static { min_pivot }),
            Some(k) => (
                DependentSolve::Atlas(k),
                NullSpacePath::Atlas {
                    chart: k,
                    min_pivot,
                },
            ),
        };
        return Ok(Ok(Partition {
            d,
            solve,
            path,
            independent: M::INDEPENDENT,
        }));
    }
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return Err(KinematicsError::NonFinite {
            what: "jacobian",
            t,
        });
    }
    let jd = linalg::dmatrix(&j);
    let dep = linalg::dependent_indices(NQ, &M::INDEPENDENT).ok_or(
        KinematicsError::InvalidModel("INDEPENDENT has out-of-range or repeated indices"),
    )?;
    match numeric_partition::<NQ, DOF>(&jd, &M::INDEPENDENT, &dep, threshold)? {
        Ok((d, factor, lu_health)) => Ok(Ok(Partition {
            d,
            solve: DependentSolve::Numeric(factor),
            path: NullSpacePath::NumericSameCoordinates {
                min_pivot,
                lu_health,
            },
            independent: M::INDEPENDENT,
        })),
        Err(lu_health) => Ok(Err((min_pivot, lu_health, jd))),
    }
}

/// The first generated chart — the primary one, then the pivot atlas's in order — whose
/// health is at least `threshold` (with a finite basis), as a partition; `None` when no
/// generated chart is that healthy at `q` (or `q` is not finite).
pub(crate) fn healthy_generated_partition<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Option<Partition<NQ, DOF>>
where
    M: Mechanism<NQ, NC, DOF>,
{
    if !linalg::finite(q.as_slice()) {
        return None;
    }
    let healthy = |d: &SMatrix<f64, NQ, DOF>, h: f64| {
        h.is_finite() && h >= threshold && linalg::finite(d.as_slice())
    };
    let (d, h) = M::null_space(q, p, t);
    if healthy(&d, h) {
        return Some(Partition {
            d,
            solve: DependentSolve::Static,
            path: NullSpacePath::Static {
                min_pivot: h.min(1.0),
            },
            independent: M::INDEPENDENT,
        });
    }
    for (k, independent) in M::ATLAS_CHARTS.iter().enumerate() {
        if let Some((d, h)) = M::null_space_in_atlas(k, q, p, t) {
            if healthy(&d, h) {
                return Some(Partition {
                    d,
                    solve: DependentSolve::Atlas(k),
                    path: NullSpacePath::Atlas {
                        chart: k,
                        min_pivot: h.min(1.0),
                    },
                    independent: *independent,
                });
            }
        }
    }
    None
}

/// The partition used by the dynamics and velocity routines: static when healthy (the
/// primary chart or an atlas chart with the same independent coordinates), else numeric
/// with the same coordinates, else [`KinematicsError::SingularPartition`].
///
/// Inlined where the primary chart is healthy (the usual case), so that the generated basis
/// lands in the caller beside the other generated bodies at the same `q` (the right-hand
/// side's `γ`, `M`, `f`) and the compiler computes their shared trigonometry once; any
/// other case takes the full path out of line (which evaluates the basis again).
#[inline(always)]
pub(crate) fn partition<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<Partition<NQ, DOF>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    // `try_partition`'s first case, in the same order of tests: a valid threshold, finite
    // `q`, a primary basis healthy enough that the atlas is not consulted, and at least
    // `threshold`.
    if valid_threshold(threshold) && linalg::finite(q.as_slice()) {
        let (d, h) = M::null_space(q, p, t);
        let h = sane_health(&d, h);
        let below = 0.1 * M::TYPICAL_HEALTH;
        if !(below.is_nan() || h < below) && h > 0.0 && h >= threshold {
            return Ok(Partition {
                d,
                solve: DependentSolve::Static,
                path: NullSpacePath::Static { min_pivot: h },
                independent: M::INDEPENDENT,
            });
        }
    }
    partition_full::<M, NQ, NC, DOF>(q, p, t, threshold)
}

/// [`partition`] in full (out of line).
#[inline(never)]
fn partition_full<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<Partition<NQ, DOF>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    match try_partition::<M, NQ, NC, DOF>(q, p, t, threshold)? {
        Ok(part) => Ok(part),
        Err((static_pivot, health, _)) => Err(KinematicsError::SingularPartition {
            t,
            static_pivot,
            health,
        }),
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
        Ok(part) => Ok(NullSpaceOutcome {
            d: part.d,
            path: part.path,
        }),
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
    let part = partition_full::<M, NQ, NC, DOF>(q, p, t, threshold)?;
    Ok(NullSpaceOutcome {
        d: part.d,
        path: part.path,
    })
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
