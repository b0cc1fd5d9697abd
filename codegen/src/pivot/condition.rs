//! The automatic choice of independent coordinates by conditioning: where the model names
//! fewer independent coordinates than it has degrees of freedom (and more than one is left
//! open), the others are the coordinates that parametrise the motion best near the nominal
//! configuration.
//!
//! At each real probe point (on the manifold near the nominal) `N` is an orthonormal basis
//! of the null space of `C_J`. A set `S` of independent coordinates gives the basis
//! `D = N N_S⁻¹` (identity rows at `S`), and the dependent coordinates' sensitivity to the
//! independent ones, `D`'s other rows, is bounded by `1/σ_min(N_S)`: the better conditioned
//! the rows of `N` at `S`, the better `S` parametrises the motion there and the better
//! conditioned assembly (Newton on the dependent coordinates with `S` held) is. The rows
//! are chosen greedily, as QR with column pivoting does on `Nᵀ` (the largest volume first),
//! maximising the worst case over the probes; among candidates within a factor of two of
//! the best, the one appearing in the most equations is taken (holding it decouples the
//! dependent block: a platform's pose rather than one leg's angle). Bodies and forces play
//! no part: only the constraints do.

use num_complex::Complex64;

/// The largest model (coordinates) the choice runs on: its dense eliminations cost
/// `O(NC · NQ²)` per probe. Larger models keep the pivot selection's choice (noted).
pub(super) const MAX_NQ: usize = 64;

/// `k` further independent coordinates besides `named` (none of them in `named`), chosen
/// by conditioning (and, among the nearly best conditioned, coupling) over the real probes'
/// Jacobians (`mats[p]`: the values of the nonzeros at
/// `nz_pos`, `real[p]`: whether probe `p` is a real point). `None` when no real probe gives
/// a null space of dimension `dof` or a candidate has no volume left at some probe.
pub(super) fn by_conditioning(
    mats: &[Vec<Complex64>],
    real: &[bool],
    nz_pos: &[(usize, usize)],
    (nc, nq, dof): (usize, usize, usize),
    named: &[usize],
    k: usize,
) -> Option<Vec<usize>> {
    // Per real probe: the null-space basis (nq × dof, orthonormal columns), as rows.
    let mut bases: Vec<Vec<Vec<f64>>> = Vec::new();
    for (m, _) in mats.iter().zip(real).filter(|(_, &r)| r) {
        let mut j = vec![vec![0.0f64; nq]; nc];
        for (&(r, c), v) in nz_pos.iter().zip(m) {
            j[r][c] = v.re;
        }
        if j.iter().flatten().any(|v| !v.is_finite()) {
            return None;
        }
        bases.push(orthonormal_null_space(j, nq, dof)?);
    }
    if bases.is_empty() {
        return None;
    }
    // Pivoted Gram–Schmidt on the rows, per probe: `rows[p][i]` is row i of N at probe p
    // with the span of the chosen rows removed.
    let mut rows = bases;
    let remove = |rows: &mut Vec<Vec<f64>>, pivot: usize| {
        let v = rows[pivot].clone();
        let vv: f64 = v.iter().map(|x| x * x).sum();
        if vv <= 0.0 {
            return;
        }
        for (i, row) in rows.iter_mut().enumerate() {
            if i == pivot {
                continue;
            }
            let dot: f64 = row.iter().zip(&v).map(|(a, b)| a * b).sum();
            let f = dot / vv;
            for (a, b) in row.iter_mut().zip(&v) {
                *a -= f * b;
            }
        }
    };
    let mut taken: Vec<usize> = named.to_vec();
    for &i in named {
        for r in rows.iter_mut() {
            remove(r, i);
        }
    }
    // How many equations each coordinate appears in.
    let mut couples = vec![0usize; nq];
    let mut seen = std::collections::BTreeSet::new();
    for &(r, c) in nz_pos {
        if seen.insert((r, c)) {
            couples[c] += 1;
        }
    }
    let mut chosen = Vec::with_capacity(k);
    for _ in 0..k {
        let norm = |r: &Vec<f64>| r.iter().map(|x| x * x).sum::<f64>().sqrt();
        let scores: Vec<(usize, f64)> = (0..nq)
            .filter(|j| !taken.contains(j))
            .map(|j| {
                let worst = rows
                    .iter()
                    .map(|r| norm(&r[j]))
                    .fold(f64::INFINITY, f64::min);
                (j, worst)
            })
            .collect();
        let top = scores.iter().map(|&(_, w)| w).fold(0.0f64, f64::max);
        if top.is_nan() || top <= 1e-8 {
            return None;
        }
        // Among the coordinates within a factor of two of the best-conditioned one, the one
        // that appears in the most equations: holding it decouples the dependent block the
        // most (a platform's pose against one leg's angle, equally conditioned). Then the
        // better conditioned, then the lower index (deterministic).
        let best = scores
            .iter()
            .copied()
            .filter(|&(_, w)| w >= 0.5 * top)
            .fold(None::<(usize, f64)>, |acc, (j, w)| match acc {
                Some((b, bw)) if (couples[b], bw) >= (couples[j], w) => acc,
                _ => Some((j, w)),
            })?;
        for r in rows.iter_mut() {
            remove(r, best.0);
        }
        taken.push(best.0);
        chosen.push(best.0);
    }
    Some(chosen)
}

/// An orthonormal basis of the null space of `j` (`nc` rows of `nq`), as `nq` rows of
/// `dof`: Gauss–Jordan elimination with complete pivoting (the columns left without a
/// pivot span the null space: a basis with identity rows there), then modified
/// Gram–Schmidt, twice. `None` unless exactly `dof` columns are left.
fn orthonormal_null_space(mut j: Vec<Vec<f64>>, nq: usize, dof: usize) -> Option<Vec<Vec<f64>>> {
    let nc = j.len();
    let scale = j.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale == 0.0 {
        return None;
    }
    let mut pivot_cols = Vec::new();
    let mut used_rows = vec![false; nc];
    loop {
        let mut best: Option<(usize, usize, f64)> = None;
        for (r, row) in j.iter().enumerate().filter(|(r, _)| !used_rows[*r]) {
            for (c, &v) in row.iter().enumerate() {
                if !pivot_cols.contains(&c) && best.is_none_or(|(_, _, b)| v.abs() > b) {
                    best = Some((r, c, v.abs()));
                }
            }
        }
        let Some((r, c, v)) = best else { break };
        if v <= 1e-10 * scale {
            break;
        }
        used_rows[r] = true;
        pivot_cols.push(c);
        let piv = j[r][c];
        let prow: Vec<f64> = j[r].iter().map(|x| x / piv).collect();
        j[r] = prow.clone();
        for (i, row) in j.iter_mut().enumerate() {
            if i != r && row[c] != 0.0 {
                let f = row[c];
                for (a, b) in row.iter_mut().zip(&prow) {
                    *a -= f * b;
                }
            }
        }
    }
    let free: Vec<usize> = (0..nq).filter(|c| !pivot_cols.contains(c)).collect();
    if free.len() != dof {
        return None;
    }
    // Column f of the basis: 1 at f, −(reduced row entry) at each pivot column.
    let mut cols: Vec<Vec<f64>> = free
        .iter()
        .map(|&f| {
            let mut v = vec![0.0; nq];
            v[f] = 1.0;
            for (r, row) in j.iter().enumerate() {
                if used_rows[r] {
                    if let Some(&pc) = pivot_cols.iter().find(|&&pc| row[pc] == 1.0) {
                        v[pc] = -row[f];
                    }
                }
            }
            v
        })
        .collect();
    for _ in 0..2 {
        for a in 0..cols.len() {
            for b in 0..a {
                let dot: f64 = cols[a].iter().zip(&cols[b]).map(|(x, y)| x * y).sum();
                let cb = cols[b].clone();
                for (x, y) in cols[a].iter_mut().zip(&cb) {
                    *x -= dot * y;
                }
            }
            let n = cols[a].iter().map(|x| x * x).sum::<f64>().sqrt();
            if n.is_nan() || n <= 0.0 {
                return None;
            }
            cols[a].iter_mut().for_each(|x| *x /= n);
        }
    }
    Some(
        (0..nq)
            .map(|i| cols.iter().map(|c| c[i]).collect())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: f64) -> Complex64 {
        Complex64::new(v, 0.0)
    }

    #[test]
    fn prefers_the_coordinates_the_motion_moves() {
        // One constraint x2 = 1e-3 x0 + x1 among (x0, x1, x2): two degrees of freedom. The
        // null space is spanned by (1, 0, 1e-3) and (0, 1, 1): x0 and x1 (or x2) move with
        // the motion; holding x0 and x2 leaves x1 = x2 − 1e-3 x0, well conditioned, and so
        // does (x0, x1). A pair containing only x2 and x1 needs x0 = (x2 − x1) / 1e-3:
        // badly conditioned. The choice must contain x0.
        let nz = vec![(0, 0), (0, 1), (0, 2)];
        let mats = vec![vec![c(1e-3), c(1.0), c(-1.0)]];
        let s = by_conditioning(&mats, &[true], &nz, (1, 3, 2), &[], 2).expect("a choice");
        assert!(s.contains(&0), "{s:?}");
        // With x1 named, the other is x0.
        let s = by_conditioning(&mats, &[true], &nz, (1, 3, 2), &[1], 1).expect("a choice");
        assert_eq!(s, vec![0]);
    }
}
