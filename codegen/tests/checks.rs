//! Generation checks before probing (`codegen/src/check.rs`): equations that involve no
//! coordinate, contradictory equations, nominal coordinates off the constraints, the
//! automatic choice of independent coordinates, and models without constraints.

use mechgen_codegen::{generate_str, Error, Generated, Options};

fn gen(src: &str) -> Result<Generated, Error> {
    generate_str(src, &Options::default())
}

#[track_caller]
fn err(src: &str) -> Error {
    match gen(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e,
    }
}

/// The source text the error's span covers.
fn covered(src: &str, e: &Error) -> String {
    let r = e.span.byte_range();
    src[r].to_string()
}

fn circle(extra: &str) -> String {
    format!("pub mod m {{\n    coord x = 0.6;\n    coord y = 0.8;\n{extra}}}\n")
}

#[test]
fn contradictory_circles_are_inconsistent_not_dependent() {
    let src =
        circle("    constraint x * x + y * y == 1.0;\n    constraint x * x + y * y == 4.0;\n");
    let e = err(&src);
    assert!(
        e.message.starts_with(
            "the constraints look inconsistent: no configuration found satisfies them all"
        ),
        "{}",
        e.message
    );
    // Both equations are named as in conflict; the least-squares residual is 1.5·√2.
    assert!(
        e.message.contains("`x * x + y * y == 1.0`"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("`x * x + y * y == 4.0`"),
        "{}",
        e.message
    );
    assert!(e.message.contains("2.121e0"), "{}", e.message);
    assert!(covered(&src, &e).starts_with("x * x + y * y =="));
}

#[test]
fn false_equation_without_coordinates() {
    let src = circle("    constraint x * x + y * y == 1.0;\n    constraint 1.0 == 2.0;\n");
    let e = err(&src);
    assert_eq!(
        e.message,
        "constraint `1.0 == 2.0` does not involve any coordinate: it is false at the default \
         parameters (residual -1.000e0); a constraint must restrict the coordinates"
    );
    assert_eq!(covered(&src, &e), "1.0 == 2.0");
}

#[test]
fn parameter_only_and_time_only_equations() {
    let src = "pub mod m {\n    param l = 1.0;\n    coord x = 0.6;\n    coord y = 0.8;\n    \
               constraint x * x + y * y == l;\n    constraint l == 2.0;\n}\n";
    let e = err(src);
    assert!(
        e.message
            .contains("`l == 2.0` does not involve any coordinate: it is false"),
        "{}",
        e.message
    );
    let src = circle("    constraint x * x + y * y == 1.0;\n    constraint t == 0.5;\n");
    let e = err(&src);
    assert!(
        e.message
            .contains("`t == 0.5` does not involve any coordinate: it depends only on time"),
        "{}",
        e.message
    );
}

const SLIDER: &str = "pub mod slider_crank {
    param l1 = 0.1;
    param l2 = 0.3;
    coord theta = 0.3;
    coord beta = BETA;
    coord s = S;
    let crank = vec2(l1 * cos(theta), l1 * sin(theta));
    let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
    constraint crank + rod == vec2(s, 0.0);
}
";

fn slider(beta: &str, s: &str) -> String {
    SLIDER.replace("BETA", beta).replace("S", s)
}

#[test]
fn nominal_far_off_is_an_error() {
    // β = 0.46 puts the rod end 0.239 below the slider line: the projection lands at
    // θ = 1.12, another configuration altogether.
    let src = slider("0.46", "0.31");
    let e = err(&src);
    assert_eq!(
        e.message,
        "the nominal coordinates are far off the constraints: assembling them turns angle \
         `theta` by 0.82 rad (0.3000 → 1.1185; at most 0.5 rad is accepted), so the analysis \
         would describe another configuration (`crank + rod == vec2(s, 0.0) [y]` is off by \
         2.393e-1 at the nominal). Fix the nominal values (a sign error?)"
    );
    assert_eq!(covered(&src, &e), "theta");
}

#[test]
fn nominal_slightly_off_is_a_note() {
    let g = gen(&slider("1.47", "0.394")).expect("generates");
    let notes = &g.modules[0].notes;
    let note = notes
        .iter()
        .find(|n| n.starts_with("the nominal coordinates are off the constraints by up to"))
        .unwrap_or_else(|| panic!("no nominal note in {notes:?}"));
    assert!(
        note.ends_with(
            "probing starts from the assembled configuration (`beta` +1.931e-3 to 1.471931, \
             `theta` +6.201e-4 to 0.300620, `s` +5.035e-5 to 0.394050)"
        ),
        "{note}"
    );
    // On the manifold: no note.
    let g = gen(&slider("1.4721295802647691", "0.39407456415626446")).expect("generates");
    assert!(
        !g.modules[0].notes.iter().any(|n| n.contains("nominal")),
        "{:?}",
        g.modules[0].notes
    );
}

/// A nominal that Newton's method cannot assemble (`z` at −1.2·10²⁹: the minimum-norm step
/// throws the angles to ~10²⁸), where a perturbed start finds a configuration: the note
/// names the moves in scientific notation (it printed the angles' new values as 29-digit
/// fixed-point numbers; found by the fuzzer, seed 3, input 9,971).
#[test]
fn a_perturbed_starts_note_prints_huge_values_in_scientific_notation() {
    let src = "mod top { param l = 0.5; coord x = 0.0; coord y = 0.0; \
               coord z = -123456789012345678901234567890.0; coord phi = 0.3; coord theta = 0.2; \
               coord psi = 0.1; let rot = rot_z(psi) * rot_y(theta) * rot_x(phi); \
               constraint vec3(x, y, z) + rot * vec3(0.0, 0.0, l) == vec3(0.0, 0.0, 0.0); }";
    let g = gen(src).expect("generates");
    let notes = &g.modules[0].notes;
    let note = notes
        .iter()
        .find(|n| n.starts_with("the nominal coordinates do not assemble by Newton's method"))
        .unwrap_or_else(|| panic!("no perturbed-start note in {notes:?}"));
    assert!(
        note.contains("a configuration on the constraints was found from a perturbed start (`"),
        "{note}"
    );
    let longest_digit_run = note
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(longest_digit_run <= 8, "{note}");
    assert!(note.contains("e2"), "{note}");
}

#[test]
fn automatic_independent_choice_is_reported() {
    let g = gen(&slider("1.4721295802647691", "0.39407456415626446")).expect("generates");
    let m = &g.modules[0];
    assert_eq!(m.independent, ["theta"]);
    assert!(
        m.notes.iter().any(|n| n
            == "independent coordinates chosen by the analysis: `theta` (name the actuated \
                joints with `independent` to choose them)"),
        "{:?}",
        m.notes
    );
    let named = slider("1.4721295802647691", "0.39407456415626446")
        .replace("constraint", "independent theta;\n    constraint");
    let g = gen(&named).expect("generates");
    assert!(
        !g.modules[0].notes.iter().any(|n| n.contains("chosen by")),
        "{:?}",
        g.modules[0].notes
    );
}

#[test]
fn model_without_constraints_has_identity_basis() {
    let src = "pub mod free {\n    coord a = 0.3;\n    coord b = -0.2;\n}\n";
    let g = gen(src).expect("a model without constraints generates");
    let m = &g.modules[0];
    assert_eq!((m.nq, m.nc, m.rank, m.dof), (2, 0, 0, 2));
    assert_eq!(m.independent, ["a", "b"]);
    let text = mechgen_codegen::pretty(&g.tokens);
    assert!(text.contains("d[(0, 0)] = 1.0;") && text.contains("d[(1, 1)] = 1.0;"));
    assert!(!text.contains("d[(0, 1)]") && !text.contains("d[(1, 0)]"));
}
