//! Coulomb friction at contacts (issue 36): a box launched along a rough floor slides to
//! rest, a ball (a sphere's planar section, `I = 2/5 m r²`) launched sliding without spin
//! ends rolling, and a box on an incline steeper than its friction angle slides down. Each
//! is simulated on the error-controlled route (`simulate_friction_adaptive`: the stick and
//! slip transitions are located events) and printed beside its exact answer.
//!
//! Run: `cargo run --release --example friction`.

use mechgen::nalgebra::SVector;
use mechgen::runtime::contact::{
    friction_accelerations, simulate_friction_adaptive, AdaptiveFrictionOptions, FrictionError,
};

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

fn main() -> Result<(), FrictionError> {
    let opts = AdaptiveFrictionOptions::default();
    let mu = 0.4;

    // 1. The box on the level floor, launched at v0.
    let p = boxed::Params::default();
    let v0 = 3.0;
    let tr = simulate_friction_adaptive::<boxed::Model, _, _, _, _, _>(
        &SVector::zeros(),
        &SVector::from([v0, 0.0]),
        &p,
        0.0,
        2.0,
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
    println!("  at t = 2 s: x = {:.12} m", end[0]);

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
