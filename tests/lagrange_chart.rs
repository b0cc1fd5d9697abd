//! The Lagrange route's right-hand side through the generated code (issue 8: "use the
//! static LU / atlas instead of a dense heap LU per RHS"). `runtime::lagrange::lagrange_qdd` computes
//! `q̈` through a healthy generated chart — the primary one, or the pivot atlas's where the
//! primary order divides by zero — and falls back to the SVD solve of
//! `lagrange_accelerations` elsewhere; `lagrange_accelerations` computes the multipliers
//! through the same chart (`C_Jᵀ λ = M q̈ − f` on its dependent columns). Both must equal the
//! SVD solve (`lagrange_accelerations_svd`) wherever the chart serves, including at states
//! approaching singular ones, and the SVD solve must keep every row there (one rank
//! decision).

use mechgen_test_support as common;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, lagrange::lagrange_accelerations, lagrange::lagrange_qdd, lagrange::CHART_RHS_HEALTH,
    null_space::null_space_checked, null_space::NullSpacePath, null_space::DEFAULT_PIVOT_THRESHOLD,
    Mechanism,
};
use rand::RngExt;

include!("../examples/mechanisms/whipple.rs");

mechgen::mechanism! {
    /// The five-bar of examples/mechanisms/five_bar.rs with masses: uniform rods, gravity,
    /// a spring on the tool. Its fixed pivot order divides by zero where a distal link is
    /// vertical; the atlas's second chart serves there.
    pub mod heavy_five_bar {
        param l1 = 1.0;
        param l2 = 2.0;
        param l3 = 2.0;
        param l4 = 1.0;
        param g = 1.5;
        coord a1 = 1.9;
        coord a2 = 1.164454;
        coord ph1 = 0.966718;
        coord ph2 = 2.158655;
        independent a1, a2;
        let tool = vec2(l1 * cos(a1) + l2 * cos(ph1), l1 * sin(a1) + l2 * sin(ph1));
        constraint tool == vec2(g + l4 * cos(a2) + l3 * cos(ph2), l4 * sin(a2) + l3 * sin(ph2));
        body r1 { mass = 1.0, inertia = l1 * l1 / 12.0, com = 0.5 * l1 * vec2(cos(a1), sin(a1)), angle = a1 }
        body r4 { mass = 1.0, inertia = l4 * l4 / 12.0, com = vec2(g, 0.0) + 0.5 * l4 * vec2(cos(a2), sin(a2)), angle = a2 }
        body r2 { mass = 2.0, inertia = 2.0 * l2 * l2 / 12.0, com = l1 * vec2(cos(a1), sin(a1)) + 0.5 * l2 * vec2(cos(ph1), sin(ph1)), angle = ph1 }
        body r3 { mass = 2.0, inertia = 2.0 * l3 * l3 / 12.0, com = vec2(g, 0.0) + l4 * vec2(cos(a2), sin(a2)) + 0.5 * l3 * vec2(cos(ph2), sin(ph2)), angle = ph2 }
        gravity = vec2(0.0, -9.81);
        spring pull { a = vec2(0.5, 3.0), b = tool, stiffness = 20.0, length = 0.5 }
    }
}

type F = heavy_five_bar::Model;

/// The five-bar's configuration from `(a1, ph1)` on assembly branch `branch`.
fn five_bar_at(a1: f64, ph1: f64, branch: f64) -> Option<SVector<f64, 4>> {
    let p = heavy_five_bar::Params::default();
    let tip = (
        p.l1 * a1.cos() + p.l2 * ph1.cos(),
        p.l1 * a1.sin() + p.l2 * ph1.sin(),
    );
    let (a2, ph2) = common::two_link((p.g, 0.0), tip, p.l4, p.l3, branch)?;
    Some(SVector::<f64, 4>::new(a1, a2, ph1, ph2))
}

/// Compares the chart route with the SVD solve at `(q, q̇)`: `Some(path)` when a chart
/// served. Asserts agreement to `1e-9` of the acceleration scale and, where a chart
/// served, that the SVD solve kept every row.
fn compare<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    tau: Option<f64>,
) -> Option<NullSpacePath>
where
    M: runtime::Dynamics<NQ, NC, DOF>,
{
    let svd = runtime::lagrange::lagrange_accelerations_svd::<M, NQ, NC, DOF>(q, qd, p, 0.0, tau)
        .expect("svd route");
    let runtime::lagrange::LagrangeQdd { qdd, path } =
        lagrange_qdd::<M, NQ, NC, DOF>(q, qd, p, 0.0, tau).expect("chart route");
    let scale = 1.0 + svd.qdd.amax();
    let err = (qdd - svd.qdd).amax() / scale;
    assert!(err <= 1e-9, "{}: q {q:?}: {err:e} ({path:?})", M::NAME);
    // The default with multipliers: through the same chart where it serves.
    let with = lagrange_accelerations::<M, NQ, NC, DOF>(q, qd, p, 0.0, tau).expect("default");
    assert!((with.qdd - svd.qdd).amax() <= 1e-9 * scale);
    let lscale = 1.0 + svd.lambda.amax();
    let lerr = (with.lambda - svd.lambda).amax() / lscale;
    assert!(
        lerr <= 1e-9,
        "{}: q {q:?}: multipliers {lerr:e} ({path:?})",
        M::NAME
    );
    assert_eq!(with.rank, svd.rank);
    if let Some(path) = path {
        assert_eq!(svd.rank, NC, "{}: q {q:?}, {path:?}", M::NAME);
        let h = match path {
            NullSpacePath::Static { min_pivot } | NullSpacePath::Atlas { min_pivot, .. } => {
                min_pivot
            }
            other => panic!("a chart path, not {other:?}"),
        };
        assert!(h >= CHART_RHS_HEALTH, "{h}");
    } else {
        // Bitwise the SVD solve's.
        assert_eq!(qdd, svd.qdd);
    }
    path
}

/// A consistent velocity at `q`: `D u` with `D` from the checked null space.
fn velocity<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    rng: &mut impl RngExt,
) -> SVector<f64, NQ>
where
    M: Mechanism<NQ, NC, DOF>,
{
    let d = null_space_checked::<M, NQ, NC, DOF>(q, p, 0.0, DEFAULT_PIVOT_THRESHOLD)
        .expect("basis")
        .d;
    let u = SVector::<f64, DOF>::from_fn(|_, _| rng.random_range(-2.0..2.0));
    d * u
}

#[test]
fn five_bar_chart_route_equals_the_svd_solve_over_the_workspace_and_at_vertical_links() {
    let p = heavy_five_bar::Params::default();
    assert!(
        std::hint::black_box(heavy_five_bar::NCHARTS) >= 2,
        "{:?}",
        heavy_five_bar::CHARTS
    );
    let mut rng = common::rng(8);
    let (mut primary, mut atlas, mut svd, mut n) = (0, 0, 0, 0);
    let mut states = Vec::new();
    let steps = 60;
    for i in 0..steps {
        for k in 0..steps {
            let a1 = -3.1 + 6.2 * (i as f64 + 0.5) / steps as f64;
            let ph1 = -3.1 + 6.2 * (k as f64 + 0.25) / steps as f64;
            states.push((a1, ph1));
        }
    }
    // Exactly at and near the vertical-link poses (ph1 = ±π/2), where the fixed order
    // divides by zero, and near the singular poses of the mechanism itself.
    for &a1 in &[0.3, 1.0, 1.9, 2.5] {
        for e in [0.0, 1e-12, 1e-9, 1e-6, 1e-3] {
            states.push((a1, std::f64::consts::FRAC_PI_2 + e));
            states.push((a1, -std::f64::consts::FRAC_PI_2 - e));
        }
    }
    let mut configurations: Vec<SVector<f64, 4>> = Vec::new();
    for (a1, ph1) in states {
        for branch in [1.0, -1.0] {
            configurations.extend(five_bar_at(a1, ph1, branch));
        }
    }
    // Approaching the singular pose where the elbows meet (l1 e(a1) = (g, 0) + l4 e(a2),
    // cos a2 = −(g² + l4² − l1²) / (2 g l4)): the distal links fold onto each other and
    // the dependent block loses rank; the SVD solve takes over there.
    let a2 = -(p.g * p.g + p.l4 * p.l4 - p.l1 * p.l1) / (2.0 * p.g * p.l4);
    let a2 = a2.acos();
    let e2 = (p.g + p.l4 * a2.cos(), p.l4 * a2.sin());
    for e in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8] {
        for sign in [1.0, -1.0] {
            let a1 = e2.1.atan2(e2.0) + sign * e;
            let e1 = (p.l1 * a1.cos(), p.l1 * a1.sin());
            for branch in [1.0, -1.0] {
                if let Some((ph1, y)) = common::two_link(e1, e2, p.l2, p.l3, branch) {
                    configurations.push(SVector::<f64, 4>::new(
                        a1,
                        a2,
                        ph1,
                        y + std::f64::consts::PI,
                    ));
                }
            }
        }
    }
    for q in configurations {
        assert!(
            heavy_five_bar::residual(&q, &p, 0.0).amax() < 1e-12,
            "{q:?}"
        );
        let qd = velocity::<F, 4, 2, 2>(&q, &p, &mut rng);
        for tau in [None, Some(0.05)] {
            n += 1;
            match compare::<F, 4, 2, 2>(&q, &qd, &p, tau) {
                Some(NullSpacePath::Static { .. }) => primary += 1,
                Some(NullSpacePath::Atlas { .. }) => atlas += 1,
                _ => svd += 1,
            }
        }
    }
    eprintln!("primary {primary}, atlas {atlas}, svd {svd} of {n}");
    // The chart route serves almost everywhere; the atlas takes the band where the fixed
    // order degrades.
    assert!(n > 8000, "{n}");
    assert!(atlas > 0, "the atlas chart never served");
    assert!(svd > 0, "no state near the singular pose");
    assert!(
        svd * 20 < n,
        "primary {primary}, atlas {atlas}, svd {svd} of {n}"
    );
}

#[test]
fn five_bar_poses_where_the_fixed_order_divides_by_zero_are_served_by_the_atlas() {
    // The fixed order divides by zero where the right distal link is horizontal
    // (ph2 = ±π), a regular pose of the mechanism: place it there and close the left side.
    let p = heavy_five_bar::Params::default();
    let mut rng = common::rng(1);
    let mut poses = 0;
    for a2 in [-2.4, -1.8, -1.2, 1.2, 1.8, 2.4] {
        for ph2 in [std::f64::consts::PI, -std::f64::consts::PI] {
            for branch in [1.0, -1.0] {
                let tip = (
                    p.g + p.l4 * f64::cos(a2) + p.l3 * f64::cos(ph2),
                    p.l4 * f64::sin(a2) + p.l3 * f64::sin(ph2),
                );
                let Some((a1, ph1)) = common::two_link((0.0, 0.0), tip, p.l1, p.l2, branch) else {
                    continue;
                };
                let q = SVector::<f64, 4>::new(a1, a2, ph1, ph2);
                let (_, h) = heavy_five_bar::null_space_fixed(&q, &p, 0.0);
                if h >= 1e-9 {
                    continue;
                }
                let qd = velocity::<F, 4, 2, 2>(&q, &p, &mut rng);
                let path = compare::<F, 4, 2, 2>(&q, &qd, &p, None);
                assert!(
                    matches!(path, Some(NullSpacePath::Atlas { .. })),
                    "{q:?}: {path:?}"
                );
                poses += 1;
            }
        }
    }
    assert!(
        poses >= 8,
        "{poses} poses where the fixed order divides by zero"
    );
}

#[test]
fn bicycle_chart_route_equals_the_svd_solve() {
    type M = whipple::Model;
    let p = whipple::Params::default();
    let mut rng = common::rng(11);
    let qs = common::random_configurations::<8, 5, 3, M>(&p, 300, 0.2, 5);
    let mut served = 0;
    for q in &qs {
        let qd = velocity::<M, 8, 5, 3>(q, &p, &mut rng);
        if compare::<M, 8, 5, 3>(q, &qd, &p, None).is_some() {
            served += 1;
        }
    }
    assert_eq!(served, qs.len());
}
