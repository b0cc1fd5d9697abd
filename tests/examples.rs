//! Every example mechanism checked against independent computations.

use mechgen_test_support as common;

include!("../examples/mechanisms/slider_crank.rs");
include!("../examples/mechanisms/spatial_slider_crank.rs");

/// The body of a `mechgen::mechanism! { ... }` file, as source text for the engine.
fn body(file: &str) -> &str {
    let start =
        file.find("mechgen::mechanism! {").expect("macro call") + "mechgen::mechanism! {".len();
    let end = file.rfind('}').expect("closing brace");
    &file[start..end]
}

const SLIDER: &str = include_str!("../examples/mechanisms/slider_crank.rs");
const SPATIAL: &str = include_str!("../examples/mechanisms/spatial_slider_crank.rs");

macro_rules! mechanism_tests {
    ($t:ident, $m:ident, $src:expr, $seed:expr) => {
        mod $t {
            use super::*;
            use crate::$m as m;
            type M = m::Model;
            const NQ: usize = m::NQ;
            const NC: usize = m::NC;
            const DOF: usize = m::DOF;

            #[test]
            fn jacobian_matches_central_differences() {
                common::check_jacobian_fd::<NQ, NC, DOF, M>(&m::Params::default(), 100, $seed);
            }

            #[test]
            fn residual_matches_dag() {
                common::check_residual_against_dag::<NQ, NC, DOF, M>(
                    body($src),
                    stringify!($m),
                    &m::Params::default(),
                    100,
                    $seed,
                );
            }

            #[test]
            fn null_space_on_manifold() {
                let p = m::Params::default();
                let configs = common::random_configurations::<NQ, NC, DOF, M>(&p, 1000, 0.2, $seed);
                let min_pivot = common::check_null_space::<NQ, NC, DOF, M>(&p, &configs, $seed);
                assert!(min_pivot > 0.0);
            }
        }
    };
}

mechanism_tests!(slider_crank_tests, slider_crank, SLIDER, 11);
mechanism_tests!(
    spatial_slider_crank_tests,
    spatial_slider_crank,
    SPATIAL,
    12
);

/// Turbofish arguments that are integer literals (`::<f64, 3>`, `::<_, 2>`) on `line`.
fn written_sizes(line: &str) -> bool {
    let mut rest = line;
    while let Some(i) = rest.find("::<") {
        rest = &rest[i + 3..];
        let args = &rest[..rest.find('>').unwrap_or(rest.len())];
        if args
            .split(',')
            .any(|a| a.trim().chars().next().is_some_and(|c| c.is_ascii_digit()))
        {
            return true;
        }
    }
    false
}

/// The shipped examples, the README and the guide show the public API: no test-support
/// helpers in the examples, and no sizes written out in a call (`SVector::<f64, 3>`,
/// `::<M, 3, 2, 1>`) anywhere: sizes follow from the model type.
/// Every file of `examples/` (sources, tests, manifests, build scripts; not build output):
/// the example crates use the public API only, their tests included — the engine's checks of
/// the example mechanisms live in `tests/models`.
#[test]
fn no_test_support_anywhere_in_examples() {
    fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a directory") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    walk(&path, found);
                }
            } else if ["rs", "toml"]
                .iter()
                .any(|e| path.extension().is_some_and(|x| x == *e))
            {
                found.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        &mut files,
    );
    assert!(files.len() >= 20, "{files:?}");
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a file's text");
        assert!(
            !text.contains("mechgen_test_support") && !text.contains("mechgen-test-support"),
            "{} uses the test-support crate",
            path.display()
        );
    }
}

#[test]
fn examples_readme_and_guide_write_no_sizes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let listing = |dir: &str, ext: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("a directory")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        v.sort();
        v
    };
    let mut examples = listing("examples", "rs");
    // The example crates' programs.
    examples.extend(
        ["seven_body", "stewart_platform"]
            .map(|c| root.join("examples").join(c).join("src/main.rs")),
    );
    let guide = listing("docs/guide", "md");
    assert!(
        examples.len() >= 6 && guide.len() >= 9,
        "{examples:?} {guide:?}"
    );
    let docs = [
        root.join("README.md"),
        root.join("src/guide.rs"),
        root.join("src/lib.rs"),
    ];
    for path in examples.iter().chain(&guide).chain(&docs) {
        let text = std::fs::read_to_string(path).expect("a file's text");
        let name = path.display();
        if examples.contains(path) {
            assert!(
                !text.contains("mechgen_test_support"),
                "{name} uses mechgen_test_support"
            );
        }
        for (n, line) in text.lines().enumerate() {
            assert!(
                !written_sizes(line),
                "{name}:{}: a size written out: {line}",
                n + 1
            );
        }
    }
}

#[test]
fn written_sizes_are_found() {
    assert!(written_sizes("let q = SVector::<f64, 3>::zeros();"));
    assert!(written_sizes("step::<m::Model, 3, 2, 1, 8>(&q)"));
    assert!(!written_sizes(
        "step::<m::Model, _, _, _, _>(&q, q.cast::<f32>())"
    ));
    assert!(!written_sizes("Dual::<{ m::NQ }>::variable(x, 0)"));
}
