//! Integrators must not end silently wrong (issue 8, item 6): fixed-step RK4 reports the
//! constraint defect and energy change it accumulated ([`runtime::simulate::SimStats`]), and DOPRI5
//! rejects a step whose post-step projection moves the state by more than the tolerance.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{
    self, ode::Dopri5Options, ode::OdeSystem, ode::Rk4Options, simulate::Integrator,
    simulate::SimOptions, simulate::Trajectory,
};

mechgen::mechanism! {
    /// A02, N = 1: unit cranks at x = 0 and x = 1 joined by a unit coupler; gravity.
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

mechgen::mechanism! {
    /// Planar slider crank with masses, a spring on the slider and gravity (conservative).
    pub mod slider {
        param g = 9.81;
        coord theta = 0.3;
        coord beta = 1.4721295802647691;
        coord s = 0.39407456415626446;
        independent theta;
        constraint vec2(0.1 * cos(theta), 0.1 * sin(theta)) + vec2(0.3 * sin(beta), -0.3 * cos(beta)) == vec2(s, 0.0);
        body crank { mass = 0.5, inertia = 0.002, com = vec2(0.05 * cos(theta), 0.05 * sin(theta)), angle = theta }
        body rod { mass = 1.0, inertia = 0.0075, com = vec2(0.1 * cos(theta) + 0.15 * sin(beta), 0.1 * sin(theta) - 0.15 * cos(beta)), angle = beta }
        body block { mass = 2.0, com = vec2(s, 0.0) }
        spring k { a = vec2(0.6, 0.0), b = vec2(s, 0.0), stiffness = 400.0, length = 0.2 }
        gravity = vec2(0.0, -g);
    }
}

type V3 = SVector<f64, 3>;

fn energy_at_outputs(traj: &Trajectory<3, 2>, p: &slider::Params) -> f64 {
    let e0 = slider::energy(&traj.q[0], &traj.qd[0], p, traj.t[0]);
    traj.q
        .iter()
        .zip(&traj.qd)
        .zip(&traj.t)
        .map(|((q, qd), &t)| (slider::energy(q, qd, p, t) - e0).abs())
        .fold(0.0, f64::max)
}

#[test]
fn rk4_reports_the_defect_and_energy_change_it_accumulated() {
    let p = slider::Params::default();
    let q0 = <slider::Model as runtime::Mechanism<3, 2, 1>>::nominal_q();
    let u0 = SVector::<f64, 1>::new(25.0);
    let run = |h: f64| {
        let opts = SimOptions {
            integrator: Integrator::Rk4(Rk4Options {
                h,
                ..Default::default()
            }),
            output_times: (1..20).map(|k| k as f64 * 0.05).collect(),
            ..Default::default()
        };
        let proj = runtime::simulate::simulate_projection::<slider::Model, 3, 2, 1>(
            &q0, &u0, &p, 0.0, 1.0, &opts,
        )
        .expect("projection route");
        let qd0 = proj.qd[0];
        let lag = runtime::simulate::simulate_lagrange::<slider::Model, 3, 2, 1>(
            &proj.q[0], &qd0, &p, 0.0, 1.0, &opts,
        )
        .expect("Lagrange route");
        (proj, lag)
    };
    let (coarse_p, coarse_l) = run(1e-2);
    let (fine_p, fine_l) = run(1e-3);
    for (name, coarse, fine) in [
        ("projection", &coarse_p, &fine_p),
        ("lagrange", &coarse_l, &fine_l),
    ] {
        let (ec, ef) = (
            coarse.stats.energy_change.expect("energy"),
            fine.stats.energy_change.expect("energy"),
        );
        eprintln!(
            "{name}: h = 1e-2: energy change {ec:.3e}, max |C| {:.3e}, max correction {:.3e}; \
             h = 1e-3: {ef:.3e}, {:.3e}, {:.3e}",
            coarse.stats.max_residual,
            coarse.stats.max_position_correction,
            fine.stats.max_residual,
            fine.stats.max_position_correction
        );
        // The statistic covers every step, so it bounds what the outputs show.
        assert!(
            ec >= energy_at_outputs(coarse, &p) * (1.0 - 1e-12),
            "{name}"
        );
        assert!(ef >= energy_at_outputs(fine, &p) * (1.0 - 1e-12), "{name}");
        // Fourth order: ten times the step, ~10⁴ times the defect.
        assert!(ec > 1e3 * ef, "{name}: {ec:e} vs {ef:e}");
        assert!(
            coarse.stats.max_residual > 1e3 * fine.stats.max_residual,
            "{name}"
        );
        assert!(coarse.stats.max_residual > 0.0 && coarse.stats.max_position_correction > 0.0);
        assert!(
            coarse.stats.ode.max_projection > fine.stats.ode.max_projection,
            "{name}"
        );
    }
}

#[test]
fn rk4_through_flat_positions_reports_the_defect() {
    // The parallelogram through ten flat positions with the Lagrange route and fixed steps.
    let p = parallelogram::Params::default();
    let th0 = std::f64::consts::FRAC_PI_2;
    let q0 = V3::new(th0, th0, 0.0);
    let qd0 = V3::new(-12.0, -12.0, 0.0);
    let mut changes = Vec::new();
    for h in [1e-2, 1e-3] {
        let opts = SimOptions {
            integrator: Integrator::Rk4(Rk4Options {
                h,
                ..Default::default()
            }),
            // Through the bifurcations on purpose (the default stops at the first).
            rank_drop: runtime::simulate::RankDrop::Continue,
            ..Default::default()
        };
        let lag = runtime::simulate::simulate_lagrange::<parallelogram::Model, 3, 2, 1>(
            &q0, &qd0, &p, 0.0, 2.5, &opts,
        )
        .expect("fixed steps through the flat positions");
        let de = lag.stats.energy_change.expect("energy");
        eprintln!(
            "h = {h:e}: energy change {de:.3e}, max |C| before projection {:.3e}, \
             max corrections {:.3e} (q) / {:.3e} (q̇)",
            lag.stats.max_residual,
            lag.stats.max_position_correction,
            lag.stats.max_velocity_correction
        );
        changes.push(de);
    }
    // Reported, and fourth order: ten times the step, ≈ 10⁴ times the energy change.
    assert!(changes[0] > 1e-7, "{changes:?}");
    assert!(changes[1] < 1e-3 * changes[0], "{changes:?}");
}

/// `y' = A y + 1e-4 y` (a rotation with a slow growth) with a projection back onto the
/// unit circle: the projection moves each step by ≈ 1e-4 h, beyond a 1e-6 tolerance for
/// the steps (≈ 0.1) the error estimate alone accepts.
struct Growing;

impl OdeSystem<SVector<f64, 2>> for Growing {
    type Error = std::convert::Infallible;
    fn rhs(&mut self, _t: f64, y: &SVector<f64, 2>) -> Result<SVector<f64, 2>, Self::Error> {
        Ok(SVector::<f64, 2>::new(
            -y[1] + 1e-4 * y[0],
            y[0] + 1e-4 * y[1],
        ))
    }
    fn project(&mut self, _t: f64, y: &mut SVector<f64, 2>) -> Result<(), Self::Error> {
        *y /= y.norm();
        Ok(())
    }
}

#[test]
fn dopri5_rejects_steps_whose_projection_exceeds_the_tolerance() {
    // A first step of 0.1: its projection (≈ 1e-5) is ten times the tolerance.
    let opts = Dopri5Options {
        rtol: 1e-6,
        atol: 1e-8,
        h0: Some(0.1),
        ..Default::default()
    };
    let sol = runtime::ode::dopri5(
        &mut Growing,
        0.0,
        SVector::<f64, 2>::new(1.0, 0.0),
        &[1.0],
        &opts,
    )
    .expect("integrates");
    let s = sol.stats;
    eprintln!("{s:?}");
    assert!(s.projection_rejections > 0, "{s:?}");
    assert!(s.max_projection <= 1.0, "{s:?}");
    // Accepted steps are short enough for the projection to stay within the tolerance:
    // 1e-4 h ≤ ~1e-6 (weighted RMS) → h ≲ 1.4e-2 → at least 70 steps over 1 s.
    assert!(s.steps >= 70, "{s:?}");
    // The controller learns from the projection: rejections stay a fraction of the steps.
    assert!(s.projection_rejections < s.steps, "{s:?}");
    // The rotation itself is exact: the angle is 1 rad.
    let y = sol.y[0];
    assert!(
        (y[0] - 1f64.cos()).abs() < 1e-6 && (y[1] - 1f64.sin()).abs() < 1e-6,
        "{y}"
    );
}
