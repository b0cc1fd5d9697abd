//! A sparse matrix of expressions: what the symbolic Jacobian is (its memory and every
//! pass over it grow with the structural nonzeros, not with `NC · NQ`).

use crate::expr::{Arena, ExprId};

/// A sparse matrix of DAG roots: each row holds its structural nonzeros `(column, entry)`
/// in column order; absent entries are zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymMatrix {
    ncols: usize,
    rows: Vec<Vec<(usize, ExprId)>>,
}

impl SymMatrix {
    /// An empty matrix (no rows) of `ncols` columns.
    pub fn new(ncols: usize) -> Self {
        Self {
            ncols,
            rows: Vec::new(),
        }
    }

    /// Appends a row from its entries `(column, entry)`: sorted by column here, entries
    /// that are the constant zero dropped.
    pub fn push_row(&mut self, arena: &Arena, mut entries: Vec<(usize, ExprId)>) {
        entries.retain(|&(j, e)| j < self.ncols && !arena.is_zero(e));
        entries.sort_by_key(|&(j, _)| j);
        entries.dedup_by_key(|&mut (j, _)| j);
        self.rows.push(entries);
    }

    /// The matrix of dense rows `rows` (each `ncols` long).
    pub fn from_dense(arena: &Arena, ncols: usize, rows: &[Vec<ExprId>]) -> Self {
        let mut m = Self::new(ncols);
        for r in rows {
            m.push_row(arena, r.iter().copied().enumerate().collect());
        }
        m
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.rows.len()
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// The nonzeros `(column, entry)` of row `i`, in column order.
    pub fn row(&self, i: usize) -> &[(usize, ExprId)] {
        &self.rows[i]
    }

    /// The rows, each as in [`SymMatrix::row`].
    pub fn rows(&self) -> impl Iterator<Item = &[(usize, ExprId)]> {
        self.rows.iter().map(|r| r.as_slice())
    }

    /// Entry `(i, j)`, `None` where it is structurally zero.
    pub fn get(&self, i: usize, j: usize) -> Option<ExprId> {
        let row = &self.rows[i];
        row.binary_search_by_key(&j, |&(c, _)| c)
            .ok()
            .map(|k| row[k].1)
    }

    /// Every nonzero `(row, column, entry)`, row by row.
    pub fn nonzeros(&self) -> impl Iterator<Item = (usize, usize, ExprId)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.iter().map(move |&(j, e)| (i, j, e)))
    }

    /// Number of structural nonzeros.
    pub fn nnz(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// Row `i` as a dense vector (`zero` where absent).
    pub fn dense_row(&self, i: usize, zero: ExprId) -> Vec<ExprId> {
        let mut out = vec![zero; self.ncols];
        for &(j, e) in &self.rows[i] {
            out[j] = e;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Sym;

    #[test]
    fn rows_are_sorted_without_zeros_and_entries_found() {
        let mut a = Arena::new();
        let (x, y, zero) = (a.sym(Sym::Coord(0)), a.sym(Sym::Coord(1)), a.constant(0.0));
        let mut m = SymMatrix::new(4);
        m.push_row(&a, vec![(3, y), (1, zero), (0, x)]);
        m.push_row(&a, Vec::new());
        assert_eq!((m.nrows(), m.ncols(), m.nnz()), (2, 4, 2));
        assert_eq!(m.row(0), &[(0, x), (3, y)]);
        assert_eq!(
            (m.get(0, 3), m.get(0, 1), m.get(1, 0)),
            (Some(y), None, None)
        );
        assert_eq!(m.dense_row(0, zero), vec![x, zero, zero, y]);
        let nz: Vec<(usize, usize, ExprId)> = m.nonzeros().collect();
        assert_eq!(nz, vec![(0, 0, x), (0, 3, y)]);
        assert_eq!(
            SymMatrix::from_dense(&a, 4, &[m.dense_row(0, zero)]).row(0),
            m.row(0)
        );
    }
}
