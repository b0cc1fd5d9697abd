//! Rotations from the parametrisations robot description formats use: `rpy(r, p, y)`
//! (URDF's roll–pitch–yaw, `Rz(y) Ry(p) Rx(r)`), `quat(w, x, y, z)` (normalised) and
//! `axis_angle(axis, θ)` (Rodrigues, the axis normalised): each a 3×3 rotation usable
//! wherever one is (`frame(o, R)`, `F * R`, a body's `rotation`).

use proc_macro2::Span;

use super::value::{self, Value};
use crate::error::{Error, Result};
use crate::expr::{Arena, ExprId};

/// A 3×3 matrix as rows.
type M3 = [[ExprId; 3]; 3];

/// `m n` for 3×3 matrices.
fn mm3(a: &mut Arena, m: &M3, n: &M3) -> M3 {
    let mut out = *n;
    for (i, row) in out.iter_mut().enumerate() {
        for (j, e) in row.iter_mut().enumerate() {
            *e = value::dot(a, &m[i], &[n[0][j], n[1][j], n[2][j]]);
        }
    }
    out
}

/// `rpy(r, p, y)`: `Rz(y) Ry(p) Rx(r)`, URDF's fixed-axis roll, pitch, yaw (roll about x
/// first, then pitch about the fixed y, then yaw about the fixed z).
pub(super) fn rpy(a: &mut Arena, r: ExprId, p: ExprId, y: ExprId) -> M3 {
    let rx = value::rotation(a, 0, r);
    let ry = value::rotation(a, 1, p);
    let rz = value::rotation(a, 2, y);
    let zy = mm3(a, &rz, &ry);
    mm3(a, &zy, &rx)
}

/// `1 / sqrt(n2)`, or a located error when `n2` is the constant zero (`what` names the
/// argument: "the quaternion", "the axis").
fn inverse_norm(a: &mut Arena, n2: ExprId, what: &str, span: Span) -> Result<ExprId> {
    if let Some(v) = a.as_const(n2) {
        if v == 0.0 {
            return Err(Error::new(
                span,
                format!("{what} is zero: it gives no rotation (its length is normalised away)"),
            ));
        }
        return Ok(a.constant(1.0 / v.sqrt()));
    }
    let n = a.sqrt(n2);
    let one = a.constant(1.0);
    Ok(a.div(one, n))
}

/// `quat(w, x, y, z)`: the rotation of the quaternion `w + x i + y j + z k` divided by its
/// norm (an error at `span` for the constant zero quaternion).
pub(super) fn quat(a: &mut Arena, q: [ExprId; 4], span: Span) -> Result<M3> {
    let n2 = value::dot(a, &q, &q);
    let inv = inverse_norm(a, n2, "the quaternion `quat(w, x, y, z)`", span)?;
    let u = q.map(|c| a.mul(c, inv));
    Ok(super::frame::quaternion(a, u))
}

/// `axis_angle(axis, θ)`: the rotation by `θ` about `axis` (a 3-vector, normalised):
/// `cos θ I + sin θ [k]× + (1 − cos θ) k kᵀ` (Rodrigues). A constant coordinate axis
/// (`±x`, `±y`, `±z`) gives the plain `rot_x/rot_y/rot_z` entries, without the `1 − cos θ`
/// terms that would not cancel in floating point.
pub(super) fn axis_angle(a: &mut Arena, axis: &Value, th: ExprId, span: Span) -> Result<M3> {
    let Value::Vec3(k) = axis else {
        return Err(Error::new(
            span,
            format!(
                "`axis_angle(axis, θ)` takes a 3-vector axis, found {}",
                axis.kind()
            ),
        ));
    };
    let consts: Option<Vec<f64>> = k.iter().map(|&c| a.as_const(c)).collect();
    if let Some(c) = &consts {
        let nonzero: Vec<usize> = (0..3).filter(|&i| c[i] != 0.0).collect();
        if let [i] = nonzero[..] {
            let t = if c[i] > 0.0 { th } else { a.neg(th) };
            return Ok(value::rotation(a, i, t));
        }
    }
    let n2 = value::dot(a, k, k);
    let inv = inverse_norm(a, n2, "the axis of `axis_angle(axis, θ)`", span)?;
    let u = k.map(|c| a.mul(c, inv));
    let (c, s) = (a.cos(th), a.sin(th));
    let one = a.constant(1.0);
    let v = a.sub(one, c);
    let mut m = [[c; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let ui = a.mul(v, u[i]);
            let outer = a.mul(ui, u[j]);
            m[i][j] = if i == j {
                a.add(c, outer)
            } else {
                // [k]× has −k_z at (0, 1), k_y at (0, 2), −k_x at (1, 2), antisymmetric.
                let l = 3 - i - j;
                let sign_positive = matches!((i, j), (1, 0) | (0, 2) | (2, 1));
                let sk = a.mul(s, u[l]);
                if sign_positive {
                    a.add(outer, sk)
                } else {
                    a.sub(outer, sk)
                }
            };
        }
    }
    Ok(m)
}
