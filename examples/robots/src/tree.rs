//! Solves with a symmetric positive definite matrix of known sparsity, a kinematic tree's
//! mass matrix above all, by Featherstone's `LᵀDL` factorisation (*Rigid Body Dynamics
//! Algorithms*, 2008, §6.5) on the matrix's elimination tree: [`TreeCholesky`].
//!
//! The structural pattern (for the generated modules, their `MASS_NONZEROS`) is read once,
//! when the solver is built: it fixes the elimination tree and the index lists, so a
//! factorisation neither scans for nonzeros nor branches on the data.

use std::fmt;

use mechgen::nalgebra::{SMatrix, SVector};

/// No parent in the elimination tree.
const ROOT: usize = usize::MAX;

/// A solver that cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternError {
    /// A pattern entry `(row, column)` with a row or column not below `n`.
    OutOfRange {
        /// The entry.
        entry: (usize, usize),
        /// The matrix's dimension.
        n: usize,
    },
    /// A floating base with `n` coordinates and `nv` velocities: it needs
    /// `n = nv + 1 ≥ 7` (the base's position and unit quaternion first).
    Shape {
        /// Coordinates.
        n: usize,
        /// Velocities.
        nv: usize,
    },
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { entry, n } => write!(
                f,
                "pattern entry ({}, {}) outside a {n} × {n} matrix",
                entry.0, entry.1
            ),
            Self::Shape { n, nv } => write!(
                f,
                "a floating base needs N = NV + 1 ≥ 7 (N = {n}, NV = {nv})"
            ),
        }
    }
}

impl std::error::Error for PatternError {}

/// The matrix is not positive definite: the pivot of `row` came out not positive or not
/// finite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotPositiveDefinite {
    /// The row whose pivot failed (rows are eliminated from the last up).
    pub row: usize,
}

impl fmt::Display for NotPositiveDefinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "matrix not positive definite (pivot of row {} not positive or not finite)",
            self.row
        )
    }
}

impl std::error::Error for NotPositiveDefinite {}

/// `A = Lᵀ D L` of a symmetric positive definite `N × N` matrix with a known structural
/// pattern, `L` unit lower triangular and `D` diagonal, eliminating the rows from the last
/// up (for a kinematic tree with parents before children, as the generated modules order
/// their coordinates: leaves first).
///
/// The elimination tree of the pattern (Liu's algorithm, in this order: the parent of row
/// `k` is the next row eliminated among those its elimination reaches) bounds the factor:
/// `L[k][i]` can be nonzero only where `i` is an ancestor of `k` in that tree, whatever the
/// pattern. For a tree's mass matrix in a parent-first order the elimination tree is the
/// kinematic tree and the factor has no fill-in (Featherstone's property, [`fill`]
/// counts the exceptions); any other pattern — another order, a closed loop, a dense
/// matrix — gives a taller elimination tree, with the fill-in inside it, and the same
/// factor as a dense factorisation: the code has no other path.
///
/// Row `k` of the factor is stored packed, its diagonal then its ancestors from the parent
/// to the root; the ancestors of an ancestor are a suffix of that list, so each update of
/// the factorisation is one contiguous `a x + y` over two packed rows. Building reads the
/// pattern once; [`factor`](Self::factor) and the solves do no search and allocate nothing.
///
/// [`fill`]: Self::fill
#[derive(Clone, Debug)]
pub struct TreeCholesky<const N: usize> {
    /// Elimination-tree parent of each row (`ROOT` for a root); always below the row.
    parent: [usize; N],
    /// Number of ancestors of each row.
    depth: [usize; N],
    /// Offset of each row's packed entries in `values` (and of its ancestors in `ancestors`
    /// minus the row: `start[k] - k`).
    start: [usize; N],
    /// The ancestors of each row, parent first, rows concatenated.
    ancestors: Vec<usize>,
    /// For each packed entry, its position in a column-major `N × N` matrix (upper
    /// triangle: `(ancestor, row)`).
    source: Vec<usize>,
    /// The packed rows: before [`factor`](Self::factor), the matrix; after, `D` on the
    /// diagonal and `L` beside it.
    values: Vec<f64>,
    /// `1 / D`.
    inv_d: [f64; N],
    /// Entries of the packed rows outside the pattern.
    fill: usize,
}

impl<const N: usize> TreeCholesky<N> {
    /// The solver for matrices whose nonzeros are among `pattern` (`(row, column)`
    /// entries, either triangle or both; the diagonal is always included). Entries outside
    /// the pattern are never read. An entry not inside `N × N` is an error.
    pub fn new(pattern: &[(usize, usize)]) -> Result<Self, PatternError> {
        // Below the diagonal, by row: lower[k] holds the columns i < k of row k.
        let mut lower: Vec<Vec<usize>> = vec![Vec::new(); N];
        for &(r, c) in pattern {
            if r >= N || c >= N {
                return Err(PatternError::OutOfRange {
                    entry: (r, c),
                    n: N,
                });
            }
            let (hi, lo) = if r > c { (r, c) } else { (c, r) };
            if hi != lo {
                lower[hi].push(lo);
            }
        }
        for row in &mut lower {
            row.sort_unstable();
            row.dedup();
        }
        // Liu's elimination tree, rows eliminated from N − 1 down: when row i is reached,
        // every row k > i with a[k][i] ≠ 0 joins i through its current root.
        let mut column: Vec<Vec<usize>> = vec![Vec::new(); N];
        for (k, row) in lower.iter().enumerate() {
            for &i in row {
                column[i].push(k);
            }
        }
        let mut parent = [ROOT; N];
        for i in (0..N).rev() {
            for &k in &column[i] {
                let mut r = k;
                while parent[r] != ROOT && parent[r] != i {
                    r = parent[r];
                }
                if parent[r] == ROOT {
                    parent[r] = i;
                }
            }
        }
        // Ancestor lists and packed offsets.
        let mut depth = [0; N];
        let mut start = [0; N];
        let mut ancestors = Vec::new();
        let mut source = Vec::new();
        let mut fill = 0;
        let mut offset = 0;
        for k in 0..N {
            start[k] = offset;
            source.push(k + k * N);
            let mut a = parent[k];
            while a != ROOT {
                ancestors.push(a);
                source.push(a + k * N);
                if lower[k].binary_search(&a).is_err() {
                    fill += 1;
                }
                depth[k] += 1;
                a = parent[a];
            }
            offset += depth[k] + 1;
        }
        Ok(Self {
            parent,
            depth,
            start,
            ancestors,
            source,
            values: vec![0.0; offset],
            inv_d: [0.0; N],
            fill,
        })
    }

    /// The solver for a dense `N × N` matrix (its elimination tree a chain).
    pub fn dense() -> Self {
        let pattern: Vec<(usize, usize)> =
            (0..N).flat_map(|c| (0..N).map(move |r| (r, c))).collect();
        match Self::new(&pattern) {
            Ok(s) => s,
            // Every entry is inside N × N by construction.
            Err(e) => unreachable!("{e}"),
        }
    }

    /// The elimination-tree parent of row `k` (the next row its elimination updates),
    /// `None` for a root or a `k` out of range.
    pub fn parent(&self, k: usize) -> Option<usize> {
        self.parent.get(k).copied().filter(|&p| p != ROOT)
    }

    /// The number of entries of the factor's off-diagonal structure (ancestor pairs of the
    /// elimination tree) outside the pattern: 0 for a tree's mass matrix ordered parents
    /// first (no fill-in).
    pub fn fill(&self) -> usize {
        self.fill
    }

    /// The number of stored entries of `L` and `D` (`N (N + 1) / 2` for a dense pattern).
    pub fn stored(&self) -> usize {
        self.values.len()
    }

    /// Copies the pattern's entries of `a` (its upper triangle) into the packed rows.
    fn load(&mut self, a: &SMatrix<f64, N, N>) {
        let a = a.as_slice();
        for (v, &s) in self.values.iter_mut().zip(&self.source) {
            *v = a[s];
        }
    }

    /// Eliminates rows `N − 1` down to `stop`: their `D` and `L` rows, and the Schur
    /// complement left in the rows above `stop`.
    fn eliminate(&mut self, stop: usize) -> Result<(), NotPositiveDefinite> {
        for k in (stop..N).rev() {
            let s = self.start[k];
            let d = self.depth[k];
            let (lo, hi) = self.values.split_at_mut(s);
            let row_k = &mut hi[..=d];
            let dk = row_k[0];
            if !(dk > 0.0 && dk.is_finite()) {
                return Err(NotPositiveDefinite { row: k });
            }
            let inv = 1.0 / dk;
            self.inv_d[k] = inv;
            let anc = &self.ancestors[s - k..s - k + d];
            for (m, &i) in anc.iter().enumerate() {
                // Row i's packed entries: its diagonal and its d − m − 1 ancestors, the
                // same rows as row k's ancestors from i on.
                let lk = row_k[m + 1] * inv;
                let si = self.start[i];
                let row_i = &mut lo[si..si + d - m];
                for (x, y) in row_i.iter_mut().zip(&row_k[m + 1..]) {
                    *x -= lk * y;
                }
                row_k[m + 1] = lk;
            }
        }
        Ok(())
    }

    /// `b ← L⁻ᵀ b` over the eliminated rows `N − 1` down to `stop` (the rows above `stop`
    /// receive their reduced right-hand side).
    fn reduce(&self, b: &mut SVector<f64, N>, stop: usize) {
        for k in (stop..N).rev() {
            let s = self.start[k];
            let d = self.depth[k];
            let bk = b[k];
            let anc = &self.ancestors[s - k..s - k + d];
            for (&i, l) in anc.iter().zip(&self.values[s + 1..=s + d]) {
                b[i] -= l * bk;
            }
        }
    }

    /// `b ← L⁻¹ D⁻¹ b` over rows `stop` to `N − 1`, the rows above `stop` holding their
    /// solution already.
    fn back_substitute(&self, b: &mut SVector<f64, N>, stop: usize) {
        for k in stop..N {
            let s = self.start[k];
            let d = self.depth[k];
            let anc = &self.ancestors[s - k..s - k + d];
            let mut x = b[k] * self.inv_d[k];
            for (&i, l) in anc.iter().zip(&self.values[s + 1..=s + d]) {
                x -= l * b[i];
            }
            b[k] = x;
        }
    }

    /// Factors `a` (its upper triangle read, at the pattern's entries and their fill-in).
    pub fn factor(&mut self, a: &SMatrix<f64, N, N>) -> Result<(), NotPositiveDefinite> {
        self.load(a);
        self.eliminate(0)
    }

    /// `b ← a⁻¹ b` with the last [`factor`](Self::factor)ed `a`.
    pub fn solve_in_place(&self, b: &mut SVector<f64, N>) {
        self.reduce(b, 0);
        self.back_substitute(b, 0);
    }

    /// `a⁻¹ b`: [`factor`](Self::factor), then [`solve_in_place`](Self::solve_in_place).
    pub fn solve(
        &mut self,
        a: &SMatrix<f64, N, N>,
        mut b: SVector<f64, N>,
    ) -> Result<SVector<f64, N>, NotPositiveDefinite> {
        self.factor(a)?;
        self.solve_in_place(&mut b);
        Ok(b)
    }

    /// Loads `a` and eliminates its rows from `N − 1` down to `stop`, reducing `b` with
    /// them: afterwards [`leading_block`](Self::leading_block) is the Schur complement of
    /// those rows in `a` and `b`'s first `stop` entries the matching right-hand side. Then
    /// [`finish`](Self::finish), with the first `stop` unknowns, gives the others.
    pub fn eliminate_below(
        &mut self,
        a: &SMatrix<f64, N, N>,
        b: &mut SVector<f64, N>,
        stop: usize,
    ) -> Result<(), NotPositiveDefinite> {
        self.load(a);
        self.eliminate(stop)?;
        self.reduce(b, stop);
        Ok(())
    }

    /// The leading `S × S` block of the packed rows (after
    /// [`eliminate_below`](Self::eliminate_below) with `stop = S`: the Schur complement),
    /// both triangles; entries outside the elimination tree's ancestor pairs are zero.
    pub fn leading_block<const S: usize>(&self) -> SMatrix<f64, S, S> {
        let mut out = SMatrix::<f64, S, S>::zeros();
        for k in 0..S.min(N) {
            let s = self.start[k];
            let d = self.depth[k];
            out[(k, k)] = self.values[s];
            let anc = &self.ancestors[s - k..s - k + d];
            for (&i, &x) in anc.iter().zip(&self.values[s + 1..=s + d]) {
                out[(i, k)] = x;
                out[(k, i)] = x;
            }
        }
        out
    }

    /// After [`eliminate_below`](Self::eliminate_below) with `stop`: `b` holds the first
    /// `stop` unknowns in its first entries and the reduced right-hand side in the others;
    /// on return, all the unknowns.
    pub fn finish(&self, b: &mut SVector<f64, N>, stop: usize) {
        self.back_substitute(b, stop);
    }
}
