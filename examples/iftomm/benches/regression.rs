//! The runtime's regression benchmark (issue 32): every IFToMM problem over its full span by
//! the default route (`runtime::simulate` with its default options: Dormand–Prince 8(5,3),
//! the global error controlled), by the default of before (`Auto (local)`: one run of
//! Dormand–Prince 5(4) at the tolerance as a local tolerance, `Accuracy::Local`) and by the
//! projection route alone, at one tolerance, with each run's cost per right-hand side (all
//! runs of a controlled simulation counted) set beside the cost of a bare projection
//! right-hand side of the same problem measured in the same run. A guard or a hand-over that
//! costs many right-hand sides per step shows as a large ratio; the cost of the global-error
//! control shows as the wall time of `Auto` over `Auto (local)`.
//!
//! `cargo bench -p iftomm --bench regression [-- --rtol R] [--atol A] [--reps N]` (default
//! rtol 1e-8, atol a hundredth of it, best of 3; a small atol with a loose rtol, e.g. `--rtol
//! 1e-8 --atol 1e-12`, is where the control's reruns once crept). Prints a Markdown table
//! (`bench/RESULTS.md` keeps the latest).

use std::time::Duration;

use iftomm::{bare_rhs_seconds, run, Problem, Route, RunOptions};
use mechgen::runtime::{self, ode::Dopri5Options, simulate::Integrator};

/// The routes compared: the label, the route and whether it is the default of before.
const VARIANTS: [(&str, Route, bool); 3] = [
    ("Auto", Route::Auto, false),
    ("Auto (local)", Route::Auto, true),
    ("Projection", Route::Projection, false),
];

fn main() {
    let mut rtol = 1e-8;
    let mut atol = None;
    let mut reps = 3usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--rtol" || a == "--atol" || a == "--reps" {
            let Some(v) = args.next() else {
                eprintln!("{a} needs a number");
                std::process::exit(2);
            };
            let ok = if a == "--rtol" {
                v.parse().map(|r| rtol = r).is_ok()
            } else if a == "--atol" {
                v.parse().map(|r| atol = Some(r)).is_ok()
            } else {
                v.parse().map(|n: usize| reps = n.max(1)).is_ok()
            };
            if !ok {
                eprintln!("{a} needs a number, not {v}");
                std::process::exit(2);
            }
        }
    }
    let atol = atol.unwrap_or(rtol * 1e-2);
    println!("rtol {rtol:e}, atol {atol:e}; wall: best of {reps} runs");
    println!();
    println!("| problem | route | wall (ms) | RHS | µs per RHS | bare RHS (µs) | ratio | error | estimate (converged, runs, local rtol) |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    let mut a03 = None;
    for problem in Problem::ALL {
        let bare = match bare_rhs_seconds(problem, 2000) {
            Ok(s) => s,
            Err(e) => {
                println!(
                    "| {} | – | bare RHS failed: {e} | | | | | | |",
                    problem.label()
                );
                continue;
            }
        };
        for (label, route, before) in VARIANTS {
            let mut o = RunOptions {
                rtol,
                atol,
                ..RunOptions::full(problem)
            };
            if before {
                o.accuracy = runtime::Accuracy::Local;
                o.auto_integrator = Some(Integrator::Dopri5(Dopri5Options {
                    max_steps: 10_000_000,
                    ..Dopri5Options::default()
                }));
            }
            let mut best: Option<(Duration, usize, f64, String)> = None;
            let mut failure = None;
            for _ in 0..reps {
                match run(problem, route, &o) {
                    Ok(r) => {
                        if best.as_ref().is_none_or(|b| r.wall < b.0) {
                            let g = r.global_error.as_ref().map_or("–".to_string(), |g| {
                                format!(
                                    "{:.1e} ({}, {}, {:.0e})",
                                    g.max_abs,
                                    if g.converged { "yes" } else { "no" },
                                    g.runs,
                                    g.local_rtol
                                )
                            });
                            best = Some((r.wall, r.rhs_total, r.error, g));
                        }
                    }
                    Err(e) => {
                        failure = Some(e.message);
                        break;
                    }
                }
            }
            match (best, failure) {
                (Some((wall, rhs, error, estimate)), None) => {
                    let per = wall.as_secs_f64() / rhs.max(1) as f64;
                    let ratio = per / bare;
                    if problem == Problem::A03 && route == Route::Projection {
                        a03 = Some(per);
                    }
                    println!(
                        "| {} | {label} | {:.1} | {rhs} | {:.2} | {:.3} | {ratio:.1} | {error:.2e} | {estimate} |",
                        problem.label(),
                        wall.as_secs_f64() * 1e3,
                        per * 1e6,
                        bare * 1e6,
                    );
                }
                (_, Some(m)) => println!(
                    "| {} | {label} | failed: {m} | | | | | | |",
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
