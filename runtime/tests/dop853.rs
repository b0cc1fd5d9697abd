//! Dormand–Prince 8(5,3) (`ode::dop853`) on problems with known solutions: the harmonic
//! oscillator and the Kepler orbit (exact solution by Kepler's equation, solved here by
//! Newton's method), its order of convergence on fixed steps, its dense output, events,
//! and its cost against `ode::dopri5` at equal error.

use std::convert::Infallible;

use mechgen_runtime::nalgebra::{SVector, Vector2, Vector4};
use mechgen_runtime::ode::{dop853, dopri5, Dopri5Options, OdeSystem, Solution};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `x'' = −ω² x`: the state `(x, x')`.
fn oscillator(w: f64) -> impl FnMut(f64, &Vector2<f64>) -> Result<Vector2<f64>, Infallible> {
    move |_t, y| Ok(Vector2::new(y[1], -w * w * y[0]))
}

fn oscillator_exact(w: f64, y0: Vector2<f64>, t: f64) -> Vector2<f64> {
    let (s, c) = (w * t).sin_cos();
    Vector2::new(y0[0] * c + y0[1] / w * s, -y0[0] * w * s + y0[1] * c)
}

/// The Kepler problem `r'' = −r/|r|³` (μ = 1): the state `(x, y, x', y')`.
fn kepler(_t: f64, y: &Vector4<f64>) -> Result<Vector4<f64>, Infallible> {
    let r3 = (y[0] * y[0] + y[1] * y[1]).powf(1.5);
    Ok(Vector4::new(y[2], y[3], -y[0] / r3, -y[1] / r3))
}

/// The orbit of eccentricity `e`, semi-major axis 1, starting at pericentre: the state at
/// `t` from Kepler's equation `E − e sin E = t` (period 2π).
fn kepler_exact(e: f64, t: f64) -> Vector4<f64> {
    let mut ea = t;
    for _ in 0..50 {
        let d = (ea - e * ea.sin() - t) / (1.0 - e * ea.cos());
        ea -= d;
        if d.abs() < 1e-16 {
            break;
        }
    }
    let (s, c) = ea.sin_cos();
    let b = (1.0 - e * e).sqrt();
    let edot = 1.0 / (1.0 - e * c);
    Vector4::new(c - e, b * s, -s * edot, b * c * edot)
}

fn kepler_start(e: f64) -> Vector4<f64> {
    Vector4::new(1.0 - e, 0.0, 0.0, ((1.0 + e) / (1.0 - e)).sqrt())
}

fn max_error<const N: usize>(
    sol: &Solution<SVector<f64, N>>,
    exact: impl Fn(f64) -> SVector<f64, N>,
) -> f64 {
    sol.t
        .iter()
        .zip(&sol.y)
        .map(|(&t, y)| (y - exact(t)).amax())
        .fold(0.0, f64::max)
}

fn opts(rtol: f64) -> Dopri5Options {
    Dopri5Options {
        rtol,
        atol: rtol,
        max_steps: 10_000_000,
        ..Default::default()
    }
}

#[test]
fn kepler_exact_solution_is_a_solution() {
    // The reference itself, checked against the equations of motion by central differences.
    let e = 0.6;
    for k in 0..50 {
        let t = 0.37 * k as f64;
        let h = 2e-5;
        let d = (kepler_exact(e, t + h) - kepler_exact(e, t - h)) / (2.0 * h);
        let f = kepler(t, &kepler_exact(e, t)).unwrap_or_else(|e| match e {});
        assert!((d - f).amax() < 1e-7, "t {t}: {}", (d - f).amax());
    }
}

#[test]
fn oscillator_global_error_follows_the_tolerance() {
    // Random frequencies and starts, ten periods, outputs at random times.
    let mut rng = ChaCha8Rng::seed_from_u64(853);
    for _ in 0..20 {
        let w = rng.random_range(0.3..5.0);
        let y0 = Vector2::new(rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0));
        let t_end = 20.0 * std::f64::consts::PI / w;
        let mut times: Vec<f64> = (0..40).map(|_| rng.random_range(0.0..t_end)).collect();
        times.sort_by(f64::total_cmp);
        times.push(t_end);
        let mut last = f64::INFINITY;
        for rtol in [1e-6, 1e-8, 1e-10, 1e-12] {
            let sol = dop853(&mut oscillator(w), 0.0, y0, &times, &opts(rtol)).expect("integrates");
            let err = max_error(&sol, |t| oscillator_exact(w, y0, t));
            let scale = y0.amax().max(y0.amax() * w);
            // Ten periods at a local tolerance: the global error within 100 tolerances
            // of the solution's scale, and falling with the tolerance.
            assert!(
                err < 100.0 * rtol * scale.max(1.0),
                "w {w} rtol {rtol}: {err:e}"
            );
            assert!(
                err < last || err < 1e-12,
                "w {w} rtol {rtol}: {err:e} after {last:e}"
            );
            last = err;
        }
    }
}

#[test]
fn kepler_global_error_follows_the_tolerance() {
    for e in [0.1, 0.5, 0.8] {
        let t_end = 3.0 * 2.0 * std::f64::consts::PI;
        let times: Vec<f64> = (1..=60).map(|k| t_end * k as f64 / 60.0).collect();
        let mut last = f64::INFINITY;
        for rtol in [1e-6, 1e-8, 1e-10, 1e-12] {
            let sol =
                dop853(&mut kepler, 0.0, kepler_start(e), &times, &opts(rtol)).expect("integrates");
            let err = max_error(&sol, |t| kepler_exact(e, t));
            let vmax = kepler_start(e).amax();
            // Three eccentric orbits at a local tolerance: the phase error grows with the
            // eccentricity (measured 5.5e-3 at e = 0.8, rtol 1e-6).
            assert!(err < 1e4 * rtol * vmax, "e {e} rtol {rtol}: {err:e}");
            assert!(err < last, "e {e} rtol {rtol}: {err:e} after {last:e}");
            last = err;
        }
    }
}

#[test]
fn order_eight_on_fixed_steps() {
    // With a tolerance no step can fail and h_max = h0 = h, every step has length h: the
    // error at the end must fall by 2⁸ per halving of h.
    let w = 1.3;
    let y0 = Vector2::new(0.7, -0.4);
    let t_end = 8.0;
    let run = |h: f64| {
        let o = Dopri5Options {
            rtol: 1e6,
            atol: 1e6,
            h0: Some(h),
            h_max: h,
            ..Default::default()
        };
        let sol = dop853(&mut oscillator(w), 0.0, y0, &[t_end], &o).expect("integrates");
        assert_eq!(sol.stats.steps, (t_end / h).round() as usize);
        (sol.y[0] - oscillator_exact(w, y0, t_end)).amax()
    };
    let errs: Vec<f64> = [0.8, 0.4, 0.2, 0.1].iter().map(|&h| run(h)).collect();
    for pair in errs.windows(2) {
        let order = (pair[0] / pair[1]).log2();
        assert!(
            (7.3..8.9).contains(&order),
            "errors {errs:?}: order {order}"
        );
    }
    // A nonlinear problem (the order conditions of nonlinear trees matter): the pendulum
    // against the same method at a step 80 times smaller.
    let mut pendulum =
        |_t: f64, y: &Vector2<f64>| Ok::<_, Infallible>(Vector2::new(y[1], -y[0].sin()));
    let y0 = Vector2::new(1.2, 0.3);
    let mut run_p = |h: f64| {
        let o = Dopri5Options {
            rtol: 1e6,
            atol: 1e6,
            h0: Some(h),
            h_max: h,
            ..Default::default()
        };
        dop853(&mut pendulum, 0.0, y0, &[8.0], &o)
            .expect("integrates")
            .y[0]
    };
    let reference = run_p(0.005);
    let errs: Vec<f64> = [0.8, 0.4, 0.2]
        .iter()
        .map(|&h| (run_p(h) - reference).amax())
        .collect();
    for pair in errs.windows(2) {
        let order = (pair[0] / pair[1]).log2();
        assert!(
            (7.5..9.5).contains(&order),
            "pendulum errors {errs:?}: order {order}"
        );
    }
    // Kepler (e = 0.3) against its exact solution: still pre-asymptotic at these steps
    // (measured halving orders 8.0, 6.8, 7.1), so the mean order over three halvings.
    let y0k = kepler_start(0.3);
    let run_k = |h: f64| {
        let o = Dopri5Options {
            rtol: 1e6,
            atol: 1e6,
            h0: Some(h),
            h_max: h,
            ..Default::default()
        };
        let sol = dop853(&mut kepler, 0.0, y0k, &[4.0], &o).expect("integrates");
        (sol.y[0] - kepler_exact(0.3, 4.0)).amax()
    };
    let order = (run_k(0.4) / run_k(0.05)).log2() / 3.0;
    assert!((7.0..9.0).contains(&order), "Kepler mean order {order}");
}

#[test]
fn dense_output_is_of_high_order() {
    // Outputs at many times inside long steps: each as accurate as the step ends.
    let e = 0.5;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let t_end = 2.0 * 2.0 * std::f64::consts::PI;
    let mut times: Vec<f64> = (0..500).map(|_| rng.random_range(0.0..t_end)).collect();
    times.sort_by(f64::total_cmp);
    times.push(t_end);
    for rtol in [1e-8, 1e-11] {
        let ends =
            dop853(&mut kepler, 0.0, kepler_start(e), &[t_end], &opts(rtol)).expect("integrates");
        let dense =
            dop853(&mut kepler, 0.0, kepler_start(e), &times, &opts(rtol)).expect("integrates");
        // Same steps: the outputs do not change the step sequence.
        assert_eq!(ends.stats.steps, dense.stats.steps);
        let err_end = (ends.y[0] - kepler_exact(e, t_end)).amax();
        let err_dense = max_error(&dense, |t| kepler_exact(e, t));
        assert!(
            err_dense < 20.0 * err_end.max(rtol),
            "rtol {rtol}: dense {err_dense:e}, end {err_end:e}"
        );
    }
}

/// The oscillator with the event `x` (the first zero of `cos(ω t)` is `π/(2ω)`).
struct ZeroCrossing {
    w: f64,
}

impl OdeSystem<Vector2<f64>> for ZeroCrossing {
    type Error = Infallible;
    fn rhs(&mut self, _t: f64, y: &Vector2<f64>) -> Result<Vector2<f64>, Infallible> {
        Ok(Vector2::new(y[1], -self.w * self.w * y[0]))
    }
    fn events(&mut self, _t: f64, y: &Vector2<f64>) -> Result<Option<Vec<f64>>, Infallible> {
        Ok(Some(vec![y[0]]))
    }
}

#[test]
fn events_are_located_on_the_dense_output() {
    for w in [0.5, 1.0, 3.7] {
        let mut sys = ZeroCrossing { w };
        let sol = dop853(
            &mut sys,
            0.0,
            Vector2::new(1.0, 0.0),
            &[10.0 / w],
            &opts(1e-10),
        )
        .expect("integrates");
        assert_eq!(sol.event, Some(0));
        let (te, ye) = sol.stopped.expect("stopped at the event");
        let exact = std::f64::consts::FRAC_PI_2 / w;
        assert!((te - exact).abs() < 1e-9, "w {w}: {te} vs {exact}");
        assert!(ye[0].abs() < 1e-9 && (ye[1] + w).abs() < 1e-8, "{ye:?}");
    }
}

/// The cheapest tolerance (of a half-decade scan) whose global error is below `target`,
/// and its right-hand-side count.
fn rhs_for_error(
    integrate: impl Fn(f64) -> (f64, usize),
    target: f64,
) -> Option<(f64, usize, f64)> {
    (0..24)
        .map(|k| 10f64.powf(-4.0 - 0.5 * k as f64))
        .map(|tol| {
            let (err, rhs) = integrate(tol);
            (tol, rhs, err)
        })
        .find(|&(_, _, err)| err <= target)
}

#[test]
fn cheaper_than_dopri5_at_equal_error() {
    let e = 0.5;
    let t_end = 5.0 * 2.0 * std::f64::consts::PI;
    let times: Vec<f64> = (1..=20).map(|k| t_end * k as f64 / 20.0).collect();
    for target in [1e-6, 1e-9] {
        let eight = rhs_for_error(
            |tol| {
                let s = dop853(&mut kepler, 0.0, kepler_start(e), &times, &opts(tol)).expect("ok");
                (max_error(&s, |t| kepler_exact(e, t)), s.stats.rhs_calls)
            },
            target,
        )
        .expect("dop853 reaches the target");
        let five = rhs_for_error(
            |tol| {
                let s = dopri5(&mut kepler, 0.0, kepler_start(e), &times, &opts(tol)).expect("ok");
                (max_error(&s, |t| kepler_exact(e, t)), s.stats.rhs_calls)
            },
            target,
        )
        .expect("dopri5 reaches the target");
        eprintln!("error ≤ {target:e}: dop853 {eight:?}, dopri5 {five:?} (tol, RHS, error)");
        assert!(
            eight.1 < five.1,
            "error ≤ {target:e}: dop853 {eight:?} vs dopri5 {five:?}"
        );
    }
}
