//! `#![functions(…)]` (selective generation): a module generated with a subset of its
//! functions compiles, has them, and they equal the full module's bit for bit (the same
//! code); and the subset's `null_space` (which brings the chart functions it calls) spans
//! the null space of its Jacobian.

use mechgen::nalgebra::SVector;
use mechgen_test_support as common;

/// A four-bar linkage with bodies (two charts: the atlas), in module `$m`, with the file
/// options `#![$opt]` given.
macro_rules! four_bar {
    ($m:ident $(, [$($opt:tt)+])*) => {
        mod $m {
            mechgen::mechanism! {
                $(#![$($opt)+])*
                pub mod four_bar {
                    param a = 1.0;
                    param b = 2.5;
                    param c = 2.0;
                    param d = 3.0;
                    param m = 1.0;
                    coord th1 = 1.0;
                    coord th2 = 0.5;
                    coord th3 = 1.8;
                    independent th1;
                    constraint vec2(a * cos(th1) + b * cos(th2), a * sin(th1) + b * sin(th2))
                        == vec2(d + c * cos(th3), c * sin(th3));
                    body crank { mass = m, com = vec2(a * cos(th1), a * sin(th1)) / 2.0, angle = th1 }
                    body rocker { mass = m, com = vec2(d + c * cos(th3) / 2.0, c * sin(th3) / 2.0), angle = th3 }
                    gravity = vec2(0.0, -9.81);
                }
            }
        }
    };
}

four_bar!(full, [generic]);
four_bar!(
    kinematic,
    [functions(jacobian, null_space_fixed, solve_dependent)]
);
four_bar!(
    atlas_and_mass,
    [functions(residual, null_space, mass_matrix)],
    [generic]
);

use full::four_bar as f;

/// Configurations on the manifold from the full module (which implements the traits).
fn configurations() -> Vec<SVector<f64, 3>> {
    common::random_configurations::<3, 2, 1, f::Model>(&f::Params::default(), 40, 0.3, 37)
}

#[test]
fn a_subset_equals_the_full_module() {
    let p = f::Params::default();
    let pk = kinematic::four_bar::Params::default();
    let pa = atlas_and_mass::four_bar::Params::default();
    let b = SVector::<f64, 2>::new(0.3, -0.7);
    let bits = |a: &[f64], b: &[f64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    };
    for q in configurations() {
        use atlas_and_mass::four_bar as a;
        use kinematic::four_bar as k;
        assert!(bits(
            k::jacobian(&q, &pk, 0.0).as_slice(),
            f::jacobian(&q, &p, 0.0).as_slice()
        ));
        let (dk, hk) = k::null_space_fixed(&q, &pk, 0.0);
        let (df, hf) = f::null_space_fixed(&q, &p, 0.0);
        assert!(bits(dk.as_slice(), df.as_slice()) && hk.to_bits() == hf.to_bits());
        assert!(bits(
            k::solve_dependent(&q, &pk, 0.0, &b).as_slice(),
            f::solve_dependent(&q, &p, 0.0, &b).as_slice()
        ));
        assert!(bits(
            a::residual(&q, &pa, 0.0).as_slice(),
            f::residual(&q, &p, 0.0).as_slice()
        ));
        let (da, ha) = a::null_space(&q, &pa, 0.0);
        let (dn, hn) = f::null_space(&q, &p, 0.0);
        assert!(bits(da.as_slice(), dn.as_slice()) && ha.to_bits() == hn.to_bits());
        assert!(bits(
            a::mass_matrix(&q, &pa, 0.0).as_slice(),
            f::mass_matrix(&q, &p, 0.0).as_slice()
        ));
        // An independent property: the subset's basis spans the kernel of the subset's
        // Jacobian (‖C_J D‖ ≤ 1e-12 ‖C_J‖ ‖D‖) with an identity row at `th1`.
        let j = k::jacobian(&q, &pk, 0.0);
        assert!((j * dk).norm() <= 1e-12 * j.norm() * dk.norm(), "q = {q:?}");
        assert_eq!(dk[(0, 0)], 1.0);
        // The generic family of the subset has the subset (here at f64).
        let pg = [pa.a, pa.b, pa.c, pa.d, pa.m];
        assert!(bits(
            a::generic::residual(&q, &pg, 0.0).as_slice(),
            a::residual(&q, &pa, 0.0).as_slice()
        ));
    }
}

/// The subset's constants are the full module's.
#[test]
fn a_subset_keeps_the_constants() {
    assert_eq!(kinematic::four_bar::INDEPENDENT, f::INDEPENDENT);
    assert_eq!(kinematic::four_bar::NOMINAL_Q, f::NOMINAL_Q);
    assert_eq!(atlas_and_mass::four_bar::CHARTS, f::CHARTS);
}
