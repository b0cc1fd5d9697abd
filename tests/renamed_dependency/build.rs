//! Generates `slider_crank.mech` for a crate that depends on mechgen as `my_mechgen`.

fn main() {
    let built = mechgen_build::Builder::new()
        .file("slider_crank.mech")
        .crate_path("::my_mechgen")
        .generate();
    if let Err(e) = built {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
