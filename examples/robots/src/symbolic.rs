//! The symbolic analysis of [`TreeCholesky`](crate::TreeCholesky): the elimination tree of
//! a symmetric pattern and the packed layout of its `LᵀDL` factor. Plain `std`, shared with
//! the build script (`build.rs` includes this file to emit the straight-line kernels from
//! the same layout).

/// No parent in the elimination tree.
pub const ROOT: usize = usize::MAX;

/// The elimination tree and the packed layout of an `n × n` pattern, rows eliminated from
/// the last up.
#[derive(Clone, Debug)]
pub struct Symbolic {
    /// Elimination-tree parent of each row (`ROOT` for a root); always below the row.
    pub parent: Vec<usize>,
    /// Number of ancestors of each row.
    pub depth: Vec<usize>,
    /// Offset of each row's packed entries (its diagonal, then its ancestors from the parent
    /// to the root); its ancestors start at `start[k] - k` in `ancestors`.
    pub start: Vec<usize>,
    /// The ancestors of each row, parent first, rows concatenated.
    pub ancestors: Vec<usize>,
    /// Entries of the packed rows' off-diagonal part outside the pattern (fill-in).
    pub fill: usize,
    /// Their packed positions (zero before the elimination, whatever the matrix holds).
    pub fill_entries: Vec<usize>,
    /// Total packed entries.
    pub stored: usize,
}

impl Symbolic {
    /// Analyses the `(row, column)` entries of `pattern` (either triangle or both; the
    /// diagonal is implied); an entry outside `n × n` is returned as the error.
    pub fn new(n: usize, pattern: &[(usize, usize)]) -> Result<Self, (usize, usize)> {
        // Below the diagonal, by row: lower[k] holds the columns i < k of row k.
        let mut lower: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(r, c) in pattern {
            if r >= n || c >= n {
                return Err((r, c));
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
        // Liu's elimination tree, rows eliminated from n − 1 down: when row i is reached,
        // every row k > i with a[k][i] ≠ 0 joins i through its current root.
        let mut column: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, row) in lower.iter().enumerate() {
            for &i in row {
                column[i].push(k);
            }
        }
        let mut parent = vec![ROOT; n];
        for i in (0..n).rev() {
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
        let mut depth = vec![0; n];
        let mut start = vec![0; n];
        let mut ancestors = Vec::new();
        let mut fill_entries = Vec::new();
        let mut offset = 0;
        for k in 0..n {
            start[k] = offset;
            let mut a = parent[k];
            while a != ROOT {
                ancestors.push(a);
                if lower[k].binary_search(&a).is_err() {
                    fill_entries.push(offset + 1 + depth[k]);
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
            fill: fill_entries.len(),
            fill_entries,
            stored: offset,
        })
    }

    /// The ancestors of row `k`, parent first.
    pub fn ancestors_of(&self, k: usize) -> &[usize] {
        let a = self.start[k] - k;
        &self.ancestors[a..a + self.depth[k]]
    }
}
