//! Symbolic LU of `P·C_J·Q` without pivoting, on the DAG, skipping structural zeros;
//! the null-space basis and the dependent solve from its factors.
//!
//! The factors are stored by row as ordered sparse maps (permuted column → entry), and a
//! column index lists the rows with an entry in each column, so that memory and time
//! grow with the nonzeros and fill-in rather than with `r × n`. The arena operations are
//! the dense algorithm's, in its order, so the generated code is the same.

use std::collections::{BTreeMap, BTreeSet};

use crate::derive::SymMatrix;
use crate::expr::{Arena, ExprId, Sym};

/// Symbolic factors of the pivot rows.
pub struct Factors {
    /// `U`, `r` rows in permuted column order (`k → U_ik`, entries on and right of the
    /// diagonal; absent entries are zero).
    pub u: Vec<BTreeMap<usize, ExprId>>,
    /// Multipliers `L[i][k]` (`k < i`) by row, unit diagonal implied.
    pub l: Vec<BTreeMap<usize, ExprId>>,
    /// `1 / U_kk`, shared by the eliminations and the back substitutions.
    pub inv_pivot: Vec<ExprId>,
}

impl Factors {
    /// `U_kk`.
    pub fn pivot(&self, arena: &mut Arena, k: usize) -> ExprId {
        match self.u[k].get(&k) {
            Some(&e) => e,
            None => arena.constant(0.0),
        }
    }
}

/// Factors `A = P·C_J·Q` restricted to the `r` pivot rows: `rows` and `cols` give the
/// permutations (`cols` lists all `n` columns, pivot columns first).
pub fn factor(arena: &mut Arena, jac: &SymMatrix, rows: &[usize], cols: &[usize]) -> Factors {
    let r = rows.len();
    let n = cols.len();
    let zero = arena.constant(0.0);
    let one = arena.constant(1.0);
    // Position of each column in the permutation (the rows' nonzeros are read once).
    let mut place = vec![usize::MAX; jac.ncols()];
    for (c, &j) in cols.iter().enumerate() {
        if j < place.len() {
            place[j] = c;
        }
    }
    let mut u: Vec<BTreeMap<usize, ExprId>> = rows
        .iter()
        .map(|&i| {
            jac.row(i)
                .iter()
                .filter(|&&(j, e)| place[j] != usize::MAX && !arena.is_zero(e))
                .map(|&(j, e)| (place[j], e))
                .collect()
        })
        .collect();
    // Rows with an entry in each permuted column.
    let mut col_rows: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (i, row) in u.iter().enumerate() {
        for &c in row.keys() {
            col_rows[c].insert(i);
        }
    }
    let mut l: Vec<BTreeMap<usize, ExprId>> = vec![BTreeMap::new(); r];
    let mut inv_pivot = Vec::with_capacity(r);
    for k in 0..r {
        let ukk = u[k].get(&k).copied().unwrap_or(zero);
        let inv = arena.div(one, ukk);
        inv_pivot.push(inv);
        let pivot_row: Vec<(usize, ExprId)> = u[k].range(k + 1..).map(|(&j, &e)| (j, e)).collect();
        let below: Vec<usize> = col_rows[k].range(k + 1..).copied().collect();
        for i in below {
            let uik = u[i].get(&k).copied().unwrap_or(zero);
            if arena.is_zero(uik) {
                continue;
            }
            let lik = arena.mul(uik, inv);
            l[i].insert(k, lik);
            for &(j, ukj) in &pivot_row {
                if arena.is_zero(ukj) {
                    continue;
                }
                let prod = arena.mul(lik, ukj);
                let uij = u[i].get(&j).copied().unwrap_or(zero);
                let v = arena.sub(uij, prod);
                if u[i].insert(j, v).is_none() {
                    col_rows[j].insert(i);
                }
            }
            u[i].remove(&k);
            col_rows[k].remove(&i);
        }
    }
    Factors { u, l, inv_pivot }
}

/// The null-space basis `D = Q [−U1⁻¹ U2; I]` (`n × (n − r)`, row-major in original
/// coordinate order).
pub fn basis(arena: &mut Arena, f: &Factors, cols: &[usize]) -> Vec<Vec<ExprId>> {
    let r = f.u.len();
    let n = cols.len();
    let dof = n - r;
    let zero = arena.constant(0.0);
    let one = arena.constant(1.0);
    let mut d = vec![vec![zero; dof]; n];
    // −1/U_ii once per pivot, so no entry needs its own negation.
    let neg_inv: Vec<ExprId> = f.inv_pivot.iter().map(|&v| arena.neg(v)).collect();
    for c in 0..dof {
        // Back substitution: U1 x = −U2[:, c].
        let mut x = vec![zero; r];
        for i in (0..r).rev() {
            let mut acc = f.u[i].get(&(r + c)).copied().unwrap_or(zero);
            for (&k, &uik) in f.u[i].range(i + 1..r) {
                if !arena.is_zero(uik) && !arena.is_zero(x[k]) {
                    let p = arena.mul(uik, x[k]);
                    acc = arena.add(acc, p);
                }
            }
            x[i] = arena.mul(acc, neg_inv[i]);
        }
        for i in 0..r {
            d[cols[i]][c] = x[i];
        }
        d[cols[r + c]][c] = one;
    }
    d
}

/// `x` (original coordinate order, zero at the independent coordinates) solving the pivot
/// rows of `C_J x = b`, with `b[i]` the symbol `Sym::Rhs(i)`.
pub fn solve(arena: &mut Arena, f: &Factors, rows: &[usize], cols: &[usize]) -> Vec<ExprId> {
    let r = rows.len();
    let n = cols.len();
    let zero = arena.constant(0.0);
    // Forward: L y = P b.
    let mut y: Vec<ExprId> = Vec::with_capacity(r);
    for i in 0..r {
        let mut acc = arena.sym(Sym::Rhs(rows[i] as u32));
        for (&k, &lik) in f.l[i].range(..i) {
            if !arena.is_zero(lik) {
                let p = arena.mul(lik, y[k]);
                acc = arena.sub(acc, p);
            }
        }
        y.push(acc);
    }
    // Back: U1 x = y.
    let mut x = vec![zero; r];
    for i in (0..r).rev() {
        let mut acc = y[i];
        for (&k, &uik) in f.u[i].range(i + 1..r) {
            if !arena.is_zero(uik) {
                let p = arena.mul(uik, x[k]);
                acc = arena.sub(acc, p);
            }
        }
        x[i] = arena.mul(acc, f.inv_pivot[i]);
    }
    let mut out = vec![zero; n];
    for i in 0..r {
        out[cols[i]] = x[i];
    }
    out
}
