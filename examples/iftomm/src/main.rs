//! Runs the IFToMM benchmark problems A01–A05 (A02 with N = 1, 2, 3, 40) by the three
//! simulation routes (projection, Lagrange, ALI3-P) over their full spans and prints a table
//! beside OpenSim 3.2's published CPU times.
//!
//! `cargo run --release -p iftomm [-- PROBLEM... [--rtol R] [--atol A] [--t-end T] [--h H]
//! [--ali3p-rtol R] [--tangent-reuse K] [--route auto|projection|lagrange|ali3p]...]`
//! (`PROBLEM`: a01, a02-1, a02-2, a02-3, a02-40, a03, a04, a05; default all; `--h`: the fixed
//! step of the ALI3-P route (its first step with `--ali3p-rtol`); `--ali3p-rtol`: ALI3-P with
//! step-size control at that tolerance; `--tangent-reuse`: steps sharing one evaluation of
//! ALI3-P's force derivatives; `--route`: the routes to run, default all four (`auto`: the runtime's one entry point, `runtime::simulate`);
//! `--rank-drop error|continue`: stop at the flat positions of A02 (the runtime's default)
//! or step over them (this harness's default for A02); `--accuracy local|estimate|control`:
//! what the tolerances bound on the `auto` route (`runtime::Accuracy`, default control);
//! `--integrator dopri5|dop853`: the `auto` route's integrator (default the runtime's)).

use iftomm::{opensim_time, run, sizes, Problem, Route, RunOptions, HIGH_PRECISION};
use mechgen::runtime;

/// Problems and routes to run and the overrides of rtol, atol, end time and ALI3-P step.
struct Args {
    problems: Vec<Problem>,
    routes: Vec<Route>,
    rtol: Option<f64>,
    atol: Option<f64>,
    t_end: Option<f64>,
    h: Option<f64>,
    ali3p_rtol: Option<f64>,
    tangent_reuse: Option<f64>,
    rank_drop: Option<runtime::simulate::RankDrop>,
    accuracy: Option<runtime::Accuracy>,
    integrator: Option<&'static str>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut problems = Vec::new();
    let mut routes = Vec::new();
    let (mut rtol, mut atol, mut t_end, mut h) = (None, None, None, None);
    let mut ali3p_rtol = None;
    let mut tangent_reuse = None;
    let mut rank_drop = None;
    let mut accuracy = None;
    let mut integrator = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<Option<f64>, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse::<f64>()
                .map(Some)
                .map_err(|e| format!("{name} {v}: {e}"))
        };
        match a.as_str() {
            "--rtol" => rtol = num("--rtol")?,
            "--atol" => atol = num("--atol")?,
            "--t-end" => t_end = num("--t-end")?,
            "--h" => h = num("--h")?,
            "--ali3p-rtol" => ali3p_rtol = num("--ali3p-rtol")?,
            "--tangent-reuse" => tangent_reuse = num("--tangent-reuse")?,
            "--rank-drop" => {
                let v = it.next().ok_or("--rank-drop needs a value")?;
                rank_drop = match v.as_str() {
                    "error" => Some(runtime::simulate::RankDrop::Error),
                    "continue" => Some(runtime::simulate::RankDrop::Continue),
                    _ => return Err(format!("unknown --rank-drop {v} (error or continue)")),
                };
            }
            "--accuracy" => {
                let v = it.next().ok_or("--accuracy needs a value")?;
                accuracy = Some(match v.as_str() {
                    "local" => runtime::Accuracy::Local,
                    "estimate" => runtime::Accuracy::Estimate,
                    "control" => runtime::Accuracy::default(),
                    _ => {
                        return Err(format!(
                            "unknown --accuracy {v} (local, estimate or control)"
                        ))
                    }
                });
            }
            "--integrator" => {
                let v = it.next().ok_or("--integrator needs a value")?;
                integrator = Some(match v.as_str() {
                    "dopri5" => "dopri5",
                    "dop853" => "dop853",
                    _ => return Err(format!("unknown --integrator {v} (dopri5 or dop853)")),
                });
            }
            "--route" => {
                let v = it.next().ok_or("--route needs a value")?;
                routes.push(match v.as_str() {
                    "auto" => Route::Auto,
                    "projection" => Route::Projection,
                    "lagrange" => Route::Lagrange,
                    "ali3p" => Route::Ali3p,
                    _ => return Err(format!("unknown route {v}")),
                });
            }
            name => {
                let p = Problem::ALL
                    .into_iter()
                    .find(|p| p.key() == name)
                    .ok_or(format!("unknown problem {name}"))?;
                problems.push(p);
            }
        }
    }
    if problems.is_empty() {
        problems = Problem::ALL.to_vec();
    }
    if routes.is_empty() {
        routes = vec![
            Route::Auto,
            Route::Projection,
            Route::Lagrange,
            Route::Ali3p,
        ];
    }
    Ok(Args {
        problems,
        routes,
        rtol,
        atol,
        t_end,
        h,
        ali3p_rtol,
        tangent_reuse,
        rank_drop,
        accuracy,
        integrator,
    })
}

/// `println!` that ends the program quietly when stdout is closed (`iftomm | head`) instead
/// of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Args {
        problems,
        routes,
        rtol,
        atol,
        t_end,
        h,
        ali3p_rtol,
        tangent_reuse,
        rank_drop,
        accuracy,
        integrator,
    } = match parse(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    out!(
        "| problem | NQ/NC/DOF | route | span (s) | rtol (DOPRI5) or h (ALI3-P) | wall (s) | quantity | error | high precision (1e-3) | max \\|E − E0\\| (J) | steps (rejected) | RHS | partition switches (per simulated s) | OpenSim 3.2, other hardware (s / simulated s) |"
    );
    out!(
        "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |"
    );
    let mut failed = false;
    for problem in problems {
        let mut opts = RunOptions::full(problem);
        opts.rtol = rtol.unwrap_or(opts.rtol);
        opts.atol = atol.unwrap_or(opts.atol);
        opts.t_end = t_end.unwrap_or(opts.t_end);
        opts.h = h.unwrap_or(opts.h);
        opts.ali3p_rtol = ali3p_rtol;
        opts.rank_drop = rank_drop.unwrap_or(opts.rank_drop);
        opts.accuracy = accuracy.unwrap_or(opts.accuracy);
        opts.auto_integrator = integrator.map(|name| {
            let d = runtime::ode::Dopri5Options {
                rtol: opts.rtol,
                atol: opts.atol,
                max_steps: 10_000_000,
                ..runtime::ode::Dopri5Options::default()
            };
            match name {
                "dopri5" => runtime::simulate::Integrator::Dopri5(d),
                _ => runtime::simulate::Integrator::Dop853(d),
            }
        });
        if let Some(k) = tangent_reuse {
            if !(k >= 1.0 && k.fract() == 0.0) {
                eprintln!("--tangent-reuse needs a whole number of steps ≥ 1, not {k}");
                std::process::exit(2);
            }
            opts.tangent_reuse = k as usize;
        }
        let (nq, nc, dof) = sizes(problem);
        let opensim = opensim_time(problem)
            .map(|(cpu, span)| format!("{cpu} / {span}"))
            .unwrap_or_else(|| "–".into());
        for &route in &routes {
            let tol = match route {
                Route::Ali3p => match opts.ali3p_rtol {
                    Some(r) => format!("adaptive, tol {r:.0e}"),
                    None => format!("h = {:e}", opts.h),
                },
                _ => format!("{:.0e}", opts.rtol),
            };
            match run(problem, route, &opts) {
                Ok(r) => {
                    let ok = r.error <= HIGH_PRECISION;
                    failed |= !ok;
                    out!(
                        "| {} | {nq}/{nc}/{dof} | {route:?} | {} | {tol} | {:.3} | {} | {:.2e} | {} | {} | {} ({}) | {} | {} ({:.2}) | {opensim} |",
                        problem.label(),
                        r.t_end,
                        r.wall.as_secs_f64(),
                        problem.quantity(),
                        r.error,
                        if ok { "met" } else { "MISSED" },
                        r.energy_change.map(|e| format!("{e:.2e}")).unwrap_or_else(|| "–".into()),
                        r.ode.steps,
                        r.ode.rejected,
                        r.ode.rhs_calls,
                        r.partition_switches,
                        r.partition_switches as f64 / r.t_end,
                    );
                }
                Err(e) => {
                    out!(
                        "| {} | {nq}/{nc}/{dof} | {route:?} | {} | {tol} | {:.3} | {} | – | failed: {} | – | – | – | – | {opensim} |",
                        problem.label(),
                        opts.t_end,
                        e.wall.as_secs_f64(),
                        problem.quantity(),
                        e.message.replace('|', "/"),
                    );
                }
            }
        }
    }
    if failed {
        eprintln!("a completed run missed the high-precision level");
        std::process::exit(1);
    }
}
