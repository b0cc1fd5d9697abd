//! Null-space bases: static path, fallback through a four-bar toggle, numeric baselines.

mod common;

use common::*;
use mechgen_runtime::nalgebra::SMatrix;
use mechgen_runtime::{
    null_space::lu_null_space, null_space::null_space_checked, null_space::svd_null_space,
    null_space::NullSpacePath, null_space::DEFAULT_PIVOT_THRESHOLD, Mechanism,
};

/// Smallest singular value of D relative to its largest (full column rank check).
fn column_rank_margin<const N: usize, const K: usize>(d: &SMatrix<f64, N, K>) -> f64 {
    let dd = mechgen_runtime::nalgebra::DMatrix::from_column_slice(N, K, d.as_slice());
    let s = dd.singular_values();
    s.min() / s.max()
}

#[test]
fn slider_crank_static_basis_at_random_configurations() {
    let p = ScParams::default();
    let mut r = rng(10);
    for _ in 0..500 {
        let q = SliderCrank::exact(uniform(&mut r, -3.1, 3.1), &p);
        let out = null_space_checked::<SliderCrank, 3, 2, 1>(&q, &p, 0.0, DEFAULT_PIVOT_THRESHOLD)
            .expect("basis");
        assert!(matches!(out.path, NullSpacePath::Static { min_pivot } if min_pivot > 0.5));
        let j = SliderCrank::jacobian(&q, &p, 0.0);
        assert!(relative_annihilation(&j, &out.d) < 1e-15);
        assert_eq!(out.d[0], 1.0);
        // Against the numeric baselines: same span (1-D), so D_svd ∥ D.
        let ds = svd_null_space::<2, 3, 1>(&j).expect("svd");
        let dl = lu_null_space::<2, 3, 1>(&j).expect("lu");
        assert!(relative_annihilation(&j, &ds) < 1e-15);
        assert!(relative_annihilation(&j, &dl) < 1e-15);
        let cos = (out.d.dot(&ds)).abs() / out.d.norm();
        assert!((cos - 1.0).abs() < 1e-14, "{cos}");
        let cosl = (out.d.dot(&dl)).abs() / (out.d.norm() * dl.norm());
        assert!((cosl - 1.0).abs() < 1e-14, "{cosl}");
    }
}

#[test]
fn numeric_baselines_on_random_wide_matrices() {
    let mut r = rng(11);
    for _ in 0..200 {
        let j = SMatrix::<f64, 3, 7>::from_fn(|_, _| uniform(&mut r, -1.0, 1.0));
        let ds = svd_null_space::<3, 7, 4>(&j).expect("svd");
        let dl = lu_null_space::<3, 7, 4>(&j).expect("lu");
        assert!(relative_annihilation(&j, &ds) < 1e-14);
        assert!(relative_annihilation(&j, &dl) < 1e-13);
        assert!((ds.transpose() * ds - SMatrix::<f64, 4, 4>::identity()).amax() < 1e-13);
        assert!(column_rank_margin(&dl) > 1e-6);
    }
    // Rank-deficient (redundant row): still a basis of the right dimension.
    let mut j = SMatrix::<f64, 3, 5>::from_fn(|_, _| uniform(&mut r, -1.0, 1.0));
    let row = j.row(0) + j.row(1) * 2.0;
    j.set_row(2, &row);
    let ds = svd_null_space::<3, 5, 3>(&j).expect("svd");
    let dl = lu_null_space::<3, 5, 3>(&j).expect("lu");
    assert!(relative_annihilation(&j, &ds) < 1e-14);
    assert!(relative_annihilation(&j, &dl) < 1e-13);
    assert!(column_rank_margin(&dl) > 1e-6);
    // Asking for too small a null space on a rank-deficient matrix fails cleanly.
    assert!(lu_null_space::<3, 5, 2>(&j).is_err());
    let nan = SMatrix::<f64, 1, 2>::new(f64::NAN, 1.0);
    assert!(lu_null_space::<1, 2, 1>(&nan).is_err());
    assert!(svd_null_space::<1, 2, 1>(&nan).is_err());
}

#[test]
fn four_bar_through_the_toggle_switches_paths_with_correct_bases() {
    let p = FbParams::default();
    let toggle = FourBar::toggle_theta(&p);
    let threshold = DEFAULT_PIVOT_THRESHOLD;
    let mut counts = [0usize; 3];
    let mut worst_annihilation: f64 = 0.0;
    let mut worst_tangent: f64 = 0.0;
    // Drive the crank through θ = 0 and through the toggle, with offsets down to 1e-12.
    let mut thetas = Vec::new();
    for &centre in &[0.0, toggle] {
        for e in 0..=12 {
            let off = 10f64.powi(-e);
            thetas.push(centre + off);
            thetas.push(centre - off);
        }
        thetas.push(centre);
    }
    for k in 0..200 {
        thetas.push(-3.1 + 6.2 * k as f64 / 199.0);
    }
    for &theta in &thetas {
        let q = FourBar::from_crank(theta, &p);
        let out = null_space_checked::<FourBar, 3, 2, 1>(&q, &p, 0.0, threshold).expect("basis");
        let j = FourBar::jacobian(&q, &p, 0.0);
        let ann = relative_annihilation(&j, &out.d);
        worst_annihilation = worst_annihilation.max(ann);
        // Accuracy of an LU basis degrades like ε / (relative pivot): the threshold bounds it.
        let bound = match out.path {
            NullSpacePath::Static { min_pivot } => 1e-15 / min_pivot,
            _ => 1e-13,
        };
        assert!(
            ann < bound.min(1e-9),
            "θ = {theta}: |C_J D| rel {ann:.2e} on {:?}",
            out.path
        );
        assert!(out.d.norm() > 0.0 && out.d.iter().all(|x| x.is_finite()));
        // The basis must be tangent to the configuration curve q(θ) (central differences).
        let h = 1e-6;
        let tangent =
            (FourBar::from_crank(theta + h, &p) - FourBar::from_crank(theta - h, &p)) / (2.0 * h);
        let cos = out.d.dot(&tangent).abs() / (out.d.norm() * tangent.norm());
        worst_tangent = worst_tangent.max(1.0 - cos);
        assert!(
            1.0 - cos < 1e-8,
            "θ = {theta}: basis not tangent, cos {cos}"
        );
        match out.path {
            NullSpacePath::Static { min_pivot } => {
                assert!(min_pivot >= threshold);
                counts[0] += 1;
            }
            NullSpacePath::NumericSameCoordinates {
                min_pivot,
                lu_health,
            } => {
                assert!(min_pivot < threshold && lu_health >= threshold);
                assert_eq!(out.d[2], 1.0, "identity row at the independent coordinate");
                // Near θ = 0, not near the toggle.
                assert!(theta.abs() < 1e-5, "θ = {theta}");
                counts[1] += 1;
            }
            NullSpacePath::Atlas { .. } => {
                panic!(
                    "null_space_checked uses the primary chart only: {:?}",
                    out.path
                )
            }
            NullSpacePath::NumericSvd {
                min_pivot,
                lu_health,
                rank_margin,
            } => {
                assert!(min_pivot < threshold && lu_health < threshold);
                assert!(
                    rank_margin > 0.1,
                    "C_J keeps full rank at the toggle: {rank_margin}"
                );
                assert!((out.d.norm() - 1.0).abs() < 1e-14);
                assert!((theta - toggle).abs() < 1e-5, "θ = {theta}");
                counts[2] += 1;
            }
        }
        assert!(out.health() >= 0.0 && out.health() <= 1.0);
    }
    assert!(counts.iter().all(|&c| c > 0), "paths taken {counts:?}");
    // At the exact toggle the rocker velocity component of the tangent is zero: the basis
    // cannot have an identity row at ψ.
    let q = FourBar::from_crank(toggle, &p);
    let out = null_space_checked::<FourBar, 3, 2, 1>(&q, &p, 0.0, threshold).expect("basis");
    assert!(!out.same_coordinates());
    assert!(out.d[2].abs() < 1e-7, "{}", out.d[2]);
    eprintln!(
        "four-bar: paths static/same/svd = {counts:?}, worst |C_J D| rel {worst_annihilation:.2e}, \
         worst 1 - cos(D, tangent) {worst_tangent:.2e}"
    );
}
