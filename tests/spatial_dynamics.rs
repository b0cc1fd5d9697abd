//! Dynamics of a spatial body against independent computations: an asymmetric rigid
//! body on a spherical joint (six coordinates: centre of mass and z-y-x Euler angles;
//! three constraints), under gravity. The mass matrix is checked against a numeric
//! assembly `m JᵀJ + Wᵀ I W` (Jacobians and the body angular velocity `Rᵀ ∂R/∂q` by
//! finite differences), the forces against Lagrange's equations evaluated with finite
//! differences of that mass matrix and of the potential, and a free spin under gravity
//! against energy conservation — the gyroscopic terms `ω × Iω` all enter. Last, a body whose
//! mass and inertia vary with q and t (the path through Lagrange's equations of the energy).

use mechgen_test_support as common;

use mechgen::nalgebra::{Matrix3, SMatrix, SVector, Vector3};
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, Dynamics, Mechanism,
};
use rand::RngExt;

mechgen::mechanism! {
    /// A rigid body hanging from a spherical joint at body point (0, 0, l).
    pub mod top {
        param m = 2.0;
        param i1 = 0.1;
        param i2 = 0.2;
        param i3 = 0.3;
        param l = 0.5;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        coord z = -0.5;
        coord phi = 0.3;
        coord theta = 0.2;
        coord psi = 0.1;
        independent phi, theta, psi;
        let pos = vec3(x, y, z);
        let rot = rot_z(psi) * rot_y(theta) * rot_x(phi);
        constraint pos + rot * vec3(0.0, 0.0, l) == vec3(0.0, 0.0, 0.0);
        body top { mass = m, inertia = vec3(i1, i2, i3), com = pos, rotation = rot }
        gravity = vec3(0.0, 0.0, -g);
    }
}

type M = top::Model;
const NQ: usize = 6;
const NC: usize = 3;
const DOF: usize = 3;

fn rot(q: &SVector<f64, NQ>) -> Matrix3<f64> {
    let (phi, theta, psi) = (q[3], q[4], q[5]);
    let rx = Matrix3::new(
        1.0,
        0.0,
        0.0,
        0.0,
        phi.cos(),
        -phi.sin(),
        0.0,
        phi.sin(),
        phi.cos(),
    );
    let ry = Matrix3::new(
        theta.cos(),
        0.0,
        theta.sin(),
        0.0,
        1.0,
        0.0,
        -theta.sin(),
        0.0,
        theta.cos(),
    );
    let rz = Matrix3::new(
        psi.cos(),
        -psi.sin(),
        0.0,
        psi.sin(),
        psi.cos(),
        0.0,
        0.0,
        0.0,
        1.0,
    );
    rz * ry * rx
}

fn numeric_mass(q: &SVector<f64, NQ>, p: &top::Params) -> SMatrix<f64, NQ, NQ> {
    let h = 1e-6;
    let r = rot(q);
    let inertia = Matrix3::from_diagonal(&Vector3::new(p.i1, p.i2, p.i3));
    let mut jv = SMatrix::<f64, 3, NQ>::zeros();
    let mut jw = SMatrix::<f64, 3, NQ>::zeros();
    for k in 0..NQ {
        let (mut qp, mut qm) = (*q, *q);
        qp[k] += h;
        qm[k] -= h;
        for c in 0..3 {
            jv[(c, k)] = (qp[c] - qm[c]) / (2.0 * h);
        }
        let w = r.transpose() * (rot(&qp) - rot(&qm)) / (2.0 * h);
        jw.set_column(k, &Vector3::new(w[(2, 1)], w[(0, 2)], w[(1, 0)]));
    }
    p.m * jv.transpose() * jv + jw.transpose() * inertia * jw
}

fn random_state(rng: &mut rand_chacha::ChaCha8Rng) -> (SVector<f64, NQ>, SVector<f64, NQ>) {
    let mut q = SVector::<f64, NQ>::zeros();
    let mut qd = SVector::<f64, NQ>::zeros();
    for k in 0..NQ {
        // Euler angles away from gimbal lock (|theta| < 1).
        q[k] = rng.random_range(-1.0..1.0);
        qd[k] = rng.random_range(-3.0..3.0);
    }
    (q, qd)
}

#[test]
fn spatial_mass_matrix_matches_numeric_assembly() {
    let p = top::Params::default();
    let mut rng = common::rng(7);
    for _ in 0..100 {
        let (q, _) = random_state(&mut rng);
        let mm = top::mass_matrix(&q, &p, 0.0);
        let num = numeric_mass(&q, &p);
        let err = (mm - num).norm() / mm.norm();
        assert!(err <= 1e-8, "mass matrix off by {err:e}");
        assert!((mm - mm.transpose()).norm() == 0.0, "symmetric");
        assert!(mm.cholesky().is_some(), "positive definite");
    }
}

#[test]
fn spatial_forces_match_lagranges_equations() {
    // f_i = −Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) q̇_j q̇_k − ∂V/∂q_i, V = m g z.
    let p = top::Params::default();
    let mut rng = common::rng(8);
    for _ in 0..100 {
        let (q, qd) = random_state(&mut rng);
        let f = top::forces(&q, &qd, &p, 0.0);
        let mut expect = common::lagrange_velocity_terms(|q| top::mass_matrix(q, &p, 0.0), &q, &qd);
        expect[2] -= p.m * p.g;
        let err = (f - expect).norm() / (1.0 + expect.norm());
        assert!(err <= 1e-7, "forces {f:?} vs Lagrange {expect:?}: {err:e}");
    }
}

#[test]
fn spinning_top_conserves_energy() {
    let p = top::Params::default();
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        output_times: (1..30).map(|k| k as f64 * 0.1).collect(),
        ..SimOptions::default()
    };
    let q0 = <M as Mechanism<NQ, NC, DOF>>::nominal_q();
    // A fast spin about the body's third axis plus a tumble.
    let u0 = SVector::<f64, DOF>::new(1.0, -0.5, 8.0);
    let traj =
        runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(&q0, &u0, &p, 0.0, 3.0, &opts)
            .expect("simulation runs");
    let e0 = <M as Dynamics<NQ, NC, DOF>>::energy(&traj.q[0], &traj.qd[0], &p, 0.0)
        .expect("a body model has an energy");
    let scale = e0.abs().max(1e-3);
    let mut drift: f64 = 0.0;
    for (k, (q, qd)) in traj.q.iter().zip(&traj.qd).enumerate() {
        let r = top::residual(q, &p, traj.t[k]).norm();
        assert!(r <= 1e-12, "constraint residual {r:e} at t = {}", traj.t[k]);
        drift = drift.max((top::energy(q, qd, &p, traj.t[k]) - e0).abs() / scale);
    }
    println!("relative energy drift over 3 s: {drift:e}");
    assert!(drift <= 1e-8, "relative energy drift {drift:e}");
}

mechgen::mechanism! {
    /// A planar pendulum bob whose mass varies in time (and with the angle of a second,
    /// free coordinate): its dynamics go through Lagrange's equations of the energy.
    pub mod varying {
        param m = 2.0;
        param l = 1.5;
        param g = 9.81;
        coord x = 1.5;
        coord y = 0.0;
        coord w = 0.3;
        constraint x * x + y * y == l * l;
        body bob { mass = m * (1.0 + 0.5 * sin(t)) * (1.2 + cos(w)), com = vec2(x, y) }
        body wheel { mass = m, inertia = 0.1 * m * (1.0 + 0.2 * t), com = vec2(x + 0.0 * w, y), angle = w }
        gravity = vec2(0.0, -g);
    }
}

#[test]
fn varying_mass_forces_match_lagranges_equations() {
    // With M(q, t): f_i = −Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) q̇_j q̇_k − Σ_j ∂M_ij/∂t q̇_j − ∂V/∂q_i,
    // V = m_bob(q, t) g y + m g y.
    let p = varying::Params::default();
    let mut rng = common::rng(9);
    let h = 1e-5;
    for _ in 0..100 {
        let q = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-1.5..1.5));
        let qd = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-2.0..2.0));
        let t: f64 = rng.random_range(0.0..3.0);
        let f = varying::forces(&q, &qd, &p, t);
        let mut expect =
            common::lagrange_velocity_terms(|q| varying::mass_matrix(q, &p, t), &q, &qd);
        let dmdt =
            (varying::mass_matrix(&q, &p, t + h) - varying::mass_matrix(&q, &p, t - h)) / (2.0 * h);
        expect -= dmdt * qd;
        let potential = |q: &SVector<f64, 3>| {
            let m_bob = p.m * (1.0 + 0.5 * t.sin()) * (1.2 + q[2].cos());
            (m_bob + p.m) * p.g * q[1]
        };
        for i in 0..3 {
            let (mut qp, mut qm) = (q, q);
            qp[i] += h;
            qm[i] -= h;
            expect[i] -= (potential(&qp) - potential(&qm)) / (2.0 * h);
        }
        let err = (f - expect).norm() / (1.0 + expect.norm());
        assert!(err <= 1e-7, "forces {f:?} vs Lagrange {expect:?}: {err:e}");
    }
}
