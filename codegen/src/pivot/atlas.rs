//! A pivot atlas: a few static pivot sequences (charts) such that at every sampled
//! configuration of the motion at least one of them is healthy.
//!
//! One static pivot order breaks down on a set of configurations: where its dependent
//! columns become singular (the rocker of a four-bar at a toggle, a five-bar's distal link
//! vertical, every coordinate of Bricard's loop somewhere). Generation samples the motion
//! — walks along the manifold from the real probe points, in the direction of every
//! independent coordinate and in random directions, both ways, through turning points —
//! and evaluates the *health* of the primary chart at every sample, with the same figure
//! the generated `null_space` reports: `min_k |U_kk| / ‖C_J[rows, :]‖_F` of the LU of the
//! chart's dependent block without pivoting. Where it is below [`COVER`], a complete-pivoting
//! LU of `C_J` at that sample gives a pivot order — first keeping the primary's independent
//! coordinates (a five-bar whose fixed order divides by zero where a distal link is
//! vertical only needs another order), then the named ones, then any — which becomes the
//! next chart if it covers that sample and is generic (nonzero pivots at nine in ten
//! samples). Walks step over the point where a chart fails (a toggle is a point), so local
//! minima of the primary's health along each walk are refined by a ternary search. At most
//! [`MAX_CHARTS`] charts. Models with more than [`MAX_NQ`] coordinates (up to
//! [`LOCAL_MAX_NQ`]) are sampled locally instead of walked, and get only charts with the
//! primary's independent coordinates (another pivot order of the same dependent block: the
//! Stewart platform's fixed order degrades at 2–4 % of its regular poses near the nominal,
//! where the dependent block itself is well conditioned).
//!
//! The same samples give the primary chart's typical health ([`typical_health`], their
//! median), which the runtime's partition switching measures against; models up to
//! [`TYPICAL_MAX_NQ`] coordinates without an atlas get [`TYPICAL_SAMPLES`] local samples for
//! it alone.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::probe::{project, SparseJacobian};
use super::walk::unit_tangent;
use crate::expr::{Arena, Evaluator, Sym};

/// A chart covers a sample where its health is at least this.
pub const COVER: f64 = 1e-2;
/// Charts at most (the primary one included).
pub const MAX_CHARTS: usize = 4;
/// Steps per walk.
const STEPS: usize = 32;
/// Step length per coordinate (times `√NQ` in the full norm, as in the walk of `walk.rs`).
const STEP: f64 = 0.1;
/// Models with more coordinates than this get no walks: the sampling is dense
/// (`O(NC·NQ)` per sample and chart), each chart is a further symbolic LU, and walks along
/// many coordinates leave any realistic workspace (the Stewart platform, NQ = 24, gained
/// three charts of ~2,000 operations for gimbal-vertical legs far outside its workspace,
/// and 16× the generation time). Up to [`LOCAL_MAX_NQ`] they get a local atlas instead
/// ([`Sampler::local_samples`], charts with the primary's independent coordinates only).
pub const MAX_NQ: usize = 16;
/// Models with more coordinates than this get no atlas: their fixed pivot order is kept,
/// with the runtime's numeric fallback.
pub const LOCAL_MAX_NQ: usize = 64;
/// Samples of a local atlas.
pub const LOCAL_SAMPLES: usize = 96;
/// Samples (besides the start) for the typical health alone (models without an atlas: more
/// than [`LOCAL_MAX_NQ`] coordinates, or a named chart): a median needs fewer than a cover,
/// and each sample of a large model is a dense Newton solve (A02 with 40 windows, 81
/// coordinates: 96 samples added 67 % to its generation, 16 added 11 %).
pub const TYPICAL_SAMPLES: usize = 4;
/// Models with more coordinates than this are not sampled at all (typical health 1): the
/// samples are dense, `O(NQ³)` each (a chain of 1,000 four-bar windows, 2,001 coordinates,
/// took 25 s instead of 0.8 s with 16 samples).
pub const TYPICAL_MAX_NQ: usize = 200;
/// Half-width of the uniform perturbation of each independent coordinate for a local
/// atlas's samples (radians or length units of the model: one scale for all, as the walks'
/// step length per coordinate).
pub const LOCAL_AMPLITUDE: f64 = 0.3;

/// A chart: constraint rows in pivot order and coordinates in pivot order (the first
/// `rows.len()` dependent, the rest independent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChartOrder {
    /// Pivot rows.
    pub rows: Vec<usize>,
    /// Pivot columns, then the independent coordinates.
    pub cols: Vec<usize>,
}

/// A dense `C_J`, row-major.
pub type Dense = Vec<Vec<f64>>;

/// What the sampling needs to evaluate the model.
pub struct Sampler<'a> {
    /// The DAG.
    pub arena: &'a Arena,
    /// The residual `C`.
    pub residual: &'a Evaluator,
    /// The Jacobian `C_J`.
    pub jacobian: &'a SparseJacobian,
    /// Parameter values.
    pub params: &'a [f64],
    /// Coordinates.
    pub nq: usize,
    /// Constraint equations.
    pub nc: usize,
}

impl Sampler<'_> {
    /// Dense `C_J` at `(q, t)`, row-major; `None` when not finite.
    pub fn dense(&self, q: &[f64], t: f64) -> Option<Dense> {
        let vals = self.jacobian.values(self.arena, q, self.params, t);
        if !SparseJacobian::finite(&vals) {
            return None;
        }
        let mut a = vec![vec![0.0; self.nq]; self.nc];
        for (k, &(i, j)) in self.jacobian.positions().iter().enumerate() {
            a[i][j] = vals[k];
        }
        Some(a)
    }

    /// Samples of the motion: from each start `(q, t)` on the manifold, walks of
    /// [`STEPS`] steps along the tangent space in the direction of each coordinate of
    /// `independent` and of `extra` random directions, both ways.
    pub fn samples(
        &self,
        starts: &[(Vec<f64>, f64)],
        independent: &[usize],
        extra: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Vec<(Vec<f64>, f64)>> {
        let mut out: Vec<Vec<(Vec<f64>, f64)>> = Vec::new();
        let h = STEP * (self.nq as f64).sqrt();
        for (q0, t) in starts {
            let mut dirs: Vec<Vec<f64>> = independent
                .iter()
                .map(|&i| {
                    let mut e = vec![0.0; self.nq];
                    e[i] = 1.0;
                    e
                })
                .collect();
            for _ in 0..extra {
                dirs.push((0..self.nq).map(|_| rng.random_range(-1.0..1.0)).collect());
            }
            for dir in &dirs {
                for sign in [1.0, -1.0] {
                    let mut guess: Vec<f64> = dir.iter().map(|v| v * sign).collect();
                    let mut q = q0.clone();
                    let mut path = vec![(q0.clone(), *t)];
                    for _ in 0..STEPS {
                        let Some(v) =
                            unit_tangent(self.arena, self.jacobian, &q, self.params, *t, &guess)
                        else {
                            break;
                        };
                        let mut moved = None;
                        let mut len = h;
                        for _ in 0..4 {
                            let trial: Vec<f64> =
                                q.iter().zip(&v).map(|(a, b)| a + len * b).collect();
                            if let Some(next) = project(
                                self.arena,
                                self.residual,
                                self.jacobian,
                                &trial,
                                self.params,
                                *t,
                            ) {
                                moved = Some(next);
                                break;
                            }
                            len *= 0.5;
                        }
                        let Some(next) = moved else { break };
                        // Keep going the way we went (through turning points of the
                        // coordinates, not back).
                        guess = v;
                        q = next;
                        path.push((q.clone(), *t));
                    }
                    out.push(path);
                }
            }
        }
        out
    }

    /// Samples near the starts for a model too large for walks: the independent coordinates
    /// of `chart` perturbed uniformly by up to [`LOCAL_AMPLITUDE`] and held there while the
    /// dependent ones are solved for ([`Sampler::assemble`]; a minimum-norm projection
    /// would give most of the perturbation back); `n` in all (those that do not assemble are
    /// dropped).
    pub fn local_samples(
        &self,
        starts: &[(Vec<f64>, f64)],
        chart: &ChartOrder,
        n: usize,
        rng: &mut ChaCha8Rng,
    ) -> Vec<(Vec<f64>, f64)> {
        let mut out = Vec::with_capacity(n + starts.len());
        if starts.is_empty() {
            return out;
        }
        out.extend(starts.iter().cloned());
        let r = chart.rows.len();
        for k in 0..n {
            let (q0, t) = &starts[k % starts.len()];
            let mut guess = q0.clone();
            for &i in &chart.cols[r..] {
                guess[i] += rng.random_range(-LOCAL_AMPLITUDE..LOCAL_AMPLITUDE);
            }
            if let Some(q) = self.assemble(chart, guess, *t) {
                out.push((q, *t));
            }
        }
        out
    }

    /// Newton on `chart`'s pivot rows for its dependent coordinates, the independent ones
    /// held: `None` when it does not converge in 30 iterations (to `‖C‖ ≤ 1e-12 (1 + |q|)`
    /// over all rows) or meets a singular dependent block.
    fn assemble(&self, chart: &ChartOrder, mut q: Vec<f64>, t: f64) -> Option<Vec<f64>> {
        let r = chart.rows.len();
        for _ in 0..30 {
            let env = |s: Sym| match s {
                Sym::Coord(i) => q[i as usize],
                Sym::Param(i) => self.params[i as usize],
                Sym::Time => t,
                _ => 0.0,
            };
            let c: Vec<f64> = self.residual.eval(self.arena, &env);
            let size = 1.0 + q.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !norm.is_finite() {
                return None;
            }
            if norm <= 1e-12 * size {
                return Some(q);
            }
            let a = self.dense(&q, t)?;
            // [J_dep | −C] on the pivot rows, by Gaussian elimination with partial pivoting.
            let mut m: Vec<Vec<f64>> = chart
                .rows
                .iter()
                .map(|&i| {
                    let mut row: Vec<f64> = chart.cols[..r].iter().map(|&j| a[i][j]).collect();
                    row.push(-c[i]);
                    row
                })
                .collect();
            for k in 0..r {
                let p = (k..r).max_by(|&x, &y| m[x][k].abs().total_cmp(&m[y][k].abs()))?;
                if m[p][k].abs() <= 1e-14 || m[p][k].is_nan() {
                    return None;
                }
                m.swap(k, p);
                for i in k + 1..r {
                    let l = m[i][k] / m[k][k];
                    if l != 0.0 {
                        for j in k..=r {
                            m[i][j] -= l * m[k][j];
                        }
                    }
                }
            }
            for k in (0..r).rev() {
                let mut x = m[k][r];
                for j in k + 1..r {
                    x -= m[k][j] * m[j][r];
                }
                m[k][r] = x / m[k][k];
            }
            for k in 0..r {
                q[chart.cols[k]] += m[k][r];
            }
        }
        None
    }

    /// The health of `chart` at `(q, t)`: `min_k |U_kk| / ‖C_J[rows, :]‖_F` of the LU
    /// without pivoting of `C_J[rows, cols[..r]]`, clamped to `[0, 1]`; 0 when not finite.
    pub fn health(&self, chart: &ChartOrder, q: &[f64], t: f64) -> f64 {
        self.dense(q, t).map_or(0.0, |a| health_in(chart, &a))
    }

    /// A pivot order for `(q, t)`: complete pivoting on `C_J` (rows scaled to unit max
    /// norm) with pivot columns chosen outside `keep` (coordinates to keep independent),
    /// `rank` pivots. The independent coordinates follow the pivots: `keep` first, then
    /// the rest ascending. `None` when the Jacobian is not finite or has lower rank there.
    pub fn order_at(&self, q: &[f64], t: f64, rank: usize, keep: &[usize]) -> Option<ChartOrder> {
        self.order_in(self.dense(q, t)?, rank, keep)
    }

    /// [`Sampler::order_at`] of a Jacobian already evaluated.
    pub fn order_in(&self, mut a: Dense, rank: usize, keep: &[usize]) -> Option<ChartOrder> {
        for row in &mut a {
            let m = row.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            if m > 0.0 {
                row.iter_mut().for_each(|v| *v /= m);
            }
        }
        let mut row_used = vec![false; self.nc];
        let mut col_used = vec![false; self.nq];
        for &j in keep {
            col_used[j] = true;
        }
        let (mut rows, mut cols) = (Vec::with_capacity(rank), Vec::with_capacity(self.nq));
        for _ in 0..rank {
            let mut best = (0.0, 0, 0);
            for i in (0..self.nc).filter(|&i| !row_used[i]) {
                for j in (0..self.nq).filter(|&j| !col_used[j]) {
                    if a[i][j].abs() > best.0 {
                        best = (a[i][j].abs(), i, j);
                    }
                }
            }
            let (v, pi, pj) = best;
            if v <= 1e-9 {
                return None;
            }
            row_used[pi] = true;
            col_used[pj] = true;
            rows.push(pi);
            cols.push(pj);
            let prow = a[pi].clone();
            for i in (0..self.nc).filter(|&i| !row_used[i]) {
                let l = a[i][pj] / prow[pj];
                if l != 0.0 {
                    for j in 0..self.nq {
                        a[i][j] -= l * prow[j];
                    }
                }
            }
        }
        cols.extend(keep.iter().copied());
        let rest: Vec<usize> = (0..self.nq).filter(|j| !cols.contains(j)).collect();
        cols.extend(rest);
        Some(ChartOrder { rows, cols })
    }
}

/// [`Sampler::health`] of a Jacobian already evaluated.
pub fn health_in(chart: &ChartOrder, a: &[Vec<f64>]) -> f64 {
    let r = chart.rows.len();
    let scale = chart
        .rows
        .iter()
        .map(|&i| a[i].iter().map(|v| v * v).sum::<f64>())
        .sum::<f64>()
        .sqrt();
    if !(scale > 0.0 && scale.is_finite()) {
        return 0.0;
    }
    let mut u: Vec<Vec<f64>> = chart
        .rows
        .iter()
        .map(|&i| chart.cols[..r].iter().map(|&j| a[i][j]).collect())
        .collect();
    let mut min = f64::INFINITY;
    for k in 0..r {
        let piv = u[k][k];
        min = min.min(piv.abs());
        if piv == 0.0 || !piv.is_finite() {
            return 0.0;
        }
        for i in k + 1..r {
            let l = u[i][k] / piv;
            if l != 0.0 {
                for j in k + 1..r {
                    u[i][j] -= l * u[k][j];
                }
            }
        }
    }
    if r == 0 {
        return 1.0;
    }
    (min / scale).min(1.0)
}

/// The samples of `paths`, with, for every interior local minimum of `chart`'s health
/// below `0.5` along a path, the point of least health between its neighbours (a ternary
/// search along the projected polyline): walks step over the configurations where a chart
/// fails (a toggle is a point), this finds them.
pub fn refine(
    s: &Sampler<'_>,
    chart: &ChartOrder,
    paths: &[Vec<(Vec<f64>, f64)>],
) -> Vec<(Vec<f64>, f64)> {
    let mut out = Vec::new();
    for path in paths {
        let h: Vec<f64> = path.iter().map(|(q, t)| s.health(chart, q, *t)).collect();
        out.extend(path.iter().cloned());
        for k in 1..path.len().saturating_sub(1) {
            if !(h[k] < 0.5 && h[k] <= h[k - 1] && h[k] <= h[k + 1]) {
                continue;
            }
            let t = path[k].1;
            // Point at parameter x ∈ [0, 2] of the polyline q[k−1] → q[k] → q[k+1].
            let at = |x: f64| -> Option<Vec<f64>> {
                let (a, b, w) = if x <= 1.0 {
                    (&path[k - 1].0, &path[k].0, x)
                } else {
                    (&path[k].0, &path[k + 1].0, x - 1.0)
                };
                let guess: Vec<f64> = a.iter().zip(b).map(|(u, v)| u + w * (v - u)).collect();
                project(s.arena, s.residual, s.jacobian, &guess, s.params, t)
            };
            let eval = |x: f64| at(x).map_or(f64::INFINITY, |q| s.health(chart, &q, t));
            // Golden-section search: one evaluation per step, 30 steps (the bracket shrinks
            // to 1e-6 of its length).
            let r = 0.5 * (5f64.sqrt() - 1.0);
            let (mut lo, mut hi) = (0.0f64, 2.0f64);
            let (mut x1, mut x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
            let (mut f1, mut f2) = (eval(x1), eval(x2));
            for _ in 0..30 {
                if f1 <= f2 {
                    hi = x2;
                    (x2, f2) = (x1, f1);
                    x1 = hi - r * (hi - lo);
                    f1 = eval(x1);
                } else {
                    lo = x1;
                    (x1, f1) = (x2, f2);
                    x2 = lo + r * (hi - lo);
                    f2 = eval(x2);
                }
            }
            if let Some(q) = at(0.5 * (lo + hi)) {
                out.push((q, t));
            }
        }
    }
    out
}

/// The typical health of `chart` over the samples' Jacobians `mats` (`None` where not
/// finite): the median of [`health_in`],
/// rounded to two significant digits (a figure for thresholds, emitted as a constant); 1
/// when there are no samples.
pub fn typical_health(chart: &ChartOrder, mats: &[Option<Dense>]) -> f64 {
    let mut h: Vec<f64> = mats
        .iter()
        .map(|a| a.as_ref().map_or(0.0, |a| health_in(chart, a)))
        .collect();
    if h.is_empty() {
        return 1.0;
    }
    h.sort_by(f64::total_cmp);
    let m = h[h.len() / 2];
    if m.is_nan() || m <= 0.0 {
        return 0.0;
    }
    // Two significant digits, as the nearest double to their decimal form.
    format!("{m:.1e}").parse::<f64>().map_or(m, |v| v.min(1.0))
}

/// Extends `primary` to an atlas over the samples' Jacobians `mats` (`None` where not
/// finite): repeatedly takes the sample where every
/// chart so far is least healthy (below [`COVER`]) and tries, in turn, a new pivot order
/// with the primary's independent coordinates, one keeping the `named` ones independent,
/// and one free ([`Sampler::order_at`] at that sample); with `same_independent`, only the
/// first (a local atlas). A candidate is kept when it covers
/// that sample and is generic — nonzero pivots (health above `1e-10`) at nine in ten
/// samples, so that it is no accident of one configuration. Returns the charts after the
/// primary one, and how many samples no chart covers.
pub fn extend(
    s: &Sampler<'_>,
    primary: &ChartOrder,
    named: &[usize],
    mats: &[Option<Dense>],
    same_independent: bool,
) -> (Vec<ChartOrder>, usize) {
    let rank = primary.rows.len();
    let n = mats.len();
    let health =
        |chart: &ChartOrder, k: usize| mats[k].as_ref().map_or(0.0, |a| health_in(chart, a));
    let order = |k: usize, keep: &[usize]| {
        mats[k]
            .as_ref()
            .and_then(|a| s.order_in(a.clone(), rank, keep))
    };
    let mut charts: Vec<ChartOrder> = vec![primary.clone()];
    // Best health over the charts so far, per sample.
    let mut best: Vec<f64> = (0..n).map(|k| health(primary, k)).collect();
    let all: [&[usize]; 3] = [&primary.cols[rank..], named, &[]];
    let keeps: &[&[usize]] = if same_independent { &all[..1] } else { &all };
    // Samples where the mechanism itself is singular (no chart can be healthy there) are
    // not worth a chart; decided for the samples no chart covers only.
    let mut regular: Vec<Option<bool>> = vec![None; n];
    let mut is_regular = |k: usize| {
        *regular[k].get_or_insert_with(|| order(k, &[]).is_some_and(|c| health(&c, k) >= COVER))
    };
    while charts.len() < MAX_CHARTS {
        let mut todo: Vec<usize> = (0..n)
            .filter(|&k| best[k] < COVER && is_regular(k))
            .collect();
        todo.sort_by(|&a, &b| best[a].total_cmp(&best[b]).then(a.cmp(&b)));
        let mut added = None;
        'samples: for k in todo {
            for &keep in keeps {
                let Some(chart) = order(k, keep) else {
                    continue;
                };
                if charts.contains(&chart) || health(&chart, k) < COVER {
                    continue;
                }
                let healths: Vec<f64> = (0..n).map(|k| health(&chart, k)).collect();
                let generic = healths.iter().filter(|&&h| h > 1e-10).count();
                if generic * 10 < n * 9 {
                    continue;
                }
                added = Some((chart, healths));
                break 'samples;
            }
        }
        let Some((chart, healths)) = added else {
            break;
        };
        for (b, h) in best.iter_mut().zip(healths) {
            *b = b.max(h);
        }
        charts.push(chart);
    }
    let uncovered = (0..n).filter(|&k| best[k] < COVER && is_regular(k)).count();
    charts.remove(0);
    (charts, uncovered)
}
