//! Static pivot selection: Gaussian elimination with complete pivoting on all probe
//! matrices at once, with shared choices.

use num_complex::Complex64;

/// Relative size under which an entry counts as zero in a probe.
pub const NEGLIGIBLE: f64 = 1e-9;
/// A candidate at least this fraction of the best score may be preferred for sparsity
/// (threshold pivoting: keeps fill-in, and so the generated code, small).
pub const THRESHOLD: f64 = 0.1;

/// The pivot sequence found.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Pivot `(row, column)` of each step.
    pub pivots: Vec<(usize, usize)>,
    /// Score of each pivot: the minimum over probes of `|a| / scale`.
    pub scores: Vec<f64>,
    /// The best remaining score when elimination stopped (0 if nothing remained).
    pub residual_score: f64,
}

/// Runs the shared elimination. `mats[p]` is probe `p`'s matrix (row-major, `m × n`),
/// `structural[i][j]` whether entry `(i, j)` is structurally nonzero; `allowed[j]` whether
/// column `j` may be a pivot column.
pub fn eliminate(
    mut mats: Vec<Vec<Vec<Complex64>>>,
    structural: &[Vec<bool>],
    allowed: &[bool],
) -> Selection {
    let m = structural.len();
    let n = allowed.len();
    let scales: Vec<f64> = mats
        .iter()
        .map(|a| {
            a.iter()
                .flatten()
                .map(|v| v.norm())
                .fold(0.0f64, f64::max)
                .max(1e-300)
        })
        .collect();
    let mut s: Vec<Vec<bool>> = structural.to_vec();
    let mut row_done = vec![false; m];
    let mut col_done = vec![false; n];
    let mut pivots = Vec::new();
    let mut scores = Vec::new();
    let residual_score;
    loop {
        // Score every candidate.
        let mut cands: Vec<(f64, usize, usize)> = Vec::new();
        for i in (0..m).filter(|&i| !row_done[i]) {
            for j in (0..n).filter(|&j| !col_done[j] && allowed[j] && s[i][j]) {
                let score = mats
                    .iter()
                    .zip(&scales)
                    .map(|(a, sc)| a[i][j].norm() / sc)
                    .fold(f64::INFINITY, f64::min);
                cands.push((score, i, j));
            }
        }
        let best = cands.iter().map(|c| c.0).fold(0.0f64, f64::max);
        if best < NEGLIGIBLE {
            residual_score = best;
            break;
        }
        // Among numerically acceptable candidates, fewest structural nonzeros in the
        // pivot row and column (Markowitz), then the larger score, then the lowest index.
        let row_count: Vec<usize> = (0..m)
            .map(|i| (0..n).filter(|&j| !col_done[j] && s[i][j]).count())
            .collect();
        let col_count: Vec<usize> = (0..n)
            .map(|j| (0..m).filter(|&i| !row_done[i] && s[i][j]).count())
            .collect();
        let (_, pi, pj) = cands
            .iter()
            .filter(|c| c.0 >= THRESHOLD * best)
            .map(|&(score, i, j)| {
                let mk = (row_count[i] - 1) * (col_count[j] - 1);
                (mk, score, i, j)
            })
            .min_by(|x, y| {
                x.0.cmp(&y.0)
                    .then(y.1.total_cmp(&x.1))
                    .then(x.2.cmp(&y.2))
                    .then(x.3.cmp(&y.3))
            })
            .map(|(_, score, i, j)| (score, i, j))
            .unwrap_or((0.0, 0, 0));
        let score = cands
            .iter()
            .find(|c| c.1 == pi && c.2 == pj)
            .map(|c| c.0)
            .unwrap_or(0.0);
        pivots.push((pi, pj));
        scores.push(score);
        row_done[pi] = true;
        col_done[pj] = true;
        // Eliminate in every probe; update the structure with fill-in.
        for a in mats.iter_mut() {
            let piv = a[pi][pj];
            for i in (0..m).filter(|&i| !row_done[i] && s[i][pj]) {
                let l = a[i][pj] / piv;
                for j in (0..n).filter(|&j| !col_done[j] && s[pi][j]) {
                    let v = a[pi][j];
                    a[i][j] -= l * v;
                }
                a[i][pj] = Complex64::new(0.0, 0.0);
            }
        }
        let prow: Vec<usize> = (0..n).filter(|&j| !col_done[j] && s[pi][j]).collect();
        let pcol: Vec<usize> = (0..m).filter(|&i| !row_done[i] && s[i][pj]).collect();
        for &i in &pcol {
            for &j in &prow {
                s[i][j] = true;
            }
        }
    }
    Selection {
        pivots,
        scores,
        residual_score,
    }
}
