//! Bounded smoke run of the structure-aware fuzzer (issue 9 "Deliver"): a fixed number of
//! inputs from fixed seeds — grammar-generated mechanisms and mutations of the shipped ones
//! — each checked by the oracle. Deterministic; about 20 s in a debug build on two busy
//! cores (bound: 60 s).
//!
//! A stack overflow aborts the test process; the input being checked is always written to
//! `$CARGO_TARGET_TMPDIR/smoke-current.mech` first, so that it can be found afterwards.

use std::time::Instant;

use mechgen_fuzzgen::{check, input, seeds, Dice, Origin};

/// Inputs checked (a fixed seed each: `SEED + i`).
const INPUTS: u64 = 300;
const SEED: u64 = 0x5eed_0009;

#[test]
fn smoke_run_of_generator_and_mutator() {
    let shipped = seeds::all();
    let current = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("smoke-current.mech");
    let t0 = Instant::now();
    let (mut generated, mut mutated) = (0, 0);
    let (mut t_gen, mut t_mut) = (0.0, 0.0);
    let mut findings = Vec::new();
    for i in 0..INPUTS {
        let (src, origin) = input(&mut Dice::from_seed(SEED + i), &shipped);
        match origin {
            Origin::Generated => generated += 1,
            _ => mutated += 1,
        }
        // Best effort: only for finding the input after a crash.
        let _ = std::fs::write(&current, format!("// smoke input {i}\n{src}"));
        let t = Instant::now();
        let verdict = check(&src);
        let dt = t.elapsed().as_secs_f64();
        if origin == Origin::Generated {
            t_gen += dt;
        } else {
            t_mut += dt;
        }
        if let Err(f) = verdict {
            findings.push((i, f, src));
        }
    }
    println!(
        "smoke: {INPUTS} inputs ({generated} generated: {t_gen:.1} s, {mutated} mutated: {t_mut:.1} s) in {:.1} s, {} findings",
        t0.elapsed().as_secs_f64(),
        findings.len()
    );
    for (i, f, src) in &findings {
        println!("--- input {i}: {f}");
        if src.len() < 2000 {
            println!("{src}");
        } else {
            println!("({} bytes)", src.len());
        }
    }
    assert!(
        findings.is_empty(),
        "{} of {INPUTS} inputs fail the oracle; first: input {} {}",
        findings.len(),
        findings[0].0,
        findings[0].1
    );
}

#[test]
fn generated_inputs_are_mostly_valid() {
    // The grammar generator's purpose: most of its inputs generate code.
    let n = 200;
    let mut ok = 0;
    let opts = mechgen_codegen::Options::default();
    for i in 0..n {
        let src = mechgen_fuzzgen::grammar::generate(&mut Dice::from_seed(SEED ^ (i << 20)));
        if mechgen_codegen::generate_str(&src, &opts).is_ok() {
            ok += 1;
        }
    }
    println!("{ok} of {n} generated inputs generate code");
    assert!(
        ok * 10 >= n * 8,
        "only {ok} of {n} generated inputs are valid"
    );
}
