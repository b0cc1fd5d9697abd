//! Frames (rigid placements): their construction (`translate`, `rot`, `frame`),
//! composition with `*`, the maps `F.point(v)` / `F.apply(v)`, `inverse(F)` and the parts
//! `F.origin`, `F.angle`, `F.rotation`, `F.x_axis`, `F.y_axis`, `F.z_axis`.
//!
//! A planar frame keeps its angle (so a planar body placed by a frame has its `angle`,
//! and composition adds angles); a spatial frame keeps its rotation matrix.

use proc_macro2::Span;

use super::value::{dot, Value};
use crate::error::{Error, Result};
use crate::expr::{Arena, ExprId};

/// The 2×2 rotation by `angle`, row-major.
pub(super) fn rotation2(a: &mut Arena, angle: ExprId) -> [[ExprId; 2]; 2] {
    let (c, s) = (a.cos(angle), a.sin(angle));
    let ns = a.neg(s);
    [[c, ns], [s, c]]
}

/// `m v` for a 2×2 or 3×3 row-major matrix given as rows.
fn mat_vec(a: &mut Arena, rows: &[Vec<ExprId>], v: &[ExprId]) -> Vec<ExprId> {
    rows.iter().map(|r| dot(a, r, v)).collect()
}

/// `m n` for 3×3 matrices.
fn mm3(a: &mut Arena, m: &[[ExprId; 3]; 3], n: &[[ExprId; 3]; 3]) -> [[ExprId; 3]; 3] {
    let mut out = *n;
    for (i, row) in out.iter_mut().enumerate() {
        for (j, e) in row.iter_mut().enumerate() {
            *e = dot(a, &m[i], &[n[0][j], n[1][j], n[2][j]]);
        }
    }
    out
}

/// `m v` for a 3×3 matrix.
fn mv3(a: &mut Arena, m: &[[ExprId; 3]; 3], v: &[ExprId; 3]) -> [ExprId; 3] {
    [dot(a, &m[0], v), dot(a, &m[1], v), dot(a, &m[2], v)]
}

/// The rotation of a frame as rows (2×2 or 3×3), `None` for other values.
pub(super) fn rotation_rows(a: &mut Arena, f: &Value) -> Option<Vec<Vec<ExprId>>> {
    match f {
        Value::Frame2 { angle, .. } => {
            Some(rotation2(a, *angle).iter().map(|r| r.to_vec()).collect())
        }
        Value::Frame3 { rot, .. } => Some(rot.iter().map(|r| r.to_vec()).collect()),
        _ => None,
    }
}

/// A frame's origin.
pub(super) fn origin(f: &Value) -> Option<Vec<ExprId>> {
    match f {
        Value::Frame2 { origin, .. } => Some(origin.to_vec()),
        Value::Frame3 { origin, .. } => Some(origin.to_vec()),
        _ => None,
    }
}

/// The rotation matrix of the quaternion `w + x i + y j + z k` (orthogonal when it is a
/// unit quaternion): `I + 2 w [v]× + 2 [v]×²` with `v = (x, y, z)`, written out.
pub(crate) fn quaternion(a: &mut Arena, q: [ExprId; 4]) -> [[ExprId; 3]; 3] {
    let [w, x, y, z] = q;
    let two = a.constant(2.0);
    let one = a.constant(1.0);
    let p = |a: &mut Arena, u: ExprId, v: ExprId| {
        let m = a.mul(u, v);
        a.mul(two, m)
    };
    let (xx, yy, zz) = (p(a, x, x), p(a, y, y), p(a, z, z));
    let (xy, xz, yz) = (p(a, x, y), p(a, x, z), p(a, y, z));
    let (wx, wy, wz) = (p(a, w, x), p(a, w, y), p(a, w, z));
    let diag = |a: &mut Arena, u: ExprId, v: ExprId| {
        let s = a.add(u, v);
        a.sub(one, s)
    };
    [
        [diag(a, yy, zz), a.sub(xy, wz), a.add(xz, wy)],
        [a.add(xy, wz), diag(a, xx, zz), a.sub(yz, wx)],
        [a.sub(xz, wy), a.add(yz, wx), diag(a, xx, yy)],
    ]
}

/// `translate(v)`: the frame at `v` with the world's axes.
pub(super) fn translate(a: &mut Arena, v: &Value, span: Span) -> Result<Value> {
    let (zero, one) = (a.constant(0.0), a.constant(1.0));
    match v {
        Value::Vec2(o) => Ok(Value::Frame2 {
            angle: zero,
            origin: *o,
        }),
        Value::Vec3(o) => Ok(Value::Frame3 {
            rot: [[one, zero, zero], [zero, one, zero], [zero, zero, one]],
            origin: *o,
        }),
        other => Err(Error::new(
            span,
            format!("`translate` takes a 2-vector (a planar frame) or a 3-vector (a spatial frame), found {}", other.kind()),
        )),
    }
}

/// `rot(θ)`: the planar frame at the origin turned by `θ`.
pub(super) fn rot(a: &mut Arena, angle: ExprId) -> Value {
    let zero = a.constant(0.0);
    Value::Frame2 {
        angle,
        origin: [zero, zero],
    }
}

/// `frame(origin, orientation)`: a planar frame from a 2-vector and an angle, a spatial one
/// from a 3-vector and a 3×3 rotation.
pub(super) fn frame(origin: &Value, orientation: &Value, span: Span) -> Result<Value> {
    match (origin, orientation) {
        (Value::Vec2(o), Value::Scalar(angle)) => Ok(Value::Frame2 {
            angle: *angle,
            origin: *o,
        }),
        (Value::Vec3(o), Value::Mat3(r)) => Ok(Value::Frame3 { rot: *r, origin: *o }),
        _ => Err(Error::new(
            span,
            format!(
                "`frame(origin, orientation)` takes a 2-vector and an angle (planar) or a 3-vector and a 3×3 rotation (spatial), found {} and {}",
                origin.kind(),
                orientation.kind()
            ),
        )),
    }
}

/// `x * y` where at least one side is a frame: composition (`A * B` places `B`'s frame in
/// `A`'s), or a spatial frame turned by a 3×3 rotation on either side.
pub(super) fn compose(a: &mut Arena, x: &Value, y: &Value, span: Span) -> Result<Value> {
    match (x, y) {
        (
            Value::Frame2 {
                angle: t1,
                origin: o1,
            },
            Value::Frame2 {
                angle: t2,
                origin: o2,
            },
        ) => {
            let r = rotation2(a, *t1);
            let moved = mat_vec(a, &[r[0].to_vec(), r[1].to_vec()], o2);
            Ok(Value::Frame2 {
                angle: a.add(*t1, *t2),
                origin: [a.add(o1[0], moved[0]), a.add(o1[1], moved[1])],
            })
        }
        (Value::Frame3 { rot: r1, origin: o1 }, Value::Frame3 { rot: r2, origin: o2 }) => {
            let m = mv3(a, r1, o2);
            Ok(Value::Frame3 {
                rot: mm3(a, r1, r2),
                origin: [a.add(o1[0], m[0]), a.add(o1[1], m[1]), a.add(o1[2], m[2])],
            })
        }
        (Value::Frame3 { rot, origin }, Value::Mat3(m)) => Ok(Value::Frame3 {
            rot: mm3(a, rot, m),
            origin: *origin,
        }),
        (Value::Mat3(m), Value::Frame3 { rot, origin }) => Ok(Value::Frame3 {
            rot: mm3(a, m, rot),
            origin: mv3(a, m, origin),
        }),
        (f, Value::Vec2(_) | Value::Vec3(_)) if f.is_frame() => Err(Error::new(
            span,
            format!("cannot multiply {} by a vector: write `F.point(v)` for a point given in the frame, `F.apply(v)` for a direction", f.kind()),
        )),
        (Value::Frame2 { .. }, Value::Mat3(_)) | (Value::Mat3(_), Value::Frame2 { .. }) => {
            Err(Error::new(
                span,
                "a planar frame turns by `rot(θ)`; `rot_x`, `rot_y` and `rot_z` are 3×3 rotations for spatial frames",
            ))
        }
        _ => Err(Error::new(
            span,
            format!(
                "cannot multiply {} by {}: frames compose with frames of the same dimension (and a spatial frame with a 3×3 rotation)",
                x.kind(),
                y.kind()
            ),
        )),
    }
}

/// `F.apply(v)` (`R v`, a direction) or, with `point`, `F.point(v)` (`R v + origin`).
pub(super) fn map(a: &mut Arena, f: &Value, v: &Value, point: bool, span: Span) -> Result<Value> {
    let what = if point { "point" } else { "apply" };
    let (Some(r), Some(o)) = (rotation_rows(a, f), origin(f)) else {
        return Err(Error::new(
            span,
            format!(
                "`{what}` is a method of frames (`F.{what}(v)`), found {}",
                f.kind()
            ),
        ));
    };
    let comps = match v.components() {
        Some(c) if c.len() == o.len() => c,
        _ => {
            return Err(Error::new(
                span,
                format!(
                    "`F.{what}(v)` of {} takes a {}-vector, found {}",
                    f.kind(),
                    o.len(),
                    v.kind()
                ),
            ))
        }
    };
    let mut out = mat_vec(a, &r, &comps);
    if point {
        for (x, &oi) in out.iter_mut().zip(&o) {
            *x = a.add(oi, *x);
        }
    }
    Ok(Value::from_vec(&out))
}

/// `inverse(F)`: the frame mapping world points into `F`'s coordinates.
pub(super) fn inverse(a: &mut Arena, f: &Value, span: Span) -> Result<Value> {
    match f {
        Value::Frame2 { angle, origin } => {
            let r = rotation2(a, *angle);
            let rt = [vec![r[0][0], r[1][0]], vec![r[0][1], r[1][1]]];
            let back = mat_vec(a, &rt, origin);
            Ok(Value::Frame2 {
                angle: a.neg(*angle),
                origin: [a.neg(back[0]), a.neg(back[1])],
            })
        }
        Value::Frame3 { rot, origin } => {
            let rt: Vec<Vec<ExprId>> = (0..3)
                .map(|j| (0..3).map(|i| rot[i][j]).collect())
                .collect();
            let back = mat_vec(a, &rt, origin);
            let t = |i: usize, j: usize| rt[i][j];
            Ok(Value::Frame3 {
                rot: [
                    [t(0, 0), t(0, 1), t(0, 2)],
                    [t(1, 0), t(1, 1), t(1, 2)],
                    [t(2, 0), t(2, 1), t(2, 2)],
                ],
                origin: [a.neg(back[0]), a.neg(back[1]), a.neg(back[2])],
            })
        }
        other => Err(Error::new(
            span,
            format!("`inverse` takes a frame, found {}", other.kind()),
        )),
    }
}

/// A frame's axis `k` (0 = x, 1 = y, 2 = z) in world coordinates.
pub(super) fn axis(a: &mut Arena, f: &Value, k: usize) -> Option<Vec<ExprId>> {
    let r = rotation_rows(a, f)?;
    r.iter().map(|row| row.get(k).copied()).collect()
}

/// The part `F.NAME` of a frame (`origin`, `angle`, `rotation`, `x_axis`, `y_axis`,
/// `z_axis`), or an error naming the parts there are.
pub(super) fn part(a: &mut Arena, f: &Value, name: &str, span: Span) -> Result<Value> {
    let planar = matches!(f, Value::Frame2 { .. });
    let parts = if planar {
        "`.origin`, `.angle`, `.x_axis` and `.y_axis`"
    } else {
        "`.origin`, `.rotation`, `.x_axis`, `.y_axis` and `.z_axis`"
    };
    let found = match (name, f) {
        ("origin", _) => origin(f).map(|o| Value::from_vec(&o)),
        ("angle", Value::Frame2 { angle, .. }) => Some(Value::Scalar(*angle)),
        ("rotation", Value::Frame3 { rot, .. }) => Some(Value::Mat3(*rot)),
        ("x_axis", _) => axis(a, f, 0).map(|v| Value::from_vec(&v)),
        ("y_axis", _) => axis(a, f, 1).map(|v| Value::from_vec(&v)),
        ("z_axis", _) if !planar => axis(a, f, 2).map(|v| Value::from_vec(&v)),
        _ => None,
    };
    found.ok_or_else(|| {
        Error::new(
            span,
            format!("{} has no part `.{name}`: it has {parts}", f.kind()),
        )
    })
}
