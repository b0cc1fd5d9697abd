//! The regression net of the runtime's one entry point (issue 32): every IFToMM problem,
//! A02 with N = 1, 2, 3 and 40, over its full span through `runtime::simulate` with its
//! default options (only the tolerances and output times set), at rtol 1e-6, 1e-8, 1e-10
//! and 1e-12 (atol a hundredth of rtol), against the independent references of
//! `iftomm::run` at the benchmark's high-precision level (1e-3).
//!
//! Measured (README.md, `bench/RESULTS.md`): at rtol 1e-6 the long spans miss the level
//! although they complete — A01 (2000 s, a thousand periods: the phase error of a local
//! tolerance of 1e-6 accumulates to 2 m) and A02 (7e-3 m) — so at 1e-6 those are asserted
//! to complete, not to meet the level.

#![cfg(not(debug_assertions))]

use iftomm::{run, Problem, Route, RunOptions, HIGH_PRECISION};

fn check(problem: Problem, rtol: f64, meet: bool) {
    let o = RunOptions {
        rtol,
        atol: rtol * 1e-2,
        ..RunOptions::full(problem)
    };
    let r = run(problem, Route::Auto, &o).unwrap_or_else(|e| panic!("rtol {rtol:e}: {e}"));
    eprintln!(
        "{} at rtol {rtol:e}: error {:.2e}, {} RHS, {:.3} s, {} switches, {} rank drops",
        problem.label(),
        r.error,
        r.ode.rhs_calls,
        r.wall.as_secs_f64(),
        r.partition_switches,
        r.rank_drops
    );
    assert_eq!(r.t_end, o.t_end, "{} at rtol {rtol:e}", problem.label());
    assert!(!r.error.is_nan(), "{} at rtol {rtol:e}", problem.label());
    if meet {
        assert!(
            r.error <= HIGH_PRECISION,
            "{} at rtol {rtol:e}: error {:e} > {HIGH_PRECISION:e}",
            problem.label(),
            r.error
        );
    }
}

#[test]
fn every_problem_at_rtol_1e_6() {
    for problem in Problem::ALL {
        let long = matches!(problem, Problem::A01 | Problem::A02 { .. });
        check(problem, 1e-6, !long);
    }
}

#[test]
fn every_problem_at_rtol_1e_8() {
    for problem in Problem::ALL {
        check(problem, 1e-8, problem != Problem::A01);
    }
}

#[test]
fn every_problem_at_rtol_1e_10() {
    for problem in Problem::ALL {
        check(problem, 1e-10, true);
    }
}

#[test]
fn every_problem_at_rtol_1e_12() {
    for problem in Problem::ALL {
        check(problem, 1e-12, true);
    }
}
