//! The nonzero entries of a small fixed-size matrix, column by column, for products whose
//! cost should follow the nonzeros: the step's Jacobians multiply by the dependent solve
//! `S`, `∂γ/∂q̇` and `∂(C_J q̇)/∂p`, which are mostly structural zeros (the Stewart
//! platform's `S` has 54 nonzeros of 432, `∂γ/∂q̇` 96 of 432), several times per matrix.

use nalgebra::{SMatrix, SVector};

/// Where the nonzero entries of an `R × C` matrix `B` are, column by column (compressed
/// sparse columns in fixed-size storage, `u16` row indices: a kilobyte for the Stewart
/// platform's `S`), scanned once with [`SparseColumns::set`]; every product then reads
/// the values from `B` itself, which must be the matrix scanned. A matrix with more than a
/// quarter of its entries nonzero is multiplied densely ([`super::mul_acc`], nalgebra's
/// `tr_mul`): there the bookkeeping per nonzero costs more than the zeros it skips (the
/// Andrews mechanism's `S`, 7 × 6).
pub(crate) struct SparseColumns<const R: usize, const C: usize> {
    /// Column `c`'s nonzero rows, the first `len[c]` entries.
    rows: [[u16; R]; C],
    /// The number of nonzeros of each column.
    len: [usize; C],
    /// Whether the products go by the nonzeros (at most a quarter of the entries).
    sparse: bool,
}

impl<const R: usize, const C: usize> SparseColumns<R, C> {
    /// No nonzero entry (the zero matrix).
    pub(crate) fn new() -> Self {
        const { assert!(R <= 1 << 16, "row indices are stored as u16") };
        Self {
            rows: [[0; R]; C],
            len: [0; C],
            sparse: true,
        }
    }

    /// The nonzero entries of `b` (entries equal to zero are left out, NaN is kept: it
    /// reaches every product it would have reached densely), for products with factors of
    /// `rows` rows: with fewer than four the scan (about five instructions an entry) costs
    /// more than the dense products it would shorten (one dot product an entry, without
    /// branches), so `b` is not scanned and goes dense.
    pub(crate) fn set(&mut self, b: &SMatrix<f64, R, C>, rows: usize) {
        if rows < 4 {
            self.sparse = false;
            return;
        }
        for (c, col) in b.as_slice().chunks_exact(R).enumerate() {
            let mut n = 0;
            for (i, &x) in col.iter().enumerate() {
                if x != 0.0 {
                    // (`i < R ≤ 2¹⁶`, checked at compile time in `new`.)
                    self.rows[c][n] = i as u16;
                    n += 1;
                }
            }
            self.len[c] = n;
        }
        self.sparse = 4 * self.len.iter().sum::<usize>() <= R * C;
    }

    /// The nonzeros of column `c` of `b` (the matrix scanned): `(row, value)`.
    #[inline(always)]
    fn column<'a>(
        &'a self,
        b: &'a SMatrix<f64, R, C>,
        c: usize,
    ) -> impl Iterator<Item = (usize, f64)> + 'a {
        let col = &b.as_slice()[c * R..(c + 1) * R];
        self.rows[c][..self.len[c]].iter().map(move |&i| {
            let i = usize::from(i);
            (i, col[i])
        })
    }

    /// Column `c` of `a B` for `a` with `D` rows (`D × R`), handed to `store`: a sum of the
    /// columns of `a` that the column's nonzeros select.
    #[inline(always)]
    fn columns_of<const D: usize>(
        &self,
        b: &SMatrix<f64, R, C>,
        a: &SMatrix<f64, D, R>,
        mut store: impl FnMut(usize, &[f64; D]),
    ) {
        let av = a.as_slice();
        for c in 0..C {
            let mut acc = [0.0f64; D];
            for (i, v) in self.column(b, c) {
                for (o, x) in acc.iter_mut().zip(&av[i * D..(i + 1) * D]) {
                    *o += x * v;
                }
            }
            store(c, &acc);
        }
    }

    /// `out += alpha a B` (`out` is `D × C`).
    #[inline]
    pub(crate) fn left_mul_acc<const D: usize>(
        &self,
        out: &mut SMatrix<f64, D, C>,
        alpha: f64,
        a: &SMatrix<f64, D, R>,
        b: &SMatrix<f64, R, C>,
    ) {
        if !self.sparse {
            return super::mul_acc(out, alpha, a, b);
        }
        let out = out.as_mut_slice();
        self.columns_of(b, a, |c, acc| {
            for (o, x) in out[c * D..(c + 1) * D].iter_mut().zip(acc) {
                *o += alpha * x;
            }
        });
    }

    /// `out = a B`, every entry written (`out` is `D × C`).
    #[inline]
    pub(crate) fn left_mul_to<const D: usize>(
        &self,
        out: &mut SMatrix<f64, D, C>,
        a: &SMatrix<f64, D, R>,
        b: &SMatrix<f64, R, C>,
    ) {
        if !self.sparse {
            return super::mul_to(out, a, b);
        }
        let out = out.as_mut_slice();
        self.columns_of(b, a, |c, acc| {
            out[c * D..(c + 1) * D].copy_from_slice(acc);
        });
    }

    /// `(a B)ᵀ` (`C × D`): the transposed product, for weights the generated reductions take
    /// as columns.
    #[inline]
    pub(crate) fn left_mul_transposed<const D: usize>(
        &self,
        a: &SMatrix<f64, D, R>,
        b: &SMatrix<f64, R, C>,
    ) -> SMatrix<f64, C, D> {
        if !self.sparse {
            return b.tr_mul(&a.transpose());
        }
        let mut out = SMatrix::<f64, C, D>::zeros();
        self.columns_of(b, a, |c, acc| {
            for (j, &x) in acc.iter().enumerate() {
                out[(c, j)] = x;
            }
        });
        out
    }

    /// `Bᵀ m` (`C × D`) for `m` with `R` rows: row `c` is the sum of the rows of `m` that
    /// column `c`'s nonzeros select.
    #[inline]
    pub(crate) fn tr_mul<const D: usize>(
        &self,
        b: &SMatrix<f64, R, C>,
        m: &SMatrix<f64, R, D>,
    ) -> SMatrix<f64, C, D> {
        if !self.sparse {
            return b.tr_mul(m);
        }
        let mut out = SMatrix::<f64, C, D>::zeros();
        for c in 0..C {
            let mut acc = [0.0f64; D];
            for (i, v) in self.column(b, c) {
                for (j, a) in acc.iter_mut().enumerate() {
                    *a += v * m[(i, j)];
                }
            }
            for (j, &a) in acc.iter().enumerate() {
                out[(c, j)] = a;
            }
        }
        out
    }

    /// `Bᵀ v`.
    #[inline]
    pub(crate) fn tr_mul_vec(
        &self,
        b: &SMatrix<f64, R, C>,
        v: &SVector<f64, R>,
    ) -> SVector<f64, C> {
        self.tr_mul(b, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix with about a third of its entries zero (and a zero row and column), from a seed.
    fn sample<const R: usize, const C: usize>(seed: &mut u64) -> SMatrix<f64, R, C> {
        SMatrix::from_fn(|i, j| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = ((*seed >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0;
            if j == 1 || i == 2 || (*seed >> 7).is_multiple_of(3) {
                0.0
            } else {
                x
            }
        })
    }

    fn close<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>, b: &SMatrix<f64, R, C>) {
        let err = (a - b).amax();
        assert!(err <= 1e-14 * (1.0 + b.amax()), "{err:e}\n{a}\n{b}");
    }

    /// A matrix with at most a fifth of its entries nonzero (every fifth, shifted by `k`).
    fn sparse_sample<const R: usize, const C: usize>(
        seed: &mut u64,
        k: usize,
    ) -> SMatrix<f64, R, C> {
        let dense = sample::<R, C>(seed);
        SMatrix::from_fn(|i, j| {
            if (i * C + j + k).is_multiple_of(5) {
                dense[(i, j)]
            } else {
                0.0
            }
        })
    }

    #[test]
    fn products_by_the_nonzeros_equal_nalgebras_dense_ones() {
        let mut seed = 7;
        for k in 0..20 {
            let b = sparse_sample::<7, 5>(&mut seed, k);
            let a = sample::<3, 7>(&mut seed);
            let m = sample::<7, 4>(&mut seed);
            let v = sample::<7, 1>(&mut seed);
            let mut s = SparseColumns::<7, 5>::new();
            // Set twice: the second scan must replace, not extend, the first.
            s.set(&sample::<7, 5>(&mut seed), 4);
            s.set(&b, 4);
            assert!(s.sparse);
            let mut out = sample::<3, 5>(&mut seed);
            let expected = out + 0.5 * a * b;
            s.left_mul_acc(&mut out, 0.5, &a, &b);
            close(&out, &expected);
            s.left_mul_to(&mut out, &a, &b);
            close(&out, &(a * b));
            close(&s.left_mul_transposed(&a, &b), &(a * b).transpose());
            close(&s.tr_mul(&b, &m), &(b.transpose() * m));
            close(&s.tr_mul_vec(&b, &v), &(b.transpose() * v));
        }
    }

    #[test]
    fn dense_matrices_take_the_dense_products_with_the_same_results() {
        let mut seed = 11;
        let b = SMatrix::<f64, 4, 3>::from_fn(|i, j| 1.0 + (i * 3 + j) as f64);
        let a = sample::<2, 4>(&mut seed);
        let m = sample::<4, 2>(&mut seed);
        let mut s = SparseColumns::<4, 3>::new();
        s.set(&b, 4);
        assert!(!s.sparse);
        let mut out = sample::<2, 3>(&mut seed);
        let expected = out - a * b;
        s.left_mul_acc(&mut out, -1.0, &a, &b);
        close(&out, &expected);
        s.left_mul_to(&mut out, &a, &b);
        close(&out, &(a * b));
        close(&s.left_mul_transposed(&a, &b), &(a * b).transpose());
        close(&s.tr_mul(&b, &m), &(b.transpose() * m));
    }

    #[test]
    fn nan_entries_reach_the_products() {
        let mut b = SMatrix::<f64, 2, 2>::zeros();
        b[(1, 0)] = f64::NAN;
        let mut s = SparseColumns::<2, 2>::new();
        s.set(&b, 4);
        let a = SMatrix::<f64, 1, 2>::new(1.0, 1.0);
        let mut out = SMatrix::<f64, 1, 2>::zeros();
        s.left_mul_to(&mut out, &a, &b);
        assert!(out[(0, 0)].is_nan());
        assert_eq!(out[(0, 1)], 0.0);
    }
}
