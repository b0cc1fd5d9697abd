//! `robots::TreeCholesky` against nalgebra's dense Cholesky on random symmetric positive
//! definite matrices of many patterns: kinematic trees ordered parents first (no fill-in),
//! the same trees in random orders (fill-in), random sparse patterns, dense matrices; its
//! elimination tree against a boolean elimination of the pattern; and its errors.

use mechgen::nalgebra::{DMatrix, DVector, SMatrix, SVector};
use robots::{FloatingBase, NotPositiveDefinite, PatternError, TreeCholesky};

/// Relative tolerance of the solutions (the matrices are built well conditioned).
const TOL: f64 = 1e-12;

/// splitmix64, uniform in [-1, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        2.0 * ((self.next() >> 11) as f64 / (1u64 << 53) as f64) - 1.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random forest on `n` nodes, parents first: `parent[k] < k` or `None`.
fn random_tree(r: &mut Rng, n: usize) -> Vec<Option<usize>> {
    (0..n)
        .map(|k| {
            // A few roots; otherwise a parent among the earlier nodes, often the previous
            // one (chains, as in limbs).
            if k == 0 || r.below(8) == 0 {
                None
            } else if r.below(2) == 0 {
                Some(k - 1)
            } else {
                Some(r.below(k))
            }
        })
        .collect()
}

/// The mass-matrix pattern of a forest: the pairs of a node and its ancestors (and itself).
fn tree_pattern(parent: &[Option<usize>]) -> Vec<(usize, usize)> {
    let mut p = Vec::new();
    for k in 0..parent.len() {
        p.push((k, k));
        let mut a = parent[k];
        while let Some(i) = a {
            p.push((k, i));
            p.push((i, k));
            a = parent[i];
        }
    }
    p
}

/// A random symmetric positive definite matrix with exactly (at most) `pattern`'s
/// nonzeros: random off-diagonal entries, the diagonal dominating.
fn random_spd(r: &mut Rng, n: usize, pattern: &[(usize, usize)]) -> DMatrix<f64> {
    let mut a = DMatrix::<f64>::zeros(n, n);
    for &(i, j) in pattern {
        if i < j {
            let x = r.uniform();
            a[(i, j)] = x;
            a[(j, i)] = x;
        }
    }
    for i in 0..n {
        let off: f64 = (0..n).filter(|&j| j != i).map(|j| a[(i, j)].abs()).sum();
        a[(i, i)] = off + 0.5 + r.uniform().abs();
    }
    a
}

/// `pattern` under the permutation `perm` (old index → new index).
fn permute(pattern: &[(usize, usize)], perm: &[usize]) -> Vec<(usize, usize)> {
    pattern.iter().map(|&(i, j)| (perm[i], perm[j])).collect()
}

/// A random permutation of `0..n`.
fn random_permutation(r: &mut Rng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for k in (1..n).rev() {
        p.swap(k, r.below(k + 1));
    }
    p
}

/// The factor's structure by a boolean elimination of the pattern, rows from the last up:
/// `true` at `(k, i)`, `i < k`, where `L[k][i]` can be nonzero.
fn boolean_factor(n: usize, pattern: &[(usize, usize)]) -> Vec<Vec<bool>> {
    let mut s = vec![vec![false; n]; n];
    for &(i, j) in pattern {
        s[i][j] = true;
        s[j][i] = true;
    }
    for k in (0..n).rev() {
        let nz: Vec<usize> = (0..k).filter(|&i| s[k][i]).collect();
        for &i in &nz {
            for &j in &nz {
                s[i][j] = true;
            }
        }
    }
    (0..n)
        .map(|k| (0..n).map(|i| i < k && s[k][i]).collect())
        .collect()
}

/// Solves `a x = b` by `TreeCholesky` with `pattern` and by nalgebra; checks the two
/// agree to `TOL`, and the factor's structure lies in the elimination tree. Returns the
/// solver's fill-in and the boolean elimination's.
fn check<const N: usize>(
    r: &mut Rng,
    pattern: &[(usize, usize)],
    a: &DMatrix<f64>,
    what: &str,
) -> (usize, usize) {
    let mut tree = TreeCholesky::<N>::new(pattern).unwrap_or_else(|e| panic!("{what}: {e}"));
    let sm = SMatrix::<f64, N, N>::from_fn(|i, j| a[(i, j)]);
    let b = SVector::<f64, N>::from_fn(|_, _| r.uniform());
    let x = tree.solve(&sm, b).unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = a
        .clone()
        .cholesky()
        .unwrap_or_else(|| panic!("{what}: nalgebra: not positive definite"))
        .solve(&DVector::from_column_slice(b.as_slice()));
    let err = (x.as_slice().iter().zip(want.iter())).fold(0.0f64, |m, (g, w)| m.max((g - w).abs()))
        / want.amax();
    assert!(err <= TOL, "{what}: off by {err:e} relative");
    // The same factor solves again in place.
    let mut again = b;
    tree.solve_in_place(&mut again);
    assert_eq!(again, x, "{what}: solve_in_place after solve");
    // Every entry of the factor's true structure joins a row to an ancestor.
    let structure = boolean_factor(N, pattern);
    let mut true_fill = 0;
    let in_pattern = |k: usize, i: usize| pattern.contains(&(k, i)) || pattern.contains(&(i, k));
    for (k, row) in structure.iter().enumerate() {
        for (i, _) in row.iter().enumerate().filter(|(_, &nz)| nz) {
            let mut a = tree.parent(k);
            while a.is_some_and(|a| a > i) {
                a = a.and_then(|a| tree.parent(a));
            }
            assert_eq!(
                a,
                Some(i),
                "{what}: L[{k}][{i}] outside the elimination tree"
            );
            if !in_pattern(k, i) {
                true_fill += 1;
            }
        }
    }
    assert!(true_fill <= tree.fill(), "{what}: fill-in undercounted");
    (tree.fill(), true_fill)
}

/// Trees in parent-first order: no fill-in, the elimination tree is the tree; then the
/// same matrices in random orders.
fn trees<const N: usize>(r: &mut Rng, samples: usize) {
    let mut renumbered_fill = 0;
    for s in 0..samples {
        let parent = random_tree(r, N);
        let pattern = tree_pattern(&parent);
        let a = random_spd(r, N, &pattern);
        let what = format!("tree of {N}, sample {s}");
        let (fill, true_fill) = check::<N>(r, &pattern, &a, &what);
        assert_eq!((fill, true_fill), (0, 0), "{what}: fill-in");
        let tree = TreeCholesky::<N>::new(&pattern).unwrap_or_else(|e| panic!("{e}"));
        for (k, p) in parent.iter().enumerate() {
            assert_eq!(tree.parent(k), *p, "{what}: elimination tree");
        }
        // Renumbered: children may come before parents.
        let perm = random_permutation(r, N);
        let pp = permute(&pattern, &perm);
        let ap = DMatrix::from_fn(N, N, |i, j| {
            let (oi, oj) = (
                perm.iter().position(|&p| p == i).unwrap_or(0),
                perm.iter().position(|&p| p == j).unwrap_or(0),
            );
            a[(oi, oj)]
        });
        renumbered_fill += check::<N>(r, &pp, &ap, &format!("{what}, renumbered")).1;
    }
    // The renumbered trees did exercise fill-in.
    assert!(
        N < 7 || renumbered_fill > 0,
        "no fill-in in {samples} renumbered trees of {N}"
    );
}

/// Random sparse patterns (no tree: loops) and dense matrices.
fn others<const N: usize>(r: &mut Rng, samples: usize) {
    let mut sparse_fill = 0;
    for s in 0..samples {
        let mut pattern: Vec<(usize, usize)> = (0..N).map(|k| (k, k)).collect();
        for _ in 0..N {
            let (i, j) = (r.below(N), r.below(N));
            pattern.push((i, j));
        }
        let a = random_spd(r, N, &pattern);
        sparse_fill += check::<N>(r, &pattern, &a, &format!("sparse {N}, sample {s}")).1;
        let dense: Vec<(usize, usize)> = (0..N).flat_map(|i| (0..N).map(move |j| (i, j))).collect();
        let a = random_spd(r, N, &dense);
        let (fill, _) = check::<N>(r, &dense, &a, &format!("dense {N}, sample {s}"));
        assert_eq!(fill, 0);
        let d = TreeCholesky::<N>::dense();
        assert_eq!(d.stored(), N * (N + 1) / 2);
    }
    assert!(
        N < 12 || sparse_fill > 0,
        "no fill-in in {samples} sparse patterns of {N}"
    );
}

#[test]
fn trees_in_any_order_match_nalgebra() {
    let mut r = Rng(45);
    trees::<1>(&mut r, 3);
    trees::<2>(&mut r, 10);
    trees::<7>(&mut r, 50);
    trees::<18>(&mut r, 50);
    trees::<38>(&mut r, 50);
}

#[test]
fn sparse_and_dense_patterns_match_nalgebra() {
    let mut r = Rng(46);
    others::<1>(&mut r, 3);
    others::<5>(&mut r, 30);
    others::<12>(&mut r, 30);
    others::<30>(&mut r, 30);
}

/// Entries outside the pattern are taken as zero, whatever the matrix holds there.
#[test]
fn entries_outside_the_pattern_are_zero() {
    let mut r = Rng(47);
    for s in 0..20 {
        let parent = random_tree(&mut r, 12);
        let pattern = tree_pattern(&parent);
        let a = random_spd(&mut r, 12, &pattern);
        let clean = SMatrix::<f64, 12, 12>::from_fn(|i, j| a[(i, j)]);
        let mut dirty = clean;
        for i in 0..12 {
            for j in 0..12 {
                if !pattern.contains(&(i, j)) {
                    dirty[(i, j)] = f64::NAN;
                }
            }
        }
        let b = SVector::<f64, 12>::from_fn(|_, _| r.uniform());
        let mut tree = TreeCholesky::<12>::new(&pattern).unwrap_or_else(|e| panic!("{e}"));
        let x = tree.solve(&clean, b);
        let y = tree.solve(&dirty, b);
        assert!(x.is_ok(), "sample {s}");
        assert_eq!(x, y, "sample {s}");
    }
}

#[test]
fn errors() {
    // A pattern entry outside the matrix.
    assert_eq!(
        TreeCholesky::<3>::new(&[(0, 0), (1, 3)]).err(),
        Some(PatternError::OutOfRange {
            entry: (1, 3),
            n: 3
        })
    );
    // Not positive definite: a negative pivot, a NaN, an infinity; the failing row named.
    let mut tree = TreeCholesky::<3>::dense();
    let b = SVector::<f64, 3>::new(1.0, 2.0, 3.0);
    let mut a = SMatrix::<f64, 3, 3>::identity();
    a[(1, 1)] = -1.0;
    assert_eq!(tree.solve(&a, b), Err(NotPositiveDefinite { row: 1 }));
    a[(1, 1)] = f64::NAN;
    assert_eq!(tree.solve(&a, b), Err(NotPositiveDefinite { row: 1 }));
    a[(1, 1)] = f64::INFINITY;
    assert_eq!(tree.solve(&a, b), Err(NotPositiveDefinite { row: 1 }));
    // Singular after elimination: [[1, 1], [1, 1]].
    let s = SMatrix::<f64, 2, 2>::from_element(1.0);
    assert_eq!(
        TreeCholesky::<2>::dense().solve(&s, SVector::zeros()),
        Err(NotPositiveDefinite { row: 0 })
    );
    // A floating base needs N = NV + 1 ≥ 7.
    assert_eq!(
        FloatingBase::<6, 5>::new(&[]).err(),
        Some(PatternError::Shape { n: 6, nv: 5 })
    );
    assert_eq!(
        FloatingBase::<9, 9>::new(&[]).err(),
        Some(PatternError::Shape { n: 9, nv: 9 })
    );
    // A floating base: a joint's pivot names its coordinate; the base's mapped 6 × 6 system
    // not positive definite is row 6.
    let dense8: Vec<(usize, usize)> = (0..8).flat_map(|i| (0..8).map(move |j| (i, j))).collect();
    let mut fb = FloatingBase::<8, 7>::new(&dense8).unwrap_or_else(|e| panic!("{e}"));
    let mut q = SVector::<f64, 8>::zeros();
    q[3] = 1.0;
    let (v, f, tau) = (SVector::zeros(), SVector::zeros(), SVector::zeros());
    let mut m = SMatrix::<f64, 8, 8>::identity();
    assert!(fb.forward_dynamics(&q, &v, &m, &f, &tau).is_ok());
    m[(7, 7)] = -1.0;
    assert_eq!(
        fb.forward_dynamics(&q, &v, &m, &f, &tau),
        Err(NotPositiveDefinite { row: 7 })
    );
    m[(7, 7)] = 1.0;
    m[(5, 5)] = 0.0;
    assert_eq!(
        fb.forward_dynamics(&q, &v, &m, &f, &tau),
        Err(NotPositiveDefinite { row: 6 })
    );
    // A kernel generated for another pattern.
    assert!(TreeCholesky::<6>::with_kernel(
        &robots::ur5::MASS_NONZEROS,
        robots::kernels::ur5::KERNEL
    )
    .is_ok());
    let diagonal: Vec<(usize, usize)> = (0..6).map(|i| (i, i)).collect();
    assert_eq!(
        TreeCholesky::<6>::with_kernel(&diagonal, robots::kernels::ur5::KERNEL).err(),
        Some(PatternError::Kernel)
    );
    // Messages.
    for e in [
        PatternError::OutOfRange {
            entry: (1, 3),
            n: 3,
        },
        PatternError::Shape { n: 6, nv: 5 },
        PatternError::Kernel,
    ] {
        assert!(!e.to_string().is_empty());
    }
    assert!(NotPositiveDefinite { row: 4 }.to_string().contains("row 4"));
}
