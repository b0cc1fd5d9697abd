//! The UR5 imported by build.rs from its URDF file with `ur5_table.mech` added inside the
//! imported module (`src/main.rs` simulates it; `tests/table.rs` checks it).

include!(concat!(env!("OUT_DIR"), "/ur5.rs"));

use mechgen::nalgebra::SVector;

/// A bent pose of the arm (radians, in `ur5::COORD_NAMES` order): elbow up, tool below
/// the shoulder, no joint at a limit and the tool's height free to change.
pub fn start_pose() -> SVector<f64, { ur5::NQ }> {
    SVector::from([0.3, -1.0, 1.6, -1.9, -1.4, 0.2])
}
