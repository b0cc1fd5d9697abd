//! Generates the benchmarked mechanisms into `OUT_DIR` (as a user's build.rs would):
//! the four examples, `four_bar_chain(64)` and `closed_chain(16)`.

#[allow(dead_code)]
#[path = "src/families.rs"]
mod families;
#[allow(dead_code)]
#[path = "src/sources.rs"]
mod sources;

use std::path::PathBuf;

fn main() {
    for f in [
        "src/families.rs",
        "src/sources.rs",
        "../examples/mechanisms/slider_crank.rs",
        "../examples/mechanisms/spatial_slider_crank.rs",
        "../examples/seven_body/andrews.mech",
        "../examples/stewart_platform/stewart.mech",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    for s in sources::compiled() {
        // The generic family (step Jacobians by dual numbers, benches/step.rs) for the
        // three mechanisms the step benchmark runs; the large families stay f64 only.
        let opts = mechgen_codegen::Options {
            generic: matches!(s.module.as_ref(), "slider_crank" | "andrews" | "stewart"),
            derivatives: matches!(s.module.as_ref(), "slider_crank" | "andrews" | "stewart"),
            ..mechgen_codegen::Options::default()
        };
        let g = match mechgen_codegen::generate_str(&s.text, &opts) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{}: {e:?}", s.label);
                std::process::exit(1);
            }
        };
        let text = mechgen_codegen::pretty(&g.tokens);
        std::fs::write(out.join(format!("{}.rs", s.module)), text).expect("write module");
    }
}
