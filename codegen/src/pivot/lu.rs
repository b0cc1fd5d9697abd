//! Symbolic LU of `P·C_J·Q` without pivoting, on the DAG, skipping structural zeros;
//! the null-space basis and the dependent solve from its factors.

use crate::expr::{Arena, ExprId, Sym};

/// Symbolic factors of the pivot rows.
pub struct Factors {
    /// `U`, `r × n` in permuted column order (entries below the diagonal unused).
    pub u: Vec<Vec<ExprId>>,
    /// Multipliers `L[i][k]` (`k < i`), unit diagonal implied.
    pub l: Vec<Vec<ExprId>>,
    /// `1 / U_kk`, shared by the eliminations and the back substitutions.
    pub inv_pivot: Vec<ExprId>,
}

/// Factors `A = P·C_J·Q` restricted to the `r` pivot rows: `rows` and `cols` give the
/// permutations (`cols` lists all `n` columns, pivot columns first).
pub fn factor(arena: &mut Arena, jac: &[Vec<ExprId>], rows: &[usize], cols: &[usize]) -> Factors {
    let r = rows.len();
    let n = cols.len();
    let zero = arena.constant(0.0);
    let one = arena.constant(1.0);
    let mut u: Vec<Vec<ExprId>> = rows
        .iter()
        .map(|&i| cols.iter().map(|&j| jac[i][j]).collect())
        .collect();
    let mut l = vec![vec![zero; r]; r];
    let mut inv_pivot = Vec::with_capacity(r);
    for k in 0..r {
        let inv = arena.div(one, u[k][k]);
        inv_pivot.push(inv);
        for i in k + 1..r {
            if arena.is_zero(u[i][k]) {
                continue;
            }
            let lik = arena.mul(u[i][k], inv);
            l[i][k] = lik;
            for j in k + 1..n {
                if arena.is_zero(u[k][j]) {
                    continue;
                }
                let prod = arena.mul(lik, u[k][j]);
                u[i][j] = arena.sub(u[i][j], prod);
            }
            u[i][k] = zero;
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
            let mut acc = f.u[i][r + c];
            for k in i + 1..r {
                if !arena.is_zero(f.u[i][k]) && !arena.is_zero(x[k]) {
                    let p = arena.mul(f.u[i][k], x[k]);
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
    let mut y = Vec::with_capacity(r);
    for i in 0..r {
        let mut acc = arena.sym(Sym::Rhs(rows[i] as u32));
        for k in 0..i {
            if !arena.is_zero(f.l[i][k]) {
                let p = arena.mul(f.l[i][k], y[k]);
                acc = arena.sub(acc, p);
            }
        }
        y.push(acc);
    }
    // Back: U1 x = y.
    let mut x = vec![zero; r];
    for i in (0..r).rev() {
        let mut acc = y[i];
        for k in i + 1..r {
            if !arena.is_zero(f.u[i][k]) {
                let p = arena.mul(f.u[i][k], x[k]);
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
