//! The shape of generated code: per-line docs, the user's names kept, no negation-only
//! `let`s, folded and flat health figures, lint allowances that name their lints.

use mechgen_codegen::emit::schedule::{Binding, Schedule};
use mechgen_codegen::expr::{Arena, Sym};
use mechgen_codegen::{generate_str, pretty, Options};

const SLIDER_CRANK: &str = "pub mod slider_crank {
    param l1 = 0.1;
    param l2 = 0.3;
    param m = 1.0;
    param g = 9.81;
    coord theta = 0.3;
    coord beta = 1.4721295802647691;
    coord s = 0.39407456415626446;
    independent theta;
    let crank = vec2(l1 * cos(theta), l1 * sin(theta));
    let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
    constraint crank + rod == vec2(s, 0.0);
    body slider { mass = m, com = vec2(s, 0.0) }
    gravity = vec2(0.0, -g);
}";

/// A point on a circle in the coordinates `x`, `y` (the most common names).
const CIRCLE: &str = "pub mod circle {
    param r = 1.0;
    param m = 2.0;
    param d = 0.5;
    coord x = 1.0;
    coord y = 0.0;
    constraint x * x + y * y == r * r;
    body bob { mass = m, com = vec2(x, y) }
    gravity = vec2(0.0, -9.81);
    generalized_force { x = -d * der(x) }
}";

fn code(src: &str) -> String {
    let g = generate_str(src, &Options::default()).expect("generates");
    pretty(&g.tokens)
}

/// The body of generated function `name` (from its signature to the next item).
fn function<'a>(code: &'a str, name: &str) -> &'a str {
    let start = code
        .find(&format!("pub fn {name}("))
        .unwrap_or_else(|| panic!("no `{name}` in\n{code}"));
    let rest = &code[start..];
    let end = rest[1..].find("\n    ///").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn docs_are_per_line_and_wrapped() {
    for src in [SLIDER_CRANK, CIRCLE] {
        let code = code(src);
        assert!(!code.contains("/**"), "block doc comment in\n{code}");
        for line in code.lines() {
            let l = line.trim_start();
            if let Some(doc) = l.strip_prefix("///") {
                // 92 columns, a little more where a break would start a list item.
                assert!(
                    doc.chars().count() <= 100,
                    "doc line of {} characters: {line}",
                    doc.chars().count()
                );
                // A wrapped sentence never starts a Markdown list item.
                assert!(!doc.starts_with(" + "), "list item by wrapping: {line}");
            }
        }
    }
    let code = code(SLIDER_CRANK);
    assert!(code.contains(
        "    /// Constraint residual `C(q, p, t)` (2 equations; zero on the mechanism's configuration\n    \
         /// manifold).\n    ///\n    /// Coordinate order: 0: `theta`, 1: `beta`, 2: `s`.\n"
    ));
}

#[test]
fn user_names_are_kept_and_the_generated_locals_give_way() {
    let code = code(CIRCLE);
    // `x` (coordinate), `m`, `d`, `r` (parameters) keep their names everywhere ...
    assert!(
        !code.contains("let x_ = q"),
        "renamed coordinate in\n{code}"
    );
    let solve = function(&code, "solve_dependent");
    // ... and the output buffers named like them take the trailing `_`.
    assert!(
        solve.contains("let mut x_ = SVector::<f64, NQ>::zeros();"),
        "{solve}"
    );
    let residual = function(&code, "residual_into");
    assert!(residual.contains("let x = q[0];"), "{residual}");
    assert!(residual.contains("let r = p.r;"), "{residual}");
    let wrapper = function(&code, "residual");
    assert!(
        wrapper.contains("let mut r_ = SVector::<f64, NC>::zeros();"),
        "{wrapper}"
    );
    let basis = function(&code, "null_space_fixed");
    assert!(
        basis.contains("let mut d_ = SMatrix::<f64, NQ, DOF>::zeros();"),
        "{basis}"
    );
    assert!(basis.contains("(d_, h)"), "{basis}");
    let forces = function(&code, "forces_into");
    assert!(forces.contains("let d = p.d;"), "{forces}");
    assert!(forces.contains("let m = p.m;"), "{forces}");
    // Names no user name claims stay short.
    let gamma = function(&code, "gamma");
    assert!(
        gamma.contains("let mut g = SVector::<f64, NC>::zeros();"),
        "{gamma}"
    );
}

#[test]
fn negations_of_a_name_are_written_where_they_are_stored() {
    let code = code(SLIDER_CRANK);
    let basis = function(&code, "null_space_fixed_into");
    assert!(basis.contains("out[(1, 0)] = -t5;"), "{basis}");
    for line in code.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("let ") {
            if let Some((_, rhs)) = rest.split_once(" = -") {
                let rhs = rhs.trim_end_matches(';');
                assert!(
                    !rhs.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'),
                    "negation-only let: {l}"
                );
            }
        }
    }
}

#[test]
fn a_lone_root_negation_is_inlined_unless_the_body_is_chunked() {
    // Small: `-(a * b)` stored once is a root negating the name of `a * b`.
    let mut arena = Arena::new();
    let a = arena.sym(Sym::Coord(0));
    let b = arena.sym(Sym::Coord(1));
    let ab = arena.mul(a, b);
    let s = arena.sin(ab);
    let neg = arena.neg(ab);
    let sched = Schedule::new(&arena, &[s, neg]);
    assert_eq!(sched.binding[neg.index()], Some(Binding::Inline));
    assert_eq!(sched.binding[ab.index()], Some(Binding::Let));
    // Stored twice: still written where it is stored (the fused `kinematics` stores a
    // Jacobian entry twice, in `C_J` and in the basis).
    let sched = Schedule::new(&arena, &[s, neg, neg]);
    assert_eq!(sched.binding[neg.index()], Some(Binding::Inline));
    // Used by another expression as well: still written where it is used.
    let e = arena.mul(neg, s);
    let sched = Schedule::new(&arena, &[e, neg]);
    assert_eq!(sched.binding[neg.index()], Some(Binding::Inline));
    // A body long enough to be split into chunks keeps every root named (a chunk hands
    // on only its `let`s).
    let mut roots = vec![neg, s];
    let mut x = a;
    for k in 0..(mechgen_codegen::emit::MAX_LETS_PER_FUNCTION + 10) {
        let c = arena.constant(k as f64 + 0.5);
        let y = arena.mul(x, c);
        x = arena.sin(y);
        roots.push(x);
    }
    let sched = Schedule::new(&arena, &roots);
    assert!(sched.lets.len() > mechgen_codegen::emit::MAX_LETS_PER_FUNCTION);
    assert_eq!(sched.binding[neg.index()], Some(Binding::Let));
}

#[test]
fn health_is_folded_and_flat() {
    let code = code(SLIDER_CRANK);
    let basis = function(&code, "null_space_fixed_into");
    // The constant pivot `-1` (the slider's column) folds into `1.0` twice, and needs no
    // finiteness check; the links' entries `l cos x`, `l sin x` fold into `l` (their
    // squares sum to `l²`), their angles checked finite instead. Minima by the runtime's
    // `smallest`/`lesser` (one comparison each; the pivots are checked finite), not
    // `f64::min`.
    assert!(
        basis.contains("let health_scale = f64::sqrt(1.0 + l1 * l1 + l2 * l2);"),
        "{basis}"
    );
    assert!(
        basis.contains(
            "let min_pivot = ::mechgen::runtime::__generated::smallest(f64::abs(t3), [1.0]);"
        ),
        "{basis}"
    );
    // The decision (finite inputs, positive scale, else 0) is the runtime's `health`, a
    // call: the body is flat, no `if`.
    assert!(
        basis.contains(
            "let health = ::mechgen::runtime::__generated::health(t3 + theta + beta + health_scale,"
        ),
        "{basis}"
    );
    assert!(!basis.contains(" if "), "{basis}");
    assert!(!basis.contains("f64::min"), "{basis}");
    assert!(!basis.contains("-1.0 * -1.0"), "{basis}");
}

#[test]
fn long_health_sums_are_flat_chains_under_a_balanced_tree() {
    let src = std::fs::read_to_string(format!(
        "{}/../examples/stewart_platform/stewart.mech",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("reads");
    let code = code(&src);
    let basis = function(&code, "null_space_fixed_into");
    // 98 distinct entries (a negated entry is squared once, unsigned), folded into 58
    // squares (`F sin x`, `F cos x` pairs into `F`, some counted twice: `2.0 * (t * t)`)
    // in 8 chains of at most 8 terms (no other parentheses inside a chain).
    let chains: Vec<&str> = basis
        .split("let health_sq")
        .skip(1)
        .map(|s| s.split(';').next().unwrap_or(""))
        .collect();
    assert_eq!(chains.len(), 8, "{basis}");
    for c in &chains {
        let weighted = c.matches("* (").count();
        assert_eq!(c.matches('(').count(), weighted, "nested chain: {c}");
        assert!(!c.contains("(("), "nested chain: {c}");
        assert!(c.matches('+').count() <= 7, "long chain: {c}");
    }
    let scale = basis
        .split("let health_scale = ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap_or("");
    // A balanced tree of the 8 chains: 3 levels.
    assert!(!scale.contains("(((((("), "{scale}");
}

#[test]
fn lint_allowances_name_their_lints() {
    let code = code(SLIDER_CRANK);
    assert!(code.contains("#[allow(unused_variables, non_snake_case, clippy::approx_constant)]\npub mod slider_crank {"));
    assert!(!code.contains("clippy::all"));
    assert!(!code.contains("clippy::pedantic"));
    assert!(!code.contains("unused_mut"));
    // `C_t` of scleronomic constraints: zero, with no buffer to leave unused.
    let jt = function(&code, "jacobian_t");
    assert!(jt.contains("SVector::<f64, NC>::zeros()\n    }"), "{jt}");
    assert!(!jt.contains("let mut"), "{jt}");
    // The scalar `energy` and the two functions whose value is the health figure return
    // their last `let`: allowed there only.
    for (f, inline) in [
        ("energy", "#[inline]"),
        ("null_space_fixed_into", "#[inline(always)]"),
        ("kinematics_into", "#[inline]"),
    ] {
        let at = code.find(&format!("pub fn {f}(")).expect(f);
        let before = &code[..at];
        assert!(
            before.ends_with(&format!(
                "#[allow(clippy::let_and_return)]\n    {inline}\n    "
            )),
            "{}",
            &before[before.len() - 200..]
        );
    }
    assert_eq!(code.matches("clippy::let_and_return").count(), 3);
}

#[test]
fn a_coordinate_named_like_a_generated_function_keeps_its_name() {
    // The seven-body mechanism's angle `gamma` was `gamma_` in every body.
    let code = code(
        "pub mod arm {
            param l = 1.0;
            coord gamma = 0.5;
            coord residual = 0.87758256189;
            constraint l * cos(gamma) == residual;
        }",
    );
    assert!(!code.contains("let gamma_ ="), "{code}");
    assert!(!code.contains("let residual_ ="), "{code}");
    let residual = function(&code, "residual_into");
    assert!(residual.contains("let gamma = q[0];"), "{residual}");
    assert!(residual.contains("let residual = q[1];"), "{residual}");
}

/// Every method of the generated trait impls that is not generic carries `#[inline]`:
/// without it, a caller in another crate (the runtime's step Jacobians instantiated in a
/// crate that depends on the one holding the generated module) cannot inline the
/// forwarders, so the generated bodies it calls one after another at the same `q` cannot
/// share their trigonometry (the slider crank's composed step Jacobian cost 3.5k
/// instructions instead of 2.7k that way).
#[test]
fn trait_methods_are_inline() {
    let opts = Options {
        generic: true,
        derivatives: true,
        ..Options::default()
    };
    let g = generate_str(SLIDER_CRANK, &opts).expect("generates");
    let code = pretty(&g.tokens);
    let lines: Vec<&str> = code.lines().collect();
    let mut impl_header = "";
    let (mut checked, mut step) = (0, 0);
    for (i, line) in lines.iter().enumerate() {
        let l = line.trim();
        if l.starts_with("impl") {
            impl_header = l;
        }
        if impl_header.contains(" for Model") && l.starts_with("fn ") && !l.contains("<S") {
            assert!(
                lines[i - 1].trim().starts_with("#[inline"),
                "{impl_header}: `{l}` without #[inline]"
            );
            checked += 1;
            step += usize::from(impl_header.contains("StepDerivatives"));
        }
    }
    assert!(
        checked > 30 && step > 20,
        "{checked} methods checked, {step} of StepDerivatives"
    );
}

/// `n` unit circles, each a point `(x_i, y_i)` with a body: `2n` coordinates, `n` equations.
fn circles(n: usize) -> String {
    let mut s = String::from("pub mod circles {\n");
    for i in 0..n {
        s.push_str(&format!(
            "    coord x{i} = 1.0;\n    coord y{i} = 0.0;\n    constraint x{i} * x{i} + y{i} * y{i} == 1.0;\n    body b{i} {{ mass = 1.0, com = vec2(x{i}, y{i}) }}\n"
        ));
    }
    s.push_str("    gravity = vec2(0.0, -9.81);\n}\n");
    s
}

#[test]
fn large_by_value_outputs_point_to_their_into_forms() {
    const NOTE: &str = "zeroed and returned by value on every call";
    // 33 circles: the 33 × 66 Jacobian is 17 KB, the 66 × 66 mass matrix 34 KB (the note
    // appears above 16 KB).
    let big = code(&circles(33));
    // The doc lines and attributes right above `pub fn {name}(`.
    let doc_of = |code: &str, name: &str| -> String {
        let end = code
            .find(&format!("pub fn {name}("))
            .unwrap_or_else(|| panic!("no `{name}`"));
        let mut lines: Vec<&str> = code[..end]
            .lines()
            .rev()
            .skip(1)
            .take_while(|l| l.trim_start().starts_with("///") || l.trim_start().starts_with("#["))
            .collect();
        lines.reverse();
        lines.join("\n")
    };
    let j = doc_of(&big, "jacobian");
    assert!(j.contains("The value is 17 KB") && j.contains(NOTE), "{j}");
    assert!(
        j.contains("[`jacobian_into`]") && j.contains("`jacobian_values`"),
        "{j}"
    );
    let m = doc_of(&big, "mass_matrix");
    assert!(
        m.contains("The value is 34 KB") && m.contains("[`mass_matrix_into`]"),
        "{m}"
    );
    assert!(!m.contains("jacobian_values"), "{m}");
    // The basis (66 × 33, its size fixed by DOF) and the small outputs have no note; nor has
    // any function of a small mechanism.
    assert!(!doc_of(&big, "residual").contains(NOTE));
    assert!(!doc_of(&big, "null_space").contains(NOTE));
    assert!(!code(&circles(32)).contains("The value is 16 KB"));
    assert!(!code(SLIDER_CRANK).contains(NOTE));
}
