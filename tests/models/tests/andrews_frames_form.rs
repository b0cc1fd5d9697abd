//! Andrews' mechanism written with frames, joints, bodies, a torque and a spring
//! (`andrews_frames.mech`) against the test set's explicit form (`andrews.mech`: the
//! constraint equations as published, the mass matrix and the forces with their Coriolis
//! terms written out by hand). The constraint functions are the same equations in another
//! spelling; the mass matrix and the forces are derived by mechgen from the bodies — a
//! second formulation of the published ones. Equal to 1e-12 relative to each output's
//! largest entry at 1,000 random configurations and velocities.

use mechgen::nalgebra::SVector;
use mechgen_test_support as common;
use rand::RngExt;

include!(concat!(env!("OUT_DIR"), "/andrews.rs"));
include!(concat!(env!("OUT_DIR"), "/andrews_frames.rs"));

fn close(a: &[f64], b: &[f64]) -> bool {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12 * scale)
}

#[test]
fn the_frames_form_equals_the_published_form() {
    assert_eq!(andrews::INDEPENDENT, andrews_frames::INDEPENDENT);
    assert_eq!(andrews::NOMINAL_Q, andrews_frames::NOMINAL_Q);
    let (p, pf) = (
        andrews::Params::default(),
        andrews_frames::Params::default(),
    );
    let mut rng = common::rng(5);
    let nominal = SVector::<f64, 7>::from(andrews::NOMINAL_Q);
    for q in common::random_points(&nominal, 1000, &mut rng) {
        let qd = SVector::<f64, 7>::from_fn(|_, _| rng.random_range(-50.0..50.0));
        let t = 0.0;
        let v = |x: &[f64]| x.to_vec();
        let pairs: [(&str, Vec<f64>, Vec<f64>); 7] = [
            (
                "residual",
                v(andrews::residual(&q, &p, t).as_slice()),
                v(andrews_frames::residual(&q, &pf, t).as_slice()),
            ),
            (
                "jacobian",
                v(andrews::jacobian(&q, &p, t).as_slice()),
                v(andrews_frames::jacobian(&q, &pf, t).as_slice()),
            ),
            (
                "null_space_fixed",
                v(andrews::null_space_fixed(&q, &p, t).0.as_slice()),
                v(andrews_frames::null_space_fixed(&q, &pf, t).0.as_slice()),
            ),
            (
                "gamma",
                v(andrews::gamma(&q, &qd, &p, t).as_slice()),
                v(andrews_frames::gamma(&q, &qd, &pf, t).as_slice()),
            ),
            (
                "mass_matrix",
                v(andrews::mass_matrix(&q, &p, t).as_slice()),
                v(andrews_frames::mass_matrix(&q, &pf, t).as_slice()),
            ),
            (
                "forces",
                v(andrews::forces(&q, &qd, &p, t).as_slice()),
                v(andrews_frames::forces(&q, &qd, &pf, t).as_slice()),
            ),
            (
                "health",
                vec![andrews::null_space_fixed(&q, &p, t).1],
                vec![andrews_frames::null_space_fixed(&q, &pf, t).1],
            ),
        ];
        for (name, a, b) in &pairs {
            assert!(close(b, a), "{name} differs at {q:?}:\n{a:?}\n{b:?}");
        }
    }
}
