//! The generated Stewart platform against independent computations.

use mechgen_test_support as common;

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));

use stewart as m;
type M = m::Model;
const NQ: usize = m::NQ;
const NC: usize = m::NC;
const DOF: usize = m::DOF;
const SOURCE: &str = include_str!("../../../examples/stewart_platform/stewart.mech");

#[test]
fn sizes() {
    assert_eq!((NQ, NC, DOF), (24, 18, 6));
}

#[test]
fn jacobian_matches_central_differences() {
    common::check_jacobian_fd::<NQ, NC, DOF, M>(&m::Params::default(), 100, 21);
}

#[test]
fn residual_matches_dag() {
    common::check_residual_against_dag::<NQ, NC, DOF, M>(
        SOURCE,
        "stewart",
        &m::Params::default(),
        100,
        21,
    );
}

#[test]
fn null_space_on_manifold() {
    let p = m::Params::default();
    let configs = common::random_configurations::<NQ, NC, DOF, M>(&p, 1000, 0.02, 21);
    common::check_null_space::<NQ, NC, DOF, M>(&p, &configs, 21);
}

use mechgen::nalgebra::{Matrix3, SMatrix, SVector, Vector3};
use mechgen::runtime::Mechanism;

fn rx(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    Matrix3::new(1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c)
}
fn ry(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    Matrix3::new(c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c)
}
fn rz(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    Matrix3::new(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)
}

/// One rigid body: (mass, principal inertia, centre of mass, rotation).
type Body = (f64, Vector3<f64>, Vector3<f64>, Matrix3<f64>);

/// The 13 bodies written again from the geometry.
fn bodies(q: &SVector<f64, NQ>, p: &m::Params) -> Vec<Body> {
    let mut out = vec![(
        p.m_platform,
        Vector3::new(p.i_platform_xy, p.i_platform_xy, p.i_platform_z),
        Vector3::new(q[0], q[1], q[2]),
        rz(q[5]) * ry(q[4]) * rx(q[3]),
    )];
    for i in 0..6 {
        let k = (i / 2) as f64;
        let s = if i % 2 == 0 { -1.0 } else { 1.0 };
        let bang = (120.0 * k + s * 15.0).to_radians();
        let base = Vector3::new(p.rb * bang.cos(), p.rb * bang.sin(), 0.0);
        let (a, b, l) = (q[6 + 3 * i], q[7 + 3 * i], q[8 + 3 * i]);
        let r = rx(a) * ry(b);
        let inertia = Vector3::new(p.i_leg, p.i_leg, 0.01 * p.i_leg);
        out.push((
            p.m_cylinder,
            inertia,
            base + r * Vector3::new(0.0, 0.0, p.c_cylinder),
            r,
        ));
        out.push((
            p.m_piston,
            inertia,
            base + r * Vector3::new(0.0, 0.0, l - p.c_piston),
            r,
        ));
    }
    out
}

/// `Σ m J_cᵀ J_c + J_ωᵀ I J_ω`, with `J_c` and the body angular-velocity Jacobian
/// `J_ω[:, k] = vee(Rᵀ ∂R/∂q_k)` by central differences.
#[test]
fn mass_matrix_matches_numeric_assembly() {
    let p = m::Params::default();
    let mut rng = common::rng(23);
    let h = 1e-6;
    for q in common::random_points(&<M as Mechanism<NQ, NC, DOF>>::nominal_q(), 100, &mut rng) {
        let mm = m::mass_matrix(&q, &p, 0.0);
        let b0 = bodies(&q, &p);
        let mut num = SMatrix::<f64, NQ, NQ>::zeros();
        for (bi, (mass, inertia, _, r)) in b0.iter().enumerate() {
            let mut jc = SMatrix::<f64, 3, NQ>::zeros();
            let mut jw = SMatrix::<f64, 3, NQ>::zeros();
            for k in 0..NQ {
                let mut qp = q;
                let mut qm = q;
                qp[k] += h;
                qm[k] -= h;
                let (bp, bm) = (&bodies(&qp, &p)[bi], &bodies(&qm, &p)[bi]);
                jc.set_column(k, &((bp.2 - bm.2) / (2.0 * h)));
                let w = r.transpose() * (bp.3 - bm.3) / (2.0 * h);
                jw.set_column(k, &Vector3::new(w[(2, 1)], w[(0, 2)], w[(1, 0)]));
            }
            num +=
                *mass * jc.transpose() * jc + jw.transpose() * Matrix3::from_diagonal(inertia) * jw;
        }
        let err = (mm - num).norm() / mm.norm();
        assert!(
            err <= 1e-8,
            "Stewart mass matrix vs numeric assembly: {err:e}"
        );
        assert_eq!(mm, mm.transpose());
        assert!(mm.symmetric_eigenvalues().min() > 0.0);
    }
}

/// The projection method and the Lagrange formulation agree on a released, displaced
/// platform (the actuator forces are generalised forces, outside `energy`, so energy is
/// not the check here), and the constraints hold at every output.
#[test]
fn projection_and_lagrange_agree() {
    use mechgen::runtime::{self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions};
    let p = m::Params::default();
    let mut q0 = SVector::<f64, NQ>::from(m::NOMINAL_Q);
    q0[2] += 0.05;
    q0[3] += 0.03;
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        ..SimOptions::default()
    };
    let a = runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        0.5,
        &opts,
    )
    .expect("projection");
    let b = runtime::simulate::simulate_lagrange::<M, NQ, NC, DOF>(
        &a.q[0], &a.qd[0], &p, 0.0, 0.5, &opts,
    )
    .expect("lagrange");
    let (qa, qb) = (a.q[a.q.len() - 1], b.q[b.q.len() - 1]);
    let rel = (qa - qb).norm() / qa.norm();
    assert!(rel <= 1e-8, "projection vs Lagrange: {rel:e}");
    for (k, q) in a.q.iter().enumerate() {
        assert!(m::residual(q, &p, a.t[k]).norm() <= 1e-11);
    }
}

/// A non-finite coordinate that the Jacobian depends on gives health 0, and a basis with a
/// non-finite entry never comes with a positive health, though the health figure's scale
/// folds each `F sin x`, `F cos x` pair of the legs' entries into `F` (the angles are
/// checked finite instead; the fold itself is checked against the unfolded sum in
/// `codegen/tests/pivot.rs`). (The platform's position is not in `C_J`: its basis stays
/// finite and healthy.)
#[test]
fn non_finite_coordinates_give_zero_health() {
    let p = m::Params::default();
    let nominal = SVector::<f64, NQ>::from_row_slice(&m::NOMINAL_Q);
    let (_, h) = m::null_space_fixed(&nominal, &p, 0.0);
    assert!(h > 1e-3, "nominal health {h}");
    let mut zeroed = 0;
    for bad in [f64::NAN, f64::INFINITY] {
        for i in 0..NQ {
            let mut q = nominal;
            q[i] = bad;
            let (d, h) = m::null_space_fixed(&q, &p, 0.0);
            let j = m::jacobian(&q, &p, 0.0);
            if !j.iter().all(|v| v.is_finite()) {
                assert_eq!(h, 0.0, "q[{i}] = {bad}: health {h}");
                zeroed += 1;
            }
            assert!(
                h == 0.0 || d.iter().all(|v| v.is_finite()),
                "q[{i}] = {bad}: health {h} beside a non-finite basis"
            );
        }
    }
    // The 3 rotation angles and the legs' 18 coordinates, twice.
    assert_eq!(zeroed, 2 * 21);
}
