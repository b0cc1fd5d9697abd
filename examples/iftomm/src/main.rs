//! Runs the IFToMM benchmark problems A01–A05 (A02 with N = 1, 2, 3, 40) by both simulation
//! routes over their full spans and prints a table beside OpenSim 3.2's published CPU times.
//!
//! `cargo run --release -p iftomm [-- PROBLEM... [--rtol R] [--atol A] [--t-end T]]`
//! (`PROBLEM`: a01, a02-1, a02-2, a02-3, a02-40, a03, a04, a05; default all).

use iftomm::{opensim_time, run, sizes, Problem, Route, RunOptions, HIGH_PRECISION};

/// Problems to run and the overrides of rtol, atol and end time.
type Args = (Vec<Problem>, Option<f64>, Option<f64>, Option<f64>);

fn parse(args: &[String]) -> Result<Args, String> {
    let mut problems = Vec::new();
    let (mut rtol, mut atol, mut t_end) = (None, None, None);
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
    Ok((problems, rtol, atol, t_end))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (problems, rtol, atol, t_end) = match parse(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    println!(
        "| problem | NQ/NC/DOF | route | span (s) | rtol | wall (s) | quantity | error | high precision (1e-3) | max |E - E0| (J) | steps (rejected) | RHS | OpenSim 3.2, other hardware (s / simulated s) |"
    );
    println!(
        "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | --- |"
    );
    let mut failed = false;
    for problem in problems {
        let mut opts = RunOptions::full(problem);
        opts.rtol = rtol.unwrap_or(opts.rtol);
        opts.atol = atol.unwrap_or(opts.atol);
        opts.t_end = t_end.unwrap_or(opts.t_end);
        let (nq, nc, dof) = sizes(problem);
        let opensim = opensim_time(problem)
            .map(|(cpu, span)| format!("{cpu} / {span}"))
            .unwrap_or_else(|| "–".into());
        for route in [Route::Projection, Route::Lagrange] {
            match run(problem, route, &opts) {
                Ok(r) => {
                    let ok = r.error <= HIGH_PRECISION;
                    failed |= !ok;
                    println!(
                        "| {} | {nq}/{nc}/{dof} | {route:?} | {} | {:.0e} | {:.3} | {} | {:.2e} | {} | {} | {} ({}) | {} | {opensim} |",
                        problem.label(),
                        r.t_end,
                        opts.rtol,
                        r.wall.as_secs_f64(),
                        problem.quantity(),
                        r.error,
                        if ok { "met" } else { "MISSED" },
                        r.energy_change.map(|e| format!("{e:.2e}")).unwrap_or_else(|| "–".into()),
                        r.ode.steps,
                        r.ode.rejected,
                        r.ode.rhs_calls,
                    );
                }
                Err(e) => {
                    println!(
                        "| {} | {nq}/{nc}/{dof} | {route:?} | {} | {:.0e} | {:.3} | {} | – | failed: {} | – | – | – | {opensim} |",
                        problem.label(),
                        opts.t_end,
                        opts.rtol,
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
