//! Mechanisms written with frames and joints (issue 11): a planar five-bar and a delta
//! robot (examples/mechanisms/joint_mechanisms.rs, shared with tests/charts.rs and the animate
//! example), each under 40 lines of the language. Their tool points' manipulator Jacobians
//! `∂o/∂q · D` equal Richardson-extrapolated differences of the forward kinematics
//! (actuated angles moved, the mechanism re-assembled by Newton) to 1e-8 relative, and
//! their constraint functions equal the same mechanisms written as raw equations to 1e-13.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{assemble::assemble, assemble::AssemblyOptions, Mechanism};
use mechgen_test_support as common;
use rand::RngExt;

include!("../examples/mechanisms/joint_mechanisms.rs");

mechgen::mechanism! {
    /// The same five-bar as one raw vector equation.
    pub mod five_bar_raw {
        param d = 0.5;
        param a = 0.4;
        param b = 0.6;
        coord th1 = 2.0;
        coord th2 = 1.0;
        coord ph1 = 0.7131736682768216;
        coord ph2 = 2.3669581625353264;
        independent th1, th2;
        constraint a * vec2(cos(th1), sin(th1)) + b * vec2(cos(ph1), sin(ph1))
            == vec2(d, 0.0) + a * vec2(cos(th2), sin(th2)) + b * vec2(cos(ph2), sin(ph2));
    }

    /// The delta robot of `tests/delta.rs`, written with raw equations.
    pub mod delta_raw {
        param rb = 0.2;
        param rp = 0.05;
        param la = 0.2;
        param lf = 0.45;
        fn elbow(phi, th) -> vec3 {
            rot_z(phi) * vec3(rb + la * cos(th), 0.0, -la * sin(th))
        }
        for i in 0..3 {
            coord th[i] = 0.5;
        }
        coord x = 0.0;
        coord y = 0.0;
        coord z = -0.41;
        independent th_0, th_1, th_2;
        let p = vec3(x, y, z);
        for i in 0..3 {
            let joint[i] = p + rot_z(2.0 * pi * i / 3.0) * vec3(rp, 0.0, 0.0);
            constraint norm_squared(joint[i] - elbow(2.0 * pi * i / 3.0, th[i])) == lf * lf;
        }
    }
}

/// The largest entry difference relative to the largest entry of `b`.
fn rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

#[test]
fn the_five_bar_with_joints_is_the_raw_five_bar_and_its_tool_jacobian_is_exact() {
    assert_eq!((five_bar::NQ, five_bar::NC, five_bar::DOF), (4, 2, 2));
    let p = five_bar::Params::default();
    let pr = five_bar_raw::Params::default();
    let opts = AssemblyOptions::default();
    let mut rng = common::rng(3);
    let nominal = SVector::<f64, 4>::from(five_bar::NOMINAL_Q);
    for q in common::random_points(&nominal, 200, &mut rng) {
        let (r, rr) = (
            five_bar::residual(&q, &p, 0.0),
            five_bar_raw::residual(&q, &pr, 0.0),
        );
        // The joint's rows are `left tip − right tip`, the raw equation's `lhs − rhs`.
        assert!(
            rel(r.as_slice(), rr.as_slice()) < 1e-13,
            "residual at {q:?}"
        );
        let (j, jr) = (
            five_bar::jacobian(&q, &p, 0.0),
            five_bar_raw::jacobian(&q, &pr, 0.0),
        );
        assert!(
            rel(j.as_slice(), jr.as_slice()) < 1e-13,
            "jacobian at {q:?}"
        );
    }
    let mut checked = 0;
    for _ in 0..50 {
        let th = [
            2.0 + rng.random_range(-0.3..0.3),
            1.0 + rng.random_range(-0.3..0.3),
        ];
        let mut fk = |x: &[f64]| {
            let mut q0 = nominal;
            q0[0] = x[0];
            q0[1] = x[1];
            let a = assemble::<five_bar::Model, 4, 2, 2>(&q0, &p, 0.0, &opts).ok()?;
            Some(five_bar::outputs(&a.q, &p, 0.0).as_slice().to_vec())
        };
        let Some(fd) = common::richardson_jacobian(&mut fk, &th, 1e-3) else {
            continue;
        };
        let mut q0 = nominal;
        q0[0] = th[0];
        q0[1] = th[1];
        let q = assemble::<five_bar::Model, 4, 2, 2>(&q0, &p, 0.0, &opts)
            .expect("assembles")
            .q;
        let ju = five_bar::manipulator_jacobian(&q, &p, 0.0);
        let err = (ju - &fd).norm() / fd.norm();
        assert!(err < 1e-8, "relative error {err:e} at {th:?}");
        checked += 1;
    }
    assert!(checked >= 45, "only {checked} poses assembled");
}

#[test]
fn the_delta_robot_with_joints_is_the_raw_delta_and_its_tool_jacobian_is_exact() {
    type M = delta::Model;
    assert_eq!((delta::NQ, delta::NC, delta::DOF), (6, 3, 3));
    let p = delta::Params::default();
    let pr = delta_raw::Params::default();
    let opts = AssemblyOptions::default();
    let mut rng = common::rng(31);
    let nominal = SVector::<f64, 6>::from(delta::NOMINAL_Q);
    for q in common::random_points(&nominal, 200, &mut rng) {
        let (r, rr) = (M::residual(&q, &p, 0.0), delta_raw::residual(&q, &pr, 0.0));
        assert!(
            rel(r.as_slice(), rr.as_slice()) < 1e-13,
            "residual at {q:?}"
        );
        let (j, jr) = (M::jacobian(&q, &p, 0.0), delta_raw::jacobian(&q, &pr, 0.0));
        assert!(
            rel(j.as_slice(), jr.as_slice()) < 1e-13,
            "jacobian at {q:?}"
        );
    }
    let mut checked = 0;
    for _ in 0..50 {
        let th: Vec<f64> = (0..3).map(|_| 0.5 + rng.random_range(-0.3..0.3)).collect();
        let mut fk = |x: &[f64]| {
            let mut q0 = nominal;
            q0.fixed_rows_mut::<3>(0).copy_from_slice(x);
            let a = assemble::<M, 6, 3, 3>(&q0, &p, 0.0, &opts).ok()?;
            Some(delta::outputs(&a.q, &p, 0.0).as_slice().to_vec())
        };
        let Some(fd) = common::richardson_jacobian(&mut fk, &th, 1e-3) else {
            continue;
        };
        let mut q0 = nominal;
        q0.fixed_rows_mut::<3>(0).copy_from_slice(&th);
        let q = assemble::<M, 6, 3, 3>(&q0, &p, 0.0, &opts)
            .expect("assembles")
            .q;
        let ju = delta::manipulator_jacobian(&q, &p, 0.0);
        let err = (ju - &fd).norm() / fd.norm();
        assert!(err < 1e-8, "relative error {err:e} at {th:?}");
        checked += 1;
    }
    assert!(checked >= 45, "only {checked} poses assembled");
}
