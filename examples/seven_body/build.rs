//! Generates Andrews' squeezing mechanism from `andrews.mech`, as a user's crate would.
//! (The engine's checks of this module, and of the same mechanism written with frames in
//! `andrews_frames.mech`, are in `tests/models`.)

fn main() {
    if let Err(e) = mechgen_build::Builder::new()
        .file("andrews.mech")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
