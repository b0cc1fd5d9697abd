//! Integrators against exact solutions, and their failure modes.

use mechgen_runtime::nalgebra::{SVector, Vector2};
use mechgen_runtime::ode::{dopri5, rk4, Dopri5Options, OdeSystem, Rk4Options};
use mechgen_runtime::OdeError;
use std::convert::Infallible;

type V1 = SVector<f64, 1>;

#[test]
fn dopri5_exponential_decay_meets_tolerance() {
    for &tol in &[1e-4, 1e-6, 1e-8, 1e-10, 1e-12] {
        let mut f = |_t: f64, y: &V1| Ok::<_, Infallible>(-y);
        let opts = Dopri5Options {
            rtol: tol,
            atol: tol,
            ..Default::default()
        };
        let times: Vec<f64> = (1..=50).map(|k| 0.2 * k as f64).collect();
        let sol = dopri5(&mut f, 0.0, V1::new(1.0), &times, &opts).expect("integrates");
        assert_eq!(sol.t, times);
        let mut worst: f64 = 0.0;
        for (t, y) in sol.t.iter().zip(&sol.y) {
            worst = worst.max((y[0] - (-t).exp()).abs());
        }
        // Global error of the order of the tolerance (dense output included).
        assert!(worst <= 20.0 * tol, "tol {tol}: error {worst:.2e}");
        assert!(sol.stats.steps > 0 && sol.stats.rhs_calls >= 6 * sol.stats.steps);
        eprintln!(
            "y'=-y tol {tol:.0e}: max error {worst:.2e}, steps {}, rejected {}, rhs {}",
            sol.stats.steps, sol.stats.rejected, sol.stats.rhs_calls
        );
    }
}

#[test]
fn dopri5_harmonic_oscillator_over_ten_periods() {
    let w = 2.0;
    let mut f = |_t: f64, y: &Vector2<f64>| Ok::<_, Infallible>(Vector2::new(y[1], -w * w * y[0]));
    let opts = Dopri5Options {
        rtol: 1e-10,
        atol: 1e-12,
        ..Default::default()
    };
    let t1 = 10.0 * std::f64::consts::TAU / w;
    let times: Vec<f64> = (1..=400).map(|k| t1 * k as f64 / 400.0).collect();
    let sol = dopri5(&mut f, 0.0, Vector2::new(1.0, 0.0), &times, &opts).expect("integrates");
    let mut worst: f64 = 0.0;
    for (t, y) in sol.t.iter().zip(&sol.y) {
        worst = worst
            .max((y[0] - (w * t).cos()).abs())
            .max((y[1] + w * (w * t).sin()).abs());
    }
    assert!(worst < 1e-8, "error {worst:.2e}");
    eprintln!("oscillator: max error {worst:.2e}, stats {:?}", sol.stats);
}

#[test]
fn rk4_is_fourth_order_and_lands_on_output_times() {
    let exact = (-1.0f64).exp();
    let mut errs = Vec::new();
    for &h in &[0.1, 0.05, 0.025] {
        let mut f = |_t: f64, y: &Vec<f64>| Ok::<_, Infallible>(vec![-y[0]]);
        let sol = rk4(
            &mut f,
            0.0,
            vec![1.0],
            &[0.33, 1.0],
            &Rk4Options {
                h,
                ..Default::default()
            },
        )
        .expect("integrates");
        assert!((sol.y[0][0] - (-0.33f64).exp()).abs() < 1e-5);
        errs.push((sol.y[1][0] - exact).abs());
    }
    let order1 = (errs[0] / errs[1]).log2();
    let order2 = (errs[1] / errs[2]).log2();
    assert!(
        order1 > 3.7 && order2 > 3.7,
        "observed orders {order1:.2}, {order2:.2}"
    );
}

#[test]
fn blow_up_is_a_step_size_underflow() {
    // y' = y², y(0) = 1: y = 1/(1 - t) blows up at t = 1.
    let mut f = |_t: f64, y: &V1| Ok::<_, Infallible>(V1::new(y[0] * y[0]));
    let opts = Dopri5Options {
        rtol: 1e-8,
        atol: 1e-8,
        ..Default::default()
    };
    let err = dopri5(&mut f, 0.0, V1::new(1.0), &[2.0], &opts).expect_err("blows up");
    match err {
        OdeError::StepSizeUnderflow { t, h } => {
            assert!((t - 1.0).abs() < 1e-6, "stopped at t = {t}");
            assert!(h < 1e-10);
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn max_steps_and_invalid_options_are_errors() {
    let mut f = |_t: f64, y: &V1| Ok::<_, Infallible>(-y);
    let opts = Dopri5Options {
        max_steps: 3,
        rtol: 1e-12,
        atol: 1e-12,
        ..Default::default()
    };
    assert!(matches!(
        dopri5(&mut f, 0.0, V1::new(1.0), &[10.0], &opts),
        Err(OdeError::MaxSteps { steps: 3, .. })
    ));
    let opts = Rk4Options {
        h: 0.1,
        max_steps: 5,
    };
    assert!(matches!(
        rk4(&mut f, 0.0, V1::new(1.0), &[10.0], &opts),
        Err(OdeError::MaxSteps { .. })
    ));
    let bad = Dopri5Options {
        rtol: -1.0,
        ..Default::default()
    };
    assert!(matches!(
        dopri5(&mut f, 0.0, V1::new(1.0), &[1.0], &bad),
        Err(OdeError::InvalidOptions(_))
    ));
    let ok = Dopri5Options::default();
    assert!(matches!(
        dopri5(&mut f, 0.0, V1::new(1.0), &[1.0, 0.5], &ok),
        Err(OdeError::InvalidOptions(_))
    ));
    assert!(matches!(
        dopri5(&mut f, 0.0, V1::new(1.0), &[], &ok),
        Err(OdeError::InvalidOptions(_))
    ));
    assert!(matches!(
        dopri5(&mut f, 0.0, V1::new(f64::NAN), &[1.0], &ok),
        Err(OdeError::NonFinite { .. })
    ));
    // Output at t0 only.
    let sol = dopri5(&mut f, 0.0, V1::new(1.0), &[0.0], &ok).expect("trivial");
    assert_eq!(sol.y[0][0], 1.0);
}

#[test]
fn system_errors_propagate_with_time() {
    #[derive(Debug, PartialEq)]
    struct Boom;
    let mut f = |t: f64, y: &V1| if t > 0.5 { Err(Boom) } else { Ok(-y) };
    let err =
        dopri5(&mut f, 0.0, V1::new(1.0), &[1.0], &Dopri5Options::default()).expect_err("fails");
    assert!(matches!(err, OdeError::System { source: Boom, t } if t > 0.5));
}

#[test]
fn projection_hook_runs_after_each_step() {
    // y' = A y on the unit circle with a projection back onto it.
    struct Circle;
    impl OdeSystem<Vector2<f64>> for Circle {
        type Error = Infallible;
        fn rhs(&mut self, _t: f64, y: &Vector2<f64>) -> Result<Vector2<f64>, Infallible> {
            Ok(Vector2::new(-y[1], y[0]))
        }
        fn project(&mut self, _t: f64, y: &mut Vector2<f64>) -> Result<(), Infallible> {
            *y /= y.norm();
            Ok(())
        }
    }
    let opts = Dopri5Options {
        rtol: 1e-5,
        atol: 1e-5,
        ..Default::default()
    };
    let times: Vec<f64> = (1..=100).map(|k| 0.3 * k as f64).collect();
    let sol = dopri5(&mut Circle, 0.0, Vector2::new(1.0, 0.0), &times, &opts).expect("integrates");
    for y in &sol.y {
        assert!((y.norm() - 1.0).abs() < 1e-15);
    }
    assert!(sol.stats.projections >= sol.stats.steps);
    let last = sol.y.last().copied().unwrap_or_default();
    assert!((last[0] - 30f64.cos()).abs() < 1e-3);
}

/// A harmonic oscillator `x'' = −x` from `x = 1`: its events `x` and `x + 0.5` are
/// located on the dense output at the exact crossing times `π/2` and `2π/3` (the first
/// one stops the integration), to 1e-9 at tolerance 1e-10; outputs before the event are
/// produced, those after are not.
#[test]
fn dopri5_stops_at_the_first_event_on_its_dense_output() {
    struct Osc(usize);
    impl OdeSystem<Vector2<f64>> for Osc {
        type Error = Infallible;
        fn rhs(&mut self, _t: f64, y: &Vector2<f64>) -> Result<Vector2<f64>, Infallible> {
            Ok(Vector2::new(y[1], -y[0]))
        }
        fn events(&mut self, _t: f64, y: &Vector2<f64>) -> Result<Option<Vec<f64>>, Infallible> {
            self.0 += 1;
            Ok(Some(vec![y[0] + 0.5, y[0]]))
        }
    }
    let opts = Dopri5Options {
        rtol: 1e-10,
        atol: 1e-12,
        ..Default::default()
    };
    let times = [0.5, 1.0, 1.5, 2.0, 3.0];
    let mut sys = Osc(0);
    let sol = dopri5(&mut sys, 0.0, Vector2::new(1.0, 0.0), &times, &opts).expect("integrates");
    let (te, ye) = sol.stopped.expect("stopped at the event");
    assert_eq!(sol.event, Some(1), "x reaches 0 first");
    assert!(
        (te - std::f64::consts::FRAC_PI_2).abs() < 1e-9,
        "event at {te}"
    );
    assert!(ye[0].abs() < 1e-9 && (ye[1] + 1.0).abs() < 1e-9, "{ye:?}");
    assert_eq!(sol.t, vec![0.5, 1.0, 1.5]);
    for (t, y) in sol.t.iter().zip(&sol.y) {
        assert!((y[0] - t.cos()).abs() < 1e-9);
    }
    // Restarted from the event, the second component is next, at 2π/3.
    let times = [3.0];
    let mut sys = Osc(0);
    let sol = dopri5(&mut sys, te, ye, &times, &opts).expect("integrates");
    let (t2, _) = sol.stopped.expect("the second event");
    assert_eq!(sol.event, Some(0));
    assert!(
        (t2 - 2.0 * std::f64::consts::FRAC_PI_3).abs() < 1e-9,
        "event at {t2}"
    );
    assert!(sys.0 > 2, "events evaluated");
}
