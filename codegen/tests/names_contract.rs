//! The contract of the names vocabulary: the user's local names are chosen before emission
//! around the names the generated code binds (`emit::names::vocabulary`), so a name the
//! generated code binds and the vocabulary misses could be shadowed by a user's coordinate
//! of that name: a compile error at best, a silently wrong value at worst. `check_names`
//! emits each module a second time with placeholder names, reads every bound name off the
//! tokens and fails on one missing from the vocabulary. This runs it on every model of the
//! repository: every `.mech` file, every `mechanism! { … }` block of the Rust sources
//! (tests, examples, benches, the compile-fail cases), and the small MJCF and URDF robots,
//! each with all functions, with the generic family, and with a selection.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use mechgen_codegen::{check_names, FunctionList, Options};
use proc_macro2::{TokenStream, TokenTree};

/// The repository's root (this crate's parent).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("codegen/ has a parent")
        .to_path_buf()
}

/// Files under `dir` whose name ends with `ext`, skipping build output and hidden folders.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                files(&path, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(path);
        }
    }
}

/// The bodies of the `mechanism! { … }` invocations in `ts`, at any depth.
fn mechanism_blocks(ts: TokenStream, out: &mut Vec<TokenStream>) {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    for (k, tt) in tokens.iter().enumerate() {
        if let TokenTree::Group(g) = tt {
            let before = |n: usize| k.checked_sub(n).and_then(|i| tokens.get(i));
            let called = matches!(
                (before(2), before(1)),
                (Some(TokenTree::Ident(m)), Some(TokenTree::Punct(bang)))
                    if m == "mechanism" && bang.as_char() == '!'
            );
            if called {
                out.push(g.stream());
            } else {
                mechanism_blocks(g.stream(), out);
            }
        }
    }
}

/// What checking one input found.
#[derive(Default)]
struct Tally {
    /// Inputs whose modules were all generated (and so checked).
    checked: usize,
    /// Inputs that failed for another reason (compile-fail cases, imports needed).
    other_errors: usize,
    /// Violations of the contract, with the input's name.
    violations: Vec<String>,
}

impl Tally {
    fn check(&mut self, what: &str, input: &TokenStream) {
        let selection = Options {
            functions: Some(FunctionList(vec![
                "jacobian".to_string(),
                "null_space_fixed".to_string(),
            ])),
            ..Options::default()
        };
        let generic = Options {
            generic: true,
            ..Options::default()
        };
        for (label, opts) in [
            ("all", Options::default()),
            ("generic", generic),
            ("selection", selection),
        ] {
            match check_names(input.clone(), &opts) {
                Ok(_) => self.checked += 1,
                Err(e) => {
                    let text = e.to_string();
                    if text.contains("missing from its vocabulary") {
                        self.violations.push(format!("{what} ({label}): {text}"));
                    } else {
                        self.other_errors += 1;
                    }
                }
            }
        }
    }
}

#[test]
fn every_name_generated_code_binds_is_in_the_vocabulary() {
    let root = root();
    let mut tally = Tally::default();

    let mut mech = Vec::new();
    files(&root, ".mech", &mut mech);
    for path in &mech {
        let text = std::fs::read_to_string(path).expect("readable .mech file");
        let Ok(tokens) = TokenStream::from_str(&text) else {
            continue;
        };
        tally.check(&path.display().to_string(), &tokens);
    }

    let mut rust = Vec::new();
    for dir in [
        "tests",
        "examples",
        "benches",
        "bench",
        "src",
        "codegen/tests",
    ] {
        files(&root.join(dir), ".rs", &mut rust);
    }
    let mut blocks = 0;
    for path in &rust {
        let text = std::fs::read_to_string(path).expect("readable Rust file");
        let Ok(tokens) = TokenStream::from_str(&text) else {
            continue;
        };
        let mut found = Vec::new();
        mechanism_blocks(tokens, &mut found);
        for (k, block) in found.iter().enumerate() {
            blocks += 1;
            tally.check(&format!("{} block {k}", path.display()), block);
        }
    }

    // The small robots of examples/robots (the larger ones take minutes unoptimised).
    let robots = root.join("examples/robots");
    for file in [
        "mjcf/chain.xml",
        "mjcf/radian.xml",
        "mjcf/four_bar.xml",
        "mjcf/welded_arm.xml",
        "mjcf/ball_free.xml",
        "models/ur_description/ur5_robot.urdf",
    ] {
        let path = robots.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let settings = mechgen_codegen::import::ImportSettings::for_path(&path);
        let imported = mechgen_codegen::import::import(&text, &settings)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let tokens = TokenStream::from_str(&imported.mech).expect("imported text lexes");
        tally.check(&path.display().to_string(), &tokens);
    }

    eprintln!(
        "{} .mech files, {blocks} mechanism! blocks: {} generations checked, {} other errors",
        mech.len(),
        tally.checked,
        tally.other_errors
    );
    assert!(
        tally.violations.is_empty(),
        "names bound by generated code but missing from the vocabulary:\n{}",
        tally.violations.join("\n")
    );
    // The corpus is the repository's: at least its `.mech` files and test blocks.
    assert!(
        mech.len() >= 15 && blocks >= 100,
        "{} .mech, {blocks} blocks",
        mech.len()
    );
    assert!(
        tally.checked >= 300,
        "{} inputs × options checked ({} other errors)",
        tally.checked,
        tally.other_errors
    );
}
