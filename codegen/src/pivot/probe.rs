//! Probe points: real points Newton-projected onto the constraint manifold, and complex
//! points on the unit circle (angles through their half-angle tangent).

use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::derive::SymMatrix;
use crate::expr::{Arena, Evaluator, ExprId, Func, Node, Scalar, Sym};
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
    /// Whether this is a real point on the manifold (as opposed to a complex point).
    pub real: bool,
}

impl Probe {
    /// The value of a symbol (velocities and right-hand sides are 1 + 0i: probes only
    /// evaluate expressions of q, p and t).
    pub fn value(&self, s: Sym) -> Complex64 {
        match s {
            Sym::Coord(i) => self.q[i as usize],
            Sym::Param(i) => self.p[i as usize],
            Sym::Time => self.t,
            Sym::Vel(_) | Sym::Rhs(_) => Complex64::new(1.0, 0.0),
        }
    }
}

/// Coordinates that occur inside a trigonometric function (treated as angles).
pub fn angle_coords(model: &Model) -> Vec<bool> {
    let a = &model.arena;
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
    }
}

/// The structurally nonzero entries of `C_J`, evaluated together, with the products
/// Newton projection and the manifold walk need. Mechanism Jacobians are sparse; working
/// on the nonzeros keeps a chain of loops linear-ish instead of `O(NC · NQ)` per step.
/// (Structural zeros contribute exact zeros, so results equal the dense products.)
pub struct SparseJacobian {
    eval: Evaluator,
    /// `(row, column)` of each entry.
    pos: Vec<(usize, usize)>,
    /// Entries of each column, by row.
    by_col: Vec<Vec<usize>>,
    nc: usize,
    /// Half-bandwidth of `J Jᵀ`: rows further apart share no column.
    band: usize,
}

impl SparseJacobian {
    /// Plans the evaluation of the nonzeros of `jacobian` (`NC × NQ`).
    pub fn new(arena: &Arena, jacobian: &SymMatrix) -> Self {
        Self::from_rows(arena, jacobian.rows(), jacobian.ncols())
    }

    /// Plans the evaluation of the sparse rows `rows` (`(column, entry)`, columns below
    /// `nq`), without needing them in one matrix (the manifold walk appends rows to `C_J`
    /// this way).
    pub fn from_rows<'r>(
        arena: &Arena,
        rows: impl Iterator<Item = &'r [(usize, ExprId)]>,
        nq: usize,
    ) -> Self {
        let mut roots = Vec::new();
        let mut pos = Vec::new();
        let mut by_col = vec![Vec::new(); nq];
        let mut nc = 0;
        for (r, row) in rows.enumerate() {
            nc = r + 1;
            for &(k, e) in row {
                if !arena.is_zero(e) {
                    by_col[k].push(roots.len());
                    roots.push(e);
                    pos.push((r, k));
                }
            }
        }
        let band = by_col
            .iter()
            .map(|col| {
                let rows = col.iter().map(|&a| pos[a].0);
                rows.clone().max().unwrap_or(0) - rows.min().unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        Self {
            eval: Evaluator::new(arena, &roots),
            pos,
            by_col,
            nc,
            band,
        }
    }

    /// `(row, column)` of each nonzero, in the order of [`SparseJacobian::values`].
    pub fn positions(&self) -> &[(usize, usize)] {
        &self.pos
    }

    /// Values of the nonzeros at `(q, p, t)`.
    pub fn values(&self, arena: &Arena, q: &[f64], p: &[f64], t: f64) -> Vec<f64> {
        let env = |s: Sym| match s {
            Sym::Coord(i) => q[i as usize],
            Sym::Param(i) => p[i as usize],
            Sym::Time => t,
            _ => 0.0,
        };
        self.eval.eval(arena, &env)
    }

    /// Factors `J Jᵀ + μ I` (`μ = 1e-12 · trace`, a tiny damping for rank-deficient
    /// rows) by banded Cholesky: `O(NC · band²)` for the banded systems of chains.
    /// `None` when it is not positive definite (non-finite values).
    pub fn normal_factor(&self, vals: &[f64]) -> Option<BandCholesky> {
        self.damped_factor(vals, 1e-12)
    }

    /// Factors `J Jᵀ + μ I` with `μ = rel · trace(J Jᵀ)` (Levenberg–Marquardt damping).
    pub fn damped_factor(&self, vals: &[f64], rel: f64) -> Option<BandCholesky> {
        let (n, b) = (self.nc, self.band);
        let w = b + 1;
        // Lower band, row-major: entry (i, j), i − b ≤ j ≤ i, at i·w + (j + b − i).
        let mut a = vec![0.0; n * w];
        for col in &self.by_col {
            for &x in col {
                for &y in col {
                    let (i, j) = (self.pos[x].0, self.pos[y].0);
                    if j <= i {
                        a[i * w + (j + b - i)] += vals[x] * vals[y];
                    }
                }
            }
        }
        let trace: f64 = (0..n).map(|i| a[i * w + b]).sum();
        let mu = rel * trace.max(1e-300);
        for i in 0..n {
            a[i * w + b] += mu;
        }
        for i in 0..n {
            for j in i.saturating_sub(b)..=i {
                let lo = i.saturating_sub(b).max(j.saturating_sub(b));
                let mut sum = a[i * w + (j + b - i)];
                for k in lo..j {
                    sum -= a[i * w + (k + b - i)] * a[j * w + (k + b - j)];
                }
                if i == j {
                    if !(sum > 0.0 && sum.is_finite()) {
                        return None;
                    }
                    a[i * w + b] = sum.sqrt();
                } else {
                    a[i * w + (j + b - i)] = sum / a[j * w + b];
                }
            }
        }
        Some(BandCholesky { l: a, n, b })
    }

    /// `J x`.
    pub fn mul(&self, vals: &[f64], x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.nc];
        for col in &self.by_col {
            for &a in col {
                let (r, k) = self.pos[a];
                out[r] += vals[a] * x[k];
            }
        }
        out
    }

    /// `Jᵀ y`.
    pub fn mul_t(&self, vals: &[f64], y: &[f64]) -> Vec<f64> {
        self.by_col
            .iter()
            .map(|col| col.iter().map(|&a| vals[a] * y[self.pos[a].0]).sum())
            .collect()
    }

    /// Whether every value is finite.
    pub fn finite(vals: &[f64]) -> bool {
        vals.iter().all(|v| v.is_finite())
    }
}

/// A banded Cholesky factor `L` (`L Lᵀ = J Jᵀ + μ I`).
pub struct BandCholesky {
    l: Vec<f64>,
    n: usize,
    b: usize,
}

impl BandCholesky {
    /// Solves `L Lᵀ x = r`.
    pub fn solve(&self, r: &[f64]) -> Vec<f64> {
        let (n, b, w) = (self.n, self.b, self.b + 1);
        let l = |i: usize, j: usize| self.l[i * w + (j + b - i)];
        let mut y = r.to_vec();
        for i in 0..n {
            let mut s = y[i];
            for k in i.saturating_sub(b)..i {
                s -= l(i, k) * y[k];
            }
            y[i] = s / l(i, i);
        }
        for i in (0..n).rev() {
            let mut s = y[i];
            for k in i + 1..(i + b + 1).min(n) {
                s -= l(k, i) * y[k];
            }
            y[i] = s / l(i, i);
        }
        y
    }
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
    // (iterate, its ‖C‖) of the best iterate so far, and the scale the floor test uses.
    let mut best: Option<(Vec<f64>, f64)> = None;
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
        if norm >= 0.5 * prev && prev <= small {
            return best.map(|(b, _)| b);
        }
        // Newton converges in a few steps from a start it can reach; one that no longer
        // gains after ten is stalled (a step too long, a fold): give up early, the
        // callers shorten the step or draw again.
        if it >= 10 && norm > 0.9 * prev {
            return None;
        }
        if best.as_ref().is_none_or(|(_, n)| norm < *n) {
            best = Some((q.clone(), norm));
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
        small = 1e-8 * (1.0 + jmax * (1.0 + qmax));
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
        if let Some(q) = project(&model.arena, residual, jacobian, &q0, params, t) {
            return to_probe(&q, params, t);
        }
        last = q0;
    }
    notes.push(
        "a real probe point could not be projected onto the constraint manifold; \
         probing used the perturbed nominal point instead (check the nominal coordinates)"
            .to_string(),
    );
    to_probe(&last, params, t)
}

fn to_probe(q: &[f64], p: &[f64], t: f64) -> Probe {
    Probe {
        q: q.iter().map(|&v| Complex64::new(v, 0.0)).collect(),
        p: p.iter().map(|&v| Complex64::new(v, 0.0)).collect(),
        t: Complex64::new(t, 0.0),
        real: true,
    }
}

/// Values of `roots` at probe `pr`, each with a first-order running bound of its rounding
/// error (every operation contributes `EPS·|result|`, and propagates its operands' errors
/// through its partial derivatives).
///
/// An entry no larger than a small multiple of its bound is numerically zero at the probe:
/// an expression that cancels to zero (`2(x + 0.1) − 2x − 0.2`, `d/dx (sin² x + cos² x)`)
/// but is not folded symbolically evaluates to rounding noise, which relative to a row of
/// the same noise would otherwise look like a perfectly good pivot.
pub fn eval_with_error(arena: &Arena, roots: &[ExprId], pr: &Probe) -> Vec<(Complex64, f64)> {
    const EPS: f64 = f64::EPSILON;
    let mask = arena.reachable(roots);
    let zero = (Complex64::new(0.0, 0.0), 0.0);
    let mut vals: Vec<(Complex64, f64)> = vec![zero; mask.len()];
    for (i, n) in arena.nodes().iter().enumerate() {
        if !mask[i] {
            continue;
        }
        let at = |c: ExprId| vals[c.index()];
        vals[i] = match *n {
            Node::Const(bits) => {
                let v = f64::from_bits(bits);
                (Complex64::new(v, 0.0), EPS * v.abs())
            }
            Node::Sym(s) => {
                let v = pr.value(s);
                (v, EPS * v.norm())
            }
            Node::Add(a, b) => {
                let ((va, ea), (vb, eb)) = (at(a), at(b));
                let v = va + vb;
                (v, ea + eb + EPS * v.norm())
            }
            Node::Mul(a, b) => {
                let ((va, ea), (vb, eb)) = (at(a), at(b));
                let v = va * vb;
                (v, va.norm() * eb + vb.norm() * ea + EPS * v.norm())
            }
            Node::Div(a, b) => {
                let ((va, ea), (vb, eb)) = (at(a), at(b));
                let v = va / vb;
                (v, (ea + v.norm() * eb) / vb.norm() + EPS * v.norm())
            }
            Node::Neg(a) => {
                let (va, ea) = at(a);
                (-va, ea)
            }
            Node::Powi(a, k) => {
                let (va, ea) = at(a);
                let v = va.powi(k);
                let d = (k as f64).abs() * va.powi(k - 1).norm();
                (v, d * ea + EPS * v.norm())
            }
            Node::Func(f, a) => {
                let (va, ea) = at(a);
                let v = f.eval(va);
                let d = f.rounding_gain(va, v);
                (v, d * ea + Func::ROUNDING_ULPS * EPS * v.norm())
            }
            Node::Atan2(y, x) => {
                let ((vy, ey), (vx, ex)) = (at(y), at(x));
                let v = vy.atan2(vx);
                let r2 = (vx * vx + vy * vy).norm();
                (
                    v,
                    (vx.norm() * ey + vy.norm() * ex) / r2 + 2.0 * EPS * v.norm(),
                )
            }
        };
    }
    roots.iter().map(|r| vals[r.index()]).collect()
}

/// A seeded generator (ChaCha8: portable and stable across platforms).
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}
