//! Every example mechanism checked against independent computations.

use mechgen_test_support as common;

include!("../examples/mechanisms/slider_crank.rs");
include!("../examples/mechanisms/spatial_slider_crank.rs");

/// The body of a `mechgen::mechanism! { ... }` file, as source text for the engine.
fn body(file: &str) -> &str {
    let start =
        file.find("mechgen::mechanism! {").expect("macro call") + "mechgen::mechanism! {".len();
    let end = file.rfind('}').expect("closing brace");
    &file[start..end]
}

const SLIDER: &str = include_str!("../examples/mechanisms/slider_crank.rs");
const SPATIAL: &str = include_str!("../examples/mechanisms/spatial_slider_crank.rs");

macro_rules! mechanism_tests {
    ($t:ident, $m:ident, $src:expr, $seed:expr) => {
        mod $t {
            use super::*;
            use crate::$m as m;
            type M = m::Model;
            const NQ: usize = m::NQ;
            const NC: usize = m::NC;
            const DOF: usize = m::DOF;

            #[test]
            fn jacobian_matches_central_differences() {
                common::check_jacobian_fd::<NQ, NC, DOF, M>(&m::Params::default(), 100, $seed);
            }

            #[test]
            fn residual_matches_dag() {
                common::check_residual_against_dag::<NQ, NC, DOF, M>(
                    body($src),
                    stringify!($m),
                    &m::Params::default(),
                    100,
                    $seed,
                );
            }

            #[test]
            fn null_space_on_manifold() {
                let p = m::Params::default();
                let configs = common::random_configurations::<NQ, NC, DOF, M>(&p, 1000, 0.2, $seed);
                let min_pivot = common::check_null_space::<NQ, NC, DOF, M>(&p, &configs, $seed);
                assert!(min_pivot > 0.0);
            }
        }
    };
}

mechanism_tests!(slider_crank_tests, slider_crank, SLIDER, 11);
mechanism_tests!(
    spatial_slider_crank_tests,
    spatial_slider_crank,
    SPATIAL,
    12
);
