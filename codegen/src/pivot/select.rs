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
}

/// Runs the shared elimination. `mats[p]` is probe `p`'s matrix (row-major, `m × n`),
/// `structural[i][j]` whether entry `(i, j)` is structurally nonzero; `allowed[j]` whether
/// column `j` may be a pivot column. (A dense front end of [`eliminate_sparse`].)
pub fn eliminate(
    mats: Vec<Vec<Vec<Complex64>>>,
    structural: &[Vec<bool>],
    allowed: &[bool],
) -> Selection {
    let mut pos = Vec::new();
    for (i, row) in structural.iter().enumerate() {
        for (j, &nz) in row.iter().enumerate() {
            if nz {
                pos.push((i, j));
            }
        }
    }
    let vals: Vec<Vec<Complex64>> = mats
        .iter()
        .map(|a| pos.iter().map(|&(i, j)| a[i][j]).collect())
        .collect();
    eliminate_sparse(structural.len(), &pos, &vals, allowed)
}

/// `f64` ordered by `total_cmp`, for the candidate keys.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Total(f64);
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Total {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Order of the candidates: Markowitz cost, then the column in fewest original
/// equations, then the larger local score, then the lowest row and column.
type Key = (usize, usize, std::cmp::Reverse<Total>, usize, usize);

/// The shared elimination on sparse probe matrices: `pos[k]` is the `(row, column)` of
/// structural nonzero `k` (of an `m`-row matrix with `allowed.len()` columns), `vals[p][k]`
/// its value in probe `p`. Each step costs time in the rows and columns it touches (kept
/// in ordered candidate sets), not in the whole matrix, and storage grows with the
/// nonzeros and fill-in only.
pub fn eliminate_sparse(
    m: usize,
    pos: &[(usize, usize)],
    vals: &[Vec<Complex64>],
    allowed: &[bool],
) -> Selection {
    use std::collections::{BTreeSet, HashMap};
    let n = allowed.len();
    let np = vals.len();
    // Entry index of (i, j); values and magnitudes per probe, by entry.
    let mut index: HashMap<(usize, usize), usize> = HashMap::with_capacity(pos.len() * 2);
    let mut at: Vec<(usize, usize)> = Vec::with_capacity(pos.len());
    let mut val: Vec<Vec<Complex64>> = vec![Vec::with_capacity(pos.len()); np];
    let mut row_nz: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut col_nz: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, &(i, j)) in pos.iter().enumerate() {
        if index.insert((i, j), at.len()).is_some() {
            continue;
        }
        at.push((i, j));
        for p in 0..np {
            val[p].push(vals[p][k]);
        }
        row_nz[i].push(j);
        col_nz[j].push(i);
    }
    let mut norm: Vec<Vec<f64>> = val
        .iter()
        .map(|v| v.iter().map(|z| z.norm()).collect())
        .collect();
    // Scale of each original row in each probe: an entry is zero when it is negligible
    // against its own equation (equations may be in different units).
    let mut row_scale = vec![vec![1e-300f64; m]; np];
    for (e, &(i, _)) in at.iter().enumerate() {
        for p in 0..np {
            row_scale[p][i] = row_scale[p][i].max(norm[p][e]);
        }
    }
    // Columns coupled to few equations make natural dependent coordinates; columns in
    // many equations (a platform pose, a driving crank) natural independent ones.
    let orig_col_count: Vec<usize> = col_nz.iter().map(|c| c.len()).collect();
    // `MECHGEN_DEBUG_PIVOTS=1` prints each elimination step to stderr (documented in
    // the guide, troubleshooting chapter).
    let debug = std::env::var_os("MECHGEN_DEBUG_PIVOTS").is_some();
    let mut row_done = vec![false; m];
    let mut col_done = vec![false; n];
    // Remaining structural counts of rows and columns.
    let mut row_count: Vec<usize> = row_nz.iter().map(|r| r.len()).collect();
    let mut col_count: Vec<usize> = col_nz.iter().map(|c| c.len()).collect();
    // Largest remaining entry of each column in each probe, relative to its row's scale.
    let col_max_of = |j: usize,
                      col_nz: &[Vec<usize>],
                      row_done: &[bool],
                      index: &HashMap<(usize, usize), usize>,
                      norm: &[Vec<f64>],
                      row_scale: &[Vec<f64>]|
     -> Vec<f64> {
        (0..np)
            .map(|p| {
                col_nz[j]
                    .iter()
                    .filter(|&&i| !row_done[i])
                    .map(|&i| norm[p][index[&(i, j)]] / row_scale[p][i])
                    .fold(0.0f64, f64::max)
                    .max(1e-300)
            })
            .collect()
    };
    let mut col_max: Vec<Vec<f64>> = (0..n)
        .map(|j| col_max_of(j, &col_nz, &row_done, &index, &norm, &row_scale))
        .collect();
    // The current key and score of each candidate entry (None: not a candidate).
    let mut cand: HashMap<(usize, usize), (Key, f64, bool)> = HashMap::new();
    let mut all: BTreeSet<Key> = BTreeSet::new();
    let mut good: BTreeSet<Key> = BTreeSet::new();
    let score = |i: usize,
                 j: usize,
                 index: &HashMap<(usize, usize), usize>,
                 norm: &[Vec<f64>],
                 row_scale: &[Vec<f64>],
                 col_max: &[Vec<f64>]|
     -> (f64, f64) {
        let e = index[&(i, j)];
        let mut global = f64::INFINITY;
        let mut local = f64::INFINITY;
        for p in 0..np {
            let v = norm[p][e];
            global = global.min(v / row_scale[p][i]);
            local = local.min(v / row_scale[p][i] / col_max[j][p]);
        }
        (global, local)
    };
    macro_rules! refresh {
        ($i:expr, $j:expr) => {{
            let (i, j) = ($i, $j);
            if let Some((k, _, ok)) = cand.remove(&(i, j)) {
                all.remove(&k);
                if ok {
                    good.remove(&k);
                }
            }
            if !row_done[i] && !col_done[j] && allowed[j] {
                let (global, local) = score(i, j, &index, &norm, &row_scale, &col_max);
                if global >= NEGLIGIBLE {
                    let mk = (row_count[i] - 1) * (col_count[j] - 1);
                    let key: Key = (mk, orig_col_count[j], std::cmp::Reverse(Total(local)), i, j);
                    let ok = local >= THRESHOLD;
                    all.insert(key);
                    if ok {
                        good.insert(key);
                    }
                    cand.insert((i, j), (key, global, ok));
                }
            }
        }};
    }
    for e in 0..at.len() {
        let (i, j) = at[e];
        refresh!(i, j);
    }
    let mut pivots = Vec::new();
    let mut scores = Vec::new();
    // Among candidates large against the rest of their column in every probe, the first
    // by key; if there is none, the first of all.
    while let Some(&key) = good.iter().next().or_else(|| all.iter().next()) {
        let (pi, pj) = (key.3, key.4);
        let global = cand.get(&(pi, pj)).map_or(0.0, |c| c.1);
        if debug {
            eprintln!(
                "pivot ({pi},{pj}) rc {} cc {} global {global:.2e} acceptable {} ncands {}",
                row_count[pi],
                col_count[pj],
                !good.is_empty(),
                all.len()
            );
        }
        pivots.push((pi, pj));
        scores.push(global);
        row_done[pi] = true;
        col_done[pj] = true;
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
        // Candidates of the pivot row and column leave.
        for &j in &row_nz[pi] {
            if let Some((k, _, ok)) = cand.remove(&(pi, j)) {
                all.remove(&k);
                if ok {
                    good.remove(&k);
                }
            }
        }
        for &i in &col_nz[pj] {
            if let Some((k, _, ok)) = cand.remove(&(i, pj)) {
                all.remove(&k);
                if ok {
                    good.remove(&k);
                }
            }
        }
        // Eliminate in every probe; update the structure with fill-in.
        for &i in &pcol {
            for &j in &prow {
                if let std::collections::hash_map::Entry::Vacant(slot) = index.entry((i, j)) {
                    slot.insert(at.len());
                    at.push((i, j));
                    for p in 0..np {
                        val[p].push(Complex64::new(0.0, 0.0));
                        norm[p].push(0.0);
                    }
                    row_nz[i].push(j);
                    col_nz[j].push(i);
                    row_count[i] += 1;
                    col_count[j] += 1;
                }
            }
        }
        for p in 0..np {
            let piv = val[p][index[&(pi, pj)]];
            for &i in &pcol {
                let eij = index[&(i, pj)];
                let l = val[p][eij] / piv;
                for &j in &prow {
                    let v = val[p][index[&(pi, j)]];
                    let e = index[&(i, j)];
                    val[p][e] -= l * v;
                    norm[p][e] = val[p][e].norm();
                }
                val[p][eij] = Complex64::new(0.0, 0.0);
                norm[p][eij] = 0.0;
            }
        }
        // Counts: row `pi` and column `pj` are gone.
        for &i in &pcol {
            row_count[i] -= 1;
        }
        for &j in &prow {
            col_count[j] -= 1;
        }
        // Columns of the pivot row lost a row (and changed values): their maxima, and
        // so the local scores of all their entries, change; rows of the pivot column
        // changed counts.
        for &j in &prow {
            col_max[j] = col_max_of(j, &col_nz, &row_done, &index, &norm, &row_scale);
        }
        let mut touched: Vec<(usize, usize)> = Vec::new();
        for &j in &prow {
            touched.extend(col_nz[j].iter().filter(|&&i| !row_done[i]).map(|&i| (i, j)));
        }
        for &i in &pcol {
            touched.extend(row_nz[i].iter().filter(|&&j| !col_done[j]).map(|&j| (i, j)));
        }
        touched.sort_unstable();
        touched.dedup();
        for (i, j) in touched {
            refresh!(i, j);
        }
    }
    Selection { pivots, scores }
}
