//! The Lagrange route at a rank drop of the constraint Jacobian: a parallelogram four-bar
//! (IFToMM A02 with N = 1) turning over and over through its flat positions, where the
//! constraints lose rank and a second branch of the motion meets the parallelogram one.
//! The index-1 route cannot tell which branch it follows (measured: it leaves the
//! parallelogram branch at a flat position, silently); it now stops with
//! `SimError::RankDrop` at the first flat position, or (opted in) records every one.

use mechgen_runtime::nalgebra::{SMatrix, SVector};
use mechgen_runtime::{
    ali3p::simulate_ali3p, ali3p::Ali3pOptions, ode::dopri5, ode::Dopri5Options,
    simulate::simulate_lagrange, simulate::simulate_projection, simulate::Integrator,
    simulate::RankDrop, simulate::SimOptions, Dynamics, Mechanism, SimError,
};

type V2 = SVector<f64, 2>;
type V3 = SVector<f64, 3>;

/// Unit cranks (angles `t1` at the origin, `t2` at `(1, 0)`) joined by a unit coupler
/// (angle `psi`); three uniform bars of 1 kg, gravity `g` along −y. On the parallelogram
/// branch `t1 = t2 = θ`, `psi = 0`, and `θ̈ = −1.2 g cos θ`.
struct Parallelogram;

#[derive(Debug, Clone, Copy)]
struct Params {
    g: f64,
}

impl Mechanism<3, 2, 1> for Parallelogram {
    type Params = Params;
    const NAME: &'static str = "parallelogram";
    const COORD_NAMES: [&'static str; 3] = ["t1", "t2", "psi"];
    const INDEPENDENT: [usize; 1] = [0];

    fn nominal_q() -> V3 {
        V3::new(1.0, 1.0, 0.0)
    }
    fn residual(q: &V3, _p: &Params, _t: f64) -> V2 {
        V2::new(
            q[0].cos() + q[2].cos() - 1.0 - q[1].cos(),
            q[0].sin() + q[2].sin() - q[1].sin(),
        )
    }
    fn jacobian(q: &V3, _p: &Params, _t: f64) -> SMatrix<f64, 2, 3> {
        SMatrix::<f64, 2, 3>::new(
            -q[0].sin(),
            q[1].sin(),
            -q[2].sin(),
            q[0].cos(),
            -q[1].cos(),
            q[2].cos(),
        )
    }
    fn jacobian_t(_q: &V3, _p: &Params, _t: f64) -> V2 {
        V2::zeros()
    }
    fn null_space(q: &V3, p: &Params, t: f64) -> (SMatrix<f64, 3, 1>, f64) {
        // The cross product of the two rows, scaled to a unit t1 component.
        let j = Self::jacobian(q, p, t);
        let n = j.row(0).transpose().cross(&j.row(1).transpose());
        let health = (n[0].abs() / n.norm().max(f64::MIN_POSITIVE)).min(1.0);
        (
            SMatrix::<f64, 3, 1>::new(1.0, n[1] / n[0], n[2] / n[0]),
            health,
        )
    }
    fn solve_dependent(q: &V3, p: &Params, t: f64, b: &V2) -> V3 {
        // The (t2, psi) columns.
        let j = Self::jacobian(q, p, t);
        let a = SMatrix::<f64, 2, 2>::new(j[(0, 1)], j[(0, 2)], j[(1, 1)], j[(1, 2)]);
        let x = a.lu().solve(b).unwrap_or_else(V2::zeros);
        V3::new(0.0, x[0], x[1])
    }
}

impl Dynamics<3, 2, 1> for Parallelogram {
    fn mass_matrix(q: &V3, _p: &Params, _t: f64) -> SMatrix<f64, 3, 3> {
        let c = 0.5 * (q[0] - q[2]).cos();
        SMatrix::<f64, 3, 3>::new(4.0 / 3.0, 0.0, c, 0.0, 1.0 / 3.0, 0.0, c, 0.0, 1.0 / 3.0)
    }
    fn forces(q: &V3, qd: &V3, p: &Params, _t: f64) -> V3 {
        let s = 0.5 * (q[0] - q[2]).sin();
        V3::new(
            -1.5 * p.g * q[0].cos() - s * qd[2] * qd[2],
            -0.5 * p.g * q[1].cos(),
            -0.5 * p.g * q[2].cos() + s * qd[0] * qd[0],
        )
    }
    fn gamma(q: &V3, qd: &V3, _p: &Params, _t: f64) -> V2 {
        let w = |k: usize| qd[k] * qd[k];
        V2::new(
            q[0].cos() * w(0) - q[1].cos() * w(1) + q[2].cos() * w(2),
            q[0].sin() * w(0) - q[1].sin() * w(1) + q[2].sin() * w(2),
        )
    }
    fn energy(q: &V3, qd: &V3, p: &Params, t: f64) -> Option<f64> {
        let m = Self::mass_matrix(q, p, t);
        let v = p.g * (1.5 * q[0].sin() + 0.5 * q[1].sin() + 0.5 * q[2].sin());
        Some(0.5 * qd.dot(&(m * qd)) + v)
    }
}

const TH0: f64 = std::f64::consts::FRAC_PI_2;
const W0: f64 = -12.0;

/// The exact branch motion `θ(t)`, `θ̇(t)` at `times` (θ̈ = −1.2 g cos θ, rtol 1e-13).
fn branch(times: &[f64]) -> Vec<V2> {
    let g = 9.81;
    let mut rhs =
        |_t: f64, y: &V2| Ok::<_, std::convert::Infallible>(V2::new(y[1], -1.2 * g * y[0].cos()));
    let o = Dopri5Options {
        rtol: 1e-13,
        atol: 1e-14,
        ..Default::default()
    };
    dopri5(&mut rhs, 0.0, V2::new(TH0, W0), times, &o)
        .expect("branch motion")
        .y
}

/// The times at which the exact motion passes a flat position (θ ≡ 0 mod π) in `[0, t1]`,
/// to 1e-5 s.
fn flat_times(t1: f64) -> Vec<f64> {
    let n = (t1 / 1e-5).round() as usize;
    let times: Vec<f64> = (1..n).map(|k| k as f64 * 1e-5).collect();
    let y = branch(&times);
    let pi = std::f64::consts::PI;
    let k = |th: f64| (th / pi).floor();
    (1..y.len())
        .filter(|&i| k(y[i][0]) != k(y[i - 1][0]))
        .map(|i| times[i])
        .collect()
}

fn opts(rtol: f64) -> SimOptions {
    SimOptions {
        integrator: Integrator::Dopri5(Dopri5Options {
            rtol,
            atol: 1e-2 * rtol,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn start() -> (V3, V3) {
    (V3::new(TH0, TH0, 0.0), V3::new(W0, W0, 0.0))
}

#[test]
fn lagrange_route_stops_at_the_first_flat_position_with_a_rank_drop() {
    // Failed before: the route ran on without an error (and, at rtol 1e-8, left the
    // parallelogram branch at a flat position).
    let p = Params { g: 9.81 };
    let (q0, qd0) = start();
    let flat = flat_times(2.5);
    assert!(flat.len() >= 10, "{flat:?}");
    for rtol in [1e-6, 1e-8] {
        let e = simulate_lagrange::<Parallelogram, 3, 2, 1>(&q0, &qd0, &p, 0.0, 2.5, &opts(rtol))
            .expect_err("a rank drop");
        let SimError::RankDrop {
            t,
            generic_rank,
            rank,
            ratio,
        } = e
        else {
            panic!("rtol {rtol:e}: {e}");
        };
        eprintln!("rtol {rtol:e}: {e}");
        assert!((t - flat[0]).abs() < 1e-3, "t = {t}, flat at {}", flat[0]);
        assert_eq!((generic_rank, rank), (2, 1));
        assert!(ratio < 0.1, "{ratio:e}");
        let msg = e.to_string();
        assert!(
            msg.contains("loses rank at t = 0.1") && msg.contains("use simulate_ali3p"),
            "{msg}"
        );
    }
}

#[test]
fn lagrange_route_before_the_first_flat_position_follows_the_branch() {
    // No false alarm on the regular part of the motion: up to 0.9 of the first flat time
    // the route runs and meets the exact branch motion.
    let p = Params { g: 9.81 };
    let (q0, qd0) = start();
    let t1 = 0.9 * flat_times(0.5)[0];
    let r = simulate_lagrange::<Parallelogram, 3, 2, 1>(&q0, &qd0, &p, 0.0, t1, &opts(1e-10))
        .expect("regular up to the flat position");
    let th = branch(&[t1])[0][0];
    let q = r.q[r.q.len() - 1];
    let err = (q[0] - th).abs().max((q[1] - th).abs()).max(q[2].abs());
    assert!(err < 1e-8, "{err:e}");
    assert!(r.rank_drop_times.is_empty());
}

#[test]
fn lagrange_route_opted_in_records_every_flat_position() {
    // RankDrop::Continue: the run goes on, on the branch, and lists where the rank
    // dropped, each within 1e-3 s of a flat position of the exact motion.
    let p = Params { g: 9.81 };
    let (q0, qd0) = start();
    let o = SimOptions {
        rank_drop: RankDrop::Continue,
        ..opts(1e-6)
    };
    let r =
        simulate_lagrange::<Parallelogram, 3, 2, 1>(&q0, &qd0, &p, 0.0, 2.5, &o).expect("opted in");
    let flat = flat_times(2.5);
    eprintln!("rank drops {:?}\nflat {:?}", r.rank_drop_times, flat);
    assert!(r.rank_drop_times.len() >= 10, "{:?}", r.rank_drop_times);
    assert!(r.rank_drop_times.windows(2).all(|w| w[0] < w[1]));
    // One per flat position of the exact motion, each within 2e-3 s (at rtol 1e-6: where
    // the motion jumps over the point, the estimate extrapolates σ_r linearly from 1e-3).
    assert_eq!(
        r.rank_drop_times.len(),
        flat.len(),
        "{:?}",
        r.rank_drop_times
    );
    for (a, b) in r.rank_drop_times.iter().zip(&flat) {
        assert!((a - b).abs() < 2e-3, "{a} vs {b}");
    }
    // The steps near each one go by the projection method, which keeps the branch: the
    // parallelogram (t2 = t1, level coupler) all the way. Before: the index-1 motion turned
    // onto the other branch at some flat positions (it follows the level set of its drift).
    let th = branch(&[2.5])[0][0];
    let q = r.q[r.q.len() - 1];
    let err = (q[0] - th).abs().max((q[1] - th).abs()).max(q[2].abs());
    assert!(err < 1e-3, "{err:e}");
}

#[test]
fn ali3p_follows_the_branch_through_the_flat_positions() {
    // The route the error points to: through ten flat positions within 1e-3 rad.
    let p = Params { g: 9.81 };
    let (q0, qd0) = start();
    let o = Ali3pOptions {
        h: 1e-3,
        ..Default::default()
    };
    let r = simulate_ali3p::<Parallelogram, 3, 2, 1>(&q0, &qd0, &p, 0.0, 2.5, &o)
        .expect("ALI3-P through the flat positions");
    let th = branch(&[2.5])[0][0];
    let q = r.q[r.q.len() - 1];
    let err = (q[0] - th).abs().max((q[1] - th).abs()).max(q[2].abs());
    assert!(err < 1e-3, "{err:e}");
}

#[test]
fn projection_route_steps_over_the_flat_positions_whatever_the_model_health() {
    // This hand-written model's health figure (|n_t1| / |n| of the rows' cross product) is
    // relative to the rows' own scale: it stays 0.71 up to the flat position. Before, the
    // projection route with `RankDrop::Continue` trusted it at the crossing point, judged
    // the point regular, and alternated between two charts there (`TooManySwitches` at
    // t = 0.118 s, 0.354 s or 1.59 s for rtol 1e-6, 1e-8, 1e-10); the Lagrange route, which
    // hands the steps near a rank drop to it, failed the same way. Now the SVD ratio of C_J
    // at the crossing decides too: both routes pass the ten flat positions of 2.5 s, one
    // rank drop each (within 2e-3 s of the exact motion's), and end on the branch.
    let p = Params { g: 9.81 };
    let (q0, qd0) = start();
    let flat = flat_times(2.5);
    let th = branch(&[2.5])[0][0];
    for rtol in [1e-6, 1e-8, 1e-10] {
        let o = SimOptions {
            rank_drop: RankDrop::Continue,
            ..opts(rtol)
        };
        let u0 = SVector::<f64, 1>::new(qd0[0]);
        let proj = simulate_projection::<Parallelogram, 3, 2, 1>(&q0, &u0, &p, 0.0, 2.5, &o)
            .expect("projection route over the flat positions");
        let lag = simulate_lagrange::<Parallelogram, 3, 2, 1>(&q0, &qd0, &p, 0.0, 2.5, &o)
            .expect("Lagrange route over the flat positions");
        for (route, r) in [("projection", &proj), ("Lagrange", &lag)] {
            assert_eq!(
                r.rank_drop_times.len(),
                flat.len(),
                "{route} {rtol:e}: {:?}",
                r.rank_drop_times
            );
            for (a, b) in r.rank_drop_times.iter().zip(&flat) {
                assert!((a - b).abs() < 2e-3, "{route} {rtol:e}: {a} vs {b}");
            }
            let q = r.q[r.q.len() - 1];
            let err = (q[0] - th).abs().max((q[1] - th).abs()).max(q[2].abs());
            eprintln!("{route} rtol {rtol:e}: off the branch by {err:.2e} at 2.5 s");
            assert!(err < 1e3 * rtol, "{route} {rtol:e}: {err:e}");
        }
    }
}

#[test]
fn a_swing_that_turns_back_just_short_of_the_flat_position_records_no_rank_drop() {
    // From the bottom (θ = −π/2) with just the energy to reach θ = −1e-3 (½θ̇² + 1.2 g sin θ
    // is conserved): σ_2/σ_1 ≈ 0.47 |θ| comes down to 4.7e-4 and back, no singular value
    // changes sign, and no rank drop may be recorded; both routes follow the exact swing.
    // (Closer than `RANK_DROP_RATIO` ≈ 1.2e-4 counts as a rank drop by definition: with
    // θ_max = −1e-5 the Lagrange route's segment records one at the closest state.)
    let p = Params { g: 9.81 };
    let g = p.g;
    let th_max: f64 = -1e-3;
    let th0 = -std::f64::consts::FRAC_PI_2;
    let w0 = (2.0 * 1.2 * g * (th_max.sin() - th0.sin())).sqrt();
    let t1 = 1.5;
    let mut rhs =
        |_t: f64, y: &V2| Ok::<_, std::convert::Infallible>(V2::new(y[1], -1.2 * g * y[0].cos()));
    let exact = dopri5(
        &mut rhs,
        0.0,
        V2::new(th0, w0),
        &[t1],
        &Dopri5Options {
            rtol: 1e-13,
            atol: 1e-14,
            ..Default::default()
        },
    )
    .expect("exact swing")
    .y;
    let th_end = exact[exact.len() - 1][0];
    let o = SimOptions {
        rank_drop: RankDrop::Continue,
        ..opts(1e-10)
    };
    let q0 = V3::new(th0, th0, 0.0);
    let lag =
        simulate_lagrange::<Parallelogram, 3, 2, 1>(&q0, &V3::new(w0, w0, 0.0), &p, 0.0, t1, &o)
            .expect("Lagrange route");
    let proj = simulate_projection::<Parallelogram, 3, 2, 1>(
        &q0,
        &SVector::<f64, 1>::new(w0),
        &p,
        0.0,
        t1,
        &o,
    )
    .expect("projection route");
    for (route, r) in [("Lagrange", &lag), ("projection", &proj)] {
        let q = r.q[r.q.len() - 1];
        let err = (q[0] - th_end)
            .abs()
            .max((q[1] - th_end).abs())
            .max(q[2].abs());
        eprintln!(
            "{route}: |θ − exact| {err:.2e}, rank drops {:?}, switches {}",
            r.rank_drop_times,
            r.switch_times.len()
        );
        assert!(err < 1e-6, "{route}: {err:e}");
    }
    for (route, r) in [("Lagrange", &lag), ("projection", &proj)] {
        assert!(
            r.rank_drop_times.is_empty(),
            "{route}: {:?}",
            r.rank_drop_times
        );
    }
}
