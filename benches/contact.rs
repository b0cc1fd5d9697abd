//! Contact by the active-set method (inequality constraints, `runtime::simulate_contact`)
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
    simulate_contact, simulate_projection, ContactOptions, Dopri5Options, Integrator, SimOptions,
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
