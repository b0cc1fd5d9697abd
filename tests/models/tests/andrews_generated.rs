//! The generated Andrews mechanism against independent computations and the published
//! values at the consistent initial point (`../shared/mechanisms/andrews.md`).

#![allow(clippy::excessive_precision)] // published values, quoted verbatim
use mechgen_test_support as common;

include!(concat!(env!("OUT_DIR"), "/andrews.rs"));

use andrews as m;
use mechgen::nalgebra::SVector;
type M = m::Model;
const NQ: usize = m::NQ;
const NC: usize = m::NC;
const DOF: usize = m::DOF;
const SOURCE: &str = include_str!("../../../examples/seven_body/andrews.mech");

#[test]
fn sizes() {
    assert_eq!((NQ, NC, DOF), (7, 6, 1));
}

#[test]
fn published_values_at_q0() {
    let p = m::Params::default();
    let q0 = SVector::<f64, NQ>::from(m::NOMINAL_Q);
    let r = m::residual(&q0, &p, 0.0);
    assert!(r.norm() < 1e-15, "|g(q0)| = {:e}", r.norm());
    let g = m::jacobian(&q0, &p, 0.0);
    let row1 = [
        -1.2951691937066864e-03,
        -1.7268922582755820e-03,
        -3.1434830806293314e-02,
    ];
    let row2 = [
        -2.0960022346354336e-02,
        -2.7946696461805781e-02,
        -1.5389977653645665e-02,
    ];
    for k in 0..3 {
        assert!((g[(0, k)] - row1[k]).abs() < 1e-15);
        assert!((g[(1, k)] - row2[k]).abs() < 1e-15);
    }
    assert!((g[(2, 3)] - -1.5166802481290998e-02).abs() < 1e-15);
    assert!((g[(2, 4)] - 3.5651691937066844e-03).abs() < 1e-15);
    assert!((g[(5, 5)] - -1.0673112161054564e-02).abs() < 1e-15);
    assert!((g[(5, 6)] - -4.8379977653645670e-02).abs() < 1e-15);
    // D(q0) is proportional to (1, -0.75, 0, 0, 0, 0, 0).
    let (d, _) = m::null_space(&q0, &p, 0.0);
    let c = d.column(0);
    let k = c[0].abs().max(c[1].abs());
    let v = c / if c[0].abs() > 0.0 { c[0] } else { k };
    let expect = [1.0, -0.75, 0.0, 0.0, 0.0, 0.0, 0.0];
    for i in 0..NQ {
        assert!((v[i] - expect[i]).abs() < 1e-10, "D(q0) = {c:?}");
    }
}

#[test]
fn jacobian_matches_central_differences() {
    common::check_jacobian_fd::<NQ, NC, DOF, M>(&m::Params::default(), 100, 31);
}

#[test]
fn residual_matches_dag() {
    common::check_residual_against_dag::<NQ, NC, DOF, M>(
        SOURCE,
        "andrews",
        &m::Params::default(),
        100,
        31,
    );
}

#[test]
fn null_space_on_manifold() {
    let p = m::Params::default();
    let configs = common::random_configurations::<NQ, NC, DOF, M>(&p, 1000, 0.2, 31);
    common::check_null_space::<NQ, NC, DOF, M>(&p, &configs, 31);
}

/// Simulates over [0, 0.03] with the projection method and with the Lagrange formulation;
/// both must agree to 1e-8 relative and reproduce the test set's reference solution
/// (`andsoln` of the Bari test set's andrews.f) to about 10 digits.
#[test]
fn simulation_matches_lagrange_and_reference() {
    use mechgen::runtime::{self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions};
    let p = m::Params::default();
    let q0 = SVector::<f64, NQ>::from(m::NOMINAL_Q);
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        ..SimOptions::default()
    };
    let a = runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        0.03,
        &opts,
    )
    .expect("projection method");
    let b = runtime::simulate::simulate_lagrange::<M, NQ, NC, DOF>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        0.03,
        &opts,
    )
    .expect("Lagrange formulation");
    let qa = a.q[a.q.len() - 1];
    let qb = b.q[b.q.len() - 1];
    let rel = (qa - qb).norm() / qa.norm();
    assert!(rel <= 1e-8, "projection vs Lagrange at t = 0.03: {rel:e}");
    let reference = [
        0.1581077119629904e2,
        -0.1575637105984298e2,
        0.4082224013073101e-1,
        -0.5347301163226948e0,
        0.5244099658805304e0,
        0.5347301163226948e0,
        0.1048080741042263e1,
    ];
    for i in 0..NQ {
        let err = (qa[i] - reference[i]).abs() / reference[i].abs();
        assert!(
            err <= 1e-8,
            "q[{i}](0.03) = {} vs reference {}: {err:e}",
            qa[i],
            reference[i]
        );
    }
    assert!(m::residual(&qa, &p, 0.03).norm() <= 1e-12);
}
