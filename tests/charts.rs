//! Named charts (issue 11, item 6): one description, several choices of independent
//! coordinates sharing one `Params`. A delta robot whose primary chart holds the arm angles
//! (forward kinematics) and whose chart `tool` holds the platform position (inverse
//! kinematics): the two assemblies invert each other to 1e-10 (their tolerance is ‖C‖ ≤ 1e-12); each chart's basis, dependent
//! solve and type are checked against the primary's and against nalgebra. A five-bar
//! simulated in its named chart follows the primary chart's motion.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{
    self, assemble::assemble, assemble::AssemblyOptions, ode::Dopri5Options, simulate::Integrator,
    simulate::SimOptions, Mechanism,
};
use mechgen_test_support as common;
use rand::RngExt;

include!("../examples/mechanisms/joint_mechanisms.rs");

#[test]
fn forward_and_inverse_kinematics_of_one_description_invert_each_other() {
    assert_eq!(delta::INDEPENDENT, [0, 1, 2]);
    assert_eq!(delta::INDEPENDENT_TOOL, [3, 4, 5]);
    assert_eq!(<delta::Tool as Mechanism<6, 3, 3>>::INDEPENDENT, [3, 4, 5]);
    let p = delta::Params::default();
    let opts = AssemblyOptions::default();
    let nominal = SVector::<f64, 6>::from(delta::NOMINAL_Q);
    let mut rng = common::rng(8);
    let mut checked = 0;
    for _ in 0..100 {
        // Inverse kinematics: a platform position near the nominal one.
        let mut q0 = nominal;
        q0[3] = rng.random_range(-0.08..0.08);
        q0[4] = rng.random_range(-0.08..0.08);
        q0[5] = -0.41 + rng.random_range(-0.05..0.05);
        let Ok(ik) = assemble::<delta::Tool, 6, 3, 3>(&q0, &p, 0.0, &opts) else {
            continue;
        };
        assert_eq!(
            ik.q.fixed_rows::<3>(3),
            q0.fixed_rows::<3>(3),
            "IK moved the tool"
        );
        assert!(delta::residual(&ik.q, &p, 0.0).norm() < 1e-12);
        // Forward kinematics from the angles found, starting from the nominal pose.
        let mut q1 = nominal;
        q1.fixed_rows_mut::<3>(0)
            .copy_from_slice(ik.q.fixed_rows::<3>(0).as_slice());
        let fk = assemble::<delta::Model, 6, 3, 3>(&q1, &p, 0.0, &opts).expect("FK assembles");
        let err = (fk.q - ik.q).norm();
        // Both assemblies stop at ‖C‖ ≤ 1e-12 (the default tolerance).
        assert!(err < 1e-10, "FK(IK(x)) differs by {err:e}");

        // The tool chart's basis spans the primary's null space: D = D_tool · D[tool rows].
        let (d, h) = delta::null_space_fixed(&ik.q, &p, 0.0);
        let (dt, ht) = delta::null_space_tool(&ik.q, &p, 0.0);
        assert!(h > 1e-3 && ht > 1e-3, "health {h} / {ht}");
        let jac = delta::jacobian(&ik.q, &p, 0.0);
        assert!((jac * dt).norm() < 1e-13 * dt.norm());
        let rows = SMatrix::<f64, 3, 3>::from_fn(|i, j| d[(3 + i, j)]);
        assert!((dt * rows - d).norm() < 1e-12 * d.norm());
        assert_eq!(dt.fixed_rows::<3>(3), SMatrix::<f64, 3, 3>::identity());
        // The tool chart's dependent solve: C_J x = b with x[tool] = 0.
        let b = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let x = delta::solve_dependent_tool(&ik.q, &p, 0.0, &b);
        assert!((jac * x - b).norm() < 1e-12 * (1.0 + b.norm()));
        assert_eq!(x.fixed_rows::<3>(3), SVector::<f64, 3>::zeros());
        // The trait methods are the chart's.
        let (dm, _) = <delta::Tool as Mechanism<6, 3, 3>>::null_space(&ik.q, &p, 0.0);
        assert_eq!(dm, dt);
        checked += 1;
    }
    assert!(checked >= 90, "only {checked} poses reached");
}

#[test]
fn a_five_bar_simulated_in_its_named_chart_follows_the_primary_motion() {
    type M = five_bar::Model;
    type C = five_bar::Distal;
    let p = five_bar::Params::default();
    let q0 = SVector::<f64, 4>::from(five_bar::NOMINAL_Q);
    let q0 = assemble::<M, 4, 2, 2>(&q0, &p, 0.0, &AssemblyOptions::default())
        .expect("assembles")
        .q;
    let u0 = SVector::<f64, 2>::new(0.5, -0.3);
    let (d, _) = five_bar::null_space_fixed(&q0, &p, 0.0);
    let qd0 = d * u0;
    let u0c = SVector::<f64, 2>::new(qd0[2], qd0[3]);
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        output_times: (1..10).map(|k| k as f64 * 0.05).collect(),
        ..SimOptions::default()
    };
    let a = runtime::simulate::simulate_projection::<M, 4, 2, 2>(&q0, &u0, &p, 0.0, 0.5, &opts)
        .expect("primary chart");
    let b = runtime::simulate::simulate_projection::<C, 4, 2, 2>(&q0, &u0c, &p, 0.0, 0.5, &opts)
        .expect("named chart");
    assert_eq!(a.t, b.t);
    for (k, (qa, qb)) in a.q.iter().zip(&b.q).enumerate() {
        let err = (qa - qb).norm();
        assert!(err < 1e-7, "t = {}: {err:e}", a.t[k]);
        assert!((a.qd[k] - b.qd[k]).norm() < 1e-6);
    }
    let e0 = five_bar::energy(&a.q[0], &a.qd[0], &p, 0.0);
    let e1 = five_bar::energy(&b.q[9], &b.qd[9], &p, 0.5);
    assert!(
        (e1 - e0).abs() < 1e-8 * e0.abs().max(1.0),
        "energy {e0} → {e1}"
    );
}
