//! `simulate` carries models with inequality constraints or joint friction by its
//! event-located route (the default `Route::Auto`): a ball bouncing on a floor, a block
//! sliding to rest on a rough floor and on a rough rail, at the exact event times, with the
//! events in the result. A smooth route asked for explicitly refuses them (it would drop the
//! inequalities: a ball falling through its floor) and names the route that carries them;
//! models of equality constraints only are unaffected.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate, Dynamics, EventKind, Options, Route, SimError, State};

mechgen::mechanism! {
    /// A ball over a floor.
    pub mod ball {
        param g = 9.81;
        coord x = 0.0;
        coord y = 1.0;
        body ball { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        inequality floor: y >= 0.0, restitution = 0.5;
    }
}

mechgen::mechanism! {
    /// The same ball with Coulomb friction on the floor.
    pub mod rough_ball {
        param g = 9.81;
        coord x = 0.0;
        coord y = 1.0;
        body ball { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        inequality floor: y >= 0.0, friction = 0.4, tangent = der(x);
    }
}

mechgen::mechanism! {
    /// A block on a rough horizontal rail.
    pub mod rail {
        param g = 9.81;
        coord x = 0.0;
        coord y = 0.0;
        body block { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        constraint rail: y == 0.0, friction = 0.3, slip = der(x);
    }
}

mechgen::mechanism! {
    /// A free particle: nothing the smooth routes cannot carry.
    pub mod free {
        param g = 9.81;
        coord x = 0.0;
        coord y = 1.0;
        body ball { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
    }
}

fn refused<M, const NQ: usize, const NC: usize, const DOF: usize>(
    model: M,
    p: &M::Params,
) -> SimError
where
    M: Dynamics<NQ, NC, DOF>,
{
    let start = State::at_rest(0.0, M::nominal_q());
    let opts = Options {
        route: Route::Projection,
        ..Options::default()
    };
    match simulate(model, p, &start, 1.0, &opts) {
        Err(e) => e,
        Ok(run) => panic!(
            "simulated {} to q = {:?} as if it had no inequality or friction",
            M::NAME,
            run.q.last()
        ),
    }
}

#[test]
fn a_smooth_route_refuses_inequalities_and_names_the_route_that_carries_them() {
    let e = refused(ball::Model, &ball::Params::default());
    assert_eq!(
        e,
        SimError::NotSmooth {
            route: "contact::simulate_contact_adaptive",
            names: &["floor"],
        }
    );
    let text = e.to_string();
    assert!(
        text.contains("floor") && text.contains("Route::Auto"),
        "{text}"
    );
    let e = refused(rough_ball::Model, &rough_ball::Params::default());
    assert!(matches!(
        e,
        SimError::NotSmooth {
            route: "contact::simulate_friction_adaptive",
            ..
        }
    ));
    let e = refused(rail::Model, &rail::Params::default());
    assert!(matches!(
        e,
        SimError::NotSmooth {
            route: "contact::simulate_joint_friction_adaptive",
            ..
        }
    ));
}

#[test]
fn a_ball_bounces_on_its_floor_at_the_exact_times() {
    // Dropped from 1 m with restitution 1/2: impacts at t1 = sqrt(2 h / g), then every
    // bounce rises a quarter as high, t_{k+1} = t_k + 2 e^k sqrt(2 h / g).
    let p = ball::Params::default();
    let start = State::at_rest(0.0, SVector::from([0.0, 1.0]));
    let run = simulate(
        ball::Model,
        &p,
        &start,
        1.5,
        &Options::default().with_output_steps(0.0, 1.5, 30),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let fall = (2.0 / p.g).sqrt();
    let mut exact = vec![fall];
    for k in 1..3 {
        let prev = exact[k - 1];
        exact.push(prev + 2.0 * 0.5f64.powi(k as i32) * fall);
    }
    let touches: Vec<f64> = run
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Touch && e.name == "floor")
        .map(|e| e.t)
        .collect();
    assert!(touches.len() >= 3, "{:?}", run.events);
    for (t, e) in touches.iter().zip(&exact) {
        assert!((t - e).abs() < 1e-8, "impact at {t}, exact {e}");
    }
    // Never below the floor, reported at the output times.
    assert_eq!(run.t.len(), 31);
    assert!(run.q.iter().all(|q| q[1] >= -1e-9));
    assert!(run.global_error.is_none());
}

#[test]
fn a_block_slides_to_rest_on_a_rough_floor_and_on_a_rough_rail() {
    // Launched at v0: stops at v0 / (mu g) after v0^2 / (2 mu g).
    let v0 = 2.0;
    let p = rough_ball::Params::default();
    let start = State::new(0.0, SVector::from([0.0, 0.0]), SVector::from([v0, 0.0]));
    let run = simulate(rough_ball::Model, &p, &start, 1.0, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let (t_stop, x_stop) = (v0 / (0.4 * p.g), v0 * v0 / (2.0 * 0.4 * p.g));
    let stop = run
        .events
        .iter()
        .find(|e| e.kind == EventKind::Stop)
        .copied();
    assert!(
        stop.is_some_and(|e| (e.t - t_stop).abs() < 1e-8 && e.name == "floor"),
        "{:?}",
        run.events
    );
    let end = run.q[run.q.len() - 1];
    assert!(
        (end[0] - x_stop).abs() < 1e-8 * x_stop,
        "{} vs {x_stop}",
        end[0]
    );

    let p = rail::Params::default();
    let run = simulate(rail::Model, &p, &start, 1.0, &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let (t_stop, x_stop) = (v0 / (0.3 * p.g), v0 * v0 / (2.0 * 0.3 * p.g));
    let stop = run
        .events
        .iter()
        .find(|e| e.kind == EventKind::Stop)
        .copied();
    assert!(
        stop.is_some_and(|e| (e.t - t_stop).abs() < 1e-8 && e.name == "rail"),
        "{:?}",
        run.events
    );
    let end = run.q[run.q.len() - 1];
    assert!(
        (end[0] - x_stop).abs() < 1e-8 * x_stop,
        "{} vs {x_stop}",
        end[0]
    );
}

#[test]
fn a_smooth_model_still_simulates() {
    // The free particle falls g t² / 2 in 1 s.
    let p = free::Params::default();
    let start = State::at_rest(0.0, SVector::from(free::NOMINAL_Q));
    let run = simulate(free::Model, &p, &start, 1.0, &Options::default()).expect("a free fall");
    let y = run.q[run.q.len() - 1][1];
    assert!((y - (1.0 - 0.5 * p.g)).abs() < 1e-8, "y(1) = {y}");
    assert!(run.events.is_empty());
}
