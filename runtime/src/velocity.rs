//! Velocity projection onto the velocity constraint `C_J q̇ + C_t = 0`.
//!
//! Two variants:
//! * [`velocity_from_independent`] / [`project_velocity`]: keep the independent velocities
//!   `u = q̇[INDEPENDENT]` and set `q̇' = D u + x`, `x` the zero-independent-part solution of
//!   `C_J x = −C_t` (the generated null space and dependent solve, with the numeric
//!   fallback of [`crate::null_space`] when the static pivots are unhealthy);
//! * [`project_velocity_min_norm`]: the closest consistent velocity in the Euclidean norm,
//!   `q̇ − C_Jᵀ (C_J C_Jᵀ)⁺ (C_J q̇ + C_t)`, computed numerically (SVD).

use nalgebra::{DMatrix, SVector};

use crate::error::KinematicsError;
use crate::linalg;
use crate::mechanism::Mechanism;
use crate::null_space::{best_chart, partition, partition_in, Chart, Partition};

/// The independent part `u = q̇[INDEPENDENT]` of a full velocity (or of any coordinate
/// vector).
///
/// Errors: [`KinematicsError::InvalidModel`] when `INDEPENDENT` is out of range.
pub fn independent_part<M, const NQ: usize, const NC: usize, const DOF: usize>(
    v: &SVector<f64, NQ>,
) -> Result<SVector<f64, DOF>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let mut u = SVector::<f64, DOF>::zeros();
    for (k, &i) in M::INDEPENDENT.iter().enumerate() {
        u[k] = *v.get(i).ok_or(KinematicsError::InvalidModel(
            "INDEPENDENT index out of range",
        ))?;
    }
    Ok(u)
}

/// The consistent velocity `q̇ = D u + x` (`C_J q̇ + C_t = 0`) whose independent part is
/// `u`.
///
/// `threshold` is the smallest acceptable relative static pivot (see
/// [`crate::null_space::null_space_checked`]); below it the numeric same-coordinate
/// partition is used. Errors: [`KinematicsError::SingularPartition`] when the
/// independent coordinates do not parametrise the mechanism at `q`, non-finite values.
pub fn velocity_from_independent<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<SVector<f64, NQ>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    if !linalg::finite(u.as_slice()) {
        return Err(KinematicsError::NonFinite { what: "u", t });
    }
    let part = partition::<M, NQ, NC, DOF>(q, p, t, threshold)?;
    velocity_with::<M, NQ, NC, DOF>(&part, q, u, p, t)
}

/// [`velocity_from_independent`] in the chart `chart`: `u` are the velocities of
/// `chart.independent()`.
///
/// Errors as [`velocity_from_independent`].
pub fn velocity_from_independent_in<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<SVector<f64, NQ>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    if !linalg::finite(u.as_slice()) {
        return Err(KinematicsError::NonFinite { what: "u", t });
    }
    let part = partition_in::<M, NQ, NC, DOF>(chart, q, p, t, threshold)?;
    velocity_with::<M, NQ, NC, DOF>(&part, q, u, p, t)
}

fn velocity_with<M, const NQ: usize, const NC: usize, const DOF: usize>(
    part: &Partition<NQ, DOF>,
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
) -> Result<SVector<f64, NQ>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let ct = M::jacobian_t(q, p, t);
    if !linalg::finite(ct.as_slice()) {
        return Err(KinematicsError::NonFinite {
            what: "jacobian_t",
            t,
        });
    }
    part.velocity::<M, NC>(q, u, p, t, &ct)
}

/// Projects `qd` onto `C_J q̇ + C_t = 0` keeping its independent velocities:
/// `velocity_from_independent(q, qd[INDEPENDENT])`.
///
/// Where [`Mechanism::INDEPENDENT`] does not parametrise the mechanism at `q` (its
/// partition is singular: a Cartesian pendulum released horizontal with `x` independent),
/// `qd` cannot keep those velocities; it keeps the velocities of the chart chosen at `q`
/// ([`best_chart`]) instead, and where that chart is not healthy either
/// (`health < threshold`) it is projected in the minimum norm
/// ([`project_velocity_min_norm`]).
///
/// Errors as [`velocity_from_independent`] (not [`KinematicsError::SingularPartition`]
/// unless every fallback fails).
pub fn project_velocity<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<SVector<f64, NQ>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let u = independent_part::<M, NQ, NC, DOF>(qd)?;
    match velocity_from_independent::<M, NQ, NC, DOF>(q, &u, p, t, threshold) {
        Err(singular @ KinematicsError::SingularPartition { .. }) => {
            if !linalg::finite(qd.as_slice()) {
                return Err(KinematicsError::NonFinite { what: "qd", t });
            }
            if let Ok((chart, health)) = best_chart::<M, NQ, NC, DOF>(q, p, t) {
                if health >= threshold && health > 0.0 {
                    let u = chart.independent_part(qd);
                    if let Ok(v) = velocity_from_independent_in::<M, NQ, NC, DOF>(
                        &chart, q, &u, p, t, threshold,
                    ) {
                        return Ok(v);
                    }
                }
            }
            project_velocity_min_norm::<M, NQ, NC, DOF>(q, qd, p, t).map_err(|_| singular)
        }
        other => other,
    }
}

/// Minimum-norm projection `q̇ − C_Jᵀ (C_J C_Jᵀ)⁺ (C_J q̇ + C_t)` (= `q̇ − C_J⁺ (C_J q̇ + C_t)`),
/// computed with nalgebra's SVD of `C_J` with the Lagrange route's rank decision
/// (singular values below [`crate::lagrange::RANK_RTOL`]` · σ_max` treated as zero); works
/// at singular configurations and with redundant constraints.
///
/// Errors: non-finite input or Jacobian, SVD failure.
pub fn project_velocity_min_norm<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Result<SVector<f64, NQ>, KinematicsError>
where
    M: Mechanism<NQ, NC, DOF>,
{
    if !linalg::finite(q.as_slice()) || !linalg::finite(qd.as_slice()) {
        return Err(KinematicsError::NonFinite { what: "q or qd", t });
    }
    let j = M::jacobian(q, p, t);
    let ct = M::jacobian_t(q, p, t);
    if !linalg::finite(j.as_slice()) || !linalg::finite(ct.as_slice()) {
        return Err(KinematicsError::NonFinite {
            what: "jacobian or jacobian_t",
            t,
        });
    }
    let r = j * qd + ct;
    let (corr, _) = linalg::lstsq(
        &linalg::dmatrix(&j),
        &DMatrix::from_column_slice(NC, 1, r.as_slice()),
        crate::lagrange::RANK_RTOL,
    )
    .ok_or(KinematicsError::DecompositionFailed {
        what: "SVD of the constraint Jacobian",
    })?;
    let mut out = *qd;
    for i in 0..NQ {
        out[i] -= corr[(i, 0)];
    }
    Ok(out)
}
