//! The emitted Rust in the fuzz loop (issue 33 item 6), bounded: one small batch of
//! grammar-generated mechanisms (every variant: plain `f64`, `generic` + `derivatives`,
//! `f32`) compiled in a scratch crate (`target/fuzzgen-emit`) and checked there; and a
//! planted emission error (a constant of one emitted function changed in the written
//! source) that the checker must report. The first run compiles the scratch crate's
//! dependencies (nalgebra, the runtime) into `target/fuzzgen-emit/target` (about 20 s);
//! later runs compile the batch only.

use std::sync::Mutex;
use std::time::Instant;

use mechgen_fuzzgen::emit::{self, BatchReport, Case, EmitKind, EmitOptions};
use mechgen_fuzzgen::Dice;

/// The two tests share the scratch crate: one at a time.
static SCRATCH: Mutex<()> = Mutex::new(());

const SEED: u64 = 0x0e31_7000;

/// Two cases of each variant, from fixed seeds.
fn smoke_cases() -> Vec<Case> {
    let mut out: Vec<Case> = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for i in 0..200u64 {
        let c = emit::case(&mut Dice::from_seed(SEED + i), &format!("smoke {i}"));
        let v = c.variant();
        let kind = if v.starts_with("f32") {
            "f32"
        } else if v.contains("generic") {
            "generic"
        } else {
            "f64"
        };
        let n = counts.entry(kind).or_insert(0);
        // Only cases the engine generates count.
        if *n < 2 && mechgen_codegen::generate_str(&c.src, &c.opts).is_ok() {
            *n += 1;
            out.push(c);
        }
        if out.len() == 6 {
            break;
        }
    }
    out
}

fn show(r: &BatchReport) -> String {
    r.findings
        .iter()
        .map(|f| {
            format!(
                "{} `{}` {:?} {}: {}",
                f.label, f.module, f.kind, f.check, f.detail
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn emitted_code_of_a_small_batch_compiles_and_checks() {
    let _guard = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = Instant::now();
    let cases = smoke_cases();
    assert_eq!(cases.len(), 6, "two valid cases of each variant");
    let r = emit::check_batch(&cases, &EmitOptions::default()).expect("batch runs");
    println!(
        "emit smoke: {} cases, {} modules, {} states, {} checks; compile {:.1} s, run {:.1} s, total {:.1} s; unchecked {:?}",
        r.checked,
        r.modules,
        r.states,
        r.checks,
        r.compile_secs,
        r.run_secs,
        t0.elapsed().as_secs_f64(),
        r.unchecked
    );
    assert!(r.findings.is_empty(), "findings:\n{}", show(&r));
    assert_eq!(r.checked, 6);
    assert!(r.states >= 6, "{} states", r.states);
    assert!(r.checks > 500, "{} checks", r.checks);
    assert!(r.unchecked.is_empty(), "unchecked: {:?}", r.unchecked);
}

/// A mechanism with every family of functions: constraints, dynamics, an output, an
/// inequality, a parameter.
const PLANTED: &str = "mod circle {
    param l = 1.0;
    param k;
    coord x = 0.6;
    coord y = 0.8;
    coord th = 0.3;
    constraint x * x + y * y == l * l;
    body b { mass = 1.0, inertia = 0.1, com = vec2(x, y), angle = th }
    gravity = vec2(0.0, -9.81);
    force th = k * sin(t) * x - 0.1 * der(th);
    inequality floor: y * th + 0.5 >= 0.0;
    output tip = vec2(x + l * cos(th), y * th);
}
";

/// Replaces the first `from` inside the body of function `f` (its first definition
/// after `after`) by `to`.
fn plant(text: &str, after: &str, f: &str, from: &str, to: &str) -> String {
    let start = text.find(after).expect("anchor") + after.len();
    let def = start
        + [format!("fn {f}("), format!("fn {f}<")]
            .iter()
            .filter_map(|pat| text[start..].find(pat.as_str()))
            .min()
            .expect("function");
    let at = def + text[def..].find(from).expect("constant in the function");
    format!("{}{to}{}", &text[..at], &text[at + from.len()..])
}

#[test]
fn a_planted_emission_error_is_reported() {
    let _guard = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    let opts = EmitOptions::default();
    let case = |label: &str| Case {
        label: label.into(),
        src: PLANTED.into(),
        opts: mechgen_codegen::Options {
            generic: true,
            derivatives: true,
            ..mechgen_codegen::Options::default()
        },
    };
    let clean = emit::prepare(&case("clean"), &opts).expect("generates");
    // (label, function whose body is changed, constant, replacement, the check that must fail)
    let plants = [
        // An engine-checked value: `C_J` = [2x, 2y, 0].
        (
            "jacobian",
            "jacobian_into",
            "2.0",
            "2.002",
            "jacobian = engine",
        ),
        // A derivative of the dynamics, checked by differences only: `∂f/∂q` has
        // `k sin(t)` (th row, x column): `k` 0.1 % off.
        (
            "forces_q",
            "forces_jacobian_q_into",
            "p.k",
            "1.001 * p.k",
            "forces_jacobian_q",
        ),
        // The generic family: its `γ` (= −2 (ẋ² + ẏ²)).
        (
            "generic_gamma",
            "gamma_into",
            "2.0",
            "2.1",
            "gamma = generic::gamma",
        ),
        // The generic family's residual made constant in `x` (its derivative dropped on
        // dual numbers, its values unchanged).
        (
            "generic_value",
            "residual_into",
            "q[0]",
            "S::from_f64(Real::value(q[0]))",
            "dual::residual",
        ),
        // An output's velocity.
        (
            "output_velocity",
            "output_velocity_into",
            "q[",
            "1.01 * q[",
            "output_velocity",
        ),
    ];
    let mut batch = vec![clean.clone()];
    for (label, f, from, to, _) in &plants {
        let mut p = clean.clone();
        p.case.label = (*label).into();
        // The generic family's copy for `generic_gamma`, the plain function otherwise.
        let after = if label.starts_with("generic_") {
            "pub mod generic"
        } else {
            "pub struct Params"
        };
        p.text = plant(&p.text, after, f, from, to);
        assert_ne!(p.text, clean.text);
        batch.push(p);
    }
    let r = emit::check_prepared(batch, &opts, BatchReport::default()).expect("batch runs");
    println!("{}", show(&r));
    assert!(
        !r.findings.iter().any(|f| f.label == "clean"),
        "the unchanged module fails:\n{}",
        show(&r)
    );
    for (label, _, _, _, check) in &plants {
        assert!(
            r.findings
                .iter()
                .any(|f| f.label == *label && f.kind == EmitKind::Mismatch && f.check == *check),
            "planted `{label}` not reported as `{check}`:\n{}",
            show(&r)
        );
    }
    // A module that does not compile is reported as such, and the others still checked.
    let mut broken = clean.clone();
    broken.case.label = "broken".into();
    broken.text = plant(
        &broken.text,
        "pub struct Params",
        "residual_into",
        "let ",
        "let let ",
    );
    let r = emit::check_prepared(vec![clean, broken], &opts, BatchReport::default())
        .expect("batch runs");
    assert!(
        r.findings
            .iter()
            .any(|f| f.label == "broken" && f.kind == EmitKind::DoesNotCompile),
        "{}",
        show(&r)
    );
    assert_eq!(r.checked, 1, "the other input is still checked");
    assert!(
        r.findings.iter().all(|f| f.label == "broken"),
        "{}",
        show(&r)
    );
}
