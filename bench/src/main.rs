//! `cargo run --release -p mechgen-bench [-- OPTIONS]`: runs the benchmark suite, writes
//! `bench/results/latest.md`, `latest.json` and `growth.svg`, and prints the markdown.
//!
//! Options: `--runs N` (generation runs, default 20), `--no-compile-times`,
//! `--compile-limit SECONDS` (default 60: larger family members are skipped in a profile
//! once a build there took more than half of it), `--no-sim`, `--quick` (fewer samples,
//! for trying the command out; not for reporting), `--no-pathological` (skip the
//! pathological inputs), `--pathological-only` (run only those and print their table),
//! `--pathological-limit SECONDS` (default 300 per case).

use std::path::PathBuf;
use std::time::Duration;

use mechgen_bench::compile::{CompileRow, Scratch};
use mechgen_bench::generation::{self, GenRow};
use mechgen_bench::growth::{self, Series};
use mechgen_bench::harness::Config;
use mechgen_bench::report::{Exponent, Machine, Report, Target};
use mechgen_bench::{pathological, percall, rhs, sim, sources};

/// A quantity read from a generation row.
type Metric = fn(&GenRow) -> f64;

struct Args {
    runs: usize,
    compile: bool,
    compile_limit: f64,
    sim: bool,
    quick: bool,
    pathological: bool,
    pathological_only: bool,
    pathological_limit: f64,
}

fn args() -> Args {
    let mut a = Args {
        runs: 20,
        compile: true,
        compile_limit: 60.0,
        sim: true,
        quick: false,
        pathological: true,
        pathological_only: false,
        pathological_limit: 300.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--runs" => a.runs = it.next().and_then(|v| v.parse().ok()).unwrap_or(a.runs),
            "--no-compile-times" => a.compile = false,
            "--compile-times" => a.compile = true,
            "--compile-limit" => {
                a.compile_limit = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(a.compile_limit)
            }
            "--no-sim" => a.sim = false,
            "--quick" => a.quick = true,
            "--no-pathological" => a.pathological = false,
            "--pathological-only" => a.pathological_only = true,
            "--pathological-limit" => {
                a.pathological_limit = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(a.pathological_limit)
            }
            "-h" | "--help" => {
                println!(
                    "mechgen-bench [--runs N] [--no-compile-times] [--compile-limit SECONDS] [--no-sim] [--quick] [--no-pathological] [--pathological-only] [--pathological-limit SECONDS]"
                );
                std::process::exit(0);
            }
            other => {
                eprintln!("unknown option {other} (see --help)");
                std::process::exit(2);
            }
        }
    }
    a
}

fn compile_times(gens: &[GenRow], limit: f64, notes: &mut Vec<String>) -> Vec<CompileRow> {
    let scratch = match Scratch::new() {
        Ok(s) => s,
        Err(e) => {
            notes.push(format!(
                "compile times not measured: cannot create the scratch crate: {e}"
            ));
            return Vec::new();
        }
    };
    let first = &gens[0];
    eprintln!("compile times: warming the scratch crate's dependencies (both profiles)");
    if let Err(e) = scratch.warm(
        &first.source.module,
        &generation::module_text(&first.source),
        &first.stats,
    ) {
        notes.push(format!("compile times not measured: {e}"));
        return Vec::new();
    }
    let mut rows = Vec::new();
    // Per family and profile: the last time measured, to skip members predicted too slow.
    let mut last: std::collections::HashMap<(&str, bool), f64> = Default::default();
    for g in gens {
        let text = generation::module_text(&g.source);
        let mut row = CompileRow {
            label: g.source.label.clone(),
            release_s: None,
            debug_s: None,
            note: None,
        };
        let mut notes_row = Vec::new();
        for release in [true, false] {
            let profile = if release { "release" } else { "debug" };
            if let Some(fam) = g.source.family {
                if let Some(&prev) = last.get(&(fam, release)) {
                    if prev > limit / 2.0 {
                        notes_row.push(format!(
                            "{profile} skipped: the previous {fam} member took {prev:.1} s (> half of the {limit:.0} s limit)"
                        ));
                        continue;
                    }
                }
            }
            eprintln!("  compile ({profile}): {}", g.source.label);
            match scratch.time(&g.source.module, &text, &g.stats, release) {
                Ok(s) => {
                    if release {
                        row.release_s = Some(s);
                    } else {
                        row.debug_s = Some(s);
                    }
                    if let Some(fam) = g.source.family {
                        last.insert((fam, release), s);
                    }
                }
                Err(e) => notes_row.push(format!("{profile}: {e}")),
            }
        }
        if !notes_row.is_empty() {
            row.note = Some(notes_row.join("; "));
        }
        rows.push(row);
    }
    if rows.iter().any(|r| r.note.is_some()) {
        notes.push(format!(
            "Some builds were skipped or failed (see the note column); `--compile-limit SECONDS` \
             (now {limit:.0}) raises the limit."
        ));
    }
    rows
}

fn family_points(gens: &[GenRow], fam: &str, f: impl Fn(&GenRow) -> f64) -> Vec<(f64, f64)> {
    gens.iter()
        .filter(|g| g.source.family == Some(fam))
        .map(|g| (g.source.k.unwrap_or(0) as f64, f(g)))
        .collect()
}

fn exponent(what: String, pts: &[(f64, f64)]) -> Exponent {
    let (ks, ys): (Vec<f64>, Vec<f64>) = pts.iter().copied().unzip();
    let (all, _) = growth::fit_power(&ks, &ys);
    let tail: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.0 >= 8.0).collect();
    let (kt, yt): (Vec<f64>, Vec<f64>) = tail.into_iter().unzip();
    let (tail, _) = growth::fit_power(&kt, &yt);
    Exponent { what, all, tail }
}

fn targets(r: &Report) -> Vec<Target> {
    let mut t = Vec::new();
    let gen = |m: &str| r.generation.iter().find(|g| g.source.module == m);
    let pc = |l: &str| r.per_call.iter().find(|p| p.label == l);
    let target = |what: &str, measured: String, met: Option<bool>, note: &str| Target {
        what: what.to_string(),
        measured,
        met,
        note: note.to_string(),
    };
    if let Some(g) = gen("stewart") {
        t.push(target(
            "Stewart: total generation ≤ 20 ms",
            format!(
                "{:.2} ms (median); without pretty-printing {:.2} ms",
                g.total.median,
                g.total.median - g.pretty.median
            ),
            Some(g.total.median <= 20.0),
            "generate_file_text, wall time (pretty: prettyplease for the skeleton, flat bodies printed from tokens)",
        ));
        let ns = g
            .stats
            .functions
            .iter()
            .find(|f| f.name == "null_space_fixed");
        if let Some(f) = ns {
            t.push(target(
                "Stewart: null_space ≤ 1,000 arithmetic ops",
                format!(
                    "{} arithmetic (add/sub {}, mul {}, div {}); {} in all",
                    f.ops.arithmetic(),
                    f.ops.add,
                    f.ops.mul,
                    f.ops.div,
                    f.ops.total()
                ),
                Some(f.ops.arithmetic() <= 1000),
                "after CSE, as counted by the generator",
            ));
        }
    }
    if let Some(p) = pc("Stewart platform") {
        t.push(target(
            "Stewart: null_space ≤ 300 ns/call",
            format!("{:.1} ns", p.null_space.median),
            Some(p.null_space.median <= 300.0),
            "",
        ));
        let (f, q) = (p.ratio_factor(&p.pivot_lu), p.ratio_from_q(&p.pivot_lu));
        t.push(target(
            "Stewart: ≥ 5× faster than the pivot-order numeric LU",
            format!("{q:.1}× from q (jacobian + LU); {f:.1}× against the LU alone"),
            Some(q >= 5.0),
            "judged from q: both start from the configuration",
        ));
        let (f, q) = (p.ratio_factor(&p.svd), p.ratio_from_q(&p.svd));
        t.push(target(
            "Stewart: ≥ 50× faster than SVD",
            format!("{q:.1}× from q (jacobian + SVD); {f:.1}× against the SVD alone"),
            Some(q >= 50.0),
            "judged from q",
        ));
    }
    if let Some(c) = r.compile.iter().find(|c| c.label == "Stewart platform") {
        for (prof, v) in [("release", c.release_s), ("debug", c.debug_s)] {
            t.push(target(
                &format!("Stewart: {prof} compile of its module ≤ 5 s"),
                v.map_or("not measured".into(), |s| format!("{s:.2} s")),
                v.map(|s| s <= 5.0),
                "scratch crate, cargo build wall time incl. link",
            ));
        }
    } else {
        t.push(target(
            "Stewart: release/debug compile of its module ≤ 5 s",
            "not measured".into(),
            None,
            "run without --no-compile-times",
        ));
    }
    if let Some(p) = pc("slider crank") {
        t.push(target(
            "planar slider crank: null_space ≤ 15 ns/call",
            format!("{:.2} ns", p.null_space.median),
            Some(p.null_space.median <= 15.0),
            &format!(
                "residual alone {:.1} ns, jacobian {:.1} ns: the sin/cos of two angles dominate",
                p.residual.median, p.jacobian.median
            ),
        ));
    }
    let tail_of = |w: &str| {
        r.exponents
            .iter()
            .find(|e| e.what == w)
            .map_or(f64::NAN, |e| e.tail)
    };
    let stage_note = format!(
        "least-squares exponent; both fits must be ≤ 1.2. Stages (k ≥ 8): pivot + LU k^{:.2}, differentiate k^{:.2}, emit k^{:.2}, pretty k^{:.2}",
        tail_of("four_bar_chain: pivot + LU"),
        tail_of("four_bar_chain: differentiate"),
        tail_of("four_bar_chain: emit"),
        tail_of("four_bar_chain: pretty")
    );
    for e in &r.exponents {
        if e.what == "four_bar_chain: generation time" || e.what == "four_bar_chain: null_space ops"
        {
            t.push(target(
                &format!("{}: grows no faster than k^1.2", e.what),
                format!("k^{:.2} (k = 1…64), k^{:.2} (k ≥ 8)", e.all, e.tail),
                Some(e.all <= 1.2 && e.tail <= 1.2),
                if e.what.ends_with("generation time") {
                    &stage_note
                } else {
                    "least-squares exponent; both fits must be ≤ 1.2"
                },
            ));
        }
    }
    if let Some(g) = gen("four_bar_chain_64") {
        let n = g.ops_of("null_space_fixed");
        t.push(target(
            "four_bar_chain(64): null_space ≤ 2,000 ops",
            format!("{n} ops"),
            Some(n <= 2000),
            "all operations",
        ));
    }
    let mut worst = (0usize, 0usize, String::new());
    for g in &r.generation {
        for f in &g.stats.functions {
            let per = f.lets / f.chunks.max(1);
            if per > worst.1 {
                worst = (f.lets, per, format!("{}::{}", g.source.module, f.name));
            }
        }
    }
    t.push(target(
        "no generated function (chunk) over ~1,000 lets",
        format!(
            "largest: {} with {} lets, {} per chunk",
            worst.2, worst.0, worst.1
        ),
        Some(worst.1 <= 1100),
        "lets / max(chunks, 1); 10 % slack for \"~\"",
    ));
    t
}

fn main() {
    // A pathological case measured in its own process (see `pathological`).
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some(pathological::CHILD_ARG) {
        std::process::exit(pathological::child(argv.get(2).map_or("", String::as_str)));
    }
    let a = args();
    if a.pathological_only {
        let rows = pathological::run(Duration::from_secs_f64(a.pathological_limit));
        print!("{}", pathological::markdown(&rows));
        return;
    }
    let results = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results");
    std::fs::create_dir_all(&results).expect("create bench/results");
    let mut report = Report {
        machine: Machine::probe(),
        gen_runs: a.runs.max(1),
        ..Report::default()
    };
    let cfg = if a.quick {
        Config {
            warm_up: Duration::from_millis(5),
            batch_target: Duration::from_micros(100),
            samples: 11,
        }
    } else {
        Config::default()
    };

    eprintln!("generation ({} runs each)", report.gen_runs);
    for s in sources::all() {
        eprintln!("  generate: {}", s.label);
        report
            .generation
            .push(generation::measure(&s, 3, report.gen_runs));
    }

    eprintln!("per-call measurements");
    report.per_call = percall::measure_all(&cfg);

    if a.compile {
        let mut notes = Vec::new();
        report.compile = compile_times(&report.generation, a.compile_limit, &mut notes);
        report.compile_notes = notes;
    } else {
        report
            .compile_notes
            .push("Compile times not measured in this run (`--no-compile-times`).".into());
    }

    let mut time_series = Vec::new();
    let mut ops_series = Vec::new();
    for fam in ["four_bar_chain", "closed_chain"] {
        let t = family_points(&report.generation, fam, |g| g.total.median);
        let o = family_points(&report.generation, fam, |g| {
            g.ops_of("null_space_fixed") as f64
        });
        let et = exponent(format!("{fam}: generation time"), &t);
        let eo = exponent(format!("{fam}: null_space ops"), &o);
        time_series.push(Series {
            label: format!("{fam}: fit k^{:.2}", et.all),
            points: t,
        });
        ops_series.push(Series {
            label: format!("{fam}: fit k^{:.2}", eo.all),
            points: o,
        });
        report.exponents.push(et);
        report.exponents.push(eo);
        let stages: [(&str, Metric); 5] = [
            ("differentiate", |g| g.differentiate.median),
            ("pivot + LU", |g| g.pivot_lu.median),
            ("emit", |g| g.emit.median),
            ("pretty", |g| g.pretty.median),
            ("lines of code", |g| g.lines as f64),
        ];
        for (stage, f) in stages {
            let pts = family_points(&report.generation, fam, f);
            report
                .exponents
                .push(exponent(format!("{fam}: {stage}"), &pts));
        }
    }
    if let Err(e) = growth::plot(&results.join("growth.svg"), &time_series, &ops_series) {
        report.notes.push(format!("growth.svg not written: {e}"));
    }

    if a.sim {
        eprintln!("simulation");
        report.sim = Some(sim::run(if a.quick { 3 } else { 10 }, &cfg));
        eprintln!("right-hand sides");
        report.rhs = rhs::run(&cfg);
    }

    if a.pathological {
        eprintln!("pathological inputs (one child process each)");
        report.pathological = pathological::run(Duration::from_secs_f64(a.pathological_limit));
    }
    report.targets = targets(&report);
    if a.quick {
        report
            .notes
            .push("`--quick` run: fewer samples; not for reporting.".into());
    }
    let md = report.markdown();
    std::fs::write(results.join("latest.md"), &md).expect("write latest.md");
    let json = serde_json::to_string_pretty(&report.json()).expect("serialize");
    std::fs::write(results.join("latest.json"), json).expect("write latest.json");
    print!("{md}");
}
