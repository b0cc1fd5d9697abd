//! Contact by the active-set method (inequality constraints, `runtime::contact::simulate_contact`)
//! against penalty springs (a Hunt–Crossley force written with `abs`, integrated by the
//! adaptive projection route), on a particle dropped on a floor that comes to rest on it:
//! wall time, steps and the largest penetration, as ratios against the active set measured
//! in the same run (issue 12).
//!
//! `cargo bench -p mechgen --bench contact`

use std::hint::black_box;
use std::time::Instant;

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    contact::simulate_contact, contact::simulate_contact_adaptive, contact::AdaptiveContactOptions,
    contact::ContactOptions, ode::Dopri5Options, simulate::simulate_projection,
    simulate::Integrator, simulate::SimOptions,
};

mechgen::mechanism! {
    /// A particle above a floor `y ≥ 0` (a plastic contact: restitution 0).
    pub mod floor {
        param m = 1.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 1.0;
        body ball { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        inequality floor: y >= 0.0;
    }
}

mechgen::mechanism! {
    /// The same particle with a penalty floor: a Hunt–Crossley force `δ (k + c δ̇)` on the
    /// penetration `δ = max(−y, 0) = (|y| − y) / 2`.
    pub mod penalty {
        param m = 1.0;
        param g = 9.81;
        param k = 1e4;
        param c = 3400.0;
        coord x = 0.0;
        coord y = 1.0;
        body ball { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        force y = (abs(y) - y) / 2.0 * (k - c * der(y));
    }
}

include!("../examples/mechanisms/billiard.rs");
billiard!(elastic_billiard, 1.0);

mechgen::mechanism! {
    /// The billiard of examples/mechanisms/billiard.rs with penalty springs instead of
    /// inequalities: a one-sided linear spring `k max(2r − d, 0)` along each pair's normal and
    /// `k max(r − x, 0)` at the walls (elastic, as the active-set scene with e = 1).
    pub mod penalty_billiard {
        param r = 0.1;
        param k = 1e5;
        const x0 = [0.25, 0.5, 0.75, 1.0, 0.375, 0.625, 0.875, 0.5, 0.75, 0.625, 3.0];
        const y0 = [0.25, 0.25, 0.25, 0.25, 0.47, 0.47, 0.47, 0.69, 0.69, 0.91, 2.2];
        fn push(gap) -> scalar { k * (abs(gap) + gap) / 2.0 }
        for i in 0..11 {
            coord x[i] = x0[i];
            coord y[i] = y0[i];
            body ball[i] { mass = 1.0, com = vec2(x[i], y[i]) }
            force x[i] = push(r - x[i]);
            force y[i] = push(r - y[i]);
        }
        for i in 0..11 {
            for j in i + 1..11 {
                let d[i][j] = norm(vec2(x[j] - x[i], y[j] - y[i]));
                force x[i] = -push(2.0 * r - d[i][j]) * (x[j] - x[i]) / d[i][j];
                force y[i] = -push(2.0 * r - d[i][j]) * (y[j] - y[i]) / d[i][j];
                force x[j] = push(2.0 * r - d[i][j]) * (x[j] - x[i]) / d[i][j];
                force y[j] = push(2.0 * r - d[i][j]) * (y[j] - y[i]) / d[i][j];
            }
        }
    }
}

const T_END: f64 = 2.0;

/// Median wall time of `f` over 7 runs, in ms.
fn time(mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[3]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("contact benchmark: run with `cargo bench -p mechgen --bench contact`");
        return;
    }
    let q0 = SVector::<f64, 2>::new(0.0, 1.0);
    let qd0 = SVector::<f64, 2>::new(0.5, 0.0);
    // Active set: semi-implicit Euler, h = 1 ms.
    let h = 1e-3;
    let steps = (T_END / h).round() as usize;
    let opts = ContactOptions::default();
    let run_active = || {
        simulate_contact::<floor::Model, 2, 0, 2, 1>(
            &q0,
            &qd0,
            &floor::Params::default(),
            0.0,
            h,
            steps,
            &opts,
        )
        .expect("active-set run")
    };
    let tr = run_active();
    let pen_active = tr.q.iter().fold(0.0f64, |a, q| a.max(-q[1]));
    let ms_active = time(|| {
        black_box(run_active());
    });
    println!(
        "| method | steps | right-hand sides | wall (ms) | wall / active set | largest penetration (m) | y at t = {T_END} s (m) |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| active set (algorithm 3), h = 1 ms, {} impact(s) | {steps} | {steps} | {ms_active:.3} | 1.00 | {pen_active:.1e} | {:.2e} |",
        tr.impacts,
        tr.q.last().map_or(f64::NAN, |q| q[1])
    );
    // Active set on DOPRI5 with event location (rtol 1e-9): the impact at its exact time.
    let aopts = AdaptiveContactOptions {
        output_times: (1..2000).map(|i| i as f64 * 1e-3).collect(),
        ..AdaptiveContactOptions::default()
    };
    let run_adaptive = || {
        simulate_contact_adaptive::<floor::Model, 2, 0, 2, 1>(
            &q0,
            &qd0,
            &floor::Params::default(),
            0.0,
            T_END,
            &aopts,
        )
        .expect("adaptive active-set run")
    };
    let ta = run_adaptive();
    let pen_adaptive = ta.q.iter().fold(0.0f64, |a, q| a.max(-q[1]));
    let ms_adaptive = time(|| {
        black_box(run_adaptive());
    });
    println!(
        "| active set on DOPRI5 rtol 1e-9, events located ({} impact(s) at t = {:.9} s; exact {:.9}) | — | — | {ms_adaptive:.3} | {:.2} | {pen_adaptive:.1e} | {:.2e} |",
        ta.impacts,
        ta.events.first().copied().unwrap_or(f64::NAN),
        (2.0f64 / 9.81).sqrt(),
        ms_adaptive / ms_active,
        ta.q.last().map_or(f64::NAN, |q| q[1])
    );
    billiard();
    for (k, rtol) in [(1e4, 1e-6), (1e6, 1e-6), (1e6, 1e-9)] {
        // c from the Hunt–Crossley plastic limit c ≈ 3 k / (2 v_in), v_in = √(2 g) ≈ 4.43.
        let p = penalty::Params {
            k,
            c: 1.5 * k / 4.43,
            ..penalty::Params::default()
        };
        let o = SimOptions {
            integrator: Integrator::Dopri5(Dopri5Options {
                rtol,
                atol: rtol * 1e-2,
                ..Dopri5Options::default()
            }),
            output_times: (1..2000).map(|i| i as f64 * 1e-3).collect(),
            ..SimOptions::default()
        };
        let run = || {
            simulate_projection::<penalty::Model, 2, 0, 2>(&q0, &qd0, &p, 0.0, T_END, &o)
                .expect("penalty run")
        };
        let r = run();
        let pen = r.q.iter().fold(0.0f64, |a, q| a.max(-q[1]));
        let ms = time(|| {
            black_box(run());
        });
        println!(
            "| penalty k = {k:.0e} N/m, DOPRI5 rtol {rtol:.0e} | {} | {} | {ms:.3} | {:.2} | {pen:.1e} | {:.2e} |",
            r.stats.ode.steps,
            r.stats.ode.rhs_calls,
            ms / ms_active,
            r.q.last().map_or(f64::NAN, |q| q[1])
        );
    }
}

/// The billiard (11 balls, 77 contacts, elastic) by the active set and by penalty springs:
/// steps per second, active-set solves per step, and the deepest overlap of any two balls or
/// a ball and a wall at the 0.5 ms grid (the accuracy they are compared at: the scene is
/// chaotic, so final positions are not).
fn billiard() {
    let q0 = SVector::<f64, 22>::from(elastic_billiard::NOMINAL_Q);
    let mut qd0 = SVector::<f64, 22>::zeros();
    qd0[20] = -2.0;
    qd0[21] = -1.5;
    let (h, t_end) = (5e-4, 2.0);
    let steps = (t_end / h) as usize;
    let opts = ContactOptions::default();
    let run_active = || {
        simulate_contact::<elastic_billiard::Model, 22, 0, 22, 77>(
            &q0,
            &qd0,
            &elastic_billiard::Params::default(),
            0.0,
            h,
            steps,
            &opts,
        )
        .expect("billiard")
    };
    let tr = run_active();
    let ms = time(|| {
        black_box(run_active());
    });
    let overlap = |q: &SVector<f64, 22>| {
        let mut worst = 0.0f64;
        for i in 0..11 {
            worst = worst.max(0.1 - q[2 * i]).max(0.1 - q[2 * i + 1]);
            for j in i + 1..11 {
                let d =
                    ((q[2 * j] - q[2 * i]).powi(2) + (q[2 * j + 1] - q[2 * i + 1]).powi(2)).sqrt();
                worst = worst.max(0.2 - d);
            }
        }
        worst
    };
    let deepest = tr.q.iter().map(overlap).fold(0.0f64, f64::max);
    let solves: usize = tr.iterations.iter().sum();
    println!();
    println!("billiard, 11 balls, 77 contacts, elastic, {t_end} s:");
    println!();
    println!("| method | steps | steps/s | solves per step | wall (ms) | wall / active set | deepest overlap (m) |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| active set (algorithm 3), h = 0.5 ms, {} impacts | {steps} | {:.0} | {:.2} | {ms:.2} | 1.00 | {deepest:.1e} |",
        tr.impacts,
        steps as f64 / (ms * 1e-3),
        solves as f64 / steps as f64
    );
    for k in [1e5, 1e7] {
        let p = penalty_billiard::Params {
            k,
            ..penalty_billiard::Params::default()
        };
        let o = SimOptions {
            integrator: Integrator::Dopri5(Dopri5Options {
                rtol: 1e-8,
                atol: 1e-10,
                ..Dopri5Options::default()
            }),
            output_times: (1..steps).map(|i| i as f64 * h).collect(),
            ..SimOptions::default()
        };
        let u0 = qd0;
        let run = || {
            simulate_projection::<penalty_billiard::Model, 22, 0, 22>(&q0, &u0, &p, 0.0, t_end, &o)
        };
        match run() {
            Ok(r) => {
                let ms_p = time(|| {
                    black_box(run().ok());
                });
                let deepest_p = r.q.iter().map(overlap).fold(0.0f64, f64::max);
                println!(
                    "| penalty k = {k:.0e} N/m, DOPRI5 rtol 1e-8 | {} | {:.0} | – | {ms_p:.2} | {:.2} | {deepest_p:.1e} |",
                    r.stats.ode.steps,
                    r.stats.ode.steps as f64 / (ms_p * 1e-3),
                    ms_p / ms
                );
            }
            Err(e) => println!("| penalty k = {k:.0e} N/m | failed: {e} | | | | | |"),
        }
    }
    println!();
}
