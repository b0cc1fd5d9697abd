//! Coulomb friction at contacts (issue 36): a box launched along a rough floor slides to
//! rest, a ball (a sphere's planar section, `I = 2/5 m r²`) launched sliding without spin
//! ends rolling, and a box on an incline steeper than its friction angle slides down. Each
//! is simulated on the error-controlled route (`simulate_friction_adaptive`: the stick and
//! slip transitions are located events) and printed beside its exact answer. The box and
//! the ball, launched side by side at the same speed, are drawn over their exact motions to
//! `docs/friction_box_ball.svg` (or the path given as the first argument).
//!
//! Run: `cargo run --release --example friction`.

use mechgen::nalgebra::SVector;
use mechgen::runtime::contact::{
    friction_accelerations, simulate_friction_adaptive, AdaptiveFrictionOptions, FrictionTrajectory,
};
use plotters::prelude::*;

mechgen::mechanism! {
    /// A box (a particle) of mass `m` on an incline of angle `th` through the origin.
    pub mod boxed {
        param th = 0.0;
        param m = 2.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        inequality slope: -sin(th) * x + cos(th) * y >= 0.0, friction = 0.4,
            tangent = cos(th) * x + sin(th) * y;
    }

    /// A ball of radius `r` rolling or sliding on the floor `y = 0`.
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let opts = AdaptiveFrictionOptions {
        output_times: (1..400).map(|k| k as f64 * 1.0 / 400.0).collect(),
        ..Default::default()
    };
    let mu = 0.4;

    // 1. The box on the level floor, launched at v0.
    let p = boxed::Params::default();
    let v0 = 3.0;
    let tr = simulate_friction_adaptive::<boxed::Model, _, _, _, _, _>(
        &SVector::zeros(),
        &SVector::from([v0, 0.0]),
        &p,
        0.0,
        1.0,
        &opts,
    )?;
    println!("box launched at {v0} m/s on a floor with mu = {mu}:");
    for &(t, _, kind) in &tr.events {
        let i = tr.t.iter().position(|&x| x == t).unwrap_or(0);
        println!("  {kind:?} at t = {t:.12} s, x = {:.12} m", tr.q[i][0]);
    }
    println!(
        "  exact: stops at t = v0/(mu g) = {:.12} s, x = v0²/(2 mu g) = {:.12} m",
        v0 / (mu * p.g),
        v0 * v0 / (2.0 * mu * p.g)
    );
    let end = tr.q.last().copied().unwrap_or_default();
    println!("  at t = 1 s: x = {:.12} m", end[0]);
    let box_run = tr;
    let box_g = p.g;

    // 2. The ball launched sliding without spin.
    let p = ball::Params::default();
    let mu = 0.2;
    let tr = simulate_friction_adaptive::<ball::Model, _, _, _, _, _>(
        &SVector::from([0.0, p.r, 0.0]),
        &SVector::from([v0, 0.0, 0.0]),
        &p,
        0.0,
        1.0,
        &opts,
    )?;
    println!("ball launched sliding at {v0} m/s without spin, mu = {mu}:");
    for &(t, _, kind) in &tr.events {
        let i = tr.t.iter().position(|&x| x == t).unwrap_or(0);
        println!(
            "  {kind:?} at t = {t:.12} s, speed {:.12} m/s, slip {:.3e} m/s",
            tr.qd[i][0],
            tr.qd[i][0] + p.r * tr.qd[i][2]
        );
    }
    println!(
        "  exact: rolls from t = 2 v0/(7 mu g) = {:.12} s at 5 v0/7 = {:.12} m/s",
        2.0 * v0 / (7.0 * mu * p.g),
        5.0 * v0 / 7.0
    );
    let (q1, qd1) = (
        tr.q.last().copied().unwrap_or_default(),
        tr.qd.last().copied().unwrap_or_default(),
    );
    println!(
        "  at t = 1 s: x = {:.9} m, speed {:.12} m/s, slip {:.3e} m/s",
        q1[0],
        qd1[0],
        qd1[0] + p.r * qd1[2]
    );
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "docs/friction_box_ball.svg".to_string());
    plot(&path, &box_run, (0.4, box_g), &tr, (mu, p.g, p.r), v0)?;
    println!("  wrote {path}");

    // 3. Boxes on inclines either side of the friction angle atan(0.4) = 21.8°.
    let mu = 0.4;
    for deg in [15.0f64, 30.0] {
        let th = deg.to_radians();
        let p = boxed::Params {
            th,
            ..Default::default()
        };
        let s = friction_accelerations::<boxed::Model, _, _, _, _, _>(
            &SVector::zeros(),
            &SVector::zeros(),
            &p,
            0.0,
            &opts.friction,
        )?;
        let a = th.cos() * s.qdd[0] + th.sin() * s.qdd[1];
        let exact = if th.tan() <= mu {
            0.0
        } else {
            -p.g * (th.sin() - mu * th.cos())
        };
        println!(
            "box on a {deg}° incline: {:?}, acceleration along the slope {a:.15} m/s² (exact {exact:.15}), normal force {:.12} N, friction {:.12} N",
            s.modes[0], s.normal[0], s.tangential[0]
        );
    }
    Ok(())
}

/// The box's and the ball's speeds and the ball's rolling speed `−r φ̇` over their exact
/// motions (dashed): the box `v0 − μ g t` to rest at `v0/(μ g)`; the ball's centre
/// `v0 − μ g t` and rim `(5/2) μ g t` meeting at `2 v0/(7 μ g)`, then rolling at `5 v0/7`.
fn plot(
    path: &str,
    boxed: &FrictionTrajectory<2>,
    (mu_box, g_box): (f64, f64),
    ball: &FrictionTrajectory<3>,
    (mu, g, r): (f64, f64, f64),
    v0: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (720, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let t1 = ball.t.last().copied().unwrap_or(1.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "box (μ = 0.4) and ball (μ = 0.2) launched at 3 m/s: simulated (solid), exact (dashed)",
            ("sans-serif", 15),
        )
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..t1, -0.1..(v0 * 1.05))?;
    chart
        .configure_mesh()
        .x_desc("t (s)")
        .y_desc("speed (m/s)")
        .draw()?;
    let t_stop = v0 / (mu_box * g_box);
    let t_roll = 2.0 * v0 / (7.0 * mu * g);
    let grid: Vec<f64> = (0..=200).map(|k| k as f64 * t1 / 200.0).collect();
    let exact =
        |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> { grid.iter().map(|&t| (t, f(t))).collect() };
    for (pts, color) in [
        (exact(&|t| (v0 - mu_box * g_box * t).max(0.0)), BLACK),
        (exact(&|t| v0 - mu * g * t.min(t_roll)), BLUE),
        (exact(&|t| 2.5 * mu * g * t.min(t_roll)), RED),
    ] {
        chart.draw_series(DashedLineSeries::new(pts, 6, 4, color.stroke_width(1)))?;
    }
    type Line = (Vec<(f64, f64)>, RGBColor, String);
    let lines: [Line; 3] = [
        (
            boxed
                .t
                .iter()
                .zip(&boxed.qd)
                .map(|(&t, v)| (t, v[0]))
                .collect(),
            BLACK,
            format!("box ẋ: stops at {t_stop:.4} s"),
        ),
        (
            ball.t
                .iter()
                .zip(&ball.qd)
                .map(|(&t, v)| (t, v[0]))
                .collect(),
            BLUE,
            format!("ball ẋ: rolls from {t_roll:.4} s at 5 v0/7"),
        ),
        (
            ball.t
                .iter()
                .zip(&ball.qd)
                .map(|(&t, v)| (t, -r * v[2]))
                .collect(),
            RED,
            "ball rim speed −r φ̇".to_string(),
        ),
    ];
    for (pts, color, label) in lines {
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    // The located events (stop, stick) as dots.
    let events = boxed
        .events
        .iter()
        .map(|e| (e.0, 0.0))
        .chain(ball.events.iter().map(|e| (e.0, 5.0 * v0 / 7.0)));
    chart.draw_series(events.map(|(t, v)| Circle::new((t, v), 4, BLACK.filled())))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::MiddleRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
