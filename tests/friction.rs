//! Coulomb friction at contacts (issue 36): `inequality NAME: g >= 0, friction = μ, tangent =
//! v;`. The generated slip rows against central differences, and the runtime against the
//! exact answers of textbook problems: a block on an incline (at rest when `tan θ ≤ μ`,
//! sliding with `g (sin θ − μ cos θ)` otherwise), a block launched on a level floor
//! (stops at `v₀ / (μ g)` after `v₀² / (2 μ g)`), a disc and a ball (a sphere's planar
//! section) launched sliding without spin (rolling from `v₀ / (μ g (1 + 1/k))` with speed
//! `v₀ / (1 + k)`, `I = k m r²`), and the Painlevé rod's inconsistent case.

use mechgen::nalgebra::SVector;
use mechgen::runtime::contact::{
    friction_accelerations, friction_impact, simulate_friction_adaptive, AdaptiveFrictionOptions,
    ContactMode, Friction, FrictionError, FrictionEvent, FrictionOptions,
};
use mechgen::runtime::Inequalities;
use rand::RngExt;

mechgen::mechanism! {
    /// A block (a particle) of mass `m` on a rigid incline of angle `th` through the
    /// origin, with world coordinates: gap along the incline's normal, slip along it.
    pub mod incline {
        param th = 0.3;
        param m = 2.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        inequality slope: -sin(th) * x + cos(th) * y >= 0.0, friction = 0.5,
            tangent = cos(th) * x + sin(th) * y;
    }
}

mechgen::mechanism! {
    /// A round body of radius `r` and inertia `k m r²` about its centre on the floor
    /// `y = 0`; its contact point slips at `ẋ + r φ̇` (the tangent as a velocity).
    pub mod roller {
        param r = 0.2;
        param m = 1.5;
        param k = 0.5;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.2;
        coord phi = 0.0;
        body wheel { mass = m, inertia = k * m * r * r, frame = frame(vec2(x, y), phi) }
        gravity = vec2(0.0, -g);
        inequality floor: y - r >= 0.0, friction = 0.3, tangent = der(x) + r * der(phi);
    }
}

mechgen::mechanism! {
    /// A pendulum whose tip touches a floor that moves up and down (`A sin(w t)`) and a belt
    /// running at `vb`: the slip rows depend on the coordinates and on time. `tip` gives
    /// the slip as a coordinate expression, `tip2` (the same contact) as a velocity.
    pub mod belt {
        param l = 0.8;
        param a = 0.05;
        param w = 3.0;
        param vb = 0.4;
        param g = 9.81;
        coord th = 0.3;
        body bob { mass = 1.0, com = vec2(l * sin(th), -l * cos(th)) }
        gravity = vec2(0.0, -g);
        inequality tip: -l * cos(th) + l - a * sin(w * t) >= 0.0, friction = 0.4,
            tangent = l * sin(th) - vb * t;
        inequality tip2: -l * cos(th) + l - a * sin(w * t) >= 0.0, friction = 0.4,
            tangent = l * cos(th) * der(th) - vb;
    }
}

mechgen::mechanism! {
    /// A spatial contact: a particle on the plane `z = sx x + sy y`, its slip given by two
    /// components (not an orthonormal pair: for the derivative check only).
    pub mod spatial {
        param sx = 0.2;
        param sy = -0.1;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        coord z = 0.0;
        body p { mass = 1.0, com = vec3(x, y, z) }
        gravity = vec3(0.0, 0.0, -g);
        inequality plane: z - sx * x - sy * y >= 0.0, friction = 0.6,
            tangent = vec2(x + sx * z, y + sy * z);
    }
}

mechgen::mechanism! {
    /// A block at rest on a level floor, pushed by a force growing as `c t`.
    pub mod pushed {
        param m = 2.0;
        param c = 3.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        force x = c * t;
        inequality floor: y >= 0.0, friction = 0.5, tangent = x;
    }
}

mechgen::mechanism! {
    /// Painlevé's rod: a uniform rod of half-length `l`, centre `(x, y)`, angle `th` above
    /// the floor, its lower end `(x − l cos th, y − l sin th)` on the rough floor.
    pub mod rod {
        param l = 0.5;
        param m = 1.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        coord th = 0.5;
        body bar { mass = m, inertia = m * l * l / 3.0, frame = frame(vec2(x, y), th) }
        gravity = vec2(0.0, -g);
        inequality end: y - l * sin(th) >= 0.0, friction = 3.0, tangent = x - l * cos(th);
    }
}

mechgen::mechanism! {
    /// A particle on the level plane `z = 0` (a spatial contact), pushed by `(fx, fy)`.
    pub mod level {
        param m = 1.0;
        param fx = 0.0;
        param fy = 0.0;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        coord z = 0.0;
        body p { mass = m, com = vec3(x, y, z) }
        gravity = vec3(0.0, 0.0, -g);
        force x = fx;
        force y = fy;
        inequality floor: z >= 0.0, friction = 0.6, tangent = vec2(x, y);
    }
}

mechgen::mechanism! {
    #![generic]
    /// The roller as a `#![generic]` module (the slip rows over any scalar).
    pub mod roller_generic {
        param r = 0.2;
        param m = 1.5;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.2;
        coord phi = 0.0;
        body wheel { mass = m, inertia = 0.5 * m * r * r, frame = frame(vec2(x, y), phi) }
        gravity = vec2(0.0, -g);
        inequality floor: y - r >= 0.0, friction = 0.3, tangent = der(x) + r * der(phi);
    }
}

mechgen::mechanism! {
    #![scalar = f32]
    /// The incline in single precision (functions and constants only).
    pub mod incline_f32 {
        param th = 0.3;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -9.81);
        inequality slope: -sin(th) * x + cos(th) * y >= 0.0, friction = 0.5,
            tangent = cos(th) * x + sin(th) * y;
    }
}

type V2 = SVector<f64, 2>;
type V3 = SVector<f64, 3>;

#[test]
fn the_generated_friction_items_are_the_model() {
    assert_eq!(incline::FRICTION, [0.5]);
    assert_eq!(incline::NT, 1);
    assert_eq!(incline::TANGENT_CONTACT, [0]);
    assert_eq!(belt::TANGENT_CONTACT, [0, 1]);
    assert_eq!(spatial::NT, 2);
    assert_eq!(spatial::TANGENT_CONTACT, [0, 0]);
    assert_eq!(<spatial::Model as Friction<3, 0, 3, 1, 2>>::FRICTION, [0.6]);
}

/// `J_t`, `a₀` and `γ_t` of the belt's position-form slip against central differences of
/// the slip `s(q, t)` itself, and the velocity-form row of the same contact against the
/// position form (a second formulation), at random states.
#[test]
fn slip_rows_match_central_differences() {
    let mut rng = mechgen_test_support::rng(36);
    let p = belt::Params::default();
    let slip = |th: f64, t: f64| p.l * th.sin() - p.vb * t;
    for _ in 0..50 {
        let th: f64 = rng.random_range(-1.2..1.2);
        let thd: f64 = rng.random_range(-3.0..3.0);
        let thdd: f64 = rng.random_range(-5.0..5.0);
        let t: f64 = rng.random_range(0.0..5.0);
        let q = SVector::<f64, 1>::new(th);
        let qd = SVector::<f64, 1>::new(thd);
        let h = 1e-5;
        let jt = belt::tangent_jacobian(&q, &p, t);
        let fd_q = (slip(th + h, t) - slip(th - h, t)) / (2.0 * h);
        let fd_t = (slip(th, t + h) - slip(th, t - h)) / (2.0 * h);
        assert!((jt[(0, 0)] - fd_q).abs() < 1e-9, "{} vs {fd_q}", jt[(0, 0)]);
        let a0 = belt::tangent_jacobian_t(&q, &p, t);
        assert!((a0[0] - fd_t).abs() < 1e-9);
        // The velocity-form row is the same slip velocity.
        let v = |th: f64, thd: f64, t: f64| {
            let q = SVector::<f64, 1>::new(th);
            let qd = SVector::<f64, 1>::new(thd);
            belt::tangent_jacobian(&q, &p, t) * qd + belt::tangent_jacobian_t(&q, &p, t)
        };
        let vt = v(th, thd, t);
        let exact = p.l * th.cos() * thd - p.vb;
        assert!((vt[0] - exact).abs() < 1e-12 && (vt[1] - exact).abs() < 1e-12);
        // v̇_t = J_t q̈ − γ_t: the derivative of v_t along (q̇, q̈, 1).
        let gamma = belt::tangent_gamma(&q, &qd, &p, t);
        let vp = v(th + h * thd, thd + h * thdd, t + h);
        let vm = v(th - h * thd, thd - h * thdd, t - h);
        let jt = belt::tangent_jacobian(&q, &p, t);
        for r in 0..2 {
            let fd = (vp[r] - vm[r]) / (2.0 * h);
            let sym = jt[(r, 0)] * thdd - gamma[r];
            assert!(
                (fd - sym).abs() < 1e-7 * (1.0 + fd.abs()),
                "row {r}: {fd} vs {sym}"
            );
        }
    }
}

/// The spatial contact's two slip rows against central differences.
#[test]
fn spatial_slip_rows_match_central_differences() {
    let mut rng = mechgen_test_support::rng(37);
    let p = spatial::Params::default();
    let slip = |q: &V3| V2::new(q[0] + p.sx * q[2], q[1] + p.sy * q[2]);
    for _ in 0..20 {
        let q = V3::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let jt = spatial::tangent_jacobian(&q, &p, 0.0);
        let h = 1e-6;
        for j in 0..3 {
            let mut e = V3::zeros();
            e[j] = h;
            let fd = (slip(&(q + e)) - slip(&(q - e))) / (2.0 * h);
            for r in 0..2 {
                assert!((jt[(r, j)] - fd[r]).abs() < 1e-9);
            }
        }
        assert_eq!(spatial::tangent_gamma(&q, &q, &p, 0.0), V2::zeros());
    }
}

fn incline_state(th: f64, s: f64, v: f64) -> (V2, V2) {
    let (c, sn) = (th.cos(), th.sin());
    (V2::new(c * s, sn * s), V2::new(c * v, sn * v))
}

/// Along the slope (the slip coordinate).
fn along(th: f64, q: &V2) -> f64 {
    th.cos() * q[0] + th.sin() * q[1]
}

/// tan θ ≤ μ: the block stays where it is put, to 1e-12 m over 10 s, on the
/// error-controlled route; the sticking force is `m g sin θ` within the cone.
#[test]
fn block_on_a_shallow_incline_stays_at_rest() {
    let mut rng = mechgen_test_support::rng(1);
    for _ in 0..6 {
        let th: f64 = rng.random_range(0.01..0.5f64.atan() - 1e-3);
        let p = incline::Params {
            th,
            ..Default::default()
        };
        let s0: f64 = rng.random_range(-1.0..1.0);
        let (q0, qd0) = incline_state(th, s0, 0.0);
        let opts = FrictionOptions::default();
        let s = friction_accelerations::<incline::Model, 2, 0, 2, 1, 1>(&q0, &qd0, &p, 0.0, &opts)
            .expect("solve");
        assert_eq!(s.modes, vec![ContactMode::Stick]);
        // Up the slope (+tangent), holding the weight's component.
        let ft = s.tangential[0];
        let exact = p.m * p.g * th.sin();
        assert!((ft - exact).abs() <= 1e-12 * exact, "{ft} vs {exact}");
        let lam = s.normal[0];
        assert!((lam - p.m * p.g * th.cos()).abs() <= 1e-12 * lam);
        let tr = simulate_friction_adaptive::<incline::Model, 2, 0, 2, 1, 1>(
            &q0,
            &qd0,
            &p,
            0.0,
            10.0,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let q1 = tr.q.last().expect("end");
        assert!((q1 - q0).norm() <= 1e-12, "moved {:e}", (q1 - q0).norm());
        assert!(tr.events.is_empty());
    }
}

/// tan θ > μ: the block slides down with `g (sin θ − μ cos θ)`, to 1e-10 relative, in the
/// solver and over 2 s of the error-controlled route (`s = a t² / 2`).
#[test]
fn block_on_a_steep_incline_slides_with_the_exact_acceleration() {
    let mut rng = mechgen_test_support::rng(2);
    for _ in 0..6 {
        let th: f64 = rng.random_range(0.5f64.atan() + 1e-2..1.4);
        let p = incline::Params {
            th,
            ..Default::default()
        };
        let a = p.g * (th.sin() - 0.5 * th.cos());
        let s0: f64 = rng.random_range(-1.0..1.0);
        for v0 in [0.0, -0.7] {
            let (q0, qd0) = incline_state(th, s0, v0);
            let s = friction_accelerations::<incline::Model, 2, 0, 2, 1, 1>(
                &q0,
                &qd0,
                &p,
                0.0,
                &Default::default(),
            )
            .expect("solve");
            assert!(matches!(s.modes[0], ContactMode::Slide(_)));
            let acc = along(th, &s.qdd);
            assert!((acc + a).abs() <= 1e-10 * a, "{acc} vs {}", -a);
            let tr = simulate_friction_adaptive::<incline::Model, 2, 0, 2, 1, 1>(
                &q0,
                &qd0,
                &p,
                0.0,
                2.0,
                &AdaptiveFrictionOptions::default(),
            )
            .expect("simulate");
            let q1 = tr.q.last().expect("end");
            let exact = s0 + v0 * 2.0 - 0.5 * a * 4.0;
            let got = along(th, q1);
            assert!(
                (got - exact).abs() <= 1e-10 * (exact.abs() + 1.0),
                "{got} vs {exact}"
            );
        }
    }
}

/// A block launched at `v₀` on a level floor stops at `v₀ / (μ g)` after `v₀² / (2 μ g)`
/// (the stop event, 1e-8 relative), and stays there.
#[test]
fn block_launched_on_a_level_floor_stops_at_the_exact_time_and_distance() {
    let mut rng = mechgen_test_support::rng(3);
    let mu = 0.5;
    for _ in 0..6 {
        let g: f64 = rng.random_range(1.0..20.0);
        let v0: f64 = rng.random_range(0.1..5.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let p = incline::Params {
            th: 0.0,
            g,
            ..Default::default()
        };
        let x0: f64 = rng.random_range(-1.0..1.0);
        let (q0, qd0) = (V2::new(x0, 0.0), V2::new(v0, 0.0));
        let t_stop = v0.abs() / (mu * g);
        let tr = simulate_friction_adaptive::<incline::Model, 2, 0, 2, 1, 1>(
            &q0,
            &qd0,
            &p,
            0.0,
            2.0 * t_stop,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let &(te, k, kind) = tr.events.first().expect("a stop event");
        assert_eq!((k, kind), (0, FrictionEvent::Stop));
        assert!((te - t_stop).abs() <= 1e-8 * t_stop, "{te} vs {t_stop}");
        let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
        let d = tr.q[i][0] - x0;
        let exact = v0 * v0.abs() / (2.0 * mu * g);
        assert!((d - exact).abs() <= 1e-8 * exact.abs(), "{d} vs {exact}");
        // At rest afterwards, where it stopped.
        let q1 = tr.q.last().expect("end");
        assert!(
            (q1[0] - tr.q[i][0]).abs() <= 1e-12,
            "crept {:e}",
            q1[0] - tr.q[i][0]
        );
        assert_eq!(tr.events.len(), 1);
    }
}

/// A disc (`k = 1/2`) and a ball's planar section (`k = 2/5`) launched sliding without spin:
/// the slip ends at `t = v₀ / (μ g (1 + 1/k))` with speed `v₀ / (1 + k)` (2 v₀ / 3 and
/// 5 v₀ / 7), 1e-8 relative, and they roll on at that speed without slipping.
#[test]
fn disc_and_ball_launched_sliding_end_rolling_at_the_exact_time_and_speed() {
    let mut rng = mechgen_test_support::rng(4);
    let mu = 0.3;
    for k in [0.5, 0.4] {
        for _ in 0..4 {
            let r: f64 = rng.random_range(0.05..1.0);
            let g: f64 = rng.random_range(1.0..20.0);
            let v0: f64 = rng.random_range(0.5..5.0);
            let p = roller::Params {
                r,
                k,
                g,
                ..Default::default()
            };
            let q0 = V3::new(0.0, r, 0.0);
            let qd0 = V3::new(v0, 0.0, 0.0);
            let t_roll = v0 / (mu * g * (1.0 + 1.0 / k));
            let tr = simulate_friction_adaptive::<roller::Model, 3, 0, 3, 1, 1>(
                &q0,
                &qd0,
                &p,
                0.0,
                3.0 * t_roll,
                &AdaptiveFrictionOptions::default(),
            )
            .expect("simulate");
            let &(te, _, kind) = tr.events.first().expect("the slip ends");
            assert_eq!(kind, FrictionEvent::Stop);
            assert!((te - t_roll).abs() <= 1e-8 * t_roll, "{te} vs {t_roll}");
            let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
            let v = tr.qd[i][0];
            let exact = v0 / (1.0 + k);
            assert!((v - exact).abs() <= 1e-8 * exact, "{v} vs {exact}");
            // Rolling: speed kept, no slip.
            let (q1, qd1) = (tr.q.last().expect("end"), tr.qd.last().expect("end"));
            assert!((qd1[0] - exact).abs() <= 1e-10 * exact);
            assert!((qd1[0] + r * qd1[2]).abs() <= 1e-12 * exact);
            assert!((q1[1] - r).abs() <= 1e-12);
            assert_eq!(tr.events.len(), 1);
        }
    }
}

/// `friction_accelerations` rejects bad options with an error.
#[test]
fn bad_options_are_errors() {
    let p = incline::Params::default();
    let opts = FrictionOptions {
        slip_tol: f64::NAN,
        ..Default::default()
    };
    let r = friction_accelerations::<incline::Model, 2, 0, 2, 1, 1>(
        &V2::zeros(),
        &V2::zeros(),
        &p,
        0.0,
        &opts,
    );
    assert!(matches!(r, Err(FrictionError::Contact(_))));
    let _ = <incline::Model as Inequalities<2, 0, 2, 1>>::INEQUALITY_NAMES;
}

/// A block at rest pushed by `c t` sticks until `c t* = μ m g`, then slides with
/// `x = c (t − t*)³ / (6 m)`: the stick → slide event at `t*` and the position at the end,
/// 1e-8 relative.
#[test]
fn pushed_block_starts_sliding_at_the_exact_time() {
    let mut rng = mechgen_test_support::rng(5);
    for _ in 0..5 {
        let m: f64 = rng.random_range(0.5..5.0);
        let c: f64 = rng.random_range(0.5..10.0);
        let g: f64 = rng.random_range(1.0..20.0);
        let p = pushed::Params { m, c, g };
        let t_slip = 0.5 * m * g / c;
        let t1 = 1.5 * t_slip;
        let tr = simulate_friction_adaptive::<pushed::Model, 2, 0, 2, 1, 1>(
            &V2::zeros(),
            &V2::zeros(),
            &p,
            0.0,
            t1,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let &(te, _, kind) = tr.events.first().expect("the block slips");
        assert_eq!(kind, FrictionEvent::Slip);
        assert!((te - t_slip).abs() <= 1e-8 * t_slip, "{te} vs {t_slip}");
        let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
        assert!(
            tr.q[i][0].abs() <= 1e-12,
            "crept {:e} before slipping",
            tr.q[i][0]
        );
        let x1 = tr.q.last().expect("end")[0];
        let exact = c * (t1 - t_slip).powi(3) / (6.0 * m);
        assert!((x1 - exact).abs() <= 1e-8 * exact, "{x1} vs {exact}");
    }
}

/// Painlevé's rod sliding on its lower end: where `1 + 3 cos θ (cos θ + μ s sin θ) > 0`
/// (`s` the slip's sign) the accelerations are the closed form `N = m (g − l sin θ θ̇²) /
/// (1 + 3 cos θ (cos θ + μ s sin θ))`, `m ẍ = −μ s N`, `m l² θ̈ / 3 = l (−cos θ N − μ s sin θ
/// N)` (1e-10 relative); where it is negative (and `g > l sin θ θ̇²`) no contact force
/// satisfies Coulomb's law and the solve says so.
#[test]
fn painleve_rod_consistent_and_inconsistent() {
    let mut rng = mechgen_test_support::rng(6);
    let p = rod::Params::default();
    let (l, m, g, mu) = (p.l, p.m, p.g, 3.0);
    let (mut consistent, mut inconsistent) = (0, 0);
    for _ in 0..200 {
        let th: f64 = rng.random_range(0.05..1.5);
        let thd: f64 = rng.random_range(-1.0..1.0);
        let vt: f64 = rng.random_range(0.1..2.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let sgn = vt.signum();
        let (c, sn) = (th.cos(), th.sin());
        // On the floor, the end's normal velocity zero: ẏ = l cos θ θ̇; ẋ from the slip.
        let q = V3::new(0.3, l * sn, th);
        let qd = V3::new(vt - l * sn * thd, l * c * thd, thd);
        let coef = 1.0 + 3.0 * c * (c + mu * sgn * sn);
        let rhs = g - l * sn * thd * thd;
        let r = friction_accelerations::<rod::Model, 3, 0, 3, 1, 1>(
            &q,
            &qd,
            &p,
            0.0,
            &Default::default(),
        );
        if coef > 1e-3 && rhs > 0.0 {
            let s = r.expect("consistent");
            let n = m * rhs / coef;
            let ft = -mu * sgn * n;
            let exact = V3::new(
                ft / m,
                n / m - g,
                3.0 / (m * l * l) * (-l * c * n + l * sn * ft),
            );
            assert!(
                (s.qdd - exact).norm() <= 1e-10 * exact.norm(),
                "{} vs {exact}",
                s.qdd
            );
            assert!((s.normal[0] - n).abs() <= 1e-10 * n);
            consistent += 1;
        } else if coef < -1e-3 && rhs > 0.0 {
            assert!(
                matches!(r, Err(FrictionError::Inconsistent { .. })),
                "{r:?}"
            );
            inconsistent += 1;
        }
    }
    assert!(
        consistent > 20 && inconsistent > 20,
        "{consistent} {inconsistent}"
    );
}

/// The spatial cone: a particle on a level plane pushed horizontally by `F` sticks while
/// `|F| ≤ μ m g` (the disc, not a box: diagonal forces too) and otherwise slides along `F`
/// with `(|F| − μ m g) / m`; launched at `v₀` in any direction it stops at `|v₀| / (μ g)`
/// after `|v₀|² / (2 μ g)` along `v₀` (1e-8).
#[test]
fn spatial_contact_has_the_disc_cone() {
    let mut rng = mechgen_test_support::rng(7);
    let mu = 0.6;
    for _ in 0..20 {
        let m: f64 = rng.random_range(0.5..3.0);
        let g = 9.81;
        let ang: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let ratio: f64 = rng.random_range(0.2..2.0);
        if (ratio - 1.0).abs() < 1e-3 {
            continue;
        }
        let f = ratio * mu * m * g;
        let p = level::Params {
            m,
            fx: f * ang.cos(),
            fy: f * ang.sin(),
            g,
        };
        let s = friction_accelerations::<level::Model, 3, 0, 3, 1, 2>(
            &V3::zeros(),
            &V3::zeros(),
            &p,
            0.0,
            &Default::default(),
        )
        .expect("solve");
        let a = if ratio <= 1.0 {
            0.0
        } else {
            (f - mu * m * g) / m
        };
        let exact = V3::new(a * ang.cos(), a * ang.sin(), 0.0);
        assert!(
            (s.qdd - exact).norm() <= 1e-10 * (1.0 + a),
            "{} vs {exact}",
            s.qdd
        );
        assert_eq!(s.modes[0] == ContactMode::Stick, ratio <= 1.0);
    }
    let p = level::Params::default();
    for _ in 0..5 {
        let ang: f64 = rng.random_range(0.0..std::f64::consts::TAU);
        let v0: f64 = rng.random_range(0.5..4.0);
        let qd0 = V3::new(v0 * ang.cos(), v0 * ang.sin(), 0.0);
        let t_stop = v0 / (mu * p.g);
        let tr = simulate_friction_adaptive::<level::Model, 3, 0, 3, 1, 2>(
            &V3::zeros(),
            &qd0,
            &p,
            0.0,
            2.0 * t_stop,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let &(te, _, kind) = tr.events.first().expect("a stop");
        assert_eq!(kind, FrictionEvent::Stop);
        assert!((te - t_stop).abs() <= 1e-8 * t_stop, "{te} vs {t_stop}");
        let d = v0 * v0 / (2.0 * mu * p.g);
        let q1 = tr.q.last().expect("end");
        let exact = V3::new(d * ang.cos(), d * ang.sin(), 0.0);
        assert!((q1 - exact).norm() <= 1e-8 * d, "{q1} vs {exact}");
    }
}

/// The `#![generic]` and `#![scalar = f32]` modules carry the same friction items.
#[test]
fn generic_and_single_precision_modules_have_the_slip_rows() {
    let q = V3::new(0.3, 0.2, 1.1);
    let pg = roller_generic::Params::default();
    let jt = roller_generic::tangent_jacobian(&q, &pg, 0.0);
    assert_eq!((jt[(0, 0)], jt[(0, 1)], jt[(0, 2)]), (1.0, 0.0, pg.r));
    assert_eq!(roller_generic::FRICTION, [0.3]);
    let pf = incline_f32::Params::default();
    let jt = incline_f32::tangent_jacobian(&SVector::<f32, 2>::zeros(), &pf, 0.0);
    assert!((jt[(0, 0)] - pf.th.cos()).abs() < 1e-6 && (jt[(0, 1)] - pf.th.sin()).abs() < 1e-6);
    assert_eq!(incline_f32::FRICTION, [0.5f32]);
}

/// A block launched up an incline stops at `v₀ / (g (sin θ + μ cos θ))` (a `Stop` event,
/// 1e-8); on a steep incline it then slides back down with `g (sin θ − μ cos θ)` (position
/// at the end, 1e-8), on a shallow one it stays where it stopped (1e-12 m).
#[test]
fn block_launched_up_an_incline_stops_then_sticks_or_slides_back() {
    let mut rng = mechgen_test_support::rng(8);
    let mu = 0.5;
    for steep in [false, true] {
        for _ in 0..4 {
            let th: f64 = if steep {
                rng.random_range(0.5f64.atan() + 1e-2..1.3)
            } else {
                rng.random_range(0.05..0.5f64.atan() - 1e-2)
            };
            let p = incline::Params {
                th,
                ..Default::default()
            };
            let v0: f64 = rng.random_range(0.5..3.0);
            let (q0, qd0) = incline_state(th, 0.0, v0);
            let up = p.g * (th.sin() + mu * th.cos());
            let t_stop = v0 / up;
            let s_stop = v0 * v0 / (2.0 * up);
            let t1 = 3.0 * t_stop;
            let tr = simulate_friction_adaptive::<incline::Model, 2, 0, 2, 1, 1>(
                &q0,
                &qd0,
                &p,
                0.0,
                t1,
                &AdaptiveFrictionOptions::default(),
            )
            .expect("simulate");
            let &(te, _, kind) = tr.events.first().expect("a stop");
            assert_eq!(kind, FrictionEvent::Stop);
            assert!((te - t_stop).abs() <= 1e-8 * t_stop, "{te} vs {t_stop}");
            let i = tr.t.iter().position(|&t| t == te).expect("event recorded");
            let at_stop = along(th, &tr.q[i]);
            assert!(
                (at_stop - s_stop).abs() <= 1e-8 * s_stop,
                "{at_stop} vs {s_stop}"
            );
            let end = along(th, tr.q.last().expect("end"));
            if steep {
                let down = p.g * (th.sin() - mu * th.cos());
                let exact = s_stop - 0.5 * down * (t1 - t_stop).powi(2);
                assert!(
                    (end - exact).abs() <= 1e-8 * exact.abs().max(s_stop),
                    "{end} vs {exact}"
                );
            } else {
                assert!((end - at_stop).abs() <= 1e-12, "crept {:e}", end - at_stop);
            }
            assert_eq!(tr.events.len(), 1);
        }
    }
}

/// A disc (`I = m r² / 2`, plastic contact) hitting the floor at `v_n` while moving at `u`
/// and spinning at `ω`: the slip `u + r ω` is stopped by the tangential impulse `P = −(u + r
/// ω) / (1/m + r²/I)` when `|P| ≤ μ m v_n`, and otherwise `P = −μ m v_n sign(u + r ω)`;
/// then `u⁺ = u + P/m`, `ω⁺ = ω + r P / I`, `v⁺ = 0` (1e-12). On the adaptive route the
/// same disc dropped from a height gets that impact at its touchdown.
#[test]
fn impacts_with_friction_stick_or_slide_within_the_cone() {
    let mut rng = mechgen_test_support::rng(9);
    let mu = 0.3;
    let (mut sticks, mut slides) = (0, 0);
    for _ in 0..40 {
        let r: f64 = rng.random_range(0.05..1.0);
        let m: f64 = rng.random_range(0.5..3.0);
        let p = roller::Params {
            r,
            m,
            k: 0.5,
            ..Default::default()
        };
        let inertia = 0.5 * m * r * r;
        let vn: f64 = rng.random_range(0.5..5.0);
        let u: f64 = rng.random_range(-3.0..3.0);
        let w: f64 = rng.random_range(-20.0..20.0);
        let q = V3::new(0.0, r, 0.0);
        let qd = V3::new(u, -vn, w);
        let s =
            friction_impact::<roller::Model, 3, 0, 3, 1, 1>(&q, &qd, &p, 0.0, &Default::default())
                .expect("impact");
        let slip = u + r * w;
        let p_stick = -slip / (1.0 / m + r * r / inertia);
        let cone = mu * m * vn;
        let pt = if p_stick.abs() <= cone {
            sticks += 1;
            p_stick
        } else {
            slides += 1;
            -cone * slip.signum()
        };
        let exact = V3::new(pt / m, vn, r * pt / inertia);
        assert!(
            (s.qdd - exact).norm() <= 1e-12 * (1.0 + exact.norm()),
            "{} vs {exact}",
            s.qdd
        );
        assert!((s.normal[0] - m * vn).abs() <= 1e-12 * m * vn);
    }
    assert!(sticks > 5 && slides > 5, "{sticks} {slides}");
    // Dropped from height h with spin: the impact at touchdown, then the motion from there.
    let p = roller::Params::default();
    let h = 0.3;
    let (u, w) = (1.0, 30.0);
    let tr = simulate_friction_adaptive::<roller::Model, 3, 0, 3, 1, 1>(
        &V3::new(0.0, p.r + h, 0.0),
        &V3::new(u, 0.0, w),
        &p,
        0.0,
        2.0,
        &AdaptiveFrictionOptions::default(),
    )
    .expect("simulate");
    let &(te, _, kind) = tr.events.first().expect("touchdown");
    assert_eq!(kind, FrictionEvent::Touch);
    let t_fall = (2.0 * h / p.g).sqrt();
    assert!((te - t_fall).abs() <= 1e-8 * t_fall, "{te} vs {t_fall}");
    assert_eq!(tr.impacts, 1);
    // Just after the impact (the next recorded state starts the next phase at te).
    let vn = p.g * t_fall;
    let inertia = p.k * p.m * p.r * p.r;
    let slip = u + p.r * w;
    let p_stick = -slip / (1.0 / p.m + p.r * p.r / inertia);
    let pt = if p_stick.abs() <= 0.3 * p.m * vn {
        p_stick
    } else {
        -0.3 * p.m * vn * slip.signum()
    };
    let (u1, w1) = (u + pt / p.m, w + p.r * pt / inertia);
    // Afterwards it slides until it rolls, keeping its angular momentum about the contact
    // point, `I ω − m r u`: rolling (`ω = −v / r`) at `v = (m u1 − I w1 / r) / (m + I / r²)`.
    let v_roll = (p.m * u1 - inertia * w1 / p.r) / (p.m + inertia / (p.r * p.r));
    let qd1 = tr.qd.last().expect("end");
    assert!(
        (qd1[0] - v_roll).abs() <= 1e-8 * v_roll.abs().max(1.0),
        "{} vs {v_roll}",
        qd1[0]
    );
    assert!((qd1[0] + p.r * qd1[2]).abs() <= 1e-10, "still slipping");
}

mechgen::mechanism! {
    /// A block on a rough floor, pushed along it by `fx` and lifted by a force growing as
    /// `c t`: its normal force `m g − c t` reaches zero at `t = m g / c`.
    pub mod lifted {
        param m = 1.5;
        param g = 9.81;
        param c = 10.0;
        param fx = 0.0;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = m, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        force x = fx;
        force y = c * t;
        inequality floor: y >= 0.0, friction = 0.5, tangent = x;
    }
}

/// A block lifted off the floor by `c t` leaves it at `m g / c` (1e-10 relative), labelled
/// `Release` whether it was sticking (no push: its friction force and its cone both reach
/// zero then) or sliding (launched along the floor, unpushed): the event is named by the
/// condition that crossed, not by the contact's mode; and it then rises as
/// `c (t − t_off)³ / (6 m)` (1e-9; the floor does not hold on to it).
#[test]
fn lift_off_is_a_release_whether_sticking_or_sliding() {
    let mut rng = mechgen_test_support::rng(21);
    for i in 0..6 {
        let p = lifted::Params {
            c: rng.random_range(5.0..40.0),
            ..Default::default()
        };
        let t_off = p.m * p.g / p.c;
        // Sliding: fast enough not to stop before lift-off (μ g t_off < v0).
        let v0 = if i % 2 == 0 {
            0.0
        } else {
            2.0 * 0.5 * p.g * t_off
        };
        let tr = simulate_friction_adaptive::<lifted::Model, 2, 0, 2, 1, 1>(
            &V2::zeros(),
            &V2::new(v0, 0.0),
            &p,
            0.0,
            1.2 * t_off,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let &(te, k, kind) = tr.events.first().expect("a lift-off");
        assert_eq!(
            (k, kind),
            (0, FrictionEvent::Release),
            "v0 = {v0}: {:?}",
            tr.events
        );
        assert!((te - t_off).abs() <= 1e-10 * t_off, "{te} vs {t_off}");
        let first = if v0 == 0.0 {
            ContactMode::Stick
        } else {
            ContactMode::Slide(vec![1.0])
        };
        assert_eq!(tr.phases[0].1, vec![first]);
        assert_eq!(tr.phases[1].1, vec![ContactMode::Open]);
        // Then it rises with `m ÿ = c (t − t_off)`: `y = c (t − t_off)³ / (6 m)`.
        let t1 = 1.2 * t_off;
        let y = tr.q.last().expect("end")[1];
        let exact = p.c * (t1 - t_off).powi(3) / (6.0 * p.m);
        assert!((y - exact).abs() <= 1e-9 * exact, "{y} vs {exact}");
        assert_eq!(tr.events.len(), 1, "{:?}", tr.events);
    }
}

/// Started exactly at its slip onset `t* = μ m g / c` (the sticking force at the cone, within
/// rounding), the pushed block slips at once and moves as `c (t − t*)³ / (6 m)` (1e-8
/// relative at `1.5 t*`), and a block lifted by `c t` started at its lift-off time leaves the
/// floor as `c (t − t_off)³ / (6 m)`: a condition met only within the tolerance at a phase's
/// start still ends the phase.
#[test]
fn started_at_a_boundary_the_contact_changes_at_once() {
    let mut rng = mechgen_test_support::rng(22);
    for _ in 0..5 {
        let m: f64 = rng.random_range(0.5..5.0);
        let c: f64 = rng.random_range(0.5..10.0);
        let g: f64 = rng.random_range(1.0..20.0);
        let p = pushed::Params { m, c, g };
        let t_slip = 0.5 * m * g / c;
        let t1 = 1.5 * t_slip;
        let tr = simulate_friction_adaptive::<pushed::Model, 2, 0, 2, 1, 1>(
            &V2::zeros(),
            &V2::zeros(),
            &p,
            t_slip,
            t1,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let x1 = tr.q.last().expect("end")[0];
        let exact = c * (t1 - t_slip).powi(3) / (6.0 * m);
        assert!(
            (x1 - exact).abs() <= 1e-8 * exact,
            "{x1} vs {exact}: {:?}",
            tr.phases
        );
        let p = lifted::Params {
            m,
            c: 4.0 * c,
            g,
            fx: 0.0,
        };
        let t_off = m * g / p.c;
        let tr = simulate_friction_adaptive::<lifted::Model, 2, 0, 2, 1, 1>(
            &V2::zeros(),
            &V2::zeros(),
            &p,
            t_off,
            1.5 * t_off,
            &AdaptiveFrictionOptions::default(),
        )
        .expect("simulate");
        let y1 = tr.q.last().expect("end")[1];
        let exact = p.c * (0.5 * t_off).powi(3) / (6.0 * m);
        assert!(
            (y1 - exact).abs() <= 1e-8 * exact,
            "{y1} vs {exact}: {:?}",
            tr.phases
        );
    }
}

/// A block launched slower than twice `slip_tol` (but faster than it) still stops at
/// `v₀ / (μ g)`: its stop is watched from the start of the phase.
#[test]
fn a_slow_launch_still_stops() {
    let p = pushed::Params {
        c: 0.0,
        ..Default::default()
    };
    let opts = AdaptiveFrictionOptions::default();
    let v0 = 1.5 * opts.friction.slip_tol;
    let tr = simulate_friction_adaptive::<pushed::Model, 2, 0, 2, 1, 1>(
        &V2::zeros(),
        &V2::new(v0, 0.0),
        &p,
        0.0,
        1.0,
        &opts,
    )
    .expect("simulate");
    assert_eq!(tr.phases[0].1, vec![ContactMode::Slide(vec![1.0])]);
    let &(te, _, kind) = tr.events.first().expect("a stop");
    assert_eq!(kind, FrictionEvent::Stop);
    let t_stop = v0 / (0.5 * p.g);
    assert!((te - t_stop).abs() <= 1e-6 * t_stop, "{te} vs {t_stop}");
    let x1 = tr.q.last().expect("end")[0];
    assert!(x1.abs() <= 1e-15, "{x1}");
    assert_eq!(tr.phases.last().expect("phase").1, vec![ContactMode::Stick]);
}
