//! Deep inputs (issue 9.4): nesting beyond the parser's bound is a located error, and a
//! long flat sum generates (its lowering does not recurse per term).
//!
//! Every case runs on a thread with a 2 MiB stack (Rust's default for spawned threads,
//! and less than the 8 MiB rustc's main thread gives a proc macro), so the test crashes
//! (stack overflow) if a recursive pass returns.

use std::path::Path;
use std::str::FromStr;

use mechgen_codegen::proc_macro2::TokenStream;

use mechgen_codegen::{generate_str, locate, Options};

const STACK: usize = 2 << 20;

/// Runs `f` on a thread with a [`STACK`]-byte stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match std::thread::Builder::new().stack_size(STACK).spawn(f) {
        Ok(h) => match h.join() {
            Ok(v) => v,
            Err(e) => std::panic::resume_unwind(e),
        },
        Err(e) => panic!("cannot spawn a test thread: {e}"),
    }
}

/// A mechanism whose constraint is `x == r * cos(a)` with `x` wrapped in `depth`
/// parentheses.
fn nested(depth: usize) -> String {
    format!(
        "pub mod deep {{\n    param r = 1.0;\n    coord a = 0.3;\n    coord x = 0.955336489125606;\n    constraint {}x{} == r * cos(a);\n}}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    )
}

/// Generates `src` on a small stack and returns the located error (`path:line:col: message`).
fn located_error(src: String) -> String {
    on_small_stack(move || match generate_str(&src, &Options::default()) {
        Ok(_) => "generated".to_string(),
        Err(e) => locate(Path::new("deep.mech"), &src, &e).to_string(),
    })
}

#[track_caller]
fn assert_nesting_error(depth: usize) {
    let msg = located_error(nested(depth));
    // The module's braces are level 1, so the 128th parenthesis (column 16 + 127) is the
    // first one beyond the bound.
    let first = msg.lines().next().unwrap_or("");
    assert_eq!(
        first,
        format!(
            "deep.mech:5:{}: the input nests too deeply: parentheses nested deeper than 128 levels (the bound protects the parser's stack); split the expression with `let` bindings",
            16 + 127
        ),
        "depth {depth}"
    );
}

#[test]
fn parentheses_3000_deep_are_a_located_error() {
    assert_nesting_error(3_000);
}

#[test]
fn parentheses_100000_deep_are_a_located_error() {
    assert_nesting_error(100_000);
}

#[test]
fn nesting_at_the_bound_generates() {
    // 127 parentheses inside the module's braces: exactly the bound. syn parses them
    // recursively, so this one runs on 8 MiB (rustc's thread), as in the proc macro.
    let src = nested(127);
    let out = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            generate_str(&src, &Options::default())
                .map(|g| g.modules.len())
                .map_err(|e| e.message)
        })
        .map(|h| h.join());
    match out {
        Ok(Ok(Ok(n))) => assert_eq!(n, 1),
        Ok(Ok(Err(e))) => panic!("error at the bound: {e}"),
        _ => panic!("the generation thread failed"),
    }
}

#[test]
fn prefix_minus_runs_are_a_located_error() {
    let src = format!(
        "pub mod deep {{\n    coord a = 0.3;\n    coord x = 0.3;\n    constraint x == {}a;\n}}\n",
        "- ".repeat(5_000)
    );
    let msg = located_error(src);
    assert!(
        msg.starts_with(&format!(
            "deep.mech:4:{}: the input nests too deeply: more than 128 prefix operators in a row",
            20 + 2 * 128 + 1
        )),
        "{msg}"
    );
}

#[test]
fn method_chains_are_a_located_error() {
    let src = format!(
        "pub mod deep {{\n    coord a = 0.3;\n    coord x = 0.3;\n    constraint x == a{};\n}}\n",
        ".sin()".repeat(3_000)
    );
    let msg = located_error(src);
    assert!(
        msg.starts_with(&format!(
            "deep.mech:4:{}: the input nests too deeply: more than 128 chained `.` accesses",
            21 + 6 * 128 + 1
        )),
        "{msg}"
    );
}

/// `x == sum_{i<n} w_i * y_i`-style constraint: `x + c_1 + c_2 + ... == k`, with the terms
/// alternating `+` and `-` and every 3rd one a product.
fn long_sum(n: usize) -> (String, f64) {
    let mut terms = String::new();
    let mut value = 0.0f64;
    for i in 1..=n {
        let c = (i % 7) as f64 * 0.25 + 0.5;
        let (sign, s) = if i % 2 == 0 {
            (-1.0, " - ")
        } else {
            (1.0, " + ")
        };
        terms.push_str(s);
        if i % 3 == 0 {
            terms.push_str(&format!("{c:?} * k"));
        } else {
            terms.push_str(&format!("{c:?}"));
        }
        value += sign * c * if i % 3 == 0 { 2.0 } else { 1.0 };
    }
    // The nominal on the constraint (generation rejects nominals far off it).
    let x0 = 0.3f64.cos() - value;
    let src = format!(
        "pub mod long_sum {{\n    param k = 2.0;\n    coord a = 0.3;\n    coord x = {x0:?};\n    constraint x{terms} == cos(a);\n}}\n"
    );
    (src, value)
}

#[test]
fn sum_of_20000_terms_generates_with_the_right_residual() {
    let (src, value) = long_sum(20_000);
    let got = on_small_stack(move || {
        let ts = TokenStream::from_str(&src).unwrap_or_else(|e| panic!("{e}"));
        let (models, _) = mechgen_codegen::models(ts).unwrap_or_else(|e| panic!("{e}"));
        let (m, arena) = &models[0];
        // Residual at q = (a, x) = (0.5, 1.25), k = 2: x + Σ − cos(a).
        let r = arena.eval(&[m.constraints[0].expr], &|s| match s {
            mechgen_codegen::expr::Sym::Coord(0) => 0.5,
            mechgen_codegen::expr::Sym::Coord(_) => 1.25,
            mechgen_codegen::expr::Sym::Param(_) => 2.0,
            _ => 0.0,
        })[0];
        // Through emission and pretty-printing: the residual's DAG is a chain 20,000 deep.
        let generated = generate_str(&src, &Options::default()).map(|g| {
            mechgen_codegen::pretty(&g.tokens)
                .matches("pub fn residual(")
                .count()
        });
        (r, generated.map_err(|e| e.message))
    });
    let expected = 1.25 + value - 0.5f64.cos();
    assert!(
        (got.0 - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        "residual {} vs {expected}",
        got.0
    );
    assert_eq!(got.1, Ok(1));
}

/// Found by the fuzzer on the merged engine: a 20,000-term sum inside parentheses (so the
/// top of the equation is not itself a long chain) reached syn's recursive printing when
/// the equation's label was made. Beside another error (`param t`), so errors are collected.
#[test]
fn parenthesised_long_sum_beside_an_error_does_not_overflow() {
    let terms: String = (0..20_000)
        .map(|i| if i % 2 == 0 { " + x" } else { " - x" })
        .collect();
    let src = format!(
        "pub mod m {{\n    param t = 1.0;\n    coord x = 1.0;\n    coord y = 0.0;\n    constraint (x{terms}) * 1.0 + y == 1.0;\n}}\n"
    );
    let msg = on_small_stack(move || match generate_str(&src, &Options::default()) {
        Ok(_) => String::from("generated"),
        Err(e) => e.message,
    });
    assert!(msg.contains("`t` is reserved"), "{msg}");
}

/// Found by the fuzzer (seed 6, input 2,311): errors located on a long sum printed it to
/// find its span (syn's printing recurses once per operator) and overflowed the stack. Each
/// of these is an error about a 20,000-term sum: as the callee of a call, as a `const`
/// that depends on a coordinate, as a body's `com` of the wrong dimension, and beside a
/// wrong argument of a call (the call's span is taken before its arguments are checked).
#[test]
fn errors_on_long_sums_do_not_print_them() {
    let terms: String = (0..20_000)
        .map(|i| if i % 2 == 0 { " + x" } else { " - x" })
        .collect();
    let cases = [
        (
            format!("constraint atan((cos{terms})(0.3)) + y == 1.0;"),
            "only named functions can be called",
        ),
        (
            format!("const k = x{terms}; constraint x + y == 1.0;"),
            "a `const` must be a constant expression",
        ),
        (
            format!(
                "constraint x + y == 1.0; body b {{ mass = 1.0, inertia = 1.0, com = vec3(x{terms}, 0.0, 0.0), angle = x }}"
            ),
            "is planar (it has an `angle`) but its `com` is a 3-vector",
        ),
        (
            format!("constraint atan2(x{terms}, vec2(x, y)) + y == 1.0;"),
            "expected a scalar, found a 2-vector",
        ),
    ];
    for (body, expected) in cases {
        let src = format!("pub mod m {{\n    coord x = 1.0;\n    coord y = 0.0;\n    {body}\n}}\n");
        let msg = on_small_stack(move || match generate_str(&src, &Options::default()) {
            Ok(_) => String::from("generated"),
            Err(e) => e.message,
        });
        assert_ne!(msg, "generated");
        assert!(msg.contains(expected), "{msg}");
    }
}
