//! Golden output: the code `mechgen_build::Builder` writes, committed under
//! `tests/expected/`, so every change to generated code shows in review. Two example
//! mechanisms (plain `f64`) and one small mechanism per feature family in `tests/golden/`:
//! the generic family, dynamics derivatives, outputs, inequalities, `f32`, named charts and
//! velocity constraints. Each expected file is also compiled and its functions checked
//! against independent computations (`mechgen-build/tests/goldens.rs`; the examples'
//! through their `mechanism!` calls).
//!
//! Generation is deterministic (same input and seed, same bytes), so the comparison is
//! exact. After an intended change, rewrite the files and review their diff:
//!
//! ```text
//! MECHGEN_BLESS=1 cargo test -p mechgen-codegen --test golden
//! ```

use std::path::{Path, PathBuf};

use mechgen_codegen::{generate_file_text, Options};

/// The command that rewrites the expected files.
const BLESS: &str = "MECHGEN_BLESS=1 cargo test -p mechgen-codegen --test golden";

/// Lines of unchanged context shown around a difference.
const CONTEXT: usize = 3;

/// Removed or added lines shown per side before eliding the rest.
const MAX_SHOWN: usize = 12;

/// The repository root (this crate lives in `codegen/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The body of the `mechgen::mechanism! { ... }` call in an example source.
fn macro_body(src: &str) -> &str {
    const CALL: &str = "mechgen::mechanism! {";
    let start = src.find(CALL).expect("a mechanism! call") + CALL.len();
    let end = src.rfind('}').expect("its closing brace");
    &src[start..end]
}

/// A unified-style diff of the first differing region of `expected` and `actual`: up to
/// [`CONTEXT`] unchanged lines either side and up to [`MAX_SHOWN`] lines per side.
/// Empty when the texts are equal.
fn short_diff(expected: &str, actual: &str) -> String {
    if expected == actual {
        return String::new();
    }
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let prefix = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suffix = e[prefix..]
        .iter()
        .rev()
        .zip(a[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (e_end, a_end) = (e.len() - suffix, a.len() - suffix);
    let start = prefix.saturating_sub(CONTEXT);
    let after = suffix.min(CONTEXT);
    let mut out = format!(
        "@@ -{},{} +{},{} @@\n",
        start + 1,
        e_end - start + after,
        start + 1,
        a_end - start + after
    );
    for line in &e[start..prefix] {
        out.push_str(&format!(" {line}\n"));
    }
    for (sign, lines) in [('-', &e[prefix..e_end]), ('+', &a[prefix..a_end])] {
        for line in lines.iter().take(MAX_SHOWN) {
            out.push_str(&format!("{sign}{line}\n"));
        }
        if lines.len() > MAX_SHOWN {
            out.push_str(&format!(
                "{sign}... {} more lines\n",
                lines.len() - MAX_SHOWN
            ));
        }
    }
    for line in &e[e_end..e_end + after] {
        out.push_str(&format!(" {line}\n"));
    }
    if e.len() == a.len() && prefix == e.len() {
        // Same lines, different bytes: line endings or the final newline.
        out.push_str("(the texts differ only in line endings or the final newline)\n");
    }
    out
}

/// Generates the `mechanism!` body of `examples/mechanisms/{name}.rs` as
/// `mechgen_build::Builder` does (from `{name}.mech`) and compares the result with
/// `tests/expected/{name}.rs`.
fn check(name: &str) {
    let src_path = root().join(format!("examples/mechanisms/{name}.rs"));
    let src = std::fs::read_to_string(&src_path)
        .unwrap_or_else(|e| panic!("{}: {e}", src_path.display()));
    compare(name, macro_body(&src));
}

/// Generates `tests/golden/{name}.mech` and compares the result with
/// `tests/expected/{name}.rs`.
fn check_file(name: &str) {
    let src_path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.mech"));
    let src = std::fs::read_to_string(&src_path)
        .unwrap_or_else(|e| panic!("{}: {e}", src_path.display()));
    compare(name, &src);
}

/// Generates `src` as `{name}.mech` with the options of a written file and compares the
/// result with `tests/expected/{name}.rs`, or rewrites that file when `MECHGEN_BLESS` is
/// set.
fn compare(name: &str, src: &str) {
    let mech = PathBuf::from(format!("{name}.mech"));
    let (_, actual) = generate_file_text(&mech, src, &Options::for_files())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/expected/{name}.rs"));
    if std::env::var_os("MECHGEN_BLESS").is_some() {
        std::fs::write(&expected_path, &actual).expect("write the expected file");
        return;
    }
    let expected = std::fs::read_to_string(&expected_path)
        .unwrap_or_else(|e| panic!("{}: {e}\ncreate it with: {BLESS}", expected_path.display()));
    let diff = short_diff(&expected, &actual);
    assert!(
        diff.is_empty(),
        "the generated code of {name} differs from codegen/tests/expected/{name}.rs \
         (- expected, + generated):\n{diff}\
         If the change is intended, rewrite the expected files with\n    {BLESS}\n\
         and review their diff."
    );
}

#[test]
fn slider_crank() {
    check("slider_crank");
}

#[test]
fn five_bar() {
    check("five_bar");
}

#[test]
fn generic_family() {
    check_file("generic");
}

#[test]
fn dynamics_derivatives() {
    check_file("derivatives");
}

#[test]
fn outputs() {
    check_file("outputs");
}

#[test]
fn inequalities() {
    check_file("inequalities");
}

#[test]
fn scalar_f32() {
    check_file("f32");
}

#[test]
fn named_charts() {
    check_file("charts");
}

#[test]
fn velocity_constraints() {
    check_file("velocity");
}

/// Every mechanism under `tests/golden/` has its test above (a file added without one
/// would never be compared).
#[test]
fn every_golden_source_is_checked() {
    let this = include_str!("golden.rs");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/golden") {
        let path = entry.expect("entry").path();
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        assert!(
            this.contains(&format!("check_file(\"{stem}\")")),
            "tests/golden/{stem}.mech has no test in golden.rs"
        );
        n += 1;
    }
    assert_eq!(n, 7, "the seven feature families");
}

#[test]
fn the_diff_shows_context_and_both_sides() {
    let expected = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let actual = "a\nb\nc\nd\nE\nF2\nF3\ng\nh\n";
    assert_eq!(
        short_diff(expected, actual),
        "@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n-f\n+E\n+F2\n+F3\n g\n h\n"
    );
    assert_eq!(short_diff(expected, expected), "");
    assert_eq!(
        short_diff("x\n", "x"),
        "@@ -1,1 +1,1 @@\n x\n(the texts differ only in line endings or the final newline)\n"
    );
}

#[test]
fn the_diff_elides_long_changes() {
    let expected = (0..30).map(|i| format!("{i}\n")).collect::<String>();
    let actual = "0\n".to_string();
    let diff = short_diff(&expected, &actual);
    let lines: Vec<&str> = diff.lines().collect();
    assert_eq!(lines[0], "@@ -1,30 +1,1 @@");
    assert_eq!(lines[1], " 0");
    assert_eq!(lines[2], "-1");
    assert_eq!(lines[13], "-12");
    assert_eq!(lines[14], "-... 17 more lines");
    assert_eq!(lines.len(), 15);
}
