//! The `mechgen` CLI is deterministic: separate processes on the same input (and seed)
//! write byte-identical Rust.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CLI: &str = env!("CARGO_BIN_EXE_mechgen");

/// A path under the system temp dir, unique to this process and `name`.
fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mechgen-determinism-{}-{name}", std::process::id()))
}

fn example(rel: &str) -> PathBuf {
    // The workspace root: the examples live there.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

#[track_caller]
fn run(args: &[&str]) -> Output {
    let out = Command::new(CLI).args(args).output().expect("run mechgen");
    assert!(
        out.status.success(),
        "mechgen {args:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs the CLI twice on `input` (with `extra` arguments), writing to two files, and
/// returns both outputs.
fn generate_twice(input: &Path, tag: &str, extra: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let mut texts = Vec::new();
    for k in 0..2 {
        let out = temp_path(&format!("{tag}-{k}.rs"));
        let _ = std::fs::remove_file(&out);
        let mut args = vec![input.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("wrote "),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        texts.push(std::fs::read(&out).expect("output written"));
        std::fs::remove_file(&out).ok();
    }
    let b = texts.pop().unwrap();
    let a = texts.pop().unwrap();
    (a, b)
}

#[track_caller]
fn assert_identical(a: &[u8], b: &[u8], what: &str) {
    assert!(!a.is_empty(), "{what}: empty output");
    if a != b {
        let (ta, tb) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
        let line = ta
            .lines()
            .zip(tb.lines())
            .position(|(x, y)| x != y)
            .map_or(ta.lines().count().min(tb.lines().count()), |i| i);
        panic!(
            "{what}: outputs differ ({} vs {} bytes), first at line {}:\n  {:?}\n  {:?}",
            a.len(),
            b.len(),
            line + 1,
            ta.lines().nth(line),
            tb.lines().nth(line)
        );
    }
}

#[test]
fn stewart_platform_is_deterministic() {
    let input = example("examples/stewart_platform/stewart.mech");
    let (a, b) = generate_twice(&input, "stewart", &[]);
    assert_identical(&a, &b, "stewart.mech");
    let text = String::from_utf8(a).unwrap();
    assert!(text.contains("pub mod "));
    assert!(
        text.contains("pub const NQ: usize = 24"),
        "NQ of the Stewart platform"
    );
}

#[test]
fn seven_body_is_deterministic() {
    let input = example("examples/seven_body/andrews.mech");
    let (a, b) = generate_twice(&input, "andrews", &[]);
    assert_identical(&a, &b, "andrews.mech");
    assert!(String::from_utf8(a).unwrap().contains("pub mod andrews"));
}

#[test]
fn explicit_seed_is_deterministic() {
    let input = example("examples/seven_body/andrews.mech");
    let (a, b) = generate_twice(&input, "andrews-seed7", &["--seed", "7"]);
    assert_identical(&a, &b, "andrews.mech --seed 7");
    let input = example("examples/stewart_platform/stewart.mech");
    let (a, b) = generate_twice(&input, "stewart-seed7", &["--seed", "7"]);
    assert_identical(&a, &b, "stewart.mech --seed 7");
}

#[test]
fn no_arguments_prints_the_stewart_sizes() {
    let o = run(&[]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("built-in Stewart platform"), "{stdout}");
    assert!(stdout.contains("NQ = 24"), "{stdout}");
    assert!(stdout.contains("NC = 18"), "{stdout}");
    assert!(stdout.contains("DOF = 6"), "{stdout}");
    assert!(stdout.contains("pub fn null_space"), "{stdout}");
}

#[test]
fn a_bad_file_fails_with_a_located_error() {
    let input = temp_path("bad.mech");
    std::fs::write(
        &input,
        "pub mod m {\n    coord x = 1.0;\n    coord y = 0.0;\n    constraint x * x + yy == 1.0;\n}\n",
    )
    .unwrap();
    let o = Command::new(CLI).arg(&input).output().expect("run mechgen");
    std::fs::remove_file(&input).ok();
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let expected = format!(
        "error: {}:4:24: unknown name `yy`; did you mean `y`?",
        input.display()
    );
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(
        stderr.contains("4 |     constraint x * x + yy == 1.0;\n  |                        ^^"),
        "{stderr}"
    );
}
