//! The fixed-step projection integrator and its exact Jacobians (`#![generic]` modules):
//! `step_jacobians` (dual numbers through the generated generic functions) against central
//! differences of `step` at 100 random states, the generic functions over `Dual` against
//! the symbolic Jacobian, and the adjoint product against the transposed Jacobian.
//! Tolerances: 1e-7 relative to each block's norm for Richardson-extrapolated central
//! differences (ε = 2e-4 and 1e-4: truncation ~ε⁴, rounding ~1e-16/ε); 1e-12 for identities
//! that hold exactly up to rounding.

use mechgen::nalgebra::SVector;
use mechgen::runtime::StepDerivatives;
use mechgen::runtime::{
    step::rollout_adjoint, step::step, step::step_generic, step::step_jacobians, step::StepOptions,
    Dual, Mechanism, Real, StepError,
};
use mechgen_test_support::step::{check_step_jacobians, check_symbolic_step_jacobians};
use rand::{RngExt, SeedableRng};

include!("../examples/mechanisms/sprung_crank.rs");
use sprung_crank as crank;

#[test]
fn generic_functions_over_dual_numbers_give_the_symbolic_jacobian() {
    use crank::{generic, Params};
    let p = Params::default();
    let pv = generic::params::<Dual<3>>(&p);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for _ in 0..200 {
        let q = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-3.0..3.0));
        let qs = SVector::<Dual<3>, 3>::from_fn(|i, _| Dual::variable(q[i], i));
        let r = generic::residual(&qs, &pv, Dual::constant(0.0));
        let j = crank::jacobian(&q, &p, 0.0);
        let r64 = crank::residual(&q, &p, 0.0);
        for i in 0..2 {
            assert_eq!(
                r[i].value(),
                r64[i],
                "value of the generic residual, row {i}"
            );
            for c in 0..3 {
                assert!(
                    (r[i].eps[c] - j[(i, c)]).abs() <= 1e-14 * (1.0 + j[(i, c)].abs()),
                    "∂C{i}/∂q{c}: dual {} vs symbolic {}",
                    r[i].eps[c],
                    j[(i, c)]
                );
            }
        }
        // The f64 instance of the generic family is the f64 function.
        let (d, h) = generic::null_space_fixed(&q, &generic::param_values(&p), 0.0);
        let (d64, h64) = crank::null_space_fixed(&q, &p, 0.0);
        assert_eq!((d, h), (d64, h64));
    }
}

#[test]
fn slider_crank_step_jacobians_equal_central_differences() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let p = crank::Params::default();
    let worst =
        check_step_jacobians::<crank::Model, 3, 2, 1, 10>(&mut rng, &p, 100, 2.5, 3.0, 1e-3, 1e-7);
    eprintln!("slider crank: worst relative difference {worst:e}");
}

#[test]
fn symbolic_step_jacobians_equal_the_dual_number_ones() {
    // The state blocks composed from the generated derivatives (∂f/∂q, ∂f/∂q̇, ∂(M b)/∂q,
    // ∂γ/∂q, ∂γ/∂q̇) against dual numbers through the whole step, at 100 random states
    // with damping on (∂f/∂q̇ ≠ 0); the crank's constraints do not depend on time.
    const { assert!(!<crank::Model as StepDerivatives<3, 2, 1, 10>>::RHEONOMIC) };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let p = crank::Params {
        c: 0.7,
        ..crank::Params::default()
    };
    let worst = check_symbolic_step_jacobians::<crank::Model, 3, 2, 1, 10>(
        &mut rng, &p, 100, 2.5, 3.0, 1e-3, 1e-10,
    );
    eprintln!("slider crank: symbolic vs dual worst relative difference {worst:e}");
}

#[test]
fn a_step_where_the_chart_is_singular_or_the_state_not_finite_is_an_error() {
    // The primary chart solves for (β, s); its block [[l2 cos β, −1], [l2 sin β, 0]] is
    // singular where sin β = 0 (a vertical rod: off the manifold for l1 < l2, but a state
    // a caller can pass).
    use mechgen::runtime::{step::step_jacobians_symbolic, step::StepMethod};
    let p = crank::Params::default();
    let u = SVector::<f64, 1>::new(0.5);
    for method in [StepMethod::SemiImplicitEuler, StepMethod::Rk4] {
        let opts = StepOptions {
            method,
            ..StepOptions::default()
        };
        // The step and both Jacobian routes at `q` return the error `$p`.
        macro_rules! all_fail {
            ($q:expr, $p:pat $(if $g:expr)?) => {
                let q = $q;
                let e = step::<crank::Model, 3, 2, 1, 10>(&q, &u, &p, 0.0, 1e-3, &opts);
                assert!(matches!(e, Err($p) $(if $g)?), "{method:?} step: {e:?}");
                let e = step_jacobians::<crank::Model, 3, 2, 1, 10>(&q, &u, &p, 0.0, 1e-3, &opts);
                assert!(matches!(e, Err($p) $(if $g)?), "{method:?} dual: {e:?}");
                let e = step_jacobians_symbolic::<crank::Model, 3, 2, 1, 10>(
                    &q, &u, &p, 0.0, 1e-3, &opts,
                );
                assert!(matches!(e, Err($p) $(if $g)?), "{method:?} symbolic: {e:?}");
            };
        }
        all_fail!(
            SVector::<f64, 3>::new(0.3, 0.0, 0.4),
            StepError::Chart { health, .. } if health < 1e-12
        );
        all_fail!(
            SVector::<f64, 3>::new(f64::NAN, 1.4, 0.4),
            StepError::NonFinite { .. }
        );
    }
    let opts = StepOptions::default();
    let e = step::<crank::Model, 3, 2, 1, 10>(
        &crank::Model::nominal_q(),
        &u,
        &p,
        0.0,
        f64::INFINITY,
        &opts,
    );
    assert!(matches!(e, Err(StepError::NonFinite { .. })), "{e:?}");
}

#[test]
fn rk4_symbolic_and_dual_jacobians_fail_alike_at_a_later_stage() {
    // A chart-health floor just below the start's health: the first stage passes and, as
    // the step grows, a later stage point's health falls below it. Both Jacobian routes
    // then return the same `Chart` error (none panics or passes a value on), and where the
    // step succeeds they agree.
    use mechgen::runtime::{step::step_jacobians_symbolic, step::StepMethod};
    let p = crank::Params::default();
    let q = crank::Model::nominal_q();
    let health = crank::null_space_fixed(&q, &p, 0.0).1;
    let opts = StepOptions {
        method: StepMethod::Rk4,
        min_health: 0.995 * health,
        ..StepOptions::default()
    };
    let (mut errors, mut oks) = (0, 0);
    for k in -40i32..=40 {
        // Either direction of motion: the health falls in one of them.
        let u = SVector::<f64, 1>::new(if k < 0 { -3.0 } else { 3.0 });
        let h = 2.5e-3 * f64::from(k.unsigned_abs().max(1));
        let a = step_jacobians::<crank::Model, 3, 2, 1, 10>(&q, &u, &p, 0.0, h, &opts);
        let b = step_jacobians_symbolic::<crank::Model, 3, 2, 1, 10>(&q, &u, &p, 0.0, h, &opts);
        match (&a, &b) {
            (Ok(a), Ok(b)) => {
                oks += 1;
                let diff = (a.dq_dq - b.dq_dq).amax()
                    + (a.du_dq - b.du_dq).amax()
                    + (a.dq_dp - b.dq_dp).amax()
                    + (a.du_dp - b.du_dp).amax();
                assert!(diff <= 1e-10, "h = {h}: {diff:e}");
            }
            (Err(StepError::Chart { health: x, .. }), Err(StepError::Chart { health: y, .. })) => {
                errors += 1;
                assert_eq!(x, y, "h = {h}");
                assert!(*x < opts.min_health);
            }
            _ => panic!("h = {h}: dual {a:?} vs symbolic {b:?}"),
        }
    }
    // Measured: 63 succeeded, 18 failed alike.
    eprintln!("RK4 near the health floor: {oks} succeeded, {errors} failed alike");
    assert!(oks > 0 && errors > 0, "{oks} ok, {errors} errors");
}

/// Largest relative energy error of `steps` steps of `h` by `method` from the nominal pose at
/// 8 rad/s.
fn energy_error(method: mechgen::runtime::step::StepMethod, h: f64, steps: usize) -> f64 {
    // No torque and no slider force (the `force` item is not in `energy`): gravity only,
    // so energy is conserved by the motion.
    let p = crank::Params {
        torque: 0.0,
        k: 0.0,
        ..crank::Params::default()
    };
    let opts = StepOptions {
        method,
        ..StepOptions::default()
    };
    let mut q = crank::Model::nominal_q();
    let mut u = SVector::<f64, 1>::new(8.0);
    let qd0 = crank::null_space_fixed(&q, &p, 0.0).0 * u;
    let e0 = crank::energy(&q, &qd0, &p, 0.0);
    let mut worst = 0.0f64;
    for k in 0..steps {
        let t = k as f64 * h;
        (q, u) = step::<crank::Model, 3, 2, 1, 10>(&q, &u, &p, t, h, &opts).unwrap();
        assert!(crank::residual(&q, &p, t + h).norm() < 1e-12);
        let qd = crank::null_space_fixed(&q, &p, 0.0).0 * u;
        worst = worst.max((crank::energy(&q, &qd, &p, 0.0) - e0).abs() / e0.abs());
    }
    worst
}

#[test]
fn the_step_is_first_order_and_keeps_the_constraints() {
    // One second (about 1.3 crank turns) at h and h/2: the energy error halves
    // (semi-implicit Euler is first order), and every step ends on the manifold.
    use mechgen::runtime::step::StepMethod::SemiImplicitEuler;
    let a = energy_error(SemiImplicitEuler, 1e-4, 10_000);
    let b = energy_error(SemiImplicitEuler, 5e-5, 20_000);
    // Measured: 7.4e-3 and 3.7e-3.
    assert!(a < 1e-2, "energy error {a:e}");
    assert!(
        (1.7..2.3).contains(&(a / b)),
        "energy error {a:e} at h, {b:e} at h/2"
    );
}

#[test]
fn the_adjoint_gradient_of_a_300_step_rollout_equals_central_differences() {
    adjoint_gradient_equals_central_differences(StepOptions::default(), 1e-3, 300);
}

#[test]
fn the_adjoint_gradient_of_a_100_step_rk4_rollout_equals_central_differences() {
    // The same loss through 100 RK4 steps of 3 ms: the symbolic route chains the rates'
    // Jacobians through the four stages.
    let opts = StepOptions {
        method: mechgen::runtime::step::StepMethod::Rk4,
        ..StepOptions::default()
    };
    adjoint_gradient_equals_central_differences(opts, 3e-3, 100);
}

/// Loss: the slider's distance to 0.35 m and the crank's speed, after `steps` steps of `h`
/// from the nominal pose: the adjoint gradient by dual numbers and by the symbolic route
/// agree to 1e-10, and equal Richardson central differences of the whole rollout to 1e-6.
fn adjoint_gradient_equals_central_differences(opts: StepOptions, h: f64, steps: usize) {
    let p = crank::Params::default();
    let q0 = crank::Model::nominal_q();
    let u0 = SVector::<f64, 1>::new(1.0);
    let loss = |q: &SVector<f64, 3>, u: &SVector<f64, 1>| {
        let e = q[2] - 0.35;
        (
            e * e + 0.01 * u[0] * u[0],
            SVector::<f64, 3>::new(0.0, 0.0, 2.0 * e),
            SVector::<f64, 1>::new(0.02 * u[0]),
        )
    };
    let g = rollout_adjoint::<crank::Model, 3, 2, 1, 10>(&q0, &u0, &p, 0.0, h, steps, &opts, loss)
        .expect("rollout");
    // The same gradient from the composed (symbolic) step Jacobians, to rounding.
    let gs = mechgen::runtime::step::rollout_adjoint_symbolic::<crank::Model, 3, 2, 1, 10>(
        &q0, &u0, &p, 0.0, h, steps, &opts, loss,
    )
    .expect("rollout");
    let rel = |a: f64, b: f64| (a - b).abs() / (1.0 + b.abs());
    assert!(
        rel(gs.loss, g.loss) <= 1e-14,
        "loss {} vs {}",
        gs.loss,
        g.loss
    );
    for (a, b) in gs
        .dp
        .iter()
        .chain(gs.dq0.iter())
        .chain(gs.du0.iter())
        .zip(g.dp.iter().chain(g.dq0.iter()).chain(g.du0.iter()))
    {
        assert!(rel(*a, *b) <= 1e-10, "symbolic gradient {a} vs dual {b}");
    }
    let run = |pv: [f64; 10], u: f64| {
        let (mut q, mut u) = (q0, SVector::<f64, 1>::new(u));
        for k in 0..steps {
            (q, u) =
                step_generic::<crank::Model, f64, 3, 2, 1, 10>(&q, &u, &pv, k as f64 * h, h, &opts)
                    .expect("step");
        }
        loss(&q, &u).0
    };
    let pv = crank::generic::param_values(&p);
    assert!((run(pv, u0[0]) - g.loss).abs() <= 1e-14);
    // Richardson central differences of the whole rollout, relative steps of 1e-3.
    let fd = |f: &dyn Fn(f64) -> f64, x: f64| {
        let e = 1e-3 * x.abs().max(1.0);
        let c = |e: f64| (f(x + e) - f(x - e)) / (2.0 * e);
        (4.0 * c(e / 2.0) - c(e)) / 3.0
    };
    let scale = g.dp.norm().max(g.du0.norm());
    for i in 0..10 {
        let d = fd(
            &|x| {
                let mut pp = pv;
                pp[i] = x;
                run(pp, u0[0])
            },
            pv[i],
        );
        assert!(
            (d - g.dp[i]).abs() <= 1e-6 * scale,
            "∂L/∂{}: adjoint {} vs differences {d}",
            crank::generic::PARAM_NAMES[i],
            g.dp[i]
        );
    }
    let d = fd(&|x| run(pv, x), u0[0]);
    assert!(
        (d - g.du0[0]).abs() <= 1e-6 * scale,
        "∂L/∂u0: {} vs {d}",
        g.du0[0]
    );
}

#[test]
fn four_lanes_equal_four_scalar_calls() {
    // wide's vectorised sin/cos are within a few ulps of the scalar ones: 1e-13 relative.
    let same = |a: Vec<f64>, b: &[f64], what: &str| {
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= 1e-13 * (1.0 + y.abs()),
                "{what}: lanes {x} vs scalar {y}"
            );
        }
    };
    use mechgen::nalgebra::SMatrix;
    use mechgen::runtime::F64x4;
    let p = crank::Params::default();
    let pv = crank::generic::param_values(&p);
    let p4 = crank::generic::params::<F64x4>(&p);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    for _ in 0..50 {
        let qs: [SVector<f64, 3>; 4] =
            std::array::from_fn(|_| SVector::from_fn(|_, _| rng.random_range(-3.0..3.0)));
        let qds: [SVector<f64, 3>; 4] =
            std::array::from_fn(|_| SVector::from_fn(|_, _| rng.random_range(-3.0..3.0)));
        let q4 = SVector::<F64x4, 3>::from_fn(|i, _| F64x4::new(std::array::from_fn(|l| qs[l][i])));
        let qd4 =
            SVector::<F64x4, 3>::from_fn(|i, _| F64x4::new(std::array::from_fn(|l| qds[l][i])));
        let t4 = F64x4::splat(0.0);
        let (d4, h4) = crank::generic::null_space_fixed(&q4, &p4, t4);
        let mut worst_lane = f64::INFINITY;
        let m4 = crank::generic::mass_matrix(&q4, &p4, t4);
        let f4 = crank::generic::forces(&q4, &qd4, &p4, t4);
        let g4 = crank::generic::gamma(&q4, &qd4, &p4, t4);
        for l in 0..4 {
            let lane = |v: &[F64x4]| v.iter().map(|x| x.lane(l)).collect::<Vec<f64>>();
            let (d, h) = crank::generic::null_space_fixed(&qs[l], &pv, 0.0);
            same(lane(d4.as_slice()), d.as_slice(), "null_space_fixed");
            worst_lane = worst_lane.min(h);
            let m: SMatrix<f64, 3, 3> = crank::generic::mass_matrix(&qs[l], &pv, 0.0);
            same(lane(m4.as_slice()), m.as_slice(), "mass_matrix");
            same(
                lane(f4.as_slice()),
                crank::generic::forces(&qs[l], &qds[l], &pv, 0.0).as_slice(),
                "forces",
            );
            same(
                lane(g4.as_slice()),
                crank::generic::gamma(&qs[l], &qds[l], &pv, 0.0).as_slice(),
                "gamma",
            );
        }
        // The lanes' health is the worst lane's (each lane's figure computed lane-wise).
        assert_eq!(h4, worst_lane, "lanes' health vs the worst lane's");
    }
    // A NaN lane makes the figure 0 (an error for callers that check it), whatever the
    // other lanes are.
    let q = SVector::<f64, 3>::from(crank::NOMINAL_Q);
    let mut q4 = q.map(F64x4::splat);
    q4[1] = F64x4::new([q[1], q[1], f64::NAN, q[1]]);
    let (_, h4) = crank::generic::null_space_fixed(&q4, &p4, F64x4::splat(0.0));
    assert_eq!(h4, 0.0, "health with a NaN lane");
    let (_, h) = crank::generic::null_space_fixed(&q, &pv, 0.0);
    assert!(h > 0.1, "nominal health {h}");
}

#[test]
fn symbolic_derivatives_of_the_dynamics_terms_equal_dual_numbers() {
    // ∂f/∂q, ∂f/∂q̇, ∂f/∂p, ∂(M b)/∂q, ∂γ/∂q, ∂γ/∂q̇, (∂D/∂q) q̇, ∂(M b)/∂p, ∂γ/∂p, ∂C/∂p,
    // ∂(C_J b)/∂p (generated with #![derivatives]) against
    // one evaluation of the generic functions over dual numbers, at 200 random states.
    use crank::generic as g;
    const NP: usize = crank::NP;
    let p = crank::Params {
        c: 0.7,
        ..crank::Params::default()
    };
    let pv = g::param_values(&p);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
            "{what}: symbolic {a} vs dual {b}"
        );
    };
    for _ in 0..200 {
        let q = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-3.0..3.0));
        let qd = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-3.0..3.0));
        let b = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-3.0..3.0));
        let c = |x: f64| Dual::<3>::constant(x);
        // Seeds on q, on q̇.
        let qs = SVector::<Dual<3>, 3>::from_fn(|i, _| Dual::variable(q[i], i));
        let qds = SVector::<Dual<3>, 3>::from_fn(|i, _| Dual::variable(qd[i], i));
        let pc: [Dual<3>; NP] = std::array::from_fn(|i| c(pv[i]));
        let f_q = g::forces(&qs, &qd.map(c), &pc, c(0.0));
        let f_qd = g::forces(&q.map(c), &qds, &pc, c(0.0));
        let g_q = g::gamma(&qs, &qd.map(c), &pc, c(0.0));
        let g_qd = g::gamma(&q.map(c), &qds, &pc, c(0.0));
        let m = g::mass_matrix(&qs, &pc, c(0.0));
        let (sf_q, sf_qd) = (
            crank::forces_jacobian_q(&q, &qd, &p, 0.0),
            crank::forces_jacobian_qd(&q, &qd, &p, 0.0),
        );
        let (sg_q, sg_qd) = (
            crank::gamma_jacobian_q(&q, &qd, &p, 0.0),
            crank::gamma_jacobian_qd(&q, &qd, &p, 0.0),
        );
        let smb = crank::mass_times_jacobian(&q, &p, 0.0, &b);
        for i in 0..3 {
            for j in 0..3 {
                close(sf_q[(i, j)], f_q[i].eps[j], "∂f/∂q");
                close(sf_qd[(i, j)], f_qd[i].eps[j], "∂f/∂q̇");
                let mb: f64 = (0..3).map(|k| m[(i, k)].eps[j] * b[k]).sum();
                close(smb[(i, j)], mb, "∂(M b)/∂q");
            }
        }
        for i in 0..2 {
            for j in 0..3 {
                close(sg_q[(i, j)], g_q[i].eps[j], "∂γ/∂q");
                close(sg_qd[(i, j)], g_qd[i].eps[j], "∂γ/∂q̇");
            }
        }
        // (∂D/∂q) q̇ against the dual part of D(q + ε q̇).
        let qv = SVector::<Dual<3>, 3>::from_fn(|i, _| Dual {
            re: q[i],
            eps: [qd[i], 0.0, 0.0],
        });
        let (dv, _) = g::null_space_fixed(&qv, &pc, c(0.0));
        let sdv = crank::null_space_directional(&q, &qd, &p, 0.0);
        for i in 0..3 {
            close(sdv[(i, 0)], dv[(i, 0)].eps[0], "(∂D/∂q) q̇");
        }
        // ∂f/∂p: one parameter at a time.
        let sf_p = crank::forces_jacobian_p(&q, &qd, &p, 0.0);
        for k in 0..NP {
            let ps: [Dual<3>; NP] =
                std::array::from_fn(|i| Dual::variable(pv[i], if i == k { 0 } else { 9 }));
            let f = g::forces(&q.map(c), &qd.map(c), &ps, c(0.0));
            for i in 0..3 {
                close(sf_p[(i, k)], f[i].eps[0], g::PARAM_NAMES[k]);
            }
        }
        // With respect to the parameters: ∂(M b)/∂p, ∂γ/∂p, ∂C/∂p, ∂(C_J b)/∂p.
        let (smb_p, sg_p, sc_p, sjb_p) = (
            crank::mass_times_jacobian_p(&q, &p, 0.0, &b),
            crank::gamma_jacobian_p(&q, &qd, &p, 0.0),
            crank::residual_jacobian_p(&q, &p, 0.0),
            crank::jacobian_times_jacobian_p(&q, &p, 0.0, &b),
        );
        for k in 0..NP {
            let ps: [Dual<3>; NP] =
                std::array::from_fn(|i| Dual::variable(pv[i], if i == k { 0 } else { 9 }));
            let m = g::mass_matrix(&q.map(c), &ps, c(0.0));
            let gm = g::gamma(&q.map(c), &qd.map(c), &ps, c(0.0));
            let r = g::residual(&q.map(c), &ps, c(0.0));
            let jm = g::jacobian(&q.map(c), &ps, c(0.0));
            let name = g::PARAM_NAMES[k];
            for i in 0..3 {
                let mb: f64 = (0..3).map(|j| m[(i, j)].eps[0] * b[j]).sum();
                close(smb_p[(i, k)], mb, name);
            }
            for i in 0..2 {
                close(sg_p[(i, k)], gm[i].eps[0], name);
                close(sc_p[(i, k)], r[i].eps[0], name);
                let jb: f64 = (0..3).map(|j| jm[(i, j)].eps[0] * b[j]).sum();
                close(sjb_p[(i, k)], jb, name);
            }
        }
        // The fused forms the step composes with equal their parts' differences (one body
        // each in the generated code: shared trigonometry, one matrix written).
        let dq = crank::dynamics_jacobian_q(&q, &qd, &p, 0.0, &b) - (sf_q - smb);
        assert!(
            dq.amax() <= 1e-13 * (1.0 + sf_q.amax() + smb.amax()),
            "{dq}"
        );
        let dp = crank::dynamics_jacobian_p(&q, &qd, &p, 0.0, &b) - (sf_p - smb_p);
        assert!(
            dp.amax() <= 1e-13 * (1.0 + sf_p.amax() + smb_p.amax()),
            "{dp}"
        );
        let ga = crank::acceleration_jacobian_p(&q, &qd, &p, 0.0, &b) - (sg_p - sjb_p);
        assert!(
            ga.amax() <= 1e-13 * (1.0 + sg_p.amax() + sjb_p.amax()),
            "{ga}"
        );
    }
}

mechgen::mechanism! {
    #![generic]
    #![derivatives]
    /// A point mass on a circle whose radius is driven in time: the constraint depends on `t`.
    mod driven {
        param m = 1.0;
        param g = 9.81;
        coord x = 1.0;
        coord y = 0.0;
        let r = 1.0 + 0.1 * sin(3.0 * t);
        constraint x * x + y * y == r * r;
        independent y;
        body bob { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
    }
}

#[test]
fn time_dependent_constraints_take_the_dual_number_route() {
    // `γ` has C_qt and C_tt terms there, which the composition does not cover: the symbolic
    // entry point must say so and fall back to the dual-number Jacobian.
    use mechgen::runtime::step::step_jacobians_symbolic;
    const { assert!(<driven::Model as StepDerivatives<2, 1, 1, 2>>::RHEONOMIC) };
    let p = driven::Params::default();
    let q = SVector::<f64, 2>::new(0.6, 0.8);
    let u = SVector::<f64, 1>::new(0.3);
    let opts = StepOptions::default();
    let a = step_jacobians::<driven::Model, 2, 1, 1, 2>(&q, &u, &p, 0.0, 1e-3, &opts)
        .expect("step Jacobians");
    let b = step_jacobians_symbolic::<driven::Model, 2, 1, 1, 2>(&q, &u, &p, 0.0, 1e-3, &opts)
        .expect("step Jacobians");
    assert_eq!(a, b);
}

mechgen::mechanism! {
    #![generic]
    #![derivatives]
    /// A pendulum in natural coordinates whose constraint is written twice (the second row
    /// redundant): the composed step Jacobian uses the pivot rows only.
    mod doubled {
        param l = 0.8;
        param m = 1.2;
        param g = 9.81;
        param c = 0.3;
        coord x = 0.48;
        coord y = -0.64;
        constraint x * x + y * y == l * l;
        constraint 2.0 * (x * x + y * y) == 2.0 * l * l;
        independent x;
        body bob { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        force x = -c * der(x);
    }
}

#[test]
fn symbolic_step_jacobians_with_a_redundant_constraint_row() {
    assert_eq!(doubled::REDUNDANT.len(), 1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    let p = doubled::Params::default();
    // x within 0.15 of 0.48 (|y| ≥ 0.5: away from the turning point x = l of this chart).
    let worst = check_symbolic_step_jacobians::<doubled::Model, 2, 2, 1, 4>(
        &mut rng, &p, 100, 0.15, 2.0, 1e-3, 1e-10,
    );
    eprintln!("doubled pendulum: symbolic vs dual worst relative difference {worst:e}");
    // And the dual-number route itself against differences of the step there (the helper steps
    // parameters by 1e-2·|p|; y = −√(l² − x²) curves strongly in `l` as |y| shrinks: at
    // |y| ≈ 0.34 Richardson's error reached 1.7e-6, hence the same spread of 0.15).
    let worst =
        check_step_jacobians::<doubled::Model, 2, 2, 1, 4>(&mut rng, &p, 50, 0.15, 2.0, 1e-3, 1e-7);
    eprintln!("doubled pendulum: dual vs central differences worst {worst:e}");
}

#[test]
fn the_generated_solve_matrix_equals_column_by_column_solves() {
    // `dependent_solve_matrix` (one generated body) against `solve_dependent` on the unit
    // vectors, at 200 random positions of the sprung crank and of the pendulum whose
    // constraint is written twice (its redundant row's column is zero in both).
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
    let p = crank::Params::default();
    for _ in 0..200 {
        let q = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-3.0..3.0));
        let s = crank::dependent_solve_matrix(&q, &p, 0.0);
        let s_trait =
            <crank::Model as StepDerivatives<3, 2, 1, { crank::NP }>>::dependent_solve_matrix(
                &q, &p, 0.0,
            );
        assert_eq!(s, s_trait);
        for i in 0..2 {
            let e = SVector::<f64, 2>::from_fn(|r, _| f64::from(u8::from(r == i)));
            let x = crank::solve_dependent(&q, &p, 0.0, &e);
            for r in 0..3 {
                assert!(
                    (s[(r, i)] - x[r]).abs() <= 1e-13 * (1.0 + x[r].abs()),
                    "column {i}, row {r}: {} vs {}",
                    s[(r, i)],
                    x[r]
                );
            }
        }
    }
    let p = doubled::Params::default();
    for _ in 0..200 {
        let q = SVector::<f64, 2>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let s = doubled::dependent_solve_matrix(&q, &p, 0.0);
        for i in 0..2 {
            let e = SVector::<f64, 2>::from_fn(|r, _| f64::from(u8::from(r == i)));
            let x = doubled::solve_dependent(&q, &p, 0.0, &e);
            for r in 0..2 {
                assert!((s[(r, i)] - x[r]).abs() <= 1e-13 * (1.0 + x[r].abs()));
            }
        }
    }
}

#[test]
fn the_rk4_step_is_fourth_order_and_keeps_the_constraints() {
    // One second at h and h/2: the energy error falls by about 2⁴ (semi-implicit Euler's
    // falls by 2, at 25 times smaller steps and 7.4e-3, above), and every step ends on the
    // manifold.
    // Measured: 2.8e-4, 1.1e-5, 5.1e-7, 3.4e-8, 2.2e-9 at h = 1e-2 … 6.25e-4 (ratios 26,
    // 22, 15, 16: the asymptotic 16 from h = 2.5e-3 on, 20 crank angle steps per radian).
    use mechgen::runtime::step::StepMethod::Rk4;
    let a = energy_error(Rk4, 2.5e-3, 400);
    let b = energy_error(Rk4, 1.25e-3, 800);
    assert!(a < 1e-6, "energy error {a:e}");
    assert!(
        (12.0..20.0).contains(&(a / b)),
        "energy error {a:e} at h, {b:e} at h/2"
    );
}

#[test]
fn rk4_step_jacobians_equal_central_differences() {
    // The dual-number Jacobian of the RK4 step (four stages, off-manifold stage positions,
    // the projection) against differences at 30 random states.
    use mechgen::runtime::step::StepMethod;
    let opts = StepOptions {
        method: StepMethod::Rk4,
        ..StepOptions::default()
    };
    let p = crank::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let worst = mechgen_test_support::step::check_step_jacobians_with::<crank::Model, 3, 2, 1, 10>(
        &opts, &mut rng, 30, &p, 0.3, 3.0, 1e-2, 1e-7,
    );
    eprintln!("RK4 slider crank: worst relative difference {worst:e}");
}

#[test]
fn rk4_symbolic_step_jacobians_equal_the_dual_number_ones() {
    // `step_jacobians_symbolic` for the RK4 step (the rates' Jacobians at the four stage
    // points, chained, then the projection) against dual numbers through the same step, at
    // 100 random states with damping on, every block including the parameters'.
    use mechgen::runtime::step::StepMethod;
    let opts = StepOptions {
        method: StepMethod::Rk4,
        ..StepOptions::default()
    };
    let p = crank::Params {
        c: 0.7,
        ..crank::Params::default()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(22);
    let worst = mechgen_test_support::step::check_symbolic_step_jacobians_with::<
        crank::Model,
        3,
        2,
        1,
        10,
    >(&opts, &mut rng, &p, 100, 2.5, 3.0, 1e-2, 1e-10);
    eprintln!("RK4 slider crank: symbolic vs dual worst relative difference {worst:e}");
    // Without the parameter blocks: the same state blocks, zero parameter blocks.
    let state_only = StepOptions {
        parameter_jacobians: false,
        ..opts
    };
    let q = crank::Model::nominal_q();
    let u = SVector::<f64, 1>::new(2.0);
    let full = mechgen::runtime::step::step_jacobians_symbolic::<crank::Model, 3, 2, 1, 10>(
        &q, &u, &p, 0.0, 1e-2, &opts,
    )
    .unwrap();
    let part = mechgen::runtime::step::step_jacobians_symbolic::<crank::Model, 3, 2, 1, 10>(
        &q,
        &u,
        &p,
        0.0,
        1e-2,
        &state_only,
    )
    .unwrap();
    assert_eq!(
        (part.dq_dq, part.dq_du, part.du_dq, part.du_du),
        (full.dq_dq, full.dq_du, full.du_dq, full.du_du)
    );
    assert!(part
        .dq_dp
        .iter()
        .chain(part.du_dp.iter())
        .all(|&x| x == 0.0));
    assert!(full.du_dp.amax() > 0.0);
}

/// The slider crank as a hand-written model would implement `StepDerivatives`: every
/// required method delegates to the generated `crank::Model`, the weighted reductions and
/// `dependent_jacobian_p` are the trait's defaults (reductions of the matrices).
struct Defaults;

type Gen = crank::Model;
type V3 = SVector<f64, 3>;
type M3<const C: usize> = mechgen::nalgebra::SMatrix<f64, 3, C>;
type M2<const C: usize> = mechgen::nalgebra::SMatrix<f64, 2, C>;

impl Mechanism<3, 2, 1> for Defaults {
    type Params = crank::Params;
    const NAME: &'static str = "defaults";
    const COORD_NAMES: [&'static str; 3] = <Gen as Mechanism<3, 2, 1>>::COORD_NAMES;
    const INDEPENDENT: [usize; 1] = <Gen as Mechanism<3, 2, 1>>::INDEPENDENT;
    fn nominal_q() -> V3 {
        Gen::nominal_q()
    }
    fn residual(q: &V3, p: &crank::Params, t: f64) -> SVector<f64, 2> {
        Gen::residual(q, p, t)
    }
    fn jacobian(q: &V3, p: &crank::Params, t: f64) -> M2<3> {
        Gen::jacobian(q, p, t)
    }
    fn jacobian_t(q: &V3, p: &crank::Params, t: f64) -> SVector<f64, 2> {
        Gen::jacobian_t(q, p, t)
    }
    fn null_space(q: &V3, p: &crank::Params, t: f64) -> (M3<1>, f64) {
        Gen::null_space(q, p, t)
    }
    fn solve_dependent(q: &V3, p: &crank::Params, t: f64, b: &SVector<f64, 2>) -> V3 {
        Gen::solve_dependent(q, p, t, b)
    }
}

impl mechgen::runtime::Dynamics<3, 2, 1> for Defaults {
    fn mass_matrix(q: &V3, p: &crank::Params, t: f64) -> M3<3> {
        Gen::mass_matrix(q, p, t)
    }
    fn forces(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> V3 {
        Gen::forces(q, qd, p, t)
    }
    fn gamma(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> SVector<f64, 2> {
        Gen::gamma(q, qd, p, t)
    }
}

impl mechgen::runtime::GenericDynamics<3, 2, 1, 10> for Defaults {
    fn param_values(p: &crank::Params) -> [f64; 10] {
        Gen::param_values(p)
    }
    fn residual_s<S: Real>(q: &SVector<S, 3>, p: &[S; 10], t: S) -> SVector<S, 2> {
        Gen::residual_s(q, p, t)
    }
    fn jacobian_t_s<S: Real>(q: &SVector<S, 3>, p: &[S; 10], t: S) -> SVector<S, 2> {
        Gen::jacobian_t_s(q, p, t)
    }
    fn null_space_s<S: Real>(
        q: &SVector<S, 3>,
        p: &[S; 10],
        t: S,
    ) -> (mechgen::nalgebra::SMatrix<S, 3, 1>, f64) {
        Gen::null_space_s(q, p, t)
    }
    fn solve_dependent_s<S: Real>(
        q: &SVector<S, 3>,
        p: &[S; 10],
        t: S,
        b: &SVector<S, 2>,
    ) -> SVector<S, 3> {
        Gen::solve_dependent_s(q, p, t, b)
    }
    fn gamma_s<S: Real>(q: &SVector<S, 3>, qd: &SVector<S, 3>, p: &[S; 10], t: S) -> SVector<S, 2> {
        Gen::gamma_s(q, qd, p, t)
    }
    fn mass_matrix_s<S: Real>(
        q: &SVector<S, 3>,
        p: &[S; 10],
        t: S,
    ) -> mechgen::nalgebra::SMatrix<S, 3, 3> {
        Gen::mass_matrix_s(q, p, t)
    }
    fn forces_s<S: Real>(
        q: &SVector<S, 3>,
        qd: &SVector<S, 3>,
        p: &[S; 10],
        t: S,
    ) -> SVector<S, 3> {
        Gen::forces_s(q, qd, p, t)
    }
}

impl StepDerivatives<3, 2, 1, 10> for Defaults {
    const RHEONOMIC: bool = <Gen as StepDerivatives<3, 2, 1, 10>>::RHEONOMIC;
    fn forces_jacobian_q(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> M3<3> {
        Gen::forces_jacobian_q(q, qd, p, t)
    }
    fn forces_jacobian_qd(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> M3<3> {
        Gen::forces_jacobian_qd(q, qd, p, t)
    }
    fn mass_times_jacobian(q: &V3, p: &crank::Params, t: f64, b: &V3) -> M3<3> {
        Gen::mass_times_jacobian(q, p, t, b)
    }
    fn gamma_jacobian_q(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> M2<3> {
        Gen::gamma_jacobian_q(q, qd, p, t)
    }
    fn gamma_jacobian_qd(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> M2<3> {
        Gen::gamma_jacobian_qd(q, qd, p, t)
    }
    fn forces_jacobian_p(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> M3<10> {
        Gen::forces_jacobian_p(q, qd, p, t)
    }
    fn mass_times_jacobian_p(q: &V3, p: &crank::Params, t: f64, b: &V3) -> M3<10> {
        Gen::mass_times_jacobian_p(q, p, t, b)
    }
    fn gamma_jacobian_p(q: &V3, qd: &V3, p: &crank::Params, t: f64) -> M2<10> {
        Gen::gamma_jacobian_p(q, qd, p, t)
    }
    fn residual_jacobian_p(q: &V3, p: &crank::Params, t: f64) -> M2<10> {
        Gen::residual_jacobian_p(q, p, t)
    }
    fn jacobian_times_jacobian_p(q: &V3, p: &crank::Params, t: f64, b: &V3) -> M2<10> {
        Gen::jacobian_times_jacobian_p(q, p, t, b)
    }
}

#[test]
fn step_derivatives_defaults_give_the_generated_jacobians() {
    // A model implementing only `StepDerivatives`' required methods (the defaults reduce
    // the matrices: `dependent_solve_matrix` by solves, the weighted reductions,
    // `dependent_jacobian_p`) against the generated model's fused and weighted functions,
    // at 30 random states: every block to 1e-12 relative.
    use mechgen::runtime::step::step_jacobians_symbolic;
    let p = crank::Params::default();
    let opts = StepOptions::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    let mut done = 0;
    for _ in 0..30 {
        let Some((q, u)) =
            mechgen_test_support::step::random_state::<Gen, 3, 2, 1, 10>(&mut rng, &p, 0.3, 3.0)
        else {
            continue;
        };
        let a = step_jacobians_symbolic::<Gen, 3, 2, 1, 10>(&q, &u, &p, 0.0, 1e-3, &opts).unwrap();
        let b =
            step_jacobians_symbolic::<Defaults, 3, 2, 1, 10>(&q, &u, &p, 0.0, 1e-3, &opts).unwrap();
        let blocks = [
            (a.dq_dq.as_slice(), b.dq_dq.as_slice()),
            (a.dq_du.as_slice(), b.dq_du.as_slice()),
            (a.du_dq.as_slice(), b.du_dq.as_slice()),
            (a.du_du.as_slice(), b.du_du.as_slice()),
            (a.dq_dp.as_slice(), b.dq_dp.as_slice()),
            (a.du_dp.as_slice(), b.du_dp.as_slice()),
        ];
        for (k, (x, y)) in blocks.into_iter().enumerate() {
            let scale = x.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            for (v, w) in x.iter().zip(y) {
                assert!((v - w).abs() <= 1e-12 * scale, "block {k}: {v} vs {w}");
            }
        }
        done += 1;
    }
    assert!(done >= 20, "only {done} of 30 random states assembled");
}
