//! The markdown and JSON reports.

use std::fmt::Write;

use crate::compile::CompileRow;
use crate::generation::GenRow;
use crate::harness::{fmt_ns, Summary};
use crate::percall::PerCallRow;
use crate::sim::SimReport;

/// Machine and revision the run was made on.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// `uname -a`.
    pub uname: String,
    /// Available parallelism.
    pub nproc: usize,
    /// `date -u`.
    pub date: String,
    /// `git rev-parse HEAD` (with `-dirty` when the work tree differs).
    pub commit: String,
    /// `rustc -V`.
    pub rustc: String,
}

fn run(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .current_dir(crate::compile::workspace_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

impl Machine {
    /// Probes the machine.
    pub fn probe() -> Machine {
        let mut commit = run("git", &["rev-parse", "HEAD"]);
        if !run("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty() {
            commit.push_str(" (work tree modified)");
        }
        Machine {
            uname: run("uname", &["-a"]),
            nproc: std::thread::available_parallelism().map_or(0, |n| n.get()),
            date: run("date", &["-u", "+%Y-%m-%d %H:%M:%S UTC"]),
            commit,
            rustc: run("rustc", &["-V"]),
        }
    }
}

/// A fitted growth exponent.
#[derive(Clone, Debug)]
pub struct Exponent {
    /// What was fitted.
    pub what: String,
    /// Exponent over all `k`.
    pub all: f64,
    /// Exponent over `k ≥ 8`.
    pub tail: f64,
}

/// A target and whether it was met.
#[derive(Clone, Debug)]
pub struct Target {
    /// The target.
    pub what: String,
    /// The measured value.
    pub measured: String,
    /// Met?
    pub met: Option<bool>,
    /// Why (for missed or unknown ones).
    pub note: String,
}

/// Everything a run measured.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Machine.
    pub machine: Machine,
    /// Generation runs per mechanism.
    pub gen_runs: usize,
    /// Generation table.
    pub generation: Vec<GenRow>,
    /// Per-call table.
    pub per_call: Vec<PerCallRow>,
    /// Compile times.
    pub compile: Vec<CompileRow>,
    /// Notes about compile times (skips).
    pub compile_notes: Vec<String>,
    /// Growth exponents.
    pub exponents: Vec<Exponent>,
    /// Simulation.
    pub sim: Option<SimReport>,
    /// Right-hand sides per second of every example with dynamics.
    pub rhs: Vec<crate::rhs::RhsRate>,
    /// Targets.
    pub targets: Vec<Target>,
    /// Pathological inputs (deep nesting, long sums, huge chains), each generated once in
    /// a child process.
    pub pathological: Vec<crate::pathological::Row>,
    /// Further notes.
    pub notes: Vec<String>,
}

fn ms3(s: &Summary) -> String {
    format!("{:.3} ({:.3}–{:.3})", s.median, s.min, s.max)
}

fn ns3(s: &Summary) -> String {
    format!("{} ({}–{})", fmt_ns(s.median), fmt_ns(s.min), fmt_ns(s.max))
}

fn ratio(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}×")
    } else {
        "–".into()
    }
}

impl Report {
    /// The markdown report.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let m = &self.machine;
        let _ = writeln!(s, "# mechgen benchmarks\n");
        let _ = writeln!(s, "- command: `cargo run --release -p mechgen-bench`");
        let _ = writeln!(s, "- date: {}", m.date);
        let _ = writeln!(s, "- commit: `{}`", m.commit);
        let _ = writeln!(s, "- machine: `{}`, {} cores available", m.uname, m.nproc);
        let _ = writeln!(s, "- toolchain: `{}`", m.rustc);
        let _ = writeln!(
            s,
            "- figures are median (min–max); per-call figures are ns per call from batches of \
             calls (≥ 0.5 ms each, 31 samples after warm-up), never single calls\n"
        );

        if !self.targets.is_empty() {
            let _ = writeln!(s, "## Targets\n");
            let _ = writeln!(s, "| target | measured | met | note |");
            let _ = writeln!(s, "| --- | --- | --- | --- |");
            for t in &self.targets {
                let met = match t.met {
                    Some(true) => "met",
                    Some(false) => "**missed**",
                    None => "not measured",
                };
                let _ = writeln!(s, "| {} | {} | {} | {} |", t.what, t.measured, met, t.note);
            }
            let _ = writeln!(s);
        }

        let _ = writeln!(
            s,
            "## Generation time (ms, median (min–max) over {} runs after 3 warm-up runs)\n",
            self.gen_runs
        );
        let _ = writeln!(
            s,
            "`total` is the wall time of `generate_file_text` (tokenizing, generation, pretty-printing; `pretty` is the total minus the stages).\n"
        );
        let _ = writeln!(
            s,
            "| mechanism | NQ | NC | DOF | parse | lower | differentiate | pivot + LU | emit | pretty | total | lines |"
        );
        let _ = writeln!(
            s,
            "| --- | ---: | ---: | ---: | --- | --- | --- | --- | --- | --- | --- | ---: |"
        );
        for r in &self.generation {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.source.label,
                r.stats.nq,
                r.stats.nc,
                r.stats.dof,
                ms3(&r.parse),
                ms3(&r.lower),
                ms3(&r.differentiate),
                ms3(&r.pivot_lu),
                ms3(&r.emit),
                ms3(&r.pretty),
                ms3(&r.total),
                r.lines
            );
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## Operation counts of the generated functions\n");
        let _ = writeln!(
            s,
            "| mechanism | function | total | add/sub | mul | div | sqrt | trig | other | lets | chunks |"
        );
        let _ = writeln!(
            s,
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for r in &self.generation {
            for f in &r.stats.functions {
                let o = &f.ops;
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    r.source.label,
                    f.name,
                    o.total(),
                    o.add,
                    o.mul,
                    o.div,
                    o.sqrt,
                    o.trig,
                    o.other,
                    f.lets,
                    f.chunks
                );
            }
        }
        let _ = writeln!(s);

        if !self.per_call.is_empty() {
            let _ = writeln!(s, "## Evaluation (ns per call, median (min–max))\n");
            let _ = writeln!(
                s,
                "At the assembled nominal configuration, default parameters, `t = 0`.\n"
            );
            let _ = writeln!(
                s,
                "| mechanism | NQ×DOF | residual | jacobian | null_space_fixed | charts | null_space (atlas) | atlas / fixed | solve_dependent |"
            );
            let _ = writeln!(
                s,
                "| --- | --- | --- | --- | --- | ---: | --- | ---: | --- |"
            );
            for r in &self.per_call {
                let _ = writeln!(
                    s,
                    "| {} | {}×{} | {} | {} | {} | {} | {} | {:.2} | {} |",
                    r.label,
                    r.nq,
                    r.dof,
                    ns3(&r.residual),
                    ns3(&r.jacobian),
                    ns3(&r.null_space),
                    r.charts,
                    ns3(&r.null_space_atlas),
                    r.null_space_atlas.median / r.null_space.median,
                    ns3(&r.solve_dependent)
                );
            }
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "### Null space against numeric baselines on the same generated Jacobian\n"
            );
            let _ = writeln!(
                s,
                "Baselines get the Jacobian already evaluated (`J given`); the generated `null_space` starts \
                 from `q`. Ratios are baseline / generated `null_space`: `factor` compares the baseline \
                 alone, `from q` adds the generated `jacobian` call a baseline needs first. \
                 `pivot-order LU` is a dense LU without pivoting of `C_J[PIVOT_ROWS, PIVOT_COLS]` on a \
                 preallocated buffer plus back substitution (`bench/src/pivot_lu.rs`); \
                 `|ΔD|` is `max |D_generated − D_pivot-order LU|` (the same basis).\n"
            );
            let _ = writeln!(
                s,
                "| mechanism | null_space | SVD (J given) | ratio factor / from q | full-pivot LU (J given) | ratio factor / from q | pivot-order LU (J given) | ratio factor / from q | \\|ΔD\\| | ‖C_J D‖ rel. |"
            );
            let _ = writeln!(
                s,
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
            );
            for r in &self.per_call {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} / {} | {} | {} / {} | {} | {} / {} | {:.1e} | {:.1e} |",
                    r.label,
                    fmt_ns(r.null_space.median),
                    fmt_ns(r.svd.median),
                    ratio(r.ratio_factor(&r.svd)),
                    ratio(r.ratio_from_q(&r.svd)),
                    fmt_ns(r.full_lu.median),
                    ratio(r.ratio_factor(&r.full_lu)),
                    ratio(r.ratio_from_q(&r.full_lu)),
                    fmt_ns(r.pivot_lu.median),
                    ratio(r.ratio_factor(&r.pivot_lu)),
                    ratio(r.ratio_from_q(&r.pivot_lu)),
                    r.d_diff,
                    r.rel_residual
                );
            }
            let _ = writeln!(s);
        }

        if !self.compile.is_empty() || !self.compile_notes.is_empty() {
            let _ = writeln!(s, "## Compile time of each generated module (s)\n");
            let _ = writeln!(
                s,
                "A scratch crate in a temporary directory depending on `mechgen` by path (empty \
                 `[workspace]`), dependencies built first; then each module is written and \
                 `cargo build` of just that crate is timed (its `main` takes the address of every \
                 generated function, so all are compiled). Includes cargo's own start-up and the \
                 link (about 0.2–0.5 s). Debug builds are incremental (cargo's default).\n"
            );
            let _ = writeln!(s, "| mechanism | release | debug | note |");
            let _ = writeln!(s, "| --- | ---: | ---: | --- |");
            let f = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{v:.2}"));
            for r in &self.compile {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} |",
                    r.label,
                    f(r.release_s),
                    f(r.debug_s),
                    r.note.clone().unwrap_or_default()
                );
            }
            for n in &self.compile_notes {
                let _ = writeln!(s, "\n{n}");
            }
            let _ = writeln!(s);
        }

        if !self.exponents.is_empty() {
            let _ = writeln!(s, "## Growth with k (`bench/results/growth.svg`)\n");
            let _ = writeln!(
                s,
                "Least-squares fit of `y = c k^e` on log–log axes, over k = 1…64 and over k ≥ 8.\n"
            );
            let _ = writeln!(s, "| quantity | e (all k) | e (k ≥ 8) |");
            let _ = writeln!(s, "| --- | ---: | ---: |");
            for e in &self.exponents {
                let _ = writeln!(s, "| {} | {:.2} | {:.2} |", e.what, e.all, e.tail);
            }
            let _ = writeln!(s, "\n![growth](growth.svg)\n");
        }

        if let Some(sim) = &self.sim {
            let _ = writeln!(
                s,
                "## Simulation: seven-body mechanism, t ∈ [0, {}], DOPRI5 rtol {:e}, atol {:e}\n",
                crate::sim::T_END,
                crate::sim::RTOL,
                crate::sim::ATOL
            );
            let _ = writeln!(
                s,
                "Both routes integrate `(q, u)` with the runtime's DOPRI5 and project positions after \
                 each step (Newton assembly); they differ in the right-hand side: the generated \
                 `null_space`/`solve_dependent` (`simulate_projection`) or \
                 `projection_accelerations_numeric` (SVD basis, numeric solves).\n"
            );
            let _ = writeln!(
                s,
                "| route | wall time (ms) | RHS calls | steps (rejected) | RHS / s | ns per RHS | max rel. error of q(0.03) vs test-set reference |"
            );
            let _ = writeln!(s, "| --- | --- | ---: | --- | ---: | --- | ---: |");
            for r in [&sim.generated, &sim.numeric] {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} ({}) | {:.3e} | {} | {:.1e} |",
                    r.name,
                    ms3(&r.wall_ms),
                    r.rhs_calls,
                    r.steps,
                    r.rejected,
                    r.rhs_per_s,
                    ns3(&r.rhs_ns),
                    r.ref_err
                );
            }
            let _ = writeln!(
                s,
                "\nq(0.03) difference between the routes: max abs {:.2e}, relative (2-norm) {:.2e}. \
                 Speed-up of the generated route: {:.1}× in wall time, {:.1}× per RHS.\n",
                sim.max_abs_diff,
                sim.rel_diff,
                sim.numeric.wall_ms.median / sim.generated.wall_ms.median,
                sim.numeric.rhs_ns.median / sim.generated.rhs_ns.median
            );
        }

        if !self.rhs.is_empty() {
            let _ = writeln!(s, "## Projection-method right-hand sides per second\n");
            let _ = writeln!(
                s,
                "One right-hand side `(q, u) ↦ (q̇, u̇)` at the assembled nominal configuration with \
                 every independent velocity 0.5: generated (`projection_rhs`) against numeric `D` \
                 (`projection_accelerations_numeric`: SVD basis of the generated Jacobian, numeric \
                 solves; same mass matrix, forces and γ). ns per call, median (min–max).\n"
            );
            let _ = writeln!(
                s,
                "| mechanism | generated (ns) | RHS/s | numeric D (ns) | RHS/s | speed-up | routes differ by |"
            );
            let _ = writeln!(s, "| --- | --- | ---: | --- | ---: | ---: | ---: |");
            for r in &self.rhs {
                let _ = writeln!(
                    s,
                    "| {} | {} | {:.3e} | {} | {:.3e} | {:.1}× | {:.1e} |",
                    r.mechanism,
                    ns3(&r.generated_ns),
                    r.generated_per_s(),
                    ns3(&r.numeric_ns),
                    r.numeric_per_s(),
                    r.numeric_ns.median / r.generated_ns.median,
                    r.agreement
                );
            }
            let _ = writeln!(s);
        }

        if !self.pathological.is_empty() {
            let _ = writeln!(
                s,
                "## Pathological inputs\n\nEach generated once in a child process (generation: `generate_str`; peak memory: the child's `VmHWM`, including pretty-printing).\n"
            );
            s.push_str(&crate::pathological::markdown(&self.pathological));
            let _ = writeln!(s);
        }

        if !self.notes.is_empty() {
            let _ = writeln!(s, "## Notes\n");
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
        }
        s
    }

    /// The JSON report.
    pub fn json(&self) -> serde_json::Value {
        let m = &self.machine;
        serde_json::json!({
            "machine": {"uname": m.uname, "nproc": m.nproc, "date": m.date, "commit": m.commit, "rustc": m.rustc},
            "generation_runs": self.gen_runs,
            "generation": self.generation.iter().map(GenRow::json).collect::<Vec<_>>(),
            "per_call": self.per_call.iter().map(PerCallRow::json).collect::<Vec<_>>(),
            "compile_times": self.compile.iter().map(CompileRow::json).collect::<Vec<_>>(),
            "compile_notes": self.compile_notes,
            "growth_exponents": self.exponents.iter().map(|e| serde_json::json!({"what": e.what, "all_k": e.all, "k_ge_8": e.tail})).collect::<Vec<_>>(),
            "simulation": self.sim.as_ref().map(SimReport::json),
            "rhs_rates": self.rhs.iter().map(crate::rhs::RhsRate::json).collect::<Vec<_>>(),
            "targets": self.targets.iter().map(|t| serde_json::json!({"what": t.what, "measured": t.measured, "met": t.met, "note": t.note})).collect::<Vec<_>>(),
            "pathological": crate::pathological::json(&self.pathological),
            "notes": self.notes,
        })
    }
}
