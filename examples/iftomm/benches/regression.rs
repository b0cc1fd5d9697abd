//! The runtime's regression benchmark (issue 32): every IFToMM problem over its full span by
//! the default route (`runtime::simulate`) and by the projection route alone, at one
//! tolerance, with each run's cost per right-hand side set beside the cost of a bare
//! projection right-hand side of the same problem measured in the same run. A guard or a
//! hand-over that costs many right-hand sides per step shows as a large ratio.
//!
//! `cargo bench -p iftomm --bench regression [-- --rtol R]` (default rtol 1e-8, atol a
//! hundredth of it). Prints a Markdown table (`bench/RESULTS.md` keeps the latest).

use std::time::Duration;

use iftomm::{bare_rhs_seconds, run, Problem, Route, RunOptions};

fn main() {
    let mut rtol = 1e-8;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--rtol" {
            match args.next().and_then(|v| v.parse().ok()) {
                Some(r) => rtol = r,
                None => {
                    eprintln!("--rtol needs a number");
                    std::process::exit(2);
                }
            }
        }
    }
    println!(
        "rtol {rtol:e}, atol {:e}; wall: best of 3 runs",
        rtol * 1e-2
    );
    println!();
    println!("| problem | route | wall (ms) | RHS | µs per RHS | bare RHS (µs) | ratio | error |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut a03 = None;
    for problem in Problem::ALL {
        let bare = match bare_rhs_seconds(problem, 2000) {
            Ok(s) => s,
            Err(e) => {
                println!(
                    "| {} | – | bare RHS failed: {e} | | | | | |",
                    problem.label()
                );
                continue;
            }
        };
        for route in [Route::Auto, Route::Projection] {
            let o = RunOptions {
                rtol,
                atol: rtol * 1e-2,
                ..RunOptions::full(problem)
            };
            let mut best: Option<(Duration, usize, f64)> = None;
            let mut failure = None;
            for _ in 0..3 {
                match run(problem, route, &o) {
                    Ok(r) => {
                        if best.is_none_or(|b| r.wall < b.0) {
                            best = Some((r.wall, r.ode.rhs_calls, r.error));
                        }
                    }
                    Err(e) => {
                        failure = Some(e.message);
                        break;
                    }
                }
            }
            match (best, failure) {
                (Some((wall, rhs, error)), None) => {
                    let per = wall.as_secs_f64() / rhs.max(1) as f64;
                    let ratio = per / bare;
                    if problem == Problem::A03 && route == Route::Projection {
                        a03 = Some(per);
                    }
                    println!(
                        "| {} | {route:?} | {:.1} | {rhs} | {:.2} | {:.3} | {ratio:.1} | {error:.2e} |",
                        problem.label(),
                        wall.as_secs_f64() * 1e3,
                        per * 1e6,
                        bare * 1e6,
                    );
                }
                (_, Some(m)) => println!(
                    "| {} | {route:?} | failed: {m} | | | | | |",
                    problem.label()
                ),
                (None, None) => {}
            }
        }
    }
    if let Some(a) = a03 {
        println!();
        println!("A03 projection: {:.3} µs per right-hand side (the issue's yardstick: A02 N = 40's per-RHS cost over this ≤ 30)", a * 1e6);
    }
}
