//! Spatial slider crank through `mechanism!`: a crank turning in the x–y plane drives,
//! through a rod with a spherical joint at the crank pin and a universal joint at the
//! slider, a slider on a line parallel to the x axis, offset in y and z.
//!
//! `cargo run --release --example spatial_slider_crank`

include!("mechanisms/spatial_slider_crank.rs");

fn main() {
    use spatial_slider_crank as m;
    examples_common::report::<{ m::NQ }, { m::NC }, { m::DOF }, m::Model>(
        &m::Params::default(),
        &m::OP_COUNTS,
    );
    examples_common::null_space_study::<{ m::NQ }, { m::NC }, { m::DOF }, m::Model>(
        &m::Params::default(),
        10_000,
        0.2,
        1,
    );
}

use mechgen_test_support::report as examples_common;
