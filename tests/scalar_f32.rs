//! `#![scalar = f32]`: the generated functions in single precision (for targets without
//! double-precision hardware), compared with the f64 module of the same mechanism at random
//! configurations (relative 1e-4: a few ulps of f32 through each function's operations).

use mechgen::nalgebra::SVector;
use mechgen_test_support as common;

/// The slider crank with bodies, in module `$m`, with the file options `#![$opt]` given.
macro_rules! slider_crank {
    ($m:ident $(, [$($opt:tt)+])*) => {
        mod $m {
            mechgen::mechanism! {
                $(#![$($opt)+])*
                pub mod slider_crank {
                    param l1 = 0.1;
                    param l2 = 0.3;
                    param m = 1.0;
                    coord theta = 0.3;
                    coord beta = 1.4721295802647691;
                    coord s = 0.39407456415626446;
                    independent theta;
                    let crank = vec2(l1 * cos(theta), l1 * sin(theta));
                    let rod = vec2(l2 * sin(beta), -l2 * cos(beta));
                    constraint crank + rod == vec2(s, 0.0);
                    body slider { mass = m, com = vec2(s, 0.0) }
                    body pin { mass = m, com = crank }
                    gravity = vec2(0.0, -9.81);
                }
            }
        }
    };
}

slider_crank!(single, [scalar = f32]);
slider_crank!(double);
slider_crank!(generic_family, [generic]);
slider_crank!(single_generic, [scalar = f32], [generic]);

use double::slider_crank as d;
use single::slider_crank as s;

fn close(a: &[f32], b: &[f64]) -> bool {
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .all(|(x, y)| (f64::from(*x) - y).abs() <= 1e-4 * scale)
}

#[test]
fn single_precision_functions_match_the_double_ones() {
    let (ps, pd) = (s::Params::default(), d::Params::default());
    let mut rng = common::rng(5);
    let nominal = SVector::<f64, 3>::from(d::NOMINAL_Q);
    for q in common::random_points(&nominal, 200, &mut rng) {
        let qd = SVector::<f64, 3>::new(0.3, -0.2, 0.1);
        let (q32, qd32) = (q.cast::<f32>(), qd.cast::<f32>());
        assert!(close(
            s::residual(&q32, &ps, 0.0).as_slice(),
            d::residual(&q, &pd, 0.0).as_slice()
        ));
        assert!(close(
            s::jacobian(&q32, &ps, 0.0).as_slice(),
            d::jacobian(&q, &pd, 0.0).as_slice()
        ));
        let (ds, hs) = s::null_space(&q32, &ps, 0.0);
        let (dd, hd) = d::null_space(&q, &pd, 0.0);
        assert!(close(ds.as_slice(), dd.as_slice()) && close(&[hs], &[hd]));
        assert!(close(
            s::mass_matrix(&q32, &ps, 0.0).as_slice(),
            d::mass_matrix(&q, &pd, 0.0).as_slice()
        ));
        assert!(close(
            s::forces(&q32, &qd32, &ps, 0.0).as_slice(),
            d::forces(&q, &qd, &pd, 0.0).as_slice()
        ));
        assert!(close(
            s::gamma(&q32, &qd32, &ps, 0.0).as_slice(),
            d::gamma(&q, &qd, &pd, 0.0).as_slice()
        ));
    }
}

#[test]
fn the_generic_family_over_f32_and_f64_is_the_single_and_double_module() {
    use generic_family::slider_crank as g;
    use single_generic::slider_crank as sg;
    let (ps, pd) = (s::Params::default(), d::Params::default());
    let (p32, p64) = (
        g::generic::params::<f32>(&g::Params::default()),
        g::generic::param_values(&g::Params::default()),
    );
    // A single-precision module's generic family reads its `f32` parameters.
    assert_eq!(sg::generic::params::<f32>(&sg::Params::default()), p32);
    let mut rng = common::rng(6);
    let nominal = SVector::<f64, 3>::from(d::NOMINAL_Q);
    for q in common::random_points(&nominal, 200, &mut rng) {
        let qd = SVector::<f64, 3>::new(0.3, -0.2, 0.1);
        let (q32, qd32) = (q.cast::<f32>(), qd.cast::<f32>());
        assert_eq!(
            g::generic::residual(&q, &p64, 0.0),
            d::residual(&q, &pd, 0.0)
        );
        assert_eq!(
            g::generic::jacobian(&q, &p64, 0.0),
            d::jacobian(&q, &pd, 0.0)
        );
        assert_eq!(
            g::generic::null_space_fixed(&q, &p64, 0.0),
            d::null_space_fixed(&q, &pd, 0.0)
        );
        assert_eq!(
            g::generic::forces(&q, &qd, &p64, 0.0),
            d::forces(&q, &qd, &pd, 0.0)
        );
        assert_eq!(
            g::generic::residual(&q32, &p32, 0.0),
            s::residual(&q32, &ps, 0.0)
        );
        assert_eq!(
            g::generic::mass_matrix(&q32, &p32, 0.0),
            s::mass_matrix(&q32, &ps, 0.0)
        );
        assert_eq!(
            g::generic::gamma(&q32, &qd32, &p32, 0.0),
            sg::generic::gamma(&q32, &qd32, &p32, 0.0)
        );
        let (d32, h32) = g::generic::null_space_fixed(&q32, &p32, 0.0);
        let (ds, hs) = s::null_space_fixed(&q32, &ps, 0.0);
        assert_eq!(d32, ds);
        // The generic family's health is an f64 of the f32 pivots.
        assert!((h32 - f64::from(hs)).abs() <= 1e-6, "{h32} vs {hs}");
    }
}

mechgen::mechanism! {
    #![scalar = f32]
    /// An f64 coefficient just off an integer, which rounds to one in f32 (the fuzzer's E1:
    /// the f32 literal was printed `2`, an integer, and the module did not compile).
    pub mod near_integer_f32 {
        coord x = 0.3;
        coord y = 0.1;
        constraint x * 2.00000001 + y == 0.7;
    }
}

#[test]
fn an_f64_coefficient_that_rounds_to_an_integer_in_f32_compiles_as_a_float_literal() {
    use mechgen::nalgebra::SVector;
    let p = near_integer_f32::Params::default();
    let q = SVector::<f32, 2>::new(0.3, 0.1);
    let r = near_integer_f32::residual(&q, &p, 0.0);
    // 2 · 0.3 + 0.1 − 0.7 = 0 in f32 arithmetic up to rounding.
    assert!(r[0].abs() < 1e-6, "{}", r[0]);
    let j = near_integer_f32::jacobian(&q, &p, 0.0);
    assert_eq!((j[(0, 0)], j[(0, 1)]), (2.0, 1.0));
}
