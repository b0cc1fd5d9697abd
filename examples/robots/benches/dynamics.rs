//! Forward dynamics of the imported robots per call — `mass_matrix` + `forces` + a
//! Cholesky solve — and each part alone, at 1,000 random states (fixed seed). The robots on
//! a floating base (Solo-12, Romeo) take Pinocchio's free-flyer velocities and give its
//! accelerations, as `aba` does: `floating_rates`, `mass_matrix`, `forces`, then
//! `FloatingBase::forward_dynamics` (the joints eliminated by a `TreeCholesky` of the
//! pattern `MASS_NONZEROS`, the base's 6 × 6 system mapped); their `forces` alone is timed
//! at `q̇ = G v`. The robots on a fixed base solve with a `TreeCholesky` too. Both use the
//! straight-line kernels the build script emits from the pattern (`robots::kernels`), and
//! are built once, outside the timed calls (as Pinocchio's `Data`).
//!
//! `cargo bench -p robots --bench dynamics` prints nanoseconds per call (best of 5 passes).
//! For instruction counts, `-- --calls K ROBOT WHAT` runs `K` calls of one function only
//! (`WHAT`: `fd`, `fd-loops` — the solver without its kernel —, `mass_matrix`, `forces`,
//! or `solve`, `solve-loops`: the solve alone, on 16 precomputed mass matrices and forces); under `valgrind --tool=callgrind`, the count
//! with `K = 1000` minus the count with `K = 0`, over 1,000, is the instructions per call
//! (the commands and figures are in `bench/RESULTS.md`, beside Pinocchio's `aba`, `crba`
//! and `nonLinearEffects` measured the same way by `benches/pinocchio.cpp`).

use std::hint::black_box;
use std::time::Instant;

use mechgen::nalgebra::{SMatrix, SVector};
use robots::{
    floating_rates, kernels, panda, romeo, solo, ur5, FloatingBase, Kernel, TreeCholesky,
};

/// States per pass.
const STATES: usize = 1000;

/// A small deterministic generator (splitmix64) for the states: uniform in [-a, a).
struct Rng(u64);

impl Rng {
    fn uniform(&mut self, a: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        a * (2.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 1.0)
    }
}

/// One robot's functions (parameters at their defaults); `NV`: its velocities (`N` on a
/// fixed base, `N − 1` on a floating base).
struct Robot<const N: usize, const NV: usize> {
    name: &'static str,
    mass_matrix: fn(&SVector<f64, N>) -> SMatrix<f64, N, N>,
    /// `mass_matrix_into`: the structural nonzeros written into the caller's storage.
    mass_matrix_into: fn(&SVector<f64, N>, &mut SMatrix<f64, N, N>),
    forces: fn(&SVector<f64, N>, &SVector<f64, N>) -> SVector<f64, N>,
    /// The structural nonzeros of the mass matrix (`MASS_NONZEROS`).
    pattern: &'static [(usize, usize)],
    /// The straight-line kernel of that pattern (`robots::kernels`).
    kernel: Kernel<N>,
}

impl<const N: usize, const NV: usize> Robot<N, NV> {
    /// On a floating base: the first seven coordinates are the root link's position and
    /// unit quaternion.
    fn floating(&self) -> bool {
        NV < N
    }
}

type States<const N: usize, const NV: usize> =
    Vec<(SVector<f64, N>, SVector<f64, NV>, SVector<f64, NV>)>;

fn states<const N: usize, const NV: usize>(floating: bool) -> States<N, NV> {
    let mut r = Rng(35);
    (0..STATES)
        .map(|_| {
            let mut q = SVector::<f64, N>::from_fn(|_, _| r.uniform(3.0));
            if floating {
                let n = q.fixed_rows::<4>(3).norm();
                q.fixed_rows_mut::<4>(3).unscale_mut(n);
            }
            (
                q,
                SVector::from_fn(|_, _| r.uniform(2.0)),
                SVector::from_fn(|_, _| r.uniform(10.0)),
            )
        })
        .collect()
}

/// `calls` calls of `what` over the states; returns a checksum (so nothing is optimised out).
fn run<const N: usize, const NV: usize>(
    robot: &Robot<N, NV>,
    s: &States<N, NV>,
    what: &str,
    calls: usize,
) -> f64 {
    let floating = robot.floating();
    // Coordinate rates from velocities (the identity on a fixed base).
    let rates = |q: &SVector<f64, N>, v: &SVector<f64, NV>| {
        if floating {
            floating_rates(q, v)
        } else {
            SVector::<f64, N>::from_fn(|k, _| v[k])
        }
    };
    // The solvers, built once from the pattern (as Pinocchio's `Data` is).
    // `fd`: with the straight-line kernel; `fd-loops`: the same solver's index-list loops.
    let (tree, base) = if what.ends_with("-loops") {
        (
            TreeCholesky::<N>::new(robot.pattern),
            floating.then(|| FloatingBase::<N, NV>::new(robot.pattern)),
        )
    } else {
        (
            TreeCholesky::<N>::with_kernel(robot.pattern, robot.kernel),
            floating.then(|| FloatingBase::<N, NV>::with_kernel(robot.pattern, robot.kernel)),
        )
    };
    let mut tree = tree.unwrap_or_else(|e| panic!("{e}"));
    let mut base = base.transpose().unwrap_or_else(|e| panic!("{e}"));
    // `solve`, `solve-loops`: the solve alone, with the mass matrix and forces of the first
    // 16 states computed beforehand (184 KB for Romeo: in the L2 cache).
    let solve_only = what.starts_with("solve");
    let pre: Vec<(SMatrix<f64, N, N>, SVector<f64, N>)> = if solve_only {
        s.iter()
            .take(16)
            .map(|(q, v, _)| ((robot.mass_matrix)(q), (robot.forces)(q, &rates(q, v))))
            .collect()
    } else {
        Vec::new()
    };
    let mut m = SMatrix::<f64, N, N>::zeros();
    let mut sum = 0.0;
    for k in 0..calls {
        let (q, v, tau) = &s[k % s.len()];
        let (q, v, tau) = (black_box(q), black_box(v), black_box(tau));
        if solve_only {
            let (m, f) = black_box(&pre[k % pre.len()]);
            let (q, v, _) = &s[k % pre.len()];
            sum += match base.as_mut() {
                Some(base) => base.forward_dynamics(q, v, m, f, tau),
                None => {
                    let b = SVector::<f64, N>::from_fn(|k, _| f[k] + tau[k]);
                    tree.solve(m, b).map(|a| SVector::from_fn(|k, _| a[k]))
                }
            }
            .map_or(f64::NAN, |a| a[0]);
            continue;
        }
        sum += match what {
            "mass_matrix" => (robot.mass_matrix)(q)[(0, 0)],
            "forces" => (robot.forces)(q, &rates(q, v))[0],
            _ => {
                // The mass matrix into one storage, reused: the solvers read only its
                // pattern's entries (as Pinocchio's `aba` works in its `Data`).
                (robot.mass_matrix_into)(q, &mut m);
                match base.as_mut() {
                    Some(base) => {
                        let f = (robot.forces)(q, &floating_rates(q, v));
                        base.forward_dynamics(q, v, &m, &f, tau)
                            .map_or(f64::NAN, |a| a[0])
                    }
                    None => {
                        let f = (robot.forces)(q, &rates(q, v));
                        let b = SVector::<f64, N>::from_fn(|k, _| f[k] + tau[k]);
                        tree.solve(&m, b).map_or(f64::NAN, |a| a[0])
                    }
                }
            }
        };
    }
    black_box(sum)
}

fn time<const N: usize, const NV: usize>(robot: &Robot<N, NV>) {
    let s = states::<N, NV>(robot.floating());
    for what in [
        "fd",
        "fd-loops",
        "mass_matrix",
        "forces",
        "solve",
        "solve-loops",
    ] {
        run(robot, &s, what, STATES);
        let best = (0..5)
            .map(|_| {
                let t = Instant::now();
                run(robot, &s, what, STATES);
                t.elapsed().as_secs_f64() / STATES as f64
            })
            .fold(f64::INFINITY, f64::min);
        println!("| {} | {what} | {:.0} |", robot.name, best * 1e9);
    }
}

fn ur5() -> Robot<6, 6> {
    Robot {
        name: "ur5",
        mass_matrix: |q| ur5::mass_matrix(q, &ur5::Params::default(), 0.0),
        mass_matrix_into: |q, m| ur5::mass_matrix_into(q, &ur5::Params::default(), 0.0, m),
        forces: |q, v| ur5::forces(q, v, &ur5::Params::default(), 0.0),
        pattern: &ur5::MASS_NONZEROS,
        kernel: kernels::ur5::KERNEL,
    }
}

fn panda() -> Robot<9, 9> {
    Robot {
        name: "panda",
        mass_matrix: |q| panda::mass_matrix(q, &panda::Params::default(), 0.0),
        mass_matrix_into: |q, m| panda::mass_matrix_into(q, &panda::Params::default(), 0.0, m),
        forces: |q, v| panda::forces(q, v, &panda::Params::default(), 0.0),
        pattern: &panda::MASS_NONZEROS,
        kernel: kernels::panda::KERNEL,
    }
}

fn solo() -> Robot<{ solo::NQ }, { solo::DOF }> {
    Robot {
        name: "solo",
        mass_matrix: |q| solo::mass_matrix(q, &solo::Params::default(), 0.0),
        mass_matrix_into: |q, m| solo::mass_matrix_into(q, &solo::Params::default(), 0.0, m),
        forces: |q, v| solo::forces(q, v, &solo::Params::default(), 0.0),
        pattern: &solo::MASS_NONZEROS,
        kernel: kernels::solo::KERNEL,
    }
}

fn romeo() -> Robot<{ romeo::NQ }, { romeo::DOF }> {
    Robot {
        name: "romeo",
        mass_matrix: |q| romeo::mass_matrix(q, &romeo::Params::default(), 0.0),
        mass_matrix_into: |q, m| romeo::mass_matrix_into(q, &romeo::Params::default(), 0.0, m),
        forces: |q, v| romeo::forces(q, v, &romeo::Params::default(), 0.0),
        pattern: &romeo::MASS_NONZEROS,
        kernel: kernels::romeo::KERNEL,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(k) = args.iter().position(|a| a == "--calls") {
        let calls: usize = args.get(k + 1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let robot = args.get(k + 2).map_or("ur5", String::as_str);
        let what = args.get(k + 3).map_or("fd", String::as_str);
        let sum = match robot {
            "panda" => run(&panda(), &states(false), what, calls),
            "solo" => run(&solo(), &states(true), what, calls),
            "romeo" => run(&romeo(), &states(true), what, calls),
            _ => run(&ur5(), &states(false), what, calls),
        };
        println!("{robot} {what} x{calls}: checksum {sum}");
        return;
    }
    println!("| robot | call | ns per call |");
    println!("| --- | --- | ---: |");
    time(&ur5());
    time(&panda());
    time(&solo());
    time(&romeo());
}
