//! The global-error control of `runtime::simulate` (`Options::accuracy`, issue 32): over a
//! long span the default options must deliver the requested tolerance at the outputs, not
//! only per step, and say what they achieved. Reference: the pendulum's angle equation
//! `φ̈ = −(g/l) cos φ` integrated here by a fine fixed-step RK4 (an independent
//! formulation and integrator).

use mechgen::nalgebra::{SVector, Vector2};
use mechgen::runtime::ode::{rk4, Rk4Options};
use mechgen::runtime::{simulate, Accuracy, Options, State};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::convert::Infallible;

mechgen::mechanism! {
    /// A point mass on a massless rod of length l, in Cartesian coordinates, x independent.
    pub mod pendulum_xy {
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

/// `(x, y)` at `times` from the angle equation (`x = cos φ`, `y = sin φ`, l = 1).
fn reference(phi0: f64, w0: f64, g: f64, times: &[f64]) -> Vec<[f64; 2]> {
    let mut f =
        |_t: f64, s: &Vector2<f64>| Ok::<_, Infallible>(Vector2::new(s[1], -g * s[0].cos()));
    let o = Rk4Options {
        h: 2e-4,
        ..Rk4Options::default()
    };
    let sol = rk4(&mut f, 0.0, Vector2::new(phi0, w0), times, &o).expect("reference");
    sol.y.iter().map(|s| [s[0].cos(), s[0].sin()]).collect()
}

struct Case {
    phi0: f64,
    w0: f64,
}

fn cases(n: usize) -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    (0..n)
        .map(|_| Case {
            phi0: rng.random_range(-2.5..-0.6),
            w0: rng.random_range(-2.0..2.0),
        })
        .collect()
}

/// The largest error of `(x, y)` over the outputs of a run with `opts`, and the run.
fn run(case: &Case, t_end: f64, opts: &Options) -> (f64, mechgen::runtime::Simulation<2, 1>) {
    let p = pendulum_xy::Params::default();
    let (s, c) = case.phi0.sin_cos();
    let q0 = SVector::<f64, 2>::new(c, s);
    let qd0 = SVector::<f64, 2>::new(-s * case.w0, c * case.w0);
    let start = State::new(0.0, q0, qd0);
    let sim = simulate(pendulum_xy::Model, &p, &start, t_end, opts).expect("completes");
    let exact = reference(case.phi0, case.w0, p.g, &sim.t[1..]);
    let err = sim.q[1..]
        .iter()
        .zip(&exact)
        .map(|(q, e)| (q[0] - e[0]).abs().max((q[1] - e[1]).abs()))
        .fold(0.0, f64::max);
    (err, sim)
}

#[test]
fn the_default_options_bound_the_global_error_over_a_long_span() {
    // 100 s (about fifty periods) at rtol 1e-6, outputs every second.
    let t_end = 100.0;
    for case in cases(4) {
        let rtol = 1e-6;
        let default = Options {
            rtol,
            atol: rtol * 1e-2,
            ..Options::default()
        }
        .with_output_steps(0.0, t_end, 100);
        let local = Options {
            accuracy: Accuracy::Local,
            ..default.clone()
        };
        let (err, sim) = run(&case, t_end, &default);
        let (err_local, _) = run(&case, t_end, &local);
        let g = sim.global_error.clone().expect("an estimate");
        eprintln!(
            "φ0 {:.3}, ω0 {:.3}: error {err:.2e} (local only {err_local:.2e}), estimate {:.2e}, {g:?}",
            case.phi0, case.w0, g.max_abs
        );
        assert!(g.runs >= 2 && g.rhs_calls > sim.stats.ode.rhs_calls);
        // The positions' scale is l = 1: the target is rtol + atol.
        let target = rtol + rtol * 1e-2;
        if g.converged {
            // Tolerance proportionality is an assumption: allow a factor of 10.
            assert!(
                err <= 10.0 * target,
                "error {err:e} > 10 × {target:e}: {g:?}"
            );
        }
        assert!(err <= 1e-4, "error {err:e}: {g:?}");
        assert!(err < err_local, "control {err:e} vs one run {err_local:e}");
        // The estimate is within a factor of 30 of the error it estimates (it estimates
        // q̇ too, so it may be larger).
        assert!(
            g.max_abs * 30.0 >= err,
            "estimate {:e} for {err:e}",
            g.max_abs
        );
    }
}

#[test]
fn estimate_only_makes_two_runs_and_reports() {
    let t_end = 20.0;
    for case in cases(2) {
        let o = Options {
            rtol: 1e-7,
            atol: 1e-9,
            accuracy: Accuracy::Estimate,
            ..Options::default()
        }
        .with_output_steps(0.0, t_end, 20);
        let (err, sim) = run(&case, t_end, &o);
        let g = sim.global_error.expect("an estimate");
        assert_eq!(g.runs, 2);
        assert!((g.local_rtol - 1e-8).abs() < 1e-20, "{g:?}");
        assert_eq!(g.converged, g.ratio <= 1.0);
        assert!(
            g.max_abs * 30.0 >= err,
            "estimate {:e} for {err:e}",
            g.max_abs
        );
        let local = Options {
            accuracy: Accuracy::Local,
            ..o
        };
        let (_, one) = run(&case, t_end, &local);
        assert!(one.global_error.is_none());
    }
}
