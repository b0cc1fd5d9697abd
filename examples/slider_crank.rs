//! Planar slider crank through `mechanism!`: sizes, operation counts, and residual,
//! Jacobian and null space at the nominal configuration.
//!
//! `cargo run --release --example slider_crank`

include!("mechanisms/slider_crank.rs");

fn main() {
    use slider_crank as m;
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
