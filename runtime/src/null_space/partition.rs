//! Partitions: a chart's factorised dependent columns at one configuration (generated
//! code where healthy, numeric otherwise).

use nalgebra::{DMatrix, SMatrix, SVector};

use super::*;
use crate::error::KinematicsError;
use crate::linalg::{self, DependentFactor};
use crate::mechanism::Mechanism;

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
    /// The basis and how it was obtained, as [`null_space_checked`] reports them.
    pub(crate) fn outcome(&self) -> NullSpaceOutcome<NQ, DOF> {
        NullSpaceOutcome {
            d: self.d,
            path: self.path,
        }
    }

    /// `q̇ = D u + x`: the velocity whose independent part is `u`, `x` the dependent solve
    /// of `C_J x = −C_t` (none where `C_t = 0`). Inlined, as [`Self::solve_dependent`].
    #[inline(always)]
    pub(crate) fn velocity<M, const NC: usize>(
        &self,
        q: &SVector<f64, NQ>,
        u: &SVector<f64, DOF>,
        p: &M::Params,
        t: f64,
        ct: &SVector<f64, NC>,
    ) -> Result<SVector<f64, NQ>, KinematicsError>
    where
        M: Mechanism<NQ, NC, DOF>,
    {
        let mut qd = self.d * u;
        if ct.iter().any(|&c| c != 0.0) {
            qd += self.solve_dependent::<M, NC>(q, p, t, &(-ct))?;
        }
        Ok(qd)
    }

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
pub(crate) fn try_partition<M, const NQ: usize, const NC: usize, const DOF: usize>(
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
pub(crate) fn partition_full<M, const NQ: usize, const NC: usize, const DOF: usize>(
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
