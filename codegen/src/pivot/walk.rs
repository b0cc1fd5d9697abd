//! Choosing independent coordinates by walking along the constraint manifold.
//!
//! Probing at a few points near the nominal configuration says which partitions are
//! valid *there*, not which stay valid as the mechanism moves: the rocker of a four-bar
//! linkage is a fine independent coordinate until the linkage reaches a toggle, where
//! the rocker turns back and cannot parametrise the motion. A coordinate that turns back
//! along a path has a zero tangent component there. So we walk: from a point on the
//! manifold, take steps along the tangent space (keeping direction, Newton-projecting
//! back onto `C = 0`), record an orthonormal tangent basis `N` (`NQ × DOF`) at each
//! point, and pick the independent set `I` whose `|det N[I, :]|` (the conditioning of
//! the partition) is largest at the worst point of the walk. The analysis walks a
//! one-dimensional motion (one degree of freedom left open), where the walk runs along
//! the whole motion; a random walk in more dimensions would see too little of it.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::probe::{project, SparseJacobian};
use crate::expr::{Arena, Evaluator};

/// Steps of the walk.
const STEPS: usize = 96;
/// Step length per coordinate (the step in the full coordinate norm is this times
/// `√NQ`, so that large models move each coordinate about as far as small ones).
const STEP: f64 = 0.1;
/// Every this many steps the direction gets a random kick (so a multi-DOF walk does not
/// stay on one curve).
const KICK_EVERY: usize = 20;

/// Orthonormal tangent bases along a walk from `q0` (on the manifold, at time `t`), each `NQ × DOF`
/// row-major. Empty when the tangent space cannot be computed at `q0`.
pub fn walk(
    arena: &Arena,
    residual: &Evaluator,
    jacobian: &SparseJacobian,
    (q0, t): (&[f64], f64),
    p: &[f64],
    dof: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<Vec<f64>>> {
    let nq = q0.len();
    let mut out = Vec::new();
    let random = |rng: &mut ChaCha8Rng| -> Vec<f64> {
        (0..nq).map(|_| rng.random_range(-1.0..1.0)).collect()
    };
    let mut guess: Vec<Vec<f64>> = (0..dof).map(|_| random(rng)).collect();
    let Some(mut basis) = tangent_basis(arena, jacobian, q0, p, t, &guess) else {
        return out;
    };
    let mut q = q0.to_vec();
    let mut c: Vec<f64> = unit((0..dof).map(|_| rng.random_range(-1.0..1.0)).collect());
    let h = STEP * (nq as f64).sqrt();
    for step in 0..STEPS {
        out.push(rows_of(&basis, nq));
        // Direction: the previous one carried into this tangent space, kicked sometimes.
        if step % KICK_EVERY == KICK_EVERY - 1 {
            for ck in c.iter_mut() {
                *ck += rng.random_range(-0.7..0.7);
            }
            c = unit(c);
        }
        let v: Vec<f64> = (0..nq)
            .map(|i| (0..dof).map(|k| basis[k][i] * c[k]).sum())
            .collect();
        let mut moved = None;
        let mut len = h;
        for _ in 0..4 {
            let trial: Vec<f64> = q.iter().zip(&v).map(|(a, b)| a + len * b).collect();
            if let Some(next) = project(arena, residual, jacobian, &trial, p, t) {
                moved = Some(next);
                break;
            }
            len *= 0.5;
        }
        let Some(next) = moved else {
            break;
        };
        guess.clone_from(&basis);
        let Some(next_basis) = tangent_basis(arena, jacobian, &next, p, t, &guess) else {
            break;
        };
        // Keep the direction: express the old direction in the new basis.
        let cn: Vec<f64> = (0..dof)
            .map(|k| (0..nq).map(|i| next_basis[k][i] * v[i]).sum())
            .collect();
        if norm(&cn) > 1e-6 {
            c = unit(cn);
        }
        basis = next_basis;
        q = next;
    }
    out
}

/// Independent coordinates: `fixed` first, then `dof − |fixed|` more, maximising the
/// worst `|det N[I, :]|` over the walk, by trying every candidate set. `None` when the
/// walk is empty, the search would be too large (many open degrees of freedom), or the
/// best set is (nearly) singular somewhere on the walk.
pub fn choose(walk: &[Vec<Vec<f64>>], fixed: &[usize], dof: usize) -> Option<Vec<usize>> {
    let nq = walk.first()?.len();
    let free: Vec<usize> = (0..nq).filter(|i| !fixed.contains(i)).collect();
    let k = dof.checked_sub(fixed.len())?;
    let work = binomial(free.len(), k)
        .saturating_mul(walk.len())
        .saturating_mul(dof.pow(3));
    if work > 4_000_000 {
        return None;
    }
    exhaustive(walk, fixed, &free, k)
}

/// `C(n, k)`, saturating.
fn binomial(n: usize, k: usize) -> usize {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut c: usize = 1;
    for i in 0..k {
        c = c.saturating_mul(n - i) / (i + 1);
    }
    c
}

/// Worst `|det N[set, :]|` over the walk (products of Gram–Schmidt residuals).
fn det_score(walk: &[Vec<Vec<f64>>], set: &[usize]) -> f64 {
    walk.iter()
        .map(|pt| {
            let mut span: Vec<Vec<f64>> = Vec::with_capacity(set.len());
            let mut det = 1.0;
            for &i in set {
                let r = residual(&pt[i], &span);
                let n = norm(&r);
                det *= n;
                if n <= 1e-300 {
                    break;
                }
                span.push(r.iter().map(|x| x / n).collect());
            }
            det
        })
        .fold(f64::INFINITY, f64::min)
}

fn exhaustive(
    walk: &[Vec<Vec<f64>>],
    fixed: &[usize],
    free: &[usize],
    k: usize,
) -> Option<Vec<usize>> {
    let mut best: Option<(f64, Vec<usize>)> = None;
    // Combinations of `k` of `free`, in lexicographic order (ties keep the first).
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        let mut set = fixed.to_vec();
        set.extend(idx.iter().map(|&i| free[i]));
        let score = det_score(walk, &set);
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, set));
        }
        // Next combination.
        let Some(pos) = (0..k).rev().find(|&p| idx[p] < free.len() - k + p) else {
            break;
        };
        idx[pos] += 1;
        for p in pos + 1..k {
            idx[p] = idx[p - 1] + 1;
        }
    }
    let (score, set) = best?;
    (score >= 1e-6).then_some(set)
}

/// `x` minus its projection onto the orthonormal vectors `span`.
fn residual(x: &[f64], span: &[Vec<f64>]) -> Vec<f64> {
    let mut r = x.to_vec();
    for s in span {
        let d: f64 = r.iter().zip(s).map(|(a, b)| a * b).sum();
        for (rk, sk) in r.iter_mut().zip(s) {
            *rk -= d * sk;
        }
    }
    r
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

fn unit(x: Vec<f64>) -> Vec<f64> {
    let n = norm(&x).max(1e-300);
    x.into_iter().map(|v| v / n).collect()
}

/// `basis[k]` (column k, length NQ) as rows: `out[i][k]`.
fn rows_of(basis: &[Vec<f64>], nq: usize) -> Vec<Vec<f64>> {
    (0..nq)
        .map(|i| basis.iter().map(|col| col[i]).collect())
        .collect()
}

/// Orthonormal basis (DOF columns of length NQ) of the null space of `C_J(q)`: the
/// columns of `guess` projected onto it (`g − Jᵀ (J Jᵀ + μI)⁻¹ J g`), orthonormalised
/// twice. `None` where the Jacobian is not finite or a column collapses.
fn tangent_basis(
    arena: &Arena,
    jacobian: &SparseJacobian,
    q: &[f64],
    p: &[f64],
    t: f64,
    guess: &[Vec<f64>],
) -> Option<Vec<Vec<f64>>> {
    let vals = jacobian.values(arena, q, p, t);
    if !SparseJacobian::finite(&vals) {
        return None;
    }
    let factor = jacobian.normal_factor(&vals)?;
    let mut cols: Vec<Vec<f64>> = Vec::with_capacity(guess.len());
    for g in guess {
        let y = factor.solve(&jacobian.mul(&vals, g));
        let mut n: Vec<f64> = g
            .iter()
            .zip(jacobian.mul_t(&vals, &y))
            .map(|(a, b)| a - b)
            .collect();
        for _ in 0..2 {
            n = residual(&n, &cols);
        }
        let len = norm(&n);
        if len.is_nan() || len <= 1e-8 * norm(g).max(1e-300) {
            return None;
        }
        cols.push(n.into_iter().map(|v| v / len).collect());
    }
    Some(cols)
}
