//! The output forms beside the allocating functions: `*_into` (writes the structural
//! nonzeros into the caller's storage), `jacobian_values` with its compressed-column pattern,
//! and the fused `kinematics`. Each is compared with the allocating function it stands for
//! at random configurations (the same expressions: equal to the last bit, or to 1e-14
//! relative where the fused body may share a subexpression in another grouping).

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen_test_support as common;

include!("../examples/mechanisms/slider_crank.rs");
include!("../examples/mechanisms/spatial_slider_crank.rs");
include!("../examples/mechanisms/five_bar.rs");

mechgen::mechanism! {
    /// A coordinate named `out` (the parameter name of the `_into` forms) and one named
    /// `Kinematics`: the generated code's own names give way.
    pub mod clash {
        param l = 1.0;
        coord out = 0.6;
        coord Kinematics = 0.8;
        constraint out * out + Kinematics * Kinematics == l * l;
    }
}

/// `|a − b| ≤ 1e-14 · max(1, |b|)` entrywise.
fn close<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>, b: &SMatrix<f64, R, C>) -> bool {
    a.iter()
        .zip(b.iter())
        .all(|(x, y)| (x - y).abs() <= 1e-14 * y.abs().max(1.0))
}

macro_rules! forms {
    ($t:ident, $m:ident) => {
        #[test]
        fn $t() {
            use $m as m;
            let p = m::Params::default();
            let mut rng = common::rng(7);
            let nominal = SVector::<f64, { m::NQ }>::from(m::NOMINAL_Q);
            for q in common::random_points(&nominal, 200, &mut rng) {
                let t = 0.3;
                // `_into` on zeroed storage equals the allocating form, bit for bit.
                let mut r = SVector::<f64, { m::NC }>::zeros();
                m::residual_into(&q, &p, t, &mut r);
                assert_eq!(r, m::residual(&q, &p, t));
                let j = m::jacobian(&q, &p, t);
                let mut jm = SMatrix::<f64, { m::NC }, { m::NQ }>::zeros();
                m::jacobian_into(&q, &p, t, &mut jm);
                assert_eq!(jm, j);
                let (d, h) = m::null_space_fixed(&q, &p, t);
                let mut dm = SMatrix::<f64, { m::NQ }, { m::DOF }>::zeros();
                assert_eq!(m::null_space_fixed_into(&q, &p, t, &mut dm), h);
                assert_eq!(dm, d);
                // Structural zeros are left alone: storage filled with 7.0 keeps it there
                // and nowhere else differs from the allocating form.
                let mut filled = SMatrix::<f64, { m::NC }, { m::NQ }>::repeat(7.0);
                m::jacobian_into(&q, &p, t, &mut filled);
                let mut nnz = 0;
                for ((a, b), c) in filled.iter().zip(j.iter()).zip(jm.iter()) {
                    if *a == 7.0 && *b == 0.0 {
                        continue;
                    }
                    assert_eq!(a, c);
                    nnz += 1;
                }
                assert_eq!(nnz, m::JACOBIAN_NNZ);
                // CSC values scattered by the pattern give the dense Jacobian.
                let mut vals = [f64::NAN; m::JACOBIAN_NNZ];
                m::jacobian_values(&q, &p, t, &mut vals);
                let mut scattered = SMatrix::<f64, { m::NC }, { m::NQ }>::zeros();
                for col in 0..m::NQ {
                    let (a, b) = (m::JACOBIAN_COLPTR[col], m::JACOBIAN_COLPTR[col + 1]);
                    assert!(a <= b);
                    for k in a..b {
                        let row = m::JACOBIAN_ROWIDX[k];
                        assert!(k == a || m::JACOBIAN_ROWIDX[k - 1] < row, "rows ascend");
                        scattered[(row, col)] = vals[k];
                    }
                }
                assert_eq!(scattered, j);
                // The fused form equals the three functions it replaces.
                let k = m::kinematics(&q, &p, t);
                assert!(close(&k.residual, &r));
                assert!(close(&k.jacobian, &j));
                assert!(close(&k.null_space, &d));
                assert!((k.health - h).abs() <= 1e-14 * h.abs().max(1.0));
            }
        }
    };
}

forms!(slider_crank_forms, slider_crank);
forms!(spatial_slider_crank_forms, spatial_slider_crank);
forms!(five_bar_forms, five_bar);
forms!(clashing_names_forms, clash);
