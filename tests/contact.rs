//! Inequality constraints (`inequality NAME: g >= 0;`) with the paper's corner particle
//! (Jonquet, Nocent, Remion, GRAPP 2007): a particle of mass m in the corner between
//! g1 = x − y ≥ 0 and g2 = y ≥ 0, a constant force f, at rest in the corner at t = 0.

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{
    contact::contact_accelerations, contact::simulate_contact, contact::ActiveSet,
    contact::ContactOptions, contact::ContactPath, Dynamics, Inequalities, Mechanism,
};

include!("../examples/mechanisms/corner.rs");

type M = corner::Model;
type V = SVector<f64, 2>;

fn params(m: f64, f: (f64, f64)) -> corner::Params {
    corner::Params {
        m,
        fx: f.0,
        fy: f.1,
    }
}

fn opts(algorithm: ActiveSet) -> ContactOptions {
    ContactOptions {
        algorithm,
        locate_events: false,
        ..ContactOptions::default()
    }
}

#[test]
fn the_generated_inequalities_are_the_model() {
    assert_eq!(corner::NI, 2);
    assert_eq!(
        <M as Inequalities<2, 0, 2, 2>>::INEQUALITY_NAMES,
        ["g1", "g2"]
    );
    let q = V::new(0.7, 0.2);
    let p = params(2.0, (2.0, -1.0));
    assert!((corner::inequality(&q, &p, 0.0) - V::new(0.7 - 0.2, 0.2)).norm() == 0.0);
    assert_eq!(
        corner::inequality_jacobian(&q, &p, 0.0),
        SMatrix::<f64, 2, 2>::new(1.0, -1.0, 0.0, 1.0)
    );
    assert_eq!(
        corner::inequality_gamma(&q, &V::new(1.0, 2.0), &p, 0.0),
        V::zeros()
    );
    assert_eq!(corner::RESTITUTION, [0.0, 0.0]);
}

#[test]
fn algorithm_3_gives_the_papers_multipliers() {
    for m in [2.0, 3.0] {
        // f = (2, −1): only g2 is handled, λ2 = 1, q̈ = (2/m, 0).
        let p = params(m, (2.0, -1.0));
        let s = contact_accelerations::<M, 2, 0, 2, 2>(
            &V::zeros(),
            &V::zeros(),
            &p,
            0.0,
            &[],
            &opts(ActiveSet::Right),
        )
        .expect("solves");
        assert_eq!(s.handled, vec![1]);
        assert!((s.lambda[0] - 1.0).abs() < 1e-12, "{:?}", s.lambda);
        assert!((s.qdd - V::new(2.0 / m, 0.0)).norm() < 1e-12);
        assert_eq!(s.path, ContactPath::ActiveSet);
        // f = (−1, −2): g2 first, then g1; λ = (1, 3) and the particle stays in the corner.
        let p = params(m, (-1.0, -2.0));
        let s = contact_accelerations::<M, 2, 0, 2, 2>(
            &V::zeros(),
            &V::zeros(),
            &p,
            0.0,
            &[],
            &opts(ActiveSet::Right),
        )
        .expect("solves");
        assert_eq!(s.handled, vec![0, 1]);
        assert!((s.lambda[0] - 1.0).abs() < 1e-12 && (s.lambda[1] - 3.0).abs() < 1e-12);
        assert!(s.qdd.norm() < 1e-12);
        assert_eq!(s.iterations, 3);
    }
}

/// The lowest `y` and `x − y` over `steps` steps of `h` from rest in the corner.
fn lowest(algorithm: ActiveSet, m: f64, f: (f64, f64)) -> (f64, f64) {
    let p = params(m, f);
    let tr = simulate_contact::<M, 2, 0, 2, 2>(
        &V::zeros(),
        &V::zeros(),
        &p,
        0.0,
        0.01,
        100,
        &opts(algorithm),
    )
    .expect("simulates");
    let y = tr.q.iter().map(|q| q[1]).fold(f64::INFINITY, f64::min);
    let g1 =
        tr.q.iter()
            .map(|q| q[0] - q[1])
            .fold(f64::INFINITY, f64::min);
    (y, g1)
}

#[test]
fn algorithm_3_keeps_the_particle_legal_and_the_others_do_not() {
    for m in [2.0, 3.0] {
        // Algorithm 3: y ≥ −1e-8 and x − y ≥ −1e-8 for both forces.
        for f in [(2.0, -1.0), (-1.0, -2.0)] {
            let (y, g1) = lowest(ActiveSet::Right, m, f);
            assert!(
                y >= -1e-8 && g1 >= -1e-8,
                "m = {m}, f = {f:?}: y {y:e}, x − y {g1:e}"
            );
        }
        // Platt (f = (2, −1)): both rows handled at the start with negative multipliers,
        // dropped, and the particle falls below y = 0 by about h²/m before g2 is re-added.
        let (y, _) = lowest(ActiveSet::Platt, m, (2.0, -1.0));
        eprintln!("Platt, m = {m}: lowest y {y:e}");
        assert!(y < -0.5e-4 / m && y > -1e-2, "Platt, m = {m}: y {y:e}");
        // Algorithm 2 (f = (−1, −2)): g2 only; λ2 pushes the particle through g1.
        let (_, g1) = lowest(ActiveSet::Tendency, m, (-1.0, -2.0));
        eprintln!("algorithm 2, m = {m}: lowest x − y {g1:e}");
        assert!(g1 < -1e-3, "algorithm 2, m = {m}: x − y {g1:e}");
    }
}

mechgen::mechanism! {
    /// A particle on the wedge y ≥ 0, x + y ≥ 0 (apex at the origin).
    pub mod wedge {
        param fx = 1.0;
        param fy = -2.0;
        coord x = 0.0;
        coord y = 0.0;
        body particle { mass = 1.0, com = vec2(x, y) }
        force x = fx;
        force y = fy;
        inequality floor: y >= 0.0;
        inequality slope: x + y >= 0.0;
    }
}

#[test]
fn the_lcp_finishes_where_algorithm_3_leaves_a_negative_multiplier() {
    // f = (1, −2): both rows tend to be violated by the free acceleration, so algorithm 3
    // handles both, and the slope's multiplier is −1 (it pulls). The complementary answer
    // handles the floor alone: q̈ = (1, 0), λ = 2, and the slope separates (J q̈ = 1 > 0).
    let p = wedge::Params::default();
    let z = SVector::<f64, 2>::zeros();
    let alone = ContactOptions {
        lcp_fallback: false,
        ..ContactOptions::default()
    };
    let s = contact_accelerations::<wedge::Model, 2, 0, 2, 2>(&z, &z, &p, 0.0, &[], &alone)
        .expect("solves");
    assert_eq!(s.handled, vec![0, 1]);
    assert!((s.lambda[1] + 1.0).abs() < 1e-12, "{:?}", s.lambda);
    let s = contact_accelerations::<wedge::Model, 2, 0, 2, 2>(
        &z,
        &z,
        &p,
        0.0,
        &[],
        &ContactOptions::default(),
    )
    .expect("solves");
    assert_eq!(s.handled, vec![0]);
    assert!(
        matches!(s.path, ContactPath::Lcp { pivots: 1 }),
        "{:?}",
        s.path
    );
    assert!((s.lambda[0] - 2.0).abs() < 1e-12);
    assert!((s.qdd - SVector::<f64, 2>::new(1.0, 0.0)).norm() < 1e-12);
}

/// Four unit balls of radius 1/2 on a line (Newton's cradle without strings) in module `$m`
/// with restitution `$e`: ball 1 comes in, balls 2, 3, 4 touch.
macro_rules! cradle {
    ($m:ident, $e:tt) => {
        mechgen::mechanism! {
            pub mod $m {
                const e = $e;
                coord x1 = 0.0;
                coord x2 = 2.0;
                coord x3 = 3.0;
                coord x4 = 4.0;
                body b1 { mass = 1.0, com = vec2(x1, 0.0) }
                body b2 { mass = 1.0, com = vec2(x2, 0.0) }
                body b3 { mass = 1.0, com = vec2(x3, 0.0) }
                body b4 { mass = 1.0, com = vec2(x4, 0.0) }
                inequality c12: x2 - x1 >= 1.0, restitution = e;
                inequality c23: x3 - x2 >= 1.0, restitution = e;
                inequality c34: x4 - x3 >= 1.0, restitution = e;
            }
        }
    };
}

cradle!(cradle, 1.0);
cradle!(soft_cradle, 0.5);

#[test]
fn impacts_are_located_and_pass_through_three_simultaneous_contacts() {
    let q0 = SVector::<f64, 4>::from(cradle::NOMINAL_Q);
    let v0 = SVector::<f64, 4>::new(1.0, 0.0, 0.0, 0.0);
    // e = 1: the impact comes at t = 1 (the gap is 1 at speed 1), inside the step from
    // 0.99 to 1.02 (located by bisection); three contacts take impulses at once; kinetic energy and momentum are
    // kept, and no pair overlaps.
    let p = cradle::Params::default();
    let tr = simulate_contact::<cradle::Model, 4, 0, 4, 3>(
        &q0,
        &v0,
        &p,
        0.0,
        0.03,
        70,
        &ContactOptions::default(),
    )
    .expect("simulates");
    assert_eq!(tr.impacts, 1, "events at {:?}", tr.events);
    assert!((tr.events[0] - 1.0).abs() < 1e-9, "{:?}", tr.events);
    assert_eq!(tr.impact_contacts[0], vec![0, 1, 2]);
    let e0 = <cradle::Model as Dynamics<4, 0, 4>>::energy(&q0, &v0, &p, 0.0).expect("energy");
    for (q, v) in tr.q.iter().zip(&tr.qd) {
        let g = cradle::inequality(q, &p, 0.0);
        assert!(g.min() >= -1e-8, "overlap {g:?}");
        let e = <cradle::Model as Dynamics<4, 0, 4>>::energy(q, v, &p, 0.0).expect("energy");
        assert!((e - e0).abs() <= 1e-8 * e0, "energy {e} vs {e0}");
        assert!((v.sum() - 1.0).abs() < 1e-12, "momentum {}", v.sum());
    }
    // e = 1/2: energy never increases and drops at the impact.
    let p = soft_cradle::Params::default();
    let tr = simulate_contact::<soft_cradle::Model, 4, 0, 4, 3>(
        &q0,
        &v0,
        &p,
        0.0,
        0.01,
        200,
        &ContactOptions::default(),
    )
    .expect("simulates");
    let energy = |q: &SVector<f64, 4>, v: &SVector<f64, 4>| {
        <soft_cradle::Model as Dynamics<4, 0, 4>>::energy(q, v, &p, 0.0).expect("energy")
    };
    let mut last = energy(&q0, &v0);
    for (q, v) in tr.q.iter().zip(&tr.qd) {
        let e = energy(q, v);
        assert!(e <= last * (1.0 + 1e-12), "energy rose: {e} after {last}");
        assert!(soft_cradle::inequality(q, &p, 0.0).min() >= -1e-8);
        last = e;
    }
    assert!(last < 0.99 * energy(&q0, &v0), "energy {last}");
    assert_eq!(
        <soft_cradle::Model as Mechanism<4, 0, 4>>::NAME,
        "soft_cradle"
    );
}

include!("../examples/mechanisms/billiard.rs");
billiard!(elastic_billiard, 1.0);
billiard!(lossy_billiard, 0.8);

/// The cue ball's initial velocity: toward the rack.
fn cue() -> SVector<f64, 22> {
    let mut v = SVector::<f64, 22>::zeros();
    v[20] = -2.0;
    v[21] = -1.4;
    v
}

macro_rules! billiard_run {
    ($m:ident) => {{
        let p = $m::Params::default();
        let q0 = SVector::<f64, 22>::from($m::NOMINAL_Q);
        let tr = simulate_contact::<$m::Model, 22, 0, 22, 77>(
            &q0,
            &cue(),
            &p,
            0.0,
            0.01,
            300,
            &ContactOptions::default(),
        )
        .expect("simulates");
        let energy: Vec<f64> =
            tr.q.iter()
                .zip(&tr.qd)
                .map(|(q, v)| {
                    <$m::Model as Dynamics<22, 0, 22>>::energy(q, v, &p, 0.0).expect("energy")
                })
                .collect();
        let deepest =
            tr.q.iter()
                .map(|q| $m::inequality(q, &p, 0.0).min())
                .fold(f64::INFINITY, f64::min);
        (tr, energy, deepest)
    }};
}

#[test]
fn the_billiard_keeps_its_balls_apart_and_its_energy() {
    assert_eq!(elastic_billiard::NI, 77);
    assert_eq!(elastic_billiard::INEQUALITY_NAMES[2], "touch_0_1");
    // e = 1: kinetic energy kept to 1e-8 (relative) at every step, no overlap beyond 1e-8.
    let (tr, energy, deepest) = billiard_run!(elastic_billiard);
    eprintln!(
        "elastic billiard: {} impacts, deepest {deepest:e}, energy {} → {}",
        tr.impacts,
        energy[0],
        energy.last().copied().unwrap_or(f64::NAN)
    );
    assert!(tr.impacts >= 5, "{} impacts", tr.impacts);
    assert!(deepest >= -1e-8, "overlap {deepest:e}");
    for e in &energy {
        assert!(
            (e - energy[0]).abs() <= 1e-8 * energy[0],
            "{e} vs {}",
            energy[0]
        );
    }
    // e = 0.8: never more energy than before, and less in the end.
    let (tr, energy, deepest) = billiard_run!(lossy_billiard);
    assert!(tr.impacts >= 5, "{} impacts", tr.impacts);
    assert!(deepest >= -1e-8, "overlap {deepest:e}");
    for w in energy.windows(2) {
        assert!(
            w[1] <= w[0] * (1.0 + 1e-12),
            "energy rose {} → {}",
            w[0],
            w[1]
        );
    }
    assert!(energy.last().copied().unwrap_or(f64::NAN) < 0.95 * energy[0]);
}

include!("../examples/mechanisms/stopped_crank.rs");

#[test]
fn a_closed_loop_mechanism_hits_its_end_stop() {
    use mechgen::runtime::{assemble::assemble, assemble::AssemblyOptions};
    type Sc = stopped_crank::Model;
    let p = stopped_crank::Params::default();
    let q0 = assemble::<Sc, 3, 2, 1>(
        &SVector::<f64, 3>::from(stopped_crank::NOMINAL_Q),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .expect("assembles")
    .q;
    let opts = ContactOptions {
        baumgarte: (20.0, 20.0),
        ..ContactOptions::default()
    };
    let tr = simulate_contact::<Sc, 3, 2, 1, 1>(&q0, &SVector::zeros(), &p, 0.0, 1e-3, 3000, &opts)
        .expect("simulates");
    let s_max = tr.q.iter().map(|q| q[2]).fold(f64::NEG_INFINITY, f64::max);
    let drift =
        tr.q.iter()
            .map(|q| stopped_crank::residual(q, &p, 0.0).norm())
            .fold(0.0, f64::max);
    eprintln!(
        "stopped crank: s from {:.4} to at most {s_max:.9} (stop 0.36), {} impacts (last at {:?}), |C| ≤ {drift:e}, lcp steps {}",
        q0[2], tr.impacts, tr.events.last(), tr.lcp_steps
    );
    // Before: resting on the stop with restitution 1/2, nearly every step ended with a tiny
    // approaching velocity whose bounce the next step undid (a Zeno sequence): 2,478
    // impulses in 3,000 steps. Impacts slower than twice the step's acceleration times the
    // step are plastic now: a few bounces, then the stop is handled at acceleration level.
    assert!(tr.impacts >= 1, "the slider never reached the stop");
    assert!(tr.impacts <= 20, "{} impacts (Zeno chatter)", tr.impacts);
    let last_event = tr.events.last().copied().unwrap_or(0.0);
    assert!(last_event < 2.0, "impacts until t = {last_event}");
    let resting = tr.handled.iter().rev().take(500).all(|h| h == &[0]);
    assert!(resting, "the stop is not handled over the last 500 steps");
    assert!(s_max <= 0.36 + 1e-8, "through the stop: {s_max}");
    assert!(drift < 1e-4, "the loop drifts apart: {drift:e}");
}

mechgen::mechanism! {
    /// A bouncing ball: a particle above a floor with restitution 0.8.
    pub mod bouncing {
        param g = 9.81;
        coord x = 0.0;
        coord y = 1.0;
        body ball { mass = 1.0, com = vec2(x, y) }
        gravity = vec2(0.0, -g);
        inequality floor: y >= 0.0, restitution = 0.8;
    }
}

#[test]
fn a_bouncing_ball_comes_to_rest_after_finitely_many_impacts() {
    // The exact bounces (e = 0.8 from 1 m) are infinitely many before t = 4.0 s: the first
    // lands at 0.4515 s, each next after 0.8 times the last flight, the sum is 0.4515 (1 +
    // 2·0.8/0.2) = 4.06 s. The fixed step cuts the tail: impacts slower than twice the
    // step's acceleration times the step are plastic, and the ball rests on the floor.
    let h = 1e-3;
    let tr = simulate_contact::<bouncing::Model, 2, 0, 2, 1>(
        &SVector::<f64, 2>::new(0.0, 1.0),
        &SVector::<f64, 2>::new(0.2, 0.0),
        &bouncing::Params::default(),
        0.0,
        h,
        6000,
        &ContactOptions::default(),
    )
    .expect("simulates");
    let first = tr.events.first().copied().unwrap_or(f64::NAN);
    assert!(
        (first - (2.0f64 / 9.81).sqrt()).abs() < 2e-3,
        "first impact at {first}"
    );
    assert!(
        tr.impacts >= 10 && tr.impacts <= 60,
        "{} impacts",
        tr.impacts
    );
    let last = tr.events.last().copied().unwrap_or(f64::NAN);
    assert!(
        last < 4.2,
        "last impact at {last} (the exact series ends at 4.06 s)"
    );
    let (q, qd) = (tr.q.last().expect("state"), tr.qd.last().expect("state"));
    assert!(
        q[1].abs() < 1e-8 && qd[1].abs() < 1e-8,
        "at rest: y = {}, ẏ = {}",
        q[1],
        qd[1]
    );
    // Energy never rises by more than semi-implicit Euler's own O(g² h²) per step.
    let e = |k: usize| 0.5 * tr.qd[k].norm_squared() + 9.81 * tr.q[k][1];
    let slack = 9.81f64.powi(2) * h * h;
    for k in 1..tr.q.len() {
        assert!(
            e(k) <= e(k - 1) + slack,
            "energy rose at step {k}: {} → {}",
            e(k - 1),
            e(k)
        );
    }
    assert!(e(tr.q.len() - 1) < 0.01 * e(0));
}

/// The bouncing ball on the adaptive integrator: every impact time equals the exact
/// series (first at √(2/g), each flight 0.8 times the last) to 1e-9 while the bounces rise
/// above `rest_height`; the ball then rests on the floor; energy never rises.
#[test]
fn the_adaptive_contact_simulator_lands_on_the_exact_impact_times() {
    use mechgen::runtime::{contact::simulate_contact_adaptive, contact::AdaptiveContactOptions};
    let g = 9.81;
    let opts = AdaptiveContactOptions {
        output_times: (1..50).map(|k| k as f64 * 0.1).collect(),
        ..AdaptiveContactOptions::default()
    };
    let tr = simulate_contact_adaptive::<bouncing::Model, 2, 0, 2, 1>(
        &SVector::<f64, 2>::new(0.0, 1.0),
        &SVector::<f64, 2>::new(0.2, 0.0),
        &bouncing::Params::default(),
        0.0,
        5.0,
        &opts,
    )
    .expect("simulates");
    // The exact impact times while the bounce height 0.64^k m stays above 1e-6 m.
    let mut exact = vec![(2.0f64 / g).sqrt()];
    let mut v = g * exact[0];
    while (0.8 * v).powi(2) / (2.0 * g) > 1e-5 {
        v *= 0.8;
        exact.push(exact.last().copied().unwrap_or(0.0) + 2.0 * v / g);
    }
    assert!(exact.len() >= 20);
    for (k, te) in exact.iter().enumerate() {
        let got = tr.events.get(k).copied().unwrap_or(f64::NAN);
        assert!((got - te).abs() < 1e-9, "impact {k}: {got} vs {te}");
    }
    assert!(tr.impacts < 60, "{} impacts", tr.impacts);
    let (q, qd) = (tr.q.last().expect("state"), tr.qd.last().expect("state"));
    assert_eq!(*tr.t.last().expect("times"), 5.0);
    assert!(
        q[1].abs() < 1e-8 && qd[1].abs() < 1e-8,
        "at rest: {q:?} {qd:?}"
    );
    assert!(
        (qd[0] - 0.2).abs() < 1e-12,
        "the horizontal velocity is untouched"
    );
    let e = |k: usize| 0.5 * tr.qd[k][1].powi(2) + g * tr.q[k][1];
    for k in 1..tr.q.len() {
        assert!(e(k) <= e(k - 1) + 1e-9, "energy rose at {}", tr.t[k]);
        assert!(
            tr.q[k][1] >= -2e-9,
            "below the floor at {}: {}",
            tr.t[k],
            tr.q[k][1]
        );
    }
}

/// The end-stopped slider crank on the adaptive integrator: the first impact at the same
/// time as the fixed-step simulator's (within its O(h) error), the slider never through
/// the stop, the loop closed (projection), and the stop at rest in the end.
#[test]
fn the_adaptive_contact_simulator_handles_a_closed_loop_and_its_stop() {
    use mechgen::runtime::{
        assemble::assemble, assemble::AssemblyOptions, contact::simulate_contact_adaptive,
        contact::AdaptiveContactOptions,
    };
    type Sc = stopped_crank::Model;
    let p = stopped_crank::Params::default();
    let q0 = assemble::<Sc, 3, 2, 1>(
        &SVector::<f64, 3>::from(stopped_crank::NOMINAL_Q),
        &p,
        0.0,
        &AssemblyOptions::default(),
    )
    .expect("assembles")
    .q;
    let opts = AdaptiveContactOptions {
        output_times: (1..300).map(|k| k as f64 * 0.01).collect(),
        ..AdaptiveContactOptions::default()
    };
    let tr =
        simulate_contact_adaptive::<Sc, 3, 2, 1, 1>(&q0, &SVector::zeros(), &p, 0.0, 3.0, &opts)
            .expect("simulates");
    let fixed = simulate_contact::<Sc, 3, 2, 1, 1>(
        &q0,
        &SVector::zeros(),
        &p,
        0.0,
        1e-4,
        10_000,
        &ContactOptions {
            baumgarte: (20.0, 20.0),
            ..ContactOptions::default()
        },
    )
    .expect("fixed steps");
    let (a, b) = (tr.events[0], fixed.events[0]);
    eprintln!(
        "stopped crank, adaptive: first impact {a:.9} (fixed step {b:.9}), {} impacts, {} events",
        tr.impacts,
        tr.events.len()
    );
    assert!((a - b).abs() < 2e-3, "first impact {a} vs {b}");
    assert!(
        tr.impacts >= 1 && tr.impacts <= 40,
        "{} impacts",
        tr.impacts
    );
    for (q, t) in tr.q.iter().zip(&tr.t) {
        assert!(q[2] <= 0.36 + 2e-9, "through the stop at {t}: {}", q[2]);
        assert!(
            stopped_crank::residual(q, &p, *t).norm() < 1e-9,
            "loop open at {t}"
        );
    }
    let resting = tr.handled.iter().rev().take(20).all(|h| h == &[0]);
    assert!(
        resting,
        "the stop is not handled at the end: {:?}",
        tr.handled.last()
    );
}
