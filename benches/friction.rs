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
//! `-- --joints`: dry friction in a joint, one `joint_friction_accelerations` solve of a slider
//! crank with a rough slider (sliding, and sticking at rest) against `lagrange_accelerations`
//! of the same model (which ignores the friction) in the same run; with `--calls N --only
//! joint_free|joint_slide|joint_stick` for callgrind.
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
    contact_accelerations, friction_accelerations, joint_friction_accelerations,
    simulate_friction_adaptive, AdaptiveFrictionOptions, ContactOptions, FrictionOptions,
    JointFrictionOptions,
};
use mechgen::runtime::lagrange::lagrange_accelerations;

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

mechgen::mechanism! {
    /// A slider crank with a rough slider (`ys = 0` the rail's normal) and a crank torque.
    pub mod rough_crank {
        param a = 0.1;
        param b = 0.3;
        param tau = 0.2;
        param g = 9.81;
        coord th = 0.3;
        coord ph = -0.1;
        coord s = 0.39;
        coord ys = 0.0;
        body crank { mass = 0.5, inertia = 0.001, frame = frame(vec2(0.5 * a * cos(th), 0.5 * a * sin(th)), th) }
        body rod {
            mass = 0.8,
            inertia = 0.006,
            frame = frame(vec2(a * cos(th) + 0.5 * b * cos(ph), a * sin(th) + 0.5 * b * sin(ph)), ph)
        }
        body slider { mass = 1.2, com = vec2(s, ys) }
        gravity = vec2(0.0, -g);
        force th = tau;
        constraint a * vec2(cos(th), sin(th)) + b * vec2(cos(ph), sin(ph)) == vec2(s, ys);
        constraint rail: ys == 0.0, friction = 0.3, slip = s;
    }
}

type V2 = SVector<f64, 2>;
type V4 = SVector<f64, 4>;

/// The crank's state at angle `th` turning at `w` (rod and slider assembled).
fn crank_state(p: &rough_crank::Params, th: f64, w: f64) -> (V4, V4) {
    let ph = -(p.a * th.sin() / p.b).asin();
    let s = p.a * th.cos() + p.b * ph.cos();
    let phd = -p.a * th.cos() * w / (p.b * ph.cos());
    let sd = -p.a * th.sin() * w - p.b * ph.sin() * phd;
    (V4::new(th, ph, s, 0.0), V4::new(w, phd, sd, 0.0))
}

/// One solve of the rough slider crank (`kind`: `joint_free` the Lagrange route without the
/// friction, `joint_slide` moving, `joint_stick` at rest) repeated `n` times, in ns per call.
fn joints(n: usize, kind: &str) -> f64 {
    let p = rough_crank::Params::default();
    let (q, qd) = crank_state(&p, 1.0, 3.0);
    let rest = V4::zeros();
    let o = JointFrictionOptions::default();
    match kind {
        "joint_free" => per_call(n, &mut || {
            let _ = black_box(
                lagrange_accelerations::<rough_crank::Model, 4, 3, 1>(
                    black_box(&q),
                    black_box(&qd),
                    &p,
                    0.0,
                    None,
                )
                .map(|s| s.qdd),
            );
        }),
        "joint_stick" => per_call(n, &mut || {
            let _ = black_box(
                joint_friction_accelerations::<rough_crank::Model, 4, 3, 1, 1>(
                    black_box(&q),
                    black_box(&rest),
                    &p,
                    0.0,
                    &o,
                )
                .map(|s| s.qdd),
            );
        }),
        _ => per_call(n, &mut || {
            let _ = black_box(
                joint_friction_accelerations::<rough_crank::Model, 4, 3, 1, 1>(
                    black_box(&q),
                    black_box(&qd),
                    &p,
                    0.0,
                    &o,
                )
                .map(|s| s.qdd),
            );
        }),
    }
}

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
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
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
    if let (Some(n), Some(k)) = (calls, only.as_deref()) {
        if k.starts_with("joint_") {
            joints(n, k);
            return;
        }
    }
    if args.iter().any(|a| a == "--joints") {
        let free = joints(n, "joint_free");
        let slide = joints(n, "joint_slide");
        let stick = joints(n, "joint_stick");
        println!("one solve, rough slider crank (ns per call; ratio to lagrange_accelerations):");
        println!("  lagrange_accelerations (no friction)  {free:8.1}  1.00");
        println!(
            "  joint friction, sliding               {slide:8.1}  {:.2}",
            slide / free
        );
        println!(
            "  joint friction, sticking              {stick:8.1}  {:.2}",
            stick / free
        );
        return;
    }
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
