//! Values of the language: scalars, 2- and 3-vectors, 3×3 matrices and planar and
//! spatial frames, each component an expression of the DAG; the vector operations on them
//! (the frame operations are in `frame.rs`).

use proc_macro2::Span;

use crate::error::{Error, Result};
use crate::expr::{Arena, ExprId};

/// A value of the language.
#[derive(Clone, Debug)]
pub enum Value {
    /// A scalar.
    Scalar(ExprId),
    /// A 2-vector.
    Vec2([ExprId; 2]),
    /// A 3-vector.
    Vec3([ExprId; 3]),
    /// A 3×3 matrix (row-major), from `rot_x`/`rot_y`/`rot_z`, `mat3` and their products.
    Mat3([[ExprId; 3]; 3]),
    /// A planar frame (a rigid placement in the plane): its angle and its origin, both in
    /// world coordinates; it maps a point `v` given in the frame to `R(angle) v + origin`.
    Frame2 {
        /// Angle of the frame's x axis from the world's x axis.
        angle: ExprId,
        /// The frame's origin.
        origin: [ExprId; 2],
    },
    /// A spatial frame: its rotation (row-major; the columns are the frame's axes in world
    /// coordinates) and its origin; it maps a point `v` given in the frame to `R v + origin`.
    Frame3 {
        /// The rotation from frame to world coordinates.
        rot: [[ExprId; 3]; 3],
        /// The frame's origin.
        origin: [ExprId; 3],
    },
}

impl Value {
    /// "a scalar", "a 2-vector", ... for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Scalar(_) => "a scalar",
            Value::Vec2(_) => "a 2-vector",
            Value::Vec3(_) => "a 3-vector",
            Value::Mat3(_) => "a 3×3 matrix",
            Value::Frame2 { .. } => "a planar frame",
            Value::Frame3 { .. } => "a spatial frame",
        }
    }

    /// The components of a scalar or vector (`None` for a matrix or a frame).
    pub fn components(&self) -> Option<Vec<ExprId>> {
        match self {
            Value::Scalar(s) => Some(vec![*s]),
            Value::Vec2(v) => Some(v.to_vec()),
            Value::Vec3(v) => Some(v.to_vec()),
            Value::Mat3(_) | Value::Frame2 { .. } | Value::Frame3 { .. } => None,
        }
    }

    /// All expressions in the value (a frame: its rotation or angle, then its origin).
    pub fn exprs(&self) -> Vec<ExprId> {
        match self {
            Value::Mat3(m) => m.iter().flatten().copied().collect(),
            Value::Frame2 { angle, origin } => vec![*angle, origin[0], origin[1]],
            Value::Frame3 { rot, origin } => {
                let mut v: Vec<ExprId> = rot.iter().flatten().copied().collect();
                v.extend(origin);
                v
            }
            v => v.components().unwrap_or_default(),
        }
    }

    /// The same shape with the expressions `e` in [`Self::exprs`] order (as many).
    pub fn with_exprs(&self, e: &[ExprId]) -> Value {
        let m3 = |e: &[ExprId]| [[e[0], e[1], e[2]], [e[3], e[4], e[5]], [e[6], e[7], e[8]]];
        match self {
            Value::Mat3(_) => Value::Mat3(m3(e)),
            Value::Frame2 { .. } => Value::Frame2 {
                angle: e[0],
                origin: [e[1], e[2]],
            },
            Value::Frame3 { .. } => Value::Frame3 {
                rot: m3(e),
                origin: [e[9], e[10], e[11]],
            },
            _ => Value::from_vec(e),
        }
    }

    /// Whether the value is a frame.
    pub fn is_frame(&self) -> bool {
        matches!(self, Value::Frame2 { .. } | Value::Frame3 { .. })
    }

    /// The scalar, or an error at `span`.
    pub fn scalar(&self, span: Span) -> Result<ExprId> {
        match self {
            Value::Scalar(s) => Ok(*s),
            other => Err(Error::new(
                span,
                format!("expected a scalar, found {}", other.kind()),
            )),
        }
    }

    /// A vector's components, or an error at `span`.
    pub fn vector(&self, span: Span) -> Result<Vec<ExprId>> {
        match self {
            Value::Vec2(v) => Ok(v.to_vec()),
            Value::Vec3(v) => Ok(v.to_vec()),
            other => Err(Error::new(
                span,
                format!("expected a 2- or 3-vector, found {}", other.kind()),
            )),
        }
    }

    /// Builds a vector value of 2 or 3 components.
    pub fn from_vec(v: &[ExprId]) -> Value {
        match *v {
            [x, y] => Value::Vec2([x, y]),
            [x, y, z] => Value::Vec3([x, y, z]),
            [s] => Value::Scalar(s),
            _ => Value::Scalar(v[0]),
        }
    }
}

/// Applies a componentwise binary operation to two values of the same shape.
pub fn zip(
    a: &mut Arena,
    x: &Value,
    y: &Value,
    span: Span,
    op: &str,
    f: fn(&mut Arena, ExprId, ExprId) -> ExprId,
) -> Result<Value> {
    if x.is_frame() || y.is_frame() {
        return Err(Error::new(
            span,
            format!(
                "cannot {op} {} and {}: frames compose with `*`; add their points (`F.origin`, `F.point(v)`) instead",
                x.kind(),
                y.kind()
            ),
        ));
    }
    Ok(match (x, y) {
        (Value::Scalar(p), Value::Scalar(q)) => Value::Scalar(f(a, *p, *q)),
        (Value::Vec2(p), Value::Vec2(q)) => Value::Vec2([f(a, p[0], q[0]), f(a, p[1], q[1])]),
        (Value::Vec3(p), Value::Vec3(q)) => {
            Value::Vec3([f(a, p[0], q[0]), f(a, p[1], q[1]), f(a, p[2], q[2])])
        }
        (Value::Mat3(p), Value::Mat3(q)) => {
            let mut m = p.to_owned();
            for i in 0..3 {
                for j in 0..3 {
                    m[i][j] = f(a, p[i][j], q[i][j]);
                }
            }
            Value::Mat3(m)
        }
        _ => {
            return Err(Error::new(
                span,
                format!(
                    "cannot {op} {} and {}: both sides must have the same shape",
                    x.kind(),
                    y.kind()
                ),
            ))
        }
    })
}

/// Multiplies every component by a scalar (a frame is returned as it is: callers reject
/// scaling a frame first, see [`Value::is_frame`]).
pub fn scale(a: &mut Arena, s: ExprId, v: &Value) -> Value {
    match v {
        Value::Frame2 { .. } | Value::Frame3 { .. } => v.clone(),
        Value::Scalar(x) => Value::Scalar(a.mul(s, *x)),
        Value::Vec2(p) => Value::Vec2([a.mul(s, p[0]), a.mul(s, p[1])]),
        Value::Vec3(p) => Value::Vec3([a.mul(s, p[0]), a.mul(s, p[1]), a.mul(s, p[2])]),
        Value::Mat3(m) => {
            let mut out = *m;
            for row in out.iter_mut() {
                for e in row.iter_mut() {
                    *e = a.mul(s, *e);
                }
            }
            Value::Mat3(out)
        }
    }
}

/// Negates every component.
pub fn negate(a: &mut Arena, v: &Value) -> Value {
    let m1 = a.constant(-1.0);
    scale(a, m1, v)
}

/// `Σ x_i y_i`.
pub fn dot(a: &mut Arena, x: &[ExprId], y: &[ExprId]) -> ExprId {
    let mut acc = a.constant(0.0);
    for (&p, &q) in x.iter().zip(y) {
        let t = a.mul(p, q);
        acc = a.add(acc, t);
    }
    acc
}

/// Matrix × vector and matrix × matrix.
pub fn mat_mul(a: &mut Arena, m: &[[ExprId; 3]; 3], v: &Value, span: Span) -> Result<Value> {
    match v {
        Value::Vec3(x) => {
            let r: Vec<ExprId> = (0..3).map(|i| dot(a, &m[i], x)).collect();
            Ok(Value::Vec3([r[0], r[1], r[2]]))
        }
        Value::Mat3(n) => {
            let mut out = *n;
            for (i, row) in out.iter_mut().enumerate() {
                for (j, e) in row.iter_mut().enumerate() {
                    let col = [n[0][j], n[1][j], n[2][j]];
                    *e = dot(a, &m[i], &col);
                }
            }
            Ok(Value::Mat3(out))
        }
        other => Err(Error::new(
            span,
            format!(
                "a 3×3 matrix multiplies a 3-vector or a 3×3 matrix, not {}",
                other.kind()
            ),
        )),
    }
}

/// The rotation matrix about axis `axis` (0 = x, 1 = y, 2 = z) by angle `th`.
pub fn rotation(a: &mut Arena, axis: usize, th: ExprId) -> [[ExprId; 3]; 3] {
    let c = a.cos(th);
    let s = a.sin(th);
    let ns = a.neg(s);
    let one = a.constant(1.0);
    let zero = a.constant(0.0);
    match axis {
        0 => [[one, zero, zero], [zero, c, ns], [zero, s, c]],
        1 => [[c, zero, s], [zero, one, zero], [ns, zero, c]],
        _ => [[c, ns, zero], [s, c, zero], [zero, zero, one]],
    }
}
