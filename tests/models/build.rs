//! Generates the example mechanisms the tests check, from the examples' own `.mech` files:
//! Andrews' mechanism written out and with frames, the Stewart platform written out, with a
//! loop over its legs and with frames — with the generic family (step Jacobians by dual
//! numbers) and the derivatives of the dynamics terms (composed step Jacobians).

fn main() {
    if let Err(e) = mechgen_build::Builder::new()
        .file("../../examples/seven_body/andrews.mech")
        .file("../../examples/seven_body/andrews_frames.mech")
        .file("../../examples/stewart_platform/stewart.mech")
        .file("../../examples/stewart_platform/stewart_loop.mech")
        .file("../../examples/stewart_platform/stewart_frames.mech")
        .generic(true)
        .derivatives(true)
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
