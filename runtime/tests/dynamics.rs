//! Projection method vs Lagrange multipliers vs the numeric route; simulations.

mod common;

use common::*;
use mechgen_runtime::nalgebra::SVector;
use mechgen_runtime::ode::Dopri5Options;
use mechgen_runtime::{
    lagrange::lagrange_accelerations, null_space::NullSpacePath,
    null_space::DEFAULT_PIVOT_THRESHOLD as TH, ode::Rk4Options, projection::multipliers,
    projection::projection_accelerations, projection::projection_accelerations_numeric,
    simulate::simulate_lagrange, simulate::simulate_projection, simulate::Integrator,
    simulate::SimOptions, write_csv, Dynamics, DynamicsError, Mechanism, SimError,
};

type S1 = SVector<f64, 1>;

#[test]
fn accelerations_agree_across_formulations_slider_crank() {
    let p = ScParams::default();
    let mut r = rng(30);
    for _ in 0..300 {
        let q = SliderCrank::exact(uniform(&mut r, -3.1, 3.1), &p);
        let u = S1::new(uniform(&mut r, -20.0, 20.0));
        let a = projection_accelerations::<SliderCrank, 3, 2, 1>(&q, &u, &p, 0.0, TH).expect("rhs");
        assert!(matches!(a.path, Some(NullSpacePath::Static { .. })));
        let n = projection_accelerations_numeric::<SliderCrank, 3, 2, 1>(&q, &u, &p, 0.0)
            .expect("numeric");
        let l = lagrange_accelerations::<SliderCrank, 3, 2, 1>(&q, &a.qd, &p, 0.0, None)
            .expect("lagrange");
        let scale = a.qdd.amax().max(1.0);
        assert!((a.qd - n.qd).amax() < 1e-12 * a.qd.amax().max(1.0));
        assert!(
            (a.qdd - n.qdd).amax() < 1e-11 * scale,
            "{} vs {}",
            a.qdd,
            n.qdd
        );
        assert!(
            (a.qdd - l.qdd).amax() < 1e-11 * scale,
            "{} vs {}",
            a.qdd,
            l.qdd
        );
        assert!((a.ud - n.ud).amax() < 1e-11 * scale);
        // Acceleration constraint and equations of motion.
        let j = SliderCrank::jacobian(&q, &p, 0.0);
        let g = SliderCrank::gamma(&q, &a.qd, &p, 0.0);
        assert!((j * a.qdd - g).amax() < 1e-11 * scale);
        let lam = multipliers::<SliderCrank, 3, 2, 1>(&q, &a.qd, &a.qdd, &p, 0.0).expect("λ");
        assert!(
            (lam - l.lambda).amax() < 1e-9 * l.lambda.amax().max(1.0),
            "{lam} vs {}",
            l.lambda
        );
        let mq = SliderCrank::mass_matrix(&q, &p, 0.0) * l.qdd;
        let f = SliderCrank::forces(&q, &a.qd, &p, 0.0);
        assert!((mq - f - j.transpose() * l.lambda).amax() < 1e-10 * scale);
    }
}

#[test]
fn accelerations_agree_for_the_rheonomic_pendulum() {
    let p = DrivenParams::default();
    let mut r = rng(31);
    for _ in 0..300 {
        let t = uniform(&mut r, 0.0, 10.0);
        let (l, _, _) = p.length(t);
        let x = uniform(&mut r, -0.9, 0.9) * l;
        let q = V2::new(x, -(l * l - x * x).sqrt());
        let u = S1::new(uniform(&mut r, -3.0, 3.0));
        let a =
            projection_accelerations::<DrivenPendulum, 2, 1, 1>(&q, &u, &p, t, TH).expect("rhs");
        let n = projection_accelerations_numeric::<DrivenPendulum, 2, 1, 1>(&q, &u, &p, t)
            .expect("numeric");
        let lg = lagrange_accelerations::<DrivenPendulum, 2, 1, 1>(&q, &a.qd, &p, t, None)
            .expect("lagrange");
        assert!((a.qdd - n.qdd).amax() < 1e-11 * a.qdd.amax().max(1.0));
        assert!((a.qdd - lg.qdd).amax() < 1e-11 * a.qdd.amax().max(1.0));
    }
}

#[test]
fn hanging_pendulum_multiplier() {
    let p = PendParams {
        m: 2.0,
        ..Default::default()
    };
    let q = V2::new(0.0, -1.0);
    let a =
        projection_accelerations::<Pendulum, 2, 1, 1>(&q, &S1::zeros(), &p, 0.0, TH).expect("rhs");
    assert!(a.qdd.amax() < 1e-15);
    let lam = multipliers::<Pendulum, 2, 1, 1>(&q, &a.qd, &a.qdd, &p, 0.0).expect("λ");
    // M q̈ = f + C_Jᵀ λ: 0 = −m g + (−2) λ.
    assert!((lam[0] + p.m * p.g / 2.0).abs() < 1e-14);
    let l = lagrange_accelerations::<Pendulum, 2, 1, 1>(&q, &V2::zeros(), &p, 0.0, Some(0.1))
        .expect("lagrange");
    assert!((l.lambda[0] + p.m * p.g / 2.0).abs() < 1e-14);
}

#[test]
fn singular_reduced_mass_is_reported() {
    let p = PendParams::default();
    let q = V2::new(0.6, -0.8);
    let err = projection_accelerations::<MasslessPendulum, 2, 1, 1>(&q, &S1::new(1.0), &p, 0.5, TH)
        .expect_err("DᵀMD = 0");
    match &err {
        DynamicsError::SingularReducedMass { t, q: qs, u, .. } => {
            assert_eq!(*t, 0.5);
            assert_eq!(qs, &vec![0.6, -0.8]);
            assert_eq!(u, &vec![1.0]);
        }
        other => panic!("unexpected {other}"),
    }
    assert!(err.to_string().contains("DᵀMD"));
    assert!(matches!(
        projection_accelerations_numeric::<MasslessPendulum, 2, 1, 1>(&q, &S1::new(1.0), &p, 0.5),
        Err(DynamicsError::SingularReducedMass { .. })
    ));
    assert!(matches!(
        lagrange_accelerations::<MasslessPendulum, 2, 1, 1>(&q, &V2::zeros(), &p, 0.0, None),
        Err(DynamicsError::SingularAugmented { .. })
    ));
    let sim = simulate_projection::<MasslessPendulum, 2, 1, 1>(
        &q,
        &S1::new(1.0),
        &p,
        0.0,
        1.0,
        &SimOptions::default(),
    );
    assert!(
        matches!(
            sim,
            Err(SimError::Dynamics(
                DynamicsError::SingularReducedMass { .. }
            ))
        ),
        "{sim:?}"
    );
}

fn tight() -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Default::default()
        }),
        output_times: (1..100).map(|k| 0.1 * k as f64).collect(),
        ..Default::default()
    }
}

#[test]
fn pendulum_projection_and_lagrange_agree_and_conserve_energy() {
    let p = PendParams::default();
    let angle = 60f64.to_radians();
    let q0 = V2::new(angle.sin(), -angle.cos());
    let opts = tight();
    let proj = simulate_projection::<Pendulum, 2, 1, 1>(&q0, &S1::zeros(), &p, 0.0, 10.0, &opts)
        .expect("projection");
    let lag = simulate_lagrange::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 10.0, &opts)
        .expect("lagrange");
    assert_eq!(proj.t.len(), 101);
    assert_eq!(proj.t, lag.t);
    let e0 = Pendulum::energy(&q0, &V2::zeros(), &p, 0.0).unwrap_or(f64::NAN);
    let (mut worst_diff, mut worst_drift_p, mut worst_drift_l, mut worst_c): (f64, f64, f64, f64) =
        (0.0, 0.0, 0.0, 0.0);
    for k in 0..proj.t.len() {
        worst_diff = worst_diff
            .max((proj.q[k] - lag.q[k]).amax())
            .max((proj.qd[k] - lag.qd[k]).amax());
        let ep = Pendulum::energy(&proj.q[k], &proj.qd[k], &p, 0.0).unwrap_or(f64::NAN);
        let el = Pendulum::energy(&lag.q[k], &lag.qd[k], &p, 0.0).unwrap_or(f64::NAN);
        worst_drift_p = worst_drift_p.max(((ep - e0) / e0).abs());
        worst_drift_l = worst_drift_l.max(((el - e0) / e0).abs());
        worst_c = worst_c.max(Pendulum::residual(&proj.q[k], &p, 0.0).norm());
        let j = Pendulum::jacobian(&proj.q[k], &p, 0.0);
        assert!((j * proj.qd[k]).norm() < 1e-12);
    }
    eprintln!(
        "pendulum 10 s: |proj - lagrange| {worst_diff:.2e}, energy drift proj {worst_drift_p:.2e} \
         lagrange {worst_drift_l:.2e}, |C| {worst_c:.2e}, stats proj {:?} lagrange {:?}",
        proj.stats, lag.stats
    );
    assert!(worst_diff < 1e-8, "{worst_diff:.2e}");
    assert!(worst_drift_p < 1e-8, "{worst_drift_p:.2e}");
    assert!(worst_drift_l < 1e-8, "{worst_drift_l:.2e}");
    assert!(worst_c <= 1e-12);
    // Period check against the exact large-amplitude period: the pendulum is back at x0 after T.
    assert!(proj.stats.ode.steps > 10 && proj.stats.numeric_fallbacks == 0);
}

#[test]
fn slider_crank_simulations_agree_and_conserve_energy() {
    let p = ScParams::default();
    let q0 = SliderCrank::exact(0.3, &p);
    let opts = tight();
    let u0 = S1::new(15.0);
    let proj = simulate_projection::<SliderCrank, 3, 2, 1>(&q0, &u0, &p, 0.0, 10.0, &opts)
        .expect("projection");
    let qd0 = proj.qd[0];
    let lag = simulate_lagrange::<SliderCrank, 3, 2, 1>(&q0, &qd0, &p, 0.0, 10.0, &opts)
        .expect("lagrange");
    let e0 = SliderCrank::energy(&q0, &qd0, &p, 0.0).unwrap_or(f64::NAN);
    let mut worst_diff: f64 = 0.0;
    let mut worst_drift: f64 = 0.0;
    for k in 0..proj.t.len() {
        worst_diff = worst_diff.max((proj.q[k] - lag.q[k]).amax());
        let e = SliderCrank::energy(&proj.q[k], &proj.qd[k], &p, 0.0).unwrap_or(f64::NAN);
        worst_drift = worst_drift.max(((e - e0) / e0).abs());
    }
    eprintln!("slider crank 10 s: |proj - lagrange| {worst_diff:.2e}, energy drift {worst_drift:.2e}, {:?}", proj.stats);
    assert!(worst_diff < 1e-7, "{worst_diff:.2e}");
    assert!(worst_drift < 1e-8, "{worst_drift:.2e}");
}

#[test]
fn driven_pendulum_formulations_agree() {
    let p = DrivenParams::default();
    let q0 = V2::new(0.5, -0.8);
    let mut opts = tight();
    opts.output_times.retain(|&t| t < 5.0);
    let proj =
        simulate_projection::<DrivenPendulum, 2, 1, 1>(&q0, &S1::new(0.2), &p, 0.0, 5.0, &opts)
            .expect("projection");
    let lag =
        simulate_lagrange::<DrivenPendulum, 2, 1, 1>(&proj.q[0], &proj.qd[0], &p, 0.0, 5.0, &opts)
            .expect("lagrange");
    let mut worst: f64 = 0.0;
    for k in 0..proj.t.len() {
        worst = worst.max((proj.q[k] - lag.q[k]).amax());
        let t = proj.t[k];
        assert!(DrivenPendulum::residual(&proj.q[k], &p, t).norm() <= 1e-12);
        let j = DrivenPendulum::jacobian(&proj.q[k], &p, t);
        assert!((j * proj.qd[k] + DrivenPendulum::jacobian_t(&proj.q[k], &p, t)).norm() < 1e-12);
    }
    assert!(worst < 1e-8, "{worst:.2e}");
}

#[test]
fn rk4_baumgarte_lagrange_without_projection_stays_near_the_manifold() {
    let p = PendParams::default();
    let q0 = V2::new(0.6, -0.8);
    let opts = SimOptions {
        integrator: Integrator::Rk4(Rk4Options {
            h: 1e-3,
            ..Default::default()
        }),
        project: false,
        baumgarte_tau: Some(0.05),
        multipliers: true,
        ..Default::default()
    };
    let lag = simulate_lagrange::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 5.0, &opts)
        .expect("lagrange");
    let c = Pendulum::residual(&lag.q[1], &p, 5.0).norm();
    assert!(c < 1e-9, "{c:.2e}");
    let lams = lag.lambda.as_ref().map(|l| l.len()).unwrap_or(0);
    assert_eq!(lams, 2);
}

#[test]
fn trajectory_csv_and_bad_inputs() {
    let p = PendParams::default();
    let q0 = V2::new(0.6, -0.8);
    let opts = SimOptions {
        output_times: vec![0.5],
        multipliers: true,
        ..Default::default()
    };
    let traj = simulate_projection::<Pendulum, 2, 1, 1>(&q0, &S1::zeros(), &p, 0.0, 1.0, &opts)
        .expect("sim");
    let mut out = Vec::new();
    write_csv(&mut out, &Pendulum::COORD_NAMES, &traj).expect("write");
    let text = String::from_utf8_lossy(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "t,x,y,x_dot,y_dot,lambda_0");
    assert_eq!(lines.len(), 4);
    assert!(lines[2].starts_with("0.5,"));
    // λ at rest: −m g y / (2 L²)·… at t = 0 with zero velocity: λ = m g y/ (2 L²) · … just finite.
    assert!(lines[1]
        .split(',')
        .all(|f| f.parse::<f64>().is_ok_and(f64::is_finite)));

    let bad = SimOptions {
        output_times: vec![2.0],
        ..Default::default()
    };
    assert!(matches!(
        simulate_projection::<Pendulum, 2, 1, 1>(&q0, &S1::zeros(), &p, 0.0, 1.0, &bad),
        Err(SimError::InvalidInput(_))
    ));
    assert!(matches!(
        simulate_projection::<Pendulum, 2, 1, 1>(
            &q0,
            &S1::zeros(),
            &p,
            1.0,
            1.0,
            &SimOptions::default()
        ),
        Err(SimError::InvalidInput(_))
    ));
    let few = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            max_steps: 2,
            rtol: 1e-10,
            atol: 1e-10,
            ..Default::default()
        }),
        ..Default::default()
    };
    let err = simulate_projection::<Pendulum, 2, 1, 1>(&q0, &S1::zeros(), &p, 0.0, 1.0, &few)
        .expect_err("max steps");
    assert!(
        matches!(
            err,
            SimError::Integration(mechgen_runtime::OdeError::MaxSteps { .. })
        ),
        "{err}"
    );
    // Swinging over the top with x independent: the partition is singular at the horizontal
    // (y = 0). Either the integration reports it, or (when no stage lands within the
    // threshold of y = 0) the result must agree with the Lagrange formulation.
    let over = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-9,
            atol: 1e-11,
            ..Default::default()
        }),
        // The guard alone (switching would carry on over the top).
        partition_switching: false,
        ..Default::default()
    };
    let res = simulate_projection::<Pendulum, 2, 1, 1>(&q0, &S1::new(8.0), &p, 0.0, 2.0, &over);
    let free = SimOptions {
        project: false,
        ..over.clone()
    };
    let lag = simulate_lagrange::<Pendulum, 2, 1, 1>(&q0, &V2::new(8.0, 6.0), &p, 0.0, 2.0, &free)
        .expect("lagrange");
    let err = res.expect_err("crossing the horizontal is reported");
    assert!(
        matches!(err, SimError::PartitionCrossed { t_prev, t } if t_prev < t && t < 2.0),
        "{err}"
    );
    // Up to the crossing the projection method agrees with the unprojected Lagrange solution.
    if let SimError::PartitionCrossed { t_prev, .. } = err {
        let upto = SimOptions {
            output_times: vec![],
            ..over.clone()
        };
        let a = simulate_projection::<Pendulum, 2, 1, 1>(
            &q0,
            &S1::new(8.0),
            &p,
            0.0,
            t_prev * 0.9,
            &upto,
        )
        .expect("before");
        let b = simulate_lagrange::<Pendulum, 2, 1, 1>(
            &q0,
            &V2::new(8.0, 6.0),
            &p,
            0.0,
            t_prev * 0.9,
            &free,
        )
        .expect("before");
        let diff = (a.q[1] - b.q[1]).amax();
        eprintln!("over the top: {err}; before it |proj - lagrange| = {diff:.2e}");
        assert!(diff < 1e-7, "{diff:.2e}");
    }
    assert!(lag.q[1].iter().all(|x| x.is_finite()));
}
