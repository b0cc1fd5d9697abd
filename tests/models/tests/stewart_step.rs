//! Exact step Jacobians of the Stewart platform (`#![generic]` family through
//! `Builder::generic`): `runtime::step::step_jacobians` against Richardson-extrapolated central
//! differences of the step at 100 random states, relative 1e-7 per block (see
//! `mechgen_test_support::step`).

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));

use mechgen::runtime::step::StepMethod;
use rand::SeedableRng;

#[test]
fn stewart_step_jacobians_equal_central_differences() {
    use stewart as m;
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let worst = mechgen_test_support::step::check_step_jacobians::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&mut rng, &p, 100, 0.05, 0.5, 1e-3, 1e-7);
    eprintln!("Stewart: worst relative difference {worst:e}");
}

#[test]
fn stewart_rk4_symbolic_step_jacobians_equal_the_dual_number_ones() {
    // The RK4 step's Jacobian chained through its four stages from the generated
    // derivatives against dual numbers through the same step, 100 random states.
    let worst = symbolic_against_dual(StepMethod::Rk4, 8, 0.05, 100);
    eprintln!("Stewart RK4: symbolic vs dual worst relative difference {worst:e}");
}

#[test]
fn stewart_symbolic_step_jacobians_equal_the_dual_number_ones() {
    // The state blocks composed from the generated derivatives (`#![derivatives]` through
    // `Builder::derivatives`) against dual numbers through the step, 100 random states.
    let worst = symbolic_against_dual(StepMethod::SemiImplicitEuler, 6, 0.05, 100);
    eprintln!("Stewart: symbolic vs dual worst relative difference {worst:e}");
}

#[test]
fn stewart_weighted_derivatives_equal_the_matrix_reductions() {
    // The reductions `step_jacobians_symbolic` composes the step's Jacobian from (six
    // weight columns, column-major weight symbols) against the generated matrices they
    // replace, at 30 random points near the nominal: `Wᵀ ∂(f − M b)/∂p`,
    // `Wᵀ ∂(γ − C_J b)/∂p`, row `j` of `∂(W_jᵀ C_J B_j)/∂p`, `Wᵀ ∂(f − M b)/∂q`, `Wᵀ ∂f/∂q̇`,
    // `Wᵀ ∂γ/∂q`, `Wᵀ ∂γ/∂q̇`, their fused forms (with `Wᵀ ∂(γ − C_J b)/∂p`, and `Wᵀ ∂(f − M b)/∂q`,
    // `Wᵀ ∂f/∂q̇`, `Wᵀ ∂(f − M b)/∂p` from one body), row `j` of `wᵀ ∂γ/∂q̇(B_j)`, and `−S ∂C/∂p`.
    use mechgen::nalgebra::{SMatrix, SVector};
    use rand::RngExt;
    use stewart as m;
    const NQ: usize = m::NQ;
    const NC: usize = m::NC;
    const DOF: usize = m::DOF;
    let p = m::Params::default();
    let q0 = <m::Model as mechgen::runtime::Mechanism<NQ, NC, DOF>>::nominal_q();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut r = |s: f64| rng.random_range(-s..s);
    let close = |a: &dyn std::ops::Deref<Target = [f64]>, b: &[f64], what: &str| {
        let scale = b.iter().fold(1.0f64, |m, x| m.max(x.abs()));
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * scale,
                "{what}[{k}]: weighted {x} vs matrix {y}"
            );
        }
    };
    for _ in 0..30 {
        let q = q0 + SVector::<f64, NQ>::from_fn(|_, _| r(0.05));
        let qd = SVector::<f64, NQ>::from_fn(|_, _| r(1.0));
        let b = SVector::<f64, NQ>::from_fn(|_, _| r(1.0));
        let bs = SMatrix::<f64, NQ, DOF>::from_fn(|_, _| r(1.0));
        let wq = SMatrix::<f64, NQ, DOF>::from_fn(|_, _| r(1.0));
        let wc = SMatrix::<f64, NC, DOF>::from_fn(|_, _| r(1.0));
        let dyn_w = m::dynamics_vjp_p(&q, &qd, &p, 0.0, &b, &wq);
        let dyn_m = wq.tr_mul(&m::dynamics_jacobian_p(&q, &qd, &p, 0.0, &b));
        close(&dyn_w.as_slice(), dyn_m.as_slice(), "dynamics_vjp_p");
        let acc_w = m::acceleration_vjp_p(&q, &qd, &p, 0.0, &b, &wc);
        let acc_m = wc.tr_mul(&m::acceleration_jacobian_p(&q, &qd, &p, 0.0, &b));
        close(&acc_w.as_slice(), acc_m.as_slice(), "acceleration_vjp_p");
        let jac_w = m::jacobian_vjp_p(&q, &p, 0.0, &bs, &wc);
        for j in 0..DOF {
            let mj = m::jacobian_times_jacobian_p(&q, &p, 0.0, &bs.column(j).into_owned());
            let row = wc.column(j).tr_mul(&mj);
            let got: Vec<f64> = jac_w.row(j).iter().copied().collect();
            close(&got.as_slice(), row.as_slice(), "jacobian_vjp_p");
        }
        // With respect to q and q̇.
        let dq_w = m::dynamics_vjp_q(&q, &qd, &p, 0.0, &b, &wq);
        let dq_m = wq.tr_mul(&m::dynamics_jacobian_q(&q, &qd, &p, 0.0, &b));
        close(&dq_w.as_slice(), dq_m.as_slice(), "dynamics_vjp_q");
        let fqd_w = m::forces_vjp_qd(&q, &qd, &p, 0.0, &wq);
        let fqd_m = wq.tr_mul(&m::forces_jacobian_qd(&q, &qd, &p, 0.0));
        close(&fqd_w.as_slice(), fqd_m.as_slice(), "forces_vjp_qd");
        let gq_w = m::gamma_vjp_q(&q, &qd, &p, 0.0, &wc);
        let gq_m = wc.tr_mul(&m::gamma_jacobian_q(&q, &qd, &p, 0.0));
        close(&gq_w.as_slice(), gq_m.as_slice(), "gamma_vjp_q");
        let gqd_w = m::gamma_vjp_qd(&q, &qd, &p, 0.0, &wc);
        let gqd_m = wc.tr_mul(&m::gamma_jacobian_qd(&q, &qd, &p, 0.0));
        close(&gqd_w.as_slice(), gqd_m.as_slice(), "gamma_vjp_qd");
        // The fused form: the three reductions by one set of weights from one body.
        let mut fused = [mechgen::nalgebra::SMatrix::<f64, DOF, NQ>::zeros(); 3];
        {
            let [o0, o1, o2] = &mut fused;
            m::gamma_reductions_into(&q, &qd, &p, 0.0, &b, &wc, o0, o1, o2);
        }
        let singles = [gq_w, gqd_w, m::gamma_vjp_qd(&q, &b, &p, 0.0, &wc)];
        for (x, y) in fused.iter().zip(&singles) {
            close(&x.as_slice(), y.as_slice(), "gamma_reductions");
        }
        // With the parameter reduction by the same weights (`gamma_reductions_p`), and the
        // reductions by `NQ`-row weights from one body (`dynamics_reductions`, `_p`): each
        // part against the separate generated function (itself checked against the matrix
        // above).
        let mut fused_p = [mechgen::nalgebra::SMatrix::<f64, DOF, NQ>::zeros(); 3];
        let mut fused_pp = SMatrix::<f64, DOF, { m::generic::NP }>::zeros();
        {
            let [o0, o1, o2] = &mut fused_p;
            m::gamma_reductions_p_into(&q, &qd, &p, 0.0, &b, &wc, o0, o1, o2, &mut fused_pp);
        }
        for (x, y) in fused_p.iter().zip(&singles) {
            close(&x.as_slice(), y.as_slice(), "gamma_reductions_p");
        }
        close(
            &fused_pp.as_slice(),
            acc_w.as_slice(),
            "gamma_reductions_p (∂/∂p)",
        );
        let mut dy = [mechgen::nalgebra::SMatrix::<f64, DOF, NQ>::zeros(); 2];
        {
            let [o0, o1] = &mut dy;
            m::dynamics_reductions_into(&q, &qd, &p, 0.0, &b, &wq, o0, o1);
        }
        close(
            &dy[0].as_slice(),
            dq_w.as_slice(),
            "dynamics_reductions (∂/∂q)",
        );
        close(
            &dy[1].as_slice(),
            fqd_w.as_slice(),
            "dynamics_reductions (∂/∂q̇)",
        );
        let mut dy_p = [mechgen::nalgebra::SMatrix::<f64, DOF, NQ>::zeros(); 2];
        let mut dy_pp = SMatrix::<f64, DOF, { m::generic::NP }>::zeros();
        {
            let [o0, o1] = &mut dy_p;
            m::dynamics_reductions_p_into(&q, &qd, &p, 0.0, &b, &wq, o0, o1, &mut dy_pp);
        }
        close(
            &dy_p[0].as_slice(),
            dq_w.as_slice(),
            "dynamics_reductions_p (∂/∂q)",
        );
        close(
            &dy_p[1].as_slice(),
            fqd_w.as_slice(),
            "dynamics_reductions_p (∂/∂q̇)",
        );
        close(
            &dy_pp.as_slice(),
            dyn_w.as_slice(),
            "dynamics_reductions_p (∂/∂p)",
        );
        // The Stewart platform's constraints are time-independent: `γ` is quadratic in `q̇`,
        // so the Hessian applied to `B_j` is `∂γ/∂q̇` taken at `B_j`.
        let w1 = wc.column(0).into_owned();
        let hqd = m::gamma_hessian_qd(&q, &qd, &p, 0.0, &bs, &w1);
        for j in 0..DOF {
            let mj = m::gamma_jacobian_qd(&q, &bs.column(j).into_owned(), &p, 0.0);
            let row = w1.tr_mul(&mj);
            let got: Vec<f64> = hqd.row(j).iter().copied().collect();
            close(&got.as_slice(), row.as_slice(), "gamma_hessian_qd");
        }
        let dep = m::dependent_jacobian_p(&q, &p, 0.0);
        let prod = -(m::dependent_solve_matrix(&q, &p, 0.0) * m::residual_jacobian_p(&q, &p, 0.0));
        close(&dep.as_slice(), prod.as_slice(), "dependent_jacobian_p");
    }
}

#[test]
fn stewart_symbolic_step_jacobians_hold_at_small_angles() {
    // Near the nominal pose, where the platform's angles are zero: the derivative bodies are
    // taken of `f` and `M` in trigonometric normal form (`sin² x` written `1 − cos² x`), which
    // loses the relative accuracy of a term that is itself tiny at small angles. The blocks
    // must still equal the dual-number ones to 1e-10 of their norm, Euler and RK4, at 50
    // states within 1e-7 rad (and m) of the nominal and at 50 within 1e-4.
    for (seed, spread) in [(11, 1e-7), (12, 1e-4)] {
        for method in [StepMethod::SemiImplicitEuler, StepMethod::Rk4] {
            let worst = symbolic_against_dual(method, seed, spread, 50);
            eprintln!("Stewart {method:?}, spread {spread:e}: worst relative difference {worst:e}");
        }
    }
}

/// `check_symbolic_step_jacobians_with` on the Stewart platform: the step's Jacobians composed
/// from the generated derivatives against dual numbers, `method`'s step (h = 1e-3), at
/// `states` random states within `spread` of the nominal pose (velocities within 0.5),
/// relative 1e-10 per block; the worst relative difference.
fn symbolic_against_dual(method: StepMethod, seed: u64, spread: f64, states: usize) -> f64 {
    use stewart as m;
    let opts = mechgen::runtime::step::StepOptions {
        method,
        ..mechgen::runtime::step::StepOptions::default()
    };
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    mechgen_test_support::step::check_symbolic_step_jacobians_with::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&opts, &mut rng, &p, states, spread, 0.5, 1e-3, 1e-10)
}
