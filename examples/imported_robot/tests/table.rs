//! The UR5 imported with `ur5_table.mech`: the additions change nothing of the arm's
//! dynamics but the pan torque (against the UR5 imported without them, which
//! `examples/robots` checks against Pinocchio), and the closed loop they add holds through a
//! simulation by the one entry point with default options, with the energy balance kept.

use imported_robot::{start_pose, ur5};
use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate, Options, State};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn the_additions_leave_the_arm_as_imported_but_for_the_pan_torque() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let p = ur5::Params {
        pan_torque: 1.7,
        ..Default::default()
    };
    let free = robots::ur5::Params::default();
    for _ in 0..100 {
        let q = SVector::<f64, 6>::from_fn(|_, _| rng.random_range(-3.0..3.0));
        let qd = SVector::<f64, 6>::from_fn(|_, _| rng.random_range(-2.0..2.0));
        let m = ur5::mass_matrix(&q, &p, 0.0);
        let m_free = robots::ur5::mass_matrix(&q, &free, 0.0);
        assert!((m - m_free).norm() <= 1e-14 * m_free.norm(), "{m} {m_free}");
        let mut f = ur5::forces(&q, &qd, &p, 0.0);
        f[0] -= p.pan_torque;
        let f_free = robots::ur5::forces(&q, &qd, &free, 0.0);
        assert!(
            (f - f_free).norm() <= 1e-13 * (1.0 + f_free.norm()),
            "{f} {f_free}"
        );
        // The loop's row is the tool's height less the table's.
        let z = ur5::outputs(&q, &p, 0.0)[2];
        assert!((ur5::residual(&q, &p, 0.0)[0] - (z - p.table)).abs() < 1e-14);
        // Its Jacobian row against central differences of the output.
        let j = ur5::jacobian(&q, &p, 0.0);
        for k in 0..6 {
            let h = 1e-6;
            let (mut a, mut b) = (q, q);
            a[k] += h;
            b[k] -= h;
            let fd = (ur5::outputs(&a, &p, 0.0)[2] - ur5::outputs(&b, &p, 0.0)[2]) / (2.0 * h);
            assert!(
                (j[(0, k)] - fd).abs() < 1e-8,
                "column {k}: {} vs {fd}",
                j[(0, k)]
            );
        }
    }
}

#[test]
fn the_tool_stays_on_the_table_and_the_energy_balance_holds() {
    let mut p = ur5::Params::default();
    let q0 = start_pose();
    p.table = ur5::outputs(&q0, &p, 0.0)[2];
    p.pan_torque = 2.0;
    let opts = Options::default().with_output_steps(0.0, 2.0, 200);
    let run = simulate(ur5::Model, &p, &State::at_rest(0.0, q0), 2.0, &opts).unwrap();
    assert_eq!(run.t.len(), 201);
    let balance =
        |k: usize| ur5::energy(&run.q[k], &run.qd[k], &p, run.t[k]) - p.pan_torque * run.q[k][0];
    let e0 = balance(0);
    let mut travelled: f64 = 0.0;
    for k in 0..run.t.len() {
        let (q, qd, t) = (run.q[k], run.qd[k], run.t[k]);
        assert!(ur5::residual(&q, &p, t).norm() <= 1e-10, "t = {t}");
        // The tool's vertical velocity is zero too.
        assert!(
            ur5::output_velocity(&q, &qd, &p, t)[2].abs() <= 1e-9,
            "t = {t}"
        );
        // No damping in the URDF: the energy less the torque's work is conserved.
        let e = balance(k);
        assert!((e - e0).abs() <= 1e-7 * e0.abs(), "t = {t}: {e} vs {e0}");
        let o = ur5::outputs(&q, &p, t);
        let o0 = ur5::outputs(&q0, &p, 0.0);
        travelled = travelled.max(((o[0] - o0[0]).powi(2) + (o[1] - o0[1]).powi(2)).sqrt());
    }
    // It did move: the tool slid over the table by tens of centimetres.
    assert!(travelled > 0.2, "{travelled}");
}
