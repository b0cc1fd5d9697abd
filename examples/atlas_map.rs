//! Draws which chart of the pivot atlas the default `null_space` uses over the workspace
//! of a five-bar with actuated base joints, as an SVG (`docs/atlas_five_bar.svg`, or the
//! path given as the first argument): the crank angle `a1` across, the left distal link's
//! angle `ph1` up, one assembly branch of the right side. Grey: not assemblable.

use std::fmt::Write as _;

use mechgen::nalgebra::SVector;

include!("mechanisms/five_bar.rs");

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/atlas_five_bar.svg".to_string());
    let p = five_bar::Params::default();
    let n = 160;
    let cell = 3.0;
    let colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];
    let mut svg = String::new();
    let size = n as f64 * cell;
    let _ = write!(
        svg,
        "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='12'>",
        w = size + 180.0,
        h = size + 40.0
    );
    let mut counts = vec![0usize; five_bar::NCHARTS];
    for i in 0..n {
        for k in 0..n {
            let a1 =
                -std::f64::consts::PI + 2.0 * std::f64::consts::PI * (i as f64 + 0.5) / n as f64;
            let ph1 =
                -std::f64::consts::PI + 2.0 * std::f64::consts::PI * (k as f64 + 0.5) / n as f64;
            let tip = (
                p.l1 * a1.cos() + p.l2 * ph1.cos(),
                p.l1 * a1.sin() + p.l2 * ph1.sin(),
            );
            let (dx, dy) = (tip.0 - p.g, tip.1);
            let dist = dx.hypot(dy);
            let c = (p.l4 * p.l4 + dist * dist - p.l3 * p.l3) / (2.0 * p.l4 * dist);
            let color = if (-1.0..=1.0).contains(&c) {
                let a2 = dy.atan2(dx) + c.acos();
                let ph2 = (dy - p.l4 * a2.sin()).atan2(dx - p.l4 * a2.cos());
                let q = SVector::from([a1, a2, ph1, ph2]);
                let (_, _, chart) = five_bar::null_space_atlas(&q, &p, 0.0);
                counts[chart] += 1;
                colors[chart % colors.len()]
            } else {
                "#dddddd"
            };
            let _ = write!(
                svg,
                "<rect x='{:.1}' y='{:.1}' width='{cell}' height='{cell}' fill='{color}'/>",
                20.0 + i as f64 * cell,
                20.0 + (n - 1 - k) as f64 * cell
            );
        }
    }
    for (c, count) in counts.iter().enumerate() {
        let y = 40.0 + 22.0 * c as f64;
        let _ = write!(
            svg,
            "<rect x='{x}' y='{y}' width='14' height='14' fill='{}'/><text x='{tx}' y='{ty}'>chart {c} {:?}: {count}</text>",
            colors[c % colors.len()],
            five_bar::CHARTS[c],
            x = size + 30.0,
            tx = size + 50.0,
            ty = y + 12.0
        );
    }
    let _ = write!(
        svg,
        "<text x='20' y='{}'>a1 from -π to π across; ph1 from -π to π up</text></svg>",
        size + 36.0
    );
    std::fs::write(&path, svg)?;
    println!(
        "wrote {path}: charts used {counts:?} (CHARTS = {:?})",
        five_bar::CHARTS
    );
    Ok(())
}
