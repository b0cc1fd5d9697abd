//! Lowering of calls: `sin(x)` and `x.sin()`, `atan2`, `powi`, the vector and rotation
//! functions and `der`, by [`Builtin`]; unknown names get a "did you mean" and the list
//! of supported functions.

use proc_macro2::Span;
use syn::{Expr, Ident, Lit, UnOp};

use super::builtin::{function_list, Builtin, MAX_POWI};
use super::frame;
use super::lower::Lowerer;
use super::rotation;
use super::value::{self, Value};
use crate::error::joined;
use crate::error::{nearest, Error, Result};
use crate::expr::{Arena, ExprId, Sym};

impl Lowerer {
    /// Lowers the call of `name` with `args` (a method call's receiver first).
    /// `at`: the first and the last token of the call.
    pub(super) fn call(&mut self, name: &Ident, args: &[&Expr], at: (Span, Span)) -> Result<Value> {
        let v = self.call_value(name, args, at.0.join(at.1).unwrap_or(at.0))?;
        self.finite(v, at)
    }

    /// [`Self::call`] before the finiteness check: resolves the function, checks the arity.
    fn call_value(&mut self, name: &Ident, args: &[&Expr], span: Span) -> Result<Value> {
        let s = name.to_string();
        let Some(builtin) = Builtin::from_name(&s) else {
            let hint = match nearest(&s, Builtin::ALL.iter().map(|b| b.name())) {
                Some(n) => format!("did you mean `{n}`? "),
                None => String::new(),
            };
            return Err(Error::new(
                name.span(),
                format!(
                    "unknown function `{s}`; {hint}supported functions: {}",
                    function_list()
                ),
            ));
        };
        let arity = builtin.arity();
        if builtin == Builtin::Mat3 && args.len() == 9 {
            return self.mat3_entries(args);
        }
        if args.len() != arity {
            return Err(Error::new(
                span,
                format!(
                    "`{s}` takes {arity} argument{}, found {}",
                    if arity == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        match builtin {
            Builtin::Der => self.der(args[0]),
            Builtin::Velocity => self.velocity(args, span),
            Builtin::Powi => {
                let n = match integer_literal(args[1]) {
                    Some(n) if n.unsigned_abs() <= MAX_POWI as u128 => n as i32,
                    Some(n) => return Err(Error::spanned(
                        &args[1],
                        format!("the exponent of `powi` is {n}, beyond the supported bound |n| <= {MAX_POWI} (any base with |x| >= 2 overflows f64 at 2^{MAX_POWI}; write `exp(n * ln(x))` for larger powers)"),
                    )),
                    None => return Err(Error::spanned(
                        &args[1],
                        "the exponent of `powi` must be an integer literal, like `2` or `-1`",
                    )),
                };
                let x = self.expr(args[0])?.scalar(joined(args[0]))?;
                Ok(Value::Scalar(self.arena.powi(x, n)))
            }
            _ => self.call_eager(builtin, name, args, span),
        }
    }

    /// A call whose arguments are all lowered as expressions first.
    fn call_eager(
        &mut self,
        builtin: Builtin,
        name: &Ident,
        args: &[&Expr],
        span: Span,
    ) -> Result<Value> {
        let s = builtin.name();
        let vals: Vec<Value> = args.iter().map(|e| self.expr(e)).collect::<Result<_>>()?;
        let a = &mut self.arena;
        let scalar = |i: usize| vals[i].scalar(joined(args[i]));
        match builtin {
            Builtin::Func(f) => {
                let x = scalar(0)?;
                Ok(Value::Scalar(a.func(f, x)))
            }
            Builtin::Atan2 => {
                let (y, x) = (scalar(0)?, scalar(1)?);
                Ok(Value::Scalar(a.atan2(y, x)))
            }
            Builtin::Vec2 => Ok(Value::Vec2([scalar(0)?, scalar(1)?])),
            Builtin::Vec3 => Ok(Value::Vec3([scalar(0)?, scalar(1)?, scalar(2)?])),
            Builtin::Dot => {
                let (x, y) = (
                    vals[0].vector(joined(args[0]))?,
                    vals[1].vector(joined(args[1]))?,
                );
                if x.len() != y.len() {
                    return Err(Error::new(
                        span,
                        format!(
                            "`dot` of {} and {}: both must have the same size",
                            vals[0].kind(),
                            vals[1].kind()
                        ),
                    ));
                }
                Ok(Value::Scalar(value::dot(a, &x, &y)))
            }
            Builtin::Cross => cross(a, &vals[0], &vals[1], span),
            Builtin::Norm | Builtin::NormSquared => {
                let x = vals[0].vector(joined(args[0]))?;
                let n2 = value::dot(a, &x, &x);
                Ok(Value::Scalar(if builtin == Builtin::Norm {
                    a.sqrt(n2)
                } else {
                    n2
                }))
            }
            Builtin::Rotate2d => {
                let Value::Vec2(v) = &vals[0] else {
                    return Err(Error::new(
                        joined(args[0]),
                        format!("`rotate2d` rotates a 2-vector, found {}", vals[0].kind()),
                    ));
                };
                Ok(Value::Vec2(rotate2d(a, v, scalar(1)?)))
            }
            Builtin::RotX | Builtin::RotY | Builtin::RotZ => {
                let th = scalar(0)?;
                let axis = match builtin {
                    Builtin::RotX => 0,
                    Builtin::RotY => 1,
                    _ => 2,
                };
                Ok(Value::Mat3(value::rotation(a, axis, th)))
            }
            Builtin::Mat3 => {
                let mut m = [[a.constant(0.0); 3]; 3];
                for (i, row) in m.iter_mut().enumerate() {
                    match &vals[i] {
                        Value::Vec3(r) => *row = *r,
                        other => {
                            return Err(Error::new(
                                joined(args[i]),
                                format!("`mat3(row0, row1, row2)` takes three 3-vectors (or nine scalars, row by row), found {}", other.kind()),
                            ))
                        }
                    }
                }
                Ok(Value::Mat3(m))
            }
            Builtin::RotQuat => {
                let (w, x, y, z) = (scalar(0)?, scalar(1)?, scalar(2)?, scalar(3)?);
                Ok(Value::Mat3(frame::quaternion(a, [w, x, y, z])))
            }
            Builtin::Rpy => {
                let (r, p, y) = (scalar(0)?, scalar(1)?, scalar(2)?);
                Ok(Value::Mat3(rotation::rpy(a, r, p, y)))
            }
            Builtin::Quat => {
                let q = [scalar(0)?, scalar(1)?, scalar(2)?, scalar(3)?];
                Ok(Value::Mat3(rotation::quat(a, q, span)?))
            }
            Builtin::AxisAngle => {
                let th = scalar(1)?;
                Ok(Value::Mat3(rotation::axis_angle(
                    a,
                    &vals[0],
                    th,
                    joined(args[0]),
                )?))
            }
            Builtin::Translate => frame::translate(a, &vals[0], joined(args[0])),
            Builtin::Rot => Ok(frame::rot(a, scalar(0)?)),
            Builtin::Frame => frame::frame(&vals[0], &vals[1], span),
            Builtin::Point | Builtin::Apply => {
                frame::map(a, &vals[0], &vals[1], builtin == Builtin::Point, span)
            }
            Builtin::Inverse => frame::inverse(a, &vals[0], joined(args[0])),
            // Lowered by `call_value` before their arguments are.
            Builtin::Der | Builtin::Powi | Builtin::Velocity => {
                Err(Error::new(name.span(), format!("unknown function `{s}`")))
            }
        }
    }

    /// `mat3(a00, a01, …, a22)`: nine scalars, row by row.
    fn mat3_entries(&mut self, args: &[&Expr]) -> Result<Value> {
        let mut e = Vec::with_capacity(9);
        for arg in args {
            e.push(self.expr(arg)?.scalar(joined(arg))?);
        }
        Ok(Value::Mat3([
            [e[0], e[1], e[2]],
            [e[3], e[4], e[5]],
            [e[6], e[7], e[8]],
        ]))
    }

    /// `der(e)`: the total time derivative of a scalar or vector `e` of the coordinates,
    /// parameters and time (`der(q)` is the velocity of coordinate `q`), where velocities
    /// are allowed.
    fn der(&mut self, arg: &Expr) -> Result<Value> {
        if !self.allow_velocity {
            return Err(Error::spanned(
                &arg,
                "`der(...)` (a velocity) is only allowed in forces and velocity constraints: constraints, positions and orientations depend on coordinates and time only",
            ));
        }
        let v = self.expr(arg)?;
        let comps = v.components().ok_or_else(|| {
            Error::spanned(
                arg,
                format!("`der` takes a scalar or a vector, found {}", v.kind()),
            )
        })?;
        let moves = self
            .arena
            .symbols(&comps)
            .iter()
            .any(|s| matches!(s, Sym::Coord(_) | Sym::Time | Sym::Vel(_)));
        if !moves {
            return Err(Error::spanned(
                arg,
                "`der` of this is zero: it depends on no coordinate and not on time (`der(theta)` is the velocity of the coordinate `theta`)",
            ));
        }
        let mut out = Vec::with_capacity(comps.len());
        for c in comps {
            out.push(self.time_derivative(c, arg)?);
        }
        Ok(Value::from_vec(&out))
    }

    /// `d e/dt = Σ ∂e/∂q_k q̇_k + ∂e/∂t` of a position-level expression (an error at `at`
    /// when `e` holds velocities already: accelerations are not part of the language).
    pub(super) fn time_derivative(&mut self, e: ExprId, at: &Expr) -> Result<ExprId> {
        if self
            .arena
            .symbols(&[e])
            .iter()
            .any(|s| matches!(s, Sym::Vel(_)))
        {
            return Err(Error::spanned(
                at,
                "`der` of an expression holding velocities would be an acceleration: the language has velocities only",
            ));
        }
        Ok(self.arena.tangent_with(e, &mut |a, s| match s {
            Sym::Coord(k) => Some(a.sym(Sym::Vel(k))),
            Sym::Time => Some(a.constant(1.0)),
            _ => None,
        }))
    }

    /// `velocity(F, p)`: the velocity of the point of frame `F` that is at the world point
    /// `p` now (`Ṙ Rᵀ (p − o) + ȯ`): for rolling without slipping, the velocity of the wheel's
    /// material point at the contact.
    fn velocity(&mut self, args: &[&Expr], span: Span) -> Result<Value> {
        if !self.allow_velocity {
            return Err(Error::new(
                span,
                "`velocity(F, p)` is only allowed in forces and velocity constraints",
            ));
        }
        let f = self.expr(args[0])?;
        let point = self.expr(args[1])?;
        let (Some(o), Some(rows)) = (frame::origin(&f), frame::rotation_rows(&mut self.arena, &f))
        else {
            return Err(Error::spanned(
                args[0],
                format!(
                    "`velocity(F, p)` takes a frame and a point, found {}",
                    f.kind()
                ),
            ));
        };
        let p = match point.components() {
            Some(p) if p.len() == o.len() => p,
            _ => {
                return Err(Error::spanned(
                    args[1],
                    format!(
                        "the point must be a {}-vector like the frame's origin, found {}",
                        o.len(),
                        point.kind()
                    ),
                ))
            }
        };
        let n = o.len();
        let a = &mut self.arena;
        let rel: Vec<ExprId> = p.iter().zip(&o).map(|(&x, &y)| a.sub(x, y)).collect();
        // The point in the frame's coordinates, held fixed: Rᵀ (p − o).
        let local: Vec<ExprId> = (0..n)
            .map(|j| {
                let col: Vec<ExprId> = (0..n).map(|i| rows[i][j]).collect();
                value::dot(a, &col, &rel)
            })
            .collect();
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut acc = self.time_derivative(o[i], args[0])?;
            for (j, &l) in local.iter().enumerate() {
                let rd = self.time_derivative(rows[i][j], args[0])?;
                let t = self.arena.mul(rd, l);
                acc = self.arena.add(acc, t);
            }
            out.push(acc);
        }
        Ok(Value::from_vec(&out))
    }
}

/// An integer literal (possibly negated or parenthesised), at any size, for `powi`.
fn integer_literal(e: &Expr) -> Option<i128> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<u64>().ok().map(i128::from),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => integer_literal(&u.expr).map(|v| -v),
        Expr::Paren(p) => integer_literal(&p.expr),
        _ => None,
    }
}

/// `cross(x, y)`: a 3-vector for two 3-vectors, the scalar z component for two 2-vectors.
fn cross(a: &mut Arena, x: &Value, y: &Value, span: Span) -> Result<Value> {
    match (x, y) {
        (Value::Vec3(x), Value::Vec3(y)) => {
            let c = |a: &mut Arena, i: usize, j: usize| {
                let p = a.mul(x[i], y[j]);
                let q = a.mul(x[j], y[i]);
                a.sub(p, q)
            };
            Ok(Value::Vec3([c(a, 1, 2), c(a, 2, 0), c(a, 0, 1)]))
        }
        (Value::Vec2(x), Value::Vec2(y)) => {
            let p = a.mul(x[0], y[1]);
            let q = a.mul(x[1], y[0]);
            Ok(Value::Scalar(a.sub(p, q)))
        }
        _ => Err(Error::new(
            span,
            format!("`cross` takes two 3-vectors (or two 2-vectors, giving the scalar z component), found {} and {}", x.kind(), y.kind()),
        )),
    }
}

/// The 2-vector `v` rotated by `th`.
fn rotate2d(
    a: &mut Arena,
    v: &[crate::expr::ExprId; 2],
    th: crate::expr::ExprId,
) -> [crate::expr::ExprId; 2] {
    let (c, sn) = (a.cos(th), a.sin(th));
    let xc = a.mul(v[0], c);
    let ys = a.mul(v[1], sn);
    let xs = a.mul(v[0], sn);
    let yc = a.mul(v[1], c);
    [a.sub(xc, ys), a.add(xs, yc)]
}
