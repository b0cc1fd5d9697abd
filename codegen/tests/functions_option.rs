//! The `functions` option's errors: an unknown name (with the module's functions listed and
//! the nearest suggested), a name given twice, an empty or malformed list; and that a
//! selection leaves the other functions and the trait impls out.

use mechgen_codegen::{generate_str, pretty, Options};

const SLIDER: &str = "
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

fn error(attr: &str) -> String {
    match generate_str(&format!("{attr}\n{SLIDER}"), &Options::default()) {
        Ok(_) => panic!("{attr} generated"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_selections_are_errors() {
    let e = error("#![functions(jacobean)]");
    assert!(
        e.contains("`jacobean`") && e.contains("did you mean `jacobian`"),
        "{e}"
    );
    assert!(
        e.contains("`null_space_fixed`") && e.contains("`residual`"),
        "{e}"
    );
    let e = error("#![functions(jacobian, jacobian)]");
    assert!(e.contains("`jacobian` is listed twice"), "{e}");
    for bad in [
        "#![functions()]",
        "#![functions]",
        "#![functions = \"jacobian\"]",
        "#![functions(1)]",
    ] {
        let e = error(bad);
        assert!(
            e.contains("lists the functions to generate by name"),
            "{bad}: {e}"
        );
    }
    assert!("jacobian, null space"
        .parse::<mechgen_codegen::FunctionList>()
        .is_err());
    assert_eq!(
        "jacobian,residual,jacobian".parse::<mechgen_codegen::FunctionList>(),
        Ok(mechgen_codegen::FunctionList(vec![
            "jacobian".into(),
            "residual".into()
        ]))
    );
}

#[test]
fn a_selection_has_only_its_functions() {
    let full = pretty(
        &generate_str(SLIDER, &Options::default())
            .expect("full")
            .tokens,
    );
    let g = generate_str(
        &format!("#![functions(jacobian)]\n{SLIDER}"),
        &Options::default(),
    )
    .expect("subset");
    let sub = pretty(&g.tokens);
    assert!(sub.contains("pub fn jacobian(") && sub.contains("pub fn jacobian_into("));
    for absent in [
        "pub fn residual",
        "pub fn null_space",
        "impl ::mechgen::runtime::Mechanism",
    ] {
        assert!(full.contains(absent), "{absent} not in the full module");
        assert!(!sub.contains(absent), "{absent} in the subset");
    }
    let names: Vec<&str> = g.modules[0]
        .functions
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["jacobian"]);
}
