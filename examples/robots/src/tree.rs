//! Solves with a symmetric positive definite matrix of known sparsity, a kinematic tree's
//! mass matrix above all, by Featherstone's `LᵀDL` factorisation (*Rigid Body Dynamics
//! Algorithms*, 2008, §6.5) on the matrix's elimination tree: [`TreeCholesky`].
//!
//! The structural pattern (for the generated modules, their `MASS_NONZEROS`) is read once,
//! when the solver is built: it fixes the elimination tree and the index lists, so a
//! factorisation neither scans for nonzeros nor branches on the data.

use std::fmt;

use mechgen::nalgebra::{SMatrix, SVector};

use crate::symbolic::{Symbolic, ROOT};

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
    /// A [`Kernel`] generated for another pattern (its elimination tree differs).
    Kernel,
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
            Self::Kernel => write!(f, "the kernel was generated for another pattern"),
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
/// pattern. For a tree's mass matrix in a parent-first order (every joint coupled with
/// its ancestors) the elimination tree is the kinematic tree and the factor has no fill-in
/// (Featherstone's property; [`fill`] counts the exceptions); any other pattern — another order, a closed loop, a dense
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
    /// The elimination tree and the packed layout.
    sym: Symbolic,
    /// The offset in `values` of each entry of `sym.ancestors`' row.
    ancestor_rows: Vec<usize>,
    /// For each packed entry, its position in a column-major `N × N` matrix (upper
    /// triangle: `(ancestor, row)`).
    source: Vec<usize>,
    /// The packed rows: before the elimination, the matrix; after, `D` on the diagonal and
    /// `L` beside it.
    values: Vec<f64>,
    /// `1 / D`.
    inv_d: [f64; N],
    /// The straight-line code of the same layout, if any.
    kernel: Option<Kernel<N>>,
}

/// Straight-line code of [`TreeCholesky`]'s elimination and back substitution for one
/// pattern, emitted by the build script from the same symbolic analysis (the robots'
/// `kernels::<name>::KERNEL`): the same operations in the same order, without the index
/// lists' loops.
#[derive(Clone, Copy, Debug)]
pub struct Kernel<const N: usize> {
    /// The elimination tree it was generated for (`usize::MAX`: a root).
    pub parent: &'static [usize],
    /// The rows it eliminates: `N − 1` down to `stop`.
    pub stop: usize,
    /// Loads `a`'s upper triangle into the packed rows, eliminates, reduces `b`; writes
    /// the packed rows and `1 / D`.
    #[allow(clippy::type_complexity)]
    pub eliminate: fn(
        &SMatrix<f64, N, N>,
        &mut SVector<f64, N>,
        &mut [f64],
        &mut [f64; N],
    ) -> Result<(), NotPositiveDefinite>,
    /// `b ← L⁻¹ D⁻¹ b` over rows `stop` to `N − 1` from the packed rows and `1 / D`.
    pub back_substitute: fn(&[f64], &[f64; N], &mut SVector<f64, N>),
}

impl<const N: usize> TreeCholesky<N> {
    /// The solver for matrices whose nonzeros are among `pattern` (`(row, column)`
    /// entries, either triangle or both; the diagonal is always included). Entries outside
    /// the pattern are taken as zero, whatever the matrix holds there. An entry not inside
    /// `N × N` is an error.
    pub fn new(pattern: &[(usize, usize)]) -> Result<Self, PatternError> {
        let sym =
            Symbolic::new(N, pattern).map_err(|entry| PatternError::OutOfRange { entry, n: N })?;
        let ancestor_rows = sym.ancestors.iter().map(|&a| sym.start[a]).collect();
        let mut source = Vec::with_capacity(sym.stored);
        for k in 0..N {
            source.push(k + k * N);
            source.extend(sym.ancestors_of(k).iter().map(|&a| a + k * N));
        }
        Ok(Self {
            values: vec![0.0; sym.stored],
            sym,
            ancestor_rows,
            source,
            inv_d: [0.0; N],
            kernel: None,
        })
    }

    /// [`new`](Self::new), with the straight-line `kernel` generated for the same pattern
    /// used where it applies (eliminations down to its `stop`); a kernel of another
    /// elimination tree is an error.
    pub fn with_kernel(
        pattern: &[(usize, usize)],
        kernel: Kernel<N>,
    ) -> Result<Self, PatternError> {
        let mut s = Self::new(pattern)?;
        if kernel.parent != s.sym.parent.as_slice() || kernel.stop > N {
            return Err(PatternError::Kernel);
        }
        s.kernel = Some(kernel);
        Ok(s)
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
        self.sym.parent.get(k).copied().filter(|&p| p != ROOT)
    }

    /// The number of entries of the factor's off-diagonal structure (ancestor pairs of the
    /// elimination tree) outside the pattern: 0 for a tree's mass matrix ordered parents
    /// first (no fill-in).
    pub fn fill(&self) -> usize {
        self.sym.fill
    }

    /// The number of stored entries of `L` and `D` (`N (N + 1) / 2` for a dense pattern).
    pub fn stored(&self) -> usize {
        self.values.len()
    }

    /// Copies the pattern's entries of `a` (its upper triangle) into the packed rows, zeros
    /// into the fill-in's.
    fn load(&mut self, a: &SMatrix<f64, N, N>) {
        let a = a.as_slice();
        for (v, &s) in self.values.iter_mut().zip(&self.source) {
            *v = a[s];
        }
        for &p in &self.sym.fill_entries {
            self.values[p] = 0.0;
        }
    }

    /// Eliminates rows `N − 1` down to `stop`: their `D` and `L` rows, and the Schur
    /// complement left in the rows above `stop`; and `b ← L⁻ᵀ b` over the same rows (the
    /// rows above `stop` receive their reduced right-hand side).
    fn eliminate(
        &mut self,
        b: &mut SVector<f64, N>,
        stop: usize,
    ) -> Result<(), NotPositiveDefinite> {
        let b = b.as_mut_slice();
        for k in (stop..N).rev() {
            let s = self.sym.start[k];
            let d = self.sym.depth[k];
            let (lo, hi) = self.values.split_at_mut(s);
            let row_k = &mut hi[..=d];
            let dk = row_k[0];
            // Not positive, or NaN, or infinite.
            if !(dk > 0.0 && dk < f64::INFINITY) {
                return Err(NotPositiveDefinite { row: k });
            }
            let inv = 1.0 / dk;
            self.inv_d[k] = inv;
            let bk = b[k];
            let anc = &self.sym.ancestors[s - k..s - k + d];
            let rows = &self.ancestor_rows[s - k..s - k + d];
            for (m, (&i, &si)) in anc.iter().zip(rows).enumerate() {
                // Row i's packed entries: its diagonal and its d − m − 1 ancestors, the
                // same rows as row k's ancestors from i on.
                let h = row_k[m + 1];
                let lk = h * inv;
                let row_i = &mut lo[si..si + d - m];
                row_i[0] -= lk * h;
                axpy(&mut row_i[1..], lk, &row_k[m + 2..]);
                b[i] -= lk * bk;
                row_k[m + 1] = lk;
            }
        }
        Ok(())
    }

    /// `b ← L⁻ᵀ b` over the eliminated rows `N − 1` down to `stop`.
    fn reduce(&self, b: &mut SVector<f64, N>, stop: usize) {
        for k in (stop..N).rev() {
            let s = self.sym.start[k];
            let d = self.sym.depth[k];
            let bk = b[k];
            let anc = &self.sym.ancestors[s - k..s - k + d];
            for (&i, l) in anc.iter().zip(&self.values[s + 1..=s + d]) {
                b[i] -= l * bk;
            }
        }
    }

    /// `b ← L⁻¹ D⁻¹ b` over rows `stop` to `N − 1`, the rows above `stop` holding their
    /// solution already.
    fn back_substitute(&self, b: &mut SVector<f64, N>, stop: usize) {
        for k in stop..N {
            let s = self.sym.start[k];
            let d = self.sym.depth[k];
            let anc = &self.sym.ancestors[s - k..s - k + d];
            let mut x = b[k] * self.inv_d[k];
            for (&i, l) in anc.iter().zip(&self.values[s + 1..=s + d]) {
                x -= l * b[i];
            }
            b[k] = x;
        }
    }

    /// Loads `a` and eliminates down to `stop`, by the kernel if it has that `stop`.
    fn load_eliminate(
        &mut self,
        a: &SMatrix<f64, N, N>,
        b: &mut SVector<f64, N>,
        stop: usize,
    ) -> Result<(), NotPositiveDefinite> {
        match self.kernel {
            Some(k) if k.stop == stop => (k.eliminate)(a, b, &mut self.values, &mut self.inv_d),
            _ => {
                self.load(a);
                self.eliminate(b, stop)
            }
        }
    }

    /// [`back_substitute`](Self::back_substitute), by the kernel if it has that `stop`.
    fn substitute(&self, b: &mut SVector<f64, N>, stop: usize) {
        match self.kernel {
            Some(k) if k.stop == stop => (k.back_substitute)(&self.values, &self.inv_d, b),
            _ => self.back_substitute(b, stop),
        }
    }

    /// Factors `a` (its upper triangle read, at the pattern's entries and their fill-in).
    pub fn factor(&mut self, a: &SMatrix<f64, N, N>) -> Result<(), NotPositiveDefinite> {
        let mut b = SVector::zeros();
        self.load_eliminate(a, &mut b, 0)
    }

    /// `b ← a⁻¹ b` with the last [`factor`](Self::factor)ed `a`.
    pub fn solve_in_place(&self, b: &mut SVector<f64, N>) {
        self.reduce(b, 0);
        self.substitute(b, 0);
    }

    /// `a⁻¹ b`, factoring `a` (its upper triangle read, at the pattern's entries) on the
    /// way; afterwards [`solve_in_place`](Self::solve_in_place) solves with the same `a`.
    pub fn solve(
        &mut self,
        a: &SMatrix<f64, N, N>,
        mut b: SVector<f64, N>,
    ) -> Result<SVector<f64, N>, NotPositiveDefinite> {
        self.load_eliminate(a, &mut b, 0)?;
        self.substitute(&mut b, 0);
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
        self.load_eliminate(a, b, stop)
    }

    /// The leading `S × S` block of the packed rows (after
    /// [`eliminate_below`](Self::eliminate_below) with `stop = S`: the Schur complement),
    /// both triangles; entries outside the elimination tree's ancestor pairs are zero.
    pub fn leading_block<const S: usize>(&self) -> SMatrix<f64, S, S> {
        let mut out = SMatrix::<f64, S, S>::zeros();
        for k in 0..S.min(N) {
            let s = self.sym.start[k];
            let d = self.sym.depth[k];
            out[(k, k)] = self.values[s];
            let anc = &self.sym.ancestors[s - k..s - k + d];
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
        self.substitute(b, stop);
    }
}

/// `y ← y − a x` (to the shorter length). Not inlined: as a function's arguments the two
/// slices are known not to overlap, so the vectorised loop goes without a run-time overlap
/// check (Romeo's solve by the loops: 45.8k → 37.2k instructions, 2.23 → 2.03 µs).
#[inline(never)]
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y -= a * x;
    }
}
