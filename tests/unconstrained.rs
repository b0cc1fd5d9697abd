//! A model without constraints (a tree in minimal coordinates): a double pendulum by its two
//! absolute angles. `D = I`, the residual is empty, and both simulation routes run. Checked
//! against the closed-form mass matrix and forces of the double pendulum and against energy
//! conservation.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, Dynamics, Mechanism,
};

mechgen::mechanism! {
    /// Double pendulum of two point masses, by the absolute angles of its links.
    pub mod double_pendulum {
        param l1 = 1.0;
        param l2 = 0.7;
        param m1 = 1.0;
        param m2 = 0.5;
        param g = 9.81;
        coord a = 0.3;
        coord b = -0.2;
        let p1 = vec2(l1 * sin(a), -l1 * cos(a));
        let p2 = p1 + vec2(l2 * sin(b), -l2 * cos(b));
        body bob1 { mass = m1, com = p1 }
        body bob2 { mass = m2, com = p2 }
        gravity = vec2(0.0, -g);
    }
}

use double_pendulum as m;

/// The textbook equations of the double pendulum: `M(q) q̈ = f(q, q̇)`.
fn closed_form(
    q: &SVector<f64, 2>,
    qd: &SVector<f64, 2>,
    p: &m::Params,
) -> (SMatrix<f64, 2, 2>, SVector<f64, 2>) {
    let (a, b) = (q[0], q[1]);
    let c = (a - b).cos();
    let s = (a - b).sin();
    let m12 = p.m2 * p.l1 * p.l2 * c;
    let mm = SMatrix::<f64, 2, 2>::new((p.m1 + p.m2) * p.l1 * p.l1, m12, m12, p.m2 * p.l2 * p.l2);
    let f = SVector::<f64, 2>::new(
        -p.m2 * p.l1 * p.l2 * s * qd[1] * qd[1] - (p.m1 + p.m2) * p.g * p.l1 * a.sin(),
        p.m2 * p.l1 * p.l2 * s * qd[0] * qd[0] - p.m2 * p.g * p.l2 * b.sin(),
    );
    (mm, f)
}

#[test]
fn constants_and_kinematics() {
    assert_eq!((m::NQ, m::NC, m::DOF, m::RANK), (2, 0, 2, 0));
    assert_eq!(m::INDEPENDENT, [0, 1]);
    let p = m::Params::default();
    let q = SVector::<f64, 2>::new(0.4, -1.1);
    let (d, health) = m::null_space(&q, &p, 0.0);
    assert_eq!(d, SMatrix::<f64, 2, 2>::identity());
    assert_eq!(health, 1.0);
    assert_eq!(m::residual(&q, &p, 0.0).len(), 0);
    // NaN coordinates: the basis is still the identity (it does not depend on q), and the
    // health figure is 1 — the basis is right.
    let (d, _) = m::null_space(&SVector::<f64, 2>::new(f64::NAN, 0.0), &p, 0.0);
    assert_eq!(d, SMatrix::<f64, 2, 2>::identity());
}

#[test]
fn dynamics_match_the_closed_form() {
    let p = m::Params::default();
    for k in 0..50 {
        let x = k as f64 * 0.37;
        let q = SVector::<f64, 2>::new((1.3 * x).sin() * 3.0, (0.7 * x).cos() * 3.0);
        let qd = SVector::<f64, 2>::new((0.9 * x).cos() * 2.0, (1.7 * x).sin() * 2.0);
        let (mm, f) = closed_form(&q, &qd, &p);
        let mg = m::mass_matrix(&q, &p, 0.0);
        let fg = m::forces(&q, &qd, &p, 0.0);
        assert!((mg - mm).norm() <= 1e-12 * mm.norm(), "M: {mg} vs {mm}");
        assert!(
            (fg - f).norm() <= 1e-12 * (1.0 + f.norm()),
            "f: {fg} vs {f}"
        );
    }
}

#[test]
fn both_routes_conserve_energy_and_agree() {
    let p = m::Params::default();
    let q0 = SVector::<f64, 2>::new(1.2, -0.4);
    let qd0 = SVector::<f64, 2>::new(0.0, 1.5);
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        output_times: (1..20).map(|k| k as f64 * 0.25).collect(),
        ..SimOptions::default()
    };
    let e0 = m::energy(&q0, &qd0, &p, 0.0);
    let proj =
        runtime::simulate::simulate_projection::<m::Model, 2, 0, 2>(&q0, &qd0, &p, 0.0, 5.0, &opts)
            .expect("projection route");
    let lag =
        runtime::simulate::simulate_lagrange::<m::Model, 2, 0, 2>(&q0, &qd0, &p, 0.0, 5.0, &opts)
            .expect("Lagrange route");
    assert_eq!(proj.q.len(), 21);
    for k in 0..proj.q.len() {
        let e = m::energy(&proj.q[k], &proj.qd[k], &p, 0.0);
        assert!(
            (e - e0).abs() <= 1e-7 * e0.abs().max(1.0),
            "energy drift {}",
            e - e0
        );
        let dq = (proj.q[k] - lag.q[k]).norm();
        assert!(dq <= 1e-6, "routes differ by {dq} at t = {}", proj.t[k]);
    }
    // The motion is chaotic enough to be a real check: the angles moved.
    assert!((proj.q[20] - q0).norm() > 0.5);
    // The trait methods work with NC = 0.
    assert_eq!(
        <m::Model as Mechanism<2, 0, 2>>::residual(&q0, &p, 0.0).len(),
        0
    );
    let _ = <m::Model as Dynamics<2, 0, 2>>::mass_matrix(&q0, &p, 0.0);
}
