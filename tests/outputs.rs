//! Named outputs (`output NAME = expr;`): their Jacobian against central differences of the
//! generated `outputs`, their velocity and acceleration against differences along a motion,
//! and the manipulator Jacobian against central differences of the assembled forward
//! kinematics (the independent coordinates moved, the mechanism re-assembled). Tolerances:
//! 1e-7 relative to the quantity's norm (central differences with h = 1e-6 have error ~h²).

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{assemble::assemble, assemble::AssemblyOptions};
use mechgen_test_support as common;
use rand::RngExt;

mechgen::mechanism! {
    /// The five-bar of examples/mechanisms/five_bar.rs with its tool point and an angle.
    pub mod five_bar {
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
        let tip = vec2(l1 * cos(a1) + l2 * cos(ph1), l1 * sin(a1) + l2 * sin(ph1));
        constraint tip == vec2(g + l4 * cos(a2) + l3 * cos(ph2), l4 * sin(a2) + l3 * sin(ph2));
        /// The tool point.
        output tip = tip;
        /// The elbow angle between the first proximal and distal links.
        output elbow = ph1 - a1;
        /// A time-dependent output (a camera panning along x), for the `∂o/∂t` terms.
        output seen = vec3(tip.x - 0.3 * t, tip.y, sin(t) * a2);
    }
}

mechgen::mechanism! {
    /// A spatial slider crank: crank angle `th` about z, the slider `s` on the x axis, the
    /// rod's end on the crank pin at fixed length.
    pub mod spatial {
        param r = 0.4;
        param l = 1.2;
        param e = 0.2;
        coord th = 0.7;
        coord s = 1.45;
        coord h = 0.1;
        independent th;
        constraint norm_squared(vec3(r * cos(th) - s, r * sin(th), e - h)) == l * l;
        constraint h == 0.25 * sin(th);
        output pin = vec3(r * cos(th), r * sin(th), 0.0);
        output mid = 0.5 * (vec3(r * cos(th), r * sin(th), 0.0) + vec3(s, 0.0, h));
    }
}

const H: f64 = 1e-6;

fn rel<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>, b: &SMatrix<f64, R, C>) -> f64 {
    (a - b).norm() / b.norm().max(1.0)
}

macro_rules! output_tests {
    ($t:ident, $m:ident) => {
        mod $t {
            use super::*;
            use $m as m;
            const NQ: usize = m::NQ;

            #[test]
            fn output_jacobian_and_velocity_match_central_differences() {
                let p = m::Params::default();
                let mut rng = common::rng(11);
                let nominal = SVector::<f64, NQ>::from(m::NOMINAL_Q);
                for q in common::random_points(&nominal, 100, &mut rng) {
                    let t = rng.random_range(-1.0..1.0);
                    let j = m::output_jacobian(&q, &p, t);
                    let fd = SMatrix::<f64, { m::NO }, NQ>::from_fn(|i, k| {
                        let mut a = q;
                        let mut b = q;
                        a[k] += H;
                        b[k] -= H;
                        (m::outputs(&a, &p, t)[i] - m::outputs(&b, &p, t)[i]) / (2.0 * H)
                    });
                    assert!(rel(&j, &fd) < 1e-7, "∂o/∂q: {:e}", rel(&j, &fd));
                    // Along a motion q(t + τ) = q + τ q̇ + τ²/2 q̈.
                    let qd = SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-1.0..1.0));
                    let qdd = SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-1.0..1.0));
                    let at = |tau: f64| q + qd * tau + qdd * (0.5 * tau * tau);
                    let vel_at = |tau: f64| qd + qdd * tau;
                    let v = m::output_velocity(&q, &qd, &p, t);
                    let v_fd = (m::outputs(&at(H), &p, t + H) - m::outputs(&at(-H), &p, t - H))
                        / (2.0 * H);
                    assert!(rel(&v, &v_fd) < 1e-7, "ȯ: {:e}", rel(&v, &v_fd));
                    // ö = ∂o/∂q q̈ + bias, against the derivative of ȯ along the motion.
                    let acc = j * qdd + m::output_acceleration_bias(&q, &qd, &p, t);
                    let acc_fd = (m::output_velocity(&at(H), &vel_at(H), &p, t + H)
                        - m::output_velocity(&at(-H), &vel_at(-H), &p, t - H))
                        / (2.0 * H);
                    assert!(rel(&acc, &acc_fd) < 1e-7, "ö: {:e}", rel(&acc, &acc_fd));
                }
            }

            #[test]
            fn manipulator_jacobian_matches_the_assembled_forward_kinematics() {
                let p = m::Params::default();
                let mut rng = common::rng(12);
                let opts = AssemblyOptions::default();
                let nominal = SVector::<f64, NQ>::from(m::NOMINAL_Q);
                let mut checked = 0;
                for _ in 0..50 {
                    let mut q0 = nominal;
                    for &i in &m::INDEPENDENT {
                        q0[i] += rng.random_range(-0.1..0.1);
                    }
                    let Ok(a) =
                        assemble::<m::Model, NQ, { m::NC }, { m::DOF }>(&q0, &p, 0.0, &opts)
                    else {
                        continue;
                    };
                    let q = a.q;
                    let ju = m::manipulator_jacobian(&q, &p, 0.0);
                    // The symbolic product equals ∂o/∂q times the generated basis.
                    let (d, _) = m::null_space_fixed(&q, &p, 0.0);
                    let prod = m::output_jacobian(&q, &p, 0.0) * d;
                    assert!(rel(&ju, &prod) < 1e-12, "J·D: {:e}", rel(&ju, &prod));
                    // Forward kinematics: move independent coordinate j, re-assemble.
                    let fd = SMatrix::<f64, { m::NO }, { m::DOF }>::from_fn(|i, j| {
                        let fk = |h: f64| {
                            let mut x = q;
                            x[m::INDEPENDENT[j]] += h;
                            let x =
                                assemble::<m::Model, NQ, { m::NC }, { m::DOF }>(&x, &p, 0.0, &opts)
                                    .expect("assembles near an assembled point")
                                    .q;
                            m::outputs(&x, &p, 0.0)[i]
                        };
                        (fk(H) - fk(-H)) / (2.0 * H)
                    });
                    assert!(rel(&ju, &fd) < 1e-7, "∂o/∂u: {:e}", rel(&ju, &fd));
                    checked += 1;
                }
                assert!(checked >= 40, "only {checked} configurations assembled");
            }
        }
    };
}

output_tests!(five_bar_outputs, five_bar);
output_tests!(spatial_outputs, spatial);

#[test]
fn output_names_and_values() {
    assert_eq!(
        five_bar::OUTPUT_NAMES,
        ["tip_x", "tip_y", "elbow", "seen_x", "seen_y", "seen_z"]
    );
    let p = five_bar::Params::default();
    let q = SVector::<f64, 4>::from(five_bar::NOMINAL_Q);
    let o = five_bar::outputs(&q, &p, 0.5);
    let tip_x = 1.0 * 1.9f64.cos() + 2.0 * 0.966718f64.cos();
    assert!((o[0] - tip_x).abs() < 1e-15);
    assert!((o[2] - (0.966718 - 1.9)).abs() < 1e-15);
    assert!((o[3] - (tip_x - 0.15)).abs() < 1e-15);
    assert!((o[5] - 0.5f64.sin() * 1.164454).abs() < 1e-15);
}
