//! Generates the Stewart platform module from `stewart.mech`, exactly as a user's crate
//! would: `mechgen` as a build-dependency, output included from `OUT_DIR`.

fn main() {
    if let Err(e) = mechgen::Builder::new().file("stewart.mech").generate() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
