//! Velocity (nonholonomic) constraints (issue 11, item 7): `velocity_constraint` rows
//! stacked below the position constraints, `D` the null space of `[C_J; A]`, the runtime's
//! projection method and Lagrange route unchanged. Two classical systems against their
//! exact or independently integrated motion:
//!
//! * a vertical disk rolling without slipping: heading and spin rates stay constant, the
//!   centre runs on a circle of radius `r φ̇ / θ̇`, the contact point is at rest, energy is
//!   conserved;
//! * the Chaplygin sleigh (a body on a knife edge at distance `a` ahead of its centre of
//!   mass): its body-frame velocities `(u, ω)` follow `u̇ = −a ω²`,
//!   `ω̇ = m a u ω / (I + m a²)`, integrated here by a separate fine RK4, with the lateral
//!   velocity of the blade zero and energy conserved; and the same sleigh with the blade's
//!   position as two more coordinates under position constraints (position and velocity
//!   constraints together: the position projection solves `[C_J; A] Δq = [−C; 0]`).

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, ode::Dopri5Options, simulate::Integrator, simulate::SimOptions, Mechanism,
};

mechgen::mechanism! {
    /// A disk of radius `r` kept vertical, rolling without slipping on the plane z = 0:
    /// contact point under the centre `(x, y)`, heading `th`, spin `ph` about the axle.
    pub mod rolling_disk {
        param r = 0.3;
        param m = 2.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        coord th = 0.0;
        coord ph = 0.0;
        independent th, ph;
        velocity_constraint vec2(der(x), der(y)) == r * der(ph) * vec2(cos(th), sin(th));
        body disk { mass = m, inertia = vec3(m * r * r / 4.0, m * r * r / 2.0, m * r * r / 4.0), frame = translate(vec3(x, y, r)) * rot_z(th) * rot_y(ph) }
        gravity = vec3(0.0, 0.0, -g);
    }

    /// The Chaplygin sleigh: a planar body on a knife edge at distance `a` ahead of its
    /// centre of mass along its axis; the edge cannot slide sideways.
    pub mod sleigh {
        param m = 1.5;
        param inertia = 0.2;
        param a = 0.4;
        coord x = 0.0;
        coord y = 0.0;
        coord th = 0.0;
        let blade = frame(vec2(x, y), th) * translate(vec2(a, 0.0));
        velocity_constraint -sin(th) * der(x) + cos(th) * der(y) + a * der(th) == 0.0;
        body sled { mass = m, inertia = inertia, frame = frame(vec2(x, y), th) }
        output edge = blade.origin;
    }

    /// The same sleigh with the blade's position as two more coordinates, tied to the body
    /// by position constraints: the knife edge is a velocity constraint on them.
    pub mod sleigh_mixed {
        param m = 1.5;
        param inertia = 0.2;
        param a = 0.4;
        coord x = 0.0;
        coord y = 0.0;
        coord th = 0.0;
        coord bx = 0.4;
        coord by = 0.0;
        independent x, th;
        constraint vec2(bx, by) == (frame(vec2(x, y), th) * translate(vec2(a, 0.0))).origin;
        velocity_constraint -sin(th) * der(bx) + cos(th) * der(by) == 0.0;
        body sled { mass = m, inertia = inertia, frame = frame(vec2(x, y), th) }
    }
}

fn tight() -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol: 1e-11,
            atol: 1e-13,
            ..Dopri5Options::default()
        }),
        output_times: (1..40).map(|k| k as f64 * 0.05).collect(),
        ..SimOptions::default()
    }
}

#[test]
fn the_rolling_disk_turns_on_a_circle_at_constant_rates() {
    type M = rolling_disk::Model;
    assert_eq!(
        (rolling_disk::NQ, rolling_disk::NC, rolling_disk::DOF),
        (4, 2, 2)
    );
    // The velocity rows have no position residual.
    let p = rolling_disk::Params::default();
    let q0 = <M as Mechanism<4, 2, 2>>::nominal_q();
    assert_eq!(
        rolling_disk::residual(&q0, &p, 0.0),
        SVector::<f64, 2>::zeros()
    );
    let (rate, spin) = (0.8, 3.0);
    let u0 = SVector::<f64, 2>::new(rate, spin);
    for lagrange in [false, true] {
        let traj = if lagrange {
            let (d, _) = rolling_disk::null_space_fixed(&q0, &p, 0.0);
            runtime::simulate::simulate_lagrange::<M, 4, 2, 2>(
                &q0,
                &(d * u0),
                &p,
                0.0,
                2.0,
                &tight(),
            )
        } else {
            runtime::simulate::simulate_projection::<M, 4, 2, 2>(&q0, &u0, &p, 0.0, 2.0, &tight())
        }
        .expect("simulates");
        let e0 = rolling_disk::energy(&traj.q[0], &traj.qd[0], &p, 0.0);
        let radius = p.r * spin / rate;
        for (k, (q, qd)) in traj.q.iter().zip(&traj.qd).enumerate() {
            let t = traj.t[k];
            let exact = [
                radius * (rate * t).sin(),
                radius * (1.0 - (rate * t).cos()),
                rate * t,
                spin * t,
            ];
            for i in 0..4 {
                assert!(
                    (q[i] - exact[i]).abs() < 1e-8,
                    "lagrange {lagrange}, t = {t}: q[{i}] = {} vs {}",
                    q[i],
                    exact[i]
                );
            }
            // The contact point is at rest: ẋ = r φ̇ cos θ, ẏ = r φ̇ sin θ.
            let slip = (qd[0] - p.r * qd[3] * q[2].cos()).hypot(qd[1] - p.r * qd[3] * q[2].sin());
            assert!(slip < 1e-9, "slip {slip:e} at t = {t}");
            let e = rolling_disk::energy(q, qd, &p, t);
            assert!(
                (e - e0).abs() < 1e-9 * e0.abs(),
                "energy {e0} → {e} at t = {t}"
            );
        }
    }
}

/// The sleigh's body-frame forward speed and turning rate by RK4 on the reduced equations.
fn sleigh_reduced(p: &sleigh::Params, u: f64, w: f64, t: f64) -> (f64, f64) {
    let k = p.m * p.a / (p.inertia + p.m * p.a * p.a);
    let f = |s: [f64; 2]| [-p.a * s[1] * s[1], k * s[0] * s[1]];
    let n = (t / 1e-4).round().max(1.0) as usize;
    let h = t / n as f64;
    let mut s = [u, w];
    for _ in 0..n {
        let k1 = f(s);
        let k2 = f([s[0] + 0.5 * h * k1[0], s[1] + 0.5 * h * k1[1]]);
        let k3 = f([s[0] + 0.5 * h * k2[0], s[1] + 0.5 * h * k2[1]]);
        let k4 = f([s[0] + h * k3[0], s[1] + h * k3[1]]);
        for i in 0..2 {
            s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    (s[0], s[1])
}

#[test]
fn the_chaplygin_sleigh_follows_its_reduced_equations() {
    type M = sleigh::Model;
    assert_eq!((sleigh::NQ, sleigh::NC, sleigh::DOF), (3, 1, 2));
    let p = sleigh::Params::default();
    let q0 = SVector::<f64, 3>::new(0.1, -0.2, 0.3);
    // Forward speed u0 along the axis and turning rate w0: the centre's lateral velocity is
    // −a ω (the blade does not slide).
    let (u0, w0) = (1.0, 2.0);
    let (c, s) = (q0[2].cos(), q0[2].sin());
    let v_lat = -p.a * w0;
    let qd0 = SVector::<f64, 3>::new(u0 * c - v_lat * s, u0 * s + v_lat * c, w0);
    let (d, h) = sleigh::null_space_fixed(&q0, &p, 0.0);
    assert!(h > 1e-3);
    let jac = sleigh::jacobian(&q0, &p, 0.0);
    assert!(
        (jac * qd0).norm() < 1e-14,
        "the initial velocity is admissible"
    );
    assert!((jac * d).norm() < 1e-14);
    let ind = sleigh::INDEPENDENT;
    let u = SVector::<f64, 2>::new(qd0[ind[0]], qd0[ind[1]]);
    assert!((d * u - qd0).norm() < 1e-14);
    for lagrange in [false, true] {
        let traj = if lagrange {
            runtime::simulate::simulate_lagrange::<M, 3, 1, 2>(&q0, &qd0, &p, 0.0, 2.0, &tight())
        } else {
            runtime::simulate::simulate_projection::<M, 3, 1, 2>(&q0, &u, &p, 0.0, 2.0, &tight())
        }
        .expect("simulates");
        let e0 = sleigh::energy(&traj.q[0], &traj.qd[0], &p, 0.0);
        for (k, (q, qd)) in traj.q.iter().zip(&traj.qd).enumerate() {
            let t = traj.t[k];
            let (c, s) = (q[2].cos(), q[2].sin());
            let (u, w) = (c * qd[0] + s * qd[1], qd[2]);
            let (ue, we) = sleigh_reduced(&p, u0, w0, t);
            assert!(
                (u - ue).abs() < 1e-8 && (w - we).abs() < 1e-8,
                "lagrange {lagrange}, t = {t}: (u, ω) = ({u}, {w}) vs ({ue}, {we})"
            );
            // The blade's lateral velocity is zero.
            let lateral = -s * qd[0] + c * qd[1] + p.a * qd[2];
            assert!(lateral.abs() < 1e-9, "lateral {lateral:e} at t = {t}");
            let e = sleigh::energy(q, qd, &p, t);
            assert!(
                (e - e0).abs() < 1e-9 * e0.abs(),
                "energy {e0} → {e} at t = {t}"
            );
        }
    }
}

#[test]
fn position_and_velocity_constraints_together_give_the_same_sleigh() {
    let p = sleigh::Params::default();
    let pm = sleigh_mixed::Params::default();
    assert_eq!(
        (sleigh_mixed::NQ, sleigh_mixed::NC, sleigh_mixed::DOF),
        (5, 3, 2)
    );
    let q0 = SVector::<f64, 3>::new(0.1, -0.2, 0.3);
    let (u0, w0) = (1.0, 2.0);
    let (c, s) = (q0[2].cos(), q0[2].sin());
    let v_lat = -p.a * w0;
    let qd0 = SVector::<f64, 3>::new(u0 * c - v_lat * s, u0 * s + v_lat * c, w0);
    let a = runtime::simulate::simulate_lagrange::<sleigh::Model, 3, 1, 2>(
        &q0,
        &qd0,
        &p,
        0.0,
        2.0,
        &tight(),
    )
    .expect("sleigh");
    let qm0 = SVector::<f64, 5>::new(q0[0], q0[1], q0[2], q0[0] + p.a * c, q0[1] + p.a * s);
    assert!(sleigh_mixed::residual(&qm0, &pm, 0.0).norm() < 1e-15);
    let um = SVector::<f64, 2>::new(qd0[0], qd0[2]);
    let b = runtime::simulate::simulate_projection::<sleigh_mixed::Model, 5, 3, 2>(
        &qm0,
        &um,
        &pm,
        0.0,
        2.0,
        &tight(),
    )
    .expect("mixed sleigh");
    for (k, (qa, qb)) in a.q.iter().zip(&b.q).enumerate() {
        let err = (qa - qb.fixed_rows::<3>(0)).norm();
        assert!(err < 1e-8, "t = {}: {err:e}", a.t[k]);
        assert!(sleigh_mixed::residual(qb, &pm, a.t[k]).norm() < 1e-10);
    }
}
