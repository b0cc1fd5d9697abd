//! A chart's null-space basis re-expressed in other independent coordinates (what the
//! generated default `null_space` calls for the atlas's charts in other coordinates).

use nalgebra::SMatrix;

use crate::real::Real;

/// A chart's basis `d` (health `h`) re-expressed in the independent coordinates
/// `independent`: `D B⁻¹`, `B = D[independent, :]` (the columns are then the derivatives
/// with respect to those coordinates, identity rows there), with health
/// `min(h, smallest pivot of the partial-pivoting LU of B with the columns of D scaled to
/// unit length)`: near 0 where `independent` does not parametrise the mechanism. Health 0
/// (and `d` unchanged) where `B` is singular, an index is out of range or a value is not
/// finite.
///
/// ```
/// use mechgen_runtime::nalgebra::SMatrix;
/// // A basis with identity rows at coordinate 1, re-expressed at coordinate 0.
/// let d = SMatrix::<f64, 2, 1>::new(2.0, 1.0);
/// let (e, h) = mechgen_runtime::__generated::in_independent(&d, 1.0, &[0]);
/// assert_eq!((e[(0, 0)], e[(1, 0)]), (1.0, 0.5));
/// assert!(h > 0.8 && h <= 1.0);
/// ```
pub fn in_independent<S: Real, const NQ: usize, const DOF: usize>(
    d: &SMatrix<S, NQ, DOF>,
    h: S,
    independent: &[usize; DOF],
) -> (SMatrix<S, NQ, DOF>, S) {
    let zero = S::from_f64(0.0);
    let one = S::from_f64(1.0);
    let fail = (*d, zero);
    if independent.iter().any(|&i| i >= NQ) {
        return fail;
    }
    // The columns scaled to unit length (the pivots then measure conditioning).
    let mut dn = *d;
    for c in 0..DOF {
        let mut s = zero;
        for r in 0..NQ {
            s += dn[(r, c)] * dn[(r, c)];
        }
        let n = s.sqrt();
        if !(n.value() > 0.0 && n.value().is_finite()) {
            return fail;
        }
        for r in 0..NQ {
            dn[(r, c)] /= n;
        }
    }
    // Gauss–Jordan with partial pivoting: `inv = B⁻¹`.
    let mut a = [[zero; DOF]; DOF];
    let mut inv = [[zero; DOF]; DOF];
    for (r, &i) in independent.iter().enumerate() {
        for c in 0..DOF {
            a[r][c] = dn[(i, c)];
        }
        inv[r][r] = one;
    }
    let mut piv = one;
    for k in 0..DOF {
        let mut m = k;
        for r in k + 1..DOF {
            if a[r][k].abs().value() > a[m][k].abs().value() {
                m = r;
            }
        }
        a.swap(k, m);
        inv.swap(k, m);
        let pk = a[k][k];
        // (NaN fails the comparison too.)
        if pk.abs().value().partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
            return fail;
        }
        if pk.abs().value() < piv.value() {
            piv = pk.abs();
        }
        for c in 0..DOF {
            a[k][c] /= pk;
            inv[k][c] /= pk;
        }
        for r in 0..DOF {
            let f = a[r][k];
            if r != k && !f.is_zero() {
                for c in 0..DOF {
                    a[r][c] -= f * a[k][c];
                    inv[r][c] -= f * inv[k][c];
                }
            }
        }
    }
    let mut out = SMatrix::<S, NQ, DOF>::from_fn(|_, _| zero);
    for r in 0..NQ {
        for c in 0..DOF {
            let mut s = zero;
            for k in 0..DOF {
                s += dn[(r, k)] * inv[k][c];
            }
            out[(r, c)] = s;
        }
    }
    for (k, &i) in independent.iter().enumerate() {
        for c in 0..DOF {
            out[(i, c)] = if c == k { one } else { zero };
        }
    }
    if !(h.value() >= 0.0 && out.iter().all(|v| v.value().is_finite())) {
        return fail;
    }
    (out, if h.value() < piv.value() { h } else { piv })
}
