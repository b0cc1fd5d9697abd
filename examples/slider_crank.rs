//! Planar slider crank through `mechanism!`: sizes, operation counts, and residual,
//! Jacobian and null space at the nominal configuration.
//!
//! `cargo run --release --example slider_crank`

mechgen::mechanism! {
    /// Planar slider crank: a crank of length `l1` turning about the origin, a rod of
    /// length `l2`, and a slider at `(s, 0)` on the x axis.
    pub mod slider_crank {
        /// Crank length (m).
        param l1 = 0.1;
        /// Rod length (m).
        param l2 = 0.3;
        coord theta = 0.3;
        coord beta = 0.46;
        coord s = 0.31;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
    }
}

fn main() {
    use slider_crank as m;
    examples_common::report::<{ m::NQ }, { m::NC }, { m::DOF }, m::Model>(
        &m::Params::default(),
        &m::OP_COUNTS,
    );
}

#[path = "common/mod.rs"]
mod examples_common;
