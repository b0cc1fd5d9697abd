//! Wall time per simulated second of the closed loops imported from MJCF, through the
//! runtime's one entry point (`simulate`, default options: rtol 1e-8, atol 1e-10), from the
//! starts of `tests/mujoco.rs` (the motions `reference_mujoco.py` runs in MuJoCo), and the
//! largest constraint residual at 1,000 output points of a separate run.
//!
//! `cargo bench -p robots --bench loops` prints milliseconds per simulated second (best of
//! 5 runs of 2 s); `--features cassie` adds Agility Cassie (one run). MuJoCo's figures for the same motions are in
//! `data/mjcf_mujoco_loops.txt`; both are in `bench/RESULTS.md`.

use std::time::Instant;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate, Options, State};
use robots::mjcf::{four_bar, welded_arm};

/// Simulated time per run.
const T: f64 = 2.0;
/// Runs; the best is reported.
const RUNS: usize = 5;

/// Best wall time of `RUNS` runs of `run` (which returns a checksum), in ms per simulated
/// second.
fn best(mut run: impl FnMut() -> f64) -> f64 {
    let mut best = f64::INFINITY;
    let mut sum = 0.0;
    for _ in 0..RUNS {
        let t = Instant::now();
        sum += run();
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(sum);
    best / T * 1e3
}

fn main() {
    // Four-bar: crank at 4 rad/s.
    let p = four_bar::Params::default();
    let start = State::from_independent(
        four_bar::Model,
        0.0,
        SVector::from(four_bar::NOMINAL_Q),
        SVector::from([4.0]),
    );
    let ms = best(
        || match simulate(four_bar::Model, &p, &start, T, &Options::default()) {
            Ok(run) => run.q[run.q.len() - 1][0],
            Err(e) => panic!("four_bar: {e}"),
        },
    );
    let dense = Options::default().with_output_steps(0.0, T, 1000);
    let worst = match simulate(four_bar::Model, &p, &start, T, &dense) {
        Ok(run) => run
            .q
            .iter()
            .fold(0.0f64, |a, q| a.max(four_bar::residual(q, &p, 0.0).amax())),
        Err(e) => panic!("four_bar: {e}"),
    };
    println!("four_bar: {ms:.3} ms per simulated second, largest residual {worst:.1e} m");

    // Welded arm and geared pair: j7 at 0.5 rad/s, gb at 1 rad/s (its independent
    // coordinates, `tests/mujoco.rs` checks).
    let p = welded_arm::Params::default();
    let start = State::from_independent(
        welded_arm::Model,
        0.0,
        SVector::from(welded_arm::NOMINAL_Q),
        SVector::from([0.5, 1.0]),
    );
    let ms = best(
        || match simulate(welded_arm::Model, &p, &start, T, &Options::default()) {
            Ok(run) => run.q[run.q.len() - 1][0],
            Err(e) => panic!("welded_arm: {e}"),
        },
    );
    let worst = match simulate(welded_arm::Model, &p, &start, T, &dense) {
        Ok(run) => run.q.iter().fold(0.0f64, |a, q| {
            a.max(welded_arm::residual(q, &p, 0.0).amax())
        }),
        Err(e) => panic!("welded_arm: {e}"),
    };
    println!("welded_arm: {ms:.3} ms per simulated second, largest residual {worst:.1e}");

    #[cfg(feature = "cassie")]
    cassie();
}

/// Agility Cassie (feature `cassie`): passive from its model pose at rest, the pelvis free
/// and falling (no contact), as `reference_mujoco.py` runs it; one run (it is slow).
#[cfg(feature = "cassie")]
fn cassie() {
    use robots::mjcf::cassie;
    let p = cassie::Params::default();
    let start = State::at_rest(0.0, SVector::from(cassie::NOMINAL_Q));
    let opts = Options::default().with_output_steps(0.0, T, 1000);
    let t = Instant::now();
    let run = match simulate(cassie::Model, &p, &start, T, &opts) {
        Ok(run) => run,
        Err(e) => panic!("cassie: {e}"),
    };
    let ms = t.elapsed().as_secs_f64() / T * 1e3;
    let worst = run
        .q
        .iter()
        .fold(0.0f64, |a, q| a.max(cassie::residual(q, &p, 0.0).amax()));
    println!(
        "cassie: {ms:.1} ms per simulated second (one run, 1000 outputs), largest residual {worst:.1e}, {} steps",
        run.stats.ode.steps
    );
}
