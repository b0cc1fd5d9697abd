//! Imports the robots of `models/` from their URDF files (`mechgen_codegen::import::urdf`)
//! and the models of `mjcf/` from their MJCF files (`mechgen_codegen::import::mjcf`), and
//! generates a module for each into `OUT_DIR` (`<name>.rs`, with the imported `<name>.mech`
//! beside it for reading, and `stats.txt`: generation time and lines).

use std::path::{Path, PathBuf};

use mechgen_codegen::import::mjcf;
use mechgen_codegen::import::urdf::{import, ImportOptions};
use mechgen_codegen::{generate_file_text, Options};

/// The robots: module name, URDF file under `models/`, mimic joints as constraints,
/// floating base.
const ROBOTS: [(&str, &str, bool, bool); 4] = [
    ("ur5", "ur_description/ur5_robot.urdf", true, false),
    // Pinocchio's default model keeps the mimic finger joint independent: so does this one.
    ("panda", "panda_description/panda.urdf", false, false),
    // The quadruped and the humanoid on a floating base (Pinocchio's free-flyer root).
    ("solo", "solo_description/robots/solo12.urdf", true, true),
    (
        "romeo",
        "romeo_description/urdf/romeo_small.urdf",
        true,
        true,
    ),
];

/// The MJCF models under `mjcf/` (written for the tests; `tests/mujoco.rs`).
const MJCF: [&str; 5] = ["chain", "radian", "four_bar", "welded_arm", "ball_free"];

fn main() {
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| format!("OUT_DIR: {e}"))?);
    let mut stats = String::new();
    for (name, file, mimic, floating_base) in ROBOTS {
        let path = Path::new("models").join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let opts = ImportOptions {
            module: Some(name.to_string()),
            mimic_constraints: mimic,
            floating_base,
            ..ImportOptions::default()
        };
        let imported = import(&text, &opts).map_err(|e| format!("{}:{e}", path.display()))?;
        generate(&out, name, &imported.mech, &mut stats)?;
    }
    // Published MJCF robots, behind the crate's features (their generated modules are large:
    // Cassie's is 110,000 lines, minutes of rustc).
    let published = [(
        "cassie",
        "agility_cassie/cassie.xml",
        "CARGO_FEATURE_CASSIE",
    )];
    let mut mjcf_files: Vec<(&str, PathBuf)> = MJCF
        .iter()
        .map(|name| (*name, Path::new("mjcf").join(format!("{name}.xml"))))
        .collect();
    for (name, file, feature) in published {
        if std::env::var_os(feature).is_some() {
            mjcf_files.push((name, Path::new("models").join(file)));
        }
    }
    for (name, path) in mjcf_files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let imported = mjcf::import(&text, &mjcf::ImportOptions::default())
            .map_err(|e| format!("{}:{e}", path.display()))?;
        generate(&out, name, &imported.mech, &mut stats)?;
    }
    let dest = out.join("stats.txt");
    std::fs::write(&dest, stats).map_err(|e| format!("{}: {e}", dest.display()))?;
    Ok(())
}

/// Writes `<name>.mech` and the generated `<name>.rs` into `out`; the generation time and
/// size into `stats`.
fn generate(out: &Path, name: &str, text: &str, stats: &mut String) -> Result<(), String> {
    let mech = out.join(format!("{name}.mech"));
    std::fs::write(&mech, text).map_err(|e| format!("{}: {e}", mech.display()))?;
    let t = std::time::Instant::now();
    let (_, rust) =
        generate_file_text(&mech, text, &Options::for_files()).map_err(|e| e.to_string())?;
    // Generation time (import excluded) and size, for bench/RESULTS.md.
    stats.push_str(&format!(
        "{name}: generated in {:.1} ms, {} lines\n",
        t.elapsed().as_secs_f64() * 1e3,
        rust.lines().count()
    ));
    let dest = out.join(format!("{name}.rs"));
    std::fs::write(&dest, rust).map_err(|e| format!("{}: {e}", dest.display()))
}
