//! The frictional contact step's Jacobians on the clamping set (issue 36): one
//! semi-implicit Euler step with the contacts' modes of `friction_accelerations` held,
//! differentiated by dual numbers through the generated generic functions
//! (`friction_step_jacobians`). Checked at random states of a ball rolling or sliding, a
//! particle sliding or sticking on a tilted plane (two slip rows: the slip direction moves
//! with the state) and a slider crank whose slider is a block on a rough floor (an equality
//! constraint with the contact): the step equals the semi-implicit Euler step of
//! `friction_accelerations` to 1e-12, and its state Jacobians equal central differences of
//! that step — the solver itself, the modes re-solved at each perturbed state, or held by
//! `friction_accelerations_with_modes` where a contact sticks — to 1e-6 relative per block;
//! the parameter Jacobians equal central differences of the generic step at `f64`. The same
//! for dry friction in a joint (`joint_friction_step_jacobians`): a slider crank with a rough
//! rail, sliding and sticking, against `joint_friction_accelerations`.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::contact::{
    friction_accelerations, friction_accelerations_with_modes, friction_step_generic,
    friction_step_jacobians, joint_friction_accelerations, joint_friction_step_generic,
    joint_friction_step_jacobians, ContactMode, FrictionOptions, JointFrictionOptions, JointMode,
};
use mechgen::runtime::{Dynamics, GenericFriction};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

mechgen::mechanism! {
    #![generic]
    /// A ball (a sphere's planar section) on a rough floor.
    pub mod ball {
        param r = 0.2;
        param m = 1.5;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.2;
        coord phi = 0.0;
        body wheel { mass = m, inertia = 0.4 * m * r * r, frame = frame(vec2(x, y), phi) }
        gravity = vec2(0.0, -g);
        force x = 0.3 * sin(phi);
        inequality floor: y - r >= 0.0, friction = 0.3, tangent = der(x) + r * der(phi);
    }
}

mechgen::mechanism! {
    #![generic]
    /// A particle on the plane `z = sx x + sy y`, pushed by `(fx, fy)`; two slip rows.
    pub mod plane {
        param sx = 0.2;
        param sy = -0.1;
        param fx = 1.0;
        param fy = 0.5;
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        coord z = 0.0;
        body p { mass = 1.0, com = vec3(x, y, z) }
        gravity = vec3(0.0, 0.0, -g);
        force x = fx * cos(y);
        force y = fy;
        inequality plane: z - sx * x - sy * y >= 0.0, friction = 0.6,
            tangent = vec2(x + sx * z, y + sy * z);
    }
}

mechgen::mechanism! {
    #![generic]
    /// A slider crank whose slider is a block on a rough floor (`ys >= 0`), driven by `tau`.
    pub mod crank {
        param a = 0.1;
        param b = 0.3;
        param tau = 0.4;
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
        inequality floor: ys >= 0.0, friction = 0.4, tangent = s;
    }
}

mechgen::mechanism! {
    #![generic]
    /// A slider crank whose slider rubs on a rough rail (dry friction in a joint).
    pub mod rail_crank {
        param a = 0.1;
        param b = 0.3;
        param tau = 0.4;
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
        force th = tau * cos(th);
        constraint a * vec2(cos(th), sin(th)) + b * vec2(cos(ph), sin(ph)) == vec2(s, ys);
        constraint rail: ys == 0.0, friction = 0.4, slip = s;
    }
}

const H: f64 = 1e-3;

/// The largest entry of `a − b` over the largest of `b` (or 1).
fn rel<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>, b: &SMatrix<f64, R, C>) -> f64 {
    (a - b).amax() / b.amax().max(1.0)
}

/// Checks the step and its Jacobians at `(q, q̇)`; returns the modes.
fn check<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
    const NP: usize,
>(
    q: SVector<f64, NQ>,
    qd: SVector<f64, NQ>,
    p: &M::Params,
) -> Vec<ContactMode>
where
    M: GenericFriction<NQ, NC, DOF, NI, NT, NP> + Dynamics<NQ, NC, DOF>,
{
    let opts = FrictionOptions::default();
    let (jac, modes) =
        friction_step_jacobians::<M, NQ, NC, DOF, NI, NT, NP>(&q, &qd, p, 0.0, H, &opts)
            .unwrap_or_else(|e| panic!("{e}"));
    // The step is the semi-implicit Euler step of the solver's accelerations.
    let solve = friction_accelerations::<M, NQ, NC, DOF, NI, NT>(&q, &qd, p, 0.0, &opts)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(solve.modes, modes);
    let v = qd + solve.qdd * H;
    let (qn, qdn) = jac.next;
    assert!(
        (qdn - v).amax() <= 1e-12 * v.amax().max(1.0),
        "{qdn} vs {v}"
    );
    assert!((qn - (q + v * H)).amax() <= 1e-12 * q.amax().max(1.0));
    // Central differences of the solver's step with the modes held (a perturbed position
    // leaves the solver's active band, a perturbed slip would start a sticking contact
    // sliding), a sliding contact's direction recomputed from its slip at each state.
    let slip = |q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>| {
        M::tangent_jacobian(q, p, 0.0) * qd + M::tangent_jacobian_t(q, p, 0.0)
    };
    let vt0 = slip(&q, &qd);
    let step = |q: &SVector<f64, NQ>, qd: &SVector<f64, NQ>| {
        let vt = slip(q, qd);
        let held: Vec<ContactMode> = modes
            .iter()
            .enumerate()
            .map(|(k, m)| match m {
                ContactMode::Slide(u) => {
                    let rows: Vec<usize> =
                        (0..NT).filter(|&r| M::TANGENT_CONTACT[r] == k).collect();
                    let n0 = rows.iter().map(|&r| vt0[r] * vt0[r]).sum::<f64>().sqrt();
                    let n = rows.iter().map(|&r| vt[r] * vt[r]).sum::<f64>().sqrt();
                    if n0 > opts.slip_tol {
                        ContactMode::Slide(rows.iter().map(|&r| vt[r] / n).collect())
                    } else {
                        ContactMode::Slide(u.clone())
                    }
                }
                other => other.clone(),
            })
            .collect();
        let s = friction_accelerations_with_modes::<M, NQ, NC, DOF, NI, NT>(
            q, qd, p, 0.0, &opts, &held,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let v = qd + s.qdd * H;
        (q + v * H, v)
    };
    let (mut pp, mut pv, mut vp, mut vv) = (
        SMatrix::<f64, NQ, NQ>::zeros(),
        SMatrix::<f64, NQ, NQ>::zeros(),
        SMatrix::<f64, NQ, NQ>::zeros(),
        SMatrix::<f64, NQ, NQ>::zeros(),
    );
    let d = 1e-6;
    for j in 0..NQ {
        let e = SVector::<f64, NQ>::from_fn(|i, _| if i == j { d } else { 0.0 });
        let (a, b) = (step(&(q + e), &qd), step(&(q - e), &qd));
        pp.set_column(j, &((a.0 - b.0) / (2.0 * d)));
        vp.set_column(j, &((a.1 - b.1) / (2.0 * d)));
        let (a, b) = (step(&q, &(qd + e)), step(&q, &(qd - e)));
        pv.set_column(j, &((a.0 - b.0) / (2.0 * d)));
        vv.set_column(j, &((a.1 - b.1) / (2.0 * d)));
    }
    for (name, ours, fd) in [
        ("dq'/dq", jac.pos_pos, pp),
        ("dq'/dqd", jac.pos_vel, pv),
        ("dqd'/dq", jac.vel_pos, vp),
        ("dqd'/dqd", jac.vel_vel, vv),
    ] {
        let e = rel(&ours, &fd);
        assert!(e < 1e-6, "{name}, modes {modes:?}: {e:.2e}\n{ours}\n{fd}");
    }
    // The parameter columns against central differences of the generic step at f64.
    let pv0 = M::param_values(p);
    for k in 0..NP {
        let dk = 1e-6 * pv0[k].abs().max(1.0);
        let mut up = pv0;
        let mut down = pv0;
        up[k] += dk;
        down[k] -= dk;
        let s = |pvs: &[f64; NP]| {
            friction_step_generic::<M, f64, NQ, NC, DOF, NI, NT, NP>(
                &q, &qd, pvs, 0.0, H, &modes, &opts,
            )
            .unwrap_or_else(|| panic!("singular"))
        };
        let (a, b) = (s(&up), s(&down));
        let fd_q = (a.0 - b.0) / (2.0 * dk);
        let fd_v = (a.1 - b.1) / (2.0 * dk);
        let scale = jac.vel_par.column(k).amax().max(1.0);
        assert!(
            (jac.pos_par.column(k) - fd_q).amax() < 1e-6 * scale,
            "param {k}"
        );
        assert!(
            (jac.vel_par.column(k) - fd_v).amax() < 1e-6 * scale,
            "param {k}"
        );
    }
    modes
}

fn kinds(modes: &[ContactMode]) -> &'static str {
    match modes.first() {
        Some(ContactMode::Stick) => "stick",
        Some(ContactMode::Slide(_)) => "slide",
        Some(ContactMode::Open) => "open",
        _ => "closed",
    }
}

#[test]
fn a_ball_rolling_and_sliding() {
    let mut rng = ChaCha8Rng::seed_from_u64(36);
    let p = ball::Params::default();
    let mut seen = std::collections::BTreeMap::new();
    for k in 0..40 {
        let x: f64 = rng.random_range(-1.0..1.0);
        let phi: f64 = rng.random_range(-3.0..3.0);
        let xd: f64 = rng.random_range(-2.0..2.0);
        // Every other state rolls (no slip), the others slide.
        let phid = if k % 2 == 0 {
            -xd / p.r
        } else {
            rng.random_range(-10.0..10.0)
        };
        let modes = check::<ball::Model, 3, 0, 3, 1, 1, { ball::generic::NP }>(
            SVector::from([x, p.r, phi]),
            SVector::from([xd, 0.0, phid]),
            &p,
        );
        *seen.entry(kinds(&modes)).or_insert(0) += 1;
    }
    assert!(seen.get("stick").copied().unwrap_or(0) >= 10, "{seen:?}");
    assert!(seen.get("slide").copied().unwrap_or(0) >= 10, "{seen:?}");
}

#[test]
fn a_particle_on_a_tilted_plane_slides_along_its_moving_slip() {
    let mut rng = ChaCha8Rng::seed_from_u64(37);
    let mut seen = std::collections::BTreeMap::new();
    for k in 0..40 {
        let p = plane::Params {
            // Weak pushes stick, strong ones slide.
            fx: if k % 2 == 0 { 0.3 } else { 8.0 },
            ..Default::default()
        };
        let (x, y): (f64, f64) = (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        let z = p.sx * x + p.sy * y;
        let (xd, yd) = if k % 4 == 0 {
            (0.0, 0.0)
        } else {
            (rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0))
        };
        let zd = p.sx * xd + p.sy * yd;
        let modes = check::<plane::Model, 3, 0, 3, 1, 2, { plane::generic::NP }>(
            SVector::from([x, y, z]),
            SVector::from([xd, yd, zd]),
            &p,
        );
        *seen.entry(kinds(&modes)).or_insert(0) += 1;
    }
    assert!(seen.get("stick").copied().unwrap_or(0) >= 5, "{seen:?}");
    assert!(seen.get("slide").copied().unwrap_or(0) >= 20, "{seen:?}");
}

#[test]
fn a_slider_crank_on_a_rough_floor() {
    let mut rng = ChaCha8Rng::seed_from_u64(38);
    let p = crank::Params::default();
    let mut seen = std::collections::BTreeMap::new();
    for k in 0..40 {
        let th: f64 = rng.random_range(-3.0..3.0);
        let ph = -(p.a * th.sin() / p.b).asin();
        let s = p.a * th.cos() + p.b * ph.cos();
        // At rest every fourth state (sticking where the drive is within the cone).
        let w: f64 = if k % 4 == 0 {
            0.0
        } else {
            rng.random_range(-4.0..4.0)
        };
        let phd = -p.a * th.cos() * w / (p.b * ph.cos());
        let sd = -p.a * th.sin() * w - p.b * ph.sin() * phd;
        let modes = check::<crank::Model, 4, 2, 2, 1, 1, { crank::generic::NP }>(
            SVector::from([th, ph, s, 0.0]),
            SVector::from([w, phd, sd, 0.0]),
            &p,
        );
        *seen.entry(kinds(&modes)).or_insert(0) += 1;
    }
    assert!(seen.get("slide").copied().unwrap_or(0) >= 10, "{seen:?}");
    assert!(seen.get("stick").copied().unwrap_or(0) >= 4, "{seen:?}");
}

#[test]
fn a_slider_crank_with_a_rough_rail_joint() {
    type M = rail_crank::Model;
    const NP: usize = rail_crank::generic::NP;
    let mut rng = ChaCha8Rng::seed_from_u64(39);
    let opts = JointFrictionOptions::default();
    let mut seen = std::collections::BTreeMap::new();
    for k in 0..40 {
        // Strong drives slide; weak ones at rest stick.
        let drive = if k % 3 == 0 { 0.3 } else { 3.0 };
        let p = rail_crank::Params {
            tau: rng.random_range(-drive..drive),
            ..Default::default()
        };
        let th: f64 = rng.random_range(-3.0..3.0);
        let ph = -(p.a * th.sin() / p.b).asin();
        let s = p.a * th.cos() + p.b * ph.cos();
        let w: f64 = if k % 3 == 0 {
            0.0
        } else {
            rng.random_range(-4.0..4.0)
        };
        let phd = -p.a * th.cos() * w / (p.b * ph.cos());
        let sd = -p.a * th.sin() * w - p.b * ph.sin() * phd;
        let q = SVector::from([th, ph, s, 0.0]);
        let qd = SVector::from([w, phd, sd, 0.0]);
        let (jac, modes) =
            joint_friction_step_jacobians::<M, 4, 3, 1, 1, NP>(&q, &qd, &p, 0.0, H, &opts)
                .unwrap_or_else(|e| panic!("{e}"));
        let solve = joint_friction_accelerations::<M, 4, 3, 1, 1>(&q, &qd, &p, 0.0, &opts)
            .unwrap_or_else(|e| panic!("{e}"));
        let v = qd + solve.qdd * H;
        assert!((jac.next.1 - v).amax() <= 1e-12 * v.amax().max(1.0));
        // The solver's step, its modes required to stay.
        let step = |q: &SVector<f64, 4>, qd: &SVector<f64, 4>| {
            let s = joint_friction_accelerations::<M, 4, 3, 1, 1>(q, qd, &p, 0.0, &opts)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.modes, modes);
            let v = qd + s.qdd * H;
            (q + v * H, v)
        };
        // The generic step at f64 with the modes held (for the velocity columns of a
        // sticking joint: a perturbed slip would start it sliding).
        let nhat: Vec<Vec<f64>> = vec![vec![solve.lambda[2].signum()]];
        let pv = rail_crank::generic::param_values(&p);
        let held = |q: &SVector<f64, 4>, qd: &SVector<f64, 4>| {
            joint_friction_step_generic::<M, f64, 4, 3, 1, 1, NP>(
                q, qd, &pv, 0.0, H, &modes, &nhat, &opts,
            )
            .unwrap_or_else(|| panic!("singular"))
        };
        // Held where the slip is (nearly) zero: sticking, or sliding from rest.
        let vs = (rail_crank::slip_jacobian(&q, &p, 0.0) * qd)[0];
        let sticks = modes[0] == JointMode::Stick || vs.abs() < 1e-4;
        let d = 1e-6;
        for j in 0..4 {
            let e = SVector::<f64, 4>::from_fn(|i, _| if i == j { d } else { 0.0 });
            let (a, b) = (step(&(q + e), &qd), step(&(q - e), &qd));
            for (ours, fd) in [
                (jac.pos_pos.column(j), (a.0 - b.0) / (2.0 * d)),
                (jac.vel_pos.column(j), (a.1 - b.1) / (2.0 * d)),
            ] {
                let scale = fd.amax().max(1.0);
                assert!((ours - fd).amax() < 1e-6 * scale, "q column {j}, {modes:?}");
            }
            let (a, b) = if sticks {
                (held(&q, &(qd + e)), held(&q, &(qd - e)))
            } else {
                (step(&q, &(qd + e)), step(&q, &(qd - e)))
            };
            for (ours, fd) in [
                (jac.pos_vel.column(j), (a.0 - b.0) / (2.0 * d)),
                (jac.vel_vel.column(j), (a.1 - b.1) / (2.0 * d)),
            ] {
                let scale = fd.amax().max(1.0);
                assert!(
                    (ours - fd).amax() < 1e-6 * scale,
                    "qd column {j}, {modes:?}"
                );
            }
        }
        let kind = match modes[0] {
            JointMode::Stick => "stick",
            JointMode::Slide(_) => "slide",
            JointMode::Free => "free",
        };
        *seen.entry(kind).or_insert(0) += 1;
    }
    assert!(seen.get("slide").copied().unwrap_or(0) >= 15, "{seen:?}");
    assert!(seen.get("stick").copied().unwrap_or(0) >= 3, "{seen:?}");
}
