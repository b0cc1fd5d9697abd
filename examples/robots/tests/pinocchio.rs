//! The imported robots against Pinocchio 4.1 (`data/*.txt`, written by `reference.py`) at
//! 100 random states each: the mass matrix against `crba`, the generalised forces against
//! `−nonLinearEffects − damping · v` (mechgen's `forces` are the right-hand side of
//! `M q̈ = f + τ`; Pinocchio's bias forces are on the left, and it keeps the URDF damping as
//! data that `nonLinearEffects` does not apply), and forward dynamics (`mass_matrix`,
//! `forces` and a Cholesky solve) against `aba` with the damping torque applied. Each
//! within 1e-12 relative to the largest entry of the reference (max norm), after mapping
//! Pinocchio's joint order to the coordinates by name. The quadruped (Solo-12) and the
//! humanoid (Romeo) are on a floating base, Pinocchio's free flyer: compared on the unit
//! quaternion's tangent space through `q̇ = G(q) v` (`check_floating`); and Solo-12 tumbles
//! through half turns of its base in a simulation that keeps the quaternion unit.

use mechgen::nalgebra::{
    DMatrix, DVector, Matrix3, Quaternion, SMatrix, SVector, UnitQuaternion, Vector3,
};
use robots::{
    forward_dynamics, kernels, panda, romeo, solo, ur5, FloatingBase, Kernel, TreeCholesky,
};

/// Every entry of an `n × n` matrix.
fn dense_pattern(n: usize) -> Vec<(usize, usize)> {
    (0..n).flat_map(|c| (0..n).map(move |r| (r, c))).collect()
}

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
    /// A floating base: Pinocchio's free flyer `root_joint` first.
    floating: bool,
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
        floating: false,
        samples: Vec::new(),
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let last = r.samples.last_mut();
        match (key, last) {
            ("names", _) => r.names = rest.split_whitespace().map(String::from).collect(),
            ("gravity", _) => r.gravity = numbers(rest),
            ("damping", _) => r.damping = numbers(rest),
            ("floating", _) => r.floating = rest.trim() == "1",
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

/// Checks one sample's relative errors (mass matrix, forces, accelerations) against the
/// tolerance and keeps the largest in `worst`.
#[track_caller]
fn record(worst: &mut [f64; 3], errs: [f64; 3], name: &str, i: usize, q: &[f64]) {
    for (w, (e, what)) in
        worst.iter_mut().zip(
            errs.iter()
                .zip(["mass matrix", "forces", "forward dynamics"]),
        )
    {
        assert!(
            *e <= TOL,
            "{name} sample {i}: {what} off by {e:e} relative (q = {q:?})"
        );
        *w = w.max(*e);
    }
}

/// Prints the largest errors of robot `name`, and returns them.
fn report(name: &str, worst: [f64; 3]) -> [f64; 3] {
    println!(
        "{name}: largest relative errors: mass matrix {:.1e}, forces {:.1e}, forward dynamics {:.1e}",
        worst[0], worst[1], worst[2]
    );
    worst
}

/// The generated functions of one robot.
struct Robot<const N: usize> {
    names: [&'static str; N],
    /// The structural nonzeros of the mass matrix (`MASS_NONZEROS`).
    pattern: &'static [(usize, usize)],
    /// Its straight-line kernel (`robots::kernels`).
    kernel: Kernel<N>,
    mass_matrix: fn(&SVector<f64, N>) -> SMatrix<f64, N, N>,
    forces: fn(&SVector<f64, N>, &SVector<f64, N>) -> SVector<f64, N>,
}

/// Checks `robot` against the reference file `name`; returns the largest relative errors
/// of the mass matrix, the forces and the accelerations.
fn check<const N: usize>(name: &str, robot: Robot<N>) -> [f64; 3] {
    let r = reference(name);
    assert_eq!(r.samples.len(), 100, "{name}: samples");
    assert!(!r.floating, "{name}: a fixed base");
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
    let mut tree = TreeCholesky::<N>::new(robot.pattern).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tree.fill(), 0, "{name}: the tree's pattern fills in");
    let mut kernel = TreeCholesky::<N>::with_kernel(robot.pattern, robot.kernel)
        .unwrap_or_else(|e| panic!("{e}"));
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
        // The same solve through the generated pattern (a tree: no fill-in), by the index
        // lists and by the kernel: the same operations in the same order.
        let a_tree = tree
            .solve(&m, f + tau)
            .unwrap_or_else(|e| panic!("{name} sample {i}: {e}"));
        let a_kernel = kernel
            .solve(&m, f + tau)
            .unwrap_or_else(|e| panic!("{name} sample {i}: {e}"));
        assert_eq!(
            a_tree, a_kernel,
            "{name} sample {i}: kernel and loops differ"
        );
        let errs = [
            relative(&got_m, &want_m),
            relative(f.as_slice(), &want_f),
            relative(a.as_slice(), &want_a).max(relative(a_tree.as_slice(), &want_a)),
        ];
        record(&mut worst, errs, name, i, &s.q);
    }
    report(name, worst)
}

#[test]
fn ur5_matches_pinocchio() {
    check(
        "ur5",
        Robot {
            names: ur5::COORD_NAMES,
            pattern: &ur5::MASS_NONZEROS,
            kernel: kernels::ur5::KERNEL,
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
            pattern: &panda::MASS_NONZEROS,
            kernel: kernels::panda::KERNEL,
            mass_matrix: |q| panda::mass_matrix(q, &panda::Params::default(), 0.0),
            forces: |q, v| panda::forces(q, v, &panda::Params::default(), 0.0),
        },
    );
}

/// `q̇ = B(q) ω` of a unit quaternion `q = (w, x, y, z)` turning with the angular velocity
/// `ω` in its own (turned) axes: `q̇ = ½ q ⊗ (0, ω)`. Linear in `q`.
fn quat_rate(q: [f64; 4]) -> [[f64; 3]; 4] {
    let [w, x, y, z] = q;
    [[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]].map(|r| r.map(|e| 0.5 * e))
}

/// The rotation matrix of a unit quaternion `(w, x, y, z)` by nalgebra (independent of
/// the generated `rot_quat` and of the library's base mapping).
fn quat_matrix([w, x, y, z]: [f64; 4]) -> Matrix3<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z))
        .to_rotation_matrix()
        .into_inner()
}

/// Checks a robot on a floating base against the reference file `name` (Pinocchio with a
/// free-flyer root). The mapping: Pinocchio's `q = (p, qx, qy, qz, qw, joints)` is
/// mechgen's `(root_joint_px, _py, _pz, root_joint_w, _x, _y, _z, joints)` (the quaternion
/// reordered w first, the joints by name); Pinocchio's `v = (v_lin, ω, joint rates)` has the
/// root link's linear and angular velocity in the root link's own axes, so mechgen's
/// coordinate rates are `q̇ = G(q) v` with `ṗ = R(q) v_lin`, `q̇_quat = ½ q ⊗ (0, ω)` and the
/// joint rates as they are. On the unit quaternions' tangent space, Pinocchio's mass matrix
/// is `Gᵀ M G`, its generalised forces (`−nle`) `Gᵀ (f − M Ġ v)` with `Ġ v = (R [ω]ₓ v_lin,
/// ½ q̇_quat ⊗ (0, ω), 0)`, and its accelerations (`aba`) `(Gᵀ M G)⁻¹ (Gᵀ (f − M Ġ v) + τ)`.
///
/// The same accelerations by `robots::FloatingBase` (the benchmark's route) with the
/// generated pattern — by the index lists and by the straight-line kernel, equal bit for
/// bit — and with a dense pattern; and `robots::floating_rates` against `G v`.
fn check_floating<const N: usize, const NV: usize>(name: &str, robot: Robot<N>) -> [f64; 3] {
    let r = reference(name);
    assert!(r.floating, "{name}: a floating base");
    assert_eq!(r.samples.len(), 100, "{name}: samples");
    assert_eq!(r.gravity, [0.0, 0.0, -9.81], "{name}: Pinocchio's gravity");
    assert_eq!(r.names[0], "root_joint");
    let nv = NV;
    assert_eq!(NV + 1, N);
    assert_eq!(r.damping.len(), nv, "{name}: Pinocchio's nv");
    let base = ["px", "py", "pz", "w", "x", "y", "z"].map(|s| format!("root_joint_{s}"));
    assert_eq!(robot.names[..7], base.each_ref().map(String::as_str));
    // perm[k]: Pinocchio's velocity index of coordinate 7 + k (its q index is one more).
    let perm: Vec<usize> = robot.names[7..]
        .iter()
        .map(|c| {
            let j = r.names[1..]
                .iter()
                .position(|n| n == c)
                .unwrap_or_else(|| panic!("{name}: coordinate {c} not among {:?}", r.names));
            6 + j
        })
        .collect();
    let mut tree = FloatingBase::<N, NV>::new(robot.pattern).unwrap_or_else(|e| panic!("{e}"));
    // No fill-in among the joints: only inside the base's 7 × 7 block (its 21 pairs; the
    // position's three rows are uncoupled in `M`, not in the Schur complement).
    let fill = tree.cholesky().fill();
    assert!(
        fill <= 21,
        "{name}: the tree's pattern fills in {fill} entries"
    );
    let mut dense = FloatingBase::<N, NV>::new(&dense_pattern(N)).unwrap_or_else(|e| panic!("{e}"));
    let mut kernel = FloatingBase::<N, NV>::with_kernel(robot.pattern, robot.kernel)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut worst = [0.0f64; 3];
    for (i, s) in r.samples.iter().enumerate() {
        let quat = [s.q[6], s.q[3], s.q[4], s.q[5]];
        let q = SVector::<f64, N>::from_fn(|k, _| match k {
            0..=2 => s.q[k],
            3..=6 => quat[k - 3],
            _ => s.q[perm[k - 7] + 1],
        });
        let rot = quat_matrix(quat);
        let (v_lin, omega) = (
            Vector3::new(s.v[0], s.v[1], s.v[2]),
            Vector3::new(s.v[3], s.v[4], s.v[5]),
        );
        let mut g = DMatrix::<f64>::zeros(N, nv);
        g.view_mut((0, 0), (3, 3)).copy_from(&rot);
        for (a, row) in quat_rate(quat).iter().enumerate() {
            for (b, e) in row.iter().enumerate() {
                g[(3 + a, 3 + b)] = *e;
            }
        }
        for (k, &j) in perm.iter().enumerate() {
            g[(7 + k, j)] = 1.0;
        }
        let v = DVector::from_column_slice(&s.v);
        let qd = &g * &v;
        let qd_quat = [qd[3], qd[4], qd[5], qd[6]];
        // Ġ v.
        let mut gdv = DVector::<f64>::zeros(N);
        gdv.rows_mut(0, 3).copy_from(&(rot * omega.cross(&v_lin)));
        for (a, row) in quat_rate(qd_quat).iter().enumerate() {
            gdv[3 + a] = row.iter().zip(omega.iter()).map(|(e, w)| e * w).sum();
        }
        let m = (robot.mass_matrix)(&q);
        let m = DMatrix::from_column_slice(N, N, m.as_slice());
        let f = (robot.forces)(&q, &SVector::<f64, N>::from_column_slice(qd.as_slice()));
        let f = DVector::from_column_slice(f.as_slice());
        let got_m = g.transpose() * &m * &g;
        let got_f = g.transpose() * (f - &m * gdv);
        let want_m = DMatrix::from_row_slice(nv, nv, &s.m);
        let want_f = DVector::from_fn(nv, |k, _| -s.nle[k] - r.damping[k] * s.v[k]);
        let tau = DVector::from_column_slice(&s.tau);
        let a = got_m
            .clone()
            .cholesky()
            .unwrap_or_else(|| panic!("{name} sample {i}: Gᵀ M G not positive definite"))
            .solve(&(&got_f + tau));
        // The library's structured route, in mechgen's joint order.
        let v_mine =
            SVector::<f64, NV>::from_fn(|k, _| if k < 6 { s.v[k] } else { s.v[perm[k - 6]] });
        let tau_mine =
            SVector::<f64, NV>::from_fn(|k, _| if k < 6 { s.tau[k] } else { s.tau[perm[k - 6]] });
        let rates = robots::floating_rates(&q, &v_mine);
        assert!(
            relative(rates.as_slice(), qd.as_slice()) <= TOL,
            "{name} sample {i}: rates"
        );
        let m_s = (robot.mass_matrix)(&q);
        let f_s = (robot.forces)(&q, &rates);
        // Through the generated pattern (a tree: no fill-in; by the index lists and, the
        // same operations in the same order, by the kernel) and through a dense one.
        let mut a_err = relative(a.as_slice(), &s.ddq);
        let fd = |solver: &mut FloatingBase<N, NV>| {
            solver
                .forward_dynamics(&q, &v_mine, &m_s, &f_s, &tau_mine)
                .unwrap_or_else(|e| panic!("{name} sample {i}: {e}"))
        };
        let (by_tree, by_kernel, by_dense) = (fd(&mut tree), fd(&mut kernel), fd(&mut dense));
        assert_eq!(
            by_tree, by_kernel,
            "{name} sample {i}: kernel and loops differ"
        );
        for a_lib in [by_tree, by_dense] {
            let mut a_lib_pin = s.ddq.clone();
            for k in 0..NV {
                a_lib_pin[if k < 6 { k } else { perm[k - 6] }] = a_lib[k];
            }
            a_err = a_err.max(relative(&a_lib_pin, &s.ddq));
        }
        let errs = [
            relative(got_m.as_slice(), want_m.as_slice()),
            relative(got_f.as_slice(), want_f.as_slice()),
            a_err,
        ];
        record(&mut worst, errs, name, i, &s.q);
    }
    report(name, worst)
}

/// Solo-12 (example-robot-data's `solo12.urdf`) on a floating base: 19 coordinates, 18
/// degrees of freedom, against Pinocchio with a free-flyer root.
#[test]
fn solo_matches_pinocchio() {
    check_floating::<{ solo::NQ }, { solo::DOF }>(
        "solo",
        Robot {
            names: solo::COORD_NAMES,
            pattern: &solo::MASS_NONZEROS,
            kernel: kernels::solo::KERNEL,
            mass_matrix: |q| solo::mass_matrix(q, &solo::Params::default(), 0.0),
            forces: |q, v| solo::forces(q, v, &solo::Params::default(), 0.0),
        },
    );
}

/// Romeo (example-robot-data's `romeo_small.urdf`) on a floating base: 38 coordinates, 37
/// degrees of freedom, against Pinocchio with a free-flyer root.
#[test]
fn romeo_matches_pinocchio() {
    check_floating::<{ romeo::NQ }, { romeo::DOF }>(
        "romeo",
        Robot {
            names: romeo::COORD_NAMES,
            pattern: &romeo::MASS_NONZEROS,
            kernel: kernels::romeo::KERNEL,
            mass_matrix: |q| romeo::mass_matrix(q, &romeo::Params::default(), 0.0),
            forces: |q, v| romeo::forces(q, v, &romeo::Params::default(), 0.0),
        },
    );
}

/// Solo-12 thrown tumbling (no ground, no damping): its base turns about 5.4 rad in 1 s, so
/// the quaternion passes a half turn, where the generated chart (`x, y, z` independent, `w`
/// dependent) is singular; the runtime's simulation switches partitions on its own (it
/// did: `switch_times` is not empty). The quaternion stays unit to 1e-10 at 500 output
/// points, `w` changes sign (the half turn was passed), and the energy stays put.
#[test]
fn solo_tumbles_through_half_turns() {
    use mechgen::runtime::{simulate, Options, State};
    let p = solo::Params::default();
    let q0 = SVector::from(solo::NOMINAL_Q);
    assert!(solo::residual(&q0, &p, 0.0).amax() < 1e-12);
    // Rates of the independent coordinates: the quaternion's vector part (half the angular
    // velocity at the identity: ω = (3, −4, 2) rad/s), the base's position, the joints.
    let rate = |k: usize| match k {
        4 => 1.5,
        5 => -2.0,
        6 => 1.0,
        0..=2 => 0.5,
        _ => 1.0 - 0.15 * (k - 7) as f64,
    };
    let u = SVector::<f64, { solo::DOF }>::from_fn(|i, _| rate(solo::INDEPENDENT[i]));
    let start = State::from_independent(solo::Model, 0.0, q0, u);
    let opts = Options::default().with_output_steps(0.0, 1.0, 500);
    let run = simulate(solo::Model, &p, &start, 1.0, &opts).unwrap_or_else(|e| panic!("{e}"));
    let worst = run
        .q
        .iter()
        .fold(0.0f64, |a, q| a.max(solo::residual(q, &p, 0.0).amax()));
    let e0 = solo::energy(&run.q[0], &run.qd[0], &p, 0.0);
    let drift = run
        .q
        .iter()
        .zip(&run.qd)
        .zip(&run.t)
        .fold(0.0f64, |a, ((q, qd), &t)| {
            a.max((solo::energy(q, qd, &p, t) - e0).abs())
        });
    let w: Vec<f64> = run.q.iter().map(|q| q[3]).collect();
    let smallest = w.iter().fold(f64::INFINITY, |a, x| a.min(x.abs()));
    println!(
        "solo: {} output points, largest norm residual {worst:.1e}, energy drift {:.1e} relative, smallest |w| {smallest:.1e}, partition switches at {:?}",
        run.q.len(),
        drift / e0.abs(),
        run.switch_times
    );
    assert!(
        !run.switch_times.is_empty(),
        "the runtime never left the chart of x, y, z"
    );
    assert!(worst <= 1e-10, "residual {worst:e}");
    assert!(drift <= 1e-6 * e0.abs(), "energy drift {drift:e} of {e0}");
    assert!(
        w.iter().any(|&x| x < 0.0) && w.iter().any(|&x| x > 0.0),
        "w kept its sign: the base did not pass a half turn"
    );
}
