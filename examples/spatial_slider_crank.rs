//! Spatial slider crank through `mechanism!`: a crank turning in the x–y plane drives,
//! through a rod with a spherical joint at the crank pin and a universal joint at the
//! slider, a slider on a line parallel to the x axis, offset in y and z.
//!
//! `cargo run --release --example spatial_slider_crank`

mechgen::mechanism! {
    /// Spatial slider crank: crank angle `theta` about z, rod direction by the angles
    /// `alpha` (about z) and `gamma` (elevation), slider position `s` along the line
    /// `(s, e_y, e_z)`. 4 coordinates, 3 constraint equations, 1 degree of freedom.
    pub mod spatial_slider_crank {
        /// Crank length (m).
        param r = 0.08;
        /// Rod length (m).
        param l = 0.3;
        /// Offset of the slider line in y (m).
        param ey = 0.05;
        /// Offset of the slider line in z (m).
        param ez = 0.1;
        coord theta = 0.5;
        coord alpha = -0.03;
        coord gamma = 0.35;
        coord s = 0.34;
        let crank_pin = rot_z(theta) * vec3(r, 0.0, 0.0);
        let rod = rot_z(alpha) * rot_y(-gamma) * vec3(l, 0.0, 0.0);
        constraint crank_pin + rod == vec3(s, ey, ez);
    }
}

fn main() {
    use spatial_slider_crank as m;
    examples_common::report::<{ m::NQ }, { m::NC }, { m::DOF }, m::Model>(
        &m::Params::default(),
        &m::OP_COUNTS,
    );
}

#[path = "common/mod.rs"]
mod examples_common;
