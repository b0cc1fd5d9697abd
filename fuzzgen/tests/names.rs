//! The names vocabulary's contract on random mechanisms: the user's local names are chosen
//! before emission around the names the generated code binds
//! (`mechgen_codegen::emit::names::vocabulary`), and `mechgen_codegen::check_names` fails
//! when the generated code binds a name the vocabulary misses (a user's name could shadow
//! it). `codegen/tests/names_contract.rs` runs it on the repository's models; this runs it on
//! mechanisms of the grammar generator (bodies, forces, outputs, inequalities, charts, in
//! random combinations), with all functions and with the generic family. Bounded: 40 inputs,
//! a few seconds in a debug build.

use std::str::FromStr;

use mechgen_codegen::{check_names, Options};
use mechgen_fuzzgen::{grammar, Dice};
use proc_macro2::TokenStream;

const INPUTS: u64 = 40;
const SEED: u64 = 0x5eed_0051;

#[test]
fn random_mechanisms_bind_only_names_of_the_vocabulary() {
    let mut violations = Vec::new();
    let mut checked = 0;
    let inputs = std::env::var("MECHGEN_NAMES_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(INPUTS);
    for i in 0..inputs {
        let src = grammar::generate(&mut Dice::from_seed(SEED + i));
        let Ok(tokens) = TokenStream::from_str(&src) else {
            continue;
        };
        let generic = Options {
            generic: true,
            ..Options::default()
        };
        for opts in [Options::default(), generic] {
            match check_names(tokens.clone(), &opts) {
                Ok(_) => checked += 1,
                Err(e) => {
                    let text = e.to_string();
                    if text.contains("missing from its vocabulary") {
                        violations.push(format!("seed {}: {text}\n{src}", SEED + i));
                    }
                }
            }
        }
    }
    eprintln!("{inputs} mechanisms: {checked} generations checked");
    assert!(violations.is_empty(), "{}", violations.join("\n\n"));
    // The generator's inputs are mostly valid: most are generated (and so checked).
    assert!(
        checked >= inputs as usize,
        "only {checked} generations checked"
    );
}
