//! Assembly where the requested independent values are unreachable, and where the generated
//! partition is singular at the requested point (issue 8, item 3).

use mechgen::nalgebra::SVector;
use mechgen::runtime::{self, assemble::AssemblyOptions, AssemblyError, Mechanism};

mechgen::mechanism! {
    /// A point on a circle of radius l, in Cartesian coordinates (x independent).
    pub mod circle_point {
        param l = 1.0;
        coord x = 0.6;
        coord y = -0.8;
        independent x;
        constraint x * x + y * y == l * l;
    }
}

mechgen::mechanism! {
    /// Crank–rocker four-bar (crank 0.3, coupler 1.0, rocker 0.8, ground 1.0), rocker
    /// independent: the rocker swings between its two toggles only.
    pub mod rocker_bar {
        coord th = 1.5707963267948966;
        coord ph = 0.5117203445682225;
        coord ps = 1.7316093277720377;
        independent ps;
        constraint vec2(0.3 * cos(th), 0.3 * sin(th)) + vec2(cos(ph), sin(ph))
            == vec2(1.0 + 0.8 * cos(ps), 0.8 * sin(ps));
    }
}

type V2 = SVector<f64, 2>;
type V3 = SVector<f64, 3>;

#[test]
fn unreachable_rocker_angle_gets_its_own_error() {
    type R = rocker_bar::Model;
    assert_eq!(R::INDEPENDENT, [2]);
    // The rocker tip is at most 1.3 from the crank pivot: ps = 0.2 puts it at
    // |(1.784, 0.159)| = 1.79 > 1.3.
    let q0 = V3::new(0.0, 0.0, 0.2);
    let err = runtime::assemble::assemble::<R, 3, 2, 1>(
        &q0,
        &rocker_bar::Params::default(),
        0.0,
        &AssemblyOptions::default(),
    )
    .expect_err("unreachable");
    let AssemblyError::Unreachable {
        independent,
        residual_norm,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(independent.len(), 1);
    assert_eq!(independent[0].name, Some("ps"));
    assert_eq!(independent[0].value, 0.2);
    // Closest approach: crank and coupler stretched toward the rocker tip, 1.79 − 1.3 short.
    let tip = V2::new(1.0 + 0.8 * 0.2f64.cos(), 0.8 * 0.2f64.sin());
    let gap = tip.norm() - 1.3;
    assert!(
        (residual_norm - gap).abs() < 1e-6,
        "{residual_norm} vs {gap}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("the requested independent coordinates ps (#2) = 2.000e-1 are unreachable: the closest configuration leaves |C| = 4.9"),
        "{msg}"
    );
}

#[test]
fn cartesian_point_beyond_the_circle_is_unreachable() {
    type C = circle_point::Model;
    let p = circle_point::Params::default();
    let err = runtime::assemble::assemble::<C, 2, 1, 1>(
        &V2::new(1.5, 0.3),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .expect_err("|x| > l");
    assert!(
        matches!(&err, AssemblyError::Unreachable { independent, residual_norm, .. }
            if independent[0].name == Some("x") && (residual_norm - 1.25).abs() < 1e-9),
        "{err}"
    );
}

#[test]
fn cartesian_point_started_at_y_zero_assembles() {
    type C = circle_point::Model;
    let p = circle_point::Params::default();
    let opts = AssemblyOptions::default();
    // y = 0 is a stationary point of |C| in y (the dependent coordinate): Newton cannot
    // leave it, the rescue does, keeping x.
    let a = runtime::assemble::assemble::<C, 2, 1, 1>(&V2::new(0.999, 0.0), &p, 0.0, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.q[0], 0.999);
    assert!((a.q[1].abs() - (1.0f64 - 0.999 * 0.999).sqrt()).abs() < 1e-12);
    // Exactly horizontal with x a little beyond l: unreachable for x, but assembly with
    // another partition (y independent) gives the horizontal pose.
    let (a, chart) =
        runtime::assemble::assemble_any::<C, 2, 1, 1>(&V2::new(1.001, 0.0), &p, 0.0, &opts)
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(chart.independent(), &[1]);
    assert!((a.q[0] - 1.0).abs() < 1e-12 && a.q[1] == 0.0, "{:?}", a.q);
}
