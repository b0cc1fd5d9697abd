//! Static pivot selection: Gaussian elimination with complete pivoting on all probe
//! matrices at once, with shared choices.

use num_complex::Complex64;

/// Size, relative to its equation's largest Jacobian entry, under which an entry counts
/// as zero in a probe.
pub const NEGLIGIBLE: f64 = 1e-9;
/// A candidate at least this fraction of the largest remaining entry of its column (entries
/// scaled by their equation's scale), in every probe, may be chosen for sparsity (threshold pivoting: keeps fill-in, and so the
/// generated code, small).
pub const THRESHOLD: f64 = 0.01;

/// The pivot sequence found.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Pivot `(row, column)` of each step.
    pub pivots: Vec<(usize, usize)>,
    /// Score of each pivot: the minimum over probes of `|a|` relative to its equation's scale.
    pub scores: Vec<f64>,
    /// Always 0: elimination stops when no entry is above [`NEGLIGIBLE`].
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
    // Scale of each original row in each probe: an entry is zero when it is negligible
    // against its own equation (equations may be in different units).
    let row_scale: Vec<Vec<f64>> = mats
        .iter()
        .map(|a| {
            a.iter()
                .map(|row| {
                    row.iter()
                        .map(|v| v.norm())
                        .fold(0.0f64, f64::max)
                        .max(1e-300)
                })
                .collect()
        })
        .collect();
    // Columns coupled to few equations make natural dependent coordinates; columns in
    // many equations (a platform pose, a driving crank) natural independent ones.
    let orig_col_count: Vec<usize> = (0..n)
        .map(|j| (0..m).filter(|&i| structural[i][j]).count())
        .collect();
    let mut s: Vec<Vec<bool>> = structural.to_vec();
    // Structural nonzeros by row and by column (grown with fill-in), so that each step
    // costs O(nonzeros), not O(m n): sparse mechanisms stay near-linear.
    let mut row_nz: Vec<Vec<usize>> = (0..m)
        .map(|i| (0..n).filter(|&j| s[i][j]).collect())
        .collect();
    let mut col_nz: Vec<Vec<usize>> = (0..n)
        .map(|j| (0..m).filter(|&i| s[i][j]).collect())
        .collect();
    let debug = std::env::var_os("MECHGEN_DEBUG_PIVOTS").is_some();
    let mut row_done = vec![false; m];
    let mut col_done = vec![false; n];
    let mut pivots = Vec::new();
    let mut scores = Vec::new();
    let residual_score;
    loop {
        // Largest remaining entry of each column in each probe, relative to its row's
        // scale (for the threshold: multipliers of the elimination stay bounded).
        let col_max: Vec<Vec<f64>> = mats
            .iter()
            .enumerate()
            .map(|(p, a)| {
                (0..n)
                    .map(|j| {
                        col_nz[j]
                            .iter()
                            .filter(|&&i| !row_done[i])
                            .map(|&i| a[i][j].norm() / row_scale[p][i])
                            .fold(0.0f64, f64::max)
                            .max(1e-300)
                    })
                    .collect()
            })
            .collect();
        // (global score, local score, row, column)
        let mut cands: Vec<(f64, f64, usize, usize)> = Vec::new();
        for i in (0..m).filter(|&i| !row_done[i]) {
            for &j in row_nz[i].iter().filter(|&&j| !col_done[j] && allowed[j]) {
                let mut global = f64::INFINITY;
                let mut local = f64::INFINITY;
                for (p, a) in mats.iter().enumerate() {
                    let v = a[i][j].norm();
                    global = global.min(v / row_scale[p][i]);
                    local = local.min(v / row_scale[p][i] / col_max[p][j]);
                }
                if global >= NEGLIGIBLE {
                    cands.push((global, local, i, j));
                }
            }
        }
        if cands.is_empty() {
            residual_score = 0.0;
            break;
        }
        // Among candidates large against the rest of their column in every probe, fewest
        // structural nonzeros in the pivot row and column (Markowitz), then the column in
        // fewest original equations, then the larger local score, then the lowest index.
        let any_acceptable = cands.iter().any(|c| c.1 >= THRESHOLD);
        let row_count: Vec<usize> = (0..m)
            .map(|i| row_nz[i].iter().filter(|&&j| !col_done[j]).count())
            .collect();
        let col_count: Vec<usize> = (0..n)
            .map(|j| col_nz[j].iter().filter(|&&i| !row_done[i]).count())
            .collect();
        let Some(&(global, _, pi, pj)) = cands
            .iter()
            .filter(|c| !any_acceptable || c.1 >= THRESHOLD)
            .min_by(|x, y| {
                let mx = (row_count[x.2] - 1) * (col_count[x.3] - 1);
                let my = (row_count[y.2] - 1) * (col_count[y.3] - 1);
                mx.cmp(&my)
                    .then(orig_col_count[x.3].cmp(&orig_col_count[y.3]))
                    .then(y.1.total_cmp(&x.1))
                    .then(x.2.cmp(&y.2))
                    .then(x.3.cmp(&y.3))
            })
        else {
            residual_score = 0.0;
            break;
        };
        if debug {
            eprintln!("pivot ({pi},{pj}) rc {} cc {} global {global:.2e} acceptable {any_acceptable} ncands {}", row_count[pi], col_count[pj], cands.len());
        }
        pivots.push((pi, pj));
        scores.push(global);
        row_done[pi] = true;
        col_done[pj] = true;
        // Eliminate in every probe; update the structure with fill-in.
        let prow: Vec<usize> = row_nz[pi]
            .iter()
            .copied()
            .filter(|&j| !col_done[j])
            .collect();
        let pcol: Vec<usize> = col_nz[pj]
            .iter()
            .copied()
            .filter(|&i| !row_done[i])
            .collect();
        for a in mats.iter_mut() {
            let piv = a[pi][pj];
            for &i in &pcol {
                let l = a[i][pj] / piv;
                for &j in &prow {
                    let v = a[pi][j];
                    a[i][j] -= l * v;
                }
                a[i][pj] = Complex64::new(0.0, 0.0);
            }
        }
        for &i in &pcol {
            for &j in &prow {
                if !s[i][j] {
                    s[i][j] = true;
                    row_nz[i].push(j);
                    col_nz[j].push(i);
                }
            }
        }
    }
    Selection {
        pivots,
        scores,
        residual_score,
    }
}
