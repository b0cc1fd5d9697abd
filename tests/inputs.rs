//! `input` items: run-time inputs set by a Rust controller between intervals
//! (`runtime::controlled::simulate_controlled`, zero-order hold). A pendulum in Cartesian coordinates
//! (one constraint) driven by an input torque under PD control reaches its set point, and
//! follows the same model with the control law written into the force (continuous control)
//! to within the hold's O(interval) error; both routes agree.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    controlled::simulate_controlled, controlled::ControlRoute, simulate::SimOptions,
};

mechgen::mechanism! {
    /// A pendulum of length `l` in Cartesian coordinates with a torque `tau` at its pivot.
    pub mod driven {
        param l = 1.0;
        param m = 1.0;
        param g = 9.81;
        /// Torque at the pivot (N m): set by the controller.
        input tau;
        coord x = 0.0;
        coord y = -1.0;
        independent x;
        constraint x * x + y * y == l * l;
        body bob { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        // The torque as a force on the bob, perpendicular to the rod.
        generalized_force { x = -tau * y / (l * l), y = tau * x / (l * l) }
    }
}

mechgen::mechanism! {
    /// The same pendulum with the PD law of the test written into the force.
    pub mod closed {
        param l = 1.0;
        param m = 1.0;
        param g = 9.81;
        param kp = 40.0;
        param kd = 8.0;
        param target = 0.5;
        coord x = 0.0;
        coord y = -1.0;
        independent x;
        constraint x * x + y * y == l * l;
        body bob { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        // (`der` is only allowed in forces: the law is a function inlined there.)
        fn torque(x, y, vx, vy) -> scalar {
            -kp * (atan2(x, -y) - target) - kd * (-y * vx + x * vy) / (l * l)
        }
        generalized_force {
            x = -torque(x, y, der(x), der(y)) * y / (l * l),
            y = torque(x, y, der(x), der(y)) * x / (l * l)
        }
    }
}

mechgen::mechanism! {
    /// A puck on a plane pushed by a vector input force and held by a vector parameter
    /// spring to its anchor.
    pub mod puck {
        param m = 2.0;
        param k = 3.0;
        /// The spring's anchor (m): a vector parameter (`anchor_x`, `anchor_y`).
        param anchor = vec2(0.5, -0.25);
        /// The push (N): a vector input (`push_x`, `push_y`), set by the controller.
        input push = vec2(0.0, 0.0);
        coord x = 0.0;
        coord y = 0.0;
        body disc { mass = m, com = vec2(x, y) }
        generalized_force { x = push.x + k * (anchor.x - x), y = push.y + k * (anchor.y - y) }
    }
}

const KP: f64 = 40.0;
const KD: f64 = 8.0;
const TARGET: f64 = 0.5;

fn angle(q: &SVector<f64, 2>) -> f64 {
    q[0].atan2(-q[1])
}

fn rate(q: &SVector<f64, 2>, qd: &SVector<f64, 2>) -> f64 {
    (-q[1] * qd[0] + q[0] * qd[1]) / q.norm_squared()
}

fn opts() -> SimOptions {
    SimOptions {
        output_times: (1..100).map(|k| k as f64 * 0.05).collect(),
        ..SimOptions::default()
    }
}

#[test]
fn a_pd_controller_through_an_input_reaches_its_set_point_and_matches_continuous_control() {
    let q0 = SVector::<f64, 2>::new(0.0, -1.0);
    let qd0 = SVector::<f64, 2>::zeros();
    let reference = mechgen::runtime::simulate::simulate_projection::<closed::Model, 2, 1, 1>(
        &q0,
        &SVector::<f64, 1>::zeros(),
        &closed::Params::default(),
        0.0,
        5.0,
        &opts(),
    )
    .expect("continuous control");
    for route in [ControlRoute::Projection, ControlRoute::Lagrange] {
        let mut calls = 0usize;
        let tr = simulate_controlled::<driven::Model, 2, 1, 1>(
            route,
            &q0,
            &qd0,
            &driven::Params::default(),
            0.0,
            5.0,
            1e-3,
            &opts(),
            |_, q, qd, p| {
                calls += 1;
                p.tau = -KP * (angle(q) - TARGET) - KD * rate(q, qd);
            },
        )
        .expect("controlled simulation");
        assert_eq!(calls, 5_000, "one call per interval");
        assert_eq!(tr.t.len(), reference.t.len(), "the same output times");
        let mut worst = 0.0f64;
        for (k, (q, r)) in tr.q.iter().zip(&reference.q).enumerate() {
            assert!((tr.t[k] - reference.t[k]).abs() < 1e-12);
            worst = worst.max((angle(q) - angle(r)).abs());
        }
        eprintln!("{route:?}: {worst:e} rad from continuous control");
        // Zero-order hold over 1 ms against continuous control: measured 6.9e-4 rad.
        assert!(
            worst < 2e-3,
            "{route:?}: {worst:e} rad from continuous control"
        );
        // PD against gravity settles where kp (target − θ) = m g l sin θ.
        let mut eq = TARGET;
        for _ in 0..50 {
            let f = KP * (TARGET - eq) - 9.81 * eq.sin();
            eq += f / (KP + 9.81 * eq.cos());
        }
        let last = tr.q.last().expect("states");
        assert!(
            (angle(last) - eq).abs() < 1e-3,
            "{route:?}: settles at {} (equilibrium {eq})",
            angle(last)
        );
        assert!(tr.stats.max_residual < 1e-6);
    }
}

#[test]
fn a_bad_control_interval_is_an_error() {
    let q0 = SVector::<f64, 2>::new(0.0, -1.0);
    for h in [0.0, -1.0, f64::NAN, 1e-12] {
        let e = simulate_controlled::<driven::Model, 2, 1, 1>(
            ControlRoute::Projection,
            &q0,
            &SVector::zeros(),
            &driven::Params::default(),
            0.0,
            5.0,
            h,
            &opts(),
            |_, _, _, _| {},
        );
        assert!(e.is_err(), "interval {h}");
    }
}

#[test]
fn vector_inputs_and_parameters_are_fields_per_component() {
    let p = puck::Params::default();
    assert_eq!(
        (p.anchor_x, p.anchor_y, p.push_x, p.push_y),
        (0.5, -0.25, 0.0, 0.0)
    );
    let (f, w) = ([1.0, -2.0], (3.0f64 / 2.0).sqrt());
    let q0 = SVector::<f64, 2>::zeros();
    let tr = simulate_controlled::<puck::Model, 2, 0, 2>(
        ControlRoute::Projection,
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        2.0,
        0.01,
        &SimOptions {
            integrator: mechgen::runtime::simulate::Integrator::Dopri5(
                mechgen::runtime::ode::Dopri5Options {
                    rtol: 1e-11,
                    atol: 1e-13,
                    ..Default::default()
                },
            ),
            ..opts()
        },
        |_, _, _, p| {
            p.push_x = f[0];
            p.push_y = f[1];
        },
    )
    .expect("simulates");
    // A constant push on a spring: each axis moves to anchor + F/k along 1 − cos(ω t).
    let anchor = [p.anchor_x, p.anchor_y];
    for (q, &t) in tr.q.iter().zip(&tr.t) {
        for i in 0..2 {
            let rest = anchor[i] + f[i] / p.k;
            let exact = rest * (1.0 - (w * t).cos());
            assert!((q[i] - exact).abs() < 1e-8, "t = {t}: {} vs {exact}", q[i]);
        }
    }
}

/// Continuous feedback (`simulate_feedback`: the PD law evaluated before every right-hand
/// side) follows the same law written into the model's force to the integrator's
/// tolerance — where the 1 ms zero-order hold of `simulate_controlled` is 6.9e-4 rad off.
#[test]
fn continuous_feedback_equals_the_law_written_into_the_model() {
    use mechgen::runtime::{
        controlled::simulate_feedback, ode::Dopri5Options, simulate::simulate_lagrange,
        simulate::Integrator,
    };
    let q0 = SVector::<f64, 2>::new(0.0, -1.0);
    let qd0 = SVector::<f64, 2>::zeros();
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-11,
            atol: 1e-13,
            ..Default::default()
        }),
        ..opts()
    };
    let reference = simulate_lagrange::<closed::Model, 2, 1, 1>(
        &q0,
        &qd0,
        &closed::Params::default(),
        0.0,
        5.0,
        &opts,
    )
    .expect("continuous control in the model");
    let mut calls = 0usize;
    let tr = simulate_feedback::<driven::Model, 2, 1, 1>(
        &q0,
        &qd0,
        &driven::Params::default(),
        0.0,
        5.0,
        &opts,
        |_, q, qd, p| {
            calls += 1;
            p.tau = -KP * (angle(q) - TARGET) - KD * rate(q, qd);
        },
    )
    .expect("feedback simulation");
    assert_eq!(tr.t, reference.t);
    let worst =
        tr.q.iter()
            .zip(&reference.q)
            .map(|(a, b)| (angle(a) - angle(b)).abs())
            .fold(0.0f64, f64::max);
    eprintln!(
        "continuous feedback: {worst:e} rad from the law in the model, {calls} controller calls"
    );
    assert!(worst < 1e-8, "{worst:e} rad");
    assert!(calls >= tr.stats.ode.rhs_calls);
    assert!(tr.stats.max_residual < 1e-10);
}
