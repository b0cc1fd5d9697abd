//! Runtime hardening (issues 8 and 9): bad masses, non-finite forces, off-manifold starts,
//! pivot-threshold validation, messages that name entries instead of printing vectors,
//! error chains without repeated text, NaN-proof health figures, the parity-free
//! partition guard and the partition-free Lagrange route.

mod common;

use common::*;
use mechgen_runtime::nalgebra::{SMatrix, SVector};
use mechgen_runtime::ode::Dopri5Options;
use mechgen_runtime::{
    assemble::assemble, assemble::AssemblyOptions, lagrange::lagrange_accelerations,
    null_space::null_space_checked, null_space::NullSpacePath,
    null_space::DEFAULT_PIVOT_THRESHOLD as TH, ode::Rk4Options,
    projection::projection_accelerations, simulate::simulate_lagrange,
    simulate::simulate_projection, simulate::Integrator, simulate::RankDrop, simulate::SimOptions,
    AssemblyError, Dynamics, DynamicsError, KinematicsError, Mechanism, OdeError, SimError,
};
use std::error::Error;

type S1 = SVector<f64, 1>;
type V4 = SVector<f64, 4>;

/// Every message of the `source()` chain of `e`, outermost first.
fn chain(e: &(dyn Error + 'static)) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push(s.to_string());
        cur = s.source();
    }
    out
}

/// No message of the chain contains another one (a chain printer would show it twice).
fn assert_no_repeats(msgs: &[String]) {
    for (i, a) in msgs.iter().enumerate() {
        for (j, b) in msgs.iter().enumerate() {
            if i != j {
                assert!(
                    !a.contains(b.as_str()),
                    "level {i} repeats level {j}: {msgs:#?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Two coordinates tied together, a − b = 0, with constant forces (k, k) and masses m:
// D = (1, 1), q̈ = k / m.

struct Tied;

#[derive(Clone, Copy)]
struct TiedParams {
    m: f64,
    k: f64,
}

impl Mechanism<2, 1, 1> for Tied {
    type Params = TiedParams;
    const NAME: &'static str = "tied";
    const COORD_NAMES: [&'static str; 2] = ["a", "b"];
    const INDEPENDENT: [usize; 1] = [0];
    fn nominal_q() -> V2 {
        V2::new(0.0, 0.0)
    }
    fn residual(q: &V2, _p: &TiedParams, _t: f64) -> S1 {
        S1::new(q[0] - q[1])
    }
    fn jacobian(_q: &V2, _p: &TiedParams, _t: f64) -> SMatrix<f64, 1, 2> {
        SMatrix::<f64, 1, 2>::new(1.0, -1.0)
    }
    fn jacobian_t(_q: &V2, _p: &TiedParams, _t: f64) -> S1 {
        S1::zeros()
    }
    fn null_space(_q: &V2, _p: &TiedParams, _t: f64) -> (SMatrix<f64, 2, 1>, f64) {
        (SMatrix::<f64, 2, 1>::new(1.0, 1.0), 1.0)
    }
    fn solve_dependent(_q: &V2, _p: &TiedParams, _t: f64, b: &S1) -> V2 {
        V2::new(0.0, -b[0])
    }
}

impl Dynamics<2, 1, 1> for Tied {
    fn mass_matrix(_q: &V2, p: &TiedParams, _t: f64) -> SMatrix<f64, 2, 2> {
        SMatrix::<f64, 2, 2>::identity() * p.m
    }
    fn forces(_q: &V2, _qd: &V2, p: &TiedParams, _t: f64) -> V2 {
        V2::new(p.k, p.k)
    }
    fn gamma(_q: &V2, _qd: &V2, _p: &TiedParams, _t: f64) -> S1 {
        S1::zeros()
    }
}

#[test]
fn negative_mass_is_an_error_on_both_routes() {
    // Slider mass −100: the reduced mass j1 + j2 β'² + m3 s'² is negative.
    let p = ScParams {
        m3: -100.0,
        ..ScParams::default()
    };
    let q = SliderCrank::exact(0.7, &p);
    let qd = SliderCrank::null_space(&q, &p, 0.0).0 * 2.0;
    let err = lagrange_accelerations::<SliderCrank, 3, 2, 1>(&q, &qd, &p, 0.0, None)
        .expect_err("negative mass");
    match &err {
        DynamicsError::IndefiniteMass {
            matrix,
            min_eigenvalue,
            direction,
            ..
        } => {
            assert_eq!(*matrix, "NᵀMN");
            assert!(*min_eigenvalue < 0.0);
            // The offending motion is led by the crank (D = (1, β', s')/‖·‖).
            assert_eq!(direction[0].name, Some("theta"));
        }
        other => panic!("unexpected {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("not positive definite") && msg.contains("theta (#0)"),
        "{msg}"
    );
    let err = projection_accelerations::<SliderCrank, 3, 2, 1>(&q, &S1::new(2.0), &p, 0.0, TH)
        .expect_err("negative mass");
    assert!(
        matches!(
            err,
            DynamicsError::IndefiniteMass {
                matrix: "DᵀMD", ..
            }
        ),
        "{err}"
    );
    // Zero masses everywhere: singular, not indefinite.
    let z = TiedParams { m: 0.0, k: 1.0 };
    let err = lagrange_accelerations::<Tied, 2, 1, 1>(&V2::zeros(), &V2::zeros(), &z, 0.0, None)
        .expect_err("zero mass");
    assert!(
        matches!(err, DynamicsError::SingularAugmented { .. }),
        "{err}"
    );
    // NaN mass: non-finite, naming the entry.
    let n = TiedParams {
        m: f64::NAN,
        k: 1.0,
    };
    let err = lagrange_accelerations::<Tied, 2, 1, 1>(&V2::zeros(), &V2::zeros(), &n, 0.0, None)
        .expect_err("NaN mass");
    assert_eq!(
        err.to_string(),
        "non-finite mass matrix at t = 0: a (#0) = NaN, b (#1) = NaN"
    );
}

#[test]
fn huge_forces_are_reported_as_non_finite_not_singular() {
    // k = 1e308, m = 0.5: q̈ = 2e308 overflows; D^T f = 2e308 overflows.
    let p = TiedParams { m: 0.5, k: 1e308 };
    let err = lagrange_accelerations::<Tied, 2, 1, 1>(&V2::zeros(), &V2::zeros(), &p, 0.0, None)
        .expect_err("overflow");
    assert_eq!(
        err.to_string(),
        "non-finite accelerations at t = 0: a (#0) = inf, b (#1) = inf"
    );
    let err = projection_accelerations::<Tied, 2, 1, 1>(&V2::zeros(), &S1::zeros(), &p, 0.0, TH)
        .expect_err("overflow");
    assert!(
        matches!(&err, DynamicsError::NonFinite { entries, .. } if entries.len() == 2),
        "{err}"
    );
    assert!(err.to_string().starts_with("non-finite"), "{err}");
    // NaN forces: named.
    let p = TiedParams {
        m: 1.0,
        k: f64::NAN,
    };
    let err = lagrange_accelerations::<Tied, 2, 1, 1>(&V2::zeros(), &V2::zeros(), &p, 0.5, None)
        .expect_err("NaN forces");
    assert_eq!(
        err.to_string(),
        "non-finite forces at t = 0.5: a (#0) = NaN, b (#1) = NaN"
    );
}

#[test]
fn unprojected_lagrange_rejects_an_off_manifold_start() {
    let p = PendParams::default();
    let free = SimOptions {
        project: false,
        ..SimOptions::default()
    };
    // Position off by 1e-3 (|C| = 2.0e-3).
    let q0 = V2::new(0.6, -0.8 - 1e-3);
    let err = simulate_lagrange::<Pendulum, 2, 1, 1>(&q0, &V2::zeros(), &p, 0.0, 1.0, &free)
        .expect_err("off manifold");
    match &err {
        SimError::OffManifold {
            residual_norm,
            worst,
            ..
        } => {
            assert!((residual_norm - 1.601e-3).abs() < 1e-9, "{residual_norm}");
            assert_eq!(worst[0].index, 0);
        }
        other => panic!("unexpected {other}"),
    }
    // Consistent position, inconsistent velocity (radial).
    let q0 = V2::new(0.6, -0.8);
    let err = simulate_lagrange::<Pendulum, 2, 1, 1>(&q0, &V2::new(0.6, -0.8), &p, 0.0, 1.0, &free)
        .expect_err("radial velocity");
    let radial = match err {
        SimError::OffManifold {
            velocity_residual_norm,
            ..
        } => velocity_residual_norm,
        _ => panic!("expected OffManifold, got {err}"),
    };
    assert!((radial - 2.0).abs() < 1e-12, "{err}");
    // A consistent start runs.
    simulate_lagrange::<Pendulum, 2, 1, 1>(&q0, &V2::new(0.8, 0.6), &p, 0.0, 0.1, &free)
        .expect("consistent start");
}

#[test]
fn pivot_thresholds_are_validated() {
    let p = ScParams::default();
    let q = SliderCrank::exact(0.3, &p);
    for bad in [f64::NAN, -1e-3, 1.5] {
        assert!(
            matches!(
                null_space_checked::<SliderCrank, 3, 2, 1>(&q, &p, 0.0, bad),
                Err(KinematicsError::InvalidOptions(_))
            ),
            "{bad}"
        );
        let opts = AssemblyOptions {
            pivot_threshold: bad,
            ..AssemblyOptions::default()
        };
        assert!(matches!(
            assemble::<SliderCrank, 3, 2, 1>(&q, &p, 0.0, &opts),
            Err(AssemblyError::InvalidOptions(_))
        ));
        let sim = SimOptions {
            pivot_threshold: bad,
            ..SimOptions::default()
        };
        assert!(matches!(
            simulate_projection::<SliderCrank, 3, 2, 1>(&q, &S1::new(1.0), &p, 0.0, 0.1, &sim),
            Err(SimError::InvalidInput(_))
        ));
        assert!(matches!(
            simulate_lagrange::<SliderCrank, 3, 2, 1>(&q, &V3::zeros(), &p, 0.0, 0.1, &sim),
            Err(SimError::InvalidInput(_))
        ));
    }
}

#[test]
fn messages_name_entries_and_keep_the_state_in_fields() {
    let p = PendParams::default();
    let q = V2::new(0.6, -0.8);
    let err = projection_accelerations::<MasslessPendulum, 2, 1, 1>(&q, &S1::new(1.0), &p, 0.5, TH)
        .expect_err("DᵀMD = 0");
    let msg = err.to_string();
    // D = (1, 0.75)/‖·‖: x first.
    assert_eq!(
        msg,
        "reduced mass matrix DᵀMD is singular at t = 0.5: a motion allowed by the constraints \
         has no inertia, largest components x (#0) = 8.000e-1, y (#1) = 6.000e-1"
    );
    assert!(
        matches!(err, DynamicsError::SingularReducedMass { ref q, .. } if q == &vec![0.6, -0.8])
    );
    // Assembly from an unreachable independent value: the equation is named, q kept.
    let err =
        assemble::<Pendulum, 2, 1, 1>(&V2::new(1.5, -0.8), &p, 0.0, &AssemblyOptions::default())
            .expect_err("|x| > L");
    let msg = err.to_string();
    assert!(msg.contains("largest residuals: equation 0 = "), "{msg}");
    assert!(msg.len() < 250, "{msg}");
    match err {
        AssemblyError::Unreachable { q, .. } => assert_eq!(q[0], 1.5),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn error_chains_do_not_repeat_text() {
    let p = PendParams::default();
    // Initial assembly fails: SimError::Assembly → AssemblyError.
    let err = simulate_projection::<Pendulum, 2, 1, 1>(
        &V2::new(1.5, -0.8),
        &S1::zeros(),
        &p,
        0.0,
        1.0,
        &SimOptions::default(),
    )
    .expect_err("unreachable");
    let msgs = chain(&err);
    assert_eq!(msgs.len(), 2, "{msgs:#?}");
    assert_eq!(msgs[0], "projection onto C = 0 at t = 0 failed");
    assert_no_repeats(&msgs);
    // OdeError::System → DynamicsError::Kinematics (transparent) → nothing below.
    let inner = DynamicsError::Kinematics(KinematicsError::NonFinite {
        what: "jacobian",
        t: 0.25,
    });
    let ode = OdeError::System {
        t: 0.25,
        source: inner.clone(),
    };
    let msgs = chain(&ode);
    assert_eq!(
        msgs,
        vec![
            "the system failed at t = 0.25".to_string(),
            "non-finite value in jacobian at t = 0.25".to_string()
        ]
    );
    assert_no_repeats(&msgs);
    let msgs = chain(&SimError::Dynamics(inner));
    assert_eq!(
        msgs,
        vec!["non-finite value in jacobian at t = 0.25".to_string()]
    );
}

// ---------------------------------------------------------------------------------------
// A model whose generated null space lies: NaN basis with health +inf.

struct Liar;

impl Mechanism<2, 1, 1> for Liar {
    type Params = PendParams;
    const NAME: &'static str = "liar";
    const COORD_NAMES: [&'static str; 2] = ["x", "y"];
    const INDEPENDENT: [usize; 1] = [0];
    fn nominal_q() -> V2 {
        V2::new(0.6, -0.8)
    }
    fn residual(q: &V2, p: &PendParams, t: f64) -> S1 {
        Pendulum::residual(q, p, t)
    }
    fn jacobian(q: &V2, p: &PendParams, t: f64) -> SMatrix<f64, 1, 2> {
        Pendulum::jacobian(q, p, t)
    }
    fn jacobian_t(_q: &V2, _p: &PendParams, _t: f64) -> S1 {
        S1::zeros()
    }
    fn null_space(_q: &V2, _p: &PendParams, _t: f64) -> (SMatrix<f64, 2, 1>, f64) {
        (SMatrix::<f64, 2, 1>::new(1.0, f64::NAN), f64::INFINITY)
    }
    fn solve_dependent(_q: &V2, _p: &PendParams, _t: f64, _b: &S1) -> V2 {
        V2::new(0.0, f64::NAN)
    }
}

#[test]
fn nan_inputs_never_give_a_healthy_nan_basis() {
    let p = ScParams::default();
    let q = SliderCrank::exact(0.3, &p);
    let mut nan_q = q;
    nan_q[1] = f64::NAN;
    assert!(matches!(
        null_space_checked::<SliderCrank, 3, 2, 1>(&nan_q, &p, 0.0, TH),
        Err(KinematicsError::NonFinite { what: "q", .. })
    ));
    let nan_p = ScParams {
        l1: f64::NAN,
        ..ScParams::default()
    };
    // The hand-written static basis is NaN with a finite pivot (f64::min skips NaN).
    let (d, piv) = SliderCrank::null_space(&q, &nan_p, 0.0);
    assert!(d.iter().any(|x| x.is_nan()) && piv.is_finite());
    assert!(matches!(
        null_space_checked::<SliderCrank, 3, 2, 1>(&q, &nan_p, 0.0, TH),
        Err(KinematicsError::NonFinite {
            what: "jacobian",
            ..
        })
    ));
    assert!(
        projection_accelerations::<SliderCrank, 3, 2, 1>(&q, &S1::new(1.0), &nan_p, 0.0, TH)
            .is_err()
    );
    // A lying health figure (+inf with a NaN basis) is reported as 0, and the basis is the
    // numeric one.
    let pp = PendParams::default();
    let out = null_space_checked::<Liar, 2, 1, 1>(&V2::new(0.6, -0.8), &pp, 0.0, TH)
        .expect("numeric fallback");
    assert_eq!(
        out.path,
        NullSpacePath::NumericSameCoordinates {
            min_pivot: 0.0,
            lu_health: 1.0
        }
    );
    assert!((out.d[(1, 0)] - 0.75).abs() < 1e-15);
}

// ---------------------------------------------------------------------------------------
// Two Cartesian pendulums with x2 = x1 (x1 independent): det J_dep = −4 y1 y2 keeps its
// sign when both pass the horizontal together (y2 = y1), which the old det-sign guard
// missed.

struct TwinPendulum;

impl Mechanism<4, 3, 1> for TwinPendulum {
    type Params = PendParams;
    const NAME: &'static str = "twin";
    const COORD_NAMES: [&'static str; 4] = ["x1", "y1", "x2", "y2"];
    const INDEPENDENT: [usize; 1] = [0];
    fn nominal_q() -> V4 {
        V4::new(0.6, -0.8, 0.6, -0.8)
    }
    fn residual(q: &V4, p: &PendParams, _t: f64) -> V3 {
        V3::new(
            q[0] * q[0] + q[1] * q[1] - p.l * p.l,
            q[0] - q[2],
            q[2] * q[2] + q[3] * q[3] - p.l * p.l,
        )
    }
    fn jacobian(q: &V4, _p: &PendParams, _t: f64) -> SMatrix<f64, 3, 4> {
        SMatrix::<f64, 3, 4>::new(
            2.0 * q[0],
            2.0 * q[1],
            0.0,
            0.0,
            1.0,
            0.0,
            -1.0,
            0.0,
            0.0,
            0.0,
            2.0 * q[2],
            2.0 * q[3],
        )
    }
    fn jacobian_t(_q: &V4, _p: &PendParams, _t: f64) -> V3 {
        V3::zeros()
    }
    fn null_space(q: &V4, _p: &PendParams, _t: f64) -> (SMatrix<f64, 4, 1>, f64) {
        let p1 = q[1].abs() / q[0].abs().max(q[1].abs());
        let p2 = q[3].abs() / q[2].abs().max(q[3].abs());
        (
            SMatrix::<f64, 4, 1>::new(1.0, -q[0] / q[1], 1.0, -q[2] / q[3]),
            p1.min(p2),
        )
    }
    fn solve_dependent(q: &V4, _p: &PendParams, _t: f64, b: &V3) -> V4 {
        let y1 = b[0] / (2.0 * q[1]);
        let x2 = -b[1];
        let y2 = (b[2] - 2.0 * q[2] * x2) / (2.0 * q[3]);
        V4::new(0.0, y1, x2, y2)
    }
}

impl Dynamics<4, 3, 1> for TwinPendulum {
    fn mass_matrix(_q: &V4, p: &PendParams, _t: f64) -> SMatrix<f64, 4, 4> {
        SMatrix::<f64, 4, 4>::identity() * p.m
    }
    fn forces(_q: &V4, _qd: &V4, p: &PendParams, _t: f64) -> V4 {
        V4::new(0.0, -p.m * p.g, 0.0, -p.m * p.g)
    }
    fn gamma(_q: &V4, qd: &V4, _p: &PendParams, _t: f64) -> V3 {
        V3::new(
            -2.0 * (qd[0] * qd[0] + qd[1] * qd[1]),
            0.0,
            -2.0 * (qd[2] * qd[2] + qd[3] * qd[3]),
        )
    }
    fn energy(q: &V4, qd: &V4, p: &PendParams, _t: f64) -> Option<f64> {
        Some(0.5 * p.m * qd.norm_squared() + p.m * p.g * (q[1] + q[3]))
    }
}

#[test]
fn partition_guard_is_parity_free_and_lagrange_needs_no_partition() {
    let p = PendParams::default();
    let q0 = TwinPendulum::nominal_q();
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-9,
            atol: 1e-11,
            ..Default::default()
        }),
        ..Default::default()
    };
    // Over the top: both y pass 0 together near t ≈ 0.096 s. Fixed steps of 1e-2 keep
    // every stage away from y = 0 (where the right-hand side itself would fail).
    let rk4 = SimOptions {
        integrator: Integrator::Rk4(Rk4Options {
            h: 1e-2,
            ..Default::default()
        }),
        // The guard alone (switching would carry on over the top).
        partition_switching: false,
        ..Default::default()
    };
    let err = simulate_projection::<TwinPendulum, 4, 3, 1>(&q0, &S1::new(8.0), &p, 0.0, 2.0, &rk4)
        .expect_err("the double crossing is reported");
    assert!(
        matches!(err, SimError::PartitionCrossed { t_prev, t } if t_prev < t && t < 0.5),
        "{err}"
    );
    // The Lagrange route needs no partition (its projections are minimum-norm), but the
    // horizontal is a rank drop of the constraints themselves (rows (2x, 0, 0, 0),
    // (1, 0, −1, 0), (0, 0, 2x, 0): rank 2 of 3), where the branches y2 = y1 and y2 = −y1
    // meet: it reports it there.
    let qd0 = TwinPendulum::null_space(&q0, &p, 0.0).0 * 8.0;
    let err = simulate_lagrange::<TwinPendulum, 4, 3, 1>(&q0, &qd0, &p, 0.0, 2.0, &opts)
        .expect_err("a rank drop at the horizontal");
    let SimError::RankDrop {
        t,
        generic_rank,
        rank,
        ..
    } = err
    else {
        panic!("{err}");
    };
    assert!(t > 0.05 && t < 0.15, "t = {t}");
    assert_eq!((generic_rank, rank), (3, 2));
    // Opted in, it runs through and conserves energy; the single Cartesian pendulum (no
    // rank drop: one row, never zero) runs without an option.
    let cont = SimOptions {
        rank_drop: RankDrop::Continue,
        ..opts.clone()
    };
    let lag = simulate_lagrange::<TwinPendulum, 4, 3, 1>(&q0, &qd0, &p, 0.0, 2.0, &cont)
        .expect("lagrange runs over the top");
    assert!(!lag.rank_drop_times.is_empty());
    // Recorded by the projection segment that carries the route across (its chord estimate
    // of the crossing; the guard's is another chord): the same point within 1e-5 s.
    assert!(
        (lag.rank_drop_times[0] - t).abs() < 1e-5,
        "{:?}",
        lag.rank_drop_times
    );
    let de = lag.stats.energy_change.expect("energy");
    assert!(de < 1e-6, "{de:.2e}"); // E ≈ 84 J: relative 1e-8
    assert!(
        lag.stats.max_residual < 1e-8,
        "{:.2e}",
        lag.stats.max_residual
    );
    let single = simulate_lagrange::<Pendulum, 2, 1, 1>(
        &V2::new(0.6, -0.8),
        &V2::new(8.0, 6.0),
        &p,
        0.0,
        2.0,
        &opts,
    )
    .expect("single pendulum over the top");
    assert!(single.stats.energy_change.expect("energy") < 1e-6);
    // Both twins move alike.
    let qe = lag.q[1];
    assert!(
        (qe[1] - qe[3]).abs() < 1e-9 && (qe[0] - qe[2]).abs() < 1e-12,
        "{qe}"
    );
}
