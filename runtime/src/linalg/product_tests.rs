use super::{finite, mass_mul, mat_mul, mul, mul_acc, reduced_system};
use nalgebra::SMatrix;
use nalgebra::SVector;

/// A matrix with exact zeros (a zero column included) and values from a fixed xorshift.
fn sample<const R: usize, const C: usize>(seed: &mut u64) -> SMatrix<f64, R, C> {
    SMatrix::from_fn(|i, j| {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let v = (*seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        if j == 1 || (i + 2 * j) % 3 == 0 {
            0.0
        } else {
            v
        }
    })
}

fn check<const R: usize, const K: usize, const C: usize>(seed: &mut u64) {
    let a = sample::<R, K>(seed);
    let b = sample::<K, C>(seed);
    let want = a * b;
    let got = mul(&a, &b);
    assert!(
        (got - want).amax() <= 1e-15 * (1.0 + want.amax()),
        "{R}×{K}·{K}×{C}"
    );
    // `out += alpha a b` on a nonzero `out`.
    let c = sample::<R, C>(seed);
    let mut acc = c;
    mul_acc(&mut acc, -0.75, &a, &b);
    let want = c - want * 0.75;
    assert!(
        (acc - want).amax() <= 1e-15 * (1.0 + want.amax()),
        "accumulated {R}×{K}·{K}×{C}"
    );
}

#[test]
fn mass_products_over_the_nonzeros_equal_the_dense_ones() {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    let full = sample::<9, 9>(&mut seed);
    // A symmetric matrix with the sample's zeros, and its nonzeros column by column.
    let m = full + full.transpose();
    let mut nonzeros = Vec::new();
    for k in 0..9 {
        for i in 0..9 {
            if m[(i, k)] != 0.0 {
                nonzeros.push((i, k));
            }
        }
    }
    assert!(
        nonzeros.len() < 70,
        "the sample is sparse: {}",
        nonzeros.len()
    );
    let x = sample::<9, 4>(&mut seed);
    let dense = mat_mul(&m, &x);
    // The same products in the same order: equal, not only close.
    assert_eq!(mass_mul(Some(&nonzeros), &m, &x), dense);
    assert!((dense - m * x).amax() <= 1e-15 * (1.0 + dense.amax()));
    assert_eq!(mass_mul(None, &m, &x), dense);
    // A list with an index out of range is not trusted: the dense product.
    nonzeros.push((9, 0));
    assert_eq!(mass_mul(Some(&nonzeros), &m, &x), dense);
}

#[test]
fn products_equal_nalgebras_in_both_forms_and_accumulated() {
    let mut seed = 0x2545_f491_4f6c_dd1d;
    // Dot-product form (fewer than four rows, fewer than the inner dimension).
    check::<1, 7, 42>(&mut seed);
    check::<3, 6, 5>(&mut seed);
    // Column form (zeros of `b` and zero columns of `a` skipped).
    check::<7, 6, 42>(&mut seed);
    check::<6, 24, 15>(&mut seed);
    check::<7, 1, 42>(&mut seed);
    check::<2, 2, 3>(&mut seed);
}

/// `reduced_system` equals the dense `(Dᵀ M D, Dᵀ r)` to rounding for bases with identity
/// rows at random independent sets, with and without a nonzero list; exactly where the
/// rows are not the identity (the dense products); and keeps a NaN of `M` in `Dᵀ M D`.
#[test]
fn reduced_system_equals_the_dense_products() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(45);
    for case in 0..200 {
        // A sparse symmetric M (about half its off-diagonal entries zero) and its list.
        let mut m = SMatrix::<f64, 9, 9>::zeros();
        for i in 0..9 {
            m[(i, i)] = rng.random_range(1.0..3.0);
            for k in 0..i {
                if rng.random_range(0.0..1.0) < 0.5 {
                    let x = rng.random_range(-1.0..1.0);
                    m[(i, k)] = x;
                    m[(k, i)] = x;
                }
            }
        }
        let list: Vec<(usize, usize)> = (0..9)
            .flat_map(|k| (0..9).map(move |i| (i, k)))
            .filter(|&(i, k)| m[(i, k)] != 0.0)
            .collect();
        // Four independent coordinates, in a random order, and their identity rows.
        let mut perm: Vec<usize> = (0..9).collect();
        for i in (1..9).rev() {
            perm.swap(i, rng.random_range(0..=i));
        }
        let ind = [perm[0], perm[1], perm[2], perm[3]];
        let mut d = SMatrix::<f64, 9, 4>::from_fn(|_, _| rng.random_range(-2.0..2.0));
        for (c, &k) in ind.iter().enumerate() {
            for j in 0..4 {
                d[(k, j)] = f64::from(j == c);
            }
        }
        let r = SVector::<f64, 9>::from_fn(|_, _| rng.random_range(-5.0..5.0));
        let (a0, b0) = (d.tr_mul(&(m * d)), d.transpose() * r);
        for nz in [Some(list.as_slice()), None] {
            let (a, b) = reduced_system(nz, &m, &d, &ind, &r);
            assert!((a - a0).amax() <= 1e-13 * a0.amax(), "case {case}");
            assert!((b - b0).amax() <= 1e-13 * b0.amax(), "case {case}");
        }
        // Not the identity: the dense products, exactly.
        let mut e = d;
        e[(ind[1], 0)] = 0.5;
        let (a, b) = reduced_system(Some(&list), &m, &e, &ind, &r);
        assert_eq!(
            (a, b),
            (e.tr_mul(&mass_mul(Some(&list), &m, &e)), e.transpose() * r)
        );
        // A NaN in a dependent column of M reaches Dᵀ M D.
        let mut bad = m;
        bad[(perm[5], perm[6])] = f64::NAN;
        let (a, _) = reduced_system(None, &bad, &d, &ind, &r);
        assert!(!finite(a.as_slice()), "case {case}");
    }
}
