//! The ALI3-P route (index-3 augmented Lagrangian, mass-orthogonal projections, trapezoidal
//! rule): a pendulum in natural coordinates against the exact pendulum, its defects, and its
//! errors (Newton failure, NaN input, singular leading matrix, bad options).

mod common;

use common::*;
use mechgen_runtime::{
    ali3p::simulate_ali3p, ali3p::Adaptive, ali3p::Ali3pOptions, ali3p::Tangent, DynamicsError,
    Mechanism, SimError,
};

/// Jacobi `sn(u | m)` and `K(m)` by the arithmetic–geometric mean (A&S 16.4).
fn jacobi_sn(u: f64, m: f64) -> (f64, f64) {
    let mut a = [1.0f64; 16];
    let mut c = [0.0f64; 16];
    let mut b = (1.0 - m).sqrt();
    c[0] = m.sqrt();
    let mut n = 0;
    while n + 1 < a.len() && c[n].abs() > 1e-17 {
        let (an, bn) = (a[n], b);
        a[n + 1] = 0.5 * (an + bn);
        c[n + 1] = 0.5 * (an - bn);
        b = (an * bn).sqrt();
        n += 1;
    }
    let k = std::f64::consts::PI / (2.0 * a[n]);
    let u = u.rem_euclid(4.0 * k);
    let mut phi = (1u64 << n) as f64 * a[n] * u;
    for j in (1..=n).rev() {
        phi = 0.5 * (phi + (c[j] / a[j] * phi.sin()).asin());
    }
    (phi.sin(), k)
}

/// The exact pendulum released at rest at `phi0` from the downward vertical (x > 0):
/// `sin(φ/2) = k sn(K − ω t | k²)`, `k = sin(φ0/2)`.
fn exact(t: f64, phi0: f64, p: &PendParams) -> V2 {
    let k = (0.5 * phi0).sin();
    let w = (p.g / p.l).sqrt();
    let (_, kk) = jacobi_sn(0.0, k * k);
    let (sn, _) = jacobi_sn(kk - w * t, k * k);
    let s = k * sn;
    let c = (1.0 - s * s).max(0.0).sqrt();
    V2::new(p.l * 2.0 * s * c, -p.l * (1.0 - 2.0 * s * s))
}

fn outputs(t1: f64, n: usize) -> Vec<f64> {
    (1..n).map(|k| t1 * k as f64 / n as f64).collect()
}

/// Runs the pendulum from rest at `phi0` for 10 s with step `h`; returns the largest
/// position error against the exact pendulum and the run's statistics.
fn pendulum_error(
    phi0: f64,
    h: f64,
    project_initial: bool,
) -> (f64, mechgen_runtime::simulate::SimStats) {
    let p = PendParams::default();
    let q0 = V2::new(phi0.sin(), -phi0.cos());
    let opts = Ali3pOptions {
        h,
        output_times: outputs(10.0, 100),
        project_initial,
        ..Ali3pOptions::default()
    };
    let traj = simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 10.0, &opts)
        .expect("ALI3-P pendulum");
    assert_eq!(traj.t.len(), 101);
    assert_eq!(traj.t[100], 10.0);
    let mut err: f64 = 0.0;
    for (t, q) in traj.t.iter().zip(&traj.q) {
        err = err.max((q - exact(*t, phi0, &p)).amax());
    }
    (err, traj.stats)
}

#[test]
fn pendulum_matches_the_exact_pendulum_with_second_order_convergence() {
    let phi0 = 60f64.to_radians();
    let (e1, s1) = pendulum_error(phi0, 2e-3, true);
    let (e2, s2) = pendulum_error(phi0, 1e-3, true);
    eprintln!("pendulum 60°, 10 s: error {e1:.3e} (h = 2e-3), {e2:.3e} (h = 1e-3); {s2:?}");
    assert!(e2 < 2e-4, "h = 1e-3: error {e2:.3e}");
    // Trapezoidal rule: halving h divides the error by about 4.
    let ratio = e1 / e2;
    assert!((3.0..5.0).contains(&ratio), "order ratio {ratio:.3}");
    assert_eq!(s2.ode.steps, 10_000);
    assert_eq!(s1.ode.steps, 5_000);
    // Energy drift of the fixed-step method, reported in the stats and bounded.
    let e = s2.energy_change.expect("the pendulum has an energy");
    assert!(e > 0.0 && e < 1e-3, "energy change {e:.3e} J");
    // Constraint defects at position and velocity level, reported and small.
    assert!(
        s2.max_residual < 1e-9,
        "position residual {:.3e}",
        s2.max_residual
    );
    assert!(
        s2.max_velocity_residual < 1e-6,
        "velocity residual {:.3e}",
        s2.max_velocity_residual
    );
    assert!(s2.newton_iterations >= s2.ode.steps);
}

#[test]
fn pendulum_released_horizontal_passes_where_x_cannot_parametrise_it() {
    // x = 1, y = 0: the generated partition (x independent) is singular at the start and at
    // every turning point; ALI3-P needs no partition.
    let (e, s) = pendulum_error(std::f64::consts::FRAC_PI_2, 1e-3, false);
    eprintln!("pendulum 90°, 10 s: error {e:.3e}; {s:?}");
    assert!(e < 1e-3, "error {e:.3e}");
}

#[test]
fn multipliers_of_the_hanging_pendulum() {
    // At rest hanging: M q̈ = f + C_Jᵀ λ with f = (0, −g), C_J = (0, −2): λ = −g/2.
    let p = PendParams::default();
    let opts = Ali3pOptions {
        multipliers: true,
        ..Ali3pOptions::default()
    };
    let traj =
        simulate_ali3p::<Pendulum, 2, 1, 1>(&V2::new(0.0, -1.0), &V2::zeros(), &p, 0.0, 0.1, &opts)
            .expect("hanging pendulum");
    let lams = traj.lambda.expect("multipliers requested");
    assert_eq!(lams.len(), 2);
    for l in lams {
        assert!((l[0] + 0.5 * p.g).abs() < 1e-9, "λ = {}", l[0]);
    }
    assert!((traj.q[1] - V2::new(0.0, -1.0)).amax() < 1e-12);
}

#[test]
fn newton_failure_is_an_error() {
    let p = PendParams::default();
    let q0 = V2::new(0.6, -0.8);
    let opts = Ali3pOptions {
        h: 1e-2,
        max_iterations: 1,
        ..Ali3pOptions::default()
    };
    let e = simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 1.0, &opts)
        .expect_err("one iteration cannot converge");
    let hint = "reduce the step h, raise Ali3pOptions::max_iterations, or use step-size \
                control (Ali3pOptions::adaptive)";
    assert_eq!(
        e,
        SimError::NoConvergence {
            t: 0.01,
            what: "ALI3-P step",
            iterations: 1,
            hint,
        }
    );
    assert_eq!(
        e.to_string(),
        format!(
            "ALI3-P step: Newton iteration did not converge in 1 iterations at t = 0.01 ({hint})"
        )
    );
}

#[test]
fn the_newton_failure_hint_names_only_options_the_run_has_not_got() {
    // Before, every failure said "reduce the step or use the finite-difference tangent",
    // the tangent being the default already. The hint now depends on the options in effect.
    let p = PendParams::default();
    let q0 = V2::new(0.6, -0.8);
    let fail = |o: Ali3pOptions| {
        let e = simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 1.0, &o)
            .expect_err("one iteration cannot converge");
        match e {
            SimError::NoConvergence { hint, .. } => {
                assert!(e.to_string().contains(hint), "{e}");
                hint
            }
            other => panic!("{other}"),
        }
    };
    let base = Ali3pOptions {
        h: 1e-2,
        max_iterations: 1,
        ..Ali3pOptions::default()
    };
    // Fixed step, finite-difference tangent (the defaults): not the tangent, but the step,
    // the iterations, step-size control.
    let h = fail(base.clone());
    assert!(!h.contains("finite-difference"), "{h}");
    assert!(
        h.contains("adaptive") && h.contains("max_iterations"),
        "{h}"
    );
    // Fixed step, mass-only tangent: the finite-difference tangent.
    let h = fail(Ali3pOptions {
        tangent: Tangent::MassOnly,
        ..base.clone()
    });
    assert!(h.contains("Tangent::FiniteDifferences"), "{h}");
    // Step-size control down to h_min with the finite-difference tangent: neither step-size
    // control (already on) nor the tangent (already used).
    let h = fail(Ali3pOptions {
        adaptive: Some(Adaptive {
            h_min: 1e-3,
            ..Adaptive::default()
        }),
        ..base.clone()
    });
    assert!(h.contains("h_min") && h.contains("max_iterations"), "{h}");
    assert!(
        !h.contains("Ali3pOptions::adaptive") && !h.contains("finite-difference"),
        "{h}"
    );
    // The same with the mass-only tangent: the tangent.
    let h = fail(Ali3pOptions {
        tangent: Tangent::MassOnly,
        adaptive: Some(Adaptive {
            h_min: 1e-3,
            ..Adaptive::default()
        }),
        ..base
    });
    assert!(
        h.contains("Tangent::FiniteDifferences") && !h.contains("Ali3pOptions::adaptive"),
        "{h}"
    );
}

#[test]
fn nan_input_is_an_error() {
    let p = PendParams::default();
    let o = Ali3pOptions::default();
    let e = simulate_ali3p::<Pendulum, 2, 1, 1>(
        &V2::new(f64::NAN, -0.8),
        &V2::zeros(),
        &p,
        0.0,
        1.0,
        &o,
    )
    .expect_err("NaN coordinate");
    assert_eq!(
        e.to_string(),
        "non-finite initial coordinates at t = 0: x (#0) = NaN"
    );
    let e = simulate_ali3p::<Pendulum, 2, 1, 1>(
        &V2::new(0.6, -0.8),
        &V2::new(0.0, f64::INFINITY),
        &p,
        0.0,
        1.0,
        &o,
    )
    .expect_err("infinite velocity");
    assert_eq!(
        e.to_string(),
        "non-finite initial velocities at t = 0: y (#1) = inf"
    );
    // A NaN parameter shows in the forces.
    let bad = PendParams {
        g: f64::NAN,
        ..PendParams::default()
    };
    let e =
        simulate_ali3p::<Pendulum, 2, 1, 1>(&V2::new(0.6, -0.8), &V2::zeros(), &bad, 0.0, 1.0, &o)
            .expect_err("NaN gravity");
    assert!(
        matches!(
            e,
            SimError::Dynamics(DynamicsError::NonFinite { what: "forces", .. })
        ),
        "{e:?}"
    );
}

#[test]
fn massless_model_has_a_singular_leading_matrix() {
    let p = PendParams::default();
    let o = Ali3pOptions {
        project_initial: false,
        ..Ali3pOptions::default()
    };
    let e = simulate_ali3p::<MasslessPendulum, 2, 1, 1>(
        &V2::new(0.6, -0.8),
        &V2::zeros(),
        &p,
        0.0,
        1.0,
        &o,
    )
    .expect_err("M = 0");
    assert_eq!(e, SimError::SingularLeadingMatrix { t: 0.0 });
}

#[test]
fn bad_options_are_errors() {
    let p = PendParams::default();
    let q0 = Pendulum::nominal_q();
    let run = |o: Ali3pOptions| {
        simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 1.0, &o).map(|_| ())
    };
    for (o, why) in [
        (
            Ali3pOptions {
                h: 0.0,
                ..Ali3pOptions::default()
            },
            "step h must be positive and finite",
        ),
        (
            Ali3pOptions {
                h: f64::NAN,
                ..Ali3pOptions::default()
            },
            "step h must be positive and finite",
        ),
        (
            Ali3pOptions {
                h: 1e-9,
                max_steps: 1000,
                ..Ali3pOptions::default()
            },
            "more steps than max_steps",
        ),
        (
            Ali3pOptions {
                penalty: Some(-1.0),
                ..Ali3pOptions::default()
            },
            "penalty must be positive and finite",
        ),
        (
            Ali3pOptions {
                output_times: vec![0.5, 0.2],
                ..Ali3pOptions::default()
            },
            "output times must be ascending and strictly between t0 and t1",
        ),
    ] {
        assert_eq!(run(o), Err(SimError::InvalidInput(why)));
    }
}

#[test]
fn mass_only_tangent_also_converges_on_the_pendulum() {
    let p = PendParams::default();
    let phi0 = 60f64.to_radians();
    let q0 = V2::new(phi0.sin(), -phi0.cos());
    let o = Ali3pOptions {
        tangent: Tangent::MassOnly,
        output_times: outputs(2.0, 20),
        ..Ali3pOptions::default()
    };
    let traj = simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 2.0, &o)
        .expect("mass-only tangent");
    let err = traj
        .t
        .iter()
        .zip(&traj.q)
        .map(|(t, q)| (q - exact(*t, phi0, &p)).amax())
        .fold(0.0, f64::max);
    assert!(err < 1e-4, "{err:.3e}");
    // No force derivatives: one force evaluation per Newton iteration (plus the initial one).
    assert_eq!(traj.stats.ode.rhs_calls, traj.stats.newton_iterations + 1);
}

/// A charged particle in a magnetic field, `m q̈ = B (ẏ, −ẋ)`, no constraints: its tangent
/// `(h/2) Cᵥ` is skew (not symmetric).
struct Gyro;

impl mechgen_runtime::Mechanism<2, 0, 2> for Gyro {
    type Params = f64;
    const NAME: &'static str = "gyro";
    const COORD_NAMES: [&'static str; 2] = ["x", "y"];
    const INDEPENDENT: [usize; 2] = [0, 1];
    fn nominal_q() -> V2 {
        V2::new(0.0, 1.0)
    }
    fn residual(_q: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SVector<f64, 0> {
        mechgen_runtime::nalgebra::SVector::<f64, 0>::zeros()
    }
    fn jacobian(_q: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SMatrix<f64, 0, 2> {
        mechgen_runtime::nalgebra::SMatrix::<f64, 0, 2>::zeros()
    }
    fn jacobian_t(_q: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SVector<f64, 0> {
        mechgen_runtime::nalgebra::SVector::<f64, 0>::zeros()
    }
    fn null_space(
        _q: &V2,
        _p: &f64,
        _t: f64,
    ) -> (mechgen_runtime::nalgebra::SMatrix<f64, 2, 2>, f64) {
        (
            mechgen_runtime::nalgebra::SMatrix::<f64, 2, 2>::identity(),
            1.0,
        )
    }
    fn solve_dependent(
        _q: &V2,
        _p: &f64,
        _t: f64,
        _b: &mechgen_runtime::nalgebra::SVector<f64, 0>,
    ) -> V2 {
        V2::zeros()
    }
}

impl mechgen_runtime::Dynamics<2, 0, 2> for Gyro {
    fn mass_matrix(_q: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SMatrix<f64, 2, 2> {
        mechgen_runtime::nalgebra::SMatrix::<f64, 2, 2>::identity()
    }
    fn forces(_q: &V2, qd: &V2, b: &f64, _t: f64) -> V2 {
        V2::new(b * qd[1], -b * qd[0])
    }
    fn gamma(_q: &V2, _qd: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SVector<f64, 0> {
        mechgen_runtime::nalgebra::SVector::<f64, 0>::zeros()
    }
}

#[test]
fn gyroscopic_forces_circle_exactly() {
    // A non-symmetric tangent must not reach nalgebra's Cholesky (which reads only the lower
    // triangle): the particle circles at ω = B with speed |v| conserved.
    let b = 2.0;
    let q0 = V2::new(0.0, 1.0);
    let v0 = V2::new(b, 0.0);
    let o = Ali3pOptions {
        h: 1e-3,
        output_times: outputs(3.0, 30),
        ..Ali3pOptions::default()
    };
    let traj = simulate_ali3p::<Gyro, 2, 0, 2>(&q0, &v0, &b, 0.0, 3.0, &o).expect("gyro");
    let mut err: f64 = 0.0;
    for (t, (q, v)) in traj.t.iter().zip(traj.q.iter().zip(&traj.qd)) {
        let exact = V2::new((b * t).sin(), (b * t).cos());
        err = err.max((q - exact).amax());
        assert!((v.norm() - b).abs() < 1e-9, "speed {} at t = {t}", v.norm());
    }
    eprintln!("gyro 3 s: error {err:.3e}");
    assert!(err < 1e-5, "error {err:.3e}");
}

/// A hardening spring `m ẍ = −k x³` in two uncoupled coordinates (no constraints): stiff
/// at large `x`, where a mass-only tangent makes Newton diverge for large steps.
struct Hardening;

impl mechgen_runtime::Mechanism<2, 0, 2> for Hardening {
    type Params = f64;
    const NAME: &'static str = "hardening";
    const COORD_NAMES: [&'static str; 2] = ["x", "y"];
    const INDEPENDENT: [usize; 2] = [0, 1];
    fn nominal_q() -> V2 {
        V2::new(1.0, 0.5)
    }
    fn residual(q: &V2, p: &f64, t: f64) -> mechgen_runtime::nalgebra::SVector<f64, 0> {
        Gyro::residual(q, p, t)
    }
    fn jacobian(q: &V2, p: &f64, t: f64) -> mechgen_runtime::nalgebra::SMatrix<f64, 0, 2> {
        Gyro::jacobian(q, p, t)
    }
    fn jacobian_t(q: &V2, p: &f64, t: f64) -> mechgen_runtime::nalgebra::SVector<f64, 0> {
        Gyro::jacobian_t(q, p, t)
    }
    fn null_space(q: &V2, p: &f64, t: f64) -> (mechgen_runtime::nalgebra::SMatrix<f64, 2, 2>, f64) {
        Gyro::null_space(q, p, t)
    }
    fn solve_dependent(
        q: &V2,
        p: &f64,
        t: f64,
        b: &mechgen_runtime::nalgebra::SVector<f64, 0>,
    ) -> V2 {
        Gyro::solve_dependent(q, p, t, b)
    }
}

impl mechgen_runtime::Dynamics<2, 0, 2> for Hardening {
    fn mass_matrix(_q: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SMatrix<f64, 2, 2> {
        mechgen_runtime::nalgebra::SMatrix::<f64, 2, 2>::identity()
    }
    fn forces(q: &V2, _qd: &V2, k: &f64, _t: f64) -> V2 {
        V2::new(-k * q[0].powi(3), -k * q[1].powi(3))
    }
    fn gamma(_q: &V2, _qd: &V2, _p: &f64, _t: f64) -> mechgen_runtime::nalgebra::SVector<f64, 0> {
        mechgen_runtime::nalgebra::SVector::<f64, 0>::zeros()
    }
    fn energy(q: &V2, qd: &V2, k: &f64, _t: f64) -> Option<f64> {
        Some(0.5 * qd.norm_squared() + 0.25 * k * (q[0].powi(4) + q[1].powi(4)))
    }
}

#[test]
fn diverging_newton_is_no_convergence_not_a_nan_error() {
    // Mass-only tangent, h = 0.1 on k = 1e4: the iteration x ← x − (h²/4)(a − f) grows
    // without bound. Before: "non-finite forces" (a NaN error). Now NoConvergence, named.
    let q0 = V2::new(1.0, 0.5);
    let o = Ali3pOptions {
        h: 0.1,
        tangent: Tangent::MassOnly,
        ..Ali3pOptions::default()
    };
    let e = simulate_ali3p::<Hardening, 2, 0, 2>(&q0, &V2::zeros(), &1e4, 0.0, 1.0, &o)
        .expect_err("diverges");
    assert_eq!(
        e,
        SimError::NoConvergence {
            t: 0.1,
            what: "ALI3-P step (diverging)",
            iterations: 50,
            hint: "use the finite-difference tangent (Tangent::FiniteDifferences) or reduce \
                   the step h",
        }
    );
}

#[test]
fn adaptive_step_retries_a_failing_newton_with_a_smaller_step() {
    // The same run with error control: the failed steps are retried with h/4 until Newton
    // converges, and the local error test sets the step (3,882 steps, 78 rejected); energy
    // is conserved to 1e-3 relative (measured 2.6e-4 of E = 2.66e3 J) and every output time
    // is landed on exactly.
    let q0 = V2::new(1.0, 0.5);
    let o = Ali3pOptions {
        h: 0.1,
        tangent: Tangent::MassOnly,
        output_times: outputs(1.0, 10),
        adaptive: Some(Adaptive {
            rtol: 1e-6,
            atol: 1e-8,
            ..Adaptive::default()
        }),
        ..Ali3pOptions::default()
    };
    let traj = simulate_ali3p::<Hardening, 2, 0, 2>(&q0, &V2::zeros(), &1e4, 0.0, 1.0, &o)
        .expect("adaptive");
    let s = traj.stats;
    eprintln!("hardening spring, adaptive: {s:?}");
    assert!(s.ode.rejected > 0, "{s:?}");
    assert_eq!(traj.t, {
        let mut t = vec![0.0];
        t.extend(outputs(1.0, 10));
        t.push(1.0);
        t
    });
    let e0 = 0.25 * 1e4 * (1.0 + 0.5f64.powi(4));
    let de = s.energy_change.expect("energy");
    assert!(de < 1e-3 * e0, "|ΔE| {de:e} of {e0}");
}

#[test]
fn adaptive_step_meets_its_tolerance_on_the_pendulum() {
    // The pendulum at 60° over 10 s against the exact pendulum: the error follows the
    // tolerance (global error ∝ tolerance^(2/3) for a second-order method with a
    // third-order local error), with far fewer steps at the loose tolerance.
    let p = PendParams::default();
    let phi0 = 60f64.to_radians();
    let q0 = V2::new(phi0.sin(), -phi0.cos());
    let run = |rtol: f64| {
        let opts = Ali3pOptions {
            h: 1e-3,
            output_times: outputs(10.0, 100),
            adaptive: Some(Adaptive {
                rtol,
                atol: rtol,
                ..Adaptive::default()
            }),
            ..Ali3pOptions::default()
        };
        let traj = simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 10.0, &opts)
            .expect("adaptive pendulum");
        let mut err: f64 = 0.0;
        for (t, q) in traj.t.iter().zip(&traj.q) {
            err = err.max((q - exact(*t, phi0, &p)).amax());
        }
        (err, traj.stats.ode)
    };
    let (e6, s6) = run(1e-6);
    let (e9, s9) = run(1e-9);
    eprintln!("pendulum adaptive: rtol 1e-6 {e6:.2e} {s6:?}; 1e-9 {e9:.2e} {s9:?}");
    assert!(e6 < 1e-2 && e9 < 1e-4, "{e6:e} {e9:e}");
    assert!(e9 < 0.1 * e6, "{e6:e} {e9:e}");
    assert!(s6.steps < s9.steps / 5, "{} {}", s6.steps, s9.steps);
}

#[test]
fn bad_adaptive_options_are_errors() {
    let p = PendParams::default();
    let q0 = V2::new(0.6, -0.8);
    let run = |ad: Adaptive| {
        let o = Ali3pOptions {
            adaptive: Some(ad),
            ..Ali3pOptions::default()
        };
        simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 1.0, &o)
            .expect_err("bad adaptive options")
            .to_string()
    };
    let tol = "invalid simulation input: adaptive tolerances must be finite, non-negative and \
               not both zero";
    let bounds = "invalid simulation input: adaptive step bounds need 0 < h_min <= h_max";
    let base = Adaptive::default();
    assert_eq!(
        run(Adaptive {
            rtol: 0.0,
            atol: 0.0,
            ..base
        }),
        tol
    );
    assert_eq!(
        run(Adaptive {
            rtol: f64::NAN,
            ..base
        }),
        tol
    );
    assert_eq!(run(Adaptive { atol: -1.0, ..base }), tol);
    assert_eq!(run(Adaptive { h_min: 0.0, ..base }), bounds);
    assert_eq!(
        run(Adaptive {
            h_min: 1e-3,
            h_max: 1e-4,
            ..base
        }),
        bounds
    );
}

#[test]
fn tangent_reuse_keeps_the_accuracy_with_fewer_force_evaluations() {
    // The pendulum at 60° over 10 s, h = 1e-3: force derivatives every step or every 10
    // steps give the same error (to 1 %), the latter with about 4× fewer force evaluations
    // (5 per derivative evaluation for NQ = 2, plus one per Newton iteration).
    let p = PendParams::default();
    let phi0 = 60f64.to_radians();
    let q0 = V2::new(phi0.sin(), -phi0.cos());
    let run = |reuse: usize| {
        let opts = Ali3pOptions {
            h: 1e-3,
            output_times: outputs(10.0, 100),
            tangent_reuse: reuse,
            ..Ali3pOptions::default()
        };
        let traj = simulate_ali3p::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 10.0, &opts)
            .expect("pendulum");
        let mut err: f64 = 0.0;
        for (t, q) in traj.t.iter().zip(&traj.q) {
            err = err.max((q - exact(*t, phi0, &p)).amax());
        }
        (err, traj.stats)
    };
    let (e1, s1) = run(1);
    let (e10, s10) = run(10);
    eprintln!(
        "reuse 1: {e1:.4e}, {} force evaluations; reuse 10: {e10:.4e}, {}",
        s1.ode.rhs_calls, s10.ode.rhs_calls
    );
    assert!((e10 - e1).abs() <= 0.01 * e1, "{e1:e} {e10:e}");
    assert!(
        s10.ode.rhs_calls * 3 < s1.ode.rhs_calls,
        "{} {}",
        s1.ode.rhs_calls,
        s10.ode.rhs_calls
    );
}
