//! Dynamics of the body-defined slider crank against independent computations: the mass
//! matrix against a numeric assembly `Σ m Jᵀ J + I ∇φ ∇φᵀ` with finite-difference
//! Jacobians, the forces against Lagrange's equations evaluated with finite differences
//! of that mass matrix and of the potential, energy conservation, and the projection
//! method against the Lagrange-multiplier formulation.

use mechgen_test_support as common;

use mechgen::nalgebra::{SMatrix, SVector, Vector2};
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, Dynamics, Mechanism,
};
use rand::RngExt;

include!("../examples/mechanisms/slider_crank.rs");

use slider_crank as m;
type M = m::Model;
const NQ: usize = 3;
const NC: usize = 2;
const DOF: usize = 1;

/// Centre-of-mass positions and absolute angles of the three bodies, written again here
/// from the geometry (crank bar, rod bar, slider point mass).
fn bodies(q: &SVector<f64, NQ>, p: &m::Params) -> [(f64, f64, Vector2<f64>, Option<f64>); 3] {
    let (th, be, s) = (q[0], q[1], q[2]);
    let crank = Vector2::new(p.l1 * th.cos(), p.l1 * th.sin());
    let rod = Vector2::new(p.l2 * be.sin(), -p.l2 * be.cos());
    [
        (p.m1, p.m1 * p.l1 * p.l1 / 12.0, crank / 2.0, Some(th)),
        (p.m2, p.m2 * p.l2 * p.l2 / 12.0, crank + rod / 2.0, Some(be)),
        (p.m3, 0.0, Vector2::new(s, 0.0), None),
    ]
}

fn numeric_mass(q: &SVector<f64, NQ>, p: &m::Params) -> SMatrix<f64, NQ, NQ> {
    let h = 1e-6;
    let mut mm = SMatrix::<f64, NQ, NQ>::zeros();
    for b in 0..3 {
        let mut jr = SMatrix::<f64, 2, NQ>::zeros();
        let mut jphi = SMatrix::<f64, 1, NQ>::zeros();
        for k in 0..NQ {
            let mut qp = *q;
            let mut qm = *q;
            qp[k] += h;
            qm[k] -= h;
            let (bp, bm) = (bodies(&qp, p)[b], bodies(&qm, p)[b]);
            jr.set_column(k, &((bp.2 - bm.2) / (2.0 * h)));
            if let (Some(a), Some(c)) = (bp.3, bm.3) {
                jphi[(0, k)] = (a - c) / (2.0 * h);
            }
        }
        let (mass, inertia) = (bodies(q, p)[b].0, bodies(q, p)[b].1);
        mm += mass * jr.transpose() * jr + inertia * jphi.transpose() * jphi;
    }
    mm
}

fn potential(q: &SVector<f64, NQ>, p: &m::Params) -> f64 {
    bodies(q, p).iter().map(|b| b.0 * p.g * b.2.y).sum()
}

fn random_state(rng: &mut rand_chacha::ChaCha8Rng) -> (SVector<f64, NQ>, SVector<f64, NQ>) {
    let q = SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-3.0..3.0));
    let qd = SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-2.0..2.0));
    (q, qd)
}

#[test]
fn mass_matrix_matches_numeric_assembly() {
    let p = m::Params::default();
    let mut rng = common::rng(41);
    for _ in 0..100 {
        let (q, _) = random_state(&mut rng);
        let mm = m::mass_matrix(&q, &p, 0.0);
        let num = numeric_mass(&q, &p);
        let err = (mm - num).norm() / mm.norm();
        assert!(err <= 1e-8, "mass matrix vs numeric assembly: {err:e}");
        assert_eq!(mm, mm.transpose(), "symmetric");
        let eig = mm.symmetric_eigenvalues();
        assert!(eig.min() > 0.0, "positive definite: {eig:?}");
    }
}

#[test]
fn mass_nonzeros_are_the_mass_matrix_structure() {
    // The runtime's products with M read only `MASS_NONZEROS`: every other entry must be
    // exactly zero, and the list holds no entry twice and none that is always zero.
    let nonzeros = <M as Dynamics<NQ, NC, DOF>>::MASS_NONZEROS.expect("generated models list them");
    let mut sorted = nonzeros.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), nonzeros.len(), "no duplicates: {nonzeros:?}");
    let p = m::Params::default();
    let mut rng = common::rng(47);
    let mut seen = vec![false; nonzeros.len()];
    for _ in 0..200 {
        let (q, _) = random_state(&mut rng);
        let mm = m::mass_matrix(&q, &p, 0.0);
        for i in 0..NQ {
            for j in 0..NQ {
                match nonzeros.iter().position(|&e| e == (i, j)) {
                    Some(k) => seen[k] |= mm[(i, j)] != 0.0,
                    None => assert_eq!(mm[(i, j)], 0.0, "M[{i}, {j}] outside MASS_NONZEROS"),
                }
            }
        }
    }
    assert!(
        seen.iter().all(|&s| s),
        "an entry of MASS_NONZEROS is always zero: {seen:?}"
    );
}

#[test]
fn forces_match_lagranges_equations() {
    // f_i = −Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) q̇_j q̇_k − ∂V/∂q_i + Q_i.
    let p = m::Params {
        torque: 0.7,
        ..m::Params::default()
    };
    let mut rng = common::rng(42);
    let h = 1e-5;
    for _ in 0..100 {
        let (q, qd) = random_state(&mut rng);
        let f = m::forces(&q, &qd, &p, 0.0);
        let mut expect = common::lagrange_velocity_terms(|q| m::mass_matrix(q, &p, 0.0), &q, &qd);
        for i in 0..NQ {
            let mut qp = q;
            let mut qm = q;
            qp[i] += h;
            qm[i] -= h;
            expect[i] -= (potential(&qp, &p) - potential(&qm, &p)) / (2.0 * h);
        }
        expect[0] += p.torque;
        let err = (f - expect).norm() / (1.0 + expect.norm());
        assert!(err <= 1e-7, "forces {f:?} vs Lagrange {expect:?}: {err:e}");
    }
}

#[test]
fn gamma_matches_second_derivative_of_constraints() {
    // C_J q̈ = γ along any path with q̈ = 0: γ = −d²C/ds² along q(s) = q + s q̇.
    let p = m::Params::default();
    let mut rng = common::rng(43);
    let h = 1e-4;
    for _ in 0..100 {
        let (q, qd) = random_state(&mut rng);
        let g = m::gamma(&q, &qd, &p, 0.0);
        let c = |s: f64| m::residual(&(q + s * qd), &p, 0.0);
        let d2 = (c(h) - 2.0 * c(0.0) + c(-h)) / (h * h);
        let err = (g + d2).norm() / (1.0 + g.norm());
        assert!(err <= 1e-5, "gamma {g:?} vs −C'' {d2:?}");
    }
}

fn conservative_run() -> (runtime::simulate::Trajectory<NQ, NC>, m::Params) {
    let p = m::Params::default();
    let q0 = <M as Mechanism<NQ, NC, DOF>>::nominal_q();
    let u0 = SVector::<f64, DOF>::new(2.0);
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        output_times: (1..100).map(|k| k as f64 * 0.1).collect(),
        ..SimOptions::default()
    };
    let traj =
        runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(&q0, &u0, &p, 0.0, 10.0, &opts)
            .expect("simulation runs");
    (traj, p)
}

#[test]
fn conservative_slider_crank_conserves_energy() {
    let (traj, p) = conservative_run();
    let e0 = m::energy(&traj.q[0], &traj.qd[0], &p, 0.0);
    let scale = e0.abs().max(1e-3);
    let mut drift: f64 = 0.0;
    for (k, (q, qd)) in traj.q.iter().zip(&traj.qd).enumerate() {
        let r = m::residual(q, &p, traj.t[k]).norm();
        assert!(r <= 1e-12, "constraint residual {r:e} at t = {}", traj.t[k]);
        drift = drift.max((m::energy(q, qd, &p, traj.t[k]) - e0).abs() / scale);
    }
    println!("relative energy drift over 10 s: {drift:e}");
    assert!(drift <= 1e-8, "relative energy drift {drift:e}");
    assert_eq!(traj.t.len(), 101);
}

#[test]
fn projection_and_lagrange_agree() {
    let p = m::Params {
        torque: 0.3,
        ..m::Params::default()
    };
    let q0 = <M as Mechanism<NQ, NC, DOF>>::nominal_q();
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-11,
            atol: 1e-13,
            ..Dopri5Options::default()
        }),
        ..SimOptions::default()
    };
    let u0 = SVector::<f64, DOF>::new(1.0);
    let a = runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(&q0, &u0, &p, 0.0, 2.0, &opts)
        .expect("projection");
    let qd0 = a.qd[0];
    let b =
        runtime::simulate::simulate_lagrange::<M, NQ, NC, DOF>(&a.q[0], &qd0, &p, 0.0, 2.0, &opts)
            .expect("lagrange");
    let (qa, qb) = (
        a.q.last().copied().unwrap_or_default(),
        b.q.last().copied().unwrap_or_default(),
    );
    let err = (qa - qb).norm() / qa.norm();
    assert!(err <= 1e-8, "projection {qa:?} vs Lagrange {qb:?}: {err:e}");
    let _ = <M as Dynamics<NQ, NC, DOF>>::mass_matrix;
}

/// A non-finite mass or force parameter: the projection right-hand side refuses it and names
/// the term it reached (the mass matrix before the forces), as the up-front checks did
/// before they moved to the error path (the mass matrix's and forces' values decide here
/// which is expected, computed by the generated functions themselves).
#[test]
fn non_finite_parameters_name_the_mass_matrix_or_the_forces() {
    let q = <M as Mechanism<NQ, NC, DOF>>::nominal_q();
    let u = SVector::<f64, DOF>::new(1.0);
    type Setter = fn(&mut m::Params, f64);
    let setters: [(&str, Setter); 5] = [
        ("m1", |p, v| p.m1 = v),
        ("m2", |p, v| p.m2 = v),
        ("m3", |p, v| p.m3 = v),
        ("g", |p, v| p.g = v),
        ("torque", |p, v| p.torque = v),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (name, set) in setters {
        for bad in [f64::NAN, f64::INFINITY] {
            let mut p = m::Params::default();
            set(&mut p, bad);
            let mass = <M as Dynamics<NQ, NC, DOF>>::mass_matrix(&q, &p, 0.0);
            let qd = <M as Mechanism<NQ, NC, DOF>>::null_space(&q, &p, 0.0).0 * u;
            let f = <M as Dynamics<NQ, NC, DOF>>::forces(&q, &qd, &p, 0.0);
            let expected = if mass.iter().any(|x| !x.is_finite()) {
                "mass matrix"
            } else {
                assert!(f.iter().any(|x| !x.is_finite()), "{name} = {bad}: {f:?}");
                "forces"
            };
            let r = runtime::projection::projection_accelerations::<M, NQ, NC, DOF>(
                &q,
                &u,
                &p,
                0.0,
                runtime::null_space::DEFAULT_PIVOT_THRESHOLD,
            );
            match r {
                Err(runtime::DynamicsError::NonFinite { what, .. }) => {
                    assert_eq!(what, expected, "{name} = {bad}")
                }
                other => panic!("{name} = {bad}: {other:?}"),
            }
            seen.insert(expected);
        }
    }
    // Both diagnoses are exercised.
    assert_eq!(seen.len(), 2, "{seen:?}");
}
