//! The functions of the language (`sin`, `vec2`, `dot`, `rot_x`, `der`, …): one
//! [`Builtin`] per function with its name and arity, for the lowering of calls
//! (`call.rs`), the "unknown function … did you mean" suggestion and the list of supported
//! functions in that message. A new built-in function is a variant here and an arm in
//! `call.rs`.

use crate::expr::Func;

/// A function of the language: its name, arity and meaning in one place, for the
/// lowering of calls, the "unknown function … did you mean" suggestion and the list of
/// supported functions in that message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Builtin {
    /// An elementary function of one scalar (`sin`, `sqrt`, …): a [`Func`] node.
    Func(Func),
    /// `atan2(y, x)`.
    Atan2,
    /// `powi(x, n)`, `n` an integer literal.
    Powi,
    /// `vec2(a, b)`.
    Vec2,
    /// `vec3(a, b, c)`.
    Vec3,
    /// `dot(u, v)` of two vectors of one size.
    Dot,
    /// `cross(u, v)`: a 3-vector, or the scalar z component for 2-vectors.
    Cross,
    /// `norm(v)`, the Euclidean length.
    Norm,
    /// `norm_squared(v)`.
    NormSquared,
    /// `rotate2d(v, θ)`: a 2-vector rotated by `θ`.
    Rotate2d,
    /// `rot_x(θ)`: the 3×3 rotation about x.
    RotX,
    /// `rot_y(θ)`: the 3×3 rotation about y.
    RotY,
    /// `rot_z(θ)`: the 3×3 rotation about z.
    RotZ,
    /// `rot_quat(w, x, y, z)`: the 3×3 rotation of the unit quaternion `w + x i + y j + z k`
    /// (the caller constrains `w² + x² + y² + z² = 1`).
    RotQuat,
    /// `rpy(r, p, y)`: URDF's roll–pitch–yaw rotation `Rz(y) Ry(p) Rx(r)`.
    Rpy,
    /// `quat(w, x, y, z)`: the rotation of the quaternion, normalised (an error for the
    /// constant zero quaternion).
    Quat,
    /// `axis_angle(axis, θ)`: the rotation by `θ` about a 3-vector axis (normalised).
    AxisAngle,
    /// `mat3(row0, row1, row2)` (three 3-vectors) or `mat3(a00, a01, …, a22)` (nine
    /// scalars, row by row): a 3×3 matrix (an inertia tensor, a rotation).
    Mat3,
    /// `translate(v)`: the frame at `v` (2- or 3-vector) with the world's axes.
    Translate,
    /// `rot(θ)`: the planar frame at the origin turned by `θ`.
    Rot,
    /// `frame(origin, orientation)`: a planar frame (2-vector, angle) or a spatial one
    /// (3-vector, 3×3 rotation).
    Frame,
    /// `F.point(v)`: the point `v` given in frame `F`, in world coordinates.
    Point,
    /// `F.apply(v)`: the direction `v` given in frame `F`, in world coordinates.
    Apply,
    /// `inverse(F)`: the inverse placement.
    Inverse,
    /// `der(e)`: the total time derivative of `e` (`der(q)`: the velocity of coordinate
    /// `q`; in forces and velocity constraints only).
    Der,
    /// `velocity(F, p)`: the velocity of the point of frame `F` at `p` (in forces and
    /// velocity constraints only).
    Velocity,
}

impl Builtin {
    /// Every function of the language, in the order error messages list them.
    pub(super) const ALL: [Builtin; 35] = [
        Builtin::Func(Func::Sin),
        Builtin::Func(Func::Cos),
        Builtin::Func(Func::Tan),
        Builtin::Func(Func::Asin),
        Builtin::Func(Func::Acos),
        Builtin::Func(Func::Atan),
        Builtin::Atan2,
        Builtin::Func(Func::Sqrt),
        Builtin::Func(Func::Exp),
        Builtin::Func(Func::Ln),
        Builtin::Func(Func::Abs),
        Builtin::Powi,
        Builtin::Vec2,
        Builtin::Vec3,
        Builtin::Dot,
        Builtin::Cross,
        Builtin::Norm,
        Builtin::NormSquared,
        Builtin::Rotate2d,
        Builtin::RotX,
        Builtin::RotY,
        Builtin::RotZ,
        Builtin::RotQuat,
        Builtin::Rpy,
        Builtin::Quat,
        Builtin::AxisAngle,
        Builtin::Mat3,
        Builtin::Translate,
        Builtin::Rot,
        Builtin::Frame,
        Builtin::Point,
        Builtin::Apply,
        Builtin::Inverse,
        Builtin::Der,
        Builtin::Velocity,
    ];

    /// The name a call uses.
    pub(super) fn name(self) -> &'static str {
        match self {
            // Every `Func` in `ALL` has a source name (checked by a test).
            Builtin::Func(f) => f.source_name().unwrap_or(f.name()),
            Builtin::Atan2 => "atan2",
            Builtin::Powi => "powi",
            Builtin::Vec2 => "vec2",
            Builtin::Vec3 => "vec3",
            Builtin::Dot => "dot",
            Builtin::Cross => "cross",
            Builtin::Norm => "norm",
            Builtin::NormSquared => "norm_squared",
            Builtin::Rotate2d => "rotate2d",
            Builtin::RotX => "rot_x",
            Builtin::RotY => "rot_y",
            Builtin::RotZ => "rot_z",
            Builtin::RotQuat => "rot_quat",
            Builtin::Rpy => "rpy",
            Builtin::Quat => "quat",
            Builtin::AxisAngle => "axis_angle",
            Builtin::Mat3 => "mat3",
            Builtin::Translate => "translate",
            Builtin::Rot => "rot",
            Builtin::Frame => "frame",
            Builtin::Point => "point",
            Builtin::Apply => "apply",
            Builtin::Inverse => "inverse",
            Builtin::Der => "der",
            Builtin::Velocity => "velocity",
        }
    }

    /// The number of arguments (`mat3` also takes nine, see [`Builtin::Mat3`]).
    pub(super) fn arity(self) -> usize {
        match self {
            Builtin::Func(_) => Func::ARITY,
            Builtin::Norm
            | Builtin::NormSquared
            | Builtin::RotX
            | Builtin::RotY
            | Builtin::RotZ
            | Builtin::Translate
            | Builtin::Rot
            | Builtin::Inverse
            | Builtin::Der => 1,
            Builtin::Atan2
            | Builtin::Powi
            | Builtin::Vec2
            | Builtin::Dot
            | Builtin::Cross
            | Builtin::Rotate2d
            | Builtin::Frame
            | Builtin::Point
            | Builtin::Apply
            | Builtin::Velocity
            | Builtin::AxisAngle => 2,
            Builtin::Vec3 | Builtin::Mat3 | Builtin::Rpy => 3,
            Builtin::RotQuat | Builtin::Quat => 4,
        }
    }

    /// The function a call names, if any.
    pub(super) fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// The names of every function, in [`Builtin::ALL`] order, comma-separated (for errors).
pub(super) fn function_list() -> String {
    Builtin::ALL
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Largest `|n|` accepted in `x.powi(n)`: `2^1024` overflows `f64`, so larger exponents
/// only make sense for bases in (1/2, 2); products of powers (`x^a · x^b`) may exceed it,
/// with checked arithmetic.
pub(super) const MAX_POWI: i32 = 1024;

#[cfg(test)]
mod tests {
    use super::{function_list, Builtin};
    use crate::expr::Func;

    /// Every elementary function with a language name is a builtin (and only those), and
    /// names are unique, so a lookup by name finds the one meant.
    #[test]
    fn builtins_cover_the_named_functions_once() {
        for f in Func::ALL {
            let found = Builtin::ALL.contains(&Builtin::Func(f));
            assert_eq!(found, f.source_name().is_some(), "{f:?}");
        }
        for b in Builtin::ALL {
            assert_eq!(Builtin::from_name(b.name()), Some(b), "{}", b.name());
        }
        assert_eq!(Builtin::from_name("signum"), None);
        assert_eq!(Builtin::from_name("vec3").map(Builtin::arity), Some(3));
        assert_eq!(Builtin::from_name("atan2").map(Builtin::arity), Some(2));
        assert_eq!(
            function_list(),
            "sin, cos, tan, asin, acos, atan, atan2, sqrt, exp, ln, abs, powi, vec2, vec3, dot, \
             cross, norm, norm_squared, rotate2d, rot_x, rot_y, rot_z, rot_quat, rpy, quat, \
             axis_angle, mat3, translate, \
             rot, frame, point, apply, inverse, der, velocity"
        );
    }
}
