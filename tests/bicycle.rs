//! The Whipple bicycle (issue 11, item 7): frames, a holonomic and four velocity
//! constraints, four bodies with full inertia tensors. Linearised about upright straight
//! running at speed `v` (central differences of the projection method's accelerations,
//! Richardson-extrapolated), its lean and steer equations equal the benchmark's published
//! matrices (Meijaard, Papadopoulos, Ruina, Schwab 2007, eq. 5.4):
//! `∂q̈/∂q = −M⁻¹ (g K0 + v² K2)`, `∂q̈/∂q̇ = −M⁻¹ v C1`, `q = (φ, δ)`, to 1e-9 of their
//! largest entry at five speeds; and the self-stable speed range found on the generated
//! model (where every eigenvalue of the linearisation has a negative real part) is the
//! published one, weave speed 4.292382536 m/s to capsize speed 6.024262015 m/s.

use mechgen::nalgebra::{Matrix2, Matrix4, SVector};
use mechgen::runtime::{assemble, projection_accelerations, AssemblyOptions, Mechanism};

include!("../examples/mechanisms/whipple.rs");

type M = whipple::Model;

/// The published matrices (Meijaard et al. 2007, eq. 5.4) as `(∂q̈/∂q, ∂q̈/∂q̇)` at `v`.
fn published(v: f64) -> (Matrix2<f64>, Matrix2<f64>) {
    let m = Matrix2::new(
        80.81722,
        2.31941332208709,
        2.31941332208709,
        0.29784188199686,
    );
    let c1 = Matrix2::new(0.0, 33.86641391492494, -0.85035641456978, 1.68540397397560);
    let k0 = Matrix2::new(
        -80.95,
        -2.59951685249872,
        -2.59951685249872,
        -0.80329488458618,
    );
    let k2 = Matrix2::new(0.0, 76.59734589573222, 0.0, 2.65431523794604);
    let minv = m.try_inverse().expect("M is invertible");
    (-minv * (9.81 * k0 + v * v * k2), -minv * (v * c1))
}

/// `(φ̈, δ̈)` at roll `x[0]`, steer `x[1]`, their rates `x[2]`, `x[3]`, and rear wheel rate
/// `−v / r_r` (the dependent coordinates assembled).
fn lean_steer(x: &[f64; 4], v: f64, p: &whipple::Params) -> [f64; 2] {
    let mut q0 = <M as Mechanism<8, 5, 3>>::nominal_q();
    q0[3] = x[0];
    q0[5] = x[1];
    let q = assemble::<M, 8, 5, 3>(&q0, p, 0.0, &AssemblyOptions::default())
        .expect("assembles")
        .q;
    let u = SVector::<f64, 3>::new(x[2], x[3], -v / p.r_r);
    let a = projection_accelerations::<M, 8, 5, 3>(&q, &u, p, 0.0, 1e-8).expect("accelerations");
    [a.ud[0], a.ud[1]]
}

/// The linearisation `[∂q̈/∂q, ∂q̈/∂q̇]` (2 × 4) of the generated model at speed `v`.
fn linearised(v: f64, p: &whipple::Params) -> [[f64; 4]; 2] {
    let h = 1e-4;
    let mut jac = [[0.0; 4]; 2];
    for j in 0..4 {
        let central = |s: f64| {
            let (mut a, mut b) = ([0.0; 4], [0.0; 4]);
            a[j] = s;
            b[j] = -s;
            let (fa, fb) = (lean_steer(&a, v, p), lean_steer(&b, v, p));
            [(fa[0] - fb[0]) / (2.0 * s), (fa[1] - fb[1]) / (2.0 * s)]
        };
        let (coarse, fine) = (central(h), central(h / 2.0));
        for i in 0..2 {
            jac[i][j] = (4.0 * fine[i] - coarse[i]) / 3.0;
        }
    }
    jac
}

/// The largest real part of the eigenvalues of the first-order system `[0 I; ∂q̈/∂q ∂q̈/∂q̇]`.
fn max_real_part(jac: &[[f64; 4]; 2]) -> f64 {
    let a = Matrix4::from_fn(|i, j| match i {
        0 | 1 => f64::from(u8::from(j == i + 2)),
        _ => jac[i - 2][j],
    });
    a.complex_eigenvalues()
        .iter()
        .map(|z| z.re)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The speed in `[lo, hi]` where `f` changes sign (bisection to 1e-9 m/s).
fn crossing(mut lo: f64, mut hi: f64, f: &dyn Fn(f64) -> f64) -> f64 {
    let sign = f(lo) > 0.0;
    while hi - lo > 1e-9 {
        let mid = 0.5 * (lo + hi);
        if (f(mid) > 0.0) == sign {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn the_bicycle_linearises_to_the_benchmark_matrices() {
    assert_eq!((whipple::NQ, whipple::NC, whipple::DOF), (8, 5, 3));
    assert_eq!(whipple::INDEPENDENT, [3, 5, 6]);
    let p = whipple::Params::default();
    for v in [0.0, 2.0, 4.3, 5.0, 6.0] {
        let jac = linearised(v, &p);
        let (kq, kqd) = published(v);
        let scale = kq.abs().max().max(kqd.abs().max());
        for i in 0..2 {
            for j in 0..2 {
                let (got_q, got_qd) = (jac[i][j], jac[i][j + 2]);
                assert!(
                    (got_q - kq[(i, j)]).abs() < 1e-9 * scale,
                    "v = {v}: ∂q̈{i}/∂q{j} = {got_q} vs {}",
                    kq[(i, j)]
                );
                assert!(
                    (got_qd - kqd[(i, j)]).abs() < 1e-9 * scale,
                    "v = {v}: ∂q̈{i}/∂q̇{j} = {got_qd} vs {}",
                    kqd[(i, j)]
                );
            }
        }
    }
}

#[test]
fn the_bicycle_is_self_stable_between_the_published_weave_and_capsize_speeds() {
    let p = whipple::Params::default();
    let ours = |v: f64| max_real_part(&linearised(v, &p));
    let theirs = |v: f64| {
        let (kq, kqd) = published(v);
        max_real_part(&[
            [kq[(0, 0)], kq[(0, 1)], kqd[(0, 0)], kqd[(0, 1)]],
            [kq[(1, 0)], kq[(1, 1)], kqd[(1, 0)], kqd[(1, 1)]],
        ])
    };
    let (weave, capsize) = (crossing(3.0, 5.0, &ours), crossing(5.0, 7.0, &ours));
    let (weave_p, capsize_p) = (crossing(3.0, 5.0, &theirs), crossing(5.0, 7.0, &theirs));
    println!("weave {weave} (published matrices {weave_p}), capsize {capsize} ({capsize_p})");
    assert!((weave - weave_p).abs() < 1e-6 && (capsize - capsize_p).abs() < 1e-6);
    assert!((weave - 4.292382536).abs() < 1e-6, "weave speed {weave}");
    assert!(
        (capsize - 6.024262015).abs() < 1e-6,
        "capsize speed {capsize}"
    );
    assert!(ours(5.0) < 0.0 && ours(3.0) > 0.0 && ours(7.0) > 0.0);
}
