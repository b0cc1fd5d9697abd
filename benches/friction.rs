//! Coulomb friction (issue 36): the cost of one frictional solve
//! (`runtime::contact::friction_accelerations`, mode enumeration) against the frictionless
//! active-set solve (`contact_accelerations`) on the same block, measured in the same run as
//! ratios; and the error-controlled simulation of a ball launched sliding (wall time per
//! simulated second, error of the rolling time and speed against `2 v₀ / (7 μ g)`, `5 v₀ / 7`).
//!
//! `cargo bench -p mechgen --bench friction`; with `-- --calls N --only
//! frictionless|stick|slide`, only `N` solves of one kind, for `valgrind --tool=callgrind`
//! (instructions per call: the difference of two runs' totals over the difference of `N`).
//!
//! `-- --side-by-side`: the block launched on a level floor (`μ = 0.5`) and the ball launched
//! sliding (`μ = 0.2`, `r = 0.11`), `v₀ = 3`, as `bench/mujoco/friction.py` simulates them
//! with MuJoCo: each event's error against the exact answer and the CPU time per simulated
//! second (the thread's CPU time from `/proc/thread-self/schedstat`, the best of 7 samples
//! of 0.2 s of repeated runs of 2 simulated seconds; wall time where that file is missing).

use std::hint::black_box;
use std::time::Instant;

use mechgen::nalgebra::SVector;
use mechgen::runtime::contact::{
    contact_accelerations, friction_accelerations, simulate_friction_adaptive,
    AdaptiveFrictionOptions, ContactOptions, FrictionOptions,
};

mechgen::mechanism! {
    /// A block on a level floor with friction.
    pub mod rough {
        param m = 1.0;
        param g = 9.81;
        param push = 0.0;
        coord x = 0.0;
        coord y = 0.0;
        body b { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        force x = push;
        inequality floor: y >= 0.0, friction = 0.5, tangent = x;
    }

    /// A ball (planar section, `I = 2/5 m r²`) on a floor with friction.
    pub mod ball {
        param r = 0.11;
        param m = 0.17;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.11;
        coord phi = 0.0;
        body b { mass = m, inertia = 0.4 * m * r * r, frame = frame(vec2(x, y), phi) }
        gravity = vec2(0.0, -g);
        inequality floor: y - r >= 0.0, friction = 0.2, tangent = der(x) + r * der(phi);
    }
}

type V2 = SVector<f64, 2>;

fn per_call(n: usize, f: &mut dyn FnMut()) -> f64 {
    let t0 = Instant::now();
    for _ in 0..n {
        f();
    }
    t0.elapsed().as_secs_f64() / n as f64 * 1e9
}

/// The thread's CPU time in seconds (`/proc/thread-self/schedstat`'s first field, in ns),
/// or `None` where the file is missing.
fn cpu_time() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// The time of one call of `f`, in seconds: the best of `repeats` samples, each of as many
/// calls as take 0.2 s (the scheduler updates the CPU time at its ticks), by CPU time (else
/// wall time).
fn best_time(repeats: usize, f: &mut dyn FnMut()) -> f64 {
    let w0 = Instant::now();
    let mut calls = 0usize;
    while w0.elapsed().as_secs_f64() < 0.05 {
        f();
        calls += 1;
    }
    let n = (calls * 4).max(1);
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let (c0, w0) = (cpu_time(), Instant::now());
        for _ in 0..n {
            f();
        }
        let dt = match (c0, cpu_time()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => w0.elapsed().as_secs_f64(),
        };
        best = best.min(dt / n as f64);
    }
    best
}

/// The block and the ball of `bench/mujoco/friction.py`, on the error-controlled route.
fn side_by_side() {
    let opts = AdaptiveFrictionOptions::default();
    let t1 = 2.0;
    let v0 = 3.0;
    println!("| problem | route | time error | distance/speed error | CPU µs per simulated s |");
    println!("| --- | --- | ---: | ---: | ---: |");
    // The block: stops at v0/(mu g) after v0²/(2 mu g).
    let p = rough::Params::default();
    let mu = rough::FRICTION[0];
    let run = || {
        simulate_friction_adaptive::<rough::Model, 2, 0, 2, 1, 1>(
            &V2::zeros(),
            &V2::new(v0, 0.0),
            &p,
            0.0,
            t1,
            &opts,
        )
        .expect("simulate")
    };
    let tr = run();
    let (te, _, _) = tr.events[0];
    let i = tr.t.iter().position(|&t| t == te).unwrap_or(0);
    let (t_exact, d_exact) = (v0 / (mu * p.g), v0 * v0 / (2.0 * mu * p.g));
    let cpu = best_time(7, &mut || {
        black_box(run());
    });
    println!(
        "| block | mechgen DOPRI5 rtol 1e-10, located events | {:.1e} | {:.1e} | {:.0} |",
        (te - t_exact).abs() / t_exact,
        (tr.q[i][0] - d_exact).abs() / d_exact,
        cpu / t1 * 1e6
    );
    // The ball: rolls from 2 v0/(7 mu g) at 5 v0/7.
    let p = ball::Params::default();
    let mu = ball::FRICTION[0];
    let run = || {
        simulate_friction_adaptive::<ball::Model, 3, 0, 3, 1, 1>(
            &SVector::<f64, 3>::new(0.0, p.r, 0.0),
            &SVector::<f64, 3>::new(v0, 0.0, 0.0),
            &p,
            0.0,
            t1,
            &opts,
        )
        .expect("simulate")
    };
    let tr = run();
    let (te, _, _) = tr.events[0];
    let i = tr.t.iter().position(|&t| t == te).unwrap_or(0);
    let (t_exact, v_exact) = (2.0 * v0 / (7.0 * mu * p.g), 5.0 * v0 / 7.0);
    let cpu = best_time(7, &mut || {
        black_box(run());
    });
    println!(
        "| ball | mechgen DOPRI5 rtol 1e-10, located events | {:.1e} | {:.1e} | {:.0} |",
        (te - t_exact).abs() / t_exact,
        (tr.qd[i][0] - v_exact).abs() / v_exact,
        cpu / t1 * 1e6
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--side-by-side") {
        side_by_side();
        return;
    }
    let calls = args
        .iter()
        .position(|a| a == "--calls")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse::<usize>().ok());
    let n = calls.unwrap_or(200_000);
    let sticking = rough::Params {
        push: 2.0,
        ..Default::default()
    };
    let q = V2::zeros();
    let sliding_v = V2::new(1.0, 0.0);
    let fo = FrictionOptions::default();
    let co = ContactOptions::default();
    let mut frictionless = || {
        let _ = black_box(
            contact_accelerations::<rough::Model, 2, 0, 2, 1>(
                black_box(&q),
                black_box(&sliding_v),
                &sticking,
                0.0,
                &[],
                &co,
            )
            .map(|s| s.qdd),
        );
    };
    let mut stick = || {
        let _ = black_box(
            friction_accelerations::<rough::Model, 2, 0, 2, 1, 1>(
                black_box(&q),
                black_box(&V2::zeros()),
                &sticking,
                0.0,
                &fo,
            )
            .map(|s| s.qdd),
        );
    };
    let mut slide = || {
        let _ = black_box(
            friction_accelerations::<rough::Model, 2, 0, 2, 1, 1>(
                black_box(&q),
                black_box(&sliding_v),
                &sticking,
                0.0,
                &fo,
            )
            .map(|s| s.qdd),
        );
    };
    if calls.is_some() {
        // One kind only (`--only frictionless|stick|slide`), for callgrind.
        match args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1))
        {
            Some(k) if k == "stick" => per_call(n, &mut stick),
            Some(k) if k == "slide" => per_call(n, &mut slide),
            _ => per_call(n, &mut frictionless),
        };
        return;
    }
    let a = per_call(n, &mut frictionless);
    let b = per_call(n, &mut stick);
    let c = per_call(n, &mut slide);
    println!("one solve, block on the floor (ns per call; ratio to the frictionless solve):");
    println!("  frictionless contact_accelerations  {a:8.1}  1.00");
    println!(
        "  friction, sticking                  {b:8.1}  {:.2}",
        b / a
    );
    println!(
        "  friction, sliding                   {c:8.1}  {:.2}",
        c / a
    );

    let p = ball::Params::default();
    let v0 = 3.0;
    let mu = 0.2;
    let t1 = 1.0;
    let opts = AdaptiveFrictionOptions::default();
    let runs = 200;
    let t0 = Instant::now();
    let mut tr = None;
    for _ in 0..runs {
        tr = Some(
            simulate_friction_adaptive::<ball::Model, 3, 0, 3, 1, 1>(
                &SVector::<f64, 3>::new(0.0, p.r, 0.0),
                &SVector::<f64, 3>::new(v0, 0.0, 0.0),
                &p,
                0.0,
                t1,
                &opts,
            )
            .expect("simulate"),
        );
    }
    let wall = t0.elapsed().as_secs_f64() / runs as f64;
    let tr = tr.expect("a run");
    let (te, _, _) = tr.events[0];
    let i = tr.t.iter().position(|&t| t == te).unwrap_or(0);
    let t_exact = 2.0 * v0 / (7.0 * mu * p.g);
    let v_exact = 5.0 * v0 / 7.0;
    println!("ball launched sliding, {t1} s on the error-controlled route (rtol 1e-10):");
    println!(
        "  {:.1} µs per simulated second; rolling from t = {te:.15} (error {:.1e} relative), speed error {:.1e} relative",
        wall / t1 * 1e6,
        (te - t_exact).abs() / t_exact,
        (tr.qd[i][0] - v_exact).abs() / v_exact
    );
}
