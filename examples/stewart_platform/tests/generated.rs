//! The generated Stewart platform against independent computations.

#[path = "../../../tests/common/mod.rs"]
mod common;

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));

use stewart as m;
type M = m::Model;
const NQ: usize = m::NQ;
const NC: usize = m::NC;
const DOF: usize = m::DOF;
const SOURCE: &str = include_str!("../stewart.mech");

#[test]
fn sizes() {
    assert_eq!((NQ, NC, DOF), (24, 18, 6));
}

#[test]
fn jacobian_matches_central_differences() {
    common::check_jacobian_fd::<NQ, NC, DOF, M>(&m::Params::default(), 100, 21);
}

#[test]
fn residual_matches_dag() {
    common::check_residual_against_dag::<NQ, NC, DOF, M>(
        SOURCE,
        "stewart",
        &m::Params::default(),
        100,
        21,
    );
}

#[test]
fn null_space_on_manifold() {
    let p = m::Params::default();
    let configs = common::random_configurations::<NQ, NC, DOF, M>(&p, 1000, 0.02, 21);
    common::check_null_space::<NQ, NC, DOF, M>(&p, &configs, 21);
}
