//! The IFToMM benchmark problems against their independent references at the benchmark's
//! high-precision level (1e-3 on the reported quantity), in a debug build.
//!
//! Full spans where a debug build finishes in a few seconds (A03, A04 by projection);
//! shorter spans, with the same tolerance and the same integrator settings as the
//! release-mode table (`cargo run --release -p iftomm`), where it would not (A01: 50 s of
//! 2000 s; A05: 2 s of 10 s). Where a route cannot do a problem, the test asserts the
//! reported error (A02 by the Lagrange route: the rank drop at the first flat position) and README.md
//! records it.

// Release builds only: simulated spans of tens of seconds in a debug build exceed the test
// budget. CI runs them with `cargo test --release -p iftomm --test benchmarks` (.ci/run).
#![cfg(not(debug_assertions))]

use iftomm::{
    a01, a01_exact, a02_branch, a02_branch_ratio, jacobi_sn, run, Problem, Report, Route,
    RunOptions, HIGH_PRECISION,
};
use mechgen::nalgebra::Vector2;
use mechgen::runtime::{self, ode::Dopri5Options};

fn opts(problem: Problem, t_end: f64) -> RunOptions {
    RunOptions {
        t_end,
        ..RunOptions::full(problem)
    }
}

fn ok(problem: Problem, route: Route, o: &RunOptions) -> Report {
    let r = run(problem, route, o).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} by {route:?} over {} s: error {:.2e}, |E - E0| {:?}, {} steps, {:.3} s, {} rank drops passed",
        problem.label(),
        r.t_end,
        r.error,
        r.energy_change,
        r.ode.steps,
        r.wall.as_secs_f64(),
        r.rank_drops
    );
    assert_eq!(r.t_end, o.t_end);
    assert!(
        r.error <= HIGH_PRECISION,
        "{} by {route:?}: error {:e} > {HIGH_PRECISION:e}",
        problem.label(),
        r.error
    );
    r
}

#[test]
fn jacobi_sn_matches_known_values() {
    // sn(u | 0) = sin u; sn(K | m) = 1; K(1/2) = 1.854074677301372 (A&S table 17.1).
    let (s, k) = jacobi_sn(0.7, 0.0);
    assert!((s - 0.7f64.sin()).abs() < 1e-15 && (k - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
    let (s, k) = jacobi_sn(0.0, 0.5);
    assert_eq!(s, 0.0);
    assert!((k - 1.854074677301372).abs() < 1e-14, "{k}");
    let (s, _) = jacobi_sn(k, 0.5);
    assert!((s - 1.0).abs() < 1e-14, "{s}");
    // Periodic: 4K, reduced before the AGM doubling (far times stay accurate).
    let (s1, _) = jacobi_sn(0.3, 0.5);
    let (s2, _) = jacobi_sn(0.3 + 4000.0 * k, 0.5);
    assert!((s1 - s2).abs() < 1e-11, "{s1} {s2}");
}

#[test]
fn a01_exact_solution_matches_the_pendulum_ode() {
    // The elliptic-function reference against φ̈ = −(g/l) sin φ from φ = π/2 at rest,
    // integrated at rtol 1e-13 over 20 s.
    let p = a01::Params::default();
    let w2 = p.g / p.l;
    let mut rhs = |_t: f64, y: &Vector2<f64>| {
        Ok::<_, std::convert::Infallible>(Vector2::new(y[1], -w2 * y[0].sin()))
    };
    let times: Vec<f64> = (1..=40).map(|k| 0.5 * k as f64).collect();
    let sol = runtime::ode::dopri5(
        &mut rhs,
        0.0,
        Vector2::new(std::f64::consts::FRAC_PI_2, 0.0),
        &times,
        &Dopri5Options {
            rtol: 1e-13,
            atol: 1e-14,
            ..Default::default()
        },
    )
    .expect("pendulum ODE");
    let mut worst: f64 = 0.0;
    for (t, y) in sol.t.iter().zip(&sol.y) {
        let e = a01_exact(*t, &p);
        worst = worst
            .max((e[0] - p.l * y[0].sin()).abs())
            .max((e[1] + p.l * y[0].cos()).abs());
    }
    assert!(worst < 1e-9, "{worst:e}");
    let e0 = a01_exact(0.0, &p);
    assert!((e0[0] - 1.0).abs() < 1e-15 && e0[1].abs() < 1e-15, "{e0:?}");
}

#[test]
fn a01_lagrange_meets_high_precision() {
    // 50 s of the 2000 s span in debug (the release table runs all 2000 s).
    let r = ok(Problem::A01, Route::Lagrange, &opts(Problem::A01, 50.0));
    assert!(r.energy_change.expect("energy") < 1e-6);
}

#[test]
fn a01_projection_meets_high_precision_by_switching_partitions() {
    // y is independent at the start (x is at its maximum); at the lowest point y turns
    // back, x at the highest: the route switches independent coordinates there.
    let r = ok(Problem::A01, Route::Projection, &opts(Problem::A01, 50.0));
    assert!(r.energy_change.expect("energy") < 1e-6);
    // The switched partition is the pivot atlas's second chart (x independent), served by
    // its generated basis and solve: no numeric basis anywhere.
    assert!(r.partition_switches > 0, "no partition switch");
    assert_eq!(
        r.numeric_fallbacks, 0,
        "the switched partitions should be the atlas's generated chart"
    );
}

#[test]
fn a02_reference_conserves_energy() {
    // θ̈ = −c g cos θ conserves ½ T θ̇² + V sin θ with c = V/T.
    for n in [1usize, 2, 3, 40] {
        let c = a02_branch_ratio(n);
        let times: Vec<f64> = (1..=400).map(|k| 0.05 * k as f64).collect();
        let y = a02_branch(n, 9.81, &times).expect("reference");
        let e = |th: f64, w: f64| 0.5 * w * w + c * 9.81 * th.sin();
        let e0 = e(std::f64::consts::FRAC_PI_2, -1.0);
        let drift = y
            .iter()
            .map(|s| (e(s[0], s[1]) - e0).abs())
            .fold(0.0, f64::max);
        assert!(drift < 1e-9, "N = {n}: {drift:e}");
        // It turns over and over: ≥ 20 flat positions (θ ≡ 0 mod π) in 20 s.
        let passes = ((std::f64::consts::FRAC_PI_2 - y[399][0]) / std::f64::consts::PI).floor();
        assert!(passes >= 20.0, "N = {n}: {passes}");
    }
    assert!((a02_branch_ratio(1) - 1.2).abs() < 1e-15);
}

#[test]
fn a02_projection_stops_at_the_first_flat_position_with_a_rank_loss_error() {
    // θ0 = π/2 − t − …: the first flat position is at t ≈ 0.71 s for every N (the stop at
    // 0.66–0.71 s: where the chart chosen before it is no longer healthy). (N = 40: see
    // the next test.)
    // N = 2 and 3 kept switching with ever smaller steps for over a minute until the
    // crossing guard took the multiple eigenvalue of windows crossing at once (split by
    // rounding into a complex pair) as real.
    for n in [1usize, 2, 3] {
        let p = Problem::A02 { n };
        // At the flat position the constraints themselves lose rank (a bifurcation): no
        // choice of independent coordinates is healthy, and partition switching says so.
        let o = RunOptions {
            rank_drop: runtime::simulate::RankDrop::Error,
            ..opts(p, 2.0)
        };
        let e = run(p, Route::Projection, &o).expect_err("stops at flat");
        assert!(
            (e.message.contains("at t = 0.6") || e.message.contains("at t = 0.7"))
                && e.message.contains("the constraints lose rank here"),
            "N = {n}: {e}"
        );
    }
}

#[test]
fn a02_projection_with_forty_windows_returns_and_meets_the_level() {
    // Before: the route never returned (nalgebra's unbounded Schur iteration in the crossing
    // guard did not converge near t = 0.22 s). Now, at rtol 1e-8, it runs the 20 s in ~3 s
    // (release) through every flat position with one partition switch, 2.7e-4 m off the
    // branch motion (level 1e-3). (At the specification's rtol 1e-6 it ends 1.7e-2 m off.)
    let p = Problem::A02 { n: 40 };
    let o = RunOptions {
        rtol: 1e-8,
        atol: 1e-10,
        ..opts(p, 20.0)
    };
    let r = ok(p, Route::Projection, &o);
    assert!(r.error < 1e-3, "{:e}", r.error);
}

#[test]
fn a02_projection_with_forty_windows_factors_the_dependent_block_only_near_singular_charts() {
    // Issue 32, defect 1: the partition-crossing guard factored the 80 × 80 dependent block
    // (full-pivot LU) and ran a Schur decomposition of `J_dep(q₀)⁻¹ J_dep(q₁)` after every
    // accepted step, 18× the cost of the step (A02 N = 40, rtol 1e-8: 656 µs per right-hand
    // side against A03's 0.71 µs). Now it tests a step only where the chart's health at one
    // of its ends is below `GUARD_HEALTH_RATIO` of the typical health: measured 57 tests in
    // 465 accepted steps (before: one per accepted step).
    let p = Problem::A02 { n: 40 };
    let o = RunOptions {
        rtol: 1e-8,
        ..opts(p, 20.0)
    };
    let before = runtime::simulate::crossing_guard_decompositions();
    let r = run(p, Route::Projection, &o).unwrap_or_else(|e| panic!("{e}"));
    let tests = runtime::simulate::crossing_guard_decompositions() - before;
    eprintln!(
        "A02 (N = 40) at rtol 1e-8: {tests} guard decompositions in {} accepted steps, {} right-hand sides, {:.3} s",
        r.ode.steps,
        r.ode.rhs_calls,
        r.wall.as_secs_f64()
    );
    assert_eq!(r.t_end, 20.0);
    assert!(r.ode.steps > 100, "{} steps", r.ode.steps);
    assert!(
        5 * tests <= r.ode.steps,
        "{tests} guard decompositions in {} steps",
        r.ode.steps
    );
}

#[test]
fn a02_projection_with_forty_windows_at_the_harness_defaults_completes_and_meets_the_level() {
    // Issue 32, defect 2: at rtol 1e-10 (atol 1e-12, `RankDrop::Continue`: the harness's
    // defaults for A02) the run stopped at t = 18.934 s with "static relative pivot NaN" on
    // main at 8aa774d (not reproduced on this machine at that commit: it completes there
    // too). The NaN of that message was the placeholder of a numeric chart's (absent) static
    // pivot, now named as such (runtime unit test); a NaN state at the chart decisions is
    // an error (runtime unit tests). Measured: 6.7e-5 m, 1,082 steps, 0.6 s.
    let p = Problem::A02 { n: 40 };
    let o = RunOptions::full(p);
    assert_eq!((o.rtol, o.atol), (1e-10, 1e-12));
    let r = ok(p, Route::Projection, &o);
    assert!(r.error < 1e-4, "{:e}", r.error);
    assert!(r.wall.as_secs_f64() < 60.0, "{:?}", r.wall);
}

#[test]
fn a02_projection_with_forty_windows_at_rtol_1e_10_stops_located_or_meets_the_level() {
    // Before: "non-finite u at t = 10.55": after a stage met the singular chart (a flat
    // position), the later stages of the same step were built from its NaN derivative and
    // rejected as a non-finite state, instead of letting the integrator shrink the step.
    // Now the run stops at the flat position (every chart is singular there: a bifurcation,
    // which the projection route passes only with `RankDrop::Continue`; ALI3-P does too) and
    // says where and why: since the switching thresholds follow the model's typical health
    // (A02 with 40 windows: 0.091), with the rank-drop error of N = 1, 2, 3 ("no choice of
    // independent coordinates … the constraints lose rank here"); before, the step size
    // collapsed on a singular chart ("the independent coordinates do not parametrise").
    let p = Problem::A02 { n: 40 };
    let o = RunOptions {
        rtol: 1e-10,
        atol: 1e-12,
        rank_drop: runtime::simulate::RankDrop::Error,
        ..opts(p, 20.0)
    };
    // Whether a stage lands close enough to the flat position to meet its singular chart
    // depends on rounding: since the products with the mass matrix skip its structural zeros
    // (d07622b, other rounding in `Dᵀ M D`), the steps at rtol 1e-10 pass it without meeting
    // it, and the run completes on the reference branch (2.6e-6 off). Either outcome is
    // right; what must not come back is the non-finite state of before. (Since the generated
    // chart is kept near the flat positions (h-flat), the run stops at the first one,
    // t = 0.72 s, not at 10.5 s: the time is not asserted, the reason is.)
    match run(p, Route::Projection, &o) {
        Err(e) => assert!(
            e.message.contains("parametrise")
                && e.message.contains("the constraints lose rank here"),
            "{}",
            e.message
        ),
        Ok(r) => assert!(
            r.error < 1e-3,
            "completed off the branch motion: {:e}",
            r.error
        ),
    }
}

#[test]
fn a02_projection_steps_over_the_flat_positions_with_rank_drop_continue() {
    // Before: with one, two or three windows the projection route stopped at the first flat
    // position (t ≈ 0.71 s) at every tolerance: the constraints lose rank there, no chart is
    // healthy at the crossing point, and the chart was chosen there. With
    // `RankDrop::Continue` the accepted step across the point is kept and the next chart is
    // chosen past it: the full 20 s at rtol 1e-10 past 20 or 21 rank drops (flat positions),
    // within 2e-5 m of the exact branch motion at every output step (level 1e-3). With 40
    // windows (at atol 1e-12 the default stops at t = 10.55 s, see above): 2.7e-5 m, where
    // the integration crept towards one flat position and now jumps over it
    // (`runtime::simulate::JUMP_RATIO`).
    for n in [1usize, 2, 3, 40] {
        let p = Problem::A02 { n };
        let o = RunOptions {
            rtol: 1e-10,
            atol: 1e-12,
            rank_drop: runtime::simulate::RankDrop::Continue,
            ..opts(p, 20.0)
        };
        let r = ok(p, Route::Projection, &o);
        assert!(r.error < 1e-4, "N = {n}: {:e}", r.error);
        eprintln!("N = {n}: {:.2e}, {} rank drops", r.error, r.rank_drops);
        // (With 40 windows most flat positions are passed by partition switches, where the
        // chart-crossing test sees nothing: the SVD guard near singular charts records them.
        // Before it: 2 recorded of 20 passed.)
        assert!(r.rank_drops >= 10, "N = {n}: {} rank drops", r.rank_drops);
        // Energy is conserved across the passes (no jump at the points stepped over).
        let de = r.energy_change.expect("A02 has energy");
        assert!(de < 1e-3, "N = {n}: |E - E0| {de:e}");
    }
}

#[test]
fn a02_lagrange_steps_over_the_flat_positions_with_rank_drop_continue() {
    // Before: with `RankDrop::Continue` the Lagrange route passed A02 with one window but
    // ended in a step-size underflow at the first flat position with two or three (an
    // accepted state on the singular point, where the index-1 solve gives |q̈| ~ 1e8), and
    // ran for minutes with 40. Now the steps near a rank drop are handed over to the
    // projection method, which steps over the point on the branch of its independent
    // coordinates: the full 20 s at rtol 1e-10 (20 or more flat positions), within 1e-4 m
    // of the exact branch motion at every output step (measured 7.4e-7, 1.2e-5, 4.6e-7 m:
    // with two windows one flat position is passed by a jump, `runtime::simulate::JUMP_RATIO`, where
    // the integration crept towards the point). With 40 windows at atol 1e-10 and 1e-12:
    // 1.9e-5 and 3.7e-5 m (before, at atol 1e-12 the projection segments stopped at
    // t = 7.1 s, as the projection route did at 10.55 s).
    for (n, atol, tol) in [
        (1usize, 1e-12, 1e-4),
        (2, 1e-12, 1e-4),
        (3, 1e-12, 1e-4),
        (40, 1e-10, 1e-3),
        (40, 1e-12, 1e-3),
    ] {
        let p = Problem::A02 { n };
        let o = RunOptions {
            rtol: 1e-10,
            atol,
            rank_drop: runtime::simulate::RankDrop::Continue,
            ..opts(p, 20.0)
        };
        let r = ok(p, Route::Lagrange, &o);
        eprintln!(
            "N = {n}: error {:.2e}, {} rank drops, |E - E0| {:.2e}",
            r.error,
            r.rank_drops,
            r.energy_change.unwrap_or(f64::NAN)
        );
        assert!(r.error < tol, "N = {n}: {:e}", r.error);
        assert!(r.rank_drops >= 10, "N = {n}: {} rank drops", r.rank_drops);
        let de = r.energy_change.expect("A02 has energy");
        assert!(de < 100.0 * tol, "N = {n}: |E - E0| {de:e}");
    }
}

#[test]
fn a02_lagrange_meets_high_precision_up_to_the_first_flat_position() {
    // The Lagrange route needs no partition: up to 0.65 s (the first flat position is at
    // t ≈ 0.709 s for every N) it follows the parallelogram branch within 1e-3 for
    // N = 1, 2, 3, 40 at rtol 1e-10.
    for n in [1usize, 2, 3, 40] {
        ok(
            Problem::A02 { n },
            Route::Lagrange,
            &opts(Problem::A02 { n }, 0.65),
        );
    }
}

#[test]
fn a02_lagrange_stops_at_the_first_flat_position_with_a_rank_drop() {
    // Before: over the full 20 s the route completed without an error but B0 was 8.7e-3 m
    // off the branch motion at rtol 1e-6, and at rtol 1e-8 it left the parallelogram
    // branch at a flat position (B0 off by 2 m, energy conserved), silently. Now the
    // runtime reports the rank drop of the constraints (a bifurcation) at the first flat
    // position and points to ALI3-P, for every N and tolerance.
    for n in [1usize, 2, 3] {
        for (rtol, atol) in [(1e-6, 1e-8), (1e-8, 1e-10)] {
            let p = Problem::A02 { n };
            let o = RunOptions {
                rtol,
                atol,
                rank_drop: runtime::simulate::RankDrop::Error,
                ..opts(p, 20.0)
            };
            let e = run(p, Route::Lagrange, &o).expect_err("a rank drop");
            assert!(
                e.message.contains("loses rank at t = 0.7")
                    && e.message.contains("use simulate_ali3p"),
                "N = {n}, rtol {rtol:e}: {e}"
            );
        }
    }
}

#[test]
fn a03_both_routes_meet_the_test_set_reference() {
    for route in [Route::Projection, Route::Lagrange] {
        let r = ok(Problem::A03, route, &RunOptions::full(Problem::A03));
        // Far below the benchmark level: the test set's ten digits.
        assert!(r.error < 1e-8, "{:e}", r.error);
    }
}

#[test]
fn a04_projection_full_span_conserves_energy() {
    let r = ok(
        Problem::A04,
        Route::Projection,
        &RunOptions::full(Problem::A04),
    );
    assert!(r.error < 1e-7, "{:e}", r.error);
    assert!(r.max_residual < 1e-8, "{:e}", r.max_residual);
    // It moves: the first joint swings through more than a radian.
    assert!(r.q_range[0] > 1.0, "{:?}", r.q_range);
}

#[test]
fn a04_projection_at_atol_1e_14_completes_and_conserves_energy() {
    // Issue 32, defect 3: a step-size underflow at t = 4.53 s (a regular state, chart health
    // 0.34). The post-step Newton projection stopped anywhere below its tolerance (1e-12),
    // and the next step's projection moved the coordinates by what it left (5e-13) whatever
    // the step's size, more than the integrator's scale (1e-14 + 1e-12 · 0.19): every step was
    // rejected. The projection is now tightened to the integrator's scale: 1,369 steps,
    // none rejected, energy within 1.5e-11 J.
    let o = RunOptions {
        rtol: 1e-12,
        atol: 1e-14,
        ..RunOptions::full(Problem::A04)
    };
    let r = ok(Problem::A04, Route::Projection, &o);
    assert!(r.error < 1e-8, "{:e}", r.error);
    assert!(r.q_range[0] > 1.0, "{:?}", r.q_range);
}

#[test]
fn a04_lagrange_full_span_conserves_energy_in_few_steps() {
    // Before: at rtol 1e-10 the route ended in a step-size underflow at t = 1.23 s (at
    // 1e-8: 245,608 steps, 135,566 rejected, 14.7 s wall): nalgebra's SVD of the Jacobian
    // (one redundant row) returned factors missing it by up to 6e-2 at stage states 1e-12
    // off the manifold, and the accelerations jumped by up to 6e-3. Now the SVD is checked
    // (and recomputed), and a healthy generated chart serves the right-hand side.
    let r = ok(
        Problem::A04,
        Route::Lagrange,
        &RunOptions::full(Problem::A04),
    );
    assert!(r.error < 1e-8, "{:e}", r.error);
    assert!(r.ode.steps < 2_000, "{} steps", r.ode.steps);
    assert!(r.ode.rejected < 100, "{} rejected", r.ode.rejected);
}

#[test]
fn a04_lagrange_accelerations_off_the_manifold_agree_between_the_svd_and_the_chart() {
    // Stage states are off the manifold by the local error: both solves must stay within
    // a multiple of that defect of each other (before: 6e-3 at a defect of 1e-12).
    use iftomm::a04 as m;
    let p = m::Params::default();
    let q0 = mechgen::nalgebra::SVector::<f64, 5>::from(m::NOMINAL_Q);
    let sim = runtime::simulate::SimOptions {
        output_times: (1..40).map(|k| k as f64 * 0.05).collect(),
        ..runtime::simulate::SimOptions::default()
    };
    let tr = runtime::simulate::simulate_projection::<m::Model, 5, 5, 1>(
        &q0,
        &mechgen::nalgebra::SVector::zeros(),
        &p,
        0.0,
        2.0,
        &sim,
    )
    .expect("projection route");
    let mut worst: f64 = 0.0;
    for (k, &t) in tr.t.iter().enumerate() {
        for delta in [0.0, 1e-13, 1e-12, 1e-11, 1e-10, 1e-7, 1e-6] {
            for c in 0..5 {
                let mut q = tr.q[k];
                q[c] += delta;
                let svd = runtime::lagrange::lagrange_accelerations::<m::Model, 5, 5, 1>(
                    &q, &tr.qd[k], &p, t, None,
                )
                .expect("svd route");
                let runtime::lagrange::LagrangeQdd { qdd, path } =
                    runtime::lagrange::lagrange_qdd::<m::Model, 5, 5, 1>(
                        &q, &tr.qd[k], &p, t, None,
                    )
                    .expect("chart route");
                assert!(
                    path.is_some(),
                    "the chart serves the Bricard loop at t = {t}"
                );
                let scale = 1.0 + svd.qdd.amax();
                let err = (qdd - svd.qdd).amax();
                // On the manifold the two solves differ by their own rounding, amplified by
                // the loop's redundant constraint (rank 4 of 5): measured up to 4.8e-12 of
                // the scale with the forces differentiated by time and 1.2e-11 with the
                // forward recursion's (the same forces to rounding, summed in another
                // order); the defect this test guards against was 6e-3.
                assert!(
                    err <= 5e-11 * scale + 100.0 * delta * scale,
                    "t = {t}, q[{c}] + {delta:e}: {err:e}"
                );
                worst = worst.max(err);
            }
        }
    }
    eprintln!("largest difference {worst:e}");
}

#[test]
fn a05_both_routes_conserve_angular_momentum() {
    // 2 s of the 10 s span in debug (stiff: ~2,000 DOPRI5 steps per second).
    for route in [Route::Projection, Route::Lagrange] {
        let r = ok(Problem::A05, route, &opts(Problem::A05, 2.0));
        assert!(r.error < 1e-9, "{:e}", r.error);
    }
}

/// Flat positions (θ ≡ 0 mod π) the exact A02 motion passes in `[0, t_end]`.
fn a02_flat_passes(n: usize, t_end: f64) -> f64 {
    let y = a02_branch(n, 9.81, &[t_end]).expect("reference");
    ((std::f64::consts::FRAC_PI_2 - y[0][0]) / std::f64::consts::PI).floor()
}

#[test]
fn a02_ali3p_full_span_meets_high_precision_through_the_flat_positions() {
    // ALI3-P (index-3 augmented Lagrangian, trapezoidal rule, h = 2e-3) passes the flat
    // positions, where the constraints lose rank, and stays on the parallelogram branch:
    // over the full 20 s (≥ 20 flat passes) B0 is within 1e-3 m of the exact branch motion.
    assert!(a02_flat_passes(1, 20.0) >= 20.0);
    for n in [1usize, 2, 3] {
        let p = Problem::A02 { n };
        let o = opts(p, 20.0);
        assert_eq!(o.h, 2e-3);
        let r = ok(p, Route::Ali3p, &o);
        // Fixed step: 400 output intervals of 0.05 s, 25 steps each.
        assert_eq!(r.ode.steps, 10_000);
        assert_eq!(r.ode.rejected, 0);
        // The branch motion conserves energy; the fixed-step defect is reported and small.
        let de = r.energy_change.expect("A02 has an energy");
        assert!(de > 0.0 && de < 2e-3, "N = {n}: |E - E0| {de:e} J");
        assert!(r.max_residual < 1e-8, "N = {n}: |C| {:e}", r.max_residual);
    }
}

#[test]
fn a02_ali3p_n40_full_span_through_the_flat_positions() {
    // N = 40 (81 coordinates, 80 equations; the mobility jumps to 41 at the flat positions)
    // over the full 20 s (~11 s in release on 2 shared cores, README).
    let p = Problem::A02 { n: 40 };
    let passes = a02_flat_passes(40, 20.0);
    assert!(passes >= 20.0, "{passes}");
    let r = ok(p, Route::Ali3p, &opts(p, 20.0));
    assert_eq!(r.ode.steps, 10_000);
    assert!(r.max_residual < 1e-8, "|C| {:e}", r.max_residual);
}

#[test]
fn a05_ali3p_conserves_angular_momentum_with_a_tenth_of_the_steps() {
    // Stiff (k = 8e5 N/m, c = 4e4 N s/m): DOPRI5 takes 21,535 steps over 10 s at rtol 1e-8
    // whatever the tolerance; the implicit ALI3-P route takes 2,000 fixed steps of 5e-3 s
    // and conserves the angular momentum about the shaft to 1e-5 relative.
    let p = Problem::A05;
    let o = opts(p, 10.0);
    assert_eq!(o.h, 5e-3);
    let r = ok(p, Route::Ali3p, &o);
    assert_eq!(r.ode.steps, 2_000);
    let l0 = r.reference[0];
    let rel = r.error / l0.abs();
    eprintln!("A05 by ALI3-P: L_z {l0:.6} N m s, relative error {rel:.2e}");
    assert!(rel < 1e-5, "relative error {rel:e}");
}

#[test]
fn a03_a04_ali3p_full_span() {
    // Andrews (h = 1e-5) against the test set; Bricard (over-constrained: 5 equations of
    // rank 4, which the penalty formulation takes as they are) conserves energy over 10 s.
    let r = ok(Problem::A03, Route::Ali3p, &opts(Problem::A03, 0.03));
    assert_eq!(r.ode.steps, 3_000);
    let r = ok(Problem::A04, Route::Ali3p, &opts(Problem::A04, 10.0));
    assert_eq!(r.ode.steps, 10_000);
    assert!(r.error < 1e-5, "|ΔE| {:e}", r.error);
}

#[test]
fn a05_ali3p_with_step_size_control_conserves_angular_momentum() {
    // Error control at tolerance 1e-7 on the local position error and the velocity error it
    // makes (issue 32): 40,239 steps, L_z within 1e-5 N m s (measured 8.8e-7). Before, with
    // the position error alone, 2,438 steps and 6.1e-4 N m s.
    let p = Problem::A05;
    let o = RunOptions {
        ali3p_rtol: Some(1e-7),
        ..opts(p, 10.0)
    };
    let r = ok(p, Route::Ali3p, &o);
    assert!(r.error < 1e-5, "L_z off by {:e}", r.error);
    assert!(r.ode.rejected > 0, "{:?}", r.ode);
    assert!(r.ode.steps > 1_000 && r.ode.steps < 100_000, "{:?}", r.ode);
}

/// The largest rise of A05's energy above its running minimum over the outputs, relative
/// to `|E(0)|`: `max_k (E(t_k) − min_{j ≤ k} E(t_j)) / |E(0)|` (0 for an energy that never
/// rises; the damped governor's never does).
fn a05_energy_rise(out: &[iftomm::A05Output]) -> f64 {
    let e0 = out[0].energy;
    let mut low = e0;
    let mut rise: f64 = 0.0;
    for o in out {
        low = low.min(o.energy);
        rise = rise.max(o.energy - low);
    }
    rise / e0.abs()
}

#[test]
fn a05_energy_never_rises_beyond_the_tolerance_on_any_route() {
    // The flyball governor is damped: its energy (kinetic, gravity, both springs: the
    // generated energy includes the spring potentials) falls monotonically. Bound tested at
    // every output (the specification's 400 and 20,000): E(t) ≤ min_{s ≤ t} E(s) +
    // 10 rtol |E(0)| (so also E(t) ≤ E(0) + 10 rtol |E(0)|). Measured: by the projection and
    // Lagrange routes no rise at the 400 outputs at any tolerance; at 20,000 (DOPRI5's dense
    // output between steps) 4,106 rises of at most 8.6e-10 |E(0)| at rtol 1e-4. ALI3-P with
    // step-size control 0.8, 0.15, 0.2 rtol at 1e-4, 1e-6, 1e-8. At rtol = atol = 1e-10
    // ALI3-P's velocity test cannot be met in double precision (the trapezoidal velocity
    // (2/h) Δq carries a rounding of 4 ε |q| / h, above 1e-10 at the steps the stiff springs
    // need): there it must end with an error, never an answer off the bound.
    for rtol in [1e-4, 1e-6, 1e-8, 1e-10] {
        for route in [Route::Projection, Route::Lagrange, Route::Ali3p] {
            let o = RunOptions {
                rtol,
                ali3p_rtol: (route == Route::Ali3p).then_some(rtol),
                ..opts(Problem::A05, 10.0)
            };
            for outputs in [400, 20_000] {
                let out = match iftomm::a05_energies(route, &o, outputs) {
                    Ok(out) => out,
                    Err(e) if route == Route::Ali3p && rtol < 1e-8 => {
                        eprintln!("A05 by {route:?} at rtol {rtol:.0e}: {e}");
                        continue;
                    }
                    Err(e) => panic!("{e}"),
                };
                let rise = a05_energy_rise(&out);
                eprintln!(
                    "A05 by {route:?} at rtol {rtol:.0e}, {outputs} outputs: energy rise \
                     {rise:.2e} of |E(0)|"
                );
                assert!(
                    rise <= 10.0 * rtol,
                    "A05 by {route:?} at rtol {rtol:.0e}: the energy rose by {rise:.2e} of |E(0)|"
                );
            }
        }
    }
}

/// The damper lengths of A05 from `(β₁, β₂, s)`: slider side `(±0.05, 0, s)` to the rod
/// midpoint `(±0.05, 0, 1) + 0.5 (cos β, 0, −sin β)` (rotated about the shaft with it, which
/// does not change the length), written out independently of the generated model.
fn a05_damper_lengths(q: &[f64; 4]) -> [f64; 2] {
    let l = |b: f64| (0.5 * b.cos()).hypot(1.0 - q[3] - 0.5 * b.sin());
    [l(q[1]), l(q[2])]
}

#[test]
fn a05_energy_balance_matches_the_dampers_dissipation() {
    // Independent of the generated energy: E(0) − E(t) must be the work of the dampers,
    // ∫ c Σ l̇² dt (Simpson's rule over 20,000 outputs; l̇ by central differences of the
    // hand-written lengths along q̇). Checks that the energy function is the model's
    // (springs included: without their potential the balance is off by the springs'
    // energy) and that each route dissipates what the dampers dissipate.
    let c = iftomm::a05::Params::default().c;
    for route in [Route::Projection, Route::Lagrange, Route::Ali3p] {
        let o = RunOptions {
            rtol: 1e-10,
            atol: 1e-12,
            ali3p_rtol: (route == Route::Ali3p).then_some(1e-7),
            ..opts(Problem::A05, 10.0)
        };
        let out = iftomm::a05_energies(route, &o, 20_000).unwrap_or_else(|e| panic!("{e}"));
        let power: Vec<f64> = out
            .iter()
            .map(|s| {
                let eps = 1e-6;
                let shifted = |sg: f64| {
                    let q: [f64; 4] = std::array::from_fn(|i| s.q[i] + sg * eps * s.qd[i]);
                    a05_damper_lengths(&q)
                };
                let (lp, lm) = (shifted(1.0), shifted(-1.0));
                (0..2)
                    .map(|i| {
                        let ld = (lp[i] - lm[i]) / (2.0 * eps);
                        c * ld * ld
                    })
                    .sum()
            })
            .collect();
        let n = out.len() - 1;
        assert_eq!(n % 2, 0);
        let dt = out[1].t - out[0].t;
        let mut work = 0.0;
        for k in (0..n).step_by(2) {
            work += dt / 3.0 * (power[k] + 4.0 * power[k + 1] + power[k + 2]);
        }
        let lost = out[0].energy - out[n].energy;
        let rel = (lost - work).abs() / work;
        eprintln!(
            "A05 by {route:?}: E(0) − E(10) = {lost:.6e} J, dampers' work {work:.6e} J, \
             relative difference {rel:.2e}"
        );
        assert!(
            work > 0.0 && rel < 1e-2,
            "{route:?}: {lost:e} J lost, {work:e} J dissipated"
        );
    }
}

#[test]
fn a02_ali3p_adaptive_meets_high_precision() {
    // Step-size control at rtol 1e-6 (issue 32: bounding only a local position error per
    // step it completed 9.3e-2 m off the exact branch motion in 1,122 steps): within the
    // high-precision level of 1e-3 m over the full 20 s through the flat positions (measured
    // 6.3e-4 m, 17,203 steps).
    let p = Problem::A02 { n: 1 };
    let o = RunOptions {
        ali3p_rtol: Some(1e-6),
        ..opts(p, 20.0)
    };
    let r = ok(p, Route::Ali3p, &o);
    assert!(r.ode.steps > 0, "{:?}", r.ode);
}

#[test]
fn a05_angular_momentum_at_rtol_1e_4_by_both_dopri5_routes() {
    // Issue 32 reports the drift of L_z at rtol 1e-4 by the Lagrange route grown from
    // 5.5e-9 to 3.7e-7 N m s; measured at 8aa774d and now: 2.93e-9 by both routes (the same
    // steps: A05 has no constraints, both routes integrate M q̈ = f). Bound: 1e-8 N m s.
    for route in [Route::Projection, Route::Lagrange] {
        let o = RunOptions {
            rtol: 1e-4,
            ..opts(Problem::A05, 10.0)
        };
        let r = ok(Problem::A05, route, &o);
        assert!(r.error < 1e-8, "{route:?}: L_z off by {:e}", r.error);
    }
}
