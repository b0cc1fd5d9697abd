//! Errors of the engine on `.mech` source text: the message of each kind of mistake, the
//! location `locate` reports (`path:line:col: message` and a caret excerpt). The `Builder`
//! on a bad and a good file: `mechgen-build/tests/builder.rs`.

use std::path::Path;

use mechgen_codegen::{generate_str, locate, BuildError, Error, Options};

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
            "rot_z, rot_quat, rpy, quat, axis_angle, mat3, translate, rot, frame, point, apply, inverse, der, velocity",
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
        &["`der` of this is zero: it depends on no coordinate and not on time"],
        "der(",
        "c",
    );
}

#[test]
fn der_of_a_velocity() {
    let src = circle("    constraint x * x + y * y == 1.0;\n    force x = -der(der(x));\n");
    check(
        &src,
        &["`der` of an expression holding velocities would be an acceleration"],
        "-der(",
        "der(x)",
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

// ---- issue 9: hardening ----

/// The generated text of `src` (which must generate).
fn generated(src: &str) -> String {
    match generate_str(src, &Options::default()) {
        Ok(g) => mechgen_codegen::pretty(&g.tokens),
        Err(e) => panic!("expected {src} to generate, got: {e}"),
    }
}

#[test]
fn an_overflowing_literal_in_a_constraint_is_located() {
    let src = circle("    constraint x.powi(2) + y.powi(2) + 1e400 == 1.0;\n");
    check(
        &src,
        &["`1e400` is beyond the range of f64"],
        "constraint",
        "1e400",
    );
}

#[test]
fn an_overflowing_fold_is_located() {
    let src = circle("    let k = 1e200 * 1e200;\n    constraint x.powi(2) + y.powi(2) == k;\n");
    check(
        &src,
        &["not a finite number", "inf"],
        "let k = ",
        "1e200 * 1e200",
    );
    let src = circle("    constraint x * 1e200 * 1e200 + y == 1.0;\n");
    check(
        &src,
        &["not a finite number"],
        "constraint ",
        "x * 1e200 * 1e200",
    );
}

#[test]
fn an_overflowing_gravity_or_default_is_located() {
    let src = circle(
        "    param m = 1.0;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n    body b { mass = m, com = vec2(x, y) }\n    gravity = vec2(0.0, -1e400);\n",
    );
    check(&src, &["beyond the range of f64"], "gravity", "1e400");
    let src = circle("    param m = 1e400;\n    constraint x.powi(2) + y.powi(2) == m;\n");
    check(&src, &["beyond the range of f64"], "param m = ", "1e400");
}

#[test]
fn a_derivative_that_overflows_is_an_error_not_a_panic() {
    // Finite as written, but ∂/∂x = 2·1e308·x has the constant 2e308 = inf.
    let src = circle("    constraint 1e308 * x.powi(2) + y == 1e308;\n");
    let e = err(&src);
    assert!(
        e.message.contains("is not finite (inf)") && e.message.contains("jacobian"),
        "{}",
        e.message
    );
    let at = src.find("1e308 *").unwrap();
    assert_eq!(
        (e.span.start().line, e.span.start().column),
        line_col(&src, at)
    );
}

#[test]
fn a_raw_identifier_inside_sin_generates() {
    let src = "pub mod m {\n    coord r#match = 0.1;\n    coord y = 0.9047;\n    constraint sin(r#match) + cos(r#match) * y == 1.0;\n}\n";
    let text = generated(src);
    assert!(text.contains("let (sin_match, cos_match)"), "{text}");
    assert!(text.contains("let r#match = q[0];"), "{text}");
    syn::parse_file(&text).expect("generated code parses");
}

#[test]
fn a_powi_exponent_beyond_the_bound_names_the_bound() {
    let src = circle("    constraint x.powi(3000000000) + y.powi(2) == 1.0;\n");
    check(
        &src,
        &["exponent of `powi` is 3000000000, beyond the supported bound |n| <= 1024"],
        "constraint",
        "3000000000",
    );
    let src = circle("    constraint x.powi(-1025) + y.powi(2) == 1.0;\n");
    check(&src, &["is -1025, beyond"], "constraint", "-1025");
    // At the bound it generates.
    generated(&circle(
        "    constraint x.powi(2) + y.powi(2) + 0.0 * y.powi(1024) == 1.0;\n",
    ));
}

#[test]
fn the_most_negative_power_is_emitted_with_its_sign() {
    // (y^-1024)^1024)^1024)^2 = y^(-2^31) = y^i32::MIN: |i32::MIN| is no i32.
    let src = circle(
        "    constraint x.powi(2) + y.powi(2) == 1.0;\n    mass_matrix { (x, x) = 1.0, (y, y) = 1.0 }\n    generalized_force { x = y.powi(-1024).powi(1024).powi(1024).powi(2) }\n",
    );
    let text = generated(&src);
    assert!(text.contains("y.powi(i32::MIN)"), "{text}");
    assert!(!text.contains("-2147483648"), "{text}");
}

#[test]
fn a_name_and_its_raw_spelling_are_one_name() {
    let src = circle("    coord r#y = 0.5;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n");
    check(&src, &["`y` is declared twice"], "coord ", "r#y");
    let src = circle("    param r#t = 1.0;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n");
    check(&src, &["`t` is reserved"], "param ", "r#t");
}

#[test]
fn pattern_names_are_rejected() {
    for name in ["None", "Some", "Ok", "Err", "r#true", "r#false"] {
        let src = circle(&format!(
            "    coord {name} = 0.5;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n"
        ));
        let plain = name.trim_start_matches("r#");
        let e = check(
            &src,
            &[&format!("`{plain}` cannot be a name"), "pattern"],
            "coord ",
            name,
        );
        assert_eq!(e.count(), 1);
    }
}

#[test]
fn the_placeholder_prefix_is_reserved() {
    let src = circle("    param __mechgen_sym_q0 = 1.0;\n    constraint x.powi(2) + y.powi(2) == __mechgen_sym_q0;\n");
    check(
        &src,
        &["names starting with `__mechgen` are reserved"],
        "param ",
        "__mechgen_sym_q0",
    );
}

#[test]
fn keywords_of_later_editions_are_emitted_raw() {
    let src = "pub mod gen {\n    param r#try = 1.0;\n    coord r#gen = 0.5;\n    coord r#async = 0.0;\n    constraint r#gen.powi(2) + r#async.powi(2) == r#try;\n}\n";
    let text = generated(src);
    for want in [
        "mod r#gen",
        "pub r#try: f64",
        "let r#gen = q[0];",
        "let r#try = p.r#try;",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    syn::parse_file(&text).expect("generated code parses");
    // A bare `gen` (an identifier before edition 2024) too.
    let text = generated(&circle(
        "    coord gen = 0.0;\n    constraint x.powi(2) + y.powi(2) + gen == 1.0;\n",
    ));
    assert!(text.contains("let r#gen = q[2];"), "{text}");
}

#[test]
fn mixed_dimensions_are_errors() {
    let planar = circle(
        "    param m = 1.0;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n    body b { mass = m, com = vec2(x, y) }\n    gravity = vec3(0.0, 0.0, -9.81);\n",
    );
    check(
        &planar,
        &["gravity is a 3-vector but body `b` moves in 2 dimensions"],
        "gravity = ",
        "vec3(0.0, 0.0, -9.81)",
    );
    let spatial = circle(
        "    param m = 1.0;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n    body b { mass = m, com = vec3(x, y, 0.0) }\n    gravity = vec2(0.0, -9.81);\n",
    );
    check(
        &spatial,
        &["gravity is a 2-vector but body `b` moves in 3 dimensions"],
        "gravity = ",
        "vec2(0.0, -9.81)",
    );
    let planar_3d_com = circle(
        "    param m = 1.0;\n    constraint x.powi(2) + y.powi(2) == 1.0;\n    body b { mass = m, inertia = 1.0, com = vec3(x, y, 0.0), angle = x }\n",
    );
    check(
        &planar_3d_com,
        &["body `b` is planar", "3-vector"],
        "com = ",
        "vec3(x, y, 0.0)",
    );
    let spring = circle(
        "    constraint x.powi(2) + y.powi(2) == 1.0;\n    spring s { a = vec2(x, y), b = vec3(0.0, 0.0, 0.0), stiffness = 1.0, length = 1.0 }\n",
    );
    check(&spring, &["same dimension"], "b = ", "vec3(0.0, 0.0, 0.0)");
}

#[test]
fn two_modules_with_one_name_are_an_error() {
    let one = circle("    constraint x.powi(2) + y.powi(2) == 1.0;\n");
    let src = format!("{one}{}", one.replace("pub mod m", "mod r#m"));
    check(
        &src,
        &["a mechanism named `m` is already defined"],
        "}",
        "r#m",
    );
}

#[test]
fn independent_errors_are_reported_together() {
    let src = circle("    let a = x + yy;\n    let b = y * zz;\n    constraint x + ww == 1.0;\n");
    let e = err(&src);
    let messages: Vec<&str> = e.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "unknown name `yy`; did you mean `y`?",
            "unknown name `zz`",
            "unknown name `ww`",
        ]
    );
    let shown = locate(Path::new("m.mech"), &src, &e).to_string();
    let heads: Vec<&str> = shown.lines().filter(|l| l.starts_with("m.mech:")).collect();
    assert_eq!(
        heads,
        [
            "m.mech:4:17: unknown name `yy`; did you mean `y`?",
            "m.mech:5:17: unknown name `zz`",
            "m.mech:6:20: unknown name `ww`",
        ],
        "{shown}"
    );
    // A failed declaration is reported once, not at each use.
    let src = circle("    let a = x + yy;\n    constraint a + y == 1.0;\n");
    assert_eq!(err(&src).count(), 1);
    // Errors of two modules, too.
    let bad = circle("    constraint x + qq == 1.0;\n");
    let src = format!("{bad}{}", bad.replace("pub mod m", "pub mod n"));
    assert_eq!(err(&src).count(), 2);
}

#[test]
fn independent_t_says_t_is_time() {
    let src = circle("    constraint x.powi(2) + y.powi(2) == 1.0;\n    independent t;\n");
    check(
        &src,
        &["`t` is time, not a coordinate"],
        "independent ",
        "t",
    );
}

#[test]
fn a_negative_seed_says_what_a_seed_is() {
    let src = format!(
        "#![seed = -1]\n{}",
        circle("    constraint x.powi(2) + y.powi(2) == 1.0;\n")
    );
    check(
        &src,
        &["the seed must be a non-negative integer literal"],
        "seed = ",
        "-1",
    );
}

#[test]
fn a_stray_character_is_named() {
    for c in ["$", "@", "§", "→"] {
        let src = circle(&format!(
            "    constraint x.powi(2) + y.powi(2) {c} 1.0 == 1.0;\n"
        ));
        check(
            &src,
            &[&format!("unexpected character `{c}`")],
            "constraint",
            c,
        );
    }
}

#[test]
fn stray_characters_anywhere_are_all_named() {
    let src = circle("    let a = $x;\n    constraint x.powi(2) + y.powi(2) == 1.0 ~ a;\n");
    let e = err(&src);
    let shown = locate(Path::new("m.mech"), &src, &e).to_string();
    let heads: Vec<&str> = shown.lines().filter(|l| l.starts_with("m.mech:")).collect();
    assert_eq!(
        heads,
        [
            "m.mech:4:13: unexpected character `$`: not part of the mechanism language",
            "m.mech:5:45: unexpected character `~`: not part of the mechanism language",
        ],
        "{shown}"
    );
    let messages: Vec<&str> = e.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "unexpected character `$`: not part of the mechanism language",
            "unexpected character `~`: not part of the mechanism language"
        ]
    );
}

#[test]
fn carets_align_after_tabs_and_wide_characters() {
    let src =
        "pub mod m {\n\tcoord x = 1.0;\n\tcoord y = 0.0;\n\tconstraint x + yy == 1.0; // 角度\n}\n";
    let e = err(src);
    let shown = locate(Path::new("m.mech"), src, &e).to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[2], "4 | \tconstraint x + yy == 1.0; // 角度");
    assert_eq!(lines[3], "  | \t               ^^");
    let src = "pub mod m {\n    coord x = 1.0;\n    coord y = 0.0;\n    let 角 = 1.0; constraint x + yy == 1.0;\n}\n";
    let e = err(src);
    let shown = locate(Path::new("m.mech"), src, &e).to_string();
    let lines: Vec<&str> = shown.lines().collect();
    let want = format!(
        "  | {}^^",
        " ".repeat("    let 角 = 1.0; constraint x + ".len() - 1)
    );
    assert_eq!(lines[3], want, "{shown}");
}

#[test]
fn a_name_used_before_its_declaration_is_defined_later() {
    let src = circle("    let a = x + b;\n    let b = 2.0 * y;\n    constraint a == 1.0;\n");
    check(
        &src,
        &["`b` is used before its declaration (line 5)"],
        "let a = x + ",
        "b",
    );
}

#[test]
fn a_transposition_is_suggested() {
    let src = slider("crank + rod ==", "crank + rdo ==");
    check(
        &src,
        &["unknown name `rdo`; did you mean `rod`?"],
        "constraint ",
        "rdo",
    );
}

#[test]
fn syntax_errors_of_several_items_are_reported_together() {
    // Three items that do not parse (a missing value, a stray token, a misspelt keyword)
    // between good ones: all three reported in one pass, each at its line, and the good
    // items after them do not add errors.
    let src =
        circle("    coord z = ;\n    let a = x + ;\n    constrain x == 1.0;\n    let b = x + y;\n");
    let e = err(&src);
    let shown = locate(Path::new("m.mech"), &src, &e).to_string();
    let lines: Vec<usize> = shown
        .lines()
        .filter_map(|l| l.strip_prefix("m.mech:"))
        .filter_map(|l| l.split(':').next()?.parse().ok())
        .collect();
    assert_eq!(lines, [4, 5, 6], "{shown}");
    // A body's braces end an item too: an error inside one does not swallow the next.
    let src = circle("    body b { mass = , com = vec2(x, y) }\n    coord w = ;\n");
    assert_eq!(err(&src).count(), 2, "{}", err(&src));
}

#[test]
fn an_unknown_file_option_names_the_supported_ones() {
    let src = format!("#![foo = 1]\n{}", circle(""));
    let e = err(&src);
    assert_eq!(
        e.message,
        "unknown option; the supported options are `#![seed = N]`, `#![scalar = f32]`, `#![crate = \"::path\"]`, `#![functions(jacobian, null_space_fixed)]`, `#![generic]`, `#![derivatives]`"
    );
}

#[test]
fn an_option_given_twice_is_located_at_the_second() {
    for (first, second, name) in [
        ("#![seed = 1]", "#![seed = 2]", "seed"),
        ("#![generic]", "#![generic]", "generic"),
        ("#![scalar = f32]", "#![scalar = f64]", "scalar"),
        ("#![crate = \"::a\"]", "#![crate = \"::b\"]", "crate"),
    ] {
        let src = format!(
            "{first}\n{second}\n{}",
            circle("    constraint x * x + y * y == 1.0;\n")
        );
        let e = err(&src);
        assert!(
            e.message
                .starts_with(&format!("the {name} option is given twice")),
            "{}",
            e.message
        );
        let at = e.span.start();
        assert_eq!((at.line, at.column), (2, 2), "{name}: {}", e.message);
    }
}

#[test]
fn output_misuse_is_located() {
    // A velocity in an output: outputs are functions of the configuration and time.
    let src = circle("    constraint x * x + y * y == 1.0;\n    output v = x * der(y);\n");
    check(
        &src,
        &["`der(...)` (a velocity) is only allowed in forces"],
        "output v = x * der(",
        "y",
    );
    // The same name twice (a vector output's components count: `tip_x`).
    let src = circle(
        "    constraint x * x + y * y == 1.0;\n    output tip = vec2(x, y);\n    output tip_x = y;\n",
    );
    check(
        &src,
        &["output `tip_x` is declared twice"],
        "output ",
        "tip_x",
    );
    // Not a scalar or vector.
    let src = circle("    constraint x * x + y * y == 1.0;\n    output r = rot_z(x);\n");
    check(
        &src,
        &["an output must be a scalar, `vec2` or `vec3`, found a 3×3 matrix"],
        "output r = ",
        "rot_z(x)",
    );
}

#[test]
fn inequality_misuse_is_located() {
    let base = "    constraint x * x + y * y == 1.0;\n";
    let src = circle(&format!("{base}    inequality floor: y > 0.0;\n"));
    check(&src, &["write `>=` or `<=`"], "floor: y ", ">");
    let src = circle(&format!(
        "{base}    inequality floor: y >= 0.0, restitution = 1.5;\n"
    ));
    check(
        &src,
        &["the restitution coefficient must lie in [0, 1], found 1.5"],
        "restitution = ",
        "1.5",
    );
    let src = circle(&format!("{base}    inequality floor: y + 1.0;\n"));
    check(
        &src,
        &["an inequality is a comparison `lhs >= rhs`"],
        "floor: ",
        "y + 1.0",
    );
    let src = circle(&format!(
        "{base}    inequality w: vec2(x, y) >= vec2(0.0, 0.0);\n    inequality w_y: x >= -2.0;\n"
    ));
    check(
        &src,
        &["inequality `w_y` is declared twice"],
        "inequality ",
        "w_y",
    );
    let src = circle(&format!("{base}    inequality floor: y >= der(x);\n"));
    check(
        &src,
        &["`der(...)` (a velocity) is only allowed in forces"],
        "der(",
        "x",
    );
}

#[test]
fn family_misuse_is_located() {
    let base = "    constraint x * x + y * y == 1.0;\n    param n = 3.0;\n";
    // A bound that is not a constant integer (a parameter).
    let src = circle(&format!(
        "{base}    for i in 0..n {{ coord z[i] = 0.0; }}\n"
    ));
    check(&src, &["must be a constant integer expression"], "0..", "n");
    // Past the end of a constant array.
    let src = circle(&format!(
        "{base}    const w = [1.0, 2.0];\n    for i in 0..3 {{ param k[i] = w[i]; }}\n"
    ));
    check(
        &src,
        &["index 2 is out of range for `w` (length 2)"],
        "= w",
        "[i]",
    );
    // An index that is not constant.
    let src = circle(&format!(
        "{base}    const w = [1.0, 2.0];\n    param k = w[n];\n"
    ));
    check(&src, &["must be a constant integer expression"], "w[", "n");
    // Too many repetitions.
    let src = circle(&format!(
        "{base}    for i in 0..100000 {{ param k[i] = 1.0; }}\n"
    ));
    check(
        &src,
        &["the loop repeats 100000 times; at most 10000"],
        "in ",
        "0",
    );
    // No range.
    let src = circle(&format!("{base}    for i in 3 {{ param k[i] = 1.0; }}\n"));
    check(&src, &["expected a range `A..B`"], "in ", "3");
}

#[test]
fn families_expand_to_indexed_names() {
    let src = "pub mod chain {
        const len = [1.0, 2.0, 3.0];
        for i in 0..3 {
            param l[i] = len[i];
            coord q[i] = 0.1 * i;
        }
        for i in 0..2 {
            constraint q[i + 1] - q[i] == 0.1 * l[2 - i];
        }
    }";
    let opts = Options {
        comments: true,
        ..Options::default()
    };
    let g = generate_str(src, &opts).expect("generates");
    let m = &g.modules[0];
    assert_eq!((m.nq, m.nc), (3, 2));
    let code = mechgen_codegen::pretty(&g.tokens);
    for name in ["\"q_0\"", "\"q_1\"", "\"q_2\"", "pub l_2: f64"] {
        assert!(code.contains(name), "{name} in\n{code}");
    }
    // The residual's comments show each equation as expanded.
    assert!(code.contains("// C[0]: q_1 - q_0 == 0.1 * l_2"), "{code}");
    assert!(code.contains("// C[1]: q_2 - q_1 == 0.1 * l_1"), "{code}");
}

#[test]
fn an_input_is_only_allowed_in_forces() {
    let msg = "the input `tau` can only be used in `force` and `generalized_force` items";
    let src = circle("    input tau;\n    constraint x * x + y * y == 1.0 + tau;\n");
    check(&src, &[msg], "1.0 + ", "tau");
    let src =
        circle("    input tau;\n    let k = 2.0 * tau;\n    constraint x * x + y * y == 1.0;\n");
    check(&src, &[msg], "2.0 * ", "tau");
    let src = circle(
        "    input tau;\n    constraint x * x + y * y == 1.0;\n    body b { mass = tau, com = vec2(x, y) }\n",
    );
    check(&src, &[msg], "mass = ", "tau");
    // In a force it lowers, and `Params` documents it as an input.
    let src = circle(
        "    input tau = 0.5;\n    constraint x * x + y * y == 1.0;\n    body b { mass = 1.0, com = vec2(x, y) }\n    force x = tau;\n",
    );
    let code = mechgen_codegen::pretty(
        &generate_str(&src, &Options::default())
            .expect("input")
            .tokens,
    );
    assert!(code.contains("/// Input `tau` (default 0.5)."), "{code}");
    assert!(code.contains("pub tau: f64,"), "{code}");
    // A second declaration of the name is the usual error.
    let src =
        circle("    input tau;\n    param tau = 1.0;\n    constraint x * x + y * y == 1.0;\n");
    let e = err(&src);
    assert!(e.message.contains("tau"), "{}", e.message);
}

#[test]
fn the_scalar_option_of_the_builder_is_checked() {
    let src = circle("    constraint x * x + y * y == 1.0;\n");
    let opts = Options {
        scalar: Some("f16".into()),
        ..Options::default()
    };
    let e = generate_str(&src, &opts).expect_err("f16");
    assert!(
        e.message.contains("unknown scalar type `f16`"),
        "{}",
        e.message
    );
    let opts = Options {
        scalar: Some("f32".into()),
        ..Options::default()
    };
    let code = mechgen_codegen::pretty(&generate_str(&src, &opts).expect("f32").tokens);
    assert!(code.contains("SVector<f32, NQ>"), "{code}");
}

#[test]
fn derivatives_come_with_their_own_option() {
    let body = circle(
        "    constraint x * x + y * y == 1.0;\n    body b { mass = 1.0, com = vec2(x, y) }\n",
    );
    let code = |src: &str| {
        mechgen_codegen::pretty(
            &generate_str(src, &Options::default())
                .expect("generates")
                .tokens,
        )
    };
    assert!(!code(&format!("#![generic]\n{body}")).contains("forces_jacobian_q"));
    let with = code(&format!("#![derivatives]\n{body}"));
    for f in [
        "pub fn forces_jacobian_q(",
        "pub fn forces_jacobian_qd(",
        "pub fn forces_jacobian_p(",
        "pub fn mass_times_jacobian(",
        "pub fn gamma_jacobian_q(",
        "pub fn gamma_jacobian_qd(",
        "pub fn null_space_directional(",
        "pub const NP: usize = 0;",
    ] {
        assert!(with.contains(f), "{f} missing");
    }
    assert!(!with.contains("pub mod generic"));
    let src = format!("#![derivatives = 1]\n{body}");
    check(
        &src,
        &["`#![derivatives]` takes no value"],
        "",
        "derivatives = 1",
    );
}

#[test]
fn generic_option_takes_no_value() {
    let src = format!(
        "#![generic = true]\n{}",
        circle("    constraint x * x + y * y == 1.0;\n")
    );
    check(
        &src,
        &["`#![generic]` takes no value"],
        "",
        "generic = true",
    );
}

#[test]
fn scalar_option_is_checked() {
    let src = format!(
        "#![scalar = f16]\n{}",
        circle("    constraint x * x + y * y == 1.0;\n")
    );
    check(
        &src,
        &["the scalar type is `f64` (the default) or `f32`"],
        "scalar = ",
        "f16",
    );
    let src = format!(
        "#![scalar = f32]\n{}",
        circle("    constraint x * x + y * y == 1.0;\n")
    );
    let code =
        mechgen_codegen::pretty(&generate_str(&src, &Options::default()).expect("f32").tokens);
    assert!(
        !code.contains("f64")
            && code.contains("pub fn residual(q: &SVector<f32, NQ>, p: &Params, t: f32)"),
        "{code}"
    );
    // No runtime trait impls (they are for f64).
    assert!(
        !code.contains("impl ::mechgen::runtime::Mechanism"),
        "{code}"
    );
}

#[test]
fn function_misuse_is_located() {
    let base = "    constraint x * x + y * y == 1.0;\n";
    let src = circle(&format!(
        "{base}    fn f(a) {{ f(a) + 1.0 }}\n    param k = f(2.0);\n"
    ));
    check(
        &src,
        &["function `f` calls itself (through f): recursion is not allowed"],
        "{ ",
        "f",
    );
    let src = circle(&format!(
        "{base}    fn f(a) {{ g(a) }}\n    fn g(a) {{ f(a) }}\n    param k = f(2.0);\n"
    ));
    check(
        &src,
        &["function `f` calls itself (through f → g): recursion is not allowed"],
        "fn g(a) { ",
        "f",
    );
    let src = circle(&format!(
        "{base}    fn f(a, b) {{ a + b }}\n    param k = f(2.0);\n"
    ));
    check(
        &src,
        &["function `f` takes 2 arguments, 1 given"],
        "k = f(",
        "2.0",
    );
    let src = circle(&format!("{base}    fn f(a) {{ a }}\n    fn f(b) {{ b }}\n"));
    check(
        &src,
        &["function `f` is defined twice"],
        "fn f(a) { a }\n    fn ",
        "f",
    );
    let src = circle(&format!("{base}    fn f(a) {{ let b = a; }}\n"));
    check(
        &src,
        &["a function's body ends with its value"],
        "fn f(a) ",
        "{ let b = a; }",
    );
}

#[test]
fn functions_inline_to_the_same_model() {
    // The five-bar's loop equation through a function, and written out: same operations.
    let with_fn = "pub mod fb {
        param l = 1.0;
        param g = 1.5;
        fn arm(base, r, a, s, b) -> vec2 {
            let elbow = base + vec2(r * cos(a), r * sin(a));
            elbow + vec2(s * cos(b), s * sin(b))
        }
        coord a1 = 1.9;
        coord a2 = 1.164454;
        coord ph1 = 0.966718;
        coord ph2 = 2.158655;
        independent a1, a2;
        constraint arm(vec2(0.0, 0.0), l, a1, 2.0 * l, ph1) == arm(vec2(g, 0.0), l, a2, 2.0 * l, ph2);
    }";
    let written = "pub mod fb {
        param l = 1.0;
        param g = 1.5;
        coord a1 = 1.9;
        coord a2 = 1.164454;
        coord ph1 = 0.966718;
        coord ph2 = 2.158655;
        independent a1, a2;
        constraint vec2(0.0, 0.0) + vec2(l * cos(a1), l * sin(a1)) + vec2(2.0 * l * cos(ph1), 2.0 * l * sin(ph1))
            == vec2(g, 0.0) + vec2(l * cos(a2), l * sin(a2)) + vec2(2.0 * l * cos(ph2), 2.0 * l * sin(ph2));
    }";
    let a = generate_str(with_fn, &Options::default()).expect("with a function");
    let b = generate_str(written, &Options::default()).expect("written out");
    let ops = |g: &mechgen_codegen::Generated| {
        g.modules[0]
            .functions
            .iter()
            .map(|f| (f.name.clone(), f.ops.total()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ops(&a), ops(&b));
}

// ---- issue 33: engine hardening ----

#[test]
fn a_raw_identifier_with_an_index_generates() {
    // `r#a[0]` is the name `a_0` (it panicked: "r#a_0" is not a valid Ident), one name
    // with `a[0]`; a raw constant array likewise (`r#w` declares `w_0`).
    let src = "pub mod m {\n    const r#w = [1.0];\n    coord r#a[0] = 0.6;\n    coord r#match[0] = 0.8;\n    constraint a[0] * r#a[0] + match_0 * r#match[0] == r#w[0] * w[0];\n}\n";
    let text = generated(src);
    assert!(text.contains("let a_0 = q[0];"), "{text}");
    assert!(text.contains("let match_0 = q[1];"), "{text}");
    syn::parse_file(&text).expect("generated code parses");
    // A raw loop variable is the loop variable.
    let src = "pub mod m {\n    for r#i in 0..2 {\n        coord x[i] = 0.6 + 0.2 * r#i;\n    }\n    constraint x[0] * x[0] + r#x[1] * x_1 == 1.0;\n}\n";
    let text = generated(src);
    assert!(text.contains("let x_1 = q[1];"), "{text}");
    // Past the end of a raw array: the located error of any array.
    let src = circle("    const r#w = [1.0];\n    constraint x * x + y * y == w[1];\n");
    check(
        &src,
        &["index 1 is out of range for `w` (length 1)"],
        "== w",
        "[1]",
    );
}

/// A body in the circle `x² + y² = 1` with the given fields.
fn circle_body(fields: &str) -> String {
    circle(&format!(
        "    constraint x * x + y * y == 1.0;\n    body b {{ {fields} }}\n"
    ))
}

#[test]
fn a_constant_mass_or_inertia_over_zero_is_located() {
    // These generated a `mass_matrix_into` that read `qd[0]` (E0425): the derivative of the
    // constant `1 / 0` came out as `0 / 0` and kept velocity terms in M.
    for (mass, token) in [
        ("1.0 / 0.0", "1.0 / 0.0"),
        ("0.0 / 0.0", "0.0 / 0.0"),
        ("1.0 / (x - x)", "1.0 / (x - x)"),
        ("1.0 / sin(0.0)", "1.0 / sin(0.0)"),
    ] {
        let src = circle_body(&format!("mass = {mass}, com = vec2(x, y)"));
        check(&src, &["not a finite number"], "mass = ", token);
    }
    let src = circle_body("mass = 1.0, inertia = 1.0 / 0.0, com = vec2(x, y), angle = x");
    check(
        &src,
        &["this expression is not a finite number: a constant in it evaluates to inf (a division by zero)"],
        "inertia = ",
        "1.0 / 0.0",
    );
}

#[test]
fn a_constant_that_is_not_a_number_is_located() {
    let body =
        "    constraint x * x + y * y == 1.0;\n    body b { mass = 1.0, com = vec2(x, y) }\n";
    for (bad, what) in [
        ("0.0 / 0.0", "NaN (a division by zero)"),
        ("sqrt(-1.0)", "NaN (`sqrt` of -1)"),
        ("ln(0.0)", "-inf (`ln` of 0)"),
    ] {
        let message = format!("a constant in it evaluates to {what}");
        let cases = [
            format!("{body}    force x = 2.0 + {bad};\n"),
            format!("{body}    gravity = vec2(0.0, {bad});\n"),
            format!("{body}    spring s {{ a = vec2(x, y), b = vec2(0.0, 0.0), stiffness = {bad}, length = 0.5 }}\n"),
            format!("{body}    spring s {{ a = vec2(x, y), b = vec2(0.0, 0.0), stiffness = 1.0, length = 0.5, damping = {bad} }}\n"),
            format!("{body}    mass_matrix {{ (x, x) = {bad} }}\n"),
            format!("{body}    generalized_force {{ y = {bad} }}\n"),
            format!("{body}    output o = x + {bad};\n"),
            format!("{body}    inequality g: x >= {bad};\n"),
            format!("    constraint x * x + y * y == 1.0;\n    body b {{ mass = {bad}, com = vec2(x, y) }}\n"),
            format!("    let unused = {bad};\n    constraint x * x + y * y == 1.0;\n"),
        ];
        for items in cases {
            let src = circle(&items);
            // The error covers the offending sub-expression.
            let after = &items[..items.find(bad).unwrap()];
            check(&src, &[&message], after, bad);
        }
    }
}

#[test]
fn a_const_or_parameter_that_is_not_a_number_is_named() {
    let src = circle("    const c = 2.0 * sqrt(-1.0);\n    constraint x * x + y * y == c;\n");
    check(
        &src,
        &["the constant `c` is not a finite number (it evaluates to NaN): `sqrt` of -1"],
        "const c = 2.0 * ",
        "sqrt(-1.0)",
    );
    let src = circle("    param l = 1.0 + ln(0.0);\n    constraint x * x + y * y == l;\n");
    check(
        &src,
        &["a parameter default is not a finite number (it evaluates to -inf): `ln` of 0"],
        "param l = 1.0 + ",
        "ln(0.0)",
    );
    // Hidden by a fold to 0 (`0 · NaN` is not 0): still an error.
    let src =
        circle("    const c = 0.0 * (0.0 / 0.0);\n    constraint x * x + y * y == 1.0 + c;\n");
    check(
        &src,
        &["the constant `c` is not a finite number"],
        "const c = 0.0 * (",
        "0.0 / 0.0",
    );
}

#[test]
fn a_constant_mass_must_be_positive() {
    for (mass, shown) in [("0.0", "0"), ("-1.0", "-1"), ("2.0 - 3.0", "-1")] {
        let src = circle_body(&format!("mass = {mass}, com = vec2(x, y)"));
        check(
            &src,
            &[&format!(
                "body `b` has the mass {shown}: a body's mass must be positive"
            )],
            "mass = ",
            mass,
        );
    }
    // A constant declared to be zero, and a mass that depends on a parameter (not judged).
    let src = circle("    const m = 0.0;\n    constraint x * x + y * y == 1.0;\n    body b { mass = m, com = vec2(x, y) }\n");
    check(&src, &["has the mass 0"], "mass = ", "m");
    let src = circle("    param m = 0.0;\n    constraint x * x + y * y == 1.0;\n    body b { mass = m, com = vec2(x, y) }\n");
    generated(&src);
}

#[test]
fn an_inequality_without_coordinates_is_an_error_like_a_constraint() {
    let cases = [
        ("1.0 >= 2.0", "inequality `g` does not involve any coordinate: it never holds (lhs − rhs is the constant -1); an inequality must restrict the coordinates"),
        ("2.0 <= 1.0", "it never holds (lhs − rhs is the constant -1)"),
        ("2.0 >= 1.0", "it always holds and says nothing"),
        ("x - x >= 0.0", "it always holds and says nothing"),
        ("t >= 1.0", "it depends only on time and parameters"),
        ("l >= 2.0", "it is false at the default parameters (lhs − rhs = -1.000e0)"),
        ("l >= 0.5", "it holds for the default parameters and says nothing"),
    ];
    for (condition, message) in cases {
        let src = circle(&format!(
            "    param l = 1.0;\n    constraint x * x + y * y == l;\n    inequality g: {condition};\n"
        ));
        check(&src, &[message], "inequality g: ", condition);
    }
    // A vector inequality names the component.
    let src = circle(
        "    constraint x * x + y * y == 1.0;\n    inequality g: vec2(x, 1.0) >= vec2(0.0, 2.0);\n",
    );
    check(
        &src,
        &["inequality `g_y` does not involve any coordinate: it never holds"],
        "g: ",
        "vec2(x, 1.0) >= vec2(0.0, 2.0)",
    );
    // One with a coordinate still generates.
    generated(&circle(
        "    constraint x * x + y * y == 1.0;\n    inequality g: y >= -0.5;\n",
    ));
}

#[test]
fn a_chart_whose_type_or_constant_is_no_free_name_is_an_error() {
    // `__` and `_1` gave no identifier (format_ident! panicked), `self_` the type `Self`,
    // `a` and `A` one type `A` and one `INDEPENDENT_A` (neither compiled).
    let chart = |items: &str| circle(&format!("    constraint x * x + y * y == 1.0;\n{items}"));
    for (name, why) in [
        ("__", "it gives no type name"),
        ("_1", "its type would be `1`"),
        ("self_", "its type would be `Self`"),
        ("_model", "its type would be `Model`"),
        ("s_vector", "its type would be `SVector`"),
    ] {
        let src = chart(&format!("    independent {name}: y;\n"));
        check(
            &src,
            &[
                &format!("`{name}` cannot name a chart: {why}"),
                "camel case",
            ],
            "independent ",
            name,
        );
    }
    let src = chart("    independent a: y;\n    independent A: x;\n");
    check(
        &src,
        &["the chart `A` would have the type `A` or the constant `INDEPENDENT_A` of the chart `a`"],
        "independent a: y;\n    independent ",
        "A",
    );
    let src = chart("    independent a_b: y;\n    independent a__b: x;\n");
    check(
        &src,
        &["type `AB`"],
        "independent a_b: y;\n    independent ",
        "a__b",
    );
    // A raw keyword is a fine chart name (`null_space_type`, `Type`, `INDEPENDENT_TYPE`).
    let text = generated(&chart("    independent r#type: y;\n"));
    assert!(text.contains("pub struct Type"), "{text}");
    assert!(text.contains("pub const INDEPENDENT_TYPE"), "{text}");
    assert!(text.contains("pub fn null_space_type"), "{text}");
}

#[test]
fn a_negative_constant_moment_of_inertia_is_an_error() {
    let src = circle_body("mass = 1.0, inertia = -1.0, com = vec2(x, y), angle = x");
    check(
        &src,
        &["a moment of inertia cannot be negative, found -1"],
        "inertia = ",
        "-1.0",
    );
    let src = "pub mod m {\n    coord x = 0.6;\n    coord y = 0.8;\n    coord z = 0.0;\n    constraint x * x + y * y + z * z == 1.0;\n    body b { mass = 1.0, inertia = vec3(1.0, 2.0 - 2.5, 1.0), com = vec3(x, y, z), rotation = rot_z(x) }\n}\n";
    check(
        src,
        &["a moment of inertia cannot be negative, found -0.5"],
        "inertia = ",
        "vec3(1.0, 2.0 - 2.5, 1.0)",
    );
    // Zero is a point mass that also turns.
    generated(&circle_body(
        "mass = 1.0, inertia = 0.0, com = vec2(x, y), angle = x",
    ));
}
