//! The projection method's partition-crossing guard: whether the dependent Jacobian
//! columns became singular between two accepted states.

use super::blocks::diagonal_blocks;
use super::*;

/// The dependent Jacobian columns `J_dep` at `q` (`None` when non-finite or the model's
/// `INDEPENDENT` is invalid).
pub(super) fn dependent_columns<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Option<DMatrix<f64>>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    if !linalg::finite(j.as_slice()) {
        return None;
    }
    Some(linalg::columns(&linalg::dmatrix(&j), chart.dependent()))
}

/// Whether the linear interpolant `J(s) = J₀ + s (J₁ − J₀)`, `s ∈ [0, 1]`, of the dependent
/// columns is singular somewhere: `J(s) = J₀ (I + s (A − I))` with `A = J₀⁺ J₁`, singular
/// exactly when `A` has a real eigenvalue `μ ≤ 0` (`s = 1 / (1 − μ)`). Parity-free, unlike
/// the sign of `det J_dep` (which an even number of simultaneous flips leaves unchanged).
/// `‖A − I‖_F < 1` rules it out without an eigenvalue computation.
pub(super) fn crosses_singularity(j0: &DMatrix<f64>, j1: &DMatrix<f64>) -> bool {
    crossing_point(j0, j1).is_some()
}

/// The first `s ∈ [0, 1]` where the interpolant of [`crosses_singularity`] is singular.
///
/// Eigenvalues `μ` with `Re μ ≤ 0` and `|Im μ| ≤ 0.1 |Re μ|` count as real: where several
/// singular directions cross at once (the windows of a parallelogram chain at their flat
/// position) `μ` is a multiple real eigenvalue, which rounding splits into a complex cluster
/// of radius `~ε^(1/k)` (k-fold); a bound of `1e-8` missed A02 with N = 2, whose projection
/// route then kept switching with ever smaller steps for over a minute instead of stopping.
///
/// A square block is first split into the irreducible diagonal blocks of its sparsity
/// pattern (the union of both ends': [`diagonal_blocks`]); in that order of rows and
/// columns `J(s)` and `A` are block-triangular, `A`'s eigenvalues are those of its diagonal
/// blocks `J₀ₖₖ⁻¹ J₁ₖₖ`, and each block is tested alone — the same answer, in `O(Σ nₖ³)`.
/// (A02 with 40 windows: forty 2 × 2 blocks where the 80 × 80 eigenvalue computation, its
/// eigenvalues forty-fold clusters, took 65 million instructions per call and often did
/// not converge.)
pub(super) fn crossing_point(j0: &DMatrix<f64>, j1: &DMatrix<f64>) -> Option<f64> {
    let n = j0.ncols();
    if n == 0 || j0.shape() != j1.shape() {
        return None;
    }
    GUARD_DECOMPOSITIONS.with(|c| c.set(c.get() + 1));
    if j0.nrows() == n {
        let nonzero = |i: usize, k: usize| j0[(i, k)] != 0.0 || j1[(i, k)] != 0.0;
        if let Some(blocks) = diagonal_blocks(n, nonzero).filter(|b| b.len() > 1) {
            let sub = |m: &DMatrix<f64>, rows: &[usize], cols: &[usize]| {
                DMatrix::from_fn(rows.len(), cols.len(), |i, k| m[(rows[i], cols[k])])
            };
            return blocks
                .iter()
                .filter_map(|(rows, cols)| {
                    crossing_point_dense(&sub(j0, rows, cols), &sub(j1, rows, cols))
                })
                .min_by(f64::total_cmp);
        }
    }
    crossing_point_dense(j0, j1)
}

/// [`crossing_point`] on the whole block (no splitting).
fn crossing_point_dense(j0: &DMatrix<f64>, j1: &DMatrix<f64>) -> Option<f64> {
    let n = j0.ncols();
    if n == 0 || j0.shape() != j1.shape() {
        return None;
    }
    // (`dependent_columns` passes finite matrices only; a NaN here would be a crossing at
    // the step's start, below, never a silent "no crossing".)
    let a = if j0.nrows() == n {
        match j0.clone().full_piv_lu().solve(j1) {
            Some(a) => a,
            None => return Some(0.0),
        }
    } else {
        match linalg::lstsq(j0, j1, 1e-13) {
            Some((a, _)) => a,
            None => return Some(0.0),
        }
    };
    if !linalg::finite(a.as_slice()) {
        return Some(0.0);
    }
    let ident = DMatrix::<f64>::identity(n, n);
    let b = &a - &ident;
    if b.norm() < 1.0 || spectral_radius_bound(&b) < 1.0 {
        return None;
    }
    // nalgebra's `complex_eigenvalues` iterates the Schur decomposition without a bound and
    // did not return on a 40-window chain near its flat position (A02 with N = 40): bounded
    // here, with the sign of `det A` (the classic test: an odd number of real eigenvalues
    // `≤ 0`) as the answer when the iteration does not converge.
    // (The determinant only where the iteration fails: one LU less per call.)
    match nalgebra::linalg::Schur::try_new(
        a.clone(),
        f64::EPSILON,
        SCHUR_MAX_ITERATIONS_PER_ROW * n,
    ) {
        Some(schur) => schur
            .complex_eigenvalues()
            .iter()
            .filter(|mu| mu.re <= 0.0 && mu.im.abs() <= 0.1 * mu.re.abs())
            .map(|mu| 1.0 / (1.0 - mu.re))
            .min_by(f64::total_cmp),
        None => {
            let det = a.determinant();
            (det <= 0.0 || det.is_nan()).then_some(0.5)
        }
    }
}

/// Iterations of the Schur decomposition per row in [`crossing_point`] before it gives up
/// (typical: 2–4 per eigenvalue). Was 30: on A02 with 40 windows near its flat positions
/// the iteration does not converge, and each of those calls cost as much as the rest of a
/// run's steps together before it gave up.
pub(super) const SCHUR_MAX_ITERATIONS_PER_ROW: usize = 6;

/// An upper bound on the spectral radius of `b` in `O(n²)` per iteration: the
/// Collatz–Wielandt bound `max_i (|B| x)_i / x_i ≥ ρ(|B|) ≥ ρ(B)` for positive `x`, from a few
/// power iterations of `|B|` (which sharpen `x` towards its Perron vector). Below 1, no
/// eigenvalue of `A = I + B` is `≤ 0` and the interpolant of [`crosses_singularity`] is
/// regular without an eigenvalue computation (on A02 with 40 windows `ρ(A − I)` is 0.07–0.33
/// where `‖A − I‖_F` is 1.2–4: the block-triangular `A − I` of a chain). `∞` for non-finite
/// entries.
pub(super) fn spectral_radius_bound(b: &DMatrix<f64>) -> f64 {
    let n = b.nrows();
    if n == 0 || b.ncols() != n {
        return f64::INFINITY;
    }
    let abs = b.abs();
    let mut x = vec![1.0; n];
    let mut best = f64::INFINITY;
    for _ in 0..SPECTRAL_BOUND_ITERATIONS {
        let y: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| abs[(i, j)] * x[j]).sum::<f64>())
            .collect();
        let bound = y.iter().zip(&x).map(|(yi, xi)| yi / xi).fold(0.0, max_nan);
        if bound.is_nan() {
            return f64::INFINITY;
        }
        best = best.min(bound);
        if best < 1.0 {
            break;
        }
        // Keep `x` positive (a zero entry would make the next ratio 0/0): a floor relative
        // to its largest entry.
        let top = y.iter().copied().fold(0.0, f64::max);
        if !(top > 0.0 && top.is_finite()) {
            return if top == 0.0 { 0.0 } else { f64::INFINITY };
        }
        for (xi, yi) in x.iter_mut().zip(&y) {
            *xi = (yi / top).max(1e-12);
        }
    }
    best
}

/// Dependent coordinates up to which the crossing guard tests every accepted step, whatever
/// the chart's health ([`GUARD_HEALTH_RATIO`]): the test of a block this small costs about
/// what a right-hand side does, and a hand-written model's health figure may not show a
/// singularity (runtime/tests/rank_drop.rs: a parallelogram whose figure stays 0.71 up to its
/// flat positions, which the test then missed).
pub const GUARD_ALWAYS_DEPENDENT: usize = 12;

/// Power iterations of [`spectral_radius_bound`].
pub(super) const SPECTRAL_BOUND_ITERATIONS: usize = 8;

std::thread_local! {
    /// Dependent-block decompositions of the crossing guard on this thread
    /// ([`crossing_guard_decompositions`]).
    static GUARD_DECOMPOSITIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times the projection method's partition-crossing guard factored the dependent
/// Jacobian columns (`O(NQ³)`: an LU, and where that does not settle it an eigenvalue
/// computation) on the calling thread since it started. The guard runs that test only where
/// the chart's health at either end of a step is below [`GUARD_HEALTH_RATIO`] of the model's
/// typical health (or the model has at most [`GUARD_ALWAYS_DEPENDENT`] dependent
/// coordinates); elsewhere it costs no decomposition. A count for tests and profiling.
pub fn crossing_guard_decompositions() -> usize {
    GUARD_DECOMPOSITIONS.with(|c| c.get())
}

/// The partition-crossing test of the projection method runs only where
/// the chart's health ([`crate::null_space::chart_health`]) at either end of an accepted step
/// is below this fraction of the model's typical health
/// ([`Mechanism::TYPICAL_HEALTH`], capped at 1): a step whose ends are both healthy did not
/// pass through a singularity of the chart. (This trusts the model's health figure; models
/// with at most [`GUARD_ALWAYS_DEPENDENT`] dependent coordinates are tested at every step.)
/// Measured where the tests cross: the chart's health at the lower end of every detected
/// crossing was at most 0.096 of the typical health (a parallelogram's symmetric crossing, 0.037 and 0.041 at its ends with a typical
/// 0.43; the five-bar, natural pendulum and rocker four-bar crossings lower).
pub const GUARD_HEALTH_RATIO: f64 = 0.25;

/// Remembers `J_dep` at the last projected state of the projection method and reports a
/// crossing of a configuration where the independent coordinates fail
/// ([`crosses_singularity`]). Not used by the Lagrange route, which needs no partition.
#[derive(Default)]
pub(super) struct CrossingGuard {
    pub(super) last: Option<(f64, DMatrix<f64>)>,
}

impl CrossingGuard {
    pub(super) fn check<M, const NQ: usize, const NC: usize, const DOF: usize>(
        &mut self,
        chart: &Chart<DOF>,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Result<(), SimError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        if let Some(j1) = dependent_columns::<M, NQ, NC, DOF>(chart, q, p, t) {
            if let Some((t_prev, j0)) = &self.last {
                if crosses_singularity(j0, &j1) {
                    let (a, b) = if *t_prev <= t {
                        (*t_prev, t)
                    } else {
                        (t, *t_prev)
                    };
                    return Err(SimError::PartitionCrossed { t_prev: a, t: b });
                }
            }
            self.last = Some((t, j1));
        }
        Ok(())
    }
}
