//! The health figure of the generated `null_space` (issue: "a health figure that cannot
//! lie"): in `[0, 1]`, 0 for non-finite inputs, small where rows of `C_J` vanish together
//! or the rank drops, and — the acceptance test — a health at or above the runtime's
//! default threshold implies a basis within 1e-8 (largest principal angle) of the SVD null
//! space, over 10,000 configurations per mechanism, many of them near singular ones.

use mechgen_test_support as common;

use mechgen::nalgebra::SVector;
use mechgen::runtime::null_space::DEFAULT_PIVOT_THRESHOLD;

mechgen::mechanism! {
    /// Crank–rocker four-bar with the rocker independent: the static pivots vanish at the
    /// two toggle positions, where the rocker turns back.
    pub mod four_bar {
        param a = 1.0;
        param b = 3.0;
        param c = 2.5;
        param g = 3.0;
        coord th = 1.0;
        coord ph = 0.3;
        coord ps = 2.0;
        independent ps;
        constraint vec2(a * cos(th) + b * cos(ph), a * sin(th) + b * sin(ph)) == vec2(g + c * cos(ps), c * sin(ps));
    }
    /// Parallelogram: two equal cranks and a coupler as long as the ground. At θ = 0 and
    /// θ = ±π it is flat: the rank of `C_J` drops from 2 to 1 (a bifurcation).
    pub mod parallelogram {
        param a = 1.0;
        param g = 2.0;
        coord th1 = 0.7;
        coord th2 = 0.7;
        coord ph = 0.0;
        independent th1;
        constraint vec2(a * cos(th1) + g * cos(ph), a * sin(th1) + g * sin(ph)) == vec2(g + a * cos(th2), a * sin(th2));
    }
    /// Two four-bar loops sharing a link, lengths repeated across links (the health scale's
    /// `c cos x`, `c sin x` pairs fold into `c` with multiplicities), one unit-length link
    /// (`cos x`, `sin x` alone) and a link at a constant angle offset.
    pub mod two_loops {
        param la = 1.0;
        param lb = 3.0;
        param lc = 2.5;
        coord th0 = 1.0;
        coord ph1 = 0.6;
        coord th1 = 1.55;
        coord ph2 = 1.3574;
        coord th2 = 2.4;
        constraint vec2(la * cos(th0) + lb * cos(ph1), la * sin(th0) + lb * sin(ph1)) == vec2(3.0 + lc * cos(th1), lc * sin(th1));
        constraint vec2(la * cos(th1 + 0.3) + cos(ph2), la * sin(th1 + 0.3) + sin(ph2)) == vec2(1.5 + lc * cos(th2), lc * sin(th2));
    }
}

/// The generated health (whose scale folds `c cos x`, `c sin x` pairs into `c`) equals the
/// figure from its definition to 1e-12 relative at 2,000 random configurations of two
/// mechanisms, and is 0 for a non-finite coordinate of a folded pair's angle.
#[test]
fn health_equals_its_definition() {
    use rand::RngExt;
    let mut rng = common::rng(7);
    let mut worst = 0.0f64;
    for _ in 0..1000 {
        let q = SVector::<f64, 5>::from_fn(|_, _| rng.random_range(-4.0..4.0));
        let p = two_loops::Params::default();
        let (_, h) = two_loops::null_space_fixed(&q, &p, 0.0);
        let j = two_loops::jacobian(&q, &p, 0.0);
        let want = common::health_by_definition(&j, &two_loops::PIVOT_ROWS, &two_loops::PIVOT_COLS);
        worst = worst.max((h - want).abs() / want.max(1e-300));
        assert!((h - want).abs() <= 1e-12 * want, "{q:?}: {h:e} vs {want:e}");
        let q3 = SVector::<f64, 3>::from_fn(|_, _| rng.random_range(-4.0..4.0));
        let p3 = four_bar::Params::default();
        let (_, h) = four_bar::null_space_fixed(&q3, &p3, 0.0);
        let j = four_bar::jacobian(&q3, &p3, 0.0);
        let want = common::health_by_definition(&j, &four_bar::PIVOT_ROWS, &four_bar::PIVOT_COLS);
        assert!(
            (h - want).abs() <= 1e-12 * want,
            "{q3:?}: {h:e} vs {want:e}"
        );
    }
    println!("worst relative difference: {worst:e}");
    let good = two_loops::Params::default();
    for i in 0..5 {
        let mut q = SVector::<f64, 5>::from_fn(|k, _| 0.3 + 0.4 * k as f64);
        q[i] = f64::NAN;
        let (_, h) = two_loops::null_space_fixed(&q, &good, 0.0);
        assert_eq!(h, 0.0, "q[{i}] = NaN: health {h}");
    }
}

/// The four-bar in closed form from the rocker angle (`branch` ±1 picks the assembly).
fn four_bar_at(ps: f64, branch: f64, p: &four_bar::Params) -> Option<SVector<f64, 3>> {
    let (rx, ry) = (p.g + p.c * ps.cos(), p.c * ps.sin());
    let dist = rx.hypot(ry);
    let cos_gamma = (p.a * p.a + dist * dist - p.b * p.b) / (2.0 * p.a * dist);
    if !(-1.0..=1.0).contains(&cos_gamma) {
        return None;
    }
    let th = ry.atan2(rx) + branch * cos_gamma.acos();
    let ph = (ry - p.a * th.sin()).atan2(rx - p.a * th.cos());
    Some(SVector::<f64, 3>::new(th, ph, ps))
}

#[test]
fn healthy_means_right_four_bar_through_the_toggles() {
    let p = four_bar::Params::default();
    // Toggles: |rocker tip| = a + b (extended) and b − a (folded).
    let toggle = |len: f64| ((len * len - p.g * p.g - p.c * p.c) / (2.0 * p.g * p.c)).acos();
    let toggles = [toggle(p.a + p.b), toggle(p.b - p.a)];
    let (mut n, mut healthy, mut near) = (0, 0, 0);
    let mut k = 0u64;
    while n < 10_000 {
        k += 1;
        // Half the samples approach a toggle geometrically (down to 1e-15 rad), the other
        // half cover the whole rocker range.
        let x = (k as f64 * 0.618_033_988_749_895).fract();
        let ps = if k.is_multiple_of(2) {
            let t = toggles[(k / 2 % 2) as usize];
            let side = if k % 8 < 4 { 1.0 } else { -1.0 };
            t + side * 10f64.powf(-15.0 * x)
        } else {
            toggles[1] + (toggles[0] - toggles[1]) * x
        };
        let branch = if k.is_multiple_of(3) { -1.0 } else { 1.0 };
        let Some(q) = four_bar_at(ps, branch, &p) else {
            continue;
        };
        n += 1;
        let j = four_bar::jacobian(&q, &p, 0.0);
        let (d, health) = four_bar::null_space(&q, &p, 0.0);
        assert!(
            (0.0..=1.0).contains(&health),
            "health {health} outside [0, 1]"
        );
        if toggles.iter().any(|t| (ps - t).abs() < 1e-6) {
            near += 1;
        }
        if health >= DEFAULT_PIVOT_THRESHOLD {
            healthy += 1;
            let s = common::null_space_error(&j, &d).0;
            assert!(
                s <= 1e-8,
                "health {health:e} but the basis is {s:e} off the SVD null space at {q:?}"
            );
        }
    }
    // The sample is a real test: most configurations are healthy, and hundreds are within
    // 1e-6 rad of a toggle.
    assert!(healthy > 7_000, "only {healthy} healthy configurations");
    assert!(near > 1_000, "only {near} configurations near a toggle");
}

#[test]
fn parallelogram_flat_positions_show_in_the_health() {
    let p = parallelogram::Params::default();
    let mut healthy = 0;
    for k in 0..10_000 {
        let x = (k as f64 * 0.618_033_988_749_895).fract();
        // Whole range, and geometric approaches to 0 and ±π.
        let th = match k % 3 {
            0 => -std::f64::consts::PI + 2.0 * std::f64::consts::PI * x,
            1 => 10f64.powf(-16.0 * x) * if k % 2 == 0 { 1.0 } else { -1.0 },
            _ => std::f64::consts::PI - 10f64.powf(-16.0 * x),
        };
        let q = SVector::<f64, 3>::new(th, th, 0.0);
        let j = parallelogram::jacobian(&q, &p, 0.0);
        assert!(parallelogram::residual(&q, &p, 0.0).norm() < 1e-12);
        let (d, health) = parallelogram::null_space(&q, &p, 0.0);
        assert!((0.0..=1.0).contains(&health));
        if health >= DEFAULT_PIVOT_THRESHOLD {
            healthy += 1;
            let s = common::null_space_error(&j, &d).0;
            assert!(
                s <= 1e-8,
                "health {health:e}, basis {s:e} off at θ = {th:e}"
            );
        }
    }
    assert!(healthy > 3_000, "only {healthy} healthy");
    // At the flat positions the rank drops: a health that stays at 1 there lies.
    for th in [0.0, std::f64::consts::PI, -std::f64::consts::PI] {
        let q = SVector::<f64, 3>::new(th, th, 0.0);
        let (_, health) = parallelogram::null_space(&q, &p, 0.0);
        assert!(
            health < DEFAULT_PIVOT_THRESHOLD,
            "flat at θ = {th}: health {health:e} should report the rank drop"
        );
    }
}

#[test]
fn non_finite_inputs_give_zero_health() {
    let p = four_bar::Params::default();
    let good = four_bar_at(2.0, 1.0, &p).expect("assembles");
    let (_, h) = four_bar::null_space(&good, &p, 0.0);
    assert!(h > 0.01, "healthy configuration: {h}");
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for i in 0..3 {
            let mut q = good;
            q[i] = bad;
            let (_, h) = four_bar::null_space(&q, &p, 0.0);
            assert_eq!(h, 0.0, "q[{i}] = {bad}: health {h}");
        }
        let pb = four_bar::Params {
            b: bad,
            ..Default::default()
        };
        let (_, h) = four_bar::null_space(&good, &pb, 0.0);
        assert_eq!(h, 0.0, "b = {bad}: health {h}");
    }
    // A vanishing Jacobian (all lengths zero) is health 0, not NaN or 1.
    let zero = four_bar::Params {
        a: 0.0,
        b: 0.0,
        c: 0.0,
        g: 0.0,
    };
    let (_, h) = four_bar::null_space(&good, &zero, 0.0);
    assert_eq!(h, 0.0);
}
