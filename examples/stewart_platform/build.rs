//! Generates the Stewart platform module from `stewart.mech`, exactly as a user's crate
//! would: `mechgen-build` as a build-dependency, output included from `OUT_DIR`; and the
//! same platform written with a loop over its legs (`stewart_loop.mech`) and with frames
//! and joints (`stewart_frames.mech`).

fn main() {
    if let Err(e) = mechgen_build::Builder::new()
        .file("stewart.mech")
        .file("stewart_loop.mech")
        .file("stewart_frames.mech")
        // The generic family: exact step Jacobians by dual numbers (tests/step.rs).
        .generic(true)
        // The derivatives of the dynamics terms: step Jacobians composed from them.
        .derivatives(true)
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
