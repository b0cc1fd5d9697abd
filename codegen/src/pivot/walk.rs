//! Choosing the last independent coordinate by walking along the constraint manifold.
//!
//! Probing at a few points near the nominal configuration says which partitions are
//! valid *there*, not which stay valid as the mechanism moves: the rocker of a four-bar
//! linkage is a fine independent coordinate until the linkage reaches a toggle, where
//! the rocker turns back and cannot parametrise the motion. A coordinate that turns back
//! along a path has a zero tangent component there. So, for a one-dimensional motion, we
//! walk: from a point on the manifold, take steps along the unit tangent (keeping
//! direction, Newton-projecting back onto `C = 0`), and pick the coordinate whose tangent
//! component stays largest at the worst point of the walk. (In more dimensions a random
//! walk sees too little of the motion to judge.)

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::probe::{project, SparseJacobian};
use crate::expr::{Arena, Evaluator};

/// Steps of the walk (for models up to [`FULL_WALK_NQ`] coordinates).
const STEPS: usize = 96;
/// Above this many coordinates the walk takes fewer steps, `STEPS · FULL_WALK_NQ / NQ`
/// but at least [`MIN_STEPS`], so that its cost (each step a Newton projection of the
/// whole model) stays about linear in the model's size.
const FULL_WALK_NQ: usize = 256;
/// The fewest steps of a walk.
const MIN_STEPS: usize = 24;
/// Step length per coordinate (the step in the full coordinate norm is this times
/// `√NQ`, so that large models move each coordinate about as far as small ones).
const STEP: f64 = 0.1;

/// Unit tangents of the one-dimensional manifold `C = 0` along a walk from `q0` (on the
/// manifold, at time `t`). Empty when the tangent cannot be computed at `q0`.
pub fn walk(
    arena: &Arena,
    residual: &Evaluator,
    jacobian: &SparseJacobian,
    (q0, t): (&[f64], f64),
    p: &[f64],
    rng: &mut ChaCha8Rng,
) -> Vec<Vec<f64>> {
    let nq = q0.len();
    let mut out = Vec::new();
    let guess: Vec<f64> = (0..nq).map(|_| rng.random_range(-1.0..1.0)).collect();
    let Some(mut tangent) = unit_tangent(arena, jacobian, q0, p, t, &guess) else {
        return out;
    };
    // Walk forward or backward along the first tangent, at random.
    let mut sign: f64 = if rng.random_range(-1.0..1.0) < 0.0 {
        -1.0
    } else {
        1.0
    };
    let mut q = q0.to_vec();
    let h = STEP * (nq as f64).sqrt();
    let steps = if nq <= FULL_WALK_NQ {
        STEPS
    } else {
        (STEPS * FULL_WALK_NQ / nq).max(MIN_STEPS)
    };
    for _ in 0..steps {
        let v: Vec<f64> = tangent.iter().map(|x| x * sign).collect();
        out.push(tangent);
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
        let Some(next_tangent) = unit_tangent(arena, jacobian, &next, p, t, &v) else {
            break;
        };
        // Keep the direction of travel.
        let along: f64 = next_tangent.iter().zip(&v).map(|(a, b)| a * b).sum();
        if along.abs() > 1e-6 {
            sign = along.signum();
        }
        tangent = next_tangent;
        q = next;
    }
    out
}

/// The coordinate whose tangent component is largest at the worst point of `walk`
/// (lowest index on ties); `None` when the walk is empty or every coordinate turns back
/// (component below `1e-6`) somewhere on it.
pub fn choose(walk: &[Vec<f64>]) -> Option<usize> {
    let nq = walk.first()?.len();
    let mut best: Option<(f64, usize)> = None;
    for i in 0..nq {
        let worst = walk
            .iter()
            .map(|t| t[i].abs())
            .fold(f64::INFINITY, f64::min);
        if best.is_none_or(|(b, _)| worst > b) {
            best = Some((worst, i));
        }
    }
    best.filter(|&(score, _)| score >= 1e-6).map(|(_, i)| i)
}

/// Unit tangent of the manifold at `q`: `guess` projected onto the null space of
/// `C_J(q)` (`g − Jᵀ (J Jᵀ + μI)⁻¹ J g`) and normalised. `None` where the Jacobian is not
/// finite or the projection collapses.
pub(super) fn unit_tangent(
    arena: &Arena,
    jacobian: &SparseJacobian,
    q: &[f64],
    p: &[f64],
    t: f64,
    guess: &[f64],
) -> Option<Vec<f64>> {
    let vals = jacobian.values(arena, q, p, t);
    if !SparseJacobian::finite(&vals) {
        return None;
    }
    let y = jacobian
        .normal_factor(&vals)?
        .solve(&jacobian.mul(&vals, guess));
    let n: Vec<f64> = guess
        .iter()
        .zip(jacobian.mul_t(&vals, &y))
        .map(|(a, b)| a - b)
        .collect();
    let len = n.iter().map(|v| v * v).sum::<f64>().sqrt();
    let scale = guess.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
    if len.is_nan() || len <= 1e-8 * scale {
        return None;
    }
    Some(n.into_iter().map(|v| v / len).collect())
}
