//! Inequality constraints, after Jonquet, Nocent and Remion (GRAPP 2007):
//!
//! 1. the paper's corner particle (g1 = x − y ≥ 0, g2 = y ≥ 0, at rest in the corner) with
//!    f = (2, −1) and f = (−1, −2), m = 2 and 3: `y` and `ÿ` per step for Platt's algorithm,
//!    the paper's first approach and its algorithm 3 (as in its figures 4 and 5), printed and
//!    drawn to `target/corner_f…_m….svg`;
//! 2. the billiard: 11 balls, 77 inequalities, restitution 0.8 and 1; the balls' paths are
//!    drawn to `target/billiard.svg`.
//!
//! Run: `cargo run --release --example contact`.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{contact::simulate_contact, contact::ActiveSet, contact::ContactOptions};
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
                simulate_contact::<corner::Model, _, _, _, _>(
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
            plot_corner(f, m, &runs)?;
        }
    }
    Ok(())
}

/// `y` and `ÿ` per step of the three algorithms, as in the paper's figures 4 and 5:
/// `target/corner_f{fx}_{fy}_m{m}.svg`.
fn plot_corner(
    f: (f64, f64),
    m: f64,
    runs: &[mechgen::runtime::contact::ContactTrajectory<2>; 3],
) -> Result<(), Box<dyn std::error::Error>> {
    let name = format!("target/corner_f{}_{}_m{}.svg", f.0, f.1, m);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&name);
    let root = SVGBackend::new(&path, (720, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let halves = root.split_evenly((1, 2));
    let labels = [
        "Platt (algorithm 1)",
        "first approach (algorithm 2)",
        "algorithm 3",
    ];
    let colors = [RED, BLUE, BLACK];
    for (panel, (what, get)) in halves.iter().zip([
        (
            "y",
            Box::new(|r: &mechgen::runtime::contact::ContactTrajectory<2>, k: usize| r.q[k + 1][1])
                as Box<dyn Fn(&mechgen::runtime::contact::ContactTrajectory<2>, usize) -> f64>,
        ),
        (
            "ÿ",
            Box::new(|r: &mechgen::runtime::contact::ContactTrajectory<2>, k: usize| r.qdd[k][1]),
        ),
    ]) {
        let vals: Vec<f64> = runs
            .iter()
            .flat_map(|r| (0..6).map(|k| get(r, k)))
            .collect();
        let lo = vals.iter().cloned().fold(0.0f64, f64::min);
        let hi = vals.iter().cloned().fold(0.0f64, f64::max);
        let pad = 0.1 * (hi - lo).max(1e-6);
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("{what}, f = {f:?}, m = {m}"), ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(28)
            .y_label_area_size(60)
            .build_cartesian_2d(0usize..6, (lo - pad)..(hi + pad))?;
        chart.configure_mesh().x_desc("step").draw()?;
        for ((r, label), color) in runs.iter().zip(labels).zip(colors) {
            chart
                .draw_series(LineSeries::new(
                    (0..6).map(|k| (k, get(r, k))),
                    color.stroke_width(2),
                ))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    println!("  wrote {name}");
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    corner_table()?;
    let q0 = SVector::from(lossy_billiard::NOMINAL_Q);
    let mut v0 = SVector::from([0.0; lossy_billiard::NQ]);
    v0[20] = -2.0;
    v0[21] = -1.4;
    let opts = ContactOptions::default();
    let p = lossy_billiard::Params::default();
    let t = std::time::Instant::now();
    let tr = simulate_contact::<lossy_billiard::Model, _, _, _, _>(
        &q0, &v0, &p, 0.0, 0.005, 800, &opts,
    )?;
    let wall = t.elapsed();
    let e = |q, v| lossy_billiard::energy(q, v, &p, 0.0);
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
    let te = simulate_contact::<elastic_billiard::Model, _, _, _, _>(
        &q0, &v0, &pe, 0.0, 0.005, 800, &opts,
    )?;
    let ee = |q, v| elastic_billiard::energy(q, v, &pe, 0.0);
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
