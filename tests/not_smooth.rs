//! `simulate` refuses a model whose inequality constraints or joint friction its smooth
//! routes would drop (a ball falling through its floor, a block sliding on a rough rail as on
//! a smooth one), and names the `contact` function that simulates it; models of equality
//! constraints only are unaffected.

use mechgen::nalgebra::SVector;
use mechgen::runtime::{simulate, Dynamics, Options, SimError, State};

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
    match simulate(model, p, &start, 1.0, &Options::default()) {
        Err(e) => e,
        Ok(run) => panic!(
            "simulated {} to q = {:?} as if it had no inequality or friction",
            M::NAME,
            run.q.last()
        ),
    }
}

#[test]
fn a_model_with_inequalities_is_refused_with_the_route_that_simulates_it() {
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
        text.contains("floor")
            && text.contains("mechgen::runtime::contact::simulate_contact_adaptive"),
        "{text}"
    );
}

#[test]
fn a_frictional_contact_names_the_friction_route() {
    let e = refused(rough_ball::Model, &rough_ball::Params::default());
    assert_eq!(
        e,
        SimError::NotSmooth {
            route: "contact::simulate_friction_adaptive",
            names: &["floor"],
        }
    );
}

#[test]
fn joint_friction_names_the_joint_friction_route() {
    let e = refused(rail::Model, &rail::Params::default());
    assert_eq!(
        e,
        SimError::NotSmooth {
            route: "contact::simulate_joint_friction_adaptive",
            names: &["rail"],
        }
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
}
