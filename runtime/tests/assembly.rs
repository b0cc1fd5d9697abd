//! Newton assembly on hand-written mechanisms.

mod common;

use common::*;
use mechgen_runtime::{assemble::assemble, assemble::AssemblyOptions, AssemblyError, Mechanism};

#[test]
fn slider_crank_assembles_at_random_configurations() {
    let p = ScParams::default();
    let mut r = rng(1);
    let opts = AssemblyOptions::default();
    let mut max_res: f64 = 0.0;
    let mut max_err: f64 = 0.0;
    let mut max_it = 0;
    for _ in 0..500 {
        let theta = uniform(&mut r, -std::f64::consts::PI, std::f64::consts::PI);
        let exact = SliderCrank::exact(theta, &p);
        let q0 = V3::new(
            theta,
            exact[1] + uniform(&mut r, -0.3, 0.3),
            exact[2] + uniform(&mut r, -0.05, 0.05),
        );
        let a = assemble::<SliderCrank, 3, 2, 1>(&q0, &p, 0.0, &opts).expect("assembles");
        assert!(a.residual_norm <= 1e-12, "residual {}", a.residual_norm);
        assert_eq!(a.q[0], theta, "independent coordinate moved");
        let res = SliderCrank::residual(&a.q, &p, 0.0).norm();
        assert_eq!(res, a.residual_norm);
        max_res = max_res.max(res);
        max_err = max_err.max((a.q - exact).amax());
        max_it = max_it.max(a.iterations);
    }
    assert!(
        max_err < 1e-11,
        "max deviation from the exact configuration {max_err}"
    );
    assert!(max_it <= 8, "Newton took {max_it} iterations");
    eprintln!("slider crank: max |C| {max_res:.2e}, max |q - exact| {max_err:.2e}, max iterations {max_it}");
}

#[test]
fn pendulum_assembles_at_random_configurations() {
    let p = PendParams {
        l: 1.7,
        ..Default::default()
    };
    let mut r = rng(2);
    for _ in 0..500 {
        let x = uniform(&mut r, -1.6, 1.6);
        let y_exact = -(p.l * p.l - x * x).sqrt();
        let q0 = V2::new(x, y_exact * uniform(&mut r, 0.7, 1.3));
        let a = assemble::<Pendulum, 2, 1, 1>(&q0, &p, 0.0, &AssemblyOptions::default())
            .expect("assembles");
        assert!(a.residual_norm <= 1e-12);
        assert_eq!(a.q[0], x);
        assert!((a.q[1] - y_exact).abs() < 1e-12);
    }
}

#[test]
fn four_bar_assembles_and_falls_back_near_unhealthy_pivots() {
    let p = FbParams::default();
    let mut r = rng(3);
    let opts = AssemblyOptions::default();
    let mut numeric_used = 0;
    for k in 0..400 {
        // Crank angles including neighbourhoods of θ = 0 and π where the static pivot −a sin θ vanishes.
        let theta = match k % 4 {
            0 => uniform(&mut r, -1e-9, 1e-9),
            1 => std::f64::consts::PI + uniform(&mut r, -1e-9, 1e-9),
            _ => uniform(&mut r, -3.0, 3.0),
        };
        let exact = FourBar::from_crank(theta, &p);
        assert!(FourBar::residual(&exact, &p, 0.0).norm() < 1e-12);
        let q0 = V3::new(
            exact[0] + uniform(&mut r, -0.02, 0.02),
            exact[1] + uniform(&mut r, -0.02, 0.02),
            exact[2],
        );
        let a = assemble::<FourBar, 3, 2, 1>(&q0, &p, 0.0, &opts).expect("assembles");
        assert!(a.residual_norm <= 1e-12, "residual {}", a.residual_norm);
        assert_eq!(a.q[2], exact[2]);
        // Same branch as the exact configuration unless it lies near the toggle.
        if (exact[0] - exact[1]).sin().abs() > 0.05 {
            assert!((a.q - exact).amax() < 1e-9, "{:?} vs {:?}", a.q, exact);
        }
        numeric_used += a.used_numeric as usize;
    }
    assert!(
        numeric_used >= 100,
        "numeric fallback used {numeric_used} times"
    );
}

#[test]
fn four_bar_rocker_beyond_its_range_is_an_error() {
    let p = FbParams::default();
    // The rocker's extreme is at the toggle; push ψ past it.
    let toggle = FourBar::from_crank(FourBar::toggle_theta(&p), &p);
    let mut q0 = toggle;
    q0[2] += 0.05 * (q0[2] - FourBar::from_crank(FourBar::toggle_theta(&p) + 0.3, &p)[2]).signum();
    let err = assemble::<FourBar, 3, 2, 1>(&q0, &p, 0.0, &AssemblyOptions::default())
        .expect_err("no configuration exists");
    // Its own error (issue 8, item 3), naming the rocker and its requested value.
    match &err {
        AssemblyError::Unreachable {
            residual_norm,
            independent,
            ..
        } => {
            assert!(*residual_norm > 1e-6, "{residual_norm}");
            assert_eq!(independent.len(), 1);
            assert_eq!(independent[0].index, 2);
            assert_eq!(independent[0].value, q0[2]);
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(!err.to_string().is_empty());
}

#[test]
fn non_finite_input_and_bad_options_are_errors() {
    let p = ScParams::default();
    let q = V3::new(0.3, f64::NAN, 0.3);
    assert!(matches!(
        assemble::<SliderCrank, 3, 2, 1>(&q, &p, 0.0, &AssemblyOptions::default()),
        Err(AssemblyError::NonFinite { .. })
    ));
    let bad = AssemblyOptions {
        tol: 0.0,
        ..Default::default()
    };
    assert!(matches!(
        assemble::<SliderCrank, 3, 2, 1>(&SliderCrank::nominal_q(), &p, 0.0, &bad),
        Err(AssemblyError::InvalidOptions(_))
    ));
    // Unreachable tolerance within one iteration.
    let one = AssemblyOptions {
        max_iterations: 1,
        ..Default::default()
    };
    let q0 = SliderCrank::exact(0.4, &p) + V3::new(0.0, 0.3, 0.05);
    assert!(matches!(
        assemble::<SliderCrank, 3, 2, 1>(&q0, &p, 0.0, &one),
        Err(AssemblyError::NotConverged { iterations: 1, .. })
    ));
}
