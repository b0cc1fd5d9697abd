//! Structure-aware fuzzing of the mechgen engine's text entry point.
//!
//! - [`grammar::generate`]: random, mostly valid mechanisms (consistent nominal
//!   configurations by construction);
//! - [`mutate::mutate`]: token-level mutations of the shipped inputs ([`seeds::all`]);
//! - [`oracle::check`]: what must hold for every input (no panic, bounded time, generated
//!   text parses, finite at the assembled nominal, located errors);
//! - [`input`]: one input from a [`Dice`] (seeded or driven by libFuzzer's bytes);
//! - [`minimize`]: shrinks a failing input while it fails the same way;
//! - [`emit`]: the emitted Rust itself in the loop — batches of generated modules compiled
//!   in a scratch crate and every generated function checked there against the engine's
//!   evaluator, central differences of the emitted functions, and identities between them.

#![warn(missing_docs)]

mod derivatives;
pub mod dice;
pub mod emit;
pub mod grammar;
pub mod mutate;
pub mod oracle;
pub mod seeds;

pub use dice::Dice;
pub use oracle::{check, check_with, Finding, Kind, OracleOptions};

/// How an input was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// By the grammar generator.
    Generated,
    /// By mutating a shipped input.
    Mutated,
    /// By mutating a generated input.
    MutatedGenerated,
}

/// One input: generated (about half), a mutated shipped input, or a mutated generated one.
pub fn input(dice: &mut Dice, shipped: &[(String, String)]) -> (String, Origin) {
    match dice.below(8) {
        0..=3 => (grammar::generate(dice), Origin::Generated),
        4 if !shipped.is_empty() => {
            let base = grammar::generate(dice);
            let other = &dice.pick(shipped).1;
            (mutate::mutate(dice, &base, other), Origin::MutatedGenerated)
        }
        _ if !shipped.is_empty() => {
            let base = dice.pick(shipped).1.clone();
            let other = dice.pick(shipped).1.clone();
            (mutate::mutate(dice, &base, &other), Origin::Mutated)
        }
        _ => (grammar::generate(dice), Origin::Generated),
    }
}

/// Shrinks `src` (by lines, then by tokens) while `check_with` still reports a finding of
/// the same [`Finding::class`]; at most `budget` checks.
pub fn minimize(src: &str, class: &str, opts: &OracleOptions, budget: usize) -> String {
    shrink(
        src,
        budget,
        |s| matches!(check_with(s, opts), Err(f) if f.class() == class),
    )
}

/// Delta debugging: drops chunks of halving size from `src`, first by lines, then by
/// tokens, while `fails` holds for what is left; at most `budget` calls of `fails`. The
/// shrinking loop of [`minimize`] and of the emitted-code minimiser (`emit::minimize`).
pub fn shrink(src: &str, budget: usize, mut fails: impl FnMut(&str) -> bool) -> String {
    let mut used = 0usize;
    let mut cur = src.to_string();
    for by_lines in [true, false] {
        let mut parts: Vec<String> = if by_lines {
            cur.split_inclusive('\n').map(str::to_string).collect()
        } else {
            mutate::lex(&cur)
                .iter()
                .map(|t| mutate::unlex(std::slice::from_ref(t)))
                .collect()
        };
        let mut chunk = (parts.len() / 2).max(1);
        loop {
            let mut i = 0;
            while i < parts.len() {
                if used >= budget {
                    return cur;
                }
                let mut trial = parts.clone();
                trial.drain(i..(i + chunk).min(parts.len()));
                let text: String = trial.concat();
                used += 1;
                if fails(&text) {
                    parts = trial;
                    cur = text;
                } else {
                    i += chunk;
                }
            }
            if chunk == 1 {
                break;
            }
            chunk /= 2;
        }
    }
    cur
}
