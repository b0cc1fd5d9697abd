use super::*;

#[test]
fn mass_finite_reads_the_listed_entries_or_all() {
    let nz: &[(usize, usize)] = &[(0, 0), (1, 1), (0, 1), (1, 0)];
    let mut m = SMatrix::<f64, 3, 3>::zeros();
    m[(0, 0)] = 2.0;
    m[(0, 1)] = -1.0;
    assert!(mass_finite(Some(nz), &m) && mass_finite(None, &m));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        // A listed entry: found, with or without the list.
        for &(i, k) in nz {
            let mut b = m;
            b[(i, k)] = bad;
            assert!(!mass_finite(Some(nz), &b) && !mass_finite(None, &b));
        }
        // Outside the list (zero by contract, never read): only the full check sees it.
        let mut b = m;
        b[(2, 2)] = bad;
        assert!(mass_finite(Some(nz), &b) && !mass_finite(None, &b));
        // An index out of range: every entry checked.
        assert!(!mass_finite(Some(&[(0, 0), (3, 0)]), &b));
    }
}

#[test]
fn finite_finds_every_non_finite_entry_at_every_position() {
    for n in 0..40usize {
        // Finite values of every kind (zeros of both signs, subnormals, the extremes).
        let base: Vec<f64> = (0..n)
            .map(|k| match k % 6 {
                0 => -0.0,
                1 => f64::MAX,
                2 => -f64::MIN_POSITIVE / 4.0,
                3 => 1.5,
                4 => f64::MIN,
                _ => 0.0,
            })
            .collect();
        assert!(finite(&base), "n = {n}");
        for k in 0..n {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                let mut v = base.clone();
                v[k] = bad;
                assert!(!finite(&v), "n = {n}, entry {k} = {bad}");
                assert_eq!(finite(&v), v.iter().all(|x| x.is_finite()));
            }
        }
    }
}

/// The Bricard linkage's constraint Jacobian (A04: five rows, one redundant) 1e-12 off
/// its manifold, column-major: nalgebra's SVD at `ε` returns orthogonal factors that miss
/// it by 6e-2.
const BRICARD: [f64; 25] = [
    1.000000000000031,
    0.0,
    -2.7755575615628914e-17,
    0.0,
    -1.0,
    3.3584246494910985e-15,
    -1.998069997949264,
    -5.384581669432009e-14,
    0.06209894679908551,
    -8.630179904045576e-13,
    -6.217248937900877e-14,
    -0.053796570054868126,
    0.03107946511549397,
    -0.864632096541412,
    0.49951703342402065,
    -1.727711673688318e-12,
    -0.9980699979493266,
    1.73093616170507,
    0.03101948168409013,
    -0.053796570054864774,
    -1.0,
    8.646972027293032e-13,
    -4.99558727717897e-13,
    0.8663040651637116,
    0.499517033424114,
];

fn check(a: &DMatrix<f64>, s: &SVD<f64, Dyn, Dyn>) {
    let (u, vt) = (s.u.as_ref().expect("u"), s.v_t.as_ref().expect("v_t"));
    let k = a.nrows().min(a.ncols());
    assert!(reconstruction_error(a, s) <= 1e-13 * a.norm().max(1.0));
    let iu = u.tr_mul(u) - DMatrix::<f64>::identity(k, k);
    let iv = vt * vt.transpose() - DMatrix::<f64>::identity(k, k);
    assert!(
        iu.amax() < 1e-13 && iv.amax() < 1e-13,
        "{} {}",
        iu.amax(),
        iv.amax()
    );
}

#[test]
fn checked_svd_reconstructs_where_the_first_attempt_does_not() {
    let a = DMatrix::from_column_slice(5, 5, &BRICARD);
    let first = SVD::try_new(a.clone(), true, true, f64::EPSILON, 2200).expect("converges");
    // The defect this guards against (if nalgebra fixes it, the test still checks svd).
    let raw = reconstruction_error(&a, &first);
    let s = svd(a.clone()).expect("an accurate attempt");
    check(&a, &s);
    assert!(raw > 1e-6 || reconstruction_error(&a, &s) <= raw);
}

#[test]
fn jacobi_svd_is_accurate_on_rank_deficient_and_rectangular_matrices() {
    let mut uniform = crate::trig::tests::uniform(0x2545_f491_4f6c_dd1d);
    let mut rand = || uniform() * 2.0 - 1.0;
    for (m, n, rank) in [(5, 5, 4), (7, 4, 2), (3, 6, 3), (6, 6, 6), (4, 4, 0)] {
        for _ in 0..20 {
            let x = DMatrix::<f64>::from_fn(m, rank, |_, _| rand());
            let y = DMatrix::<f64>::from_fn(rank, n, |_, _| rand());
            let a = &x * &y;
            let s = jacobi_svd(&a).expect("converges");
            check(&a, &s);
            let small = s
                .singular_values
                .iter()
                .filter(|&&v| v <= 1e-12 * a.norm().max(1e-300))
                .count();
            assert_eq!(small, m.min(n) - rank.min(m.min(n)), "{m}×{n} rank {rank}");
        }
    }
    let a = DMatrix::from_column_slice(5, 5, &BRICARD);
    check(&a, &jacobi_svd(&a).expect("converges"));
}

/// The `O(N²)` bound on `λ_min(L Lᵀ)` from the Cholesky factor never exceeds the smallest
/// eigenvalue (nalgebra's symmetric eigendecomposition) of random positive definite
/// matrices, from well conditioned to a condition number near 1e12, and is exact for a
/// diagonal matrix; `definite_solve` agrees with nalgebra's LU solve on them; a zero or NaN
/// on the diagonal gives 0.
#[test]
fn lambda_min_bound_is_a_lower_bound() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(45);
    let mut certified = 0;
    for case in 0..300 {
        // A = Q diag(λ) Qᵀ with λ spread over `spread` decades, plus a random SPD part.
        let spread: i32 = case % 13;
        let x = SMatrix::<f64, 8, 8>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let q = x.qr().q();
        let lam = SVector::<f64, 8>::from_fn(|i, _| {
            10f64.powf(-(spread as f64) * i as f64 / 7.0) * rng.random_range(0.5..2.0)
        });
        let a = q * SMatrix::<f64, 8, 8>::from_diagonal(&lam) * q.transpose();
        let a = (a + a.transpose()) * 0.5;
        let Some(ch) = a.cholesky() else { continue };
        let lmin = a.symmetric_eigenvalues().min();
        let bound = lambda_min_bound(ch.l_dirty());
        assert!(
            bound > 0.0 && bound <= lmin * (1.0 + 1e-10),
            "case {case}: bound {bound:e} above λ_min {lmin:e}"
        );
        if bound > MASS_RTOL * a.trace() {
            certified += 1;
        }
        let b = SVector::<f64, 8>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        if let (Some(x), Some(y)) = (definite_solve(&a, &b), a.lu().solve(&b)) {
            let scale = y.amax().max(1.0);
            assert!(
                (x - y).amax() <= 1e-6 * scale * 10f64.powi(spread),
                "case {case}"
            );
        }
    }
    assert!(
        certified > 200,
        "the bound certified only {certified} of 300"
    );
    let d = SMatrix::<f64, 3, 3>::from_diagonal(&SVector::from([4.0, 9.0, 0.25]));
    let ch = d.cholesky().expect("definite");
    assert!((lambda_min_bound(ch.l_dirty()) - 0.25).abs() < 1e-15);
    let mut z = SMatrix::<f64, 3, 3>::identity();
    z[(1, 1)] = 0.0;
    assert_eq!(lambda_min_bound(&z), 0.0);
    z[(1, 1)] = f64::NAN;
    assert_eq!(lambda_min_bound(&z), 0.0);
}
