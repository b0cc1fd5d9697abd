//! Partition switching in the projection route (issue 8, item 3): where the independent
//! coordinates stop parametrising the mechanism, `simulate_projection` chooses new ones
//! (complete-pivoting LU of the row-scaled `C_J`) at the last accepted state, converts the
//! independent velocities and carries on.
//!
//! * a pendulum in natural coordinates `(x, y)` from the horizontal at rest: `x` turns back
//!   at every extreme, `y` at every bottom pass; compared with the exact pendulum;
//! * a crank–rocker four-bar whose independent coordinate is the rocker: the rocker turns
//!   back at both toggles of every crank revolution; compared with the Lagrange route;
//! * a five-bar (2 DOF, base joints independent) swinging under gravity through poses with a
//!   vertical distal link and through poses where the distal links align (the base joints
//!   turn back); compared with the Lagrange route.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, Mechanism,
};

mechgen::mechanism! {
    /// A point mass on a massless rod of length l, in Cartesian coordinates.
    pub mod natural_pendulum {
        param g = 9.81;
        param l = 1.0;
        coord x = 0.6;
        coord y = -0.8;
        independent x;
        constraint x * x + y * y == l * l;
        body bob { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
    }
}

mechgen::mechanism! {
    /// Crank–rocker four-bar (Grashof: crank 0.3, coupler 1.0, rocker 0.8, ground 1.0),
    /// the rocker independent.
    pub mod rocker_four_bar {
        param l1 = 0.3;
        param l2 = 1.0;
        param l3 = 0.8;
        param a = 1.0;
        coord th = 1.5707963267948966;
        coord ph = 0.5117203445682225;
        coord ps = 1.7316093277720377;
        independent ps;
        constraint vec2(l1 * cos(th), l1 * sin(th)) + vec2(l2 * cos(ph), l2 * sin(ph))
            == vec2(a + l3 * cos(ps), l3 * sin(ps));
        body crank { mass = 1.0, inertia = 0.3 * 0.3 / 12.0, com = vec2(0.5 * l1 * cos(th), 0.5 * l1 * sin(th)), angle = th }
        body coupler { mass = 2.0, inertia = 2.0 / 12.0, com = vec2(l1 * cos(th) + 0.5 * l2 * cos(ph), l1 * sin(th) + 0.5 * l2 * sin(ph)), angle = ph }
        body rocker { mass = 1.5, inertia = 1.5 * 0.64 / 12.0, com = vec2(a + 0.5 * l3 * cos(ps), 0.5 * l3 * sin(ps)), angle = ps }
    }
}

mechgen::mechanism! {
    /// Planar five-bar: base joints at (0, 0) and (1, 0) (independent), proximal links 0.6,
    /// distal links 0.8, uniform rods under gravity.
    pub mod five_bar {
        param g = 9.81;
        coord t1 = 2.0;
        coord t2 = 1.0;
        coord ph1 = 0.1532890216682115;
        coord ph2 = 2.9366007435447528;
        independent t1, t2;
        constraint vec2(0.6 * cos(t1), 0.6 * sin(t1)) + vec2(0.8 * cos(ph1), 0.8 * sin(ph1))
            == vec2(1.0 + 0.6 * cos(t2), 0.6 * sin(t2)) + vec2(0.8 * cos(ph2), 0.8 * sin(ph2));
        body p1 { mass = 1.0, inertia = 0.36 / 12.0, com = vec2(0.3 * cos(t1), 0.3 * sin(t1)), angle = t1 }
        body p2 { mass = 1.0, inertia = 0.36 / 12.0, com = vec2(1.0 + 0.3 * cos(t2), 0.3 * sin(t2)), angle = t2 }
        body d1 { mass = 1.0, inertia = 0.64 / 12.0, com = vec2(0.6 * cos(t1) + 0.4 * cos(ph1), 0.6 * sin(t1) + 0.4 * sin(ph1)), angle = ph1 }
        body d2 { mass = 1.0, inertia = 0.64 / 12.0, com = vec2(1.0 + 0.6 * cos(t2) + 0.4 * cos(ph2), 0.6 * sin(t2) + 0.4 * sin(ph2)), angle = ph2 }
        gravity = vec2(0.0, -g);
    }
}

fn tight() -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-10,
            atol: 1e-12,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn grid(t1: f64, n: usize) -> Vec<f64> {
    (1..n).map(|k| t1 * k as f64 / n as f64).collect()
}

#[test]
fn natural_pendulum_from_the_horizontal_matches_the_exact_pendulum() {
    type P = natural_pendulum::Model;
    assert_eq!(P::INDEPENDENT, [0]);
    let p = natural_pendulum::Params::default();
    let t1 = 10.0;
    let opts = SimOptions {
        output_times: grid(t1, 200),
        ..tight()
    };
    let q0 = SVector::<f64, 2>::new(p.l, 0.0);
    let traj = runtime::simulate::simulate_projection::<P, 2, 1, 1>(
        &q0,
        &SVector::<f64, 1>::zeros(),
        &p,
        0.0,
        t1,
        &opts,
    )
    .unwrap_or_else(|e| panic!("natural pendulum from the horizontal: {e}"));
    assert_eq!(traj.t.len(), 201);
    // The exact pendulum: θ from the downward vertical, θ̈ = −g/l sin θ, θ(0) = π/2.
    let (g, l) = (p.g, p.l);
    let mut rhs = |_t: f64, y: &SVector<f64, 2>| {
        Ok::<_, std::convert::Infallible>(SVector::<f64, 2>::new(y[1], -g / l * y[0].sin()))
    };
    let reference = runtime::ode::dopri5(
        &mut rhs,
        0.0,
        SVector::<f64, 2>::new(std::f64::consts::FRAC_PI_2, 0.0),
        &traj.t[1..],
        &Dopri5Options {
            rtol: 1e-13,
            atol: 1e-14,
            ..Default::default()
        },
    )
    .expect("reference");
    let mut worst: f64 = 0.0;
    let mut x_turns = 0;
    let mut y_turns = 0;
    for k in 1..traj.t.len() {
        let th = reference.y[k - 1][0];
        let want = SVector::<f64, 2>::new(l * th.sin(), -l * th.cos());
        worst = worst.max((traj.q[k] - want).amax());
        if traj.qd[k][0] * traj.qd[k - 1][0] < 0.0 {
            x_turns += 1;
        }
        if traj.qd[k][1] * traj.qd[k - 1][1] < 0.0 {
            y_turns += 1;
        }
    }
    let e0 = g * 0.0; // E(0) = 0 (at rest, y = 0), bob mass 1
    let de = traj.stats.energy_change.expect("energy");
    eprintln!(
        "natural pendulum: |q − exact| ≤ {worst:.2e}, energy change {de:.2e}, {} switches at {:?}, x turns {x_turns}, y turns {y_turns}, steps {}",
        traj.stats.partition_switches, traj.switch_times, traj.stats.ode.steps
    );
    assert!(x_turns >= 6 && y_turns >= 6, "{x_turns} {y_turns}");
    assert!(worst <= 1e-6, "{worst:e}");
    // Relative to the energy scale m g l (E(0) = 0).
    assert!(de <= 1e-8 * (g * l).max(e0.abs()), "{de:e}");
    assert!(traj.stats.partition_switches > 0);
    assert_eq!(traj.switch_times.len(), traj.stats.partition_switches);
    // The switches go to the atlas's generated chart (y independent), not to numeric
    // factorisations: no right-hand side used a numeric basis.
    assert_eq!(<P as Mechanism<2, 1, 1>>::ATLAS_CHARTS, &[[1]]);
    assert_eq!(
        traj.stats.numeric_fallbacks, 0,
        "numeric bases after the switches"
    );
}

/// Largest `|q_a − q_b|` over matching outputs.
fn max_diff<const NQ: usize>(a: &[SVector<f64, NQ>], b: &[SVector<f64, NQ>]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).amax())
        .fold(0.0, f64::max)
}

#[test]
fn rocker_independent_four_bar_passes_both_toggles() {
    type F = rocker_four_bar::Model;
    assert_eq!(F::INDEPENDENT, [2]);
    let p = rocker_four_bar::Params::default();
    let t1 = 6.0;
    let opts = SimOptions {
        output_times: grid(t1, 120),
        ..tight()
    };
    let q0 = F::nominal_q();
    // Rocker rate 3 rad/s: the crank turns at about 8 rad/s.
    let proj = runtime::simulate::simulate_projection::<F, 3, 2, 1>(
        &q0,
        &SVector::<f64, 1>::new(3.0),
        &p,
        0.0,
        t1,
        &opts,
    )
    .unwrap_or_else(|e| panic!("rocker-independent four-bar: {e}"));
    let lag =
        runtime::simulate::simulate_lagrange::<F, 3, 2, 1>(&q0, &proj.qd[0], &p, 0.0, t1, &opts)
            .expect("Lagrange route");
    let revolutions = (proj.q[proj.q.len() - 1][0] - q0[0]).abs() / std::f64::consts::TAU;
    let diff = max_diff(&proj.q, &lag.q);
    eprintln!(
        "four-bar: {revolutions:.2} crank revolutions, |q_proj − q_lag| ≤ {diff:.2e}, {} switches, energy change {:.2e}",
        proj.stats.partition_switches,
        proj.stats.energy_change.unwrap_or(f64::NAN)
    );
    assert!(revolutions >= 3.0, "{revolutions}");
    assert!(diff <= 1e-6, "{diff:e}");
    // Two toggles per revolution, each needing a switch away from the rocker.
    assert!(
        proj.stats.partition_switches >= 6,
        "{}",
        proj.stats.partition_switches
    );
}

#[test]
fn five_bar_passes_a_vertical_distal_link_and_aligned_distal_links() {
    type B = five_bar::Model;
    assert_eq!(B::INDEPENDENT, [0, 1]);
    let p = five_bar::Params::default();
    // 2 DOF under gravity: nearby motions separate quickly (a difference of 1e-10 grows
    // to 1e-6 within about a second), so this comparison runs at rtol 1e-12 over 1 s.
    let t1 = 1.0;
    let opts = SimOptions {
        output_times: grid(t1, 100),
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-12,
            atol: 1e-14,
            ..Default::default()
        }),
        ..Default::default()
    };
    let q0 = B::nominal_q();
    let u0 = SVector::<f64, 2>::new(4.0, -3.0);
    let proj = runtime::simulate::simulate_projection::<B, 4, 2, 2>(&q0, &u0, &p, 0.0, t1, &opts)
        .unwrap_or_else(|e| panic!("five-bar: {e}"));
    let lag =
        runtime::simulate::simulate_lagrange::<B, 4, 2, 2>(&q0, &proj.qd[0], &p, 0.0, t1, &opts)
            .expect("Lagrange route");
    // The motion passes a vertical distal link (cos φ changes sign) and aligned distal links
    // (sin(φ1 − φ2) changes sign: the base joints turn back).
    let mut vertical = 0;
    let mut aligned = 0;
    for w in proj.q.windows(2) {
        if w[0][2].cos() * w[1][2].cos() < 0.0 || w[0][3].cos() * w[1][3].cos() < 0.0 {
            vertical += 1;
        }
        if (w[0][2] - w[0][3]).sin() * (w[1][2] - w[1][3]).sin() < 0.0 {
            aligned += 1;
        }
    }
    let diff = max_diff(&proj.q, &lag.q);
    eprintln!(
        "five-bar: {vertical} vertical-link passes, {aligned} alignments, |q_proj − q_lag| ≤ {diff:.2e}, {} switches, energy change {:.2e}",
        proj.stats.partition_switches,
        proj.stats.energy_change.unwrap_or(f64::NAN)
    );
    assert!(vertical >= 1 && aligned >= 1, "{vertical} {aligned}");
    assert!(diff <= 1e-5, "{diff:e}");
    assert!(proj.stats.partition_switches > 0);
}

mechgen::mechanism! {
    /// A parallelogram four-bar (unit cranks at x = 0 and 1, unit coupler): at the flat
    /// position C_J drops from rank 2 to rank 1 and no choice of independent coordinates
    /// parametrises the mechanism.
    pub mod parallelogram {
        param g = 9.81;
        coord t1 = 1.0;
        coord t2 = 1.0;
        coord psi = 0.0;
        independent t1;
        constraint vec2(cos(t1), sin(t1)) + vec2(cos(psi), sin(psi)) == vec2(1.0 + cos(t2), sin(t2));
        body crank1 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(0.5 * cos(t1), 0.5 * sin(t1)), angle = t1 }
        body crank2 { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(1.0 + 0.5 * cos(t2), 0.5 * sin(t2)), angle = t2 }
        body coupler { mass = 1.0, inertia = 1.0 / 12.0, com = vec2(cos(t1) + 0.5 * cos(psi), sin(t1) + 0.5 * sin(psi)), angle = psi }
        gravity = vec2(0.0, -g);
    }
}

#[test]
fn rank_loss_is_a_clear_error_not_a_switching_loop() {
    type P = parallelogram::Model;
    let p = parallelogram::Params::default();
    let th0 = std::f64::consts::FRAC_PI_2;
    let q0 = SVector::<f64, 3>::new(th0, th0, 0.0);
    let res = runtime::simulate::simulate_projection::<P, 3, 2, 1>(
        &q0,
        &SVector::<f64, 1>::new(-12.0),
        &p,
        0.0,
        1.0,
        &tight(),
    );
    // θ = π/2 − 12 t (sped up by gravity) reaches the flat position at t ≈ 0.125 s.
    let err = res.expect_err("no chart at the flat position");
    assert!(
        matches!(err, runtime::SimError::NoHealthyPartition { t, health } if t > 0.1 && t < 0.13 && health < 1e-2),
        "{err:?}"
    );
    assert!(
        err.to_string().contains(
            "no choice of independent coordinates parametrises the mechanism at t = 0.12"
        ),
        "{err}"
    );
}

#[test]
fn rank_drop_continue_steps_over_the_flat_positions_on_the_parallelogram_branch() {
    // The same start as above with `RankDrop::Continue`: the projection route keeps the
    // accepted step across each flat position and chooses the next chart past it. On the
    // parallelogram branch the second crank follows the first (t2 = t1) and the coupler
    // stays level (psi = 0); the anti-parallelogram branch through the same flat positions
    // has t2 ≠ t1. Before: `NoHealthyPartition` at t ≈ 0.125 s whatever the option.
    type P = parallelogram::Model;
    let p = parallelogram::Params::default();
    let th0 = std::f64::consts::FRAC_PI_2;
    let q0 = SVector::<f64, 3>::new(th0, th0, 0.0);
    let opts = SimOptions {
        output_times: grid(2.0, 2000),
        rank_drop: runtime::simulate::RankDrop::Continue,
        ..tight()
    };
    let tr = runtime::simulate::simulate_projection::<P, 3, 2, 1>(
        &q0,
        &SVector::<f64, 1>::new(-12.0),
        &p,
        0.0,
        2.0,
        &opts,
    )
    .expect("steps over the flat positions");
    let drops = &tr.rank_drop_times;
    assert!(drops.len() >= 6, "{drops:?}");
    assert!(drops[0] > 0.1 && drops[0] < 0.13, "{drops:?}");
    let wrap = |a: f64| {
        (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
    };
    let mut worst = 0.0f64;
    for q in &tr.q {
        worst = worst.max(wrap(q[1] - q[0]).abs()).max(wrap(q[2]).abs());
    }
    assert!(worst < 1e-7, "off the parallelogram branch by {worst:e}");
    let de = tr.stats.energy_change.expect("bodies: energy");
    // Measured: 8 rank drops, 4.7e-13 off the branch, |E - E0| = 6.3e-7 J.
    assert!(de < 2e-6, "|E - E0| {de:e}");
    // The crank turned through every flat position (θ = 0, −π, …) it met.
    assert!(tr
        .q
        .last()
        .is_some_and(|q| q[0] < th0 - 6.0 * std::f64::consts::PI));
}
