//! The benchmarked mechanisms as `.mech` text (shared with `build.rs`).

use crate::families::{closed_chain, four_bar_chain};

/// Family sizes measured.
pub const KS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

const SLIDER_CRANK_RS: &str = include_str!("../../examples/mechanisms/slider_crank.rs");
const SPATIAL_SLIDER_CRANK_RS: &str =
    include_str!("../../examples/mechanisms/spatial_slider_crank.rs");
const ANDREWS_MECH: &str = include_str!("../../examples/seven_body/andrews.mech");
const STEWART_MECH: &str = include_str!("../../examples/stewart_platform/stewart.mech");

/// The body of a `mechgen::mechanism! { ... }` invocation: the text between the opening
/// brace and the final closing brace.
pub fn macro_body(rs: &str) -> String {
    let start = rs
        .find("mechgen::mechanism! {")
        .map(|i| i + "mechgen::mechanism! {".len())
        .expect("a mechanism! invocation");
    let end = rs.rfind('}').expect("a closing brace");
    rs[start..end].to_string()
}

/// A mechanism of the suite.
#[derive(Clone, Debug)]
pub struct Source {
    /// Display name.
    pub label: String,
    /// Module name (the generated `pub mod`).
    pub module: String,
    /// `.mech` text.
    pub text: String,
    /// Family size, for the families.
    pub k: Option<usize>,
    /// Family name, for the families.
    pub family: Option<&'static str>,
}

/// The four example mechanisms.
pub fn examples() -> Vec<Source> {
    let ex = |label: &str, module: &str, text: String| Source {
        label: label.to_string(),
        module: module.to_string(),
        text,
        k: None,
        family: None,
    };
    vec![
        ex("slider crank", "slider_crank", macro_body(SLIDER_CRANK_RS)),
        ex(
            "spatial slider crank",
            "spatial_slider_crank",
            macro_body(SPATIAL_SLIDER_CRANK_RS),
        ),
        ex("seven-body (Andrews)", "andrews", ANDREWS_MECH.to_string()),
        ex("Stewart platform", "stewart", STEWART_MECH.to_string()),
    ]
}

/// One member of a family.
pub fn family(name: &'static str, k: usize) -> Source {
    let text = match name {
        "four_bar_chain" => four_bar_chain(k),
        "closed_chain" => closed_chain(k),
        _ => panic!("unknown family {name}"),
    };
    Source {
        label: format!("{name}({k})"),
        module: format!("{name}_{k}"),
        text,
        k: Some(k),
        family: Some(name),
    }
}

/// Every mechanism of the suite: the examples, then both families for each `k` in [`KS`].
pub fn all() -> Vec<Source> {
    let mut v = examples();
    for name in ["four_bar_chain", "closed_chain"] {
        for k in KS {
            v.push(family(name, k));
        }
    }
    v
}

/// The mechanisms compiled into this crate for the per-call measurements.
pub fn compiled() -> Vec<Source> {
    let mut v = examples();
    v.push(family("four_bar_chain", 64));
    v.push(family("closed_chain", 16));
    v
}
