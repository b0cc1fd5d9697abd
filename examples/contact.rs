//! Inequality constraints, after Jonquet, Nocent and Remion (GRAPP 2007):
//!
//! 1. the paper's corner particle (g1 = x − y ≥ 0, g2 = y ≥ 0, at rest in the corner) with
//!    f = (2, −1) and f = (−1, −2), m = 2 and 3: `y` and `ÿ` per step for Platt's algorithm,
//!    the paper's first approach and its algorithm 3 (as in its figures 4 and 5);
//! 2. the billiard: 11 balls, 77 inequalities, restitution 0.8 and 1; the balls' paths are
//!    drawn to `target/billiard.svg`.
//!
//! Run: `cargo run --release --example contact`.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate_contact, ActiveSet, ContactOptions, Dynamics};
use plotters::prelude::*;

include!("mechanisms/corner.rs");

include!("mechanisms/billiard.rs");
billiard!(lossy_billiard, 0.8);
billiard!(elastic_billiard, 1.0);

fn corner_table() -> Result<(), Box<dyn std::error::Error>> {
    for f in [(2.0, -1.0), (-1.0, -2.0)] {
        for m in [2.0, 3.0] {
            println!("corner particle, f = {f:?}, m = {m}: step, then y and ÿ for Platt / algorithm 2 / algorithm 3");
            let p = corner::Params {
                m,
                fx: f.0,
                fy: f.1,
            };
            let run = |algorithm| {
                let opts = ContactOptions {
                    algorithm,
                    locate_events: false,
                    ..ContactOptions::default()
                };
                simulate_contact::<corner::Model, 2, 0, 2, 2>(
                    &SVector::zeros(),
                    &SVector::zeros(),
                    &p,
                    0.0,
                    0.01,
                    6,
                    &opts,
                )
            };
            let runs = [
                run(ActiveSet::Platt)?,
                run(ActiveSet::Tendency)?,
                run(ActiveSet::Right)?,
            ];
            for k in 0..6 {
                print!("  {k}");
                for r in &runs {
                    print!("  {:>11.3e} {:>9.3e}", r.q[k + 1][1], r.qdd[k][1]);
                }
                println!();
            }
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    corner_table()?;
    let q0 = SVector::<f64, 22>::from(lossy_billiard::NOMINAL_Q);
    let mut v0 = SVector::<f64, 22>::zeros();
    v0[20] = -2.0;
    v0[21] = -1.4;
    let opts = ContactOptions::default();
    let p = lossy_billiard::Params::default();
    let t = std::time::Instant::now();
    let tr = simulate_contact::<lossy_billiard::Model, 22, 0, 22, 77>(
        &q0, &v0, &p, 0.0, 0.005, 800, &opts,
    )?;
    let wall = t.elapsed();
    let e = |q: &SVector<f64, 22>, v: &SVector<f64, 22>| {
        <lossy_billiard::Model as Dynamics<22, 0, 22>>::energy(q, v, &p, 0.0).unwrap_or(f64::NAN)
    };
    let n = tr.q.len() - 1;
    let iterations: usize = tr.iterations.iter().sum();
    println!(
        "billiard (e = 0.8): {} steps in {:.1} ms ({:.0} steps/s), {} impacts, {} LCP steps, {:.2} solves per step, energy {:.4} → {:.4}",
        n,
        wall.as_secs_f64() * 1e3,
        n as f64 / wall.as_secs_f64(),
        tr.impacts,
        tr.lcp_steps,
        iterations as f64 / n as f64,
        e(&tr.q[0], &tr.qd[0]),
        e(&tr.q[n], &tr.qd[n]),
    );
    let pe = elastic_billiard::Params::default();
    let te = simulate_contact::<elastic_billiard::Model, 22, 0, 22, 77>(
        &q0, &v0, &pe, 0.0, 0.005, 800, &opts,
    )?;
    let ee = |q: &SVector<f64, 22>, v: &SVector<f64, 22>| {
        <elastic_billiard::Model as Dynamics<22, 0, 22>>::energy(q, v, &pe, 0.0).unwrap_or(f64::NAN)
    };
    println!(
        "billiard (e = 1): {} impacts, energy {:.12} → {:.12}",
        te.impacts,
        ee(&te.q[0], &te.qd[0]),
        ee(&te.q[n], &te.qd[n])
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/billiard.svg");
    let root = SVGBackend::new(&path, (640, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "billiard, e = 0.8: paths of the 11 balls",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(40)
        .build_cartesian_2d(0.0f64..3.2, 0.0f64..2.4)?;
    chart.configure_mesh().x_desc("x").y_desc("y").draw()?;
    for b in 0..11 {
        let c = Palette99::pick(b);
        chart.draw_series(LineSeries::new(
            tr.q.iter().map(|q| (q[2 * b], q[2 * b + 1])),
            c.stroke_width(2),
        ))?;
        let last = tr.q[n];
        chart.draw_series([Circle::new((last[2 * b], last[2 * b + 1]), 8, c.filled())])?;
    }
    root.present()?;
    println!("wrote {}", path.display());
    Ok(())
}
