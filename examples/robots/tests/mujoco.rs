//! The models imported from MJCF (`mjcf/*.xml`) against MuJoCo 4.0 (`data/mjcf_*.txt`,
//! written by `reference_mujoco.py`) at 100 random states each:
//!
//! - the mass matrix against `mj_fullM` (MuJoCo's armature is in it; the import adds it by a
//!   `mass_matrix` item);
//! - the generalised forces with the motor inputs set to MuJoCo's controls against
//!   `−qfrc_bias + qfrc_passive + qfrc_actuator` (mechgen's `forces` are the right-hand side of
//!   `M q̈ = f + C_Jᵀ λ`; MuJoCo's bias forces are on the left, its springs, dampers and
//!   motors are applied forces);
//! - the equality constraints' residuals against MuJoCo's `efc_pos`: the connect and weld
//!   points (anchor on body 1 minus anchor on body 2, world axes) and the joint equality,
//!   row for row; the weld's rotation rows (the skew part of the relative rotation, `2 sin θ
//!   u`) against MuJoCo's quaternion residual (`−sin(θ/2) u`) as `∓4 cos(θ/2)` times it;
//!
//! each within 1e-12 relative to the largest entry of the reference (max norm), after
//! mapping MuJoCo's joint order to the coordinates by name. Ball and free joints are unit
//! quaternions here (four coordinates and their norm constraint) and angular velocities in
//! MuJoCo: `q̇ = G(q) v`, so MuJoCo's mass matrix is `Gᵀ M G` and its forces
//! `Gᵀ (f − M Ġ v)` (`ball_free_matches_mujoco`). Then the closed loops simulated through
//! the runtime's entry point keep their residual below 1e-10 over 2 s.

use mechgen::nalgebra::{DMatrix, DVector};
use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{simulate, Options, State};
use robots::mjcf::{ball_free, chain, four_bar, radian, welded_arm};

/// Relative tolerance (max norm of the error over max norm of the reference).
const TOL: f64 = 1e-12;

/// One reference state.
#[derive(Default)]
struct Sample {
    q: Vec<f64>,
    v: Vec<f64>,
    ctrl: Vec<f64>,
    m: Vec<f64>,
    bias: Vec<f64>,
    passive: Vec<f64>,
    actuator: Vec<f64>,
    eq: Vec<f64>,
}

struct Reference {
    names: Vec<String>,
    gravity: Vec<f64>,
    samples: Vec<Sample>,
}

fn numbers(rest: &str) -> Vec<f64> {
    rest.split_whitespace()
        .map(|s| s.parse::<f64>().unwrap_or_else(|e| panic!("{s:?}: {e}")))
        .collect()
}

fn reference(model: &str) -> Reference {
    let path = format!("{}/data/mjcf_{model}.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut r = Reference {
        names: Vec::new(),
        gravity: Vec::new(),
        samples: Vec::new(),
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let last = r.samples.last_mut();
        match (key, last) {
            ("names", _) => r.names = rest.split_whitespace().map(String::from).collect(),
            ("gravity", _) => r.gravity = numbers(rest),
            ("sample", _) => r.samples.push(Sample::default()),
            ("q", Some(s)) => s.q = numbers(rest),
            ("v", Some(s)) => s.v = numbers(rest),
            ("ctrl", Some(s)) => s.ctrl = numbers(rest),
            ("M", Some(s)) => s.m = numbers(rest),
            ("bias", Some(s)) => s.bias = numbers(rest),
            ("passive", Some(s)) => s.passive = numbers(rest),
            ("actuator", Some(s)) => s.actuator = numbers(rest),
            ("eq", Some(s)) => s.eq = numbers(rest),
            _ => panic!("{path}: unexpected line {line:?}"),
        }
    }
    r
}

/// `‖got − want‖∞ / max(‖want‖∞, floor)`.
fn relative(got: &[f64], want: &[f64], floor: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(floor, |a, x| a.max(x.abs()));
    let err = got
        .iter()
        .zip(want)
        .fold(0.0f64, |a, (g, w)| a.max((g - w).abs()));
    err / scale
}

/// How a model's constraint rows compare with MuJoCo's equality rows.
enum Row {
    /// Mechgen's row equals MuJoCo's row `k`.
    Same(usize),
    /// Mechgen's three rows `2 sin θ u` against MuJoCo's quaternion residual in rows
    /// `k..k + 3` (`v = −sin(θ/2) u` up to the quaternion's sign).
    WeldTurn(usize),
}

/// Generalised forces at `q`, `q̇` with the controls as inputs.
type Forces<const N: usize> = fn(&SVector<f64, N>, &SVector<f64, N>, &[f64]) -> SVector<f64, N>;

/// The generated functions of one model.
struct Model<const N: usize, const C: usize> {
    names: [&'static str; N],
    mass_matrix: fn(&SVector<f64, N>) -> SMatrix<f64, N, N>,
    /// Forces with the controls (MuJoCo's actuator order) as inputs.
    forces: Forces<N>,
    residual: fn(&SVector<f64, N>) -> SVector<f64, C>,
    /// Mechgen's constraint rows against MuJoCo's (in mechgen's row order; a weld's turn
    /// takes three rows).
    rows: Vec<Row>,
}

/// Checks `model` against the reference file `name`; returns the largest relative errors
/// of the mass matrix, the forces and the residuals.
fn check<const N: usize, const C: usize>(name: &str, model: Model<N, C>) -> [f64; 3] {
    let r = reference(name);
    assert_eq!(r.samples.len(), 100, "{name}: samples");
    // perm[k]: MuJoCo's index of coordinate k.
    let perm: Vec<usize> = model
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
        let (q, v) = (mine(&s.q), mine(&s.v));
        let m = (model.mass_matrix)(&q);
        let want_m: Vec<f64> = (0..N * N)
            .map(|k| s.m[perm[k / N] * N + perm[k % N]])
            .collect();
        let got_m: Vec<f64> = (0..N * N).map(|k| m[(k / N, k % N)]).collect();
        let f = (model.forces)(&q, &v, &s.ctrl);
        let want_f: Vec<f64> = (0..N)
            .map(|k| {
                let j = perm[k];
                -s.bias[j] + s.passive[j] + s.actuator[j]
            })
            .collect();
        // Residuals, row for row.
        let res = (model.residual)(&q);
        let mut got_e = Vec::new();
        let mut want_e = Vec::new();
        let mut row = 0;
        for kind in &model.rows {
            match *kind {
                Row::Same(k) => {
                    got_e.push(res[row]);
                    want_e.push(s.eq[k]);
                    row += 1;
                }
                Row::WeldTurn(k) => {
                    let v = [s.eq[k], s.eq[k + 1], s.eq[k + 2]];
                    let sin_half_sq: f64 = v.iter().map(|x| x * x).sum();
                    let cos_half = (1.0 - sin_half_sq).max(0.0).sqrt();
                    let mine3 = [res[row], res[row + 1], res[row + 2]];
                    // The quaternion's sign is MuJoCo's choice: take the one that fits.
                    let dot: f64 = mine3.iter().zip(&v).map(|(a, b)| a * b).sum();
                    let sign = if dot > 0.0 { 4.0 } else { -4.0 };
                    got_e.extend(mine3);
                    want_e.extend(v.map(|x| sign * cos_half * x));
                    row += 3;
                }
            }
        }
        assert_eq!(row, C, "{name}: rows");
        let errs = [
            relative(&got_m, &want_m, 0.0),
            relative(f.as_slice(), &want_f, 0.0),
            // Residuals vanish where the loop closes: relative to the model's size (1 m).
            relative(&got_e, &want_e, 1.0),
        ];
        for (w, (e, what)) in
            worst
                .iter_mut()
                .zip(errs.iter().zip(["mass matrix", "forces", "residual"]))
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
        "{name}: largest relative errors: mass matrix {:.1e}, forces {:.1e}, residuals {:.1e}",
        worst[0], worst[1], worst[2]
    );
    worst
}

#[test]
fn chain_matches_mujoco() {
    assert_eq!(reference("chain").gravity, [0.3, -0.2, -9.81]);
    check(
        "chain",
        Model::<4, 0> {
            names: chain::COORD_NAMES,
            mass_matrix: |q| chain::mass_matrix(q, &chain::Params::default(), 0.0),
            forces: |q, v, ctrl| {
                let p = chain::Params {
                    shoulder_motor: ctrl[0],
                    wrist_motor: ctrl[1],
                    elbow_servo: ctrl[2],
                    extend_servo: ctrl[3],
                    ..chain::Params::default()
                };
                chain::forces(q, v, &p, 0.0)
            },
            residual: |q| chain::residual(q, &chain::Params::default(), 0.0),
            rows: vec![],
        },
    );
}

#[test]
fn radian_matches_mujoco() {
    check(
        "radian",
        Model::<3, 0> {
            names: radian::COORD_NAMES,
            mass_matrix: |q| radian::mass_matrix(q, &radian::Params::default(), 0.0),
            forces: |q, v, _| radian::forces(q, v, &radian::Params::default(), 0.0),
            residual: |q| radian::residual(q, &radian::Params::default(), 0.0),
            rows: vec![],
        },
    );
}

#[test]
fn four_bar_matches_mujoco() {
    // The connect's y row (out of the linkage's plane) holds whatever the joints do: the
    // import leaves it out; MuJoCo keeps it (rows x, y, z).
    check(
        "four_bar",
        Model::<3, 2> {
            names: four_bar::COORD_NAMES,
            mass_matrix: |q| four_bar::mass_matrix(q, &four_bar::Params::default(), 0.0),
            forces: |q, v, ctrl| {
                let p = four_bar::Params {
                    drive: ctrl[0],
                    ..four_bar::Params::default()
                };
                four_bar::forces(q, v, &p, 0.0)
            },
            residual: |q| four_bar::residual(q, &four_bar::Params::default(), 0.0),
            rows: vec![Row::Same(0), Row::Same(2)],
        },
    );
}

#[test]
fn welded_arm_matches_mujoco() {
    check(
        "welded_arm",
        Model::<9, 7> {
            names: welded_arm::COORD_NAMES,
            mass_matrix: |q| welded_arm::mass_matrix(q, &welded_arm::Params::default(), 0.0),
            forces: |q, v, _| welded_arm::forces(q, v, &welded_arm::Params::default(), 0.0),
            residual: |q| welded_arm::residual(q, &welded_arm::Params::default(), 0.0),
            rows: vec![
                Row::Same(0),
                Row::Same(1),
                Row::Same(2),
                Row::WeldTurn(3),
                Row::Same(6),
            ],
        },
    );
}

/// The largest constraint residual (max norm) over a run's output points.
fn worst_residual<const N: usize, const C: usize>(
    qs: &[SVector<f64, N>],
    residual: impl Fn(&SVector<f64, N>) -> SVector<f64, C>,
) -> f64 {
    qs.iter().fold(0.0f64, |a, q| a.max(residual(q).amax()))
}

/// The four-bar closed by `<connect>`, released from the model's pose with the crank at 4
/// rad/s (as `reference_mujoco.py` releases it in MuJoCo): the loop stays closed to 1e-10
/// at 1000 output points over 2 s (MuJoCo's soft connect: 1.9e-3 m with its Euler integrator, 5.5e-4 m with RK4,
/// `data/mjcf_mujoco_loops.txt`), and with no damping the energy stays put.
#[test]
fn four_bar_loop_stays_closed() {
    let p = four_bar::Params::default();
    assert_eq!(four_bar::INDEPENDENT, [0], "the crank is independent");
    let q0 = SVector::from(four_bar::NOMINAL_Q);
    assert!(four_bar::residual(&q0, &p, 0.0).amax() < 1e-12);
    let start = State::from_independent(four_bar::Model, 0.0, q0, SVector::from([4.0]));
    let opts = Options::default().with_output_steps(0.0, 2.0, 1000);
    let run = simulate(four_bar::Model, &p, &start, 2.0, &opts).unwrap_or_else(|e| panic!("{e}"));
    let worst = worst_residual(&run.q, |q| four_bar::residual(q, &p, 0.0));
    let e0 = four_bar::energy(&run.q[0], &run.qd[0], &p, 0.0);
    let drift = run
        .q
        .iter()
        .zip(&run.qd)
        .zip(&run.t)
        .fold(0.0f64, |a, ((q, qd), &t)| {
            a.max((four_bar::energy(q, qd, &p, t) - e0).abs())
        });
    println!(
        "four_bar: {} output points, largest residual {worst:.1e} m, energy drift {:.1e} relative",
        run.q.len(),
        drift / e0.abs()
    );
    assert!(worst <= 1e-10, "residual {worst:e}");
    assert!(drift <= 1e-6 * e0.abs(), "energy drift {drift:e} of {e0}");
    // The crank turns over (a crank-rocker): it went past a full turn.
    let turned = run.q[run.q.len() - 1][0] - q0[0];
    assert!(
        turned.abs() > 2.0 * std::f64::consts::PI,
        "crank turned {turned}"
    );
}

/// The seven-hinge arm welded to the world and the geared pair, released with a velocity of
/// their two remaining degrees of freedom (j7 at 0.5 rad/s, gb at 1 rad/s): the weld's six
/// rows and the gearing stay to 1e-10 at 1000 output points over 2 s (MuJoCo, the same
/// start: the weld point drifts 2.8e-2 m with Euler, 9.3e-3 m with RK4, the hand turns
/// away by up to 2 asin(0.43) = 51°, the gearing by 8.5e-3 rad;
/// `data/mjcf_mujoco_loops.txt`).
#[test]
fn welded_arm_stays_welded() {
    let p = welded_arm::Params::default();
    // The independent coordinates the analysis chose: j7 and gb (the start below sets them).
    assert_eq!(welded_arm::INDEPENDENT, [6, 8]);
    let q0 = SVector::from(welded_arm::NOMINAL_Q);
    assert!(welded_arm::residual(&q0, &p, 0.0).amax() < 1e-12);
    let start = State::from_independent(welded_arm::Model, 0.0, q0, SVector::from([0.5, 1.0]));
    let opts = Options::default().with_output_steps(0.0, 2.0, 1000);
    let run = simulate(welded_arm::Model, &p, &start, 2.0, &opts).unwrap_or_else(|e| panic!("{e}"));
    let worst = worst_residual(&run.q, |q| welded_arm::residual(q, &p, 0.0));
    println!(
        "welded_arm: {} output points, largest residual {worst:.1e}",
        run.q.len()
    );
    assert!(worst <= 1e-10, "residual {worst:e}");
}

/// The columns of `q ⊗ (0, ω)` in `ω`: `½ Q(q)` maps a body-axes angular velocity to the
/// quaternion's rate.
fn quat_rate(q: [f64; 4]) -> [[f64; 3]; 4] {
    let [w, x, y, z] = q;
    [[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]].map(|r| r.map(|e| 0.5 * e))
}

/// `G(q)` of a model with the coordinates `names` (as the import names them: a free joint's
/// `…_px, …_py, …_pz, …_w, …_x, …_y, …_z`, a ball joint's `…_w … …_z`, then one per hinge or
/// slide): its coordinates' rates from MuJoCo's velocities (free: linear in the world,
/// angular in the body; ball: angular in the body). Linear in `q`: `Ġ = G(q̇)` with the
/// `linear` blocks zero.
fn velocity_map(names: &[&str], q: &[f64], linear: f64) -> DMatrix<f64> {
    let mut blocks = Vec::new();
    let mut k = 0;
    while k < names.len() {
        let n = if names[k].ends_with("_px") {
            7
        } else if names[k].ends_with("_w") {
            4
        } else {
            1
        };
        blocks.push((k, n));
        k += n;
    }
    let nv: usize = blocks
        .iter()
        .map(|&(_, n)| match n {
            7 => 6,
            4 => 3,
            _ => 1,
        })
        .sum();
    let mut g = DMatrix::zeros(names.len(), nv);
    let mut v = 0;
    for (c, n) in blocks {
        let quaternion = |g: &mut DMatrix<f64>, c: usize, v: usize| {
            let b = quat_rate([q[c], q[c + 1], q[c + 2], q[c + 3]]);
            for (i, row) in b.iter().enumerate() {
                for (j, e) in row.iter().enumerate() {
                    g[(c + i, v + j)] = *e;
                }
            }
        };
        match n {
            7 => {
                for i in 0..3 {
                    g[(c + i, v + i)] = linear;
                }
                quaternion(&mut g, c + 3, v + 3);
                v += 6;
            }
            4 => {
                quaternion(&mut g, c, v);
                v += 3;
            }
            _ => {
                g[(c, v)] = linear;
                v += 1;
            }
        }
    }
    g
}

/// Checks a model with ball or free joints against the reference `name` through `G`:
/// `Gᵀ M G` against MuJoCo's mass matrix, `Gᵀ (f − M Ġ v)` against `−qfrc_bias +
/// qfrc_passive`, the equality residuals (after the `norms` quaternion rows) against
/// `efc_pos`; returns the largest relative errors.
fn check_quaternions<const N: usize, const C: usize>(
    name: &str,
    names: &[&str; N],
    model: Model<N, C>,
    norms: usize,
    samples: usize,
) -> [f64; 3] {
    let r = reference(name);
    assert_eq!(r.samples.len(), samples, "{name}: samples");
    let mut worst = [0.0f64; 3];
    for (i, s) in r.samples.iter().enumerate() {
        let q = SVector::<f64, N>::from_column_slice(&s.q);
        let v = DVector::from_column_slice(&s.v);
        let g = velocity_map(names, &s.q, 1.0);
        let qd = &g * &v;
        let qd = SVector::<f64, N>::from_column_slice(qd.as_slice());
        let m = (model.mass_matrix)(&q);
        let m = DMatrix::from_column_slice(N, N, m.as_slice());
        let f = (model.forces)(&q, &qd, &s.ctrl);
        let f = DVector::from_column_slice(f.as_slice());
        let g_dot = velocity_map(names, qd.as_slice(), 0.0);
        let got_m = g.transpose() * &m * &g;
        let got_f = g.transpose() * (f - &m * (g_dot * &v));
        let nv = g.ncols();
        let want_m = DMatrix::from_row_slice(nv, nv, &s.m);
        let want_f: Vec<f64> = (0..nv)
            .map(|k| -s.bias[k] + s.passive[k] + s.actuator[k])
            .collect();
        let res = (model.residual)(&q);
        // The samples' quaternions are unit: the norm rows vanish.
        let got_e: Vec<f64> = res.as_slice().to_vec();
        let mut want_e = vec![0.0; norms];
        want_e.extend(&s.eq);
        let errs = [
            relative(got_m.as_slice(), want_m.as_slice(), 0.0),
            relative(got_f.as_slice(), &want_f, 0.0),
            relative(&got_e, &want_e, 1.0),
        ];
        for (w, (e, what)) in
            worst
                .iter_mut()
                .zip(errs.iter().zip(["mass matrix", "forces", "residual"]))
        {
            assert!(*e <= TOL, "{name} sample {i}: {what} off by {e:e} relative");
            *w = w.max(*e);
        }
    }
    println!(
        "{name}: largest relative errors: mass matrix {:.1e}, forces {:.1e}, residuals {:.1e}",
        worst[0], worst[1], worst[2]
    );
    worst
}

#[test]
fn ball_free_matches_mujoco() {
    assert_eq!(
        ball_free::COORD_NAMES,
        [
            "root_px",
            "root_py",
            "root_pz",
            "root_w",
            "root_x",
            "root_y",
            "root_z",
            "shoulder_w",
            "shoulder_x",
            "shoulder_y",
            "shoulder_z",
            "elbow",
            "swivel_w",
            "swivel_x",
            "swivel_y",
            "swivel_z"
        ]
    );
    assert_eq!(
        reference("ball_free").names,
        ["root", "shoulder", "elbow", "swivel"]
    );
    check_quaternions(
        "ball_free",
        &ball_free::COORD_NAMES,
        Model::<16, 3> {
            names: ball_free::COORD_NAMES,
            mass_matrix: |q| ball_free::mass_matrix(q, &ball_free::Params::default(), 0.0),
            forces: |q, v, _| ball_free::forces(q, v, &ball_free::Params::default(), 0.0),
            residual: |q| ball_free::residual(q, &ball_free::Params::default(), 0.0),
            rows: vec![],
        },
        3,
        100,
    );
}

/// The floating torso with its arm and the ball pendulum, released with every joint
/// turning: the three quaternions keep their norm to 1e-10 at 1000 output points over 2 s.
#[test]
fn ball_free_quaternions_stay_unit() {
    let p = ball_free::Params::default();
    let q0 = SVector::from(ball_free::NOMINAL_Q);
    assert!(ball_free::residual(&q0, &p, 0.0).amax() < 1e-12);
    let u = SVector::<f64, { ball_free::DOF }>::from_fn(|k, _| 0.5 + 0.1 * k as f64);
    let start = State::from_independent(ball_free::Model, 0.0, q0, u);
    let opts = Options::default().with_output_steps(0.0, 2.0, 1000);
    let run = simulate(ball_free::Model, &p, &start, 2.0, &opts).unwrap_or_else(|e| panic!("{e}"));
    let worst = worst_residual(&run.q, |q| ball_free::residual(q, &p, 0.0));
    println!(
        "ball_free: {} output points, largest norm residual {worst:.1e}",
        run.q.len()
    );
    assert!(worst <= 1e-10, "residual {worst:e}");
}

/// Agility Cassie from MuJoCo Menagerie, imported from its published file: 35 coordinates
/// (a free pelvis, two ball joints in the achilles rods, 24 hinges), four `connect` loops,
/// ten motors, joint springs, dampers and armature; against MuJoCo at 50 random states
/// (feature `cassie`: `cargo test -p robots --features cassie --test mujoco cassie`).
#[cfg(feature = "cassie")]
#[test]
fn cassie_matches_mujoco() {
    use robots::mjcf::cassie;
    let r = reference("cassie");
    assert_eq!(r.names.len(), 23);
    check_quaternions(
        "cassie",
        &cassie::COORD_NAMES,
        Model::<35, 15> {
            names: cassie::COORD_NAMES,
            mass_matrix: |q| cassie::mass_matrix(q, &cassie::Params::default(), 0.0),
            forces: |q, v, ctrl| {
                let p = cassie::Params {
                    left_hip_roll_motor: ctrl[0],
                    left_hip_yaw_motor: ctrl[1],
                    left_hip_pitch_motor: ctrl[2],
                    left_knee_motor: ctrl[3],
                    left_foot_motor: ctrl[4],
                    right_hip_roll_motor: ctrl[5],
                    right_hip_yaw_motor: ctrl[6],
                    right_hip_pitch_motor: ctrl[7],
                    right_knee_motor: ctrl[8],
                    right_foot_motor: ctrl[9],
                    ..cassie::Params::default()
                };
                cassie::forces(q, v, &p, 0.0)
            },
            residual: |q| cassie::residual(q, &cassie::Params::default(), 0.0),
            rows: vec![],
        },
        3,
        50,
    );
}

/// Cassie's four loops and three quaternions stay exact over 0.05 s of passive motion from
/// its model pose with the pelvis free (a debug build simulates slowly; the 2 s run is in
/// `benches/loops.rs` with the feature).
#[cfg(feature = "cassie")]
#[test]
fn cassie_loops_stay_closed() {
    use robots::mjcf::cassie;
    let p = cassie::Params::default();
    let q0 = SVector::from(cassie::NOMINAL_Q);
    assert!(cassie::residual(&q0, &p, 0.0).amax() < 1e-12);
    let start = State::at_rest(0.0, q0);
    let opts = Options::default().with_output_steps(0.0, 0.05, 10);
    let run = simulate(cassie::Model, &p, &start, 0.05, &opts).unwrap_or_else(|e| panic!("{e}"));
    let worst = worst_residual(&run.q, |q| cassie::residual(q, &p, 0.0));
    println!("cassie: largest residual over 0.05 s {worst:.1e}");
    assert!(worst <= 1e-10, "residual {worst:e}");
}
