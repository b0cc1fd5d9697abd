//! Pivot-health fallback on generated code: a four-bar linkage whose rocker angle is the
//! independent coordinate, driven toward the toggle position where crank and coupler are
//! collinear. There the static pivot vanishes; the runtime wrapper must notice, switch to
//! a numeric basis, report it, and still return a correct basis.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{self, assemble::AssemblyOptions, null_space::NullSpacePath, Mechanism};

/// Relative-pivot threshold below which the wrapper computes the basis numerically (a
/// cautious user's setting: the static pivot here falls like the square root of the
/// distance to the toggle, so reaching the library default 1e-6 takes a distance of
/// ~1e-14).
const THRESHOLD: f64 = 1e-4;

mechgen::mechanism! {
    /// Crank–rocker four-bar: crank 1, coupler 3, rocker 2.5, ground 3.
    pub mod four_bar {
        param a = 1.0;
        param b = 3.0;
        param c = 2.5;
        param g = 3.0;
        coord th = 1.0;
        coord ph = 0.5;
        coord ps = 2.0;
        independent ps;
        constraint vec2(a * cos(th) + b * cos(ph), a * sin(th) + b * sin(ph)) == vec2(g + c * cos(ps), c * sin(ps));
    }
}

type M = four_bar::Model;

#[test]
fn wrapper_switches_to_numeric_basis_at_the_toggle() {
    let p = four_bar::Params::default();
    assert_eq!(four_bar::INDEPENDENT, [2]);
    // Extended toggle: |rocker tip| = a + b, i.e. cos ps = ((a + b)² − g² − c²) / (2 g c).
    let toggle = (((p.a + p.b).powi(2) - p.g * p.g - p.c * p.c) / (2.0 * p.g * p.c)).acos();
    let opts = AssemblyOptions::default();
    let mut q = runtime::assemble::assemble::<M, 3, 2, 1>(
        &<M as Mechanism<3, 2, 1>>::nominal_q(),
        &p,
        0.0,
        &opts,
    )
    .expect("nominal assembles")
    .q;
    let mut paths = Vec::new();
    let mut last_health = f64::INFINITY;
    for k in 0..=84 {
        // Approach the toggle geometrically: ps − toggle = 0.5 · 10^(−k/6).
        let ps = toggle + 0.5 * 10f64.powf(-(k as f64) / 6.0);
        let mut start = q;
        start[2] = ps;
        let asm = runtime::assemble::assemble::<M, 3, 2, 1>(&start, &p, 0.0, &opts)
            .expect("assembles near the toggle");
        q = asm.q;
        let (_, health) = four_bar::null_space_fixed(&q, &p, 0.0);
        assert!(
            k < 12 || health <= last_health * 1.0001 + 1e-12,
            "pivot health should fall toward the toggle (k = {k}: {health:e} after {last_health:e})"
        );
        last_health = health;
        let out = runtime::null_space::null_space_checked::<M, 3, 2, 1>(&q, &p, 0.0, THRESHOLD)
            .expect("a basis");
        let j = four_bar::jacobian(&q, &p, 0.0);
        let rel = (j * out.d).norm() / (j.norm() * out.d.norm());
        assert!(
            rel <= 1e-9,
            "basis quality {rel:e} at ps − toggle = {:e} via {:?}",
            ps - toggle,
            out.path
        );
        assert!(out.d.norm() > 0.0 && out.d.iter().all(|v| v.is_finite()));
        match out.path {
            NullSpacePath::Static { min_pivot } => assert!(min_pivot >= THRESHOLD),
            _ => assert!(
                health < THRESHOLD,
                "fallback only when the static pivot is small"
            ),
        }
        paths.push(out.path);
    }
    assert!(
        matches!(paths[0], NullSpacePath::Static { .. }),
        "far from the toggle the static basis is used"
    );
    assert!(
        paths
            .iter()
            .any(|p| !matches!(p, NullSpacePath::Static { .. })),
        "near the toggle the wrapper must fall back: {paths:?}"
    );
    assert!(
        last_health < THRESHOLD / 10.0,
        "the static pivot vanishes at the toggle: {last_health:e}"
    );
    // At the toggle itself the crank is the natural coordinate: the numeric basis moves
    // the crank while the rocker stands still (to first order).
    let out = runtime::null_space::null_space_checked::<M, 3, 2, 1>(&q, &p, 0.0, THRESHOLD)
        .expect("a basis");
    let d: SVector<f64, 3> = out.d.column(0).into();
    assert!(
        d[2].abs() < 1e-3 * d[0].abs(),
        "at the toggle the rocker is stationary: {d:?}"
    );
}
