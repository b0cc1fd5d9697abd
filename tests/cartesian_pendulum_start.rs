//! Issue 32, defect 5: a start where the model's independent coordinates do not parametrise
//! the mechanism. A01's pendulum in Cartesian coordinates with `x` independent, released
//! horizontal at `(L, 0)`: there `∂C/∂y = 2y = 0`, the dependent column vanishes. The
//! projection route switches charts; the Lagrange and ALI3-P routes failed at `t = 0` in
//! their initial assembly/projection, which needed the regular partition. All three routes
//! must now complete 2 s and follow the exact pendulum, the angle `θ` (`x = L cos θ`,
//! `y = L sin θ`) of `θ̈ = −(g/L) cos θ` integrated independently as a scalar ODE.

use mechgen::nalgebra::{SVector, Vector2};
use mechgen::runtime::{
    self, ali3p::Ali3pOptions, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions,
    simulate::Trajectory, Mechanism,
};

mechgen::mechanism! {
    /// A01 with the horizontal coordinate independent (singular at the release).
    pub mod cart {
        param l = 1.0;
        param m = 1.0;
        param g = 9.81;
        coord x = 1.0;
        coord y = 0.0;
        independent x;
        constraint x * x + y * y == l * l;
        body p1 { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
    }
}

type M = cart::Model;

/// The exact motion at `times`: `(x, y)` from the angle ODE (dopri5 at rtol 1e-13).
fn exact(times: &[f64], p: &cart::Params) -> Vec<[f64; 2]> {
    let w2 = p.g / p.l;
    let mut rhs = |_t: f64, y: &Vector2<f64>| {
        Ok::<_, std::convert::Infallible>(Vector2::new(y[1], -w2 * y[0].cos()))
    };
    let sol = runtime::ode::dopri5(
        &mut rhs,
        0.0,
        Vector2::new(0.0, 0.0),
        times,
        &Dopri5Options {
            rtol: 1e-13,
            atol: 1e-14,
            max_steps: 10_000_000,
            ..Dopri5Options::default()
        },
    )
    .expect("the angle ODE integrates");
    sol.y
        .iter()
        .map(|s| [p.l * s[0].cos(), p.l * s[0].sin()])
        .collect()
}

/// The largest deviation of the trajectory's positions from the exact motion.
fn deviation(traj: &Trajectory<2, 1>, p: &cart::Params) -> f64 {
    let reference = exact(&traj.t, p);
    traj.q
        .iter()
        .zip(&reference)
        .map(|(q, r)| (q[0] - r[0]).abs().max((q[1] - r[1]).abs()))
        .fold(0.0, f64::max)
}

fn times() -> Vec<f64> {
    (1..200).map(|k| 0.01 * k as f64).collect()
}

fn sim_options() -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-11,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        output_times: times(),
        ..SimOptions::default()
    }
}

#[test]
fn cartesian_pendulum_released_where_x_is_singular_by_all_three_routes() {
    let p = cart::Params::default();
    let q0 = SVector::<f64, 2>::from(cart::NOMINAL_Q);
    // The start is singular for the generated chart.
    let (_, health) = <M as Mechanism<2, 1, 1>>::null_space(&q0, &p, 0.0);
    assert!(
        health == 0.0 || !health.is_finite() || health < 1e-12,
        "{health}"
    );
    // The runtime's Result form of the basis in `INDEPENDENT` says so (an error), where
    // `null_space_checked` answers with an SVD basis in other coordinates.
    let err = runtime::null_space::null_space_independent::<M, 2, 1, 1>(
        &q0,
        &p,
        0.0,
        runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
    )
    .expect_err("x does not parametrise the pendulum at the horizontal");
    assert!(
        matches!(err, runtime::KinematicsError::SingularPartition { .. }),
        "{err}"
    );
    let opts = sim_options();
    let projection = runtime::simulate::simulate_projection::<M, 2, 1, 1>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        2.0,
        &opts,
    )
    .expect("projection route");
    let lagrange = runtime::simulate::simulate_lagrange::<M, 2, 1, 1>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        2.0,
        &opts,
    )
    .expect("Lagrange route");
    let ali3p = runtime::ali3p::simulate_ali3p::<M, 2, 1, 1>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        2.0,
        &Ali3pOptions {
            h: 1e-4,
            output_times: times(),
            ..Ali3pOptions::default()
        },
    )
    .expect("ALI3-P route");
    for (name, traj) in [
        ("projection", &projection),
        ("Lagrange", &lagrange),
        ("ALI3-P", &ali3p),
    ] {
        assert!(traj.t.len() >= 199, "{name}: {} outputs", traj.t.len());
        assert_eq!(traj.t.last().copied(), Some(2.0), "{name}");
        let dev = deviation(traj, &p);
        println!("{name}: max position deviation {dev:e}");
        assert!(dev < 1e-6, "{name}: {dev:e} from the exact pendulum");
    }
}

/// The initial velocity projection at the singular points `(±L, 0)` (the routes' first
/// step): consistent velocities `(0, v)` come back unchanged (they keep the velocity of
/// the chart chosen there, `y`), inconsistent ones lose their `x` part; 200 random `v`,
/// `ẋ` and lengths. Before: [`runtime::velocity::project_velocity`] failed (singular partition).
#[test]
fn velocity_projection_at_the_singular_points_keeps_the_healthy_chart_velocity() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for _ in 0..200 {
        let p = cart::Params {
            l: rng.random_range(0.2..3.0),
            ..cart::Params::default()
        };
        let side = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let q = SVector::<f64, 2>::new(side * p.l, 0.0);
        let (v, xd) = (rng.random_range(-5.0..5.0), rng.random_range(-1.0..1.0));
        let out = runtime::velocity::project_velocity::<M, 2, 1, 1>(
            &q,
            &SVector::<f64, 2>::new(xd, v),
            &p,
            0.0,
            runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
        )
        .expect("projects");
        assert_eq!(out[0], 0.0, "{out:?}");
        assert_eq!(out[1], v, "{out:?}");
    }
}

/// Assembly where the dependent column vanishes at the start (`y = 0`, off the circle):
/// the independent `x` is kept and `y` found (`±√(L² − x²)`), 100 random `x` and lengths;
/// an unreachable `x` (`|x| > L`) is an error, never silently moved.
#[test]
fn assembly_from_y_zero_keeps_x() {
    use mechgen::runtime::{assemble::assemble, assemble::AssemblyOptions};
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    for _ in 0..100 {
        let p = cart::Params {
            l: rng.random_range(0.2..3.0),
            ..cart::Params::default()
        };
        let x = p.l * rng.random_range(-0.99..0.99);
        let q0 = SVector::<f64, 2>::new(x, 0.0);
        let a =
            assemble::<M, 2, 1, 1>(&q0, &p, 0.0, &AssemblyOptions::default()).expect("assembles");
        assert_eq!(a.q[0], x);
        let y = (p.l * p.l - x * x).sqrt();
        // `‖C‖ ≤ 1e-12` puts `y` within 1e-12 / |2y| of the root.
        assert!(a.residual_norm <= 1e-12);
        assert!(
            (a.q[1].abs() - y).abs() < 1e-11 / y.min(1.0),
            "{:?} vs ±{y}",
            a.q
        );
        let far = SVector::<f64, 2>::new(p.l * 1.01, 0.0);
        assert!(assemble::<M, 2, 1, 1>(&far, &p, 0.0, &AssemblyOptions::default()).is_err());
    }
}
