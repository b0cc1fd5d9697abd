//! A delta robot written with a loop, a function and an output (the language of issue 11):
//! three legs at 120°, each an upper arm turning about a horizontal axis at the base and a
//! forearm of fixed length to the moving platform. The tool point's manipulator Jacobian
//! `∂o/∂q · D` equals central differences of the forward kinematics (actuated angles moved,
//! the platform re-assembled) to 1e-7 at random poses.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{assemble::assemble, assemble::AssemblyOptions};
use mechgen_test_support as common;
use rand::RngExt;

mechgen::mechanism! {
    /// Delta robot: base radius `rb`, platform radius `rp`, arms `la`, forearms `lf`.
    pub mod delta {
        param rb = 0.2;
        param rp = 0.05;
        param la = 0.2;
        param lf = 0.45;
        /// The elbow of the leg at angle `phi` with its arm at `th` below the base plane.
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
        /// The tool point (the platform's centre).
        output tool = p;
    }
}

#[test]
fn the_delta_robots_manipulator_jacobian_is_its_forward_kinematics_derivative() {
    type M = delta::Model;
    assert_eq!((delta::NQ, delta::NC, delta::DOF), (6, 3, 3));
    assert_eq!(delta::COORD_NAMES[..3], ["th_0", "th_1", "th_2"]);
    let p = delta::Params::default();
    let opts = AssemblyOptions::default();
    let mut rng = common::rng(31);
    let fk = |th: [f64; 3], guess: &SVector<f64, 6>| {
        let mut q = *guess;
        q.fixed_rows_mut::<3>(0).copy_from_slice(&th);
        assemble::<M, 6, 3, 3>(&q, &p, 0.0, &opts).map(|a| a.q)
    };
    let nominal = SVector::<f64, 6>::from(delta::NOMINAL_Q);
    let mut checked = 0;
    for _ in 0..50 {
        let th = [0.0; 3].map(|_: f64| 0.5 + rng.random_range(-0.3..0.3));
        let Ok(q) = fk(th, &nominal) else { continue };
        let ju = delta::manipulator_jacobian(&q, &p, 0.0);
        let h = 1e-6;
        let fd = SMatrix::<f64, 3, 3>::from_fn(|i, j| {
            let (mut a, mut b) = (th, th);
            a[j] += h;
            b[j] -= h;
            let (qa, qb) = (fk(a, &q).expect("near"), fk(b, &q).expect("near"));
            (delta::outputs(&qa, &p, 0.0)[i] - delta::outputs(&qb, &p, 0.0)[i]) / (2.0 * h)
        });
        let err = (ju - fd).norm() / fd.norm();
        assert!(err < 1e-7, "relative error {err:e} at {th:?}");
        checked += 1;
    }
    assert!(checked >= 45, "only {checked} poses assembled");
}
