//! The contact step's Jacobians by the clamping-set linearisation (issue 13, item 3; the
//! Nimble seed): a slider crank driven against its end stop (restitution 1/2) and resting
//! there (equality and inequality constraints together). At states along its motion — on the stop (clamping
//! set {stop}) and free (empty set) — `contact_step_jacobians` (dual numbers through the
//! generated generic functions, the set held) equals Richardson-extrapolated central
//! differences of the same step with the set held to 1e-7 relative per block (state and
//! parameter blocks), and its step
//! equals the semi-implicit Euler step of the active-set accelerations to 1e-12.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{
    assemble::assemble, assemble::AssemblyOptions, contact::contact_accelerations,
    contact::contact_step_generic, contact::contact_step_jacobians, contact::simulate_contact,
    contact::ContactOptions, GenericDynamics,
};

include!("../examples/mechanisms/stopped_crank.rs");

type M = stopped_crank::Model;
const NP: usize = stopped_crank::generic::NP;

/// The step with the clamping set held, as a function of `x = (q, q̇, p)`.
fn step(x: &[f64], clamping: &[usize], h: f64) -> Option<Vec<f64>> {
    let q = SVector::<f64, 3>::from_fn(|i, _| x[i]);
    let qd = SVector::<f64, 3>::from_fn(|i, _| x[3 + i]);
    let pv: [f64; NP] = std::array::from_fn(|k| x[6 + k]);
    let (qn, qdn) =
        contact_step_generic::<M, f64, 3, 2, 1, 1, NP>(&q, &qd, &pv, 0.0, h, clamping, (0.0, 0.0))?;
    Some(qn.iter().chain(qdn.iter()).copied().collect())
}

#[test]
fn contact_step_jacobians_equal_differences_of_the_step_with_its_clamping_set_held() {
    let p = stopped_crank::Params::default();
    let q0 = assemble::<M, 3, 2, 1>(
        &SVector::<f64, 3>::from(stopped_crank::NOMINAL_Q),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .expect("assembles")
    .q;
    let opts = ContactOptions::default();
    let h = 1e-3;
    let tr = simulate_contact::<M, 3, 2, 1, 1>(&q0, &SVector::zeros(), &p, 0.0, h, 1500, &opts)
        .expect("simulates");
    let (mut free, mut clamped) = (0, 0);
    for k in (0..tr.q.len()).step_by(50) {
        let (q, qd) = (tr.q[k], tr.qd[k]);
        let jac = contact_step_jacobians::<M, 3, 2, 1, 1, NP>(&q, &qd, &p, 0.0, h, &opts)
            .expect("jacobians");
        if jac.clamping.is_empty() {
            free += 1;
        } else {
            assert_eq!(jac.clamping, vec![0]);
            clamped += 1;
        }
        // The step itself: semi-implicit Euler on the active-set accelerations.
        let s =
            contact_accelerations::<M, 3, 2, 1, 1>(&q, &qd, &p, 0.0, &[], &opts).expect("solve");
        let v = qd + s.qdd * h;
        assert!((jac.next.1 - v).amax() < 1e-12 * (1.0 + v.amax()));
        assert!((jac.next.0 - (q + v * h)).amax() < 1e-12);
        // Richardson-extrapolated central differences of the step with the set held.
        let pv = <M as GenericDynamics<3, 2, 1, NP>>::param_values(&p);
        let x: Vec<f64> = q
            .iter()
            .chain(qd.iter())
            .chain(pv.iter())
            .copied()
            .collect();
        let mut f = |x: &[f64]| step(x, &jac.clamping, h);
        let fd = mechgen_test_support::richardson_jacobian(&mut f, &x, 1e-4).expect("differences");
        let blocks = [
            (&jac.pos_pos, 0, 0, "pos_pos"),
            (&jac.pos_vel, 0, 3, "pos_vel"),
            (&jac.vel_pos, 3, 0, "vel_pos"),
            (&jac.vel_vel, 3, 3, "vel_vel"),
        ];
        for (block, r, c, name) in blocks {
            let want = SMatrix::<f64, 3, 3>::from_fn(|i, j| fd[(r + i, c + j)]);
            let err = (block - want).norm() / want.norm().max(1e-3);
            assert!(
                err < 1e-7,
                "{name} at step {k} (clamping {:?}): {err:e}",
                jac.clamping
            );
        }
    }
    eprintln!("contact step Jacobians: {free} free states, {clamped} on the stop");
    assert!(free >= 3 && clamped >= 10, "{free} free, {clamped} clamped");
}
