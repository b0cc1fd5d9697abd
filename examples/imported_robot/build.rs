//! Imports the UR5 from its URDF file (example-robot-data, in `../robots/models`) and adds
//! `ur5_table.mech` inside the imported module: the tool held on a table (a closed loop), a
//! torque input on the shoulder, the tool's position as an output. Writes `ur5.rs`
//! and, for reading, the `.mech` text generated, `ur5.mech`, into `OUT_DIR`.

use mechgen_build::{Builder, Import};

fn main() {
    let ur5 = Import::new("../robots/models/ur_description/ur5_robot.urdf")
        .module("ur5")
        .additions("ur5_table.mech");
    if let Err(e) = Builder::new().import(ur5).generate() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
