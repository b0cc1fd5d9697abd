//! libFuzzer target over the text entry point (`mechgen_codegen::generate_str`): the fuzz
//! bytes drive the structure-aware generator / mutator (`mechgen_fuzzgen::input`), and the
//! oracle (`mechgen_fuzzgen::check`) must hold on every input. A finding panics, which
//! libFuzzer records as a crash with the bytes that produced it.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mechgen_fuzzgen::{check, input, seeds, Dice};

static SHIPPED: OnceLock<Vec<(String, String)>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let shipped = SHIPPED.get_or_init(seeds::all);
    let (src, _) = input(&mut Dice::from_bytes(data), shipped);
    if let Err(finding) = check(&src) {
        panic!("oracle: {finding}\n--- input ---\n{src}");
    }
});
