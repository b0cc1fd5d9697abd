//! `joint NAME = kind(args);`: the constraint equations of a joint between two frames
//! (`revolute`, `prismatic`, `cylindrical`, `spherical`, `universal`, `planar`, `fixed`)
//! or of an anchor constraint between points (`coincident`, `distance`, `on_line`,
//! `on_plane`), in the conventions the guide's language chapter states (axes: a spatial revolute or
//! prismatic joint turns about / slides along `A`'s z axis; a planar slider slides along
//! `A`'s x axis; a universal joint turns about `A`'s x axis and `B`'s y axis).

use proc_macro2::Span;
use syn::{Expr, Ident};

use super::frame::{axis, origin};
use super::items::Parts;
use super::lower::Lowerer;
use super::scope::plain;
use super::source::source_text;
use super::value::{dot, Value};
use super::Equation;
use crate::error::joined;
use crate::error::{nearest, Error, Result};
use crate::expr::{Arena, ExprId};

/// A kind of joint: its name in the language and its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Revolute,
    Prismatic,
    Cylindrical,
    Spherical,
    Universal,
    Planar,
    Fixed,
    Coincident,
    Distance,
    OnLine,
    OnPlane,
}

impl Kind {
    const ALL: [Kind; 11] = [
        Kind::Revolute,
        Kind::Prismatic,
        Kind::Cylindrical,
        Kind::Spherical,
        Kind::Universal,
        Kind::Planar,
        Kind::Fixed,
        Kind::Coincident,
        Kind::Distance,
        Kind::OnLine,
        Kind::OnPlane,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Revolute => "revolute",
            Kind::Prismatic => "prismatic",
            Kind::Cylindrical => "cylindrical",
            Kind::Spherical => "spherical",
            Kind::Universal => "universal",
            Kind::Planar => "planar",
            Kind::Fixed => "fixed",
            Kind::Coincident => "coincident",
            Kind::Distance => "distance",
            Kind::OnLine => "on_line",
            Kind::OnPlane => "on_plane",
        }
    }

    /// How it is called, for errors.
    fn signature(self) -> &'static str {
        match self {
            Kind::Coincident => "coincident(p, q) with two points",
            Kind::Distance => "distance(p, q, length) with two points and a scalar",
            Kind::OnLine => "on_line(p, F) with a point and a frame (the line is F's x axis in the plane, its z axis in space)",
            Kind::OnPlane => "on_plane(p, F) with a 3-vector point and a spatial frame (the plane is F's xy plane)",
            Kind::Revolute => "revolute(A, B) with two frames",
            Kind::Prismatic => "prismatic(A, B) with two frames",
            Kind::Cylindrical => "cylindrical(A, B) with two spatial frames",
            Kind::Spherical => "spherical(A, B) with two spatial frames",
            Kind::Universal => "universal(A, B) with two spatial frames",
            Kind::Planar => "planar(A, B) with two spatial frames",
            Kind::Fixed => "fixed(A, B) with two frames",
        }
    }

    fn arity(self) -> usize {
        if self == Kind::Distance {
            3
        } else {
            2
        }
    }

    /// Whether the kind exists only between spatial frames.
    fn spatial_only(self) -> bool {
        matches!(
            self,
            Kind::Cylindrical | Kind::Spherical | Kind::Universal | Kind::Planar | Kind::OnPlane
        )
    }

    fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// The kinds' names, comma-separated (for errors).
fn kind_list() -> String {
    Kind::ALL.map(Kind::name).join(", ")
}

/// One scalar equation of a joint: its expression and a short description.
type Row = (ExprId, String);

impl Lowerer {
    /// `joint NAME = kind(args);`: appends the joint's equations to the constraints.
    pub(super) fn joint(&mut self, name: &Ident, value: &Expr, parts: &mut Parts) -> Result<()> {
        let shape = "a joint is `joint NAME = KIND(args);` (e.g. `joint hinge = revolute(A, B);`)";
        let Expr::Call(call) = value else {
            return Err(Error::spanned(
                value,
                format!("{shape}; kinds: {}", kind_list()),
            ));
        };
        let Some(id) = (match &*call.func {
            Expr::Path(p) => p.path.get_ident(),
            _ => None,
        }) else {
            return Err(Error::spanned(&call.func, shape));
        };
        let s = id.to_string();
        let Some(kind) = Kind::from_name(&s) else {
            let hint = match nearest(&s, Kind::ALL.iter().map(|k| k.name())) {
                Some(n) => format!("did you mean `{n}`? "),
                None => String::new(),
            };
            return Err(Error::new(
                id.span(),
                format!("unknown joint `{s}`; {hint}joints: {}", kind_list()),
            ));
        };
        let args: Vec<&Expr> = call.args.iter().collect();
        if args.len() != kind.arity() {
            return Err(Error::new(
                joined(call),
                format!(
                    "`{s}` takes {} arguments, found {}: write {}",
                    kind.arity(),
                    args.len(),
                    kind.signature()
                ),
            ));
        }
        let vals: Vec<Value> = args.iter().map(|e| self.expr(e)).collect::<Result<_>>()?;
        let rows = equations(&mut self.arena, kind, &vals, &args, joined(call))?;
        let text = format!("joint {} = {}", plain(name), source_text(value));
        for (expr, what) in rows {
            parts.constraints.push(Equation {
                expr,
                label: format!("{text} [{what}]"),
                span: joined(value),
            });
        }
        Ok(())
    }
}

/// The equations of a joint of `kind` on the lowered arguments.
fn equations(
    a: &mut Arena,
    kind: Kind,
    vals: &[Value],
    args: &[&Expr],
    span: Span,
) -> Result<Vec<Row>> {
    let wrong = |i: usize| {
        Error::new(
            joined(args[i]),
            format!(
                "argument {} of `{}` is {}: write {}",
                i + 1,
                kind.name(),
                vals[i].kind(),
                kind.signature()
            ),
        )
    };
    let xyz = ["x", "y", "z"];
    match kind {
        Kind::Coincident | Kind::Distance => {
            let p = vals[0].vector(joined(args[0])).map_err(|_| wrong(0))?;
            let q = vals[1].vector(joined(args[1])).map_err(|_| wrong(1))?;
            if p.len() != q.len() {
                return Err(Error::new(
                    span,
                    format!(
                        "`{}` joins two points of one dimension, found {} and {}",
                        kind.name(),
                        vals[0].kind(),
                        vals[1].kind()
                    ),
                ));
            }
            let d = sub(a, &p, &q);
            if kind == Kind::Coincident {
                return Ok(d
                    .into_iter()
                    .zip(xyz)
                    .map(|(e, c)| (e, c.to_string()))
                    .collect());
            }
            let l = vals[2].scalar(joined(args[2])).map_err(|_| wrong(2))?;
            let d2 = dot(a, &d, &d);
            let l2 = a.mul(l, l);
            Ok(vec![(a.sub(d2, l2), "|p − q|² = length²".into())])
        }
        Kind::OnLine | Kind::OnPlane => {
            let p = vals[0].vector(joined(args[0])).map_err(|_| wrong(0))?;
            let f = &vals[1];
            let o = origin(f).ok_or_else(|| wrong(1))?;
            if p.len() != o.len() {
                return Err(Error::new(
                    span,
                    format!(
                        "`{}`: the point is {} but the frame is {}",
                        kind.name(),
                        vals[0].kind(),
                        f.kind()
                    ),
                ));
            }
            if kind.spatial_only() && o.len() == 2 {
                return Err(Error::new(
                    span,
                    "`on_plane` is spatial: in the plane, a point on a line is `on_line(p, F)`",
                ));
            }
            let d = sub(a, &p, &o);
            let normals: &[usize] = match (kind, o.len()) {
                (Kind::OnLine, 2) => &[1],
                (Kind::OnLine, _) => &[0, 1],
                _ => &[2],
            };
            Ok(normals
                .iter()
                .map(|&k| {
                    let n = axis(a, f, k).unwrap_or_default();
                    (dot(a, &d, &n), format!("(p − F.origin)·F.{}_axis", xyz[k]))
                })
                .collect())
        }
        _ => frame_equations(a, kind, vals, span, &wrong),
    }
}

/// The equations of a joint between two frames.
fn frame_equations(
    a: &mut Arena,
    kind: Kind,
    vals: &[Value],
    span: Span,
    wrong: &dyn Fn(usize) -> Error,
) -> Result<Vec<Row>> {
    let (fa, fb) = (&vals[0], &vals[1]);
    let oa = origin(fa).ok_or_else(|| wrong(0))?;
    let ob = origin(fb).ok_or_else(|| wrong(1))?;
    if oa.len() != ob.len() {
        return Err(Error::new(
            span,
            format!(
                "a joint joins two frames of one dimension, found {} and {}",
                fa.kind(),
                fb.kind()
            ),
        ));
    }
    let planar = oa.len() == 2;
    if planar && kind.spatial_only() {
        let hint = match kind {
            Kind::Spherical | Kind::Universal => "in the plane, the pin joint is `revolute(A, B)`",
            _ => "in the plane, use `revolute`, `prismatic` or `fixed`",
        };
        return Err(Error::new(
            span,
            format!("a `{}` joint joins spatial frames; {hint}", kind.name()),
        ));
    }
    let xyz = ["x", "y", "z"];
    let mut rows: Vec<Row> = Vec::new();
    let d = sub(a, &oa, &ob);
    let coincide = matches!(
        kind,
        Kind::Revolute | Kind::Spherical | Kind::Universal | Kind::Fixed
    );
    if coincide {
        for (k, &e) in d.iter().enumerate() {
            rows.push((e, format!("origins, {}", xyz[k])));
        }
    }
    if planar {
        let angle = |f: &Value| match f {
            Value::Frame2 { angle, .. } => Some(*angle),
            _ => None,
        };
        if matches!(kind, Kind::Prismatic | Kind::Fixed) {
            let (ta, tb) = (angle(fa), angle(fb));
            if let (Some(ta), Some(tb)) = (ta, tb) {
                rows.push((a.sub(ta, tb), "A.angle = B.angle".into()));
            }
        }
        if kind == Kind::Prismatic {
            let y = axis(a, fa, 1).unwrap_or_default();
            rows.push((dot(a, &d, &y), "(A.origin − B.origin)·A.y_axis".into()));
        }
        return Ok(rows);
    }
    let ax = |a: &mut Arena, f: &Value, k: usize| axis(a, f, k).unwrap_or_default();
    let perpendicular = |a: &mut Arena, rows: &mut Vec<Row>, i: usize, j: usize| {
        let (u, v) = (ax(a, fa, i), ax(a, fb, j));
        rows.push((
            dot(a, &u, &v),
            format!("A.{}_axis ⊥ B.{}_axis", xyz[i], xyz[j]),
        ));
    };
    match kind {
        Kind::Revolute | Kind::Cylindrical | Kind::Planar => {
            perpendicular(a, &mut rows, 2, 0);
            perpendicular(a, &mut rows, 2, 1);
        }
        Kind::Prismatic | Kind::Fixed => {
            perpendicular(a, &mut rows, 0, 1);
            perpendicular(a, &mut rows, 1, 2);
            perpendicular(a, &mut rows, 2, 0);
        }
        Kind::Universal => perpendicular(a, &mut rows, 0, 1),
        _ => {}
    }
    let along: &[usize] = match kind {
        Kind::Prismatic | Kind::Cylindrical => &[0, 1],
        Kind::Planar => &[2],
        _ => &[],
    };
    for &k in along {
        let n = ax(a, fa, k);
        rows.push((
            dot(a, &d, &n),
            format!("(A.origin − B.origin)·A.{}_axis", xyz[k]),
        ));
    }
    Ok(rows)
}

/// `p − q` componentwise.
fn sub(a: &mut Arena, p: &[ExprId], q: &[ExprId]) -> Vec<ExprId> {
    p.iter().zip(q).map(|(&x, &y)| a.sub(x, y)).collect()
}

#[cfg(test)]
mod tests {
    use super::{kind_list, Kind};
    use crate::expr::Sym;
    use crate::model::{lower, Model};
    use rand::{RngExt, SeedableRng};

    #[test]
    fn kinds_are_found_by_name_and_listed_once() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(
            kind_list(),
            "revolute, prismatic, cylindrical, spherical, universal, planar, fixed, coincident, \
             distance, on_line, on_plane"
        );
    }

    /// Lowers a module whose coordinates are `x, y, z, a, b, c` (or `x, y, c` in the plane).
    fn model(items: &str) -> (Model, crate::expr::Arena) {
        let src = format!("mod m {{ {items} }}");
        let file = crate::parse::parse_file(src.parse().expect("tokens")).expect("parses");
        lower(&file.modules[0]).expect("lowers")
    }

    fn residual((m, arena): &(Model, crate::expr::Arena), q: &[f64]) -> Vec<f64> {
        let roots: Vec<_> = m.constraints.iter().map(|e| e.expr).collect();
        arena.eval(&roots, &|s| match s {
            Sym::Coord(i) => q[i as usize],
            _ => 0.0,
        })
    }

    /// For each kind, with `B` placed relative to a general frame `A` by the coordinates:
    /// the joint has `n − |free|` equations, they vanish wherever only the free coordinates
    /// move, move away from zero when any other coordinate moves, and their Jacobian has
    /// full row rank there (central differences, SVD).
    fn check(ground: &str, body: &str, coords: &[&str], cases: &[(&str, &[&str])]) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for &(joint, free) in cases {
            let decl: String = coords.iter().map(|c| format!("coord {c} = 0.0;")).collect();
            let m = model(&format!(
                "{decl} let A = {ground}; let B = {body}; joint j = {joint};"
            ));
            let n = coords.len();
            assert_eq!(m.0.constraints.len(), n - free.len(), "{joint}: equations");
            for _ in 0..20 {
                let q: Vec<f64> = coords
                    .iter()
                    .map(|c| {
                        if free.contains(c) {
                            rng.random_range(-1.0..1.0)
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let r = residual(&m, &q);
                assert!(r.iter().all(|x| x.abs() < 1e-14), "{joint} at {q:?}: {r:?}");
                for (k, c) in coords.iter().enumerate() {
                    if free.contains(c) {
                        continue;
                    }
                    let mut moved = q.clone();
                    moved[k] += 0.1;
                    let r = residual(&m, &moved);
                    let norm = r.iter().map(|x| x * x).sum::<f64>().sqrt();
                    assert!(norm > 1e-3, "{joint}: moving {c} keeps the joint closed");
                }
                let h = 1e-6;
                let jac = nalgebra::DMatrix::from_fn(m.0.constraints.len(), n, |i, j| {
                    let (mut p, mut q2) = (q.clone(), q.clone());
                    p[j] += h;
                    q2[j] -= h;
                    (residual(&m, &p)[i] - residual(&m, &q2)[i]) / (2.0 * h)
                });
                let sv = jac.clone().svd(false, false).singular_values;
                assert!(sv.min() > 1e-3, "{joint}: rank-deficient rows {sv}");
            }
        }
    }

    #[test]
    fn spatial_joints_allow_exactly_their_motion() {
        check(
            "translate(vec3(0.3, -0.2, 0.5)) * rot_z(0.7) * rot_x(0.4)",
            "A * translate(vec3(x, y, z)) * rot_x(a) * rot_y(b) * rot_z(c)",
            &["x", "y", "z", "a", "b", "c"],
            &[
                ("revolute(A, B)", &["c"]),
                ("prismatic(A, B)", &["z"]),
                ("cylindrical(A, B)", &["z", "c"]),
                ("spherical(A, B)", &["a", "b", "c"]),
                ("universal(A, B)", &["a", "b"]),
                ("planar(A, B)", &["x", "y", "c"]),
                ("fixed(A, B)", &[]),
                ("coincident(A.origin, B.origin)", &["a", "b", "c"]),
                ("on_line(B.origin, A)", &["z", "a", "b", "c"]),
                ("on_plane(B.origin, A)", &["x", "y", "a", "b", "c"]),
                ("fixed(inverse(A) * B, translate(vec3(0.0, 0.0, 0.0)))", &[]),
            ],
        );
    }

    #[test]
    fn planar_joints_allow_exactly_their_motion() {
        check(
            "translate(vec2(0.3, -0.2)) * rot(0.7)",
            "A * translate(vec2(x, y)) * rot(c)",
            &["x", "y", "c"],
            &[
                ("revolute(A, B)", &["c"]),
                ("prismatic(A, B)", &["x"]),
                ("fixed(A, B)", &[]),
                ("coincident(B.origin, A.origin)", &["c"]),
                ("on_line(B.origin, A)", &["x", "c"]),
                (
                    "revolute(B, frame(A.point(vec2(0.0, 0.0)), A.angle + 1.0))",
                    &["c"],
                ),
            ],
        );
    }

    #[test]
    fn rot_quat_is_the_rotation_of_a_unit_quaternion() {
        let m = model(
            "coord w = 1.0; coord x = 0.0; coord y = 0.0; coord z = 0.0; coord a = 0.0; \
             let v = vec3(1.0, -2.0, 0.5); \
             constraint rot_quat(w, x, y, z) * v == rot_z(a) * v; \
             constraint norm_squared(rot_quat(w, x, y, z) * v) == norm_squared(v); \
             constraint dot(rot_quat(w, x, y, z) * vec3(1.0, 0.0, 0.0), rot_quat(w, x, y, z) * vec3(0.0, 1.0, 0.0)) == 0.0;",
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let a: f64 = rng.random_range(-3.0..3.0);
            // About z: the same rotation as rot_z.
            let r = residual(&m, &[(a / 2.0).cos(), 0.0, 0.0, (a / 2.0).sin(), a]);
            assert!(r.iter().all(|v| v.abs() < 1e-14), "{r:?}");
            // Any unit quaternion: lengths and right angles are kept.
            let q: Vec<f64> = (0..4).map(|_| rng.random_range(-1.0..1.0)).collect();
            let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            let r = residual(&m, &[q[0] / n, q[1] / n, q[2] / n, q[3] / n, 0.0]);
            assert!(r[3].abs() < 1e-13 && r[4].abs() < 1e-14, "{r:?}");
        }
    }

    #[test]
    fn a_frame_item_must_be_a_frame() {
        let m = model(
            "coord x = 0.0; frame f = translate(vec2(x, 1.0)); constraint f.origin.x == 0.5;",
        );
        assert_eq!(m.0.constraints.len(), 1);
        let src = "mod m { coord x = 0.0; frame f = vec2(x, 1.0); constraint x == 0.5; }";
        let file = crate::parse::parse_file(src.parse().expect("tokens")).expect("parses");
        let e = lower(&file.modules[0]).expect_err("not a frame");
        assert!(e.to_string().contains("must be a frame"), "{e}");
    }

    #[test]
    fn distance_holds_on_a_sphere() {
        let m = model(
            "coord x = 0.0; coord y = 0.0; coord z = 0.0; \
             joint rod = distance(vec3(x, y, z), vec3(1.0, 2.0, 3.0), 2.0);",
        );
        assert_eq!(m.0.constraints.len(), 1);
        let r = residual(&m, &[1.0, 2.0, 1.0]);
        assert!(r[0].abs() < 1e-15);
        let r = residual(&m, &[1.0, 2.0, 2.0]);
        assert!((r[0] - (1.0 - 4.0)).abs() < 1e-15);
    }
}
