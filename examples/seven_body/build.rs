//! Generates Andrews' squeezing mechanism from `andrews.mech`, as a user's crate would.

fn main() {
    if let Err(e) = mechgen_build::Builder::new()
        .file("andrews.mech")
        .generate()
    {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
