use super::{mass_mul, mat_mul, mul, mul_acc};
use nalgebra::SMatrix;

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
