//! Index-1 Lagrange-multiplier dynamics (seed 002): with state `(q, q̇)`, solve
//!
//! ```text
//! [ M    −C_Jᵀ ] [ q̈ ]   [ f ]
//! [ C_J    0   ] [ λ  ] = [ d ],    d = γ − (2/τ) Ċ − (1/τ²) C,   Ċ = C_J q̇ + C_t
//! ```
//!
//! (`d = γ` without Baumgarte stabilisation), so that `M q̈ = f + C_Jᵀ λ`. The augmented
//! matrix is solved by nalgebra's full-pivot LU; it is singular with redundant
//! constraints (use the projection method there).

use nalgebra::{DMatrix, DVector, SVector};

use crate::error::DynamicsError;
use crate::linalg;
use crate::mechanism::Dynamics;

/// Accelerations and multipliers of the Lagrange formulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LagrangeAccelerations<const NQ: usize, const NC: usize> {
    /// `q̈`.
    pub qdd: SVector<f64, NQ>,
    /// `λ` (`M q̈ = f + C_Jᵀ λ`).
    pub lambda: SVector<f64, NC>,
}

/// Solves the augmented Lagrange system at `(q, q̇)`; `baumgarte_tau = Some(τ)` adds the
/// stabilisation terms `−(2/τ) Ċ − (1/τ²) C` to the right-hand side.
///
/// Errors: [`DynamicsError::SingularAugmented`] (with time and state) when the
/// augmented matrix is singular (relative pivot below `1e-14`),
/// [`DynamicsError::InvalidOptions`] for `τ ≤ 0`, [`DynamicsError::NonFinite`].
pub fn lagrange_accelerations<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    baumgarte_tau: Option<f64>,
) -> Result<LagrangeAccelerations<NQ, NC>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if !linalg::finite(q.as_slice()) || !linalg::finite(qd.as_slice()) {
        return Err(DynamicsError::NonFinite { what: "q or qd", t });
    }
    let mass = M::mass_matrix(q, p, t);
    let f = M::forces(q, qd, p, t);
    let j = M::jacobian(q, p, t);
    let mut d = M::gamma(q, qd, p, t);
    if let Some(tau) = baumgarte_tau {
        if !(tau.is_finite() && tau > 0.0) {
            return Err(DynamicsError::InvalidOptions(
                "Baumgarte time constant must be positive and finite",
            ));
        }
        let c = M::residual(q, p, t);
        let cdot = j * qd + M::jacobian_t(q, p, t);
        d -= cdot * (2.0 / tau) + c * (1.0 / (tau * tau));
    }
    if !linalg::finite(mass.as_slice())
        || !linalg::finite(f.as_slice())
        || !linalg::finite(j.as_slice())
        || !linalg::finite(d.as_slice())
    {
        return Err(DynamicsError::NonFinite {
            what: "mass matrix, forces, jacobian or gamma",
            t,
        });
    }
    let n = NQ + NC;
    let mut k = DMatrix::<f64>::zeros(n, n);
    k.view_mut((0, 0), (NQ, NQ)).copy_from(&mass);
    k.view_mut((0, NQ), (NQ, NC)).copy_from(&(-j.transpose()));
    k.view_mut((NQ, 0), (NC, NQ)).copy_from(&j);
    let mut rhs = DVector::<f64>::zeros(n);
    rhs.rows_mut(0, NQ).copy_from(&f);
    rhs.rows_mut(NQ, NC).copy_from(&d);
    let singular = || DynamicsError::SingularAugmented {
        t,
        q: q.as_slice().to_vec(),
        qd: qd.as_slice().to_vec(),
    };
    let lu = k.full_piv_lu();
    let u = lu.u();
    let umax = (0..n).map(|i| u[(i, i)].abs()).fold(0.0, f64::max);
    let umin = (0..n)
        .map(|i| u[(i, i)].abs())
        .fold(f64::INFINITY, f64::min);
    if n > 0 && (umin.is_nan() || umin <= 1e-14 * umax) {
        return Err(singular());
    }
    let x = lu.solve(&rhs).ok_or_else(singular)?;
    if !linalg::finite(x.as_slice()) {
        return Err(singular());
    }
    Ok(LagrangeAccelerations {
        qdd: SVector::<f64, NQ>::from_fn(|i, _| x[i]),
        lambda: SVector::<f64, NC>::from_fn(|i, _| x[NQ + i]),
    })
}

/// The Lagrange right-hand side `(q̇, q̈)` of the state `(q, q̇)`.
///
/// Errors as [`lagrange_accelerations`].
pub fn lagrange_rhs<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    baumgarte_tau: Option<f64>,
) -> Result<(SVector<f64, NQ>, SVector<f64, NQ>), DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    lagrange_accelerations::<M, NQ, NC, DOF>(q, qd, p, t, baumgarte_tau).map(|a| (*qd, a.qdd))
}
