//! The golden files of `mechgen-codegen` (`codegen/tests/expected/`, one small mechanism
//! per feature family) compiled against the run-time crate, and their functions checked at
//! random states against closed forms written here and central differences.

use mechgen::nalgebra::{SMatrix, SVector};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod generic_golden {
    include!("../../codegen/tests/expected/generic.rs");
}
#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod derivatives_golden {
    include!("../../codegen/tests/expected/derivatives.rs");
}
#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod outputs_golden {
    include!("../../codegen/tests/expected/outputs.rs");
}
#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod inequalities_golden {
    include!("../../codegen/tests/expected/inequalities.rs");
}
#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod f32_golden {
    include!("../../codegen/tests/expected/f32.rs");
}
#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod charts_golden {
    include!("../../codegen/tests/expected/charts.rs");
}
#[allow(dead_code)] // each golden is compiled whole; the tests call some of it
mod velocity_golden {
    include!("../../codegen/tests/expected/velocity.rs");
}

/// Random states per test.
const STATES: usize = 200;
/// Step of the central differences.
const H: f64 = 1e-6;
/// Tolerance of a central difference against an analytic derivative (relative to
/// `max(1, |value|)`): truncation `O(H²)` and rounding `O(ε/H)` are both below it.
const FD_TOL: f64 = 1e-7;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Central-difference Jacobian (`R × C`) of `f` at `x`.
fn fd<const R: usize, const C: usize>(
    f: impl Fn(&SVector<f64, C>) -> SVector<f64, R>,
    x: &SVector<f64, C>,
) -> SMatrix<f64, R, C> {
    let mut out = SMatrix::<f64, R, C>::zeros();
    for j in 0..C {
        let (mut a, mut b) = (*x, *x);
        a[j] += H;
        b[j] -= H;
        out.set_column(j, &((f(&a) - f(&b)) / (2.0 * H)));
    }
    out
}

/// `a` equals `b` entry by entry within `tol · max(1, |b|)`.
fn close<const R: usize, const C: usize>(
    what: &str,
    a: &SMatrix<f64, R, C>,
    b: &SMatrix<f64, R, C>,
    tol: f64,
) {
    for (x, y) in a.iter().zip(b.iter()) {
        assert!(
            (x - y).abs() <= tol * y.abs().max(1.0),
            "{what}: {a} differs from {b}"
        );
    }
}

#[test]
fn generic_family_equals_the_f64_functions_and_the_closed_form() {
    use generic_golden::ellipse as m;
    let mut r = rng(1);
    for _ in 0..STATES {
        let p = m::Params {
            a: r.random_range(0.5..3.0),
            b: r.random_range(0.5..3.0),
        };
        let q = SVector::<f64, 2>::new(r.random_range(-3.0..3.0), r.random_range(-3.0..3.0));
        let c = |q: &SVector<f64, 2>| {
            SVector::<f64, 1>::new((q[0] / p.a).powi(2) + (q[1] / p.b).powi(2) - 1.0)
        };
        close("residual", &m::residual(&q, &p, 0.0), &c(&q), 1e-14);
        let pv = m::generic::params::<f64>(&p);
        close(
            "generic::residual",
            &m::generic::residual::<f64>(&q, &pv, 0.0),
            &c(&q),
            1e-14,
        );
        close("jacobian", &m::jacobian(&q, &p, 0.0), &fd(c, &q), FD_TOL);
        close(
            "generic::jacobian",
            &m::generic::jacobian::<f64>(&q, &pv, 0.0),
            &m::jacobian(&q, &p, 0.0),
            1e-14,
        );
    }
}

#[test]
fn dynamics_derivatives_match_central_differences() {
    use derivatives_golden::damped_pendulum as m;
    let mut r = rng(2);
    for _ in 0..STATES {
        let p = m::Params {
            l: r.random_range(0.5..2.0),
            m: r.random_range(0.1..3.0),
            c: r.random_range(0.0..1.0),
        };
        let q = SVector::<f64, 2>::new(r.random_range(-2.0..2.0), r.random_range(-2.0..2.0));
        let qd = SVector::<f64, 2>::new(r.random_range(-3.0..3.0), r.random_range(-3.0..3.0));
        // M q̈ = f + C_Jᵀ λ with f the weight and the damping.
        let f = |qd: &SVector<f64, 2>, (mass, c): (f64, f64)| {
            SVector::<f64, 2>::new(-c * qd[0], -c * qd[1] - mass * 9.81)
        };
        close(
            "forces",
            &m::forces(&q, &qd, &p, 0.0),
            &f(&qd, (p.m, p.c)),
            1e-14,
        );
        close(
            "mass_matrix",
            &m::mass_matrix(&q, &p, 0.0),
            &(SMatrix::<f64, 2, 2>::identity() * p.m),
            1e-14,
        );
        close(
            "forces_jacobian_q",
            &m::forces_jacobian_q(&q, &qd, &p, 0.0),
            &fd(|q| m::forces(q, &qd, &p, 0.0), &q),
            FD_TOL,
        );
        close(
            "forces_jacobian_qd",
            &m::forces_jacobian_qd(&q, &qd, &p, 0.0),
            &fd(|v| f(v, (p.m, p.c)), &qd),
            FD_TOL,
        );
        // The parameters in declaration order (the documented columns): l, m, c.
        assert_eq!(m::NP, 3);
        let at = |v: &SVector<f64, 3>| f(&qd, (v[1], v[2]));
        let pv = SVector::<f64, 3>::new(p.l, p.m, p.c);
        close(
            "forces_jacobian_p",
            &m::forces_jacobian_p(&q, &qd, &p, 0.0),
            &fd(at, &pv),
            FD_TOL,
        );
    }
}

#[test]
fn outputs_and_their_jacobians_match_the_closed_form() {
    use outputs_golden::arm_on_line as m;
    let mut r = rng(3);
    let p = m::Params::default();
    let o = |q: &SVector<f64, 2>| {
        let (t1, t2) = (q[0], q[1]);
        SVector::<f64, 3>::new(
            p.a1 * t1.cos() + p.a2 * (t1 + t2).cos(),
            p.a1 * t1.sin() + p.a2 * (t1 + t2).sin(),
            t2,
        )
    };
    for _ in 0..STATES {
        let q = SVector::<f64, 2>::new(r.random_range(-1.0..1.0), r.random_range(0.2..2.5));
        close("outputs", &m::outputs(&q, &p, 0.0), &o(&q), 1e-14);
        let jo = m::output_jacobian(&q, &p, 0.0);
        close("output_jacobian", &jo, &fd(o, &q), FD_TOL);
        let (d, h) = m::null_space(&q, &p, 0.0);
        if h > 1e-3 {
            close(
                "manipulator_jacobian = output_jacobian · D",
                &m::manipulator_jacobian(&q, &p, 0.0),
                &(jo * d),
                1e-12,
            );
        }
    }
}

#[test]
fn inequalities_match_the_closed_form() {
    use inequalities_golden::ramp as m;
    let mut r = rng(4);
    for _ in 0..STATES {
        let p = m::Params {
            k: r.random_range(-2.0..2.0),
            ..m::Params::default()
        };
        let q = SVector::<f64, 2>::new(r.random_range(-3.0..3.0), r.random_range(-3.0..3.0));
        let g = |q: &SVector<f64, 2>| SVector::<f64, 2>::new(q[1] - p.k * q[0], q[1]);
        close("inequality", &m::inequality(&q, &p, 0.0), &g(&q), 1e-14);
        close(
            "inequality_jacobian",
            &m::inequality_jacobian(&q, &p, 0.0),
            &fd(g, &q),
            FD_TOL,
        );
    }
}

#[test]
fn f32_functions_match_the_f64_closed_form() {
    use f32_golden::crank32 as m;
    let mut r = rng(5);
    let p = m::Params::default();
    let (l1, l2) = (f64::from(p.l1), f64::from(p.l2));
    let c = |q: &SVector<f64, 3>| {
        SVector::<f64, 2>::new(
            l1 * q[0].cos() + l2 * q[1].sin() - q[2],
            l1 * q[0].sin() - l2 * q[1].cos(),
        )
    };
    for _ in 0..STATES {
        let q = SVector::<f64, 3>::new(
            r.random_range(-3.0..3.0),
            r.random_range(0.5..2.5),
            r.random_range(0.0..0.5),
        );
        let q32 = q.map(|v| v as f32);
        let q_back = q32.map(f64::from);
        let res = m::residual(&q32, &p, 0.0).map(f64::from);
        // f32 rounding of terms of size ≤ 0.5: a few ulps of 0.5.
        close("residual (f32)", &res, &c(&q_back), 1e-6);
        let jac = m::jacobian(&q32, &p, 0.0).map(f64::from);
        close("jacobian (f32)", &jac, &fd(c, &q_back), 1e-5);
        let (d, h) = m::null_space(&q32, &p, 0.0);
        if h > 1e-2 {
            let jd = (jac * d.map(f64::from)).norm();
            assert!(jd < 1e-5 * d.map(f64::from).norm(), "C_J D = {jd}");
        }
    }
}

#[test]
fn a_named_chart_spans_the_primary_null_space_with_its_own_identity_row() {
    use charts_golden::crank_charts as m;
    assert_eq!(m::INDEPENDENT, [0]);
    assert_eq!(m::INDEPENDENT_SLIDER, [2]);
    let mut r = rng(6);
    let p = m::Params::default();
    let mut checked = 0;
    for _ in 0..STATES {
        let q = SVector::<f64, 3>::new(
            r.random_range(-3.0..3.0),
            r.random_range(0.5..2.5),
            r.random_range(0.0..0.5),
        );
        let jac = m::jacobian(&q, &p, 0.0);
        let (d, h) = m::null_space_fixed(&q, &p, 0.0);
        let (ds, hs) = m::null_space_slider(&q, &p, 0.0);
        if h < 1e-3 || hs < 1e-3 {
            continue;
        }
        checked += 1;
        assert!((jac * ds).norm() < 1e-12 * ds.norm().max(1.0));
        assert_eq!(ds[(2, 0)], 1.0);
        // Both span the one-dimensional null space: D = D_slider · D[s].
        close("D = D_slider D[s]", &d, &(ds * d[(2, 0)]), 1e-10);
        let b = SVector::<f64, 2>::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
        let x = m::solve_dependent_slider(&q, &p, 0.0, &b);
        assert_eq!(x[2], 0.0);
        close("C_J x = b", &(jac * x), &b, 1e-10);
    }
    assert!(checked > STATES / 2, "only {checked} healthy states");
}

#[test]
fn a_velocity_constraint_is_a_jacobian_row_with_a_zero_residual() {
    use velocity_golden::sleigh as m;
    assert_eq!((m::NC, m::VELOCITY_ROWS), (1, 1));
    let mut r = rng(7);
    for _ in 0..STATES {
        let p = m::Params {
            a: r.random_range(-1.0..1.0),
            ..m::Params::default()
        };
        let q = SVector::<f64, 3>::new(
            r.random_range(-3.0..3.0),
            r.random_range(-3.0..3.0),
            r.random_range(-3.0..3.0),
        );
        assert_eq!(m::residual(&q, &p, 0.0)[0], 0.0);
        let th = q[2];
        let a = SMatrix::<f64, 1, 3>::new(-th.sin(), th.cos(), p.a);
        let jac = m::jacobian(&q, &p, 0.0);
        close("jacobian = A", &jac, &a, 1e-14);
        let (d, h) = m::null_space(&q, &p, 0.0);
        if h > 1e-3 {
            assert!((a * d).norm() < 1e-12 * d.norm().max(1.0), "A D ≠ 0");
        }
    }
}
