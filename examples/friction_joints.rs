//! Dry friction in joints (issue 36): a slider crank whose slider rubs on a rough rail
//! (`constraint rail: ys == 0.0, friction = μ, slip = s;`, the normal force being the rail's
//! reaction), driven by a constant torque. The slider stops at each dead centre (`Stop`
//! events, at crank angles `k π`) and the crank carries it on; at speed the rail's normal force
//! changes sign within each half turn (`Reverse` events: the friction is `μ |N|`). The
//! crank's speed, the slider's position and the rail's normal and friction forces are drawn
//! to `docs/rough_slider_crank.svg` (or the path given as the first argument). Then a block on a level rail pushed by `k t` slips at
//! exactly `μ m g / k`.
//!
//! Run: `cargo run --release --example friction_joints`.

use mechgen::nalgebra::SVector;
use mechgen::runtime::contact::{
    joint_friction_accelerations, simulate_joint_friction_adaptive, AdaptiveJointFrictionOptions,
    JointFrictionTrajectory,
};
use plotters::prelude::*;

mechgen::mechanism! {
    /// A slider crank: crank `th` (length `a`), rod angle `ph` (length `b`), the slider at
    /// `(s, ys)` on a rough rail `ys = 0`, a torque `tau` on the crank.
    pub mod rough_crank {
        param a = 0.1;
        param b = 0.3;
        param tau = 1.0;
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

    /// A block on a level rail pushed by `k t`.
    pub mod pushed {
        param k = 4.0;
        param m = 2.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        force x = k * t;
        constraint rail: y == 0.0, friction = 0.5, slip = x;
    }
}

type V4 = SVector<f64, 4>;

/// One panel of the plot: its title, its lines (`(t, value)` points), their colours and labels.
type Panel = (
    &'static str,
    Vec<Vec<(f64, f64)>>,
    [RGBColor; 2],
    [&'static str; 2],
);

/// The crank's state at angle `th` turning at `w` (rod and slider assembled).
fn crank_state(p: &rough_crank::Params, th: f64, w: f64) -> (V4, V4) {
    let ph = -(p.a * th.sin() / p.b).asin();
    let s = p.a * th.cos() + p.b * ph.cos();
    let phd = -p.a * th.cos() * w / (p.b * ph.cos());
    let sd = -p.a * th.sin() * w - p.b * ph.sin() * phd;
    (V4::new(th, ph, s, 0.0), V4::new(w, phd, sd, 0.0))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let p = rough_crank::Params::default();
    let (q0, qd0) = crank_state(&p, 0.3, 6.0);
    let t1 = 1.0;
    let opts = AdaptiveJointFrictionOptions {
        output_times: (1..600).map(|k| k as f64 * t1 / 600.0).collect(),
        ..Default::default()
    };
    let tr = simulate_joint_friction_adaptive::<rough_crank::Model, _, _, _, _>(
        &q0, &qd0, &p, 0.0, t1, &opts,
    )?;
    println!(
        "slider crank, torque {} N m, rough slider (mu = {}), {t1} s:",
        p.tau,
        rough_crank::JOINT_FRICTION[0]
    );
    for &(t, _, kind) in &tr.events {
        let i = tr.t.iter().position(|&x| x == t).unwrap_or(0);
        println!(
            "  {kind:?} at t = {t:.9} s, crank angle {:.6} rad",
            tr.q[i][0]
        );
    }
    println!("  phases: {}", tr.phases.len());
    plot(&p, &tr)?;

    let pp = pushed::Params::default();
    let z = SVector::zeros();
    let tr = simulate_joint_friction_adaptive::<pushed::Model, _, _, _, _>(
        &z,
        &z,
        &pp,
        0.0,
        3.0,
        &AdaptiveJointFrictionOptions::default(),
    )?;
    let mu = pushed::JOINT_FRICTION[0];
    if let Some(&(t, _, kind)) = tr.events.first() {
        println!(
            "block pushed by {} t N on a rail with mu = {mu}: {kind:?} at t = {t:.15} s (exact mu m g / k = {:.15} s)",
            pp.k,
            mu * pp.m * pp.g / pp.k
        );
    }
    Ok(())
}

/// The crank's speed, the slider's position and the rail's normal and friction forces.
fn plot(
    p: &rough_crank::Params,
    tr: &JointFrictionTrajectory<4>,
) -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/rough_slider_crank.svg".to_string());
    let root = SVGBackend::new(&name, (720, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((3, 1));
    let forces: Vec<(f64, f64)> =
        tr.t.iter()
            .zip(tr.q.iter().zip(&tr.qd))
            .map(|(&t, (q, qd))| {
                joint_friction_accelerations::<rough_crank::Model, _, _, _, _>(
                    q,
                    qd,
                    p,
                    t,
                    &Default::default(),
                )
                .map(|s| (s.lambda[2], s.friction[0]))
                .unwrap_or((f64::NAN, f64::NAN))
            })
            .collect();
    let series: [Panel; 3] = [
        (
            "crank speed θ̇ (rad/s)",
            vec![tr.t.iter().zip(&tr.qd).map(|(&t, v)| (t, v[0])).collect()],
            [BLUE, BLUE],
            ["θ̇", ""],
        ),
        (
            "slider position s (m)",
            vec![tr.t.iter().zip(&tr.q).map(|(&t, q)| (t, q[2])).collect()],
            [BLACK, BLACK],
            ["s", ""],
        ),
        (
            "rail forces (N)",
            vec![
                tr.t.iter().zip(&forces).map(|(&t, f)| (t, f.0)).collect(),
                tr.t.iter().zip(&forces).map(|(&t, f)| (t, f.1)).collect(),
            ],
            [RED, BLUE],
            ["normal λ", "friction"],
        ),
    ];
    let t1 = tr.t.last().copied().unwrap_or(1.0);
    for (panel, (title, lines, colors, labels)) in panels.iter().zip(series) {
        let vals = lines
            .iter()
            .flatten()
            .map(|&(_, v)| v)
            .filter(|v| v.is_finite());
        let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
        let pad = 0.1 * (hi - lo).max(1e-6);
        let mut chart = ChartBuilder::on(panel)
            .caption(title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(24)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..t1, (lo - pad)..(hi + pad))?;
        chart.configure_mesh().x_desc("t (s)").draw()?;
        for ((line, color), label) in lines.into_iter().zip(colors).zip(labels) {
            let s = chart.draw_series(LineSeries::new(line, color.stroke_width(2)))?;
            if !label.is_empty() {
                s.label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            }
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
