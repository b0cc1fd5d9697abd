//! The irreducible diagonal blocks of a square sparsity pattern (a block-triangular form:
//! a perfect matching of rows to columns, then the strongly connected components of the
//! matched graph), for the partition-crossing guard: the determinant of a block-triangular
//! matrix is the product of its diagonal blocks' determinants, so a dependent block that
//! decouples (the windows of a parallelogram chain) is tested block by block.

/// The diagonal blocks `(rows, columns)` of a block-triangular form of the `n × n` pattern
/// `nonzero(i, k)`: every row and column in exactly one block, each block square. Any
/// matrix with this pattern is, with its rows and columns ordered block by block (the
/// blocks in a suitable order), block-triangular with these diagonal blocks. `None` when
/// the pattern has no perfect matching (every matrix with it is singular).
pub(super) fn diagonal_blocks(
    n: usize,
    nonzero: impl Fn(usize, usize) -> bool,
) -> Option<Vec<(Vec<usize>, Vec<usize>)>> {
    let adj: Vec<Vec<usize>> = (0..n)
        .map(|i| (0..n).filter(|&k| nonzero(i, k)).collect())
        .collect();
    let row_of_col = perfect_matching(&adj, n)?;
    let mut col_of_row = vec![0usize; n];
    for (k, &i) in row_of_col.iter().enumerate() {
        col_of_row[i] = k;
    }
    // The matched graph: row i → row j where row i has an entry in the column matched to j.
    let succ: Vec<Vec<usize>> = adj
        .iter()
        .map(|cols| cols.iter().map(|&k| row_of_col[k]).collect())
        .collect();
    Some(
        strong_components(&succ)
            .into_iter()
            .map(|rows| {
                let cols = rows.iter().map(|&i| col_of_row[i]).collect();
                (rows, cols)
            })
            .collect(),
    )
}

/// A perfect matching of the bipartite graph `adj` (row → columns): for each column its row;
/// `None` when there is none. Augmenting paths by depth-first search with an explicit stack
/// (`O(n · nonzeros)`).
fn perfect_matching(adj: &[Vec<usize>], n: usize) -> Option<Vec<usize>> {
    const FREE: usize = usize::MAX;
    let mut row_of_col = vec![FREE; n];
    let mut seen = vec![usize::MAX; n];
    for root in 0..n {
        // The path so far: (row, next adjacency index, column through which it was
        // reached — the column matched to it; unused for the root).
        let mut path: Vec<(usize, usize, usize)> = vec![(root, 0, FREE)];
        let mut free = None;
        while let Some(&mut (i, ref mut next, _)) = path.last_mut() {
            let Some(&c) = adj[i].get(*next) else {
                path.pop();
                continue;
            };
            *next += 1;
            if seen[c] == root {
                continue;
            }
            seen[c] = root;
            if row_of_col[c] == FREE {
                free = Some(c);
                break;
            }
            path.push((row_of_col[c], 0, c));
        }
        // Augment: each row on the path takes the column through which the next one was
        // reached, the last one the free column.
        let mut c = free?;
        while let Some((i, _, via)) = path.pop() {
            row_of_col[c] = i;
            c = via;
        }
    }
    Some(row_of_col)
}

/// The strongly connected components of the graph `succ` (Tarjan's algorithm, iterative),
/// each listed in ascending order.
fn strong_components(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const NONE: usize = usize::MAX;
    let n = succ.len();
    let mut index = vec![NONE; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comps = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut next)) = call.last_mut() {
            if let Some(&w) = succ[v].get(*next) {
                *next += 1;
                if index[w] == NONE {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comp.sort_unstable();
                comps.push(comp);
            }
        }
    }
    comps
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    /// A random `n × n` pattern of a block-triangular matrix with the given block sizes,
    /// its rows and columns shuffled: the blocks found must be square, cover every row and
    /// column once, and the determinant of a random matrix with the pattern must equal the
    /// product of the blocks' determinants.
    #[test]
    fn blocks_of_shuffled_block_triangular_patterns_multiply_to_the_determinant() {
        let mut rnd = crate::trig::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        for trial in 0..200 {
            let sizes: Vec<usize> = (0..1 + rnd() % 6)
                .map(|_| 1 + (rnd() % 4) as usize)
                .collect();
            let n: usize = sizes.iter().sum();
            let mut block_of = Vec::new();
            for (b, &s) in sizes.iter().enumerate() {
                block_of.extend(std::iter::repeat_n(b, s));
            }
            // Lower block-triangular: dense diagonal blocks, sparse below.
            let a = DMatrix::<f64>::from_fn(n, n, |i, k| {
                let r = rnd();
                let keep = block_of[i] == block_of[k]
                    || (block_of[i] > block_of[k] && r.is_multiple_of(3));
                if keep {
                    (r % 1000) as f64 / 250.0 - 2.0 + 0.001
                } else {
                    0.0
                }
            });
            let mut pr: Vec<usize> = (0..n).collect();
            let mut pc: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                pr.swap(i, (rnd() % (i as u64 + 1)) as usize);
                pc.swap(i, (rnd() % (i as u64 + 1)) as usize);
            }
            let b = DMatrix::<f64>::from_fn(n, n, |i, k| a[(pr[i], pc[k])]);
            let blocks = diagonal_blocks(n, |i, k| b[(i, k)] != 0.0).expect("matching");
            let (mut rows, mut cols): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
            let mut det = 1.0;
            for (r, c) in &blocks {
                assert_eq!(r.len(), c.len(), "trial {trial}");
                rows.extend(r);
                cols.extend(c);
                det *= DMatrix::from_fn(r.len(), r.len(), |i, k| b[(r[i], c[k])]).determinant();
            }
            rows.sort_unstable();
            cols.sort_unstable();
            assert_eq!(rows, (0..n).collect::<Vec<_>>(), "trial {trial}");
            assert_eq!(cols, (0..n).collect::<Vec<_>>(), "trial {trial}");
            // Up to the sign of the permutations: |det| agrees.
            let full = b.determinant();
            assert!(
                (det.abs() - full.abs()).abs() <= 1e-9 * full.abs().max(1.0),
                "trial {trial}: {det} vs {full}"
            );
            // No more blocks than the construction's (a block may split further by chance).
            assert!(blocks.len() >= sizes.len(), "trial {trial}");
        }
    }

    #[test]
    fn a_structurally_singular_pattern_has_no_blocks() {
        // Two rows with entries in one column only.
        let p = [
            [true, false, false],
            [true, false, false],
            [true, true, true],
        ];
        assert!(diagonal_blocks(3, |i, k| p[i][k]).is_none());
    }
}
