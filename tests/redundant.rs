//! Redundant constraints in the dynamics: a parallelogram linkage with a third, parallel
//! crank (six equations of rank five). The generated code drops the dependent equation
//! (`REDUNDANT`); both simulation routes must still run, conserve energy and agree.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, Mechanism,
};

mechgen::mechanism! {
    /// Three unit cranks at x = 0, 1, 2 carrying one coupler bar; gravity.
    pub mod parallel {
        param m = 1.0;
        param g = 9.81;
        coord t1 = 0.7;
        coord t2 = 0.7;
        coord t3 = 0.7;
        coord cx = 0.7648421872844885;
        coord cy = 0.644217687237691;
        coord psi = 0.0;
        independent t1;
        constraint vec2(cos(t1), sin(t1)) == vec2(cx, cy);
        constraint vec2(1.0 + cos(t2), sin(t2)) == vec2(cx + cos(psi), cy + sin(psi));
        constraint vec2(2.0 + cos(t3), sin(t3)) == vec2(cx + 2.0 * cos(psi), cy + 2.0 * sin(psi));
        body crank1 { mass = m, inertia = m / 12.0, com = vec2(0.5 * cos(t1), 0.5 * sin(t1)), angle = t1 }
        body crank2 { mass = m, inertia = m / 12.0, com = vec2(1.0 + 0.5 * cos(t2), 0.5 * sin(t2)), angle = t2 }
        body crank3 { mass = m, inertia = m / 12.0, com = vec2(2.0 + 0.5 * cos(t3), 0.5 * sin(t3)), angle = t3 }
        body coupler { mass = 2.0 * m, inertia = 2.0 * m / 3.0, com = vec2(cx + cos(psi), cy + sin(psi)), angle = psi }
        gravity = vec2(0.0, -g);
    }
}

type M = parallel::Model;
const NQ: usize = 6;
const NC: usize = 6;
const DOF: usize = 1;
/// End time: the probes drop one row of crank 3 for good, and the row kept loses its
/// pivot where that crank is vertical (t ≈ 0.63 s here); until then both routes run on the
/// static partition. (A fixed choice of rows cannot serve every configuration of this
/// linkage: which equation is redundant changes along the motion.)
const T_END: f64 = 0.5;

fn options() -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        output_times: (1..10).map(|k| k as f64 * 0.05).collect(),
        ..SimOptions::default()
    }
}

#[test]
fn redundant_equation_is_dropped_and_both_routes_agree() {
    assert_eq!(parallel::RANK, 5);
    assert_eq!(parallel::REDUNDANT.len(), 1);
    assert_eq!(parallel::INDEPENDENT, [0]);
    let p = parallel::Params::default();
    let q0 = <M as Mechanism<NQ, NC, DOF>>::nominal_q();
    let u0 = SVector::<f64, DOF>::new(1.5);
    let a = runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(
        &q0,
        &u0,
        &p,
        0.0,
        T_END,
        &options(),
    )
    .expect("projection route with a redundant equation");
    let e0 = parallel::energy(&a.q[0], &a.qd[0], &p, 0.0);
    let mut drift: f64 = 0.0;
    for (k, (q, qd)) in a.q.iter().zip(&a.qd).enumerate() {
        let r = parallel::residual(q, &p, a.t[k]).norm();
        assert!(r <= 1e-12, "residual {r:e} at t = {}", a.t[k]);
        drift = drift.max((parallel::energy(q, qd, &p, a.t[k]) - e0).abs() / e0.abs());
    }
    assert!(drift <= 1e-8, "relative energy drift {drift:e}");
    let b = runtime::simulate::simulate_lagrange::<M, NQ, NC, DOF>(
        &a.q[0],
        &a.qd[0],
        &p,
        0.0,
        T_END,
        &options(),
    )
    .expect("Lagrange route with a redundant equation");
    let (qa, qb) = (a.q[a.q.len() - 1], b.q[b.q.len() - 1]);
    let err = (qa - qb).norm() / qa.norm();
    assert!(err <= 1e-8, "projection {qa:?} vs Lagrange {qb:?}: {err:e}");
}

#[test]
fn lagrange_accelerations_with_a_redundant_equation() {
    // The augmented matrix is singular; the reduced solve must still satisfy both block
    // equations: M q̈ = f + C_Jᵀ λ and C_J q̈ = γ.
    let p = parallel::Params::default();
    let q = runtime::assemble::assemble::<M, NQ, NC, DOF>(
        &<M as Mechanism<NQ, NC, DOF>>::nominal_q(),
        &p,
        0.0,
        &runtime::assemble::AssemblyOptions::default(),
    )
    .expect("assembles")
    .q;
    let (d, _) = parallel::null_space(&q, &p, 0.0);
    let qd = d * SVector::<f64, DOF>::new(-0.8);
    let a = runtime::lagrange::lagrange_accelerations::<M, NQ, NC, DOF>(&q, &qd, &p, 0.0, None)
        .expect("reduced Lagrange system");
    let m = parallel::mass_matrix(&q, &p, 0.0);
    let f = parallel::forces(&q, &qd, &p, 0.0);
    let j = parallel::jacobian(&q, &p, 0.0);
    let g = parallel::gamma(&q, &qd, &p, 0.0);
    let dyn_res = (m * a.qdd - f - j.transpose() * a.lambda).norm() / (1.0 + f.norm());
    let con_res = (j * a.qdd - g).norm() / (1.0 + g.norm());
    assert!(dyn_res <= 1e-12, "M q̈ − f − C_Jᵀ λ: {dyn_res:e}");
    assert!(con_res <= 1e-12, "C_J q̈ − γ: {con_res:e}");
}
