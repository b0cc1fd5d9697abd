//! The frictional contact step and its Jacobians on the clamping set, as
//! [`contact_step_jacobians`](crate::contact::contact_step_jacobians) does for frictionless
//! contacts: within a neighbourhood where the contacts' modes do not change, one
//! semi-implicit Euler step is a smooth map of the state — the closed contacts' normal rows
//! and the sticking contacts' slip rows held as equalities, a sliding contact's normal force
//! acting along `J_n − μ uᵀ J_t` (its slip direction `u` that of the slip velocity at the
//! state, so differentiated with it; from rest, the solve's direction, held). The modes come
//! from [`friction_accelerations`] at the state; the step with them held is differentiated
//! by dual numbers through the generated generic functions.

use nalgebra::SVector;

use super::{friction_accelerations, ContactMode, FrictionError, FrictionOptions};
use crate::contact::linearise::{
    baumgarte_rhs, equality_rows, euler_step, jacobians_by_duals, kkt_solve, KktRow, DUAL_LANES,
};
use crate::contact::ContactStepJacobians;
use crate::dual::Dual;
use crate::mechanism::GenericFriction;
use crate::real::Real;

/// One semi-implicit Euler step of length `h` of the frictional contact dynamics with the
/// contacts' `modes` held (as [`friction_accelerations`] reports them; see the module
/// documentation): `q̇' = q̇ + h q̈`, `q' = q + h q̇'`, over any scalar, with Baumgarte's
/// terms on the constraint and normal rows as [`friction_accelerations`] has them. `None` when the system with those modes is singular or
/// `modes` does not have one entry per inequality.
#[allow(clippy::too_many_arguments)]
pub fn friction_step_generic<
    M,
    S,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
    const NP: usize,
>(
    q: &SVector<S, NQ>,
    qd: &SVector<S, NQ>,
    p: &[S; NP],
    t: S,
    h: S,
    modes: &[ContactMode],
    opts: &FrictionOptions,
) -> Option<(SVector<S, NQ>, SVector<S, NQ>)>
where
    M: GenericFriction<NQ, NC, DOF, NI, NT, NP>,
    S: Real,
{
    if modes.len() != NI {
        return None;
    }
    let stab = |a: &SVector<S, NQ>, value: S, dt: S, gamma: S| {
        baumgarte_rhs(a, qd, value, dt, gamma, opts.contact.baumgarte)
    };
    let (cj, capacity) = (M::jacobian_s(q, p, t), NC + 2 * NI + NT);
    let baumgarte = opts.contact.baumgarte;
    let mut rows = equality_rows::<M, S, NQ, NC, DOF, NP>(&cj, q, qd, p, t, baumgarte, capacity);
    let (g, jg) = (M::inequality_s(q, p, t), M::inequality_jacobian_s(q, p, t));
    let (gt, gg) = (
        M::inequality_jacobian_t_s(q, p, t),
        M::inequality_gamma_s(q, qd, p, t),
    );
    let jt = M::tangent_jacobian_s(q, p, t);
    let mut vt = M::tangent_jacobian_t_s(q, p, t);
    for r in 0..NT {
        for j in 0..NQ {
            vt[r] += jt[(r, j)] * qd[j];
        }
    }
    let dt = M::tangent_gamma_s(q, qd, p, t);
    for (k, mode) in modes.iter().enumerate() {
        let slip_rows: Vec<usize> = (0..NT).filter(|&r| M::TANGENT_CONTACT[r] == k).collect();
        let a = SVector::<S, NQ>::from_fn(|j, _| jg[(k, j)]);
        let d = stab(&a, g[k], gt[k], gg[k]);
        match mode {
            ContactMode::Open => {}
            ContactMode::Closed => rows.push(KktRow::equal(a, d)),
            ContactMode::Stick => {
                rows.push(KktRow::equal(a, d));
                for &r in &slip_rows {
                    let a = SVector::<S, NQ>::from_fn(|j, _| jt[(r, j)]);
                    rows.push(KktRow::equal(a, dt[r]));
                }
            }
            ContactMode::Slide(u) => {
                if u.len() != slip_rows.len() {
                    return None;
                }
                // Along the slip where it slides (differentiated with the state), else the
                // solve's direction (sliding from rest).
                let speed = slip_rows
                    .iter()
                    .map(|&r| vt[r].value() * vt[r].value())
                    .sum::<f64>()
                    .sqrt();
                let dir: Vec<S> = if speed > opts.slip_tol {
                    let mut n2 = S::from_f64(0.0);
                    for &r in &slip_rows {
                        n2 += vt[r] * vt[r];
                    }
                    let n = n2.sqrt();
                    slip_rows.iter().map(|&r| vt[r] / n).collect()
                } else {
                    u.iter().map(|&x| S::from_f64(x)).collect()
                };
                let mu = S::from_f64(M::FRICTION[k]);
                let mut b = a;
                for (&r, &ur) in slip_rows.iter().zip(&dir) {
                    for j in 0..NQ {
                        b[j] -= mu * ur * jt[(r, j)];
                    }
                }
                rows.push(KktRow { a, b, d });
            }
        }
    }
    let qdd = kkt_solve(&M::mass_matrix_s(q, p, t), &M::forces_s(q, qd, p, t), &rows)?;
    Some(euler_step(q, qd, &qdd, h))
}

/// The exact Jacobians of one semi-implicit Euler step of length `h` at `(q, q̇)` with
/// Coulomb friction at the contacts, on the clamping set: the modes of
/// [`friction_accelerations`] (with `opts`) at the state are held — closed contacts'
/// normal rows and sticking contacts' slip rows as equalities, sliding contacts' forces along
/// their slip — and the step is differentiated by dual numbers through the generated generic
/// functions (over the state and the parameters). `clamping` lists the closed contacts
/// (sticking, sliding or frictionless). A contact about to change its mode within the step is
/// outside the linearisation's neighbourhood.
///
/// Errors: the solver's ([`FrictionError`]), and
/// [`ContactError::Singular`](crate::ContactError::Singular) when the system with the modes
/// held is singular.
pub fn friction_step_jacobians<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
    const NP: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &FrictionOptions,
) -> Result<(ContactStepJacobians<NQ, NP>, Vec<ContactMode>), FrictionError>
where
    M: GenericFriction<NQ, NC, DOF, NI, NT, NP>,
{
    let solve = friction_accelerations::<M, NQ, NC, DOF, NI, NT>(q, qd, p, t, opts)?;
    let modes = solve.modes;
    let clamping: Vec<usize> = (0..NI).filter(|&k| modes[k] != ContactMode::Open).collect();
    let pv = M::param_values(p);
    let next =
        friction_step_generic::<M, f64, NQ, NC, DOF, NI, NT, NP>(q, qd, &pv, t, h, &modes, opts);
    let held = (q, qd, &pv, t, h);
    let jac = jacobians_by_duals::<NQ, NP, FrictionError>(
        held,
        clamping,
        next,
        |qs, qds, pd, td, hd| {
            friction_step_generic::<M, Dual<DUAL_LANES>, NQ, NC, DOF, NI, NT, NP>(
                qs, qds, pd, td, hd, &modes, opts,
            )
        },
    )?;
    Ok((jac, modes))
}
