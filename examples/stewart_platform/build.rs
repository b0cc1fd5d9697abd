//! Generates the Stewart platform module from `stewart.mech`, exactly as a user's crate
//! would: `mechgen-build` as a build-dependency, output included from `OUT_DIR`. Also
//! `stewart_auto`: `stewart.mech` without its `independent` line (the analysis chooses;
//! tests/auto_independent.rs). The engine's checks of this module and of the same platform
//! written with a loop over its legs (`stewart_loop.mech`) and with frames and joints
//! (`stewart_frames.mech`) are in `tests/models`.

use std::path::PathBuf;

fn main() {
    if let Err(e) = mechgen_build::Builder::new()
        .file("stewart.mech")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let auto = match std::fs::read_to_string("stewart.mech") {
        Ok(src) => src
            .replace("pub mod stewart {", "pub mod stewart_auto {")
            .lines()
            .filter(|l| !l.trim_start().starts_with("independent "))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => {
            eprintln!("stewart.mech: {e}");
            std::process::exit(1);
        }
    };
    let path = out.join("stewart_auto.mech");
    if let Err(e) = std::fs::write(&path, auto) {
        eprintln!("{}: {e}", path.display());
        std::process::exit(1);
    }
    if let Err(e) = mechgen_build::Builder::new()
        .file(&path)
        .out_dir(&out)
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
