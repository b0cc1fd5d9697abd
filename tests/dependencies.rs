//! The run-time and build-time crates stay apart (issue 10): a program that generates in
//! build.rs links the runtime without the engine, and the build script compiles the engine
//! without the runtime. Read from `cargo tree` on this workspace's lock file.

use std::process::Command;

/// The crate names in the normal-dependency tree of `package` (with `args` added),
/// sorted and deduplicated.
fn normal_dependencies(package: &str, args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "-p",
            package,
        ])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {package} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_runtime_crate_alone_compiles_no_engine() {
    let deps = normal_dependencies("mechgen", &["--no-default-features"]);
    for banned in [
        "syn",
        "prettyplease",
        "rand",
        "proc-macro2",
        "mechgen-codegen",
        "mechgen-macros",
        "nalgebra-macros",
    ] {
        assert!(
            !deps.iter().any(|d| d == banned),
            "`mechgen` without default features depends on {banned}: {deps:?}"
        );
    }
    assert!(deps.iter().any(|d| d == "mechgen-runtime"), "{deps:?}");
    assert!(deps.iter().any(|d| d == "nalgebra"), "{deps:?}");
}

#[test]
fn the_macro_is_the_default_feature() {
    let deps = normal_dependencies("mechgen", &[]);
    assert!(deps.iter().any(|d| d == "mechgen-macros"), "{deps:?}");
}

#[test]
fn the_build_crate_compiles_no_runtime() {
    let deps = normal_dependencies("mechgen-build", &[]);
    for banned in ["mechgen", "mechgen-runtime", "nalgebra", "simba"] {
        assert!(
            !deps.iter().any(|d| d == banned),
            "`mechgen-build` depends on {banned}: {deps:?}"
        );
    }
    assert!(deps.iter().any(|d| d == "mechgen-codegen"), "{deps:?}");
}
