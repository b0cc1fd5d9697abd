//! Generates Andrews' squeezing mechanism from `andrews.mech`, as a user's crate would.

fn main() {
    if let Err(e) = mechgen_build::Builder::new()
        .file("andrews.mech")
        // The same mechanism written with frames, joints and bodies (tests/frames_form.rs).
        .file("andrews_frames.mech")
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
