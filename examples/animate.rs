//! Draws the motion of a mechanism from its named outputs (issue 11, item 8): a five-bar
//! written with frames and joints, released under gravity, simulated by `runtime::simulate`
//! (the default route) for 3 s; its joint points are named outputs, so the drawing needs no geometry of
//! its own. Writes
//!
//! * `target/five_bar_motion.svg`: an animated SVG (SMIL `<animate>`, plays in a browser),
//!   the links as lines between the output points, 40 frames per second, looping;
//! * `target/five_bar_tool.svg`: the tool point's coordinates against time (plotters).
//!
//! `cargo run --release --example animate`

use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate, Options, State};
use plotters::prelude::*;

include!("mechanisms/joint_mechanisms.rs");

/// The links: pairs of output points (indices of `base_l`, `elbow_l`, … as 2-D points).
const LINKS: [(usize, usize); 4] = [(0, 1), (1, 2), (2, 3), (3, 4)];

/// An animated SVG of line segments between 2-D points (`frames[k][i]` is point `i` at
/// frame `k`), fitted to `size` pixels with the y axis up, playing at `fps`.
fn animated_svg(
    frames: &[Vec<(f64, f64)>],
    links: &[(usize, usize)],
    fps: f64,
    size: f64,
) -> String {
    let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
    for &(x, y) in frames.iter().flatten() {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    }
    let span = (hi.0 - lo.0).max(hi.1 - lo.1).max(1e-9);
    let scale = 0.9 * size / span;
    let px = |(x, y): (f64, f64)| {
        (
            0.05 * size + (x - lo.0) * scale,
            size - 0.05 * size - (y - lo.1) * scale,
        )
    };
    let dur = frames.len() as f64 / fps;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{size}\" height=\"{size}\" viewBox=\"0 0 {size} {size}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    // The pixel coordinate `axis` (0: x, 1: y) of point `i` at every frame, `;`-separated.
    let values = |i: usize, axis: usize| {
        frames
            .iter()
            .map(|fr| {
                let p = px(fr[i]);
                format!("{:.1}", if axis == 0 { p.0 } else { p.1 })
            })
            .collect::<Vec<_>>()
            .join(";")
    };
    for &(i, j) in links {
        let (a, b) = (px(frames[0][i]), px(frames[0][j]));
        svg.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#246\" stroke-width=\"6\" stroke-linecap=\"round\">\n",
            a.0, a.1, b.0, b.1
        ));
        for (attr, point, axis) in [("x1", i, 0), ("y1", i, 1), ("x2", j, 0), ("y2", j, 1)] {
            svg.push_str(&format!(
                "  <animate attributeName=\"{attr}\" dur=\"{dur:.3}s\" repeatCount=\"indefinite\" calcMode=\"discrete\" values=\"{}\"/>\n",
                values(point, axis)
            ));
        }
        svg.push_str("</line>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let p = five_bar::Params {
        damping: 0.002,
        ..five_bar::Params::default()
    };
    // Released at rest from the nominal pose (the simulation assembles it).
    let start = State::at_rest(0.0, SVector::from(five_bar::NOMINAL_Q));
    let fps = 40.0;
    let t_end = 3.0;
    let n = (t_end * fps) as usize;
    let opts = Options {
        output_times: (1..n).map(|k| k as f64 / fps).collect(),
        ..Options::default()
    };
    let traj = simulate(five_bar::Model, &p, &start, t_end, &opts)?;
    // Every frame's points from the named outputs.
    let frames: Vec<Vec<(f64, f64)>> = traj
        .q
        .iter()
        .zip(&traj.t)
        .map(|(q, &t)| {
            let o = five_bar::outputs(q, &p, t);
            (0..five_bar::NO / 2)
                .map(|k| (o[2 * k], o[2 * k + 1]))
                .collect()
        })
        .collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&dir)?;
    let motion = dir.join("five_bar_motion.svg");
    std::fs::write(&motion, animated_svg(&frames, &LINKS, fps, 480.0))?;

    let trace = dir.join("five_bar_tool.svg");
    let root = SVGBackend::new(&trace, (640, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let tool: Vec<(f64, f64, f64)> = traj
        .t
        .iter()
        .zip(&frames)
        .map(|(&t, fr)| (t, fr[2].0, fr[2].1))
        .collect();
    let lo = tool
        .iter()
        .flat_map(|&(_, x, y)| [x, y])
        .fold(f64::MAX, f64::min);
    let hi = tool
        .iter()
        .flat_map(|&(_, x, y)| [x, y])
        .fold(f64::MIN, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "five-bar released under gravity: the tool point",
            ("sans-serif", 16),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..t_end, (lo - 0.05)..(hi + 0.05))?;
    chart.configure_mesh().x_desc("t (s)").y_desc("m").draw()?;
    chart
        .draw_series(LineSeries::new(tool.iter().map(|&(t, x, _)| (t, x)), &BLUE))?
        .label("tool x")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLUE));
    chart
        .draw_series(LineSeries::new(tool.iter().map(|&(t, _, y)| (t, y)), &RED))?
        .label("tool y")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], RED));
    chart.configure_series_labels().border_style(BLACK).draw()?;
    root.present()?;

    let e0 = five_bar::energy(&traj.q[0], &traj.qd[0], &p, 0.0);
    let last = traj.q.len() - 1;
    let e1 = five_bar::energy(&traj.q[last], &traj.qd[last], &p, t_end);
    println!(
        "{} frames over {t_end} s ({} RHS evaluations); energy {e0:.5} J → {e1:.5} J (damped)",
        frames.len(),
        traj.stats.ode.rhs_calls
    );
    println!("wrote {}\nwrote {}", motion.display(), trace.display());
    Ok(())
}
