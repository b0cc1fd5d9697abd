//! Exact step Jacobians of the Stewart platform (`#![generic]` family through
//! `Builder::generic`): `runtime::step_jacobians` against Richardson-extrapolated central
//! differences of the step at 100 random states, relative 1e-7 per block (see
//! `mechgen_test_support::step`).

include!(concat!(env!("OUT_DIR"), "/stewart.rs"));

use rand::SeedableRng;

#[test]
fn stewart_step_jacobians_equal_central_differences() {
    use stewart as m;
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let worst = mechgen_test_support::step::check_step_jacobians::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&mut rng, &p, 100, 0.05, 0.5, 1e-3, 1e-7);
    eprintln!("Stewart: worst relative difference {worst:e}");
}

#[test]
fn stewart_symbolic_step_jacobians_equal_the_dual_number_ones() {
    // The state blocks composed from the generated derivatives (`#![derivatives]` through
    // `Builder::derivatives`) against dual numbers through the step, 100 random states.
    use stewart as m;
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    let worst = mechgen_test_support::step::check_symbolic_step_jacobians::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&mut rng, &p, 100, 0.05, 0.5, 1e-3, 1e-10);
    eprintln!("Stewart: symbolic vs dual worst relative difference {worst:e}");
}
