//! The shipped inputs the mutator starts from: the `.mech` files of the examples and the
//! `mechanism!` blocks of the examples and tests (compile-fail cases included), embedded
//! at compile time.

/// `.mech` files (path, text).
const MECH_FILES: &[(&str, &str)] = &[
    (
        "examples/seven_body/andrews.mech",
        include_str!("../../examples/seven_body/andrews.mech"),
    ),
    (
        "examples/stewart_platform/stewart.mech",
        include_str!("../../examples/stewart_platform/stewart.mech"),
    ),
];

/// Rust files holding `mechanism!` blocks (path, text).
const RUST_FILES: &[(&str, &str)] = &[
    ("tests/examples.rs", include_str!("../../tests/examples.rs")),
    ("tests/fallback.rs", include_str!("../../tests/fallback.rs")),
    ("tests/names.rs", include_str!("../../tests/names.rs")),
    (
        "tests/redundant.rs",
        include_str!("../../tests/redundant.rs"),
    ),
    (
        "tests/spatial_dynamics.rs",
        include_str!("../../tests/spatial_dynamics.rs"),
    ),
    (
        "examples/mechanisms/slider_crank.rs",
        include_str!("../../examples/mechanisms/slider_crank.rs"),
    ),
    (
        "examples/mechanisms/spatial_slider_crank.rs",
        include_str!("../../examples/mechanisms/spatial_slider_crank.rs"),
    ),
    (
        "tests/ui/caret_power.rs",
        include_str!("../../tests/ui/caret_power.rs"),
    ),
    (
        "tests/ui/const_depends_on_coord.rs",
        include_str!("../../tests/ui/const_depends_on_coord.rs"),
    ),
    (
        "tests/ui/constraint_assign.rs",
        include_str!("../../tests/ui/constraint_assign.rs"),
    ),
    (
        "tests/ui/constraint_not_equation.rs",
        include_str!("../../tests/ui/constraint_not_equation.rs"),
    ),
    (
        "tests/ui/der_in_constraint.rs",
        include_str!("../../tests/ui/der_in_constraint.rs"),
    ),
    (
        "tests/ui/duplicate_name.rs",
        include_str!("../../tests/ui/duplicate_name.rs"),
    ),
    (
        "tests/ui/independent_fixed.rs",
        include_str!("../../tests/ui/independent_fixed.rs"),
    ),
    (
        "tests/ui/independent_too_many.rs",
        include_str!("../../tests/ui/independent_too_many.rs"),
    ),
    (
        "tests/ui/missing_semicolon.rs",
        include_str!("../../tests/ui/missing_semicolon.rs"),
    ),
    (
        "tests/ui/no_coordinates.rs",
        include_str!("../../tests/ui/no_coordinates.rs"),
    ),
    (
        "tests/ui/no_motion.rs",
        include_str!("../../tests/ui/no_motion.rs"),
    ),
    (
        "tests/ui/nonfinite_const.rs",
        include_str!("../../tests/ui/nonfinite_const.rs"),
    ),
    (
        "tests/ui/powi_exponent.rs",
        include_str!("../../tests/ui/powi_exponent.rs"),
    ),
    (
        "tests/ui/rank_zero_numeric.rs",
        include_str!("../../tests/ui/rank_zero_numeric.rs"),
    ),
    (
        "tests/ui/rank_zero_parameter_only.rs",
        include_str!("../../tests/ui/rank_zero_parameter_only.rs"),
    ),
    (
        "tests/ui/reserved_name.rs",
        include_str!("../../tests/ui/reserved_name.rs"),
    ),
    (
        "tests/ui/scalar_eq_vector.rs",
        include_str!("../../tests/ui/scalar_eq_vector.rs"),
    ),
    (
        "tests/ui/sin_of_vector.rs",
        include_str!("../../tests/ui/sin_of_vector.rs"),
    ),
    (
        "tests/ui/unknown_body_field.rs",
        include_str!("../../tests/ui/unknown_body_field.rs"),
    ),
    (
        "tests/ui/unknown_function.rs",
        include_str!("../../tests/ui/unknown_function.rs"),
    ),
    (
        "tests/ui/unknown_item.rs",
        include_str!("../../tests/ui/unknown_item.rs"),
    ),
    (
        "tests/ui/unknown_name.rs",
        include_str!("../../tests/ui/unknown_name.rs"),
    ),
    (
        "tests/ui/unsupported_if.rs",
        include_str!("../../tests/ui/unsupported_if.rs"),
    ),
    (
        "tests/ui/wrong_arity.rs",
        include_str!("../../tests/ui/wrong_arity.rs"),
    ),
    (
        "tests/ui/z_of_vec2.rs",
        include_str!("../../tests/ui/z_of_vec2.rs"),
    ),
];

/// The bodies of the `mechanism! { ... }` invocations in `src` (brace-matched; braces in
/// comments are not expected in these files).
pub fn mechanism_blocks(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(at) = rest.find("mechanism!") {
        let after = &rest[at + "mechanism!".len()..];
        let Some(open) = after.find(['{', '(']) else {
            break;
        };
        // Only `mechanism! {` / `mechanism!(`, not a mention in prose.
        if !after[..open].trim().is_empty() {
            rest = after;
            continue;
        }
        let (o, c) = if after.as_bytes()[open] == b'{' {
            (b'{', b'}')
        } else {
            (b'(', b')')
        };
        let mut depth = 0usize;
        let mut end = None;
        for (i, &b) in after.as_bytes().iter().enumerate().skip(open) {
            if b == o {
                depth += 1;
            } else if b == c {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
        }
        let Some(end) = end else { break };
        out.push(after[open + 1..end].to_string());
        rest = &after[end..];
    }
    out
}

/// Every shipped input: (where it comes from, its text).
pub fn all() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = MECH_FILES
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect();
    for (path, src) in RUST_FILES {
        for (i, block) in mechanism_blocks(src).into_iter().enumerate() {
            out.push((format!("{path} (mechanism! #{i})"), block));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_extracted() {
        let b = mechanism_blocks("x mechanism! in prose\nmechanism! { mod a { coord x; } }\n");
        assert_eq!(b, vec![" mod a { coord x; } ".to_string()]);
        let all = all();
        // 2 .mech files, and at least one block per Rust file.
        assert!(all.len() >= 2 + RUST_FILES.len(), "{}", all.len());
        assert!(all.iter().any(|(_, s)| s.contains("pub mod andrews")));
    }
}
