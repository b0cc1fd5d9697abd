//! The step with dry friction in joints and its Jacobians on the modes held, as
//! [`friction_step_jacobians`](crate::contact::friction_step_jacobians) does for contacts:
//! the joints' modes of [`joint_friction_accelerations`] at the state are held — a sticking
//! joint's slip row as an equality, a sliding joint's friction `−σ μ r ‖λ_G‖` along `J_sᵀ`
//! written `−σ μ r n̂·λ_G` with the solve's normal direction `n̂ = λ_G/‖λ_G‖` (the same
//! first derivative: `d‖λ‖ = n̂·dλ`) — and one semi-implicit Euler step is differentiated by
//! dual numbers through the generated generic functions.

use nalgebra::SVector;

use super::{joint_friction_accelerations, JointFrictionError, JointFrictionOptions, JointMode};
use crate::contact::linearise::{
    equality_rows, euler_step, jacobians_by_duals, kkt_solve, KktRow, DUAL_LANES,
};
use crate::contact::ContactStepJacobians;
use crate::dual::Dual;
use crate::mechanism::GenericJointFriction;
use crate::real::Real;

/// One semi-implicit Euler step of length `h` with the joints' `modes` held and the sliding
/// joints' normal directions `nhat` (one per normal row of each joint; see the module
/// documentation): `q̇' = q̇ + h q̈`, `q' = q + h q̇'`, over any scalar. `None` when the
/// system is singular or `modes` and `nhat` do not have one entry per joint.
#[allow(clippy::too_many_arguments)]
pub fn joint_friction_step_generic<
    M,
    S,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NS: usize,
    const NP: usize,
>(
    q: &SVector<S, NQ>,
    qd: &SVector<S, NQ>,
    p: &[S; NP],
    t: S,
    h: S,
    modes: &[JointMode],
    nhat: &[Vec<f64>],
    opts: &JointFrictionOptions,
) -> Option<(SVector<S, NQ>, SVector<S, NQ>)>
where
    M: GenericJointFriction<NQ, NC, DOF, NS, NP>,
    S: Real,
{
    if modes.len() != NS || nhat.len() != NS {
        return None;
    }
    let cj = M::jacobian_s(q, p, t);
    let js = M::slip_jacobian_s(q, p, t);
    let ds = M::slip_gamma_s(q, qd, p, t);
    let mut rows =
        equality_rows::<M, S, NQ, NC, DOF, NP>(&cj, q, qd, p, t, opts.baumgarte, NC + NS);
    for (k, mode) in modes.iter().enumerate() {
        let (first, n) = M::FRICTION_ROWS[k];
        match *mode {
            JointMode::Free => {}
            JointMode::Stick => {
                let a = SVector::<S, NQ>::from_fn(|j, _| js[(k, j)]);
                rows.push(KktRow::equal(a, ds[k]));
            }
            JointMode::Slide(sigma) => {
                if nhat[k].len() != n || first + n > NC {
                    return None;
                }
                let c = S::from_f64(sigma * M::JOINT_FRICTION[k] * M::FRICTION_RADIUS[k]);
                for (i, &ni) in nhat[k].iter().enumerate() {
                    let row = &mut rows[first + i];
                    for j in 0..NQ {
                        row.b[j] -= c * S::from_f64(ni) * js[(k, j)];
                    }
                }
            }
        }
    }
    let qdd = kkt_solve(&M::mass_matrix_s(q, p, t), &M::forces_s(q, qd, p, t), &rows)?;
    Some(euler_step(q, qd, &qdd, h))
}

/// The exact Jacobians of one semi-implicit Euler step of length `h` at `(q, q̇)` with dry
/// friction in the joints: the modes of [`joint_friction_accelerations`] (with `opts`) at
/// the state held (see the module documentation), the step differentiated by dual numbers
/// through the generated generic functions (over the state and the parameters). Returns the
/// Jacobians — their `clamping` lists the sticking joints — and the modes. A joint about to
/// change its mode within the step is outside the linearisation's neighbourhood.
///
/// Errors: the solver's, and [`JointFrictionError::Singular`] when the system with the
/// modes held is singular, [`JointFrictionError::NonFinite`] for a non-finite entry.
pub fn joint_friction_step_jacobians<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NS: usize,
    const NP: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &JointFrictionOptions,
) -> Result<(ContactStepJacobians<NQ, NP>, Vec<JointMode>), JointFrictionError>
where
    M: GenericJointFriction<NQ, NC, DOF, NS, NP>,
{
    let solve = joint_friction_accelerations::<M, NQ, NC, DOF, NS>(q, qd, p, t, opts)?;
    let modes = solve.modes;
    let nhat: Vec<Vec<f64>> = (0..NS)
        .map(|k| {
            let (first, n) = M::FRICTION_ROWS[k];
            let g = &solve.lambda[first..first + n];
            let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 0.0 {
                g.iter().map(|x| x / norm).collect()
            } else {
                vec![0.0; n]
            }
        })
        .collect();
    let sticking: Vec<usize> = (0..NS).filter(|&k| modes[k] == JointMode::Stick).collect();
    let pv = M::param_values(p);
    let next = joint_friction_step_generic::<M, f64, NQ, NC, DOF, NS, NP>(
        q, qd, &pv, t, h, &modes, &nhat, opts,
    );
    let jac = jacobians_by_duals((q, qd, &pv, t, h), sticking, next, |qs, qds, pd, td, hd| {
        joint_friction_step_generic::<M, Dual<DUAL_LANES>, NQ, NC, DOF, NS, NP>(
            qs, qds, pd, td, hd, &modes, &nhat, opts,
        )
    })?;
    Ok((jac, modes))
}
