//! Exact step Jacobians of Andrews' mechanism (`#![generic]` family through
//! `Builder::generic`): `runtime::step::step_jacobians` against Richardson-extrapolated central
//! differences of the step at 100 random states, relative 1e-7 per block (see
//! `mechgen_test_support::step`).

include!(concat!(env!("OUT_DIR"), "/andrews.rs"));

use rand::SeedableRng;

#[test]
fn andrews_step_jacobians_equal_central_differences() {
    use andrews as m;
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    // The motion's scale: β̇ reaches ~1e3 rad/s within the benchmark's 0.03 s.
    let worst = mechgen_test_support::step::check_step_jacobians::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&mut rng, &p, 100, 0.5, 100.0, 1e-5, 1e-7);
    eprintln!("Andrews: worst relative difference {worst:e}");
}

#[test]
fn andrews_rk4_symbolic_step_jacobians_equal_the_dual_number_ones() {
    // The RK4 step's Jacobian chained through its four stages from the generated
    // derivatives against dual numbers through the same step, 100 random states.
    use andrews as m;
    let opts = mechgen::runtime::step::StepOptions {
        method: mechgen::runtime::step::StepMethod::Rk4,
        ..mechgen::runtime::step::StepOptions::default()
    };
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let worst = mechgen_test_support::step::check_symbolic_step_jacobians_with::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&opts, &mut rng, &p, 100, 0.5, 100.0, 1e-5, 1e-10);
    eprintln!("Andrews RK4: symbolic vs dual worst relative difference {worst:e}");
}

#[test]
fn andrews_symbolic_step_jacobians_equal_the_dual_number_ones() {
    // The state blocks composed from the generated derivatives (`#![derivatives]` through
    // `Builder::derivatives`) against dual numbers through the step, 100 random states.
    use andrews as m;
    let p = m::Params::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let worst = mechgen_test_support::step::check_symbolic_step_jacobians::<
        m::Model,
        { m::NQ },
        { m::NC },
        { m::DOF },
        { m::generic::NP },
    >(&mut rng, &p, 100, 0.5, 100.0, 1e-5, 1e-10);
    eprintln!("Andrews: symbolic vs dual worst relative difference {worst:e}");
}
