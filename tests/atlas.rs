//! The pivot atlas (issue "Trustworthy across the whole motion"): where the primary static
//! pivot order breaks down at an ordinary pose, the default `null_space` picks another
//! chart and stays right. A five-bar with actuated base joints (its fixed pivot order
//! divides by zero where a distal link is vertical, while the mechanism is regular there)
//! over a dense grid of its workspace, exactly at the vertical-link poses, and a four-bar
//! whose named independent coordinate (the rocker) turns back at the toggles.

use mechgen_test_support as common;

use mechgen::nalgebra::SVector;
use mechgen::runtime::null_space::DEFAULT_PIVOT_THRESHOLD;

include!("../examples/mechanisms/five_bar.rs");

mechgen::mechanism! {
    /// Crank–rocker four-bar with the rocker named independent.
    pub mod rocker_four_bar {
        param a = 1.0;
        param b = 3.0;
        param c = 2.5;
        param g = 3.0;
        coord th = 1.3636;
        coord ph = 0.4162;
        coord ps = 2.0;
        independent ps;
        constraint vec2(a * cos(th) + b * cos(ph), a * sin(th) + b * sin(ph)) == vec2(g + c * cos(ps), c * sin(ps));
    }
}

/// The five-bar's configuration from the left side `(a1, ph1)` and the right branch.
fn five_bar_at(a1: f64, ph1: f64, branch: f64, p: &five_bar::Params) -> Option<SVector<f64, 4>> {
    let tip = (
        p.l1 * a1.cos() + p.l2 * ph1.cos(),
        p.l1 * a1.sin() + p.l2 * ph1.sin(),
    );
    let (a2, ph2) = common::two_link((p.g, 0.0), tip, p.l4, p.l3, branch)?;
    Some(SVector::<f64, 4>::new(a1, a2, ph1, ph2))
}

/// The five-bar's configurations on a `steps × steps` grid of its left side `(a1, ph1)`,
/// both branches of the right side (those that close).
fn five_bar_grid(steps: usize, p: &five_bar::Params) -> Vec<SVector<f64, 4>> {
    let at = |k: usize, offset: f64| {
        -std::f64::consts::PI + 2.0 * std::f64::consts::PI * (k as f64 + offset) / steps as f64
    };
    let mut out = Vec::new();
    for i in 0..steps {
        for k in 0..steps {
            for branch in [1.0, -1.0] {
                out.extend(five_bar_at(at(i, 0.5), at(k, 0.25), branch, p));
            }
        }
    }
    out
}

#[test]
fn five_bar_default_null_space_is_right_over_the_workspace() {
    let p = five_bar::Params::default();
    assert!(
        std::hint::black_box(five_bar::NCHARTS) >= 2,
        "the atlas needs a second chart: {:?}",
        five_bar::CHARTS
    );
    let (mut regular, mut checked_fixed_bad, mut n) = (0, 0, 0);
    for q in five_bar_grid(120, &p) {
        n += 1;
        let j = five_bar::jacobian(&q, &p, 0.0);
        assert!(five_bar::residual(&q, &p, 0.0).norm() < 1e-12);
        let (d, health) = five_bar::null_space(&q, &p, 0.0);
        let (err, margin) = common::null_space_error(&j, &d);
        if margin >= 1e-4 {
            regular += 1;
            assert!(
                        health >= DEFAULT_PIVOT_THRESHOLD && err <= 1e-10,
                        "regular configuration {q:?} (rank margin {margin:e}): health {health:e}, basis {err:e} off"
                    );
            let (_, h0) = five_bar::null_space_fixed(&q, &p, 0.0);
            if h0 < 1e-3 {
                checked_fixed_bad += 1;
            }
        } else {
            assert!(
                health < 1e-2 || err <= 1e-8,
                "near-singular {q:?}: health {health:e} but basis {err:e} off"
            );
        }
    }
    assert!(
        n > 15_000 && regular > 15_000,
        "{n} configurations, {regular} regular"
    );
    // The test covers the poses where the fixed order fails (it would fail them).
    assert!(
        checked_fixed_bad > 10,
        "only {checked_fixed_bad} poses where the fixed order degrades"
    );
}

#[test]
fn five_bar_at_the_vertical_link_poses() {
    let p = five_bar::Params::default();
    let half_pi = std::f64::consts::FRAC_PI_2;
    let mut poses = 0;
    for a1 in [0.3, 1.0, 1.7, 2.4, 3.0] {
        for ph1 in [half_pi, -half_pi] {
            for branch in [1.0, -1.0] {
                let Some(q) = five_bar_at(a1, ph1, branch, &p) else {
                    continue;
                };
                let j = five_bar::jacobian(&q, &p, 0.0);
                let (d, health, chart) = five_bar::null_space_atlas(&q, &p, 0.0);
                let (err, margin) = common::null_space_error(&j, &d);
                assert!(margin > 1e-3, "the mechanism is regular at {q:?}");
                assert!(
                    err <= 1e-10 && health >= 1e-3,
                    "{q:?}: chart {chart}, health {health:e}, basis {err:e} off"
                );
                // Identity rows at the chart's independent coordinates.
                for (c, &i) in five_bar::CHARTS[chart].iter().enumerate() {
                    for col in 0..2 {
                        assert_eq!(d[(i, col)], if col == c { 1.0 } else { 0.0 });
                    }
                }
                poses += 1;
            }
        }
    }
    assert!(poses >= 10, "{poses} poses");
}

/// The runtime's generated chart (the `Mechanism` trait, identity rows at `INDEPENDENT`)
/// also takes the atlas's chart with the same independent coordinates where the fixed order
/// degrades: generated code, right to 1e-10 (before: the fixed order's basis down to health
/// 1e-6, the numeric fallback below).
#[test]
fn five_bar_runtime_uses_the_same_coordinates_chart_where_the_fixed_order_degrades() {
    use mechgen::runtime::{self, null_space::NullSpacePath};
    let p = five_bar::Params::default();
    let mut poses = 0;
    for q in five_bar_grid(120, &p) {
        let j = five_bar::jacobian(&q, &p, 0.0);
        let (d0, h0) = five_bar::null_space_fixed(&q, &p, 0.0);
        let (_, margin) = common::null_space_error(&j, &d0);
        if h0 >= 1e-3 || margin < 1e-2 {
            continue;
        }
        let out = runtime::null_space::null_space_checked::<five_bar::Model, 4, 2, 2>(
            &q,
            &p,
            0.0,
            DEFAULT_PIVOT_THRESHOLD,
        )
        .expect("checked null space");
        assert!(
            matches!(out.path, NullSpacePath::Atlas { chart: 0, min_pivot } if min_pivot >= 1e-3),
            "{q:?} (fixed order {h0:e}): {:?}",
            out.path
        );
        let (err, _) = common::null_space_error(&j, &out.d);
        assert!(err <= 1e-10, "{q:?}: basis {err:e} off");
        poses += 1;
    }
    assert!(poses >= 5, "{poses} poses where the fixed order degrades");
}

#[test]
fn rocker_four_bar_through_the_toggles() {
    let p = rocker_four_bar::Params::default();
    assert_eq!(rocker_four_bar::INDEPENDENT, [2]);
    let mut switched = 0;
    for k in 0..20_000 {
        // Crank angle over whole revolutions; the rocker follows (both assembly branches).
        let th = 2.0 * std::f64::consts::PI * (k as f64 * 0.618_033_988_749_895).fract();
        let branch = if k % 2 == 0 { 1.0 } else { -1.0 };
        let tip = (p.a * th.cos(), p.a * th.sin());
        // Rocker pivot at (g, 0): tip + b e(ph) = (g, 0) + c e(ps).
        let Some((ps, psi)) = common::two_link((p.g, 0.0), tip, p.c, p.b, branch) else {
            continue;
        };
        let ph = psi + std::f64::consts::PI;
        let q = SVector::<f64, 3>::new(th, ph, ps);
        assert!(
            rocker_four_bar::residual(&q, &p, 0.0).norm() < 1e-12,
            "{q:?}"
        );
        let j = rocker_four_bar::jacobian(&q, &p, 0.0);
        let (d, health, chart) = rocker_four_bar::null_space_atlas(&q, &p, 0.0);
        let (err, margin) = common::null_space_error(&j, &d);
        if margin >= 1e-4 {
            assert!(
                health >= 1e-3 && err <= 1e-10,
                "{q:?}: chart {chart} health {health:e} err {err:e}"
            );
        }
        if chart != 0 {
            switched += 1;
        }
    }
    assert!(
        switched > 30,
        "the rocker's toggles need another chart ({switched} uses)"
    );
}

/// The partition behind the velocity (and the projection right-hand side) takes an inlined
/// fast path when the primary chart is healthy; it must pick what the full selection
/// (`null_space_checked`) picks: over the five-bar's grid (the primary chart healthy, degraded
/// where an atlas chart serves, and near-singular where the numeric paths serve) and at
/// several thresholds, the velocity equals the full selection's `D u` bit for bit, or both
/// refuse.
#[test]
fn the_partitions_fast_path_picks_what_the_full_selection_picks() {
    use mechgen::runtime::null_space::{null_space_checked, NullSpacePath};
    let p = five_bar::Params::default();
    let u = SVector::<f64, 2>::new(0.7, -1.3);
    let mut paths = std::collections::BTreeMap::new();
    for threshold in [1e-3, DEFAULT_PIVOT_THRESHOLD, 0.2, 0.9, f64::NAN, -1.0, 2.0] {
        for q in five_bar_grid(40, &p) {
            let v = mechgen::runtime::velocity::velocity_from_independent::<five_bar::Model, 4, 2, 2>(
                &q, &u, &p, 0.0, threshold,
            );
            let full = null_space_checked::<five_bar::Model, 4, 2, 2>(&q, &p, 0.0, threshold);
            let kind = match &full {
                Err(_) => "error",
                Ok(o) => match o.path {
                    NullSpacePath::Static { .. } => "static",
                    NullSpacePath::Atlas { .. } => "atlas",
                    NullSpacePath::NumericSameCoordinates { .. } => "numeric",
                    NullSpacePath::NumericSvd { .. } => "svd",
                },
            };
            *paths.entry(kind).or_insert(0) += 1;
            match (kind, &full, &v) {
                ("static" | "atlas" | "numeric", Ok(o), Ok(v)) => {
                    assert_eq!(*v, o.d * u, "{q:?} at threshold {threshold} ({kind})")
                }
                ("svd" | "error", _, Err(_)) => {}
                _ => panic!("{q:?} at threshold {threshold}: full {full:?}, velocity {v:?}"),
            }
        }
    }
    // Every branch of the selection was taken.
    for kind in ["static", "atlas", "numeric", "svd", "error"] {
        assert!(paths.get(kind).copied().unwrap_or(0) > 0, "{paths:?}");
    }
}
