//! Evaluation with a running bound of the rounding error, so that an entry that cancels to
//! rounding noise at a probe is not mistaken for a pivot.

use num_complex::Complex64;

use crate::expr::{Arena, ExprId, Func, Node, Scalar};

use super::probe::Probe;

/// Values of `roots` at probe `pr`, each with a first-order running bound of its rounding
/// error (every operation contributes `EPS·|result|`, and propagates its operands' errors
/// through its partial derivatives).
///
/// An entry no larger than a small multiple of its bound is numerically zero at the probe:
/// an expression that cancels to zero (`2(x + 0.1) − 2x − 0.2`, `d/dx (sin² x + cos² x)`)
/// but is not folded symbolically evaluates to rounding noise, which relative to a row of
/// the same noise would otherwise look like a perfectly good pivot.
pub fn eval_with_error(arena: &Arena, roots: &[ExprId], pr: &Probe) -> Vec<(Complex64, f64)> {
    const EPS: f64 = f64::EPSILON;
    let mask = arena.reachable(roots);
    let zero = (Complex64::new(0.0, 0.0), 0.0);
    let mut vals: Vec<(Complex64, f64)> = vec![zero; mask.len()];
    for (i, n) in arena.nodes().iter().enumerate() {
        if !mask[i] {
            continue;
        }
        let at = |c: ExprId| vals[c.index()];
        vals[i] = match *n {
            Node::Const(bits) => {
                let v = f64::from_bits(bits);
                (Complex64::new(v, 0.0), EPS * v.abs())
            }
            Node::Sym(s) => {
                let v = pr.value(s);
                (v, EPS * v.norm())
            }
            Node::Add(a, b) => {
                let ((va, ea), (vb, eb)) = (at(a), at(b));
                let v = va + vb;
                (v, ea + eb + EPS * v.norm())
            }
            Node::Mul(a, b) => {
                let ((va, ea), (vb, eb)) = (at(a), at(b));
                let v = va * vb;
                (v, va.norm() * eb + vb.norm() * ea + EPS * v.norm())
            }
            Node::Div(a, b) => {
                let ((va, ea), (vb, eb)) = (at(a), at(b));
                let v = va / vb;
                (v, (ea + v.norm() * eb) / vb.norm() + EPS * v.norm())
            }
            Node::Neg(a) => {
                let (va, ea) = at(a);
                (-va, ea)
            }
            Node::Powi(a, k) => {
                let (va, ea) = at(a);
                let v = va.powi(k);
                let d = (k as f64).abs() * va.powi(k - 1).norm();
                (v, d * ea + EPS * v.norm())
            }
            Node::Func(f, a) => {
                let (va, ea) = at(a);
                let v = f.eval(va);
                let d = f.rounding_gain(va, v);
                (v, d * ea + Func::ROUNDING_ULPS * EPS * v.norm())
            }
            Node::Atan2(y, x) => {
                let ((vy, ey), (vx, ex)) = (at(y), at(x));
                let v = vy.atan2(vx);
                let r2 = (vx * vx + vy * vy).norm();
                (
                    v,
                    (vx.norm() * ey + vy.norm() * ex) / r2 + 2.0 * EPS * v.norm(),
                )
            }
        };
    }
    roots.iter().map(|r| vals[r.index()]).collect()
}
