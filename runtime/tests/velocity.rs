//! Velocity projection (partitioned and minimum-norm).

mod common;

use common::*;
use mechgen_runtime::{
    null_space::DEFAULT_PIVOT_THRESHOLD as TH, velocity::project_velocity,
    velocity::project_velocity_min_norm, velocity::velocity_from_independent, KinematicsError,
    Mechanism,
};

#[test]
fn slider_crank_projection_keeps_independent_velocity() {
    let p = ScParams::default();
    let mut r = rng(20);
    for _ in 0..300 {
        let q = SliderCrank::exact(uniform(&mut r, -3.1, 3.1), &p);
        let qd = V3::new(
            uniform(&mut r, -5.0, 5.0),
            uniform(&mut r, -5.0, 5.0),
            uniform(&mut r, -5.0, 5.0),
        );
        let j = SliderCrank::jacobian(&q, &p, 0.0);
        let v = project_velocity::<SliderCrank, 3, 2, 1>(&q, &qd, &p, 0.0, TH).expect("projects");
        assert_eq!(v[0], qd[0]);
        assert!((j * v).norm() <= 1e-14 * (j.norm() * v.norm()).max(1.0));
        // Velocity from the exact configuration curve: dq/dθ θ̇.
        let h = 1e-6;
        let th = q[0];
        let tangent = (SliderCrank::exact(th + h, &p) - SliderCrank::exact(th - h, &p)) / (2.0 * h);
        assert!((v - tangent * qd[0]).amax() < 1e-8 * qd[0].abs().max(1.0));

        let m =
            project_velocity_min_norm::<SliderCrank, 3, 2, 1>(&q, &qd, &p, 0.0).expect("projects");
        assert!((j * m).norm() <= 1e-13 * qd.norm());
        // The correction lies in the row space of C_J: orthogonal to the null space.
        let d = SliderCrank::null_space(&q, &p, 0.0).0;
        assert!((d.transpose() * (qd - m)).norm() <= 1e-13 * qd.norm() * d.norm());
        // And it is the closest consistent velocity.
        assert!((qd - m).norm() <= (qd - v).norm() * (1.0 + 1e-12));
    }
}

#[test]
fn rheonomic_pendulum_projection_satisfies_velocity_constraint() {
    let p = DrivenParams::default();
    let mut r = rng(21);
    for _ in 0..300 {
        let t = uniform(&mut r, 0.0, 10.0);
        let (l, _, _) = p.length(t);
        let x = uniform(&mut r, -0.9, 0.9) * l;
        let q = V2::new(x, -(l * l - x * x).sqrt());
        let u = SVector1::new(uniform(&mut r, -3.0, 3.0));
        let v =
            velocity_from_independent::<DrivenPendulum, 2, 1, 1>(&q, &u, &p, t, TH).expect("ok");
        let j = DrivenPendulum::jacobian(&q, &p, t);
        let ct = DrivenPendulum::jacobian_t(&q, &p, t);
        assert_eq!(v[0], u[0]);
        assert!((j * v + ct).norm() < 1e-13);
        let m =
            project_velocity_min_norm::<DrivenPendulum, 2, 1, 1>(&q, &V2::new(u[0], 0.3), &p, t)
                .expect("ok");
        assert!((j * m + ct).norm() < 1e-13);
    }
}

type SVector1 = mechgen_runtime::nalgebra::SVector<f64, 1>;

#[test]
fn horizontal_pendulum_cannot_be_parametrised_by_x() {
    let p = PendParams::default();
    let q = V2::new(1.0, 0.0);
    let err = velocity_from_independent::<Pendulum, 2, 1, 1>(&q, &SVector1::new(1.0), &p, 0.0, TH)
        .expect_err("x cannot parametrise at y = 0");
    assert!(
        matches!(err, KinematicsError::SingularPartition { .. }),
        "{err}"
    );
    // The minimum-norm projection still works there.
    let m = project_velocity_min_norm::<Pendulum, 2, 1, 1>(&q, &V2::new(1.0, 1.0), &p, 0.0)
        .expect("ok");
    assert!((m - V2::new(0.0, 1.0)).norm() < 1e-15);
}
