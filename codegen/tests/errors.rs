//! Errors of the engine on `.mech` source text: the message of each kind of mistake, the
//! location `locate` reports (`path:line:col: message` and a caret excerpt), and the
//! `Builder` on a bad and a good file.

use std::path::{Path, PathBuf};

use mechgen_codegen::{generate_str, locate, BuildError, Builder, Error, Options};

/// The error of `src`; panics if it generates.
fn err(src: &str) -> Error {
    match generate_str(src, &Options::default()) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e,
    }
}

/// 1-based line and 0-based column (in chars) of byte offset `at` of `src`.
fn line_col(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
    (line, col)
}

/// Checks that `src` fails with a message containing every part of `parts`, that the
/// error's span starts at the first occurrence of `token` after (the end of) the first
/// occurrence of `after` and covers exactly `token`, and that `locate` formats it as
/// `m.mech:line:col: message` with the source line and a caret line under `token`.
#[track_caller]
fn check(src: &str, parts: &[&str], after: &str, token: &str) -> Error {
    let e = err(src);
    for p in parts {
        assert!(
            e.message.contains(p),
            "message {:?} does not contain {p:?}",
            e.message
        );
    }
    let base = src
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not in source"))
        + after.len();
    let at = base
        + src[base..]
            .find(token)
            .unwrap_or_else(|| panic!("{token:?} not in source after {after:?}"));
    let (line, col) = line_col(src, at);
    let path = Path::new("m.mech");
    let located = locate(path, src, &e);
    match &located {
        BuildError::Mechanism {
            path: p,
            line: l,
            column: c,
            message,
            ..
        } => {
            assert_eq!(p, path);
            assert_eq!(message, &e.message);
            assert_eq!(
                (*l, *c),
                (line, col + 1),
                "wrong location for {:?} (expected at {token:?})",
                e.message
            );
        }
        other => panic!("expected BuildError::Mechanism, got {other:?}"),
    }
    let shown = located.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[0],
        format!("m.mech:{line}:{}: {}", col + 1, e.message),
        "{shown}"
    );
    let gutter = " ".repeat(line.to_string().len());
    let text = src.lines().nth(line - 1).unwrap();
    assert_eq!(lines.len(), 4, "{shown}");
    assert_eq!(lines[1], format!("{gutter} |"), "{shown}");
    assert_eq!(lines[2], format!("{line} | {text}"), "{shown}");
    assert_eq!(
        lines[3],
        format!(
            "{gutter} | {}{}",
            " ".repeat(col),
            "^".repeat(token.chars().count())
        ),
        "caret not under {token:?}:\n{shown}"
    );
    e
}

const SLIDER: &str = "\
/// Planar slider crank.
pub mod slider_crank {
    param l1 = 0.1;
    param l2 = 0.3;
    coord theta = 0.3;
    coord beta = 1.4721295802647691;
    coord s = 0.39407456415626446;
    let crank = vec2(l1 * cos(theta), l1 * sin(theta));
    let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
    constraint crank + rod == vec2(s, 0.0);
}
";

/// The slider crank with `from` replaced by `to` (which must occur once).
fn slider(from: &str, to: &str) -> String {
    assert_eq!(SLIDER.matches(from).count(), 1, "{from:?}");
    SLIDER.replace(from, to)
}

/// A module `m` with coordinates `x = 1`, `y = 0` and the given items.
fn circle(items: &str) -> String {
    format!("pub mod m {{\n    coord x = 1.0;\n    coord y = 0.0;\n{items}}}\n")
}

#[test]
fn the_slider_crank_generates() {
    let g = generate_str(SLIDER, &Options::default()).expect("slider crank");
    assert_eq!(g.modules.len(), 1);
    assert_eq!(
        (g.modules[0].nq, g.modules[0].nc, g.modules[0].dof),
        (3, 2, 1)
    );
}

#[test]
fn unknown_name_suggests_the_nearest() {
    let src = slider("cos(theta), l1", "cos(thetta), l1");
    check(
        &src,
        &["unknown name `thetta`; did you mean `theta`?"],
        "let crank",
        "thetta",
    );
}

#[test]
fn unknown_name_without_a_near_one_has_no_suggestion() {
    let src = circle("    constraint x * x + zzzzzz == 1.0;\n");
    let e = check(&src, &["unknown name `zzzzzz`"], "constraint", "zzzzzz");
    assert!(!e.message.contains("did you mean"), "{}", e.message);
}

#[test]
fn function_name_used_as_a_value() {
    let src = circle("    constraint x * x + sin == 1.0;\n");
    check(
        &src,
        &[
            "unknown name `sin`",
            "`sin` is a function: call it, e.g. `sin(x)`",
        ],
        "constraint",
        "sin",
    );
}

#[test]
fn unknown_function_suggests_the_nearest() {
    let src = slider("l1 * sin(theta)", "l1 * sinn(theta)");
    check(
        &src,
        &[
            "unknown function `sinn`; did you mean `sin`? supported functions: sin, cos, tan",
            "rot_z, der",
        ],
        "let crank",
        "sinn",
    );
}

#[test]
fn unknown_method() {
    let src = circle("    constraint x.cosh() + y * y == 1.0;\n");
    check(&src, &["unknown function `cosh`"], "constraint", "cosh");
}

#[test]
fn wrong_arity_points_at_the_call() {
    let src = circle("    coord phi = 0.0;\n    constraint phi == atan2(y);\n    constraint x * x + y * y == 1.0;\n");
    check(
        &src,
        &["`atan2` takes 2 arguments, found 1"],
        "constraint phi",
        "atan2(y)",
    );
    let src = circle("    constraint sin(x, y) == 0.0;\n");
    check(
        &src,
        &["`sin` takes 1 argument, found 2"],
        "constraint",
        "sin(x, y)",
    );
}

#[test]
fn sin_of_a_vector() {
    let src = circle("    let v = vec2(x, y);\n    constraint sin(v) == 0.0;\n");
    check(
        &src,
        &["expected a scalar, found a 2-vector"],
        "constraint",
        "v",
    );
}

#[test]
fn scalar_equals_vector() {
    let src = circle("    constraint x * x + y * y == vec2(1.0, 0.0);\n");
    check(
        &src,
        &["the two sides of the equation differ: a scalar == a 2-vector"],
        "constraint",
        "==",
    );
}

#[test]
fn vector_sizes_differ_in_a_sum() {
    let src = circle("    constraint vec2(x, y) + vec3(x, y, 0.0) == vec2(1.0, 0.0);\n");
    let e = err(&src);
    assert!(
        e.message.contains("2-vector") && e.message.contains("3-vector"),
        "{}",
        e.message
    );
}

#[test]
fn multiplying_two_vectors() {
    let src = circle("    let v = vec2(x, y);\n    constraint v * v == 1.0;\n");
    check(
        &src,
        &["cannot multiply a 2-vector by a 2-vector; use `dot(a, b)` or `cross(a, b)`"],
        "constraint",
        "*",
    );
}

#[test]
fn dividing_by_a_vector() {
    let src = circle("    let v = vec2(x, y);\n    constraint 1.0 / v == 1.0;\n");
    check(
        &src,
        &["cannot divide by a 2-vector: the divisor must be a scalar"],
        "constraint",
        "/",
    );
}

#[test]
fn duplicate_name() {
    let src = slider("coord s = 0.39407456415626446;", "coord l2 = 0.31;")
        .replace("vec2(s, 0.0)", "vec2(l2, 0.0)");
    check(
        &src,
        &["`l2` is declared twice: it is already a parameter"],
        "coord beta = 1.4721295802647691;\n    coord ",
        "l2",
    );
}

#[test]
fn reserved_name() {
    let src = circle("    param t = 1.0;\n    constraint x * x + y * y == 1.0;\n");
    check(
        &src,
        &["`t` is reserved (`t` is time, `pi` is π); choose another name"],
        "param ",
        "t",
    );
}

#[test]
fn constraint_with_assignment() {
    let src = circle("    constraint x = 1.0;\n");
    check(
        &src,
        &["a constraint must be an equation `lhs == rhs`"],
        "constraint",
        "x = 1.0",
    );
}

#[test]
fn constraint_without_equation() {
    let src = circle("    constraint x;\n");
    check(
        &src,
        &["a constraint must be an equation `lhs == rhs`"],
        "constraint",
        "x",
    );
    let src = circle("    constraint x + y < 1.0;\n");
    check(
        &src,
        &["a constraint must be an equation `lhs == rhs`"],
        "constraint",
        "x + y < 1.0",
    );
}

#[test]
fn equality_inside_an_expression() {
    let src = circle("    let b = x == y;\n    constraint x * x + y * y == 1.0;\n");
    check(
        &src,
        &["`==` is only allowed once, at the top of a `constraint`"],
        "let b",
        "==",
    );
}

#[test]
fn assignment_inside_an_expression() {
    let src = circle("    let b = x = y;\n    constraint x * x + y * y == 1.0;\n");
    check(
        &src,
        &["`=` is not an equation: write `lhs == rhs` in a constraint"],
        "let b",
        "x = y",
    );
}

#[test]
fn caret_is_not_a_power() {
    let src = circle("    constraint x^2 + y * y == 1.0;\n");
    check(
        &src,
        &["`^` is not a power in Rust; write `powi(x, 2)` or `x.powi(2)`"],
        "constraint",
        "^",
    );
}

#[test]
fn unsupported_operator() {
    let src = circle("    constraint x % 2.0 + y * y == 1.0;\n");
    check(
        &src,
        &["unsupported operator; supported are `+`, `-`, `*`, `/`"],
        "constraint",
        "%",
    );
    let src = circle("    constraint !x + y * y == 1.0;\n");
    check(
        &src,
        &["unsupported operator: only unary `-` is supported"],
        "constraint",
        "!",
    );
}

#[test]
fn unsupported_syntax() {
    let src =
        circle("    let r = if x { 1.0 } else { 2.0 };\n    constraint x * x + y * y == r;\n");
    check(
        &src,
        &["unsupported syntax; expressions may use numbers, names"],
        "let r",
        "if x { 1.0 } else { 2.0 }",
    );
}

#[test]
fn unsupported_literal() {
    let src = circle("    constraint x * x + y * y == \"one\";\n");
    check(
        &src,
        &["unsupported literal: only numbers"],
        "constraint",
        "\"one\"",
    );
}

#[test]
fn powi_needs_an_integer_literal() {
    let src = circle("    param n = 2.0;\n    constraint x.powi(n) + y * y == 1.0;\n");
    check(
        &src,
        &["the exponent of `powi` must be an integer literal"],
        "constraint",
        "n",
    );
}

#[test]
fn unknown_item_keyword() {
    let src = circle("    variable z = 0.0;\n    constraint x * x + y * y == 1.0;\n");
    check(
        &src,
        &[
            "unknown item `variable`; a mechanism module may contain: param, const, coord, let, constraint",
        ],
        "",
        "variable",
    );
}

#[test]
fn missing_semicolon() {
    let src = "pub mod m {\n    coord x = 1.0\n    coord y = 0.0;\n    constraint x * x + y * y == 1.0;\n}\n";
    let e = err(src);
    assert!(e.message.contains("expected `;`"), "{}", e.message);
    let shown = locate(Path::new("m.mech"), src, &e).to_string();
    // syn reports the token where the `;` was expected: the next `coord`.
    assert!(shown.starts_with("m.mech:3:5: "), "{shown}");
}

#[test]
fn not_a_module() {
    let e = err("coord x = 1.0;\n");
    assert!(
        e.message.contains("expected `mod NAME { ... }`"),
        "{}",
        e.message
    );
    let e = err("");
    assert!(
        e.message.contains("expected at least one mechanism"),
        "{}",
        e.message
    );
}

#[test]
fn tokenizer_error() {
    let e = err("pub mod m { coord x = \"1.0; }\n");
    assert!(
        e.message.starts_with("cannot tokenize the input"),
        "{}",
        e.message
    );
}

#[test]
fn module_without_coordinates() {
    let src = "pub mod empty {\n    param l = 1.0;\n    constraint l == 1.0;\n}\n";
    check(
        src,
        &["mechanism `empty` has no coordinates: declare them with `coord NAME = nominal;`"],
        "mod",
        "empty",
    );
}

#[test]
fn nonfinite_const() {
    let src = circle("    const c = 1.0 / 0.0;\n    constraint x * x + y * y == c;\n");
    check(
        &src,
        &["the constant `c` is not a finite number (it evaluates to inf)"],
        "const c",
        "1.0 / 0.0",
    );
}

#[test]
fn nan_const() {
    let src = circle("    const c = 0.0 / 0.0;\n    constraint x * x + y * y == 1.0 + c;\n");
    check(
        &src,
        &["the constant `c` is not a finite number"],
        "const c",
        "0.0 / 0.0",
    );
}

#[test]
fn nonfinite_parameter_default() {
    let src = circle("    param l = 1.0 / 0.0;\n    constraint x * x + y * y == l;\n");
    check(
        &src,
        &["a parameter default is not a finite number (it evaluates to inf)"],
        "param l",
        "1.0 / 0.0",
    );
}

#[test]
fn const_depending_on_a_coordinate() {
    let src = circle("    const r = 2.0 * x;\n    constraint x * x + y * y == r;\n");
    check(
        &src,
        &[
            "a `const` must be a constant expression",
            "use `param` or `let`",
        ],
        "const r",
        "2.0 * x",
    );
}

#[test]
fn nominal_value_depending_on_a_parameter() {
    let src = "pub mod m {\n    param l = 1.0;\n    coord x = l;\n    coord y = 0.0;\n    constraint x * x + y * y == l;\n}\n";
    check(
        src,
        &["a coordinate's nominal value must be a constant expression, but it depends on `l`"],
        "coord x",
        "l",
    );
}

#[test]
fn z_of_a_2_vector() {
    let src = circle("    let p = vec2(x, y);\n    constraint p.x * p.x + p.z * p.z == 1.0;\n");
    check(
        &src,
        &["`.z` of a 2-vector: a 2-vector has only `.x` and `.y`"],
        "p.x * p.x + p.",
        "z",
    );
}

#[test]
fn unknown_component() {
    let src = circle("    let p = vec2(x, y);\n    constraint p.w == 1.0;\n");
    check(
        &src,
        &["unknown component `.w`: vectors have `.x`, `.y` and (3-vectors) `.z`"],
        "p.",
        "w",
    );
}

#[test]
fn der_inside_a_constraint() {
    let src = circle("    constraint x * der(x) + y * y == 1.0;\n");
    check(
        &src,
        &["`der(...)` (a velocity) is only allowed in forces"],
        "der(",
        "x",
    );
}

#[test]
fn der_of_a_non_coordinate() {
    let src = circle(
        "    param c = 1.0;\n    constraint x * x + y * y == 1.0;\n    force x = -c * der(c);\n",
    );
    check(
        &src,
        &["`der` takes a coordinate name: `der(theta)` is the velocity of `theta`"],
        "der(",
        "c",
    );
}

#[test]
fn independent_not_a_coordinate() {
    let src = slider(
        "coord s = 0.39407456415626446;",
        "coord s = 0.39407456415626446;\n    independent l1;",
    );
    check(
        &src,
        &["`l1` is a parameter, not a coordinate"],
        "independent",
        "l1",
    );
}

#[test]
fn independent_listed_twice() {
    let src = slider(
        "coord s = 0.39407456415626446;",
        "coord s = 0.39407456415626446;\n    independent theta, theta;",
    );
    check(
        &src,
        &["`theta` is listed twice"],
        "independent theta, ",
        "theta",
    );
}

#[test]
fn two_independent_items() {
    let src = slider(
        "coord s = 0.39407456415626446;",
        "coord s = 0.39407456415626446;\n    independent theta;\n    independent beta;",
    );
    check(
        &src,
        &["only one `independent` item is allowed; list all coordinates in it"],
        "independent theta;\n    ",
        "independent",
    );
}

#[test]
fn impossible_independent_hint_too_many() {
    let src = slider(
        "coord s = 0.39407456415626446;",
        "coord s = 0.39407456415626446;\n    independent theta, s;",
    );
    check(
        &src,
        &[
            "2 independent coordinates named (`theta`, `s`), but the mechanism has only 1 degree of freedom",
        ],
        "",
        "independent",
    );
}

#[test]
fn impossible_independent_hint_fixed_coordinate() {
    let src = "pub mod m {\n    coord x = 1.0;\n    coord y = 0.0;\n    independent x;\n    constraint x == 1.0;\n}\n";
    check(
        src,
        &[
            "coordinate `x` cannot be independent: with it held fixed",
            "determine only 0 of the other coordinates, but they have rank 1",
        ],
        "",
        "independent",
    );
}

#[test]
fn no_motion() {
    let src = circle("    constraint x + y == 1.0;\n    constraint x - y == 1.0;\n");
    check(
        &src,
        &["no motion: the 2 constraint equations fix all 2 coordinates (rank 2); a mechanism needs at least one degree of freedom"],
        "mod ",
        "m",
    );
}

#[test]
fn rank_zero_structurally() {
    // `0.0 * x` folds to zero: the Jacobian is identically zero.
    let src = circle("    constraint 0.0 * x == 0.0;\n");
    check(
        &src,
        &["constraint `0.0 * x == 0.0` does not involve any coordinate: it holds for the default parameters and says nothing"],
        "    ",
        "0.0 * x == 0.0",
    );
    let src =
        "pub mod m {\n    param l = 1.0;\n    coord x = 1.0;\n    constraint l * l == 1.0;\n}\n";
    check(
        src,
        &["constraint `l * l == 1.0` does not involve any coordinate: it holds for the default parameters"],
        "    coord x = 1.0;\n    ",
        "l * l == 1.0",
    );
}

#[test]
fn rank_zero_numerically() {
    let src = circle("    constraint sin(x).powi(2) + cos(x).powi(2) == 1.0;\n");
    check(
        &src,
        &["the constraint Jacobian vanishes at every probe point (rank 0)"],
        "mod ",
        "m",
    );
}

#[test]
fn body_errors() {
    let src = circle("    param m1 = 1.0;\n    constraint x * x + y * y == 1.0;\n    body bob { mass = m1, centre = vec2(x, y) }\n");
    check(
        &src,
        &["unknown field `centre` of a body; expected: mass, inertia, com, angle, rotation"],
        "body",
        "centre",
    );
    let src = circle("    param m1 = 1.0;\n    constraint x * x + y * y == 1.0;\n    body bob { com = vec2(x, y) }\n");
    check(&src, &["body `bob` needs a `mass`"], "body", "bob");
    let src = circle("    param m1 = 1.0;\n    constraint x * x + y * y == 1.0;\n    body bob { mass = m1, mass = m1, com = vec2(x, y) }\n");
    check(&src, &["field `mass` given twice"], "m1, ", "mass");
}

#[test]
fn gravity_given_twice() {
    let src = circle("    constraint x * x + y * y == 1.0;\n    gravity = vec2(0.0, -9.81);\n    gravity = vec2(0.0, -9.81);\n");
    check(&src, &["gravity is given twice"], "81);\n    ", "gravity");
}

/// A fresh directory under the system temp dir.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "mechgen-errors-{}-{name}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn builder_reports_a_located_error() {
    let dir = temp_dir("bad");
    let file = dir.join("bad.mech");
    let src = slider("cos(theta), l1", "cos(thetta), l1");
    std::fs::write(&file, &src).unwrap();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let r = Builder::new()
        .file(&file)
        .out_dir(&out)
        .emit_cargo_directives(false)
        .generate();
    let e = r.expect_err("a bad file must fail");
    match &e {
        BuildError::Mechanism {
            path, line, column, ..
        } => {
            assert_eq!(path, &file);
            assert_eq!((*line, *column), (8, 31));
        }
        other => panic!("expected BuildError::Mechanism, got {other:?}"),
    }
    let shown = e.to_string();
    let expected = format!(
        "{}:8:31: unknown name `thetta`; did you mean `theta`?\n  |\n8 |     let crank = vec2(l1 * cos(thetta), l1 * sin(theta));\n  |                               ^^^^^^",
        file.display()
    );
    assert_eq!(shown, expected);
    assert!(!out.join("bad.rs").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn builder_reports_a_missing_file() {
    let dir = temp_dir("missing");
    let file = dir.join("missing.mech");
    let e = Builder::new()
        .file(&file)
        .out_dir(&dir)
        .emit_cargo_directives(false)
        .generate()
        .expect_err("a missing file must fail");
    assert!(
        matches!(&e, BuildError::Io { path, .. } if path == &file),
        "{e:?}"
    );
    assert!(e.to_string().starts_with(&file.display().to_string()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn builder_writes_a_good_file() {
    let dir = temp_dir("good");
    let file = dir.join("slider.mech");
    std::fs::write(&file, SLIDER).unwrap();
    let written = Builder::new()
        .file(&file)
        .out_dir(&dir)
        .emit_cargo_directives(false)
        .generate()
        .expect("the slider crank generates");
    assert_eq!(written, vec![dir.join("slider.rs")]);
    let code = std::fs::read_to_string(&written[0]).unwrap();
    assert!(
        code.starts_with("// Generated by mechgen from slider.mech. Do not edit."),
        "{}",
        &code[..code.len().min(200)]
    );
    assert!(code.contains("pub mod slider_crank"));
    assert!(
        code.contains("// C[0]: crank + rod == vec2(s, 0.0) [x]"),
        "missing equation comment"
    );
    assert!(code.contains("// C[1]: crank + rod == vec2(s, 0.0) [y]"));
    assert!(code.contains("pub fn null_space"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn division_by_constant_zero() {
    let src = circle("    const z = 0.0;\n    constraint x * x + y / z == 1.0;\n");
    check(
        &src,
        &["division by zero: the divisor is the constant 0"],
        "constraint x * x + y / ",
        "z",
    );
}
