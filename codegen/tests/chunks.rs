//! The shape of long generated bodies split into `_partN` chunks: values cross chunks as
//! the arrays the chunks return (one array literal each), never through a buffer filled
//! with zeros first and written afterwards. What the chunked code computes is checked by
//! `tests/chunked.rs` (the same chain, compiled, against independent computations) and the
//! robots' tests.

use mechgen_codegen::{generate_str, pretty, Options};

/// A chain of `k` four-bar loops, the rocker of loop i driving the crank of loop i+1, at
/// an assembled configuration (as `bench/src/families.rs`).
fn four_bar_chain(k: usize) -> String {
    let (a, b, c, g) = (1.0f64, 3.0f64, 2.5f64, 3.0f64);
    let mut s = format!(
        "pub mod chain {{\n    param la = {a:?};\n    param lb = {b:?};\n    \
         param lc = {c:?};\n    param lg = {g:?};\n    coord th0 = 1.0;\n    independent th0;\n"
    );
    let mut cons = String::new();
    let mut theta = 1.0f64;
    for i in 1..=k {
        let x0 = 4.0 * (i as f64 - 1.0);
        let p = (x0 + a * theta.cos(), a * theta.sin());
        let (dx, dy) = (x0 + g - p.0, -p.1);
        let d = (dx * dx + dy * dy).sqrt();
        let l = (b * b - c * c + d * d) / (2.0 * d);
        let h = (b * b - l * l).max(0.0).sqrt();
        let q = (p.0 + l * dx / d - h * dy / d, p.1 + l * dy / d + h * dx / d);
        let phi = (q.1 - p.1).atan2(q.0 - p.0);
        let th = q.1.atan2(q.0 - x0 - g);
        s.push_str(&format!(
            "    coord ph{i} = {phi:?};\n    coord th{i} = {th:?};\n"
        ));
        cons.push_str(&format!(
            "    constraint vec2({x0:?} + la * cos(th{j}), la * sin(th{j})) + vec2(lb * cos(ph{i}), \
             lb * sin(ph{i})) == vec2({x0:?} + lg + lc * cos(th{i}), lc * sin(th{i}));\n",
            j = i - 1
        ));
        theta = th;
    }
    s.push_str(&cons);
    s.push_str("}\n");
    s
}

#[test]
fn chunks_return_their_values_and_nothing_is_zero_filled() {
    let src = four_bar_chain(120);
    let code = pretty(
        &generate_str(&src, &Options::default())
            .expect("generates")
            .tokens,
    );
    let parts: Vec<&str> = code
        .lines()
        .filter(|l| l.trim_start().starts_with("fn ") && l.contains("_part"))
        .collect();
    assert!(parts.len() >= 4, "expected chunked functions in\n{code}");
    // Every chunk returns an array and takes earlier chunks' arrays by shared reference.
    for (k, line) in code.lines().enumerate() {
        let l = line.trim_start();
        if l.starts_with("fn ") && l.contains("_part") {
            let sig: String = code
                .lines()
                .skip(k)
                .take_while(|l| !l.trim_end().ends_with('{'))
                .chain(code.lines().skip(k).find(|l| l.trim_end().ends_with('{')))
                .collect();
            assert!(sig.contains(") -> [f64; "), "{sig}");
            assert!(!sig.contains("&mut"), "{sig}");
        }
    }
    // No zero-filled buffer, no scratch written through a reference.
    let compact: String = code.split_whitespace().collect();
    assert!(!compact.contains("[0.0;"), "zero fill in\n{code}");
    assert!(!code.contains("scratch"), "scratch buffer in\n{code}");
    // Deterministic: the same text again.
    let again = pretty(
        &generate_str(&src, &Options::default())
            .expect("generates")
            .tokens,
    );
    assert!(again == code, "generated code differs between two runs");
}
