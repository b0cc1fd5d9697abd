//! The fast printer of generated code: its output must parse back to exactly the tokens
//! that were generated, keep the `//` comments, and stay within a readable width.

use mechgen_codegen::{generate_str, pretty, Options};

fn example(path: &str) -> String {
    let p = format!("{}/../examples/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn sources() -> Vec<(&'static str, String)> {
    vec![
        ("stewart", example("stewart_platform/stewart.mech")),
        ("andrews", example("seven_body/andrews.mech")),
        (
            "pendulum",
            "pub mod pendulum {
                param l = 1.0; param m = 2.0;
                coord x = 1.0; coord y = 0.0;
                constraint x * x + y * y == l * l;
                body bob { mass = m, com = vec2(x, y) }
                gravity = vec2(0.0, -9.81);
            }"
            .to_string(),
        ),
    ]
}

#[test]
fn printed_code_parses_back_to_the_generated_tokens() {
    for (name, src) in sources() {
        let opts = Options::default();
        let generated = generate_str(&src, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = pretty(&generated.tokens);
        let back: syn::File =
            syn::parse_str(&text).unwrap_or_else(|e| panic!("{name}: printed code: {e}"));
        let original: syn::File = syn::parse2(generated.tokens.clone()).expect("generated parses");
        // Same syntax tree: both print identically through prettyplease (which also
        // evens out how doc strings are quoted).
        let (a, b) = (
            prettyplease::unparse(&back),
            prettyplease::unparse(&original),
        );
        if let Some(line) = a.lines().zip(b.lines()).position(|(x, y)| x != y) {
            panic!(
                "{name}: printing changed the code at line {line}:\n  printed:   {}\n  generated: {}",
                a.lines().nth(line).unwrap_or_default(),
                b.lines().nth(line).unwrap_or_default()
            );
        }
        assert_eq!(a.len(), b.len(), "{name}: printing changed the code");
        // Readable: statement lines wrap near 100 columns (a line may overrun only where
        // it has no break point).
        let long = text.lines().filter(|l| l.len() > 110).count();
        assert!(
            long * 50 <= text.lines().count(),
            "{name}: {long} lines over 110 columns"
        );
    }
}

#[test]
fn comments_survive_printing() {
    let src = example("stewart_platform/stewart.mech");
    let opts = Options {
        comments: true,
        ..Options::default()
    };
    let generated = generate_str(&src, &opts).expect("generates");
    let text = pretty(&generated.tokens);
    assert!(
        !text.contains("__mechgen_comment"),
        "a comment marker was left"
    );
    assert!(
        !text.contains("__mechgen_body"),
        "a body placeholder was left"
    );
    let comments = text
        .lines()
        .filter(|l| l.trim_start().starts_with("// "))
        .count();
    assert!(comments >= 18, "only {comments} comments");
    syn::parse_str::<syn::File>(&text).expect("commented code parses");
}

#[test]
fn tokens_that_are_no_rust_file_print_as_their_text() {
    // `pretty` is public: tokens that are not a file of items (never generated ones) come
    // back unformatted rather than as a panic.
    let ts: mechgen_codegen::proc_macro2::TokenStream = "let x = 1 ;".parse().expect("tokens");
    assert_eq!(pretty(&ts), ts.to_string());
    let item: mechgen_codegen::proc_macro2::TokenStream = "fn f ( ) { }".parse().expect("tokens");
    let text = pretty(&item);
    assert!(text.starts_with("fn f() {"), "{text}");
    assert_ne!(text, item.to_string());
}

/// Runs of doc lines go through the skeleton as one placeholder each and are put back as
/// prettyplease prints them: the printed file equals prettyplease's own printing of the
/// whole tree (no function bodies here, so every line is prettyplease's), for doc texts
/// with escapes (`"`, `\`, a combining accent that `Literal::string` escapes as `\u{…}`),
/// leading `/`, line breaks, trailing spaces and empty lines, runs broken by other
/// attributes, and docs on modules, items, fields and impl items.
#[test]
fn doc_runs_print_as_prettyplease_prints_them() {
    use quote::quote;
    let accent = " cafe\u{301} and a tab\there";
    let tokens = quote! {
        #[doc = " A module: \"quoted\", a \\ backslash."]
        #[doc = ""]
        #[doc = " trailing spaces   "]
        #[allow(dead_code)]
        #[doc = " after another attribute"]
        pub mod m {
            #[doc = "/starts with a slash"]
            #[doc = " then a plain line"]
            pub const A: usize = 1;
            #[doc = " two\n lines"]
            #[doc = " and one"]
            pub const B: [f64; 2] = [1.0, 2.5];
            #[doc = #accent]
            #[derive(Clone, Copy)]
            pub struct S {
                #[doc = " a field"]
                #[doc = " of two lines"]
                pub x: f64,
                pub y: f64,
            }
            impl S {
                #[doc = " an associated constant"]
                pub const Z: f64 = 0.0;
            }
        }
    };
    let expected = prettyplease::unparse(&syn::parse2(tokens.clone()).expect("a Rust file"));
    let printed = pretty(&tokens);
    if let Some(line) = printed
        .lines()
        .zip(expected.lines())
        .position(|(x, y)| x != y)
    {
        panic!(
            "line {line}:\n  printed:      {:?}\n  prettyplease: {:?}",
            printed.lines().nth(line).unwrap_or_default(),
            expected.lines().nth(line).unwrap_or_default()
        );
    }
    assert_eq!(printed, expected);
    // The texts are all there (each kind of doc line was met).
    for text in [
        "\"quoted\"",
        "\\ backslash",
        "/starts",
        "cafe\u{301}",
        "of two lines",
    ] {
        assert!(printed.contains(text), "{text} missing:\n{printed}");
    }
}
