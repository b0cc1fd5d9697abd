//! The Stewart platform written with a loop over its legs (`stewart_loop.mech`: constant
//! arrays, indexed names, `for i in 0..6`) and with frames and joints besides
//! (`stewart_frames.mech`: leg frames, bodies placed by frames, spherical joints at the leg
//! tips) generates the same functions as the one written out leg by leg (`stewart.mech`):
//! equal to 1e-12 (relative to each output's norm) at 1,000 random configurations and
//! velocities, with the same operation counts.

use mechgen::nalgebra::SVector;
use mechgen_test_support as common;
use rand::RngExt;

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));
include!(concat!(env!("OUT_DIR"), "/stewart_loop.rs"));
include!(concat!(env!("OUT_DIR"), "/stewart_frames.rs"));

fn close(a: &[f64], b: &[f64]) -> bool {
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12 * scale)
}

#[test]
fn the_loop_form_generates_the_same_functions() {
    same_as_written_out!(stewart_loop);
}

#[test]
fn the_frames_and_joints_form_generates_the_same_functions() {
    same_as_written_out!(stewart_frames);
}

macro_rules! same_as_written_out {
    ($other:ident) => {{
        assert_eq!(stewart::OP_COUNTS, $other::OP_COUNTS);
        assert_eq!(stewart::INDEPENDENT, $other::INDEPENDENT);
        assert_eq!(stewart::NOMINAL_Q, $other::NOMINAL_Q);
        assert_eq!($other::COORD_NAMES[6..9], ["a_0", "b_0", "l_0"]);
        let (p, pl) = (stewart::Params::default(), $other::Params::default());
        let mut rng = common::rng(21);
        let nominal = SVector::<f64, 24>::from(stewart::NOMINAL_Q);
        for q in common::random_points(&nominal, 1000, &mut rng) {
            let qd = SVector::<f64, 24>::from_fn(|_, _| rng.random_range(-1.0..1.0));
            let t = 0.0;
            let v = |x: &[f64]| x.to_vec();
            let pairs: [(Vec<f64>, Vec<f64>); 8] = [
                (
                    v(stewart::residual(&q, &p, t).as_slice()),
                    v($other::residual(&q, &pl, t).as_slice()),
                ),
                (
                    v(stewart::jacobian(&q, &p, t).as_slice()),
                    v($other::jacobian(&q, &pl, t).as_slice()),
                ),
                (
                    v(stewart::null_space_fixed(&q, &p, t).0.as_slice()),
                    v($other::null_space_fixed(&q, &pl, t).0.as_slice()),
                ),
                (
                    v(stewart::gamma(&q, &qd, &p, t).as_slice()),
                    v($other::gamma(&q, &qd, &pl, t).as_slice()),
                ),
                (
                    v(stewart::mass_matrix(&q, &p, t).as_slice()),
                    v($other::mass_matrix(&q, &pl, t).as_slice()),
                ),
                (
                    v(stewart::forces(&q, &qd, &p, t).as_slice()),
                    v($other::forces(&q, &qd, &pl, t).as_slice()),
                ),
                (
                    vec![stewart::energy(&q, &qd, &p, t)],
                    vec![$other::energy(&q, &qd, &pl, t)],
                ),
                (
                    vec![stewart::null_space_fixed(&q, &p, t).1],
                    vec![$other::null_space_fixed(&q, &pl, t).1],
                ),
            ];
            for (k, (a, b)) in pairs.iter().enumerate() {
                assert!(close(b, a), "function {k} differs at {q:?}");
            }
        }
    }};
}
use same_as_written_out;
