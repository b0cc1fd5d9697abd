//! Charts: choices of independent coordinates, their health, and the best one at a
//! configuration.

use nalgebra::{SMatrix, SVector};

use crate::error::KinematicsError;
use crate::linalg::{self, DependentFactor};
use crate::mechanism::Mechanism;

/// A choice of independent coordinates (a chart of the constraint manifold): the identity
/// rows of the null-space basis and the coordinates held fixed by assembly. The generated
/// code serves [`Mechanism::INDEPENDENT`] ([`Chart::generated`]); any other set is served
/// by a numeric factorisation of its dependent Jacobian columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chart<const DOF: usize> {
    pub(crate) independent: [usize; DOF],
    pub(crate) dependent: Vec<usize>,
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
pub(crate) fn sane_health<const NQ: usize, const DOF: usize>(
    d: &SMatrix<f64, NQ, DOF>,
    h: f64,
) -> f64 {
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
    numeric_chart_health::<M, NQ, NC, DOF>(chart, q, p, t)
}

/// The numeric health of `chart` at `q` whatever code serves it: `min |U_kk| / max |U_kk|`
/// of a full-pivot LU of its dependent Jacobian columns (`σ_min / σ_max` when they are not
/// square), 0 for non-finite values or a failed factorisation. The one figure on which
/// charts can be compared: the generated code's health figure is on another scale (its
/// relative static pivot: on A02 with 40 windows near a flat position, 0.11 times this
/// figure for the same chart).
pub(crate) fn numeric_chart_health<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
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
