//! The one simulation entry point, `runtime::simulate` (issue 32): no sizes written in any
//! call below, the same initial state on every route, and default options that pass a
//! start where the generated partition is singular, flat positions (rank drops) and chart
//! singularities. References are independent: the pendulum and parallelogram motions are
//! integrated here from their one-coordinate equations of motion by a fine RK4.

use mechgen::nalgebra::{SVector, Vector2};
use mechgen::runtime::{simulate, Options, Route, State};

mechgen::mechanism! {
    /// A point mass on a massless rod of length l, in Cartesian coordinates, x independent.
    pub mod cartesian_pendulum {
        param g = 9.81;
        param l = 1.0;
        coord x = 1.0;
        coord y = 0.0;
        independent x;
        constraint x * x + y * y == l * l;
        body bob { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
    }
}

mechgen::mechanism! {
    /// A02, N = 1: unit cranks at x = 0 and x = 1 joined by a unit coupler; gravity.
    pub mod parallelogram {
        param g = 9.81;
        coord t1 = 1.5707963267948966;
        coord t2 = 1.5707963267948966;
        coord psi = 0.0;
        independent t1;
        constraint vec2(cos(t1), sin(t1)) + vec2(cos(psi), sin(psi)) == vec2(1.0 + cos(t2), sin(t2));
        body crank1 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(0.5 * cos(t1), 0.5 * sin(t1)), angle = t1 }
        body crank2 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(1.0 + 0.5 * cos(t2), 0.5 * sin(t2)), angle = t2 }
        body coupler { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(cos(t1) + 0.5 * cos(psi), sin(t1) + 0.5 * sin(psi)), angle = psi }
        gravity = vec2(0.0, -g);
    }
}

mechgen::mechanism! {
    /// Planar five-bar: base joints at (0, 0) and (1, 0) (independent), proximal links 0.6,
    /// distal links 0.8, uniform rods under gravity.
    pub mod five_bar {
        param g = 9.81;
        coord t1 = 2.0;
        coord t2 = 1.0;
        coord ph1 = 0.1532890216682115;
        coord ph2 = 2.9366007435447528;
        independent t1, t2;
        constraint vec2(0.6 * cos(t1), 0.6 * sin(t1)) + vec2(0.8 * cos(ph1), 0.8 * sin(ph1))
            == vec2(1.0 + 0.6 * cos(t2), 0.6 * sin(t2)) + vec2(0.8 * cos(ph2), 0.8 * sin(ph2));
        body p1 { mass = 1.0, inertia = 0.36 / 12.0, com = vec2(0.3 * cos(t1), 0.3 * sin(t1)), angle = t1 }
        body p2 { mass = 1.0, inertia = 0.36 / 12.0, com = vec2(1.0 + 0.3 * cos(t2), 0.3 * sin(t2)), angle = t2 }
        body d1 { mass = 1.0, inertia = 0.64 / 12.0, com = vec2(0.6 * cos(t1) + 0.4 * cos(ph1), 0.6 * sin(t1) + 0.4 * sin(ph1)), angle = ph1 }
        body d2 { mass = 1.0, inertia = 0.64 / 12.0, com = vec2(1.0 + 0.6 * cos(t2) + 0.4 * cos(ph2), 0.6 * sin(t2) + 0.4 * sin(ph2)), angle = ph2 }
        gravity = vec2(0.0, -g);
    }
}

/// `y(t)` at the times `ts` (ascending, from 0) of `ÿ = a(y)`, `y(0) = y0`, `ẏ(0) = v0`, by
/// RK4 with steps of at most `h`.
fn reference(a: impl Fn(f64) -> f64, y0: f64, v0: f64, ts: &[f64], h: f64) -> Vec<f64> {
    let f = |s: Vector2<f64>| Vector2::new(s[1], a(s[0]));
    let mut s = Vector2::new(y0, v0);
    let mut t = 0.0;
    let mut out = Vec::with_capacity(ts.len());
    for &target in ts {
        while t < target {
            let dt = h.min(target - t);
            let k1 = f(s);
            let k2 = f(s + k1 * (dt / 2.0));
            let k3 = f(s + k2 * (dt / 2.0));
            let k4 = f(s + k3 * dt);
            s += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (dt / 6.0);
            t += dt;
        }
        out.push(s[0]);
    }
    out
}

fn grid(t1: f64, n: usize) -> Vec<f64> {
    (1..n).map(|k| t1 * k as f64 / n as f64).collect()
}

/// The pendulum released at the horizontal, where `∂C/∂y = 0`: the generated partition (x
/// independent) is singular at the start. Every route, through the same call and the same
/// initial state, matches the angle's equation `φ̈ = −(g/l) cos φ` (`x = l cos φ`,
/// `y = l sin φ`).
#[test]
fn a_pendulum_released_where_its_partition_is_singular_runs_by_every_route() {
    let p = cartesian_pendulum::Params::default();
    let t1 = 2.0;
    let start = State::at_rest(0.0, SVector::from(cartesian_pendulum::NOMINAL_Q));
    let outs = grid(t1, 50);
    let mut ts = outs.clone();
    ts.push(t1);
    let phi = reference(|y| -p.g / p.l * y.cos(), 0.0, 0.0, &ts, 1e-5);
    for (route, tol) in [
        (Route::Auto, 1e-6),
        (Route::Projection, 1e-6),
        (Route::Lagrange, 1e-6),
        (Route::Ali3p, 1e-4),
    ] {
        let opts = Options {
            route,
            rtol: 1e-10,
            atol: 1e-12,
            output_times: outs.clone(),
            ..Options::default()
        };
        let run = simulate(cartesian_pendulum::Model, &p, &start, t1, &opts)
            .unwrap_or_else(|e| panic!("{route:?}: {e}"));
        assert_eq!(run.t.len(), ts.len() + 1, "{route:?}");
        let mut err: f64 = 0.0;
        for (k, q) in run.q[1..].iter().enumerate() {
            let e = (q[0] - p.l * phi[k].cos()).abs() + (q[1] - p.l * phi[k].sin()).abs();
            err = if e.is_nan() { f64::NAN } else { err.max(e) };
        }
        eprintln!(
            "pendulum by {route:?}: max error {err:.2e}, stretches {:?}",
            run.stretches
        );
        assert!(
            err <= tol,
            "{route:?}: max position error {err:.3e} > {tol:e}"
        );
    }
}

/// A parallelogram crank released upright at 1 rad/s passes its flat positions (where `C_J`
/// loses rank) under the default options and stays on the parallelogram branch, whose
/// motion is `θ̈ = −1.2 g cos θ` for the crank angle (cranks and coupler: unit rods of unit
/// mass).
#[test]
fn the_default_options_pass_the_flat_positions_of_a_parallelogram() {
    let p = parallelogram::Params::default();
    let t1 = 4.0;
    let q0 = SVector::from(parallelogram::NOMINAL_Q);
    let start = State::from_independent(parallelogram::Model, 0.0, q0, SVector::from([-1.0]));
    let outs = grid(t1, 80);
    let opts = Options {
        output_times: outs.clone(),
        ..Options::default()
    };
    let run = simulate(parallelogram::Model, &p, &start, t1, &opts)
        .unwrap_or_else(|e| panic!("parallelogram: {e}"));
    let mut ts = outs;
    ts.push(t1);
    let exact = reference(
        |y| -1.2 * p.g * y.cos(),
        std::f64::consts::FRAC_PI_2,
        -1.0,
        &ts,
        1e-5,
    );
    let mut err: f64 = 0.0;
    for (k, q) in run.q[1..].iter().enumerate() {
        // The crank's position (cos θ, sin θ): θ itself may differ by turns.
        let e = (q[0].cos() - exact[k].cos()).abs() + (q[0].sin() - exact[k].sin()).abs();
        err = if e.is_nan() { f64::NAN } else { err.max(e) };
    }
    eprintln!(
        "parallelogram: error {err:.2e}, rank drops {:?}, stretches {:?}",
        run.rank_drop_times, run.stretches
    );
    assert!(
        !run.rank_drop_times.is_empty(),
        "the motion passes the flat position"
    );
    assert!(err <= 1e-5, "crank position error {err:.3e}");
}

/// A five-bar swung through a vertical distal link and aligned distal links (chart
/// singularities of its base-joint partition) under the default options: it completes,
/// stays on the constraints and conserves its energy.
#[test]
fn the_default_options_pass_the_singular_poses_of_a_five_bar() {
    let p = five_bar::Params::default();
    let q0 = SVector::from(five_bar::NOMINAL_Q);
    let start = State::from_independent(five_bar::Model, 0.0, q0, SVector::from([4.0, -3.0]));
    let t1 = 3.0;
    let opts = Options {
        output_times: grid(t1, 300),
        ..Options::default()
    };
    let run = simulate(five_bar::Model, &p, &start, t1, &opts)
        .unwrap_or_else(|e| panic!("five-bar: {e}"));
    let e0 = five_bar::energy(&run.q[0], &run.qd[0], &p, 0.0);
    let mut de: f64 = 0.0;
    let mut residual: f64 = 0.0;
    for (k, q) in run.q.iter().enumerate() {
        let e = five_bar::energy(q, &run.qd[k], &p, run.t[k]);
        de = de.max((e - e0).abs());
        residual = residual.max(five_bar::residual(q, &p, run.t[k]).norm());
    }
    eprintln!(
        "five-bar: energy change {de:.2e} (of {e0:.3}), residual {residual:.2e}, switches {}, stretches {:?}",
        run.switch_times.len(),
        run.stretches
    );
    assert!(de <= 1e-5 * e0.abs().max(1.0), "energy change {de:.3e}");
    assert!(residual <= 1e-9, "constraint residual {residual:.3e}");
    assert!(
        !run.switch_times.is_empty(),
        "the chart singularity was passed"
    );
}

/// Bad input is an error, not a panic: an end time before the start, non-finite
/// tolerances, a NaN in the start state.
#[test]
fn bad_input_to_simulate_is_an_error() {
    let p = five_bar::Params::default();
    let q0 = SVector::from(five_bar::NOMINAL_Q);
    let start = State::at_rest(0.0, q0);
    let o = Options::default();
    assert!(simulate(five_bar::Model, &p, &start, -1.0, &o).is_err());
    let bad = Options {
        rtol: f64::NAN,
        ..Options::default()
    };
    assert!(simulate(five_bar::Model, &p, &start, 1.0, &bad).is_err());
    let mut nan = start;
    nan.qd[1] = f64::NAN;
    assert!(simulate(five_bar::Model, &p, &nan, 1.0, &o).is_err());
}

/// The hand-over machinery of the default route: with partition switching turned off the
/// projection method cannot start at the horizontal (its chart, x independent, is singular
/// there); the default route hands that stretch to the Lagrange route, says so in its
/// stretches, returns to the projection method, and the motion still matches the angle ODE.
#[test]
fn the_default_route_hands_what_the_projection_method_cannot_pass_to_another_route() {
    let p = cartesian_pendulum::Params::default();
    let t1 = 2.0;
    let start = State::at_rest(0.0, SVector::from(cartesian_pendulum::NOMINAL_Q));
    let outs = grid(t1, 50);
    let mut opts = Options {
        rtol: 1e-10,
        atol: 1e-12,
        output_times: outs.clone(),
        ..Options::default()
    };
    opts.sim.partition_switching = false;
    let run = simulate(cartesian_pendulum::Model, &p, &start, t1, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ts = outs;
    ts.push(t1);
    let phi = reference(|y| -p.g / p.l * y.cos(), 0.0, 0.0, &ts, 1e-5);
    assert_eq!(run.t.len(), ts.len() + 1);
    let mut err: f64 = 0.0;
    for (k, q) in run.q[1..].iter().enumerate() {
        let e = (q[0] - p.l * phi[k].cos()).abs() + (q[1] - p.l * phi[k].sin()).abs();
        err = if e.is_nan() { f64::NAN } else { err.max(e) };
    }
    eprintln!(
        "hand-overs: error {err:.2e}, stretches {:#?}",
        run.stretches
    );
    // Without switching the projection method keeps x independent through the far turning
    // point (y = 0 again, touched, not crossed), where its post-step projection amplifies the
    // integration error by about 1 / health: 1.2e-5 measured (1e-10 with switching on).
    assert!(err <= 5e-5, "max position error {err:.3e}");
    assert!(run.handovers() >= 1, "{:?}", run.stretches);
    // The stretches tile [0, t1] in order.
    assert_eq!(run.stretches[0].t0, 0.0);
    assert_eq!(run.stretches[run.stretches.len() - 1].t1, t1);
    for w in run.stretches.windows(2) {
        assert_eq!(w[0].t1, w[1].t0, "{:?}", run.stretches);
    }
    for s in &run.stretches {
        assert_eq!(s.reason.is_some(), s.route != Route::Projection, "{s:?}");
    }
}
