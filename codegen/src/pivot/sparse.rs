//! The sparse constraint Jacobian the probes and the manifold walk evaluate (its nonzeros
//! only), and the banded Cholesky factor of `J Jᵀ` its Newton steps solve with.

use crate::derive::SymMatrix;
use crate::expr::{Arena, Evaluator, ExprId, Sym};

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
