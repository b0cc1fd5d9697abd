//! A numeric baseline that reuses the generator's static pivot order: a dense LU without
//! pivoting of `C_J[PIVOT_ROWS, PIVOT_COLS]` on a preallocated buffer, then back
//! substitution for `D = Q [−U1⁻¹ U2; I]`.
//!
//! This is what a hand-written solver that knows the pivot order would do at run time;
//! the generated `null_space` does the same arithmetic, specialised to the structure.
//! Zero multipliers are skipped (cheap sparsity exploitation), otherwise the loops are
//! dense.

use mechgen::nalgebra::SMatrix;

/// Preallocated workspace of the pivot-order LU.
#[derive(Clone, Debug)]
pub struct PivotOrderLu {
    rows: Vec<usize>,
    cols: Vec<usize>,
    rank: usize,
    nq: usize,
    /// `rank × nq`, row-major.
    a: Vec<f64>,
}

impl PivotOrderLu {
    /// Workspace for the static order `rows` (the `RANK` pivot rows) and `cols` (all `NQ`
    /// coordinates: dependent first, then independent).
    pub fn new(rows: &[usize], cols: &[usize]) -> Self {
        let (rank, nq) = (rows.len(), cols.len());
        PivotOrderLu {
            rows: rows.to_vec(),
            cols: cols.to_vec(),
            rank,
            nq,
            a: vec![0.0; rank * nq],
        }
    }

    /// Null-space basis of `j` (`NQ × DOF`, identity rows at the independent coordinates),
    /// written into `d`. Returns the smallest `|U_kk|` (0 or NaN: the order broke down).
    pub fn null_space<const NC: usize, const NQ: usize, const DOF: usize>(
        &mut self,
        j: &SMatrix<f64, NC, NQ>,
        d: &mut SMatrix<f64, NQ, DOF>,
    ) -> f64 {
        let (r, n) = (self.rank, self.nq);
        debug_assert_eq!(n, NQ);
        debug_assert_eq!(r + DOF, NQ);
        let a = &mut self.a;
        for (i, &row) in self.rows.iter().enumerate() {
            for (k, &col) in self.cols.iter().enumerate() {
                a[i * n + k] = j[(row, col)];
            }
        }
        let mut min_pivot = f64::INFINITY;
        for p in 0..r {
            let piv = a[p * n + p];
            min_pivot = min_pivot.min(piv.abs());
            let inv = 1.0 / piv;
            let (top, rest) = a.split_at_mut((p + 1) * n);
            let prow = &top[p * n..];
            for i in 0..r - p - 1 {
                let row = &mut rest[i * n..(i + 1) * n];
                let l = row[p] * inv;
                if l != 0.0 {
                    for k in p + 1..n {
                        row[k] -= l * prow[k];
                    }
                }
            }
        }
        d.fill(0.0);
        for c in 0..DOF {
            let jc = r + c;
            for i in (0..r).rev() {
                let row = &a[i * n..(i + 1) * n];
                let mut s = -row[jc];
                for m in i + 1..r {
                    s -= row[m] * d[(self.cols[m], c)];
                }
                d[(self.cols[i], c)] = s / row[i];
            }
            d[(self.cols[jc], c)] = 1.0;
        }
        min_pivot
    }
}
