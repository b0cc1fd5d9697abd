//! Issue 32, defect 6: the default `null_space` keeps its meaning. A generated module's
//! `null_space` used to return the healthiest atlas chart's basis where the fixed pivot
//! order degrades, with nothing in its value saying which chart: on the five-bar robot of
//! `examples/mechanisms/joint_mechanisms.rs` (actuated `th1`, `th2`) with a distal link
//! vertical it returned chart 3's basis (identity rows at `th1`, `ph1`), which read as
//! `∂q/∂(th1, th2)` is wrong. Now its columns are `∂q/∂q[INDEPENDENT]` wherever the
//! actuated angles parametrise the mechanism, checked against nalgebra's LU of `C_J`'s
//! dependent columns at random poses; the chart-indexed basis is `null_space_in_chart`.

use mechgen::nalgebra::{Matrix2, SMatrix, SVector};
use mechgen::runtime::null_space::DEFAULT_PIVOT_THRESHOLD;
use mechgen_test_support as common;

include!("../examples/mechanisms/joint_mechanisms.rs");

/// The five-bar's configuration from its left side `(th1, ph1)` and the right branch.
fn pose(th1: f64, ph1: f64, branch: f64, p: &five_bar::Params) -> Option<SVector<f64, 4>> {
    let tip = (
        p.a * th1.cos() + p.b * ph1.cos(),
        p.a * th1.sin() + p.b * ph1.sin(),
    );
    let (th2, ph2) = common::two_link((p.d, 0.0), tip, p.a, p.b, branch)?;
    Some(SVector::<f64, 4>::new(th1, th2, ph1, ph2))
}

/// `∂q/∂(th1, th2)` from nalgebra's LU of `C_J`: `[I; −J_dep⁻¹ J_ind]` (rows in coordinate
/// order), and `σ_min / σ_max` of `J_dep` (how well the actuated angles parametrise the
/// mechanism).
fn true_basis(q: &SVector<f64, 4>, p: &five_bar::Params) -> (SMatrix<f64, 4, 2>, f64) {
    let j = five_bar::jacobian(q, p, 0.0);
    let jind = Matrix2::new(j[(0, 0)], j[(0, 1)], j[(1, 0)], j[(1, 1)]);
    let jdep = Matrix2::new(j[(0, 2)], j[(0, 3)], j[(1, 2)], j[(1, 3)]);
    let s = jdep.singular_values();
    let rcond = s.min() / s.max();
    let x = jdep.lu().solve(&jind).unwrap_or_else(Matrix2::zeros);
    let mut d = SMatrix::<f64, 4, 2>::zeros();
    d[(0, 0)] = 1.0;
    d[(1, 1)] = 1.0;
    for r in 0..2 {
        for c in 0..2 {
            d[(2 + r, c)] = -x[(r, c)];
        }
    }
    (d, rcond)
}

/// The five-bar's configuration from its right side `(th2, ph2)` and the left branch.
fn pose_from_right(
    th2: f64,
    ph2: f64,
    branch: f64,
    p: &five_bar::Params,
) -> Option<SVector<f64, 4>> {
    let tip = (
        p.d + p.a * th2.cos() + p.b * ph2.cos(),
        p.a * th2.sin() + p.b * ph2.sin(),
    );
    let (th1, ph1) = common::two_link((0.0, 0.0), tip, p.a, p.b, branch)?;
    Some(SVector::<f64, 4>::new(th1, th2, ph1, ph2))
}

/// 20,000 random poses of both branches, and 4,000 within 1e-4 rad of the poses where the
/// fixed pivot order divides by zero (the right distal link along the base line,
/// `ph2 ∈ {0, π}`). Where the actuated angles parametrise the mechanism (`σ_min / σ_max` of
/// the dependent columns at least 1e-3): identity rows at `INDEPENDENT`, health at least
/// the default threshold, and within 1e-9 (relative) of nalgebra's `∂q/∂(th1, th2)`. Near
/// an actuation singularity the health goes to 0 with that conditioning (at most 100 times
/// it), and the basis is still the derivative, to the accuracy the conditioning allows.
#[test]
fn five_bar_default_null_space_is_the_derivative_by_the_actuated_angles() {
    use rand::{RngExt, SeedableRng};
    let p = five_bar::Params::default();
    assert_eq!(five_bar::INDEPENDENT, [0, 1]);
    assert!(
        five_bar::CHARTS.iter().any(|c| *c != five_bar::INDEPENDENT),
        "the atlas has a chart in other coordinates: {:?}",
        five_bar::CHARTS
    );
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(32);
    let pi = std::f64::consts::PI;
    let (mut regular, mut degraded, mut other_chart, mut near_singular) = (0, 0, 0, 0);
    let mut worst_ratio: f64 = 0.0;
    let mut worst_err: f64 = 0.0;
    for k in 0..24_000 {
        let branch = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let q = if k < 4_000 {
            let ph2 = if rng.random_bool(0.5) { 0.0 } else { pi };
            pose_from_right(
                rng.random_range(-pi..pi),
                ph2 + rng.random_range(-1e-4..1e-4),
                branch,
                &p,
            )
        } else {
            pose(
                rng.random_range(-pi..pi),
                rng.random_range(-pi..pi),
                branch,
                &p,
            )
        };
        let Some(q) = q else {
            continue;
        };
        let j = five_bar::jacobian(&q, &p, 0.0);
        let (_, margin) = common::null_space_error(&j, &five_bar::null_space_fixed(&q, &p, 0.0).0);
        if margin < 1e-4 {
            continue; // the mechanism itself is (near) singular
        }
        let (truth, rcond) = true_basis(&q, &p);
        let (d, health) = five_bar::null_space(&q, &p, 0.0);
        assert!((0.0..=1.0).contains(&health), "{q:?}: health {health}");
        assert!(d.iter().all(|v| v.is_finite()), "{q:?}: {d}");
        for (c, &i) in five_bar::INDEPENDENT.iter().enumerate() {
            for col in 0..2 {
                assert_eq!(d[(i, col)], if col == c { 1.0 } else { 0.0 }, "{q:?}");
            }
        }
        let scale = truth.abs().max();
        let err = (d - truth).abs().max() / scale;
        if rcond >= 1e-3 {
            regular += 1;
            assert!(
                health >= DEFAULT_PIVOT_THRESHOLD && err <= 1e-9,
                "{q:?} (rcond {rcond:e}): health {health:e}, {err:e} off\n{d}\nvs\n{truth}"
            );
            if five_bar::null_space_fixed(&q, &p, 0.0).1 < 1e-3 {
                degraded += 1;
                if five_bar::null_space_in_chart(&q, &p, 0.0).2 != five_bar::INDEPENDENT {
                    other_chart += 1;
                }
            }
        } else {
            near_singular += 1;
            worst_ratio = worst_ratio.max(health / rcond);
            worst_err = worst_err.max(err * rcond);
            assert!(err * rcond <= 1e-10, "{q:?} (rcond {rcond:e}): {err:e} off");
        }
        // The runtime's Result form: the same derivative where the actuated angles
        // parametrise, an error where they do not (below its threshold).
        match mechgen::runtime::null_space::null_space_independent::<five_bar::Model, 4, 2, 2>(
            &q,
            &p,
            0.0,
            DEFAULT_PIVOT_THRESHOLD,
        ) {
            Ok(out) => {
                let e = (out.d - truth).abs().max() / scale;
                assert!(
                    e * rcond.min(1e-3) <= 1e-12,
                    "{q:?} (rcond {rcond:e}): runtime basis {e:e} off"
                );
                for (c, &i) in five_bar::INDEPENDENT.iter().enumerate() {
                    for col in 0..2 {
                        assert_eq!(out.d[(i, col)], if col == c { 1.0 } else { 0.0 });
                    }
                }
            }
            Err(e) => assert!(rcond < 1e-3, "{q:?} (rcond {rcond:e}): {e}"),
        }
        // The chart-indexed form: identity rows at the chart it names.
        let (dc, hc, ind) = five_bar::null_space_in_chart(&q, &p, 0.0);
        if hc >= 1e-3 {
            for (c, &i) in ind.iter().enumerate() {
                for col in 0..2 {
                    assert_eq!(dc[(i, col)], if col == c { 1.0 } else { 0.0 });
                }
            }
            assert!(common::null_space_error(&j, &dc).0 <= 1e-10);
        }
    }
    println!(
        "{regular} regular poses ({degraded} where the fixed order degrades, {other_chart} \
         served by a chart in other coordinates), {near_singular} near an actuation \
         singularity (health at most {worst_ratio:.1} × rcond, error × rcond at most {worst_err:e})"
    );
    assert!(
        regular > 10_000 && other_chart >= 100,
        "{regular} regular, {other_chart} from other charts"
    );
    assert!(worst_ratio <= 100.0, "health {worst_ratio:e} × rcond");
}
