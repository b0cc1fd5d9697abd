//! Probe points: real points Newton-projected onto the constraint manifold, and complex
//! points on the unit circle (angles through their half-angle tangent).

use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::expr::{Arena, Evaluator, ExprId, Node, Sym};

pub use super::rounding::eval_with_error;
pub use super::sparse::{BandCholesky, SparseJacobian};
use crate::model::Model;

/// Values of every symbol at one probe point.
#[derive(Clone, Debug)]
pub struct Probe {
    /// Coordinates.
    pub q: Vec<Complex64>,
    /// Parameters.
    pub p: Vec<Complex64>,
    /// Time.
    pub t: Complex64,
    /// Whether this is a real point (as opposed to a complex point).
    pub real: bool,
    /// Whether this real point was projected onto the constraint manifold (a real probe
    /// that could not be projected is the perturbed nominal point; complex: `false`).
    pub projected: bool,
}

impl Probe {
    /// The value of a symbol (velocities and right-hand sides are 1 + 0i: probes only
    /// evaluate expressions of q, p and t).
    pub fn value(&self, s: Sym) -> Complex64 {
        match s {
            Sym::Coord(i) => self.q[i as usize],
            Sym::Param(i) => self.p[i as usize],
            Sym::Time => self.t,
            Sym::Vel(_) | Sym::Rhs(_) | Sym::Weight(_) => Complex64::new(1.0, 0.0),
        }
    }
}

/// Coordinates that occur inside a trigonometric function (treated as angles).
pub fn angle_coords(model: &Model, arena: &Arena) -> Vec<bool> {
    let a = arena;
    let roots: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    let mask = a.reachable(&roots);
    // The arguments of every trigonometric function, then every node under them: one
    // pass over the arena, not one per function node.
    let args: Vec<ExprId> = a
        .nodes()
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match n {
            Node::Func(f, arg) if mask[i] && f.takes_angle() => Some(*arg),
            _ => None,
        })
        .collect();
    let under = a.reachable(&args);
    let mut angle = vec![false; model.coords.len()];
    for (i, n) in a.nodes().iter().enumerate() {
        if let Node::Sym(Sym::Coord(j)) = n {
            if under[i] {
                angle[*j as usize] = true;
            }
        }
    }
    angle
}

/// A point on the unit circle, at least `margin` radians away from `±i`.
fn unit_circle(rng: &mut ChaCha8Rng) -> Complex64 {
    loop {
        let a: f64 = rng.random_range(-std::f64::consts::PI..std::f64::consts::PI);
        let d = (a.abs() - std::f64::consts::FRAC_PI_2).abs();
        if d > 0.2 && a.abs() > 0.05 && (std::f64::consts::PI - a.abs()) > 0.05 {
            return Complex64::from_polar(1.0, a);
        }
    }
}

/// Parameter values for real probes: defaults, or a random value in [0.5, 1.5].
pub fn real_params(model: &Model, rng: &mut ChaCha8Rng) -> Vec<f64> {
    model
        .params
        .iter()
        .map(|p| p.default.unwrap_or_else(|| rng.random_range(0.5..1.5)))
        .collect()
}

/// A complex probe: every coordinate on the unit circle — for an angle, its half-angle
/// tangent `x = tan(θ/2)` on the unit circle away from `±i`, i.e. `θ = 2 atan x` — and
/// parameters and time on the unit circle too.
pub fn complex_probe(model: &Model, angles: &[bool], rng: &mut ChaCha8Rng) -> Probe {
    let q = angles
        .iter()
        .map(|&is_angle| {
            let x = unit_circle(rng);
            if is_angle {
                Complex64::new(2.0, 0.0) * x.atan()
            } else {
                x
            }
        })
        .collect();
    let p = model.params.iter().map(|_| unit_circle(rng)).collect();
    Probe {
        q,
        p,
        t: unit_circle(rng),
        real: false,
        projected: false,
    }
}

/// Where `project` stops iterating: a step no longer halves `‖C‖` while `‖C‖` is below
/// this fraction of the size `|J| |q|` of the residual's terms (a prefilter: the point is
/// then accepted only within its rounding floor, [`rounding_floor`]).
const STALL: f64 = 1e-8;

/// Multiple of the rounding floor within which a stalled iterate is accepted.
const FLOOR_MULTIPLE: f64 = 64.0;

/// The rounding floor of `‖C‖` at `q`: the first-order bound of the rounding error of
/// evaluating each equation ([`eval_with_error`]) plus the change a one-ulp move of each
/// coordinate makes (`ε Σ_j |J_ij| |q_j|`, from `jq`) — how close to `C = 0` a floating
/// point iterate can get. (A floor of 10⁻⁸ |J| |q| accepted residuals of 10⁹ at points
/// where the iterates had blown up to |q| ≈ 10⁹; issue 33.)
fn rounding_floor(
    arena: &Arena,
    residual: &Evaluator,
    q: &[f64],
    p: &[f64],
    t: f64,
    jq: &[f64],
) -> f64 {
    let pr = to_probe(q, p, t, false);
    let err = eval_with_error(arena, residual.roots(), &pr);
    err.iter()
        .zip(jq)
        .map(|((_, e), j)| {
            let r = e + f64::EPSILON * j;
            r * r
        })
        .sum::<f64>()
        .sqrt()
}

/// Newton projection of `q` onto `C(q, p, t) = 0` with damped minimum-norm steps
/// `Δq = −Jᵀ (J Jᵀ + μI)⁻¹ C`. Returns the projected point, or `None` if it does not
/// converge.
pub fn project(
    arena: &Arena,
    residual: &Evaluator,
    jacobian: &SparseJacobian,
    q0: &[f64],
    p: &[f64],
    t: f64,
) -> Option<Vec<f64>> {
    let mut q = q0.to_vec();
    let mut prev = f64::INFINITY;
    // (iterate, its ‖C‖, `Σ_j |J_ij| |q_j|` per row there) of the best iterate so far, and
    // the stall threshold of the latest iterate.
    let mut best: Option<(Vec<f64>, f64, Vec<f64>)> = None;
    let mut small = 0.0;
    for it in 0..60 {
        let env = |s: Sym| match s {
            Sym::Coord(i) => q[i as usize],
            Sym::Param(i) => p[i as usize],
            Sym::Time => t,
            _ => 0.0,
        };
        let c: Vec<f64> = residual.eval(arena, &env);
        let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !norm.is_finite() {
            return None;
        }
        if norm <= 1e-13 {
            return Some(q);
        }
        // The rounding floor: terms of size 10⁶ (or 10³ over thousands of rows) leave ‖C‖
        // above any absolute bound whatever the iterate. Newton has reached it when a step
        // no longer halves ‖C‖ while ‖C‖ is small against the Jacobian's scale: keep the
        // best iterate.
        //
        // The best iterate is returned only if it is at its own floor: a wild step can land
        // where the floor (which grows with `|q|`) is huge, while the best iterate is an
        // earlier one far off the constraints (a leg anchored at z = 2.1e9: the nominal, off
        // by 2.1e9, came back as projected; fuzzer, seed 6).
        if norm >= 0.5 * prev && prev <= small {
            return best
                .filter(|(b, n, jq)| {
                    *n <= FLOOR_MULTIPLE * rounding_floor(arena, residual, b, p, t, jq)
                })
                .map(|(b, _, _)| b);
        }
        // Newton converges in a few steps from a start it can reach; one that no longer
        // gains after ten is stalled (a step too long, a fold): give up early, the
        // callers shorten the step or draw again.
        if it >= 10 && norm > 0.9 * prev {
            return None;
        }
        let improved = best.as_ref().is_none_or(|(_, n, _)| norm < *n);
        if improved {
            // Its term sizes are known once the Jacobian here is (below).
            best = Some((q.clone(), norm, Vec::new()));
        }
        prev = norm;
        let vals = jacobian.values(arena, &q, p, t);
        let y = jacobian.normal_factor(&vals)?.solve(&c);
        let step = jacobian.mul_t(&vals, &y);
        if !step.iter().all(|v| v.is_finite()) {
            return None;
        }
        let qmax = q.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let jmax = vals.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        small = STALL * (1.0 + jmax * (1.0 + qmax));
        if improved {
            if let Some(b) = best.as_mut() {
                let mut jq = vec![0.0; c.len()];
                for (&(i, j), v) in jacobian.positions().iter().zip(&vals) {
                    jq[i] += v.abs() * q[j].abs();
                }
                b.2 = jq;
            }
        }
        for (qk, dk) in q.iter_mut().zip(&step) {
            *qk -= dk;
        }
    }
    None
}

/// Real probes: the nominal point with a seeded random perturbation, projected onto the
/// manifold. A point that does not project is replaced by the perturbed point (noted).
pub fn real_probe(
    model: &Model,
    arena: &Arena,
    residual: &Evaluator,
    jacobian: &SparseJacobian,
    params: &[f64],
    rng: &mut ChaCha8Rng,
    notes: &mut Vec<String>,
) -> Probe {
    let t: f64 = rng.random_range(0.1..0.9);
    let mut last = Vec::new();
    for attempt in 0..4 {
        let scale = 0.05 / (1 << attempt) as f64;
        let q0: Vec<f64> = model
            .coords
            .iter()
            .map(|c| c.nominal + scale * (1.0 + c.nominal.abs()) * rng.random_range(-1.0..1.0))
            .collect();
        if let Some(q) = project(arena, residual, jacobian, &q0, params, t) {
            return to_probe(&q, params, t, true);
        }
        last = q0;
    }
    notes.push(
        "a real probe point could not be projected onto the constraint manifold; \
         probing used the perturbed nominal point instead (check the nominal coordinates)"
            .to_string(),
    );
    to_probe(&last, params, t, false)
}

fn to_probe(q: &[f64], p: &[f64], t: f64, projected: bool) -> Probe {
    Probe {
        q: q.iter().map(|&v| Complex64::new(v, 0.0)).collect(),
        p: p.iter().map(|&v| Complex64::new(v, 0.0)).collect(),
        t: Complex64::new(t, 0.0),
        real: true,
        projected,
    }
}

/// A seeded generator (ChaCha8: portable and stable across platforms).
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}
