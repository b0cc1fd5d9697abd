//! The fixed-step projection integrator and its exact Jacobians (`#![generic]` modules):
//! `step_jacobians` (dual numbers through the generated generic functions) against central
//! differences of `step` at 100 random states, the generic functions over `Dual` against
//! the symbolic Jacobian, and the adjoint product against the transposed Jacobian.
//! Tolerances: 1e-7 relative to each block's norm for Richardson-extrapolated central
//! differences (ε = 2e-4 and 1e-4: truncation ~ε⁴, rounding ~1e-16/ε); 1e-12 for identities
//! that hold exactly up to rounding.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{step, step_jacobians, Dual, Mechanism, Real, StepError, StepOptions};
use mechgen_test_support::step::check_step_jacobians;
use rand::{RngExt, SeedableRng};

mechgen::mechanism! {
    #![generic]
    /// The planar slider crank of examples/mechanisms/slider_crank.rs, with a spring on the
    /// slider (a parameter to differentiate with respect to) and a crank torque.
    pub mod crank {
        param l1 = 0.1;
        param l2 = 0.3;
        param m1 = 0.5;
        param m2 = 1.0;
        param m3 = 0.8;
        param g = 9.81;
        param torque = 0.4;
        param k = 30.0;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
        body crank_bar { mass = m1, inertia = m1 * l1 * l1 / 12.0, com = crank / 2.0, angle = theta }
        body rod_bar { mass = m2, inertia = m2 * l2 * l2 / 12.0, com = crank + rod / 2.0, angle = beta }
        body slider { mass = m3, com = vec2(s, 0.0) }
        gravity = vec2(0.0, -g);
        force theta = torque;
        force s = -k * (s - 0.3);
    }
}

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
        check_step_jacobians::<crank::Model, 3, 2, 1, 8>(&mut rng, &p, 100, 2.5, 3.0, 1e-3, 1e-7);
    eprintln!("slider crank: worst relative difference {worst:e}");
}

#[test]
fn a_step_where_the_chart_is_singular_or_the_state_not_finite_is_an_error() {
    // The primary chart solves for (β, s); its block [[l2 cos β, −1], [l2 sin β, 0]] is
    // singular where sin β = 0 (a vertical rod: off the manifold for l1 < l2, but a state
    // a caller can pass).
    let p = crank::Params::default();
    let opts = StepOptions::default();
    let u = SVector::<f64, 1>::new(0.5);
    let q = SVector::<f64, 3>::new(0.3, 0.0, 0.4);
    let e = step::<crank::Model, 3, 2, 1, 8>(&q, &u, &p, 0.0, 1e-3, &opts);
    assert!(
        matches!(e, Err(StepError::Chart { health, .. }) if health < 1e-12),
        "{e:?}"
    );
    let e = step_jacobians::<crank::Model, 3, 2, 1, 8>(&q, &u, &p, 0.0, 1e-3, &opts);
    assert!(matches!(e, Err(StepError::Chart { .. })), "{e:?}");
    let q = SVector::<f64, 3>::new(f64::NAN, 1.4, 0.4);
    let e = step::<crank::Model, 3, 2, 1, 8>(&q, &u, &p, 0.0, 1e-3, &opts);
    assert!(matches!(e, Err(StepError::NonFinite { .. })), "{e:?}");
    let e = step::<crank::Model, 3, 2, 1, 8>(
        &crank::Model::nominal_q(),
        &u,
        &p,
        0.0,
        f64::INFINITY,
        &opts,
    );
    assert!(matches!(e, Err(StepError::NonFinite { .. })), "{e:?}");
}

/// Largest relative energy error of `steps` steps of `h` from the nominal pose at 8 rad/s.
fn energy_error(h: f64, steps: usize) -> f64 {
    // No torque and no slider force (the `force` item is not in `energy`): gravity only,
    // so energy is conserved by the motion.
    let p = crank::Params {
        torque: 0.0,
        k: 0.0,
        ..crank::Params::default()
    };
    let opts = StepOptions::default();
    let mut q = crank::Model::nominal_q();
    let mut u = SVector::<f64, 1>::new(8.0);
    let qd0 = crank::null_space_fixed(&q, &p, 0.0).0 * u;
    let e0 = crank::energy(&q, &qd0, &p, 0.0);
    let mut worst = 0.0f64;
    for k in 0..steps {
        let t = k as f64 * h;
        (q, u) = step::<crank::Model, 3, 2, 1, 8>(&q, &u, &p, t, h, &opts).unwrap();
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
    let a = energy_error(1e-4, 10_000);
    let b = energy_error(5e-5, 20_000);
    // Measured: 7.4e-3 and 3.7e-3.
    assert!(a < 1e-2, "energy error {a:e}");
    assert!(
        (1.7..2.3).contains(&(a / b)),
        "energy error {a:e} at h, {b:e} at h/2"
    );
}
