//! Dry friction in joints (issue 36): `constraint NAME: lhs == rhs, friction = μ, slip = v
//! (, radius = r)?;`, the normal force being the joint's reaction (its multipliers). The
//! generated slip rows against central differences, and the runtime against exact answers:
//! a block held by a frictional rail on an incline (at rest to 1e-12 when `tan θ ≤ μ`,
//! sliding with `g (sin θ − μ cos θ)` otherwise, pressed on or hanging from the rail), the
//! exact slip onset `t* = μ m g / k` of a ramped force `k t` and the motion after it, a block
//! launched on a level rail, a pendulum with pin friction (a vector normal, `μ r ‖N‖`)
//! against its reduced equation solved independently, and a slider crank with a rough
//! slider against a second formulation (the frictionless model with the friction force
//! written by hand from its multiplier, iterated to a fixed point), to 1e-8 along a
//! trajectory.

use mechgen::nalgebra::{DMatrix, DVector, SVector};
use mechgen::runtime::contact::{
    joint_friction_accelerations, simulate_joint_friction_adaptive, AdaptiveJointFrictionOptions,
    JointFrictionError, JointFrictionEvent, JointFrictionOptions, JointMode,
};
use mechgen::runtime::{Dynamics, JointFriction, Mechanism};
use rand::RngExt;

mechgen::mechanism! {
    /// A block (a particle) held by a straight rail of angle `th` through the origin: the
    /// rail's normal row is `−sin θ x + cos θ y = 0`, the slip along it.
    pub mod rail {
        param th = 0.3;
        param m = 2.0;
        param g = 9.81;
        param k = 0.0;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        generalized_force { x = k * t * cos(th), y = k * t * sin(th) }
        constraint rail: -sin(th) * x + cos(th) * y == 0.0, friction = 0.5,
            slip = cos(th) * x + sin(th) * y;
    }
}

mechgen::mechanism! {
    /// A rigid body on a frictional pin at distance `l` above its centre of mass: the pin's
    /// two force components are the normal, the friction torque `μ r ‖N‖`.
    pub mod pinned {
        param m = 1.5;
        param ic = 0.02;
        param l = 0.4;
        param g = 9.81;
        coord x = 0.0;
        coord y = -0.4;
        coord phi = 0.0;
        body rod { mass = m, inertia = ic, frame = frame(vec2(x, y), phi) }
        gravity = vec2(0.0, -g);
        constraint pin: vec2(x - l * sin(phi), y + l * cos(phi)) == vec2(0.0, 0.0),
            friction = 0.3, slip = der(phi), radius = 0.05;
    }
}

mechgen::mechanism! {
    /// A slider crank: crank `th` (length `a`), rod angle `ph` (length `b`), the slider at
    /// `(s, ys)` on a rough rail `ys = 0`, a torque on the crank.
    pub mod crank_rough {
        param a = 0.1;
        param b = 0.3;
        param tau = 2.0;
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
        constraint rail: ys == 0.0, friction = 0.25, slip = s;
    }
}

mechgen::mechanism! {
    /// The same slider crank without friction: the second formulation adds the friction by hand.
    pub mod crank_smooth {
        param a = 0.1;
        param b = 0.3;
        param tau = 2.0;
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
        constraint ys == 0.0;
    }
}

type V2 = SVector<f64, 2>;
type V3 = SVector<f64, 3>;
type V4 = SVector<f64, 4>;

#[test]
fn the_generated_joint_friction_items_are_the_model() {
    assert_eq!(rail::NS, 1);
    assert_eq!(rail::JOINT_FRICTION_NAMES, ["rail"]);
    assert_eq!(rail::JOINT_FRICTION, [0.5]);
    assert_eq!(rail::FRICTION_RADIUS, [1.0]);
    assert_eq!(rail::FRICTION_ROWS, [(0, 1)]);
    assert_eq!(pinned::FRICTION_ROWS, [(0, 2)]);
    assert_eq!(pinned::FRICTION_RADIUS, [0.05]);
    assert_eq!(pinned::JOINT_FRICTION, [0.3]);
    // The closure's two rows come first, the rail is row 2.
    assert_eq!(crank_rough::FRICTION_ROWS, [(2, 1)]);
    assert_eq!(
        <crank_rough::Model as JointFriction<4, 3, 1, 1>>::JOINT_FRICTION_NAMES,
        ["rail"]
    );
}

/// `J_s q̇ + s₀` is the rate of the slip written as coordinates (`rail`, `crank_rough`)
/// and `v̇_s = J_s q̈ − γ_s` the derivative of that rate along `(q̇, q̈)`, by central
/// differences at random states.
#[test]
fn slip_rows_match_central_differences() {
    let mut rng = mechgen_test_support::rng(11);
    let p = rail::Params::default();
    for _ in 0..20 {
        let q = V2::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let qd = V2::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let qdd = V2::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let slip = |q: &V2| p.th.cos() * q[0] + p.th.sin() * q[1];
        let h = 1e-6;
        let rate = (slip(&(q + qd * h)) - slip(&(q - qd * h))) / (2.0 * h);
        let js = rail::slip_jacobian(&q, &p, 0.0);
        let v = (js * qd)[0] + rail::slip_jacobian_t(&q, &p, 0.0)[0];
        assert!((v - rate).abs() <= 1e-9, "{v} vs {rate}");
        let vel = |q: &V2, qd: &V2| (rail::slip_jacobian(q, &p, 0.0) * qd)[0];
        let acc = (vel(&(q + qd * h + qdd * (h * h / 2.0)), &(qd + qdd * h))
            - vel(&(q - qd * h + qdd * (h * h / 2.0)), &(qd - qdd * h)))
            / (2.0 * h);
        let a = (js * qdd)[0] - rail::slip_gamma(&q, &qd, &p, 0.0)[0];
        assert!((a - acc).abs() <= 1e-7, "{a} vs {acc}");
    }
    // The pin's slip is the velocity `φ̇` itself.
    let pp = pinned::Params::default();
    let q = V3::new(0.1, -0.3, 0.4);
    let js = pinned::slip_jacobian(&q, &pp, 0.0);
    assert_eq!(js, SVector::<f64, 3>::new(0.0, 0.0, 1.0).transpose());
    assert_eq!(pinned::slip_jacobian_t(&q, &pp, 0.0)[0], 0.0);
}

/// The rail's state with the block at `s` along it, moving at `v`.
fn rail_state(th: f64, s: f64, v: f64) -> (V2, V2) {
    let (sn, cs) = th.sin_cos();
    (V2::new(s * cs, s * sn), V2::new(v * cs, v * sn))
}

fn along(th: f64, q: &V2) -> f64 {
    th.cos() * q[0] + th.sin() * q[1]
}

/// `tan θ ≤ μ`: the block stays at rest to 1e-12 m over 10 s, pressed on the rail (g > 0)
/// or hanging from it (g < 0: the reaction pulls, `|N|` is the same); the friction holds
/// the weight's component exactly.
#[test]
fn block_on_a_shallow_rail_stays_at_rest() {
    let mut rng = mechgen_test_support::rng(12);
    let mu = rail::JOINT_FRICTION[0];
    for i in 0..8 {
        let th: f64 =
            rng.random_range(0.01..mu.atan() - 1e-3) * if i % 3 == 0 { -1.0 } else { 1.0 };
        let g: f64 = rng.random_range(1.0..20.0) * if i % 2 == 0 { 1.0 } else { -1.0 };
        let p = rail::Params {
            th,
            g,
            ..Default::default()
        };
        let (q0, qd0) = rail_state(th, rng.random_range(-1.0..1.0), 0.0);
        let opts = JointFrictionOptions::default();
        let s = joint_friction_accelerations::<rail::Model, 2, 1, 1, 1>(&q0, &qd0, &p, 0.0, &opts)
            .expect("solve");
        assert_eq!(s.modes, vec![JointMode::Stick]);
        let exact = p.m * g * th.sin();
        assert!(
            (s.friction[0] - exact).abs() <= 1e-12 * exact.abs(),
            "{} vs {exact}",
            s.friction[0]
        );
        let n = p.m * g.abs() * th.cos();
        assert!((s.normal[0] - n).abs() <= 1e-12 * n);
        let tr = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
            &q0,
            &qd0,
            &p,
            0.0,
            10.0,
            &AdaptiveJointFrictionOptions::default(),
        )
        .expect("simulate");
        let q1 = tr.q.last().expect("end");
        assert!((q1 - q0).norm() <= 1e-12, "moved {:e}", (q1 - q0).norm());
        assert!(tr.events.is_empty());
    }
}

/// `tan θ > μ`: the block slides down with `g (sin θ − μ cos θ)` (1e-10 relative in the
/// solver; `s = a t² / 2` to 1e-10 over 1 s of the error-controlled route), pressed on the
/// rail or hanging from it. With `μ × 0.999` the expected values would be off by more than
/// the tolerances (the tests see μ).
#[test]
fn block_on_a_steep_rail_slides_with_the_exact_acceleration() {
    let mut rng = mechgen_test_support::rng(13);
    let mu = rail::JOINT_FRICTION[0];
    for i in 0..8 {
        let th: f64 = rng.random_range(mu.atan() + 0.05..1.4);
        let g: f64 = rng.random_range(1.0..20.0) * if i % 2 == 0 { 1.0 } else { -1.0 };
        let p = rail::Params {
            th,
            g,
            ..Default::default()
        };
        let s0: f64 = rng.random_range(-1.0..1.0);
        let (q0, qd0) = rail_state(th, s0, 0.0);
        // Down the rail along the weight: sign of g sin θ.
        let dir = (g * th.sin()).signum();
        let acc = -dir * g.abs() * (th.sin().abs() - mu * th.cos());
        let wrong = -dir * g.abs() * (th.sin().abs() - 0.999 * mu * th.cos());
        assert!((wrong - acc).abs() > 1e-6 * acc.abs());
        let s = joint_friction_accelerations::<rail::Model, 2, 1, 1, 1>(
            &q0,
            &qd0,
            &p,
            0.0,
            &JointFrictionOptions::default(),
        )
        .expect("solve");
        assert_eq!(s.modes, vec![JointMode::Slide(-dir)]);
        let a = along(th, &s.qdd);
        assert!((a - acc).abs() <= 1e-10 * acc.abs(), "{a} vs {acc}");
        let tr = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
            &q0,
            &qd0,
            &p,
            0.0,
            1.0,
            &AdaptiveJointFrictionOptions::default(),
        )
        .expect("simulate");
        let d = along(th, tr.q.last().expect("end")) - s0;
        let exact = 0.5 * acc;
        assert!((d - exact).abs() <= 1e-10 * exact.abs(), "{d} vs {exact}");
        assert!(tr.events.is_empty(), "{:?}", tr.events);
    }
}

/// A level rail, a force `k t` along it: the block sticks until `k t* = μ m g`, the
/// slip onset located to 1e-10 relative, then `m ẍ = k t − μ m g`: `x = k (t − t*)³ / (6 m)`
/// to 1e-9 relative at the end.
#[test]
fn ramped_force_starts_the_slip_at_the_exact_time() {
    let mut rng = mechgen_test_support::rng(14);
    let mu = rail::JOINT_FRICTION[0];
    for _ in 0..6 {
        let g: f64 = rng.random_range(1.0..20.0);
        let k: f64 = rng.random_range(1.0..30.0);
        let p = rail::Params {
            th: 0.0,
            g,
            k,
            ..Default::default()
        };
        let t_star = mu * p.m * g / k;
        let t1 = 1.5 * t_star;
        let tr = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
            &V2::zeros(),
            &V2::zeros(),
            &p,
            0.0,
            t1,
            &AdaptiveJointFrictionOptions::default(),
        )
        .expect("simulate");
        let &(te, j, kind) = tr.events.first().expect("a slip event");
        assert_eq!((j, kind), (0, JointFrictionEvent::Slip));
        assert!((te - t_star).abs() <= 1e-10 * t_star, "{te} vs {t_star}");
        let wrong = 0.999 * t_star;
        assert!((te - wrong).abs() > 1e-6 * t_star);
        assert_eq!(tr.phases.len(), 2);
        assert_eq!(tr.phases[0].1, vec![JointMode::Stick]);
        assert_eq!(tr.phases[1].1, vec![JointMode::Slide(1.0)]);
        let x = tr.q.last().expect("end")[0];
        let exact = k * (t1 - t_star).powi(3) / (6.0 * p.m);
        assert!((x - exact).abs() <= 1e-9 * exact, "{x} vs {exact}");
        // At rest until the onset: no creep.
        let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
        assert!(tr.q[i].norm() <= 1e-12, "crept {:e}", tr.q[i].norm());
    }
}

/// A block launched at `v₀` along a level rail stops at `v₀ / (μ g)` after `v₀² / (2 μ g)`
/// (1e-8 relative), then stays (1e-12).
#[test]
fn block_launched_on_a_level_rail_stops_at_the_exact_time_and_distance() {
    let mut rng = mechgen_test_support::rng(15);
    let mu = rail::JOINT_FRICTION[0];
    for _ in 0..6 {
        let g: f64 = rng.random_range(1.0..20.0);
        let v0: f64 = rng.random_range(0.1..5.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let p = rail::Params {
            th: 0.0,
            g,
            ..Default::default()
        };
        let t_stop = v0.abs() / (mu * g);
        let tr = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
            &V2::zeros(),
            &V2::new(v0, 0.0),
            &p,
            0.0,
            2.0 * t_stop,
            &AdaptiveJointFrictionOptions::default(),
        )
        .expect("simulate");
        assert_eq!(tr.events.len(), 1, "{:?}", tr.events);
        let (te, j, kind) = tr.events[0];
        assert_eq!((j, kind), (0, JointFrictionEvent::Stop));
        assert!((te - t_stop).abs() <= 1e-8 * t_stop, "{te} vs {t_stop}");
        let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
        let exact = v0 * v0.abs() / (2.0 * mu * g);
        assert!((tr.q[i][0] - exact).abs() <= 1e-8 * exact.abs());
        let q1 = tr.q.last().expect("end");
        assert!((q1[0] - tr.q[i][0]).abs() <= 1e-12);
        assert_eq!(tr.phases.last().expect("phase").1, vec![JointMode::Stick]);
    }
}

/// The pendulum's reduced equation: `I_O θ̈ = −m g l sin θ − μ r ‖N‖ sign(ω)`, with the pin
/// force `N = m (a_G − g⃗)`, `a_G = l (θ̈ cos θ − ω² sin θ, θ̈ sin θ + ω² cos θ)`: a scalar
/// equation in `θ̈`, increasing (its slope is at least `I_O − μ r m l > 0`), solved by
/// bisection.
fn pendulum_reduced(p: &pinned::Params, mu_r: f64, th: f64, w: f64) -> (f64, f64) {
    pendulum_reduced_sliding(p, mu_r, th, w, w.signum())
}

/// [`pendulum_reduced`] with the friction's sign `σ` given (sliding along `σ` at speed `ω`).
fn pendulum_reduced_sliding(
    p: &pinned::Params,
    mu_r: f64,
    th: f64,
    w: f64,
    sigma: f64,
) -> (f64, f64) {
    let io = p.ic + p.m * p.l * p.l;
    let n = |a: f64| {
        let nx = p.m * p.l * (a * th.cos() - w * w * th.sin());
        let ny = p.m * p.l * (a * th.sin() + w * w * th.cos()) + p.m * p.g;
        (nx * nx + ny * ny).sqrt()
    };
    let f = |a: f64| io * a + p.m * p.g * p.l * th.sin() + mu_r * sigma * n(a);
    let (mut lo, mut hi) = (-1e4, 1e4);
    assert!(f(lo) < 0.0 && f(hi) > 0.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let a = 0.5 * (lo + hi);
    (a, n(a))
}

/// Pin friction with a vector normal: the runtime's fixed point on the reaction's direction
/// against the reduced equation at random sliding states (1e-10 relative), converging in a
/// handful of solves; and at rest the pendulum sticks where `l sin θ ≤ μ r` (then
/// `‖N‖ = m g`) and slides otherwise.
#[test]
fn pin_friction_matches_the_reduced_equation() {
    let mut rng = mechgen_test_support::rng(16);
    let mu_r = pinned::JOINT_FRICTION[0] * pinned::FRICTION_RADIUS[0];
    let opts = JointFrictionOptions::default();
    for _ in 0..20 {
        let p = pinned::Params {
            l: rng.random_range(0.1..0.6),
            ..Default::default()
        };
        let th: f64 = rng.random_range(-2.5..2.5);
        let w: f64 = rng.random_range(0.2..6.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let q = V3::new(p.l * th.sin(), -p.l * th.cos(), th);
        let qd = V3::new(p.l * th.cos() * w, p.l * th.sin() * w, w);
        let s = joint_friction_accelerations::<pinned::Model, 3, 2, 1, 1>(&q, &qd, &p, 0.0, &opts)
            .expect("solve");
        let (a, n) = pendulum_reduced(&p, mu_r, th, w);
        assert_eq!(s.modes, vec![JointMode::Slide(w.signum())]);
        assert!(
            (s.qdd[2] - a).abs() <= 1e-10 * a.abs().max(1.0),
            "{} vs {a}",
            s.qdd[2]
        );
        assert!(
            (s.normal[0] - n).abs() <= 1e-10 * n,
            "{} vs {n}",
            s.normal[0]
        );
        assert!((s.friction[0] + mu_r * n * w.signum()).abs() <= 1e-10 * n);
        assert!(s.solves <= 30, "{} solves", s.solves);
        // Without the friction (μ × 0.999 would do) the answer differs.
        let (a2, _) = pendulum_reduced(&p, 0.999 * mu_r, th, w);
        assert!((a2 - a).abs() > 1e-8 * a.abs().max(1.0));
    }
    // At rest: sticks below the angle, slides above it.
    let p = pinned::Params {
        l: 0.4,
        ..Default::default()
    };
    let limit = (mu_r / p.l).asin();
    for (th, sticks) in [
        (0.9 * limit, true),
        (1.1 * limit, false),
        (-0.5 * limit, true),
    ] {
        let q = V3::new(p.l * th.sin(), -p.l * th.cos(), th);
        let s = joint_friction_accelerations::<pinned::Model, 3, 2, 1, 1>(
            &q,
            &V3::zeros(),
            &p,
            0.0,
            &opts,
        )
        .expect("solve");
        assert_eq!(
            s.modes[0] == JointMode::Stick,
            sticks,
            "θ = {th}: {:?}",
            s.modes
        );
        if sticks {
            assert!((s.normal[0] - p.m * p.g).abs() <= 1e-12 * p.m * p.g);
            assert!((s.friction[0] - p.m * p.g * p.l * th.sin()).abs() <= 1e-12);
            assert!(s.qdd.norm() <= 1e-12);
        }
    }
}

/// The second formulation: the frictionless crank's KKT system with the slider's friction
/// `−μ |λ_rail| sign(ṡ)` on `s` written by hand, `λ_rail` iterated to its fixed point.
fn crank_by_hand(q: &V4, qd: &V4, p: &crank_smooth::Params, mu: f64) -> V4 {
    type M = crank_smooth::Model;
    let m = M::mass_matrix(q, p, 0.0);
    let f = M::forces(q, qd, p, 0.0);
    let cj = M::jacobian(q, p, 0.0);
    let gam = M::gamma(q, qd, p, 0.0);
    let mut k = DMatrix::<f64>::zeros(7, 7);
    for i in 0..4 {
        for j in 0..4 {
            k[(i, j)] = m[(i, j)];
        }
    }
    for i in 0..3 {
        for j in 0..4 {
            k[(4 + i, j)] = cj[(i, j)];
            k[(j, 4 + i)] = -cj[(i, j)];
        }
    }
    let lu = k.lu();
    let mut normal = 0.0f64;
    let mut a = V4::zeros();
    for _ in 0..200 {
        let mut rhs = DVector::<f64>::zeros(7);
        for i in 0..4 {
            rhs[i] = f[i];
        }
        rhs[2] -= mu * normal * qd[2].signum();
        for i in 0..3 {
            rhs[4 + i] = gam[i];
        }
        let x = lu.solve(&rhs).expect("regular");
        a = V4::from_fn(|i, _| x[i]);
        let new = x[6].abs();
        if (new - normal).abs() <= 1e-15 * new.max(1.0) {
            break;
        }
        normal = new;
    }
    a
}

/// A state of the slider crank at crank angle `th` (rod and slider assembled), crank rate `w`.
fn crank_state(p: &crank_smooth::Params, th: f64, w: f64) -> (V4, V4) {
    let ph = -(p.a * th.sin() / p.b).asin();
    let s = p.a * th.cos() + p.b * ph.cos();
    let phd = -p.a * th.cos() * w / (p.b * ph.cos());
    let sd = -p.a * th.sin() * w - p.b * ph.sin() * phd;
    (V4::new(th, ph, s, 0.0), V4::new(w, phd, sd, 0.0))
}

/// The rough slider crank against the second formulation: accelerations at random sliding
/// states (1e-10 relative), and a trajectory between dead centres of the error-controlled
/// route against the second formulation integrated by classical RK4 with a fine step (1e-8).
#[test]
fn rough_slider_crank_matches_the_friction_written_by_hand() {
    let mut rng = mechgen_test_support::rng(17);
    let mu = crank_rough::JOINT_FRICTION[0];
    let opts = JointFrictionOptions::default();
    for _ in 0..20 {
        let ps = crank_smooth::Params {
            tau: rng.random_range(-3.0..3.0),
            ..Default::default()
        };
        let pr = crank_rough::Params {
            tau: ps.tau,
            ..Default::default()
        };
        let th: f64 = rng.random_range(0.2..2.9) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let w: f64 = rng.random_range(0.5..10.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let (q, qd) = crank_state(&ps, th, w);
        let s = joint_friction_accelerations::<crank_rough::Model, 4, 3, 1, 1>(
            &q, &qd, &pr, 0.0, &opts,
        )
        .expect("solve");
        let a = crank_by_hand(&q, &qd, &ps, mu);
        let scale = a.amax().max(1.0);
        assert!((s.qdd - a).amax() <= 1e-10 * scale, "{} vs {}", s.qdd, a);
        let wrong = crank_by_hand(&q, &qd, &ps, 0.999 * mu);
        assert!((wrong - a).amax() > 1e-8 * scale);
    }
    // Along a trajectory: from θ = 0.2 turning forwards for 0.15 s (θ stays in (0, π): the
    // crank passes no dead centre, the slider does not stop).
    let ps = crank_smooth::Params::default();
    let pr = crank_rough::Params::default();
    let (q0, qd0) = crank_state(&ps, 0.2, 3.0);
    let t1 = 0.15;
    let mut ao = AdaptiveJointFrictionOptions::default();
    ao.dopri5.rtol = 1e-12;
    ao.dopri5.atol = 1e-14;
    let tr = simulate_joint_friction_adaptive::<crank_rough::Model, 4, 3, 1, 1>(
        &q0, &qd0, &pr, 0.0, t1, &ao,
    )
    .expect("simulate");
    let n = 5000;
    let h = t1 / n as f64;
    let (mut q, mut qd) = (q0, qd0);
    let f = |q: &V4, qd: &V4| crank_by_hand(q, qd, &ps, mu);
    for _ in 0..n {
        let k1 = (qd, f(&q, &qd));
        let k2 = (
            qd + k1.1 * (h / 2.0),
            f(&(q + k1.0 * (h / 2.0)), &(qd + k1.1 * (h / 2.0))),
        );
        let k3 = (
            qd + k2.1 * (h / 2.0),
            f(&(q + k2.0 * (h / 2.0)), &(qd + k2.1 * (h / 2.0))),
        );
        let k4 = (qd + k3.1 * h, f(&(q + k3.0 * h), &(qd + k3.1 * h)));
        q += (k1.0 + k2.0 * 2.0 + k3.0 * 2.0 + k4.0) * (h / 6.0);
        qd += (k1.1 + k2.1 * 2.0 + k3.1 * 2.0 + k4.1) * (h / 6.0);
    }
    assert!(tr.events.is_empty(), "{:?}", tr.events);
    assert!(q[0] > 0.2 && q[0] < std::f64::consts::PI, "θ = {}", q[0]);
    let q1 = tr.q.last().expect("end");
    let qd1 = tr.qd.last().expect("end");
    assert!((q1 - q).amax() <= 1e-8, "q: {:e}", (q1 - q).amax());
    assert!(
        (qd1 - qd).amax() <= 1e-8 * qd.amax().max(1.0),
        "q̇: {:e}",
        (qd1 - qd).amax()
    );
}

/// Bad options are errors, not panics.
#[test]
fn bad_options_are_errors() {
    let p = rail::Params::default();
    let bad = JointFrictionOptions {
        slip_tol: f64::NAN,
        ..Default::default()
    };
    let e = joint_friction_accelerations::<rail::Model, 2, 1, 1, 1>(
        &V2::zeros(),
        &V2::zeros(),
        &p,
        0.0,
        &bad,
    );
    assert!(matches!(e, Err(JointFrictionError::InvalidOptions(_))));
    let e = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
        &V2::zeros(),
        &V2::zeros(),
        &p,
        1.0,
        0.0,
        &AdaptiveJointFrictionOptions::default(),
    );
    assert!(matches!(e, Err(JointFrictionError::InvalidOptions(_))));
    let e = joint_friction_accelerations::<rail::Model, 2, 1, 1, 1>(
        &V2::new(f64::NAN, 0.0),
        &V2::zeros(),
        &p,
        0.0,
        &JointFrictionOptions::default(),
    );
    assert!(matches!(e, Err(JointFrictionError::NonFinite { .. })));
}

mechgen::mechanism! {
    /// A uniform rod (length `2 l`, `I = m l² / 3`) whose end slides on a rough horizontal
    /// rail (a bilateral joint): Painlevé's problem with the normal of either sign.
    pub mod painleve {
        param m = 1.0;
        param l = 0.5;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.4;
        coord th = 1.0;
        body rod { mass = m, inertia = m * l * l / 3.0, frame = frame(vec2(x, y), th) }
        gravity = vec2(0.0, -g);
        constraint rail: y - l * sin(th) == 0.0, friction = 2.0, slip = x - l * cos(th);
    }
}

/// Painlevé's rod on a rough rail, sliding along `σ`: with `A = 1 + 3 cos² θ`,
/// `B = 3 μ σ cos θ sin θ`, `R = m g − m l sin θ ω²`, the normal solves `N (A + B) = R`
/// (`N > 0`) or `N (A − B) = R` (`N < 0`). Where neither holds the runtime reports
/// [`JointFrictionError::Inconsistent`]; otherwise its `N` is one of the solutions and `θ̈`
/// follows (1e-10).
#[test]
fn painleve_rod_on_a_rail_consistent_and_inconsistent() {
    let mut rng = mechgen_test_support::rng(18);
    let p = painleve::Params::default();
    let mu = painleve::JOINT_FRICTION[0];
    let (mut inconsistent, mut consistent) = (0, 0);
    for _ in 0..60 {
        let th: f64 = rng.random_range(0.05..1.5);
        let w: f64 = rng.random_range(-1.0..1.0);
        let vx: f64 = rng.random_range(0.2..2.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let (sn, cs) = th.sin_cos();
        let q = V3::new(p.l * cs, p.l * sn, th);
        // ẏ = l cos θ ω keeps the end on the rail; the end slides at ẋ + l sin θ ω.
        let qd = V3::new(vx, p.l * cs * w, w);
        let sigma = (vx + p.l * sn * w).signum();
        let a = 1.0 + 3.0 * cs * cs;
        let b = 3.0 * mu * sigma * cs * sn;
        let r = p.m * p.g - p.m * p.l * sn * w * w;
        let mut sols = Vec::new();
        if a + b != 0.0 && r / (a + b) > 0.0 {
            sols.push(r / (a + b));
        }
        if a - b != 0.0 && r / (a - b) < 0.0 {
            sols.push(r / (a - b));
        }
        let s = joint_friction_accelerations::<painleve::Model, 3, 1, 2, 1>(
            &q,
            &qd,
            &p,
            0.0,
            &JointFrictionOptions::default(),
        );
        if sols.is_empty() {
            assert!(
                matches!(s, Err(JointFrictionError::Inconsistent { .. })),
                "θ = {th}: {s:?}"
            );
            inconsistent += 1;
            continue;
        }
        let s = s.expect("consistent");
        consistent += 1;
        let n = s.lambda[0];
        let exact = sols
            .iter()
            .copied()
            .min_by(|x, y| (x - n).abs().total_cmp(&(y - n).abs()))
            .expect("a solution");
        assert!((n - exact).abs() <= 1e-10 * exact.abs(), "{n} vs {sols:?}");
        let thdd = (-p.l * cs * n - p.l * sn * mu * n.abs() * sigma) / (p.m * p.l * p.l / 3.0);
        assert!((s.qdd[2] - thdd).abs() <= 1e-10 * thdd.abs().max(1.0));
        assert_eq!(s.modes, vec![JointMode::Slide(sigma)]);
    }
    assert!(
        inconsistent >= 3 && consistent >= 10,
        "{inconsistent}, {consistent}"
    );
}

mechgen::mechanism! {
    #![generic]
    /// The rail as a `#![generic]` module.
    pub mod rail_generic {
        param th = 0.3;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = 2.0, com = vec2(x, y) }
        gravity = vec2(0.0, -9.81);
        constraint rail: -sin(th) * x + cos(th) * y == 0.0, friction = 0.5,
            slip = cos(th) * x + sin(th) * y;
    }
}

mechgen::mechanism! {
    #![scalar = f32]
    /// The pin in single precision (functions and constants only).
    pub mod pinned_f32 {
        param l = 0.4;
        coord x = 0.0;
        coord y = -0.4;
        coord phi = 0.0;
        body rod { mass = 1.5, inertia = 0.02, frame = frame(vec2(x, y), phi) }
        gravity = vec2(0.0, -9.81);
        constraint pin: vec2(x - l * sin(phi), y + l * cos(phi)) == vec2(0.0, 0.0),
            friction = 0.3, slip = phi, radius = 0.05;
    }
}

/// The `#![generic]` and `#![scalar = f32]` modules carry the same joint-friction items, and
/// the generic one solves as the plain one does.
#[test]
fn generic_and_single_precision_modules_have_the_joint_friction_items() {
    let q = V2::new(0.3, 0.2);
    let pg = rail_generic::Params::default();
    let js = rail_generic::slip_jacobian(&q, &pg, 0.0);
    assert_eq!((js[(0, 0)], js[(0, 1)]), (pg.th.cos(), pg.th.sin()));
    assert_eq!(rail_generic::JOINT_FRICTION, [0.5]);
    let s = joint_friction_accelerations::<rail_generic::Model, 2, 1, 1, 1>(
        &V2::zeros(),
        &V2::zeros(),
        &pg,
        0.0,
        &JointFrictionOptions::default(),
    )
    .expect("solve");
    assert_eq!(s.modes, vec![JointMode::Stick]);
    let pf = pinned_f32::Params::default();
    let js = pinned_f32::slip_jacobian(&SVector::<f32, 3>::zeros(), &pf, 0.0);
    assert_eq!((js[(0, 0)], js[(0, 1)], js[(0, 2)]), (0.0f32, 0.0, 1.0));
    assert_eq!(pinned_f32::JOINT_FRICTION, [0.3f32]);
    assert_eq!(pinned_f32::FRICTION_RADIUS, [0.05f32]);
    assert_eq!(pinned_f32::FRICTION_ROWS, [(0, 2)]);
}

/// The pendulum with pin friction released at rest beyond its sticking angle swings to a stop:
/// the first `Stop` (time and angle) of the error-controlled route against the reduced
/// equation integrated by classical RK4 (step 1e-4 s) with the stop located by a cubic
/// Hermite root, to 1e-8; then the swings continue (or stick) as the enumeration decides, and
/// the fixed point's iteration limit is an error when it is too small.
#[test]
fn pendulum_with_pin_friction_stops_where_the_reduced_equation_does() {
    let mut rng = mechgen_test_support::rng(19);
    let mu_r = pinned::JOINT_FRICTION[0] * pinned::FRICTION_RADIUS[0];
    for _ in 0..3 {
        let p = pinned::Params {
            l: rng.random_range(0.2..0.5),
            ..Default::default()
        };
        let th0: f64 = rng.random_range(0.5..1.5);
        let q0 = V3::new(p.l * th0.sin(), -p.l * th0.cos(), th0);
        let tr = simulate_joint_friction_adaptive::<pinned::Model, 3, 2, 1, 1>(
            &q0,
            &V3::zeros(),
            &p,
            0.0,
            1.0,
            &AdaptiveJointFrictionOptions::default(),
        )
        .expect("simulate");
        let &(te, _, kind) = tr.events.first().expect("a stop");
        assert_eq!(kind, JointFrictionEvent::Stop);
        let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
        let th_e = tr.q[i][2];
        // The reduced equation from rest: ω < 0 until it stops; the friction's sign is held
        // at that of the first swing (the smooth continuation through the stop, so that the
        // last step and its interpolant see no switch).
        let f = |th: f64, w: f64| pendulum_reduced_sliding(&p, mu_r, th, w, -1.0).0;
        let h = 1e-4;
        let (mut t, mut th, mut w) = (0.0, th0, 0.0f64);
        let (t_ref, th_ref) = loop {
            let k1 = (w, f(th, w));
            let k2 = (
                w + 0.5 * h * k1.1,
                f(th + 0.5 * h * k1.0, w + 0.5 * h * k1.1),
            );
            let k3 = (
                w + 0.5 * h * k2.1,
                f(th + 0.5 * h * k2.0, w + 0.5 * h * k2.1),
            );
            let k4 = (w + h * k3.1, f(th + h * k3.0, w + h * k3.1));
            let th1 = th + h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
            let w1 = w + h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
            if t > 0.0 && w1 >= 0.0 {
                // ω's cubic Hermite interpolant on the step (ω' = θ̈), its root by bisection.
                let (a0, a1) = (f(th, w), f(th1, w1));
                let hw = |s: f64| {
                    let (s2, s3) = (s * s, s * s * s);
                    (2.0 * s3 - 3.0 * s2 + 1.0) * w
                        + (s3 - 2.0 * s2 + s) * h * a0
                        + (-2.0 * s3 + 3.0 * s2) * w1
                        + (s3 - s2) * h * a1
                };
                let (mut lo, mut hi) = (0.0, 1.0);
                for _ in 0..60 {
                    let mid = 0.5 * (lo + hi);
                    if hw(mid) < 0.0 {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                let s = 0.5 * (lo + hi);
                // θ by the Hermite interpolant of θ (θ' = ω).
                let (s2, s3) = (s * s, s * s * s);
                let th_s = (2.0 * s3 - 3.0 * s2 + 1.0) * th
                    + (s3 - 2.0 * s2 + s) * h * w
                    + (-2.0 * s3 + 3.0 * s2) * th1
                    + (s3 - s2) * h * w1;
                break (t + s * h, th_s);
            }
            t += h;
            th = th1;
            w = w1;
            assert!(t < 1.0, "the reduced pendulum did not stop");
        };
        assert!((te - t_ref).abs() <= 1e-8, "{te} vs {t_ref}");
        assert!((th_e - th_ref).abs() <= 1e-8, "{th_e} vs {th_ref}");
    }
    // Too few fixed-point iterations for a sliding pin: an error, not a wrong answer.
    let p = pinned::Params::default();
    let th: f64 = 1.0;
    let q = V3::new(p.l * th.sin(), -p.l * th.cos(), th);
    let qd = V3::new(p.l * th.cos() * 2.0, p.l * th.sin() * 2.0, 2.0);
    let few = JointFrictionOptions {
        max_iterations: 1,
        ..Default::default()
    };
    let e = joint_friction_accelerations::<pinned::Model, 3, 2, 1, 1>(&q, &qd, &p, 0.0, &few);
    assert!(
        matches!(e, Err(JointFrictionError::NoConvergence { joint: 0, .. })),
        "{e:?}"
    );
}

/// Started exactly at the slip onset `t* = μ m g / k` (the sticking force at its cone, within
/// rounding), the pushed block does not stay stuck: it slips at once and moves as
/// `k (t − t*)³ / (6 m)` (1e-8 relative at `1.5 t*`).
#[test]
fn started_at_the_cone_the_block_slips_at_once() {
    let mut rng = mechgen_test_support::rng(20);
    let mu = rail::JOINT_FRICTION[0];
    for _ in 0..6 {
        let g: f64 = rng.random_range(1.0..20.0);
        let k: f64 = rng.random_range(1.0..30.0);
        let p = rail::Params {
            th: 0.0,
            g,
            k,
            ..Default::default()
        };
        let t_star = mu * p.m * g / k;
        let t1 = 1.5 * t_star;
        let tr = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
            &V2::zeros(),
            &V2::zeros(),
            &p,
            t_star,
            t1,
            &AdaptiveJointFrictionOptions::default(),
        )
        .expect("simulate");
        let x = tr.q.last().expect("end")[0];
        let exact = k * (t1 - t_star).powi(3) / (6.0 * p.m);
        assert!(
            (x - exact).abs() <= 1e-8 * exact,
            "{x} vs {exact}: {:?}",
            tr.phases
        );
    }
}

/// A block launched slower than twice `slip_tol` (but faster than it: it starts sliding)
/// still stops: its stop is watched from the start (it used to be armed only once the slip
/// exceeded `2 slip_tol`, and the block then slid on backwards, pushed by its friction).
#[test]
fn a_slow_launch_still_stops() {
    let p = rail::Params {
        th: 0.0,
        ..Default::default()
    };
    let opts = AdaptiveJointFrictionOptions::default();
    let v0 = 1.5 * opts.friction.slip_tol;
    let mu = rail::JOINT_FRICTION[0];
    let tr = simulate_joint_friction_adaptive::<rail::Model, 2, 1, 1, 1>(
        &V2::zeros(),
        &V2::new(v0, 0.0),
        &p,
        0.0,
        1.0,
        &opts,
    )
    .expect("simulate");
    assert_eq!(tr.phases[0].1, vec![JointMode::Slide(1.0)]);
    let &(te, _, kind) = tr.events.first().expect("a stop");
    assert_eq!(kind, JointFrictionEvent::Stop);
    let t_stop = v0 / (mu * p.g);
    assert!((te - t_stop).abs() <= 1e-6 * t_stop, "{te} vs {t_stop}");
    let x1 = tr.q.last().expect("end")[0];
    assert!(x1.abs() <= 1e-15, "{x1}");
    assert_eq!(tr.phases.last().expect("phase").1, vec![JointMode::Stick]);
}
