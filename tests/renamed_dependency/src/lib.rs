//! mechgen used under another name (`my_mechgen = { package = "mechgen", ... }`): the
//! macro with `#![crate = "::my_mechgen"]`, build.rs with `Builder::crate_path`. Nothing
//! named `mechgen` is in scope, so this crate compiles only if the generated code reaches
//! the runtime and nalgebra through the given path alone.

my_mechgen::mechanism! {
    #![seed = 7]
    #![crate = "::my_mechgen"]
    /// Planar slider crank.
    pub mod slider_crank {
        param l1 = 0.1;
        param l2 = 0.3;
        coord theta = 0.3;
        coord beta = 1.4721;
        coord s = 0.3941;
        independent theta;
        let crank = vec2(l1 * cos(theta), l1 * sin(theta));
        let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
        constraint crank + rod == vec2(s, 0.0);
    }
}

include!(concat!(env!("OUT_DIR"), "/slider_crank.rs"));

#[cfg(test)]
mod tests {
    use my_mechgen::nalgebra::SVector;
    use my_mechgen::runtime::{self, assemble::AssemblyOptions, Mechanism};

    #[test]
    fn the_macro_output_runs_under_the_new_name() {
        let p = super::slider_crank::Params::default();
        // theta = 0.5 given; assembly solves beta and s on the loop.
        let q0 = SVector::<f64, 3>::new(0.5, 1.4721, 0.3941);
        let q = runtime::assemble::assemble::<super::slider_crank::Model, 3, 2, 1>(
            &q0,
            &p,
            0.0,
            &AssemblyOptions::default(),
        )
        .expect("assembles")
        .q;
        let (l1, l2) = (0.1_f64, 0.3_f64);
        assert_eq!(q[0], 0.5);
        // The crank's height equals the rod's drop: l1 sin(theta) = l2 cos(beta).
        assert!((l2 * q[1].cos() - l1 * 0.5_f64.sin()).abs() < 1e-12);
        assert!((q[2] - (l1 * 0.5_f64.cos() + l2 * q[1].sin())).abs() < 1e-12);
        let (d, health) = super::slider_crank::null_space(&q, &p, 0.0);
        let j = super::slider_crank::jacobian(&q, &p, 0.0);
        assert!((j * d).norm() < 1e-12);
        assert!(health > 0.1, "health {health}");
    }

    #[test]
    fn the_build_rs_output_runs_under_the_new_name() {
        use super::built_slider_crank as m;
        let p = m::Params::default();
        let q = SVector::<f64, 3>::from(m::NOMINAL_Q);
        assert!(m::residual(&q, &p, 0.0).norm() < 1e-15);
        let (d, health) = m::null_space(&q, &p, 0.0);
        assert_eq!(d[0], 1.0);
        assert!((m::jacobian(&q, &p, 0.0) * d).norm() < 1e-15);
        assert!(health > 0.1, "health {health}");
        assert_eq!(<m::Model as Mechanism<3, 2, 1>>::INDEPENDENT, [0]);
    }
}
