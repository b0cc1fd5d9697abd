//! The Stewart platform's local pivot atlas and typical health (issue "Trustworthy across
//! the whole motion"): its fixed pivot order degrades at a few percent of the regular poses
//! near the nominal one (an order problem inside one leg's block: the dependent block stays
//! well conditioned), where generation adds a chart with the same independent coordinates;
//! and its health figures are small everywhere (~0.01), which the runtime's switching
//! thresholds measure against `TYPICAL_HEALTH`. Before both, projection runs from such poses
//! took the numeric chart and kept it to the end (300 runs of 1 s from ±0.2 m / ±0.4 rad:
//! 56 % of all right-hand sides numeric; now none).

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, null_space::NullSpacePath, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions,
};
use mechgen_test_support as common;
use rand::{RngExt, SeedableRng};

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));

use stewart as m;
type M = m::Model;
const NQ: usize = m::NQ;
const NC: usize = m::NC;
const DOF: usize = m::DOF;

/// Assembled poses from the nominal one with the pose coordinates perturbed by up to
/// ±0.2 m and ±0.4 rad: `degraded` ones where the fixed pivot order's health is below
/// 1e-3, and `ordinary` others.
fn poses(degraded: usize, ordinary: usize) -> (Vec<SVector<f64, NQ>>, Vec<SVector<f64, NQ>>) {
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let (mut bad, mut good) = (Vec::new(), Vec::new());
    for _ in 0..5000 {
        if bad.len() >= degraded && good.len() >= ordinary {
            break;
        }
        let mut q0 = SVector::<f64, NQ>::from(m::NOMINAL_Q);
        for (k, &i) in m::INDEPENDENT.iter().enumerate() {
            let a = if k < 3 { 0.2 } else { 0.4 };
            q0[i] += rng.random_range(-a..a);
        }
        let Ok(asm) =
            runtime::assemble::assemble::<M, NQ, NC, DOF>(&q0, &p, 0.0, &Default::default())
        else {
            continue;
        };
        let (_, fixed) = m::null_space_fixed(&asm.q, &p, 0.0);
        if fixed < 1e-3 && bad.len() < degraded {
            bad.push(asm.q);
        } else if fixed >= 1e-3 && good.len() < ordinary {
            good.push(asm.q);
        }
    }
    (bad, good)
}

#[test]
fn generation_measured_a_typical_health_and_added_a_chart_with_the_same_coordinates() {
    // Read at run time (the generated constants are what is under test).
    let (typical, charts) = std::hint::black_box((m::TYPICAL_HEALTH, m::CHARTS.to_vec()));
    assert!(typical > 1e-3 && typical < 0.1, "{typical}");
    assert!(charts.len() >= 2, "{charts:?}");
    assert_eq!(charts[1], m::INDEPENDENT);
}

#[test]
fn where_the_fixed_order_degrades_the_same_coordinates_stay_right() {
    let p = m::Params::default();
    let (bad, _) = poses(5, 0);
    assert_eq!(bad.len(), 5, "degraded poses found");
    for q in &bad {
        let j = m::jacobian(q, &p, 0.0);
        let (_, margin) = common::null_space_error(&j, &m::null_space_fixed(q, &p, 0.0).0);
        assert!(margin > 1e-3, "the platform is regular at {q:?}");
        // The default basis, and the runtime's checked one: the atlas chart, generated code
        // (not the numeric fallback), within 1e-10 of the SVD null space.
        let (d, h) = m::null_space(q, &p, 0.0);
        let (err, _) = common::null_space_error(&j, &d);
        assert!(err <= 1e-10 && h >= 1e-3, "health {h:e}, basis {err:e} off");
        let out = runtime::null_space::null_space_checked::<M, NQ, NC, DOF>(q, &p, 0.0, 1e-4)
            .expect("checked null space");
        assert!(
            matches!(out.path, NullSpacePath::Atlas { .. }),
            "{:?}",
            out.path
        );
        let (err, _) = common::null_space_error(&j, &out.d);
        assert!(err <= 1e-10, "checked basis {err:e} off");
    }
}

#[test]
fn projection_runs_from_degraded_poses_stay_on_generated_code() {
    let p = m::Params::default();
    let (bad, good) = poses(3, 2);
    assert_eq!((bad.len(), good.len()), (3, 2));
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Dopri5Options::default()
        }),
        ..SimOptions::default()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for q0 in bad.iter().chain(&good) {
        let u0 = SVector::<f64, DOF>::from_fn(|_, _| rng.random_range(-0.5..0.5));
        let a =
            runtime::simulate::simulate_projection::<M, NQ, NC, DOF>(q0, &u0, &p, 0.0, 0.2, &opts)
                .expect("projection");
        assert_eq!(
            (a.stats.numeric_fallbacks, a.stats.partition_switches),
            (0, 0),
            "numeric right-hand sides and switches"
        );
        // A second formulation: the Lagrange route from the same state.
        let b = runtime::simulate::simulate_lagrange::<M, NQ, NC, DOF>(
            &a.q[0], &a.qd[0], &p, 0.0, 0.2, &opts,
        )
        .expect("lagrange");
        let (qa, qb) = (a.q[a.q.len() - 1], b.q[b.q.len() - 1]);
        let rel = (qa - qb).norm() / qa.norm();
        assert!(rel <= 1e-8, "projection vs Lagrange: {rel:e}");
    }
}
