//! The Lagrange route at and near a rank loss of `C_J` (issue 8, item 5): a parallelogram
//! four-bar (A02 with N = 1) at and near its flat position, where the constraint Jacobian
//! drops from rank 2 to rank 1. One rank decision (`√ε · σ_max`), minimum-norm
//! multipliers, no singular window, accelerations equal to the exact 1-DOF motion
//! `θ̈ = −1.2 g cos θ` (cranks and coupler: thin unit rods of unit mass).
//!
//! Also here: the zero-length spring (issue 9, item 10), whose generated force must be
//! finite where its ends meet, and the runtime error for a spring of nonzero rest length
//! there (the force direction is undefined).

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, DynamicsError,
};

mechgen::mechanism! {
    /// A02, N = 1: unit cranks at x = 0 and x = 1 joined by a unit coupler; gravity.
    pub mod parallelogram {
        param g = 9.81;
        coord t1 = 1.0;
        coord t2 = 1.0;
        coord psi = 0.0;
        independent t1;
        constraint vec2(cos(t1), sin(t1)) + vec2(cos(psi), sin(psi)) == vec2(1.0 + cos(t2), sin(t2));
        body crank1 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(0.5 * cos(t1), 0.5 * sin(t1)), angle = t1 }
        body crank2 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(1.0 + 0.5 * cos(t2), 0.5 * sin(t2)), angle = t2 }
        body coupler { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(cos(t1) + 0.5 * cos(psi), sin(t1) + 0.5 * sin(psi)), angle = psi }
        gravity = vec2(0.0, -g);
    }
}

mechgen::mechanism! {
    /// A point on the x axis pulled to the origin by a spring of rest length 0.
    pub mod springs {
        param k = 50.0;
        coord x = 0.3;
        coord y = 0.0;
        constraint y == 0.0;
        body bob { mass = 1.0, com = vec2(x, y) }
        spring zero { a = vec2(0.0, 0.0), b = vec2(x, y), stiffness = k, length = 0.0 }
    }
}

mechgen::mechanism! {
    /// The same with a rest length l0.
    pub mod rest_spring {
        param k = 50.0;
        param l0 = 0.1;
        coord x = 0.3;
        coord y = 0.0;
        constraint y == 0.0;
        body bob { mass = 1.0, com = vec2(x, y) }
        spring rest { a = vec2(0.0, 0.0), b = vec2(x, y), stiffness = k, length = l0 }
    }
}

mechgen::mechanism! {
    /// A02, N = 2: unit cranks at x = 0, 1, 2 joined by two unit couplers; gravity.
    pub mod chain2 {
        param g = 9.81;
        coord t1 = 1.0;
        coord t2 = 1.0;
        coord t3 = 1.0;
        coord psi1 = 0.0;
        coord psi2 = 0.0;
        independent t1;
        constraint vec2(cos(t1), sin(t1)) + vec2(cos(psi1), sin(psi1)) == vec2(1.0 + cos(t2), sin(t2));
        constraint vec2(1.0 + cos(t2), sin(t2)) + vec2(cos(psi2), sin(psi2)) == vec2(2.0 + cos(t3), sin(t3));
        body crank1 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(0.5 * cos(t1), 0.5 * sin(t1)), angle = t1 }
        body crank2 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(1.0 + 0.5 * cos(t2), 0.5 * sin(t2)), angle = t2 }
        body crank3 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(2.0 + 0.5 * cos(t3), 0.5 * sin(t3)), angle = t3 }
        body coupler1 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(cos(t1) + 0.5 * cos(psi1), sin(t1) + 0.5 * sin(psi1)), angle = psi1 }
        body coupler2 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(1.0 + cos(t2) + 0.5 * cos(psi2), sin(t2) + 0.5 * sin(psi2)), angle = psi2 }
        gravity = vec2(0.0, -g);
    }
}

type P = parallelogram::Model;
type V3 = SVector<f64, 3>;
type V2 = SVector<f64, 2>;

/// The exact 1-DOF acceleration on the parallelogram branch.
fn exact(theta: f64, g: f64) -> f64 {
    -1.2 * g * theta.cos()
}

/// `θ(t1)` of the exact branch motion `θ̈ = −c g cos θ` from `(θ0, ω0)` (rtol 1e-13).
fn branch_end(c: f64, g: f64, th0: f64, w0: f64, t1: f64) -> f64 {
    let mut rhs =
        |_t: f64, y: &V2| Ok::<_, std::convert::Infallible>(V2::new(y[1], -c * g * y[0].cos()));
    let o = Dopri5Options {
        rtol: 1e-13,
        atol: 1e-14,
        ..Default::default()
    };
    let reference =
        runtime::ode::dopri5(&mut rhs, 0.0, V2::new(th0, w0), &[t1], &o).expect("exact motion");
    reference.y[reference.y.len() - 1][0]
}

#[test]
fn accelerations_at_and_near_the_flat_position_match_the_exact_motion() {
    let p = parallelogram::Params::default();
    let mut grid = vec![0.0];
    for e in [
        1e-9, 3e-9, 1e-8, 1.5e-8, 3e-8, 1e-7, 3e-7, 1e-6, 1e-4, 1e-2, 0.5,
    ] {
        grid.push(e);
        grid.push(-e);
    }
    let pi = std::f64::consts::PI;
    let near_pi: Vec<f64> = grid.iter().map(|&e| pi + e).collect();
    grid.extend(near_pi);
    let mut worst: f64 = 0.0;
    let mut ranks = [0usize; 3];
    for &theta in &grid {
        for omega in [0.0, 2.0, -7.0] {
            let q = V3::new(theta, theta, 0.0);
            let qd = V3::new(omega, omega, 0.0);
            let a = runtime::lagrange::lagrange_accelerations::<P, 3, 2, 1>(&q, &qd, &p, 0.0, None)
                .unwrap_or_else(|e| panic!("θ = {theta:e}: {e}"));
            ranks[a.rank] += 1;
            let want = V3::new(exact(theta, p.g), exact(theta, p.g), 0.0);
            let err = (a.qdd - want).amax();
            worst = worst.max(err);
            assert!(
                err <= 1e-8 * want.amax().max(1.0),
                "θ = {theta:e}, ω = {omega}: q̈ = {:?}, exact {:?} (rank {})",
                a.qdd,
                want,
                a.rank
            );
            // Minimum-norm multipliers: M q̈ = f + C_Jᵀ λ with λ in the range of C_J.
            let m = parallelogram::mass_matrix(&q, &p, 0.0);
            let f = parallelogram::forces(&q, &qd, &p, 0.0);
            let j = parallelogram::jacobian(&q, &p, 0.0);
            // Within √ε of flat the dropped row's force σ_s λ_s = O(θ) is not carried by λ.
            let res = (m * a.qdd - f - j.transpose() * a.lambda).amax();
            // With the row kept, rounding is amplified by 1/σ_s ≈ 1/|sin θ|.
            let bound = if a.rank == 2 {
                1e-15 / theta.sin().abs() + 1e-13
            } else {
                20.0 * theta.sin().abs() + 1e-13
            };
            assert!(res <= bound * (1.0 + f.amax()), "θ = {theta:e}: {res:e}");
        }
    }
    // Both decisions occur on this grid: rank 1 at (and within √ε of) the flat positions.
    assert!(ranks[1] > 0 && ranks[2] > 0, "{ranks:?}");
    eprintln!("flat-position grid: worst |q̈ − exact| = {worst:.2e}, ranks {ranks:?}");
}

#[test]
fn off_manifold_stage_states_near_flat_are_not_singular() {
    // Stage-like states: |C| ≈ 1e-6 near the flat position. No error, and q̈ within the
    // size of the defect (amplified by at most 1/√ε) of the exact value.
    let p = parallelogram::Params::default();
    for theta in [0.0, 1e-9, 1e-8, 1e-7, 1e-6] {
        let q = V3::new(theta, theta + 1e-6, -1e-6);
        let qd = V3::new(2.0, 2.0 + 1e-6, 0.0);
        let c = parallelogram::residual(&q, &p, 0.0).norm();
        assert!(c > 5e-7 && c < 3e-6, "{c:e}");
        let a = runtime::lagrange::lagrange_accelerations::<P, 3, 2, 1>(&q, &qd, &p, 0.0, None)
            .unwrap_or_else(|e| panic!("θ = {theta:e}: {e}"));
        assert!(a.qdd.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn lagrange_route_runs_through_ten_flat_passes() {
    // Every tolerance: before, at 1e-8 and 1e-10 a stage landed within ~1e-7 rad of a flat
    // position off the manifold, where the index-1 right-hand side is stiff (its
    // off-manifold part grows like |γ|/σ_s², σ_s ∝ θ) and the step size underflowed; now
    // the steps near a rank drop go by the projection method (`RankDrop::Continue`).
    // From the cranks upright with ω = −12 rad/s the parallelogram turns over and over,
    // passing θ = 0 and θ = π (flat) ten times in 2.5 s; the exact motion solves
    // θ̈ = −1.2 g cos θ. The projection route stops at the first flat position (its
    // independent crank no longer parametrises the mechanism there); the Lagrange route,
    // which needs no partition after the initial assembly, runs through.
    let p = parallelogram::Params::default();
    let pi = std::f64::consts::PI;
    let (th0, w0, t1) = (pi / 2.0, -12.0, 2.5);
    for (rtol, tol) in [(1e-6, 1e-3), (1e-8, 1e-5), (1e-10, 1e-7)] {
        let opts = SimOptions {
            integrator: Integrator::Dopri5(Dopri5Options {
                rtol,
                atol: 1e-2 * rtol,
                ..Default::default()
            }),
            // By default the route stops at a rank drop (a bifurcation: SimError::RankDrop);
            // here it is asked to go on, and the rank drops are recorded.
            rank_drop: runtime::simulate::RankDrop::Continue,
            ..Default::default()
        };
        let q0 = V3::new(th0, th0, 0.0);
        let qd0 = V3::new(w0, w0, 0.0);
        let lag = runtime::simulate::simulate_lagrange::<P, 3, 2, 1>(&q0, &qd0, &p, 0.0, t1, &opts)
            .expect("Lagrange route through the flat positions");
        assert!(
            lag.rank_drop_times.len() >= 10,
            "rank drops recorded at {:?}",
            lag.rank_drop_times
        );
        let th_end = branch_end(1.2, p.g, th0, w0, t1);
        let passes = ((th0 - th_end) / pi).floor() as i64;
        assert!(passes >= 10, "{passes} flat passes");
        let qe = lag.q[lag.q.len() - 1];
        let err = (qe[0] - th_end)
            .abs()
            .max((qe[1] - th_end).abs())
            .max(qe[2].abs());
        eprintln!(
            "{passes} flat passes: |θ − exact| = {err:.2e}, energy change {:.2e}, max |C| {:.2e}, steps {}",
            lag.stats.energy_change.unwrap_or(f64::NAN),
            lag.stats.max_residual,
            lag.stats.ode.steps
        );
        assert!(err < tol, "rtol {rtol:e}: {err:e}");
        assert!(lag.stats.energy_change.expect("energy") < tol);
        assert!(
            lag.stats.max_residual < 1e-9,
            "{:e}",
            lag.stats.max_residual
        );
    }
}

#[test]
fn zero_length_spring_force_is_finite_where_its_ends_meet() {
    let p = springs::Params::default();
    let at = |x: f64| springs::forces(&V2::new(x, 0.0), &V2::zeros(), &p, 0.0);
    assert_eq!(at(0.3), V2::new(-50.0 * 0.3, 0.0));
    assert_eq!(at(0.0), V2::new(0.0, 0.0));
    let a = runtime::lagrange::lagrange_accelerations::<springs::Model, 2, 1, 1>(
        &V2::zeros(),
        &V2::new(1.0, 0.0),
        &p,
        0.0,
        None,
    )
    .expect("finite at the meeting point");
    assert_eq!(a.qdd, V2::zeros());
    // A rest length of 0.1: the force direction at l = 0 is undefined; the runtime names
    // the non-finite entries.
    let err = runtime::lagrange::lagrange_accelerations::<rest_spring::Model, 2, 1, 1>(
        &V2::zeros(),
        &V2::new(1.0, 0.0),
        &rest_spring::Params::default(),
        0.0,
        None,
    )
    .expect_err("undefined direction");
    assert!(
        matches!(&err, DynamicsError::NonFinite { what: "forces", entries, .. } if entries[0].name == Some("x")),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("non-finite forces at t = 0: x (#0) = NaN"),
        "{err}"
    );
}

#[test]
fn two_windows_at_and_near_flat_follow_the_branch() {
    // N = 2: C_J drops from rank 4 to rank 2 at θ = 0. On the branch (all cranks θ,
    // couplers level) T = ½·3 θ̇², V = 3.5 g sin θ: θ̈ = −(7/6) g cos θ.
    type C = chain2::Model;
    let p = chain2::Params::default();
    let exact2 = |theta: f64| -7.0 / 6.0 * p.g * theta.cos();
    let mut worst: f64 = 0.0;
    for theta in [
        0.0, 1e-9, -1e-9, 3e-9, 1e-8, 3e-8, 1e-7, 3e-7, 1e-6, 1e-3, 0.4,
    ] {
        for omega in [2.0, -7.0] {
            let q = SVector::<f64, 5>::new(theta, theta, theta, 0.0, 0.0);
            let qd = SVector::<f64, 5>::new(omega, omega, omega, 0.0, 0.0);
            let a = runtime::lagrange::lagrange_accelerations::<C, 5, 4, 1>(&q, &qd, &p, 0.0, None)
                .unwrap_or_else(|e| panic!("θ = {theta:e}: {e}"));
            let want =
                SVector::<f64, 5>::new(exact2(theta), exact2(theta), exact2(theta), 0.0, 0.0);
            let err = (a.qdd - want).amax();
            worst = worst.max(err);
            assert!(
                err <= 1e-8 * want.amax(),
                "θ = {theta:e}, ω = {omega}: q̈ = {:?} (rank {}), exact {:?}",
                a.qdd,
                a.rank,
                want
            );
        }
    }
    // At rest exactly at the flat position there is no branch to follow: the released
    // linkage's accelerations (end cranks and middle crank differ), still no error.
    let q = SVector::<f64, 5>::zeros();
    let a = runtime::lagrange::lagrange_accelerations::<C, 5, 4, 1>(&q, &q, &p, 0.0, None)
        .expect("at rest at the flat position");
    assert_eq!(a.rank, 2);
    eprintln!(
        "N = 2: worst |q̈ − exact| = {worst:.2e}; at rest at flat q̈ = {:?}",
        a.qdd
    );
    assert!((a.qdd[0] - exact2(0.0)).abs() > 1e-3);
}

#[test]
fn projection_route_stops_at_the_flat_position_for_one_and_two_windows() {
    // The det-sign guard saw sin θ (N = 1) change sign but not sin² θ (N = 2); the
    // parity-free guard stops both. Fixed steps keep every stage away from θ = 0.
    let opts = SimOptions {
        integrator: Integrator::Rk4(runtime::ode::Rk4Options {
            h: 1e-2,
            ..Default::default()
        }),
        // The guard alone, without partition switching.
        partition_switching: false,
        ..Default::default()
    };
    let th0 = std::f64::consts::FRAC_PI_2;
    let u0 = SVector::<f64, 1>::new(-12.0);
    let p1 = parallelogram::Params::default();
    let e1 = runtime::simulate::simulate_projection::<P, 3, 2, 1>(
        &V3::new(th0, th0, 0.0),
        &u0,
        &p1,
        0.0,
        1.0,
        &opts,
    )
    .expect_err("N = 1 stops");
    let p2 = chain2::Params::default();
    let e2 = runtime::simulate::simulate_projection::<chain2::Model, 5, 4, 1>(
        &SVector::<f64, 5>::new(th0, th0, th0, 0.0, 0.0),
        &u0,
        &p2,
        0.0,
        1.0,
        &opts,
    )
    .expect_err("N = 2 stops");
    for (n, e) in [(1, e1), (2, e2)] {
        // θ = π/2 − 12 t reaches 0 at t ≈ 0.13 s (gravity speeds it up).
        assert!(
            matches!(e, runtime::SimError::PartitionCrossed { t_prev, t } if t_prev < 0.131 && t > 0.1 && t < 0.14),
            "N = {n}: {e}"
        );
    }
}

#[test]
fn both_routes_hold_the_branch_from_random_starts_with_rank_drop_continue() {
    // Not tuned to one start: two windows (rank 4 → 2 at every flat position) from eight
    // random crank angles and speeds (turning over or swinging), both routes with
    // `RankDrop::Continue` at rtol 1e-8 over 2 s. Every run must stay on the parallelogram
    // branch (cranks equal, couplers level) and follow its exact motion θ̈ = −(7/6) g cos θ.
    use rand::{RngExt, SeedableRng};
    type C = chain2::Model;
    let p = chain2::Params::default();
    let g = p.g;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let opts = SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-8,
            atol: 1e-10,
            ..Default::default()
        }),
        rank_drop: runtime::simulate::RankDrop::Continue,
        ..Default::default()
    };
    let t1 = 2.0;
    let mut drops = 0;
    for case in 0..8 {
        let th0: f64 = rng.random_range(-3.0..3.0);
        let w0: f64 = rng.random_range(2.0..14.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let th_end = branch_end(7.0 / 6.0, g, th0, w0, t1);
        let q0 = SVector::<f64, 5>::new(th0, th0, th0, 0.0, 0.0);
        let qd0 = SVector::<f64, 5>::new(w0, w0, w0, 0.0, 0.0);
        let lag = runtime::simulate::simulate_lagrange::<C, 5, 4, 1>(&q0, &qd0, &p, 0.0, t1, &opts)
            .unwrap_or_else(|e| panic!("case {case} (θ0 {th0}, ω0 {w0}), Lagrange: {e}"));
        let proj = runtime::simulate::simulate_projection::<C, 5, 4, 1>(
            &q0,
            &SVector::<f64, 1>::new(w0),
            &p,
            0.0,
            t1,
            &opts,
        )
        .unwrap_or_else(|e| panic!("case {case} (θ0 {th0}, ω0 {w0}), projection: {e}"));
        for (route, r) in [("Lagrange", &lag), ("projection", &proj)] {
            let q = r.q[r.q.len() - 1];
            let off_branch = (q[1] - q[0])
                .abs()
                .max((q[2] - q[0]).abs())
                .max(q[3].abs())
                .max(q[4].abs());
            let err = (q[0] - th_end).abs();
            eprintln!(
                "case {case} (θ0 {th0:.3}, ω0 {w0:.3}) {route}: |θ − exact| {err:.2e}, off the branch {off_branch:.2e}, {} rank drops",
                r.rank_drop_times.len()
            );
            assert!(off_branch < 1e-6, "case {case} {route}: {q}");
            assert!(err < 1e-5, "case {case} {route}: {err:e}");
            drops += r.rank_drop_times.len();
        }
    }
    // The starts cross flat positions (otherwise the test would not test the handover).
    assert!(drops >= 10, "{drops} rank drops in all");
}
