//! Runs the structure-aware fuzzer at scale, surviving crashes (stack overflows abort the
//! process) by running the inputs in a child process and restarting it after a crash.
//!
//! ```text
//! cargo run --release -p mechgen-fuzzgen --example run -- N [--seed S] [--start K] [--out DIR] [--full]
//! cargo run --release -p mechgen-fuzzgen --example run -- N [--seed S] [--start K] [--out DIR] --emit [--batch B] [--scratch DIR]
//! ```
//!
//! `--emit` checks the emitted Rust instead (see `src/emit.rs`): inputs from
//! `emit::case` (grammar-generated with outputs and inequalities; plain `f64`, `generic` +
//! `derivatives`, or `f32`), compiled in batches of 30 (`--batch B`) in a scratch crate
//! (`--scratch DIR`, default `target/fuzzgen-emit-run`) and checked there; the summary goes
//! to `DIR/emit-summary.txt`, the first input of each class to `DIR/emit-class-NN.mech`.
//!
//! `--emit-only I` prints `--emit`'s input `I`, `--emit-check FILE` checks one file (options
//! from its attributes), `--emit-minimize FILE CLASS` shrinks it while it fails with that
//! class, `--emit-shipped` checks the shipped inputs and the examples' `.mech` files.
//!
//! `--full` generates with `generic` and `derivatives` on (the generic family and the
//! dynamics' derivatives of every model with dynamics), as `#![generic]` and
//! `#![derivatives]` in the input would.
//!
//! Input `i` is made from `Dice::from_seed(seed_of(S, i))`, so any input can be reproduced
//! alone: `--only i` prints it and its verdict; `--check FILE` checks a file; `--bytes FILE`
//! replays a libFuzzer artifact (the input its bytes make, and the verdict). The first
//! input of every distinct finding class is written to `DIR` (default `target/fuzzgen`) as
//! `class-NN.mech`, a minimised copy as `class-NN.min.mech`, and the counts to
//! `DIR/summary.txt`. Stack overflows and timeouts are not minimised.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mechgen_fuzzgen::{check_with, input, minimize, seeds, Dice, OracleOptions, Origin};

fn seed_of(seed: u64, i: u64) -> u64 {
    seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn make(seed: u64, i: u64, shipped: &[(String, String)]) -> (String, Origin) {
    input(&mut Dice::from_seed(seed_of(seed, i)), shipped)
}

fn opts(full: bool) -> OracleOptions {
    OracleOptions {
        timeout: Duration::from_secs(10),
        generation: mechgen_codegen::Options {
            generic: full,
            derivatives: full,
            ..mechgen_codegen::Options::default()
        },
        ..OracleOptions::default()
    }
}

struct Args {
    n: u64,
    seed: u64,
    start: u64,
    out: PathBuf,
    mode: Mode,
    /// Generic family and derivatives on (`--full`).
    full: bool,
    /// The scratch crate of `--emit` (`--scratch DIR`, default `target/fuzzgen-emit-run`).
    scratch: PathBuf,
}

enum Mode {
    Parent,
    Worker,
    Only(u64),
    Check(PathBuf),
    Bytes(PathBuf),
    Minimize(PathBuf, String),
    /// The emitted code compiled and checked, in batches of this many inputs (`--emit`).
    Emit(usize),
    /// The same for the shipped inputs and the examples' `.mech` files, in three variants
    /// each (`--emit-shipped`).
    EmitShipped,
    /// Prints `--emit`'s input `i` and its variant (`--emit-only i`).
    EmitOnly(u64),
    /// Compiles and checks one file's emitted code (options from its attributes;
    /// `--emit-check FILE`).
    EmitCheck(PathBuf),
    /// Shrinks a file while its emitted code fails with the class given
    /// (`--emit-minimize FILE CLASS`, the class as the summary prints it).
    EmitMinimize(PathBuf, String),
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        n: 1000,
        seed: 1,
        start: 0,
        out: PathBuf::from("target/fuzzgen"),
        mode: Mode::Parent,
        full: false,
        scratch: PathBuf::from("target/fuzzgen-emit-run"),
    };
    let mut it = std::env::args().skip(1);
    let num = |s: Option<String>| -> Result<u64, String> {
        s.ok_or("missing value")?
            .parse()
            .map_err(|e| format!("{e}"))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seed" => a.seed = num(it.next())?,
            "--start" => a.start = num(it.next())?,
            "--out" => a.out = PathBuf::from(it.next().ok_or("--out needs a value")?),
            "--worker" => a.mode = Mode::Worker,
            "--full" => a.full = true,
            "--emit" => a.mode = Mode::Emit(30),
            "--emit-shipped" => a.mode = Mode::EmitShipped,
            "--emit-only" => a.mode = Mode::EmitOnly(num(it.next())?),
            "--emit-minimize" => {
                let f = it.next().ok_or("--emit-minimize FILE CLASS")?;
                let c = it.next().ok_or("--emit-minimize FILE CLASS")?;
                a.mode = Mode::EmitMinimize(PathBuf::from(f), c);
            }
            "--emit-check" => {
                a.mode = Mode::EmitCheck(PathBuf::from(it.next().ok_or("--emit-check FILE")?))
            }
            "--scratch" => a.scratch = PathBuf::from(it.next().ok_or("--scratch DIR")?),
            "--batch" => a.mode = Mode::Emit(num(it.next())? as usize),
            "--only" => a.mode = Mode::Only(num(it.next())?),
            "--bytes" => a.mode = Mode::Bytes(PathBuf::from(it.next().ok_or("--bytes FILE")?)),
            "--check" => a.mode = Mode::Check(PathBuf::from(it.next().ok_or("--check FILE")?)),
            "--minimize" => {
                let f = it.next().ok_or("--minimize FILE CLASS")?;
                let c = it.next().ok_or("--minimize FILE CLASS")?;
                a.mode = Mode::Minimize(PathBuf::from(f), c);
            }
            n => a.n = n.parse().map_err(|e| format!("bad count `{n}`: {e}"))?,
        }
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("run: {e}");
            std::process::exit(2);
        }
    };
    let shipped = seeds::all();
    match &args.mode {
        Mode::Worker => worker(&args, &shipped),
        Mode::Only(i) => {
            let (src, origin) = make(args.seed, *i, &shipped);
            println!("// input {i} ({origin:?})\n{src}");
            println!("// oracle: {:?}", check_with(&src, &opts(args.full)));
        }
        Mode::Bytes(file) => match std::fs::read(file) {
            Ok(bytes) => {
                let (src, origin) = input(&mut Dice::from_bytes(&bytes), &shipped);
                println!("// from {} ({origin:?})\n{src}", file.display());
                println!("// oracle: {:?}", check_with(&src, &opts(args.full)));
            }
            Err(e) => eprintln!("run: {}: {e}", file.display()),
        },
        Mode::Check(file) => match std::fs::read_to_string(file) {
            Ok(src) => {
                println!("oracle: {:?}", check_with(&src, &opts(args.full)));
                let r = mechgen_codegen::generate_str(&src, &opts(args.full).generation);
                match r {
                    Ok(g) => println!("engine: Ok, {} module(s)", g.modules.len()),
                    Err(e) => println!("engine: Err at {:?}: {}", e.span.start(), e.message),
                }
            }
            Err(e) => eprintln!("run: {}: {e}", file.display()),
        },
        Mode::Minimize(file, class) => {
            let src = std::fs::read_to_string(file).unwrap_or_default();
            let min = minimize(&src, class, &opts(args.full), 400);
            print!("{min}");
        }
        Mode::Parent => parent(&args, &shipped),
        Mode::Emit(batch) => emit(&args, *batch, None),
        Mode::EmitOnly(i) => {
            let c = mechgen_fuzzgen::emit::case(&mut Dice::from_seed(seed_of(args.seed, *i)), "");
            println!("// emit input {i}; options: {}\n{}", c.variant(), c.src);
        }
        Mode::EmitCheck(file) => {
            let src = std::fs::read_to_string(file).unwrap_or_default();
            let case = mechgen_fuzzgen::emit::Case {
                label: file.display().to_string(),
                src,
                opts: mechgen_codegen::Options::default(),
            };
            emit(&args, 1, Some(vec![case]));
        }
        Mode::EmitMinimize(file, class) => {
            let src = std::fs::read_to_string(file).unwrap_or_default();
            let case = mechgen_fuzzgen::emit::Case {
                label: file.display().to_string(),
                src,
                opts: mechgen_codegen::Options::default(),
            };
            let opts = mechgen_fuzzgen::emit::EmitOptions {
                dir: std::env::current_dir()
                    .map(|d| d.join(&args.scratch))
                    .unwrap_or_else(|_| args.scratch.clone()),
                ..mechgen_fuzzgen::emit::EmitOptions::default()
            };
            print!(
                "{}",
                mechgen_fuzzgen::emit::minimize(&case, class, &opts, 200)
            );
        }
        Mode::EmitShipped => emit(&args, 30, Some(shipped_cases(&shipped))),
    }
}

/// Checks inputs `start..start + n`, one line per input on stdout:
/// `i origin ok|err|F<TAB>class<TAB>detail`, `S i` before each check (for crash attribution).
fn worker(args: &Args, shipped: &[(String, String)]) {
    let out = std::io::stdout();
    let mut out = out.lock();
    for i in args.start..args.start + args.n {
        let (src, origin) = make(args.seed, i, shipped);
        let _ = writeln!(out, "S {i}");
        let _ = out.flush();
        let line = match check_with(&src, &opts(args.full)) {
            Ok(()) => format!("{i} {origin:?} done"),
            Err(f) => format!(
                "{i} {origin:?} F\t{}\t{}",
                f.class(),
                f.to_string().replace(['\n', '\t'], " ")
            ),
        };
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

#[derive(Default)]
struct Class {
    count: usize,
    first: u64,
    detail: String,
}

fn parent(args: &Args, shipped: &[(String, String)]) {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("run: cannot find own executable: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("run: cannot create {}: {e}", args.out.display());
        std::process::exit(1);
    }
    let t0 = Instant::now();
    let end = args.start + args.n;
    let mut next = args.start;
    let mut classes: BTreeMap<String, Class> = BTreeMap::new();
    let mut done = 0u64;
    let mut generated = 0u64;
    let stderr_path = args.out.join("worker-stderr.txt");
    while next < end {
        let stderr = match std::fs::File::create(&stderr_path) {
            Ok(f) => Stdio::from(f),
            Err(_) => Stdio::null(),
        };
        let mut child = match Command::new(&exe)
            .args([
                "--worker",
                "--seed",
                &args.seed.to_string(),
                "--start",
                &next.to_string(),
                &(end - next).to_string(),
            ])
            .args(args.full.then_some("--full"))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("run: cannot start worker: {e}");
                std::process::exit(1);
            }
        };
        let Some(stdout) = child.stdout.take() else {
            eprintln!("run: no worker stdout");
            std::process::exit(1);
        };
        let mut started: Option<u64> = None;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(i) = line.strip_prefix("S ") {
                started = i.parse().ok();
                continue;
            }
            let mut words = line.splitn(3, ' ');
            let i: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
            let origin = words.next().unwrap_or("");
            let rest = words.next().unwrap_or("");
            started = None;
            next = i + 1;
            done += 1;
            if origin == "Generated" {
                generated += 1;
            }
            if let Some(f) = rest.strip_prefix("F\t") {
                let mut parts = f.splitn(2, '\t');
                let class = parts.next().unwrap_or("").to_string();
                let detail = parts.next().unwrap_or("").to_string();
                let e = classes.entry(class).or_insert_with(|| Class {
                    first: i,
                    detail,
                    ..Class::default()
                });
                e.count += 1;
            }
            if done.is_multiple_of(5000) {
                eprintln!(
                    "{done} inputs ({generated} generated), {} classes, {:.0} s",
                    classes.len(),
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        let status = child.wait();
        if let Some(i) = started {
            // The worker died while checking input `i`: classify by its last words.
            let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            let last: Vec<&str> = said.lines().filter(|l| !l.trim().is_empty()).collect();
            let why = if said.contains("has overflowed its stack") {
                "stack overflow".to_string()
            } else {
                match status {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                }
            };
            let detail = last[last.len().saturating_sub(2)..].join(" / ");
            let e = classes
                .entry(format!("Crash ({why})"))
                .or_insert_with(|| Class {
                    first: i,
                    detail,
                    ..Class::default()
                });
            e.count += 1;
            done += 1;
            next = i + 1;
        } else if next < end {
            eprintln!("run: worker stopped early at {next}");
            break;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut summary = format!(
        "{done} inputs ({generated} generated by the grammar), seed {}, {secs:.0} s, {:.0} inputs/s\n\n",
        args.seed,
        done as f64 / secs
    );
    for (k, (class, c)) in classes.iter().enumerate() {
        let (src, _) = make(args.seed, c.first, shipped);
        let path = args.out.join(format!("class-{k:02}.mech"));
        let _ = std::fs::write(&path, &src);
        let mut min_note = String::new();
        if !class.starts_with("Crash") && !class.starts_with("Timeout") {
            let min = Command::new(&exe)
                .args(args.full.then_some("--full"))
                .arg("--minimize")
                .arg(&path)
                .arg(class)
                .stderr(Stdio::null())
                .output();
            if let Ok(o) = min {
                let min_path = args.out.join(format!("class-{k:02}.min.mech"));
                let _ = std::fs::write(&min_path, &o.stdout);
                min_note = format!(" (minimised: {} bytes)", o.stdout.len());
            }
        }
        summary.push_str(&format!(
            "class-{k:02}: {class}\n  {} inputs, first #{}{min_note}\n  {}\n",
            c.count, c.first, c.detail
        ));
    }
    let _ = std::fs::write(args.out.join("summary.txt"), &summary);
    print!("{summary}");
}

/// `--emit`: inputs `start..start + n` (`emit::case` of `Dice::from_seed(seed_of(S, i))`:
/// grammar-generated with outputs and inequalities, in the plain, generic-and-derivatives
/// or f32 variant), their emitted code compiled in batches of `batch` in
/// `target/fuzzgen-emit` and checked there. Findings (first input of each class, its
/// source written to `DIR/emit-class-NN.mech`) and counts to `DIR/emit-summary.txt`.
fn emit(args: &Args, batch: usize, fixed: Option<Vec<mechgen_fuzzgen::emit::Case>>) {
    use mechgen_fuzzgen::emit;
    let (start, n) = match &fixed {
        Some(c) => (0, c.len() as u64),
        None => (args.start, args.n),
    };
    let opts = emit::EmitOptions {
        dir: std::env::current_dir()
            .map(|d| d.join(&args.scratch))
            .unwrap_or_else(|_| args.scratch.clone()),
        ..emit::EmitOptions::default()
    };
    let _ = std::fs::create_dir_all(&args.out);
    let t0 = Instant::now();
    let end = start + n;
    let mut total = emit::BatchReport::default();
    let mut classes: BTreeMap<String, (usize, emit::EmitFinding)> = BTreeMap::new();
    let mut sources: BTreeMap<String, emit::Case> = BTreeMap::new();
    let mut i = start;
    while i < end {
        let hi = (i + batch.max(1) as u64).min(end);
        let cases: Vec<emit::Case> = match &fixed {
            Some(c) => c[i as usize..hi as usize].to_vec(),
            None => (i..hi)
                .map(|k| emit::case(&mut Dice::from_seed(seed_of(args.seed, k)), &k.to_string()))
                .collect(),
        };
        for c in &cases {
            sources.insert(c.label.clone(), c.clone());
        }
        match emit::check_batch(&cases, &opts) {
            Ok(r) => {
                total.checked += r.checked;
                total.skipped += r.skipped;
                total.modules += r.modules;
                total.states += r.states;
                total.checks += r.checks;
                total.compile_secs += r.compile_secs;
                total.run_secs += r.run_secs;
                for (k, v) in r.skip_reasons {
                    *total.skip_reasons.entry(k).or_default() += v;
                }
                for (k, v) in r.unchecked {
                    *total.unchecked.entry(k).or_default() += v;
                }
                for f in r.findings {
                    if !classes.contains_key(&f.class()) {
                        eprintln!(
                            "new class {}: input #{} module `{}`: {}",
                            f.class(),
                            f.label,
                            f.module,
                            f.detail
                        );
                    }
                    let e = classes.entry(f.class()).or_insert((0, f.clone()));
                    e.0 += 1;
                }
            }
            Err(e) => {
                eprintln!("run: batch {i}..{hi}: {e}");
                std::process::exit(1);
            }
        }
        i = hi;
        eprintln!(
            "{} inputs ({} compiled and checked, {} modules, {} states, {} checks), {} classes, {:.0} s",
            i - start,
            total.checked,
            total.modules,
            total.states,
            total.checks,
            classes.len(),
            t0.elapsed().as_secs_f64()
        );
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut summary = format!(
        "--emit: {} inputs, seed {}: {} compiled and checked ({} skipped: engine errors), {} modules, {} states, {} checks; {secs:.0} s ({:.2} inputs/s; compiling {:.0} s, checking {:.0} s)\n",
        n,
        args.seed,
        total.checked,
        total.skipped,
        total.modules,
        total.states,
        total.checks,
        total.checked as f64 / secs,
        total.compile_secs,
        total.run_secs,
    );
    summary.push_str(&format!(
        "engine errors (skipped): {:?}\n",
        total.skip_reasons
    ));
    if !total.unchecked.is_empty() {
        summary.push_str(&format!(
            "functions no check covers: {:?}\n",
            total.unchecked
        ));
    }
    summary.push('\n');
    for (k, (class, (count, f))) in classes.iter().enumerate() {
        if let Some(c) = sources.get(&f.label) {
            let _ = std::fs::write(
                args.out.join(format!("emit-class-{k:02}.mech")),
                format!("// {}; options: {}\n{}", c.label, c.variant(), c.src),
            );
        }
        summary.push_str(&format!(
            "emit-class-{k:02}: {class}\n  {count} findings, first input #{} module `{}`\n  {}\n",
            f.label, f.module, f.detail
        ));
    }
    let _ = std::fs::write(args.out.join("emit-summary.txt"), &summary);
    print!("{summary}");
}

/// `--emit-shipped`: every shipped input (`seeds::all`) and every `.mech` file under
/// `examples/`, as plain `f64`, `generic` + `derivatives`, and `f32`.
fn shipped_cases(shipped: &[(String, String)]) -> Vec<mechgen_fuzzgen::emit::Case> {
    let mut sources: Vec<(String, String)> = shipped.to_vec();
    let mut dirs = vec![PathBuf::from("examples")];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "mech") {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    let name = p.display().to_string();
                    if !sources.iter().any(|(n, _)| *n == name) {
                        sources.push((name, t));
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (name, src) in sources {
        for (tag, generic, scalar) in [
            ("f64", false, None),
            ("generic", true, None),
            ("f32", false, Some("f32")),
        ] {
            out.push(mechgen_fuzzgen::emit::Case {
                label: format!("{name} [{tag}]"),
                src: src.clone(),
                opts: mechgen_codegen::Options {
                    generic,
                    derivatives: generic,
                    scalar: scalar.map(str::to_string),
                    ..mechgen_codegen::Options::default()
                },
            });
        }
    }
    out
}
