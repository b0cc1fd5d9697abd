//! Pathological inputs (issue 9): deep nesting at the parser's bound, a 20,000-term sum,
//! banded chains of 1,000 to 10,000 coordinates and one constraint over 2,000
//! coordinates. Each is generated once in a child process (the bench binary run with
//! `--pathological-child NAME`), which reports its generation time and its peak resident
//! memory (`VmHWM` of `/proc/self/status`), so that one case's memory does not hide
//! another's.

use std::fmt::Write as _;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mechgen_codegen::parse::depth::MAX_NESTING;
use mechgen_codegen::{generate_str, pretty, Options};

use crate::families::{closed_chain, four_bar_chain};

/// The argument that runs one case in a child process.
pub const CHILD_ARG: &str = "--pathological-child";

/// One pathological case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Name (the child's argument).
    pub name: &'static str,
    /// What it is.
    pub label: &'static str,
}

/// The cases, in the order of the table.
pub const CASES: [Case; 7] = [
    Case {
        name: "deep_nesting",
        label: "parentheses nested at the bound (128 levels)",
    },
    Case {
        name: "sum_20000",
        label: "one constraint, a sum of 20,000 terms",
    },
    Case {
        name: "banded_1000",
        label: "four_bar_chain(500): banded, NQ 1,001",
    },
    Case {
        name: "banded_2000",
        label: "four_bar_chain(1000): banded, NQ 2,001",
    },
    Case {
        name: "banded_4000",
        label: "four_bar_chain(2000): banded, NQ 4,001",
    },
    Case {
        name: "banded_10000",
        label: "four_bar_chain(5000): banded, NQ 10,001",
    },
    Case {
        name: "one_constraint_2000",
        label: "closed_chain(1997): one vector constraint over NQ 2,000",
    },
];

/// Parentheses nested to exactly [`MAX_NESTING`] (the module's braces are the first
/// level) around a coordinate.
pub fn deep_nesting() -> String {
    let d = MAX_NESTING - 1;
    format!(
        "pub mod deep_nesting {{\n    param r = 1.0;\n    coord a = 0.3;\n    coord x = 0.955336489125606;\n    constraint {}x{} == r * cos(a);\n}}\n",
        "(".repeat(d),
        ")".repeat(d)
    )
}

/// One constraint `x + c1 − c2 + c3·k − ... == cos(a)` of `n` further terms.
pub fn long_sum(n: usize) -> String {
    let mut terms = String::new();
    let mut value = 0.0f64;
    for i in 1..=n {
        let c = (i % 7) as f64 * 0.25 + 0.5;
        let sign = if i % 2 == 0 { -1.0 } else { 1.0 };
        terms.push_str(if i % 2 == 0 { " - " } else { " + " });
        if i % 3 == 0 {
            let _ = write!(terms, "{c:?} * k");
            value += sign * c * 2.0;
        } else {
            let _ = write!(terms, "{c:?}");
            value += sign * c;
        }
    }
    // The nominal on the constraint (generation rejects nominals far off it).
    let x0 = 0.3f64.cos() - value;
    format!(
        "pub mod long_sum {{\n    param k = 2.0;\n    coord a = 0.3;\n    coord x = {x0:?};\n    constraint x{terms} == cos(a);\n}}\n"
    )
}

/// The `.mech` text of a case.
pub fn source(name: &str) -> Option<String> {
    Some(match name {
        "deep_nesting" => deep_nesting(),
        "sum_20000" => long_sum(20_000),
        "banded_1000" => four_bar_chain(500),
        "banded_2000" => four_bar_chain(1000),
        "banded_4000" => four_bar_chain(2000),
        "banded_10000" => four_bar_chain(5000),
        "one_constraint_2000" => closed_chain(1997),
        _ => return None,
    })
}

/// Peak resident memory of this process in KiB (`VmHWM`), if the platform reports it.
pub fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The child's side: generates case `name` once (plus pretty-printing) and prints one
/// JSON line with the figures.
pub fn child(name: &str) -> i32 {
    let Some(src) = source(name) else {
        eprintln!("unknown pathological case {name}");
        return 2;
    };
    let t = Instant::now();
    let out = generate_str(&src, &Options::default());
    let generation = t.elapsed();
    let row = match out {
        Ok(g) => {
            let t = Instant::now();
            let text = pretty(&g.tokens);
            let pretty_t = t.elapsed();
            let m = &g.modules[0];
            serde_json::json!({
                "nq": m.nq, "nc": m.nc,
                "generation_ms": generation.as_secs_f64() * 1e3,
                "parse_ms": g.timings.parse.as_secs_f64() * 1e3,
                "lower_ms": g.timings.lower.as_secs_f64() * 1e3,
                "differentiate_ms": g.timings.differentiate.as_secs_f64() * 1e3,
                "pivot_lu_ms": g.timings.pivot_lu.as_secs_f64() * 1e3,
                "emit_ms": g.timings.emit.as_secs_f64() * 1e3,
                "pretty_ms": pretty_t.as_secs_f64() * 1e3,
                "lines": text.lines().count(),
                "peak_kib": peak_kib(),
            })
        }
        Err(e) => serde_json::json!({
            "error": e.message,
            "generation_ms": generation.as_secs_f64() * 1e3,
            "peak_kib": peak_kib(),
        }),
    };
    println!("{row}");
    0
}

/// Figures of one case.
#[derive(Clone, Debug)]
pub struct Row {
    /// The case.
    pub case: Case,
    /// The child's JSON line, or why there is none.
    pub result: Result<serde_json::Value, String>,
}

/// Runs every case in a child process, each stopped after `limit`.
pub fn run(limit: Duration) -> Vec<Row> {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return CASES
                .iter()
                .map(|c| Row {
                    case: c.clone(),
                    result: Err(format!("cannot find the bench binary: {e}")),
                })
                .collect()
        }
    };
    CASES
        .iter()
        .map(|c| {
            eprintln!("  pathological: {}", c.label);
            Row {
                case: c.clone(),
                result: run_child(&exe, c.name, limit),
            }
        })
        .collect()
}

fn run_child(
    exe: &std::path::Path,
    name: &str,
    limit: Duration,
) -> Result<serde_json::Value, String> {
    let mut child = Command::new(exe)
        .arg(CHILD_ARG)
        .arg(name)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the child: {e}"))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut out = String::new();
                if let Some(mut o) = child.stdout.take() {
                    let _ = o.read_to_string(&mut out);
                }
                if !status.success() {
                    return Err(format!("the child failed ({status})"));
                }
                return serde_json::from_str(out.trim())
                    .map_err(|e| format!("unreadable child output: {e}"));
            }
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not finish in {:.0} s", limit.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for the child: {e}")),
        }
    }
}

/// The markdown table of the rows.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| input | NQ | NC | generation (ms) | parse / lower / differentiate / pivot+LU / emit (ms) | pretty-print (ms) | peak memory (MiB) |"
    );
    let _ = writeln!(s, "| --- | ---: | ---: | ---: | --- | ---: | ---: |");
    for r in rows {
        match &r.result {
            Ok(v) => {
                let f = |k: &str| v.get(k).and_then(|x| x.as_f64());
                let num = |k: &str| f(k).map_or("–".to_string(), |x| format!("{x:.0}"));
                let peak =
                    f("peak_kib").map_or("–".to_string(), |x| format!("{:.0}", x / 1024.0));
                if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
                    let _ = writeln!(
                        s,
                        "| {} | – | – | {} | error: {e} | – | {peak} |",
                        r.case.label,
                        num("generation_ms")
                    );
                } else {
                    let _ = writeln!(
                        s,
                        "| {} | {} | {} | {} | {} / {} / {} / {} / {} | {} | {peak} |",
                        r.case.label,
                        num("nq"),
                        num("nc"),
                        num("generation_ms"),
                        num("parse_ms"),
                        num("lower_ms"),
                        num("differentiate_ms"),
                        num("pivot_lu_ms"),
                        num("emit_ms"),
                        num("pretty_ms"),
                    );
                }
            }
            Err(e) => {
                let _ = writeln!(s, "| {} | – | – | {e} | – | – | – |", r.case.label);
            }
        }
    }
    s
}

/// JSON of the rows.
pub fn json(rows: &[Row]) -> serde_json::Value {
    serde_json::Value::Array(
        rows.iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.case.name,
                    "label": r.case.label,
                    "result": match &r.result { Ok(v) => v.clone(), Err(e) => serde_json::json!({"failed": e}) },
                })
            })
            .collect(),
    )
}
