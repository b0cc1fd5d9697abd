//! The imported robots against Pinocchio 4.1 (`data/*.txt`, written by `reference.py`) at
//! 100 random states each: the mass matrix against `crba`, the generalised forces against
//! `−nonLinearEffects − damping · v` (mechgen's `forces` are the right-hand side of
//! `M q̈ = f + τ`; Pinocchio's bias forces are on the left, and it keeps the URDF damping as
//! data that `nonLinearEffects` does not apply), and forward dynamics (`mass_matrix`,
//! `forces` and a Cholesky solve) against `aba` with the damping torque applied. Each
//! within 1e-12 relative to the largest entry of the reference (max norm), after mapping
//! Pinocchio's joint order to the coordinates by name.

use mechgen::nalgebra::{SMatrix, SVector};
use robots::{forward_dynamics, panda, ur5};

/// Relative tolerance (max norm of the error over max norm of the reference).
const TOL: f64 = 1e-12;

/// One reference state.
struct Sample {
    q: Vec<f64>,
    v: Vec<f64>,
    tau: Vec<f64>,
    m: Vec<f64>,
    nle: Vec<f64>,
    ddq: Vec<f64>,
}

/// The reference file of `robot`: joint names, damping, samples.
struct Reference {
    names: Vec<String>,
    gravity: Vec<f64>,
    damping: Vec<f64>,
    samples: Vec<Sample>,
}

fn numbers(rest: &str) -> Vec<f64> {
    rest.split_whitespace()
        .map(|s| s.parse::<f64>().unwrap_or_else(|e| panic!("{s:?}: {e}")))
        .collect()
}

fn reference(robot: &str) -> Reference {
    let path = format!("{}/data/{robot}.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut r = Reference {
        names: Vec::new(),
        gravity: Vec::new(),
        damping: Vec::new(),
        samples: Vec::new(),
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let last = r.samples.last_mut();
        match (key, last) {
            ("names", _) => r.names = rest.split_whitespace().map(String::from).collect(),
            ("gravity", _) => r.gravity = numbers(rest),
            ("damping", _) => r.damping = numbers(rest),
            ("sample", _) => r.samples.push(Sample {
                q: vec![],
                v: vec![],
                tau: vec![],
                m: vec![],
                nle: vec![],
                ddq: vec![],
            }),
            ("q", Some(s)) => s.q = numbers(rest),
            ("v", Some(s)) => s.v = numbers(rest),
            ("tau", Some(s)) => s.tau = numbers(rest),
            ("M", Some(s)) => s.m = numbers(rest),
            ("nle", Some(s)) => s.nle = numbers(rest),
            ("ddq", Some(s)) => s.ddq = numbers(rest),
            _ => panic!("{path}: unexpected line {line:?}"),
        }
    }
    r
}

/// `‖got − want‖∞ / ‖want‖∞`.
fn relative(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let err = got
        .iter()
        .zip(want)
        .fold(0.0f64, |a, (g, w)| a.max((g - w).abs()));
    err / scale
}

/// The generated functions of one robot.
struct Robot<const N: usize> {
    names: [&'static str; N],
    mass_matrix: fn(&SVector<f64, N>) -> SMatrix<f64, N, N>,
    forces: fn(&SVector<f64, N>, &SVector<f64, N>) -> SVector<f64, N>,
}

/// Checks `robot` against the reference file `name`; returns the largest relative errors
/// of the mass matrix, the forces and the accelerations.
fn check<const N: usize>(name: &str, robot: Robot<N>) -> [f64; 3] {
    let r = reference(name);
    assert_eq!(r.samples.len(), 100, "{name}: samples");
    assert_eq!(r.gravity, [0.0, 0.0, -9.81], "{name}: Pinocchio's gravity");
    // perm[k]: Pinocchio's index of coordinate k.
    let perm: Vec<usize> = robot
        .names
        .iter()
        .map(|c| {
            r.names
                .iter()
                .position(|n| n == c)
                .unwrap_or_else(|| panic!("{name}: coordinate {c} not among {:?}", r.names))
        })
        .collect();
    let mine = |v: &[f64]| SVector::<f64, N>::from_fn(|k, _| v[perm[k]]);
    let mut worst = [0.0f64; 3];
    for (i, s) in r.samples.iter().enumerate() {
        let (q, v, tau) = (mine(&s.q), mine(&s.v), mine(&s.tau));
        let m = (robot.mass_matrix)(&q);
        let want_m: Vec<f64> = (0..N * N)
            .map(|k| s.m[perm[k / N] * N + perm[k % N]])
            .collect();
        let got_m: Vec<f64> = (0..N * N).map(|k| m[(k / N, k % N)]).collect();
        let f = (robot.forces)(&q, &v);
        let want_f: Vec<f64> = (0..N)
            .map(|k| -s.nle[perm[k]] - r.damping[perm[k]] * s.v[perm[k]])
            .collect();
        let a = forward_dynamics(m, &f, &tau)
            .unwrap_or_else(|| panic!("{name} sample {i}: mass matrix not positive definite"));
        let want_a: Vec<f64> = (0..N).map(|k| s.ddq[perm[k]]).collect();
        let errs = [
            relative(&got_m, &want_m),
            relative(f.as_slice(), &want_f),
            relative(a.as_slice(), &want_a),
        ];
        for (w, (e, what)) in
            worst.iter_mut().zip(
                errs.iter()
                    .zip(["mass matrix", "forces", "forward dynamics"]),
            )
        {
            assert!(
                *e <= TOL,
                "{name} sample {i}: {what} off by {e:e} relative (q = {:?})",
                s.q
            );
            *w = w.max(*e);
        }
    }
    println!(
        "{name}: largest relative errors: mass matrix {:.1e}, forces {:.1e}, forward dynamics {:.1e}",
        worst[0], worst[1], worst[2]
    );
    worst
}

#[test]
fn ur5_matches_pinocchio() {
    check(
        "ur5",
        Robot {
            names: ur5::COORD_NAMES,
            mass_matrix: |q| ur5::mass_matrix(q, &ur5::Params::default(), 0.0),
            forces: |q, v| ur5::forces(q, v, &ur5::Params::default(), 0.0),
        },
    );
}

#[test]
fn panda_matches_pinocchio() {
    check(
        "panda",
        Robot {
            names: panda::COORD_NAMES,
            mass_matrix: |q| panda::mass_matrix(q, &panda::Params::default(), 0.0),
            forces: |q, v| panda::forces(q, v, &panda::Params::default(), 0.0),
        },
    );
}
