//! The items of a module, one function each: `param`, `const`, `coord`, `let`,
//! `constraint`, `independent`, `body`, `gravity`, `spring`, `force`, `mass_matrix` and
//! `generalized_force`. Each adds to [`Parts`], the model under construction, or fails
//! with the item's first error. A new item kind is a variant of `ast::Item`, an arm in
//! [`Lowerer::item`] and a function here.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident};

use super::dynamics::{Body, Dynamics, Inertia, Orientation, Spring};
use super::lower::Lowerer;
use super::scope::{plain, Kind};
use super::source::source_text;
use super::value::Value;
use super::{Coord, Equation, Param};
use crate::error::joined;
use crate::error::{Error, Errors, Result};
use crate::expr::{ExprId, Sym};
use crate::parse::ast::{Field, Item};

/// What the items of a module have added to the model so far.
#[derive(Default)]
pub(super) struct Parts<'m> {
    /// Coordinates, in order.
    pub(super) coords: Vec<Coord>,
    /// Parameters, in order.
    pub(super) params: Vec<Param>,
    /// Scalar constraint equations, in order.
    pub(super) constraints: Vec<Equation>,
    /// Coordinates listed in `independent`.
    pub(super) independent: Vec<usize>,
    /// Span of the `independent` item.
    pub(super) independent_span: Option<Span>,
    /// Named charts (`independent NAME: …;`).
    pub(super) charts: Vec<super::NamedChart>,
    /// Velocity constraints, one per scalar component.
    pub(super) velocity_constraints: Vec<super::VelocityEquation>,
    /// Bodies, springs, forces, an explicit mass matrix.
    pub(super) dynamics: Dynamics,
    /// Named outputs, one per scalar component.
    pub(super) outputs: Vec<super::Output>,
    /// Inequality constraints, one per scalar component.
    pub(super) inequalities: Vec<super::Inequality>,
    /// Dry friction in joints, in order.
    pub(super) joint_friction: Vec<super::JointFriction>,
    /// The gravity expression, for the dimension check against the bodies.
    gravity_expr: Option<&'m Expr>,
}

impl Parts<'_> {
    /// Dry friction in joints is simulated without contacts: a model with both is refused
    /// (at the first joint's friction) rather than have the contact solvers ignore it.
    pub(super) fn check_joint_friction(&self, errors: &mut Errors) {
        if let (Some(j), Some(g)) = (self.joint_friction.first(), self.inequalities.first()) {
            errors.push(Error::new(
                j.span,
                format!(
                    "dry friction in joints (`{}`) cannot be combined with inequality \
                     constraints (`{}`) yet: the contact solvers would ignore it",
                    j.name, g.name
                ),
            ));
        }
    }

    /// Gravity acts on every body: its dimension must be each body's (one error at most).
    pub(super) fn check_gravity(&self, errors: &mut Errors) {
        let (Some(g), Some(gexpr)) = (&self.dynamics.gravity, self.gravity_expr) else {
            return;
        };
        for b in &self.dynamics.bodies {
            if b.com.len() != g.len() {
                let (gd, bd) = (g.len(), b.com.len());
                errors.push(Error::spanned(
                    gexpr,
                    format!("gravity is a {gd}-vector but body `{}` moves in {bd} dimensions (its `com` is a {bd}-vector): a {gd}-D gravity would not act on it; give gravity as a {bd}-vector", b.name),
                ));
                break;
            }
        }
    }
}

impl Lowerer {
    /// Lowers one item into `parts`.
    pub(super) fn item<'m>(&mut self, item: &'m Item, parts: &mut Parts<'m>) -> Result<()> {
        match item {
            Item::Param {
                docs,
                name,
                default,
            } => self.param(docs, name, default.as_ref(), false, parts),
            Item::Input {
                docs,
                name,
                default,
            } => self.param(docs, name, default.as_ref(), true, parts),
            Item::Const { name, value } => self.const_item(name, value),
            Item::Coord { name, nominal } => self.coord(name, nominal.as_ref(), parts),
            Item::Let { name, value } => {
                let v = self.expr(value)?;
                self.scope.declare(name, Kind::Let, v, 0)
            }
            Item::Frame { name, value } => {
                let v = self.expr(value)?;
                if !v.is_frame() {
                    return Err(Error::spanned(
                        value,
                        format!("`frame {name} = …` must be a frame (`translate(v) * rot(θ)`, `frame(origin, R)`, …), found {}", v.kind()),
                    ));
                }
                self.scope.declare(name, Kind::Let, v, 0)
            }
            Item::Constraint {
                name,
                equation,
                friction,
                slip,
                radius,
            } => {
                let first = parts.constraints.len();
                self.constraint(equation, parts)?;
                let rows = (first, parts.constraints.len() - first);
                self.joint_friction(
                    name.as_ref(),
                    [friction, slip, radius].map(|o| o.as_deref()),
                    rows,
                    parts,
                )
            }
            Item::Independent {
                chart: None,
                names,
                span,
            } => self.independent(names, *span, parts),
            Item::Independent {
                chart: Some(chart),
                names,
                ..
            } => self.named_chart(chart, names, parts),
            Item::Body { name, fields } => self.body(name, fields, parts),
            Item::Gravity { value, span } => {
                if parts.dynamics.gravity.is_some() {
                    return Err(Error::new(*span, "gravity is given twice"));
                }
                parts.dynamics.gravity = Some(self.expr(value)?.vector(joined(value))?);
                parts.gravity_expr = Some(value);
                Ok(())
            }
            Item::Spring { name, fields } => self.spring(name, fields, parts),
            Item::Force { coord, value } => {
                let i = self.scope.coord_index(coord)?;
                let v = self.force(value)?;
                parts.dynamics.coord_forces.push((i, v));
                Ok(())
            }
            Item::MassMatrix { entries } => self.mass_matrix(entries, parts),
            Item::Output { docs, name, value } => self.output(docs, name, value, parts),
            Item::Joint { name, value } => self.joint(name, value, parts),
            Item::VelocityConstraint { equation } => self.velocity_constraint(equation, parts),
            Item::Inequality {
                name,
                condition,
                restitution,
                friction,
                tangent,
            } => self.inequality(
                name,
                condition,
                [restitution, friction, tangent].map(|o| o.as_deref()),
                parts,
            ),
            Item::GeneralizedForce { entries } => {
                for f in entries {
                    let i = self.scope.coord_index(&f.name)?;
                    let v = self.force(&f.value)?;
                    parts.dynamics.explicit_force.push((i, v));
                }
                Ok(())
            }
        }
    }

    /// `inequality NAME: lhs >= rhs (, restitution = e)? (, friction = μ, tangent = v)?;` (or `<=`): `lhs − rhs ≥ 0` per
    /// component, named `NAME` or `NAME_x`, `NAME_y` (, `NAME_z`).
    fn inequality(
        &mut self,
        name: &syn::Ident,
        condition: &Expr,
        [restitution, friction, tangent]: [Option<&Expr>; 3],
        parts: &mut Parts,
    ) -> Result<()> {
        const SHAPE: &str =
            "an inequality is a comparison `lhs >= rhs` (or `lhs <= rhs`) of scalars or vectors";
        let Expr::Binary(b) = condition else {
            return Err(Error::spanned(condition, SHAPE));
        };
        let flip =
            match b.op {
                BinOp::Ge(_) => false,
                BinOp::Le(_) => true,
                BinOp::Gt(_) | BinOp::Lt(_) => return Err(Error::new(
                    b.op.span(),
                    "write `>=` or `<=`: an inequality constraint includes its boundary (contact)",
                )),
                _ => return Err(Error::spanned(condition, SHAPE)),
            };
        let (lc, rc) = self.sides(b, "inequality", " and ")?;
        let e = match restitution {
            Some(r) => {
                let e = self.constant(r, "the restitution coefficient")?;
                if !(0.0..=1.0).contains(&e) {
                    return Err(Error::spanned(
                        r,
                        format!("the restitution coefficient must lie in [0, 1], found {e}"),
                    ));
                }
                e
            }
            None => 0.0,
        };
        let inputs: Vec<Option<String>> = parts
            .params
            .iter()
            .map(|p| p.input.then(|| p.name.clone()))
            .collect();
        let (mu, tangents) =
            self.contact_friction(name, friction, tangent, lc.len() > 1, &inputs)?;
        let base = super::scope::plain(name);
        for (k, (&x, &y)) in lc.iter().zip(&rc).enumerate() {
            let g = if flip {
                self.arena.sub(y, x)
            } else {
                self.arena.sub(x, y)
            };
            let n = if lc.len() == 1 {
                base.clone()
            } else {
                format!("{base}_{}", ["x", "y", "z"][k])
            };
            self.restricts_coordinates(g, &n, condition, parts)?;
            if parts.inequalities.iter().any(|i| i.name == n) {
                return Err(Error::spanned(
                    name,
                    format!("inequality `{n}` is declared twice"),
                ));
            }
            parts.inequalities.push(super::Inequality {
                name: n,
                expr: g,
                restitution: e,
                friction: mu,
                tangents: tangents.clone(),
                span: name.span(),
            });
        }
        Ok(())
    }

    /// Fails when the inequality `name` (`g = lhs − rhs ≥ 0`) involves no coordinate, as a
    /// constraint equation that involves none does (`pivot::check`): it cannot restrict the
    /// motion. Constant, it either never holds (`1.0 >= 2.0`) or always holds and says
    /// nothing (`2.0 >= 1.0`, rejected too, as `1.0 == 1.0` is); with parameters it is
    /// judged at their defaults; with time it would switch on and off by itself, with
    /// nothing to push back (its Jacobian row is zero).
    fn restricts_coordinates(
        &self,
        g: crate::expr::ExprId,
        name: &str,
        condition: &Expr,
        parts: &Parts,
    ) -> Result<()> {
        let syms = self.arena.symbols(&[g]);
        if syms.iter().any(|s| matches!(s, Sym::Coord(_))) {
            return Ok(());
        }
        let value = |s: Sym| match s {
            Sym::Param(i) => parts
                .params
                .get(i as usize)
                .and_then(|p| p.default)
                .unwrap_or(f64::NAN),
            _ => f64::NAN,
        };
        let v = self.arena.eval(&[g], &value)[0];
        let truth = if syms.contains(&Sym::Time) {
            String::from("it depends only on time and parameters")
        } else if syms.is_empty() && v < 0.0 {
            format!("it never holds (lhs − rhs is the constant {v})")
        } else if syms.is_empty() {
            String::from("it always holds and says nothing")
        } else if v < 0.0 {
            format!("it is false at the default parameters (lhs − rhs = {v:.3e})")
        } else if v >= 0.0 {
            String::from("it holds for the default parameters and says nothing")
        } else {
            String::from("it depends only on parameters")
        };
        Err(Error::spanned(
            condition,
            format!("inequality `{name}` does not involve any coordinate: {truth}; an inequality must restrict the coordinates"),
        ))
    }

    /// The scalar components of the two sides of a comparison (`what`: "equation" or
    /// "inequality"), which must have the same shape (`sep` joins their kinds in the error).
    fn sides(
        &mut self,
        b: &syn::ExprBinary,
        what: &str,
        sep: &str,
    ) -> Result<(Vec<crate::expr::ExprId>, Vec<crate::expr::ExprId>)> {
        let lhs = self.expr(&b.left)?;
        let rhs = self.expr(&b.right)?;
        match (lhs.components(), rhs.components()) {
            (Some(x), Some(y)) if x.len() == y.len() => Ok((x, y)),
            _ => Err(Error::new(
                b.op.span(),
                format!(
                    "the two sides of the {what} differ: {}{sep}{}",
                    lhs.kind(),
                    rhs.kind()
                ),
            )),
        }
    }

    /// `output NAME = expr;`: a scalar, or a vector whose components are named
    /// `NAME_x`, `NAME_y` (, `NAME_z`).
    fn output(
        &mut self,
        docs: &[String],
        name: &syn::Ident,
        value: &Expr,
        parts: &mut Parts,
    ) -> Result<()> {
        let base = super::scope::plain(name);
        let v = self.expr(value)?;
        let comps = v.components().ok_or_else(|| {
            Error::spanned(
                value,
                format!(
                    "an output must be a scalar, `vec2` or `vec3`, found {}",
                    v.kind()
                ),
            )
        })?;
        let names: Vec<String> = if comps.len() == 1 {
            vec![base.clone()]
        } else {
            ["x", "y", "z"][..comps.len()]
                .iter()
                .map(|a| format!("{base}_{a}"))
                .collect()
        };
        for (n, &e) in names.iter().zip(&comps) {
            if parts.outputs.iter().any(|o| &o.name == n) {
                return Err(Error::spanned(
                    name,
                    format!("output `{n}` is declared twice"),
                ));
            }
            parts.outputs.push(super::Output {
                name: n.clone(),
                docs: docs.to_vec(),
                expr: e,
                span: name.span(),
            });
        }
        Ok(())
    }

    /// `param NAME = default;`
    /// `param NAME (= default)?;`, or with `input` an input (default 0: it starts at rest).
    fn param(
        &mut self,
        docs: &[String],
        name: &Ident,
        default: Option<&Expr>,
        input: bool,
        parts: &mut Parts,
    ) -> Result<()> {
        let what = if input {
            "an input default"
        } else {
            "a parameter default"
        };
        // A vector default (`input f = vec2(0.0, 0.0);`) makes a vector of parameters, one
        // field per component (`f_x`, `f_y`).
        let defaults: Vec<Option<f64>> = match default {
            Some(e) => {
                match self.about(what.to_string(), |l| l.expr(e))? {
                    v @ (Value::Vec2(_) | Value::Vec3(_)) => {
                        let mut out = Vec::new();
                        for c in v.components().unwrap_or_default() {
                            if !self.arena.symbols(&[c]).is_empty() {
                                return Err(Error::spanned(
                                    e,
                                    format!("{what} must be a constant expression"),
                                ));
                            }
                            let x = self.arena.eval(&[c], &|_| 0.0f64)[0];
                            if !x.is_finite() {
                                return Err(Error::spanned(
                                e,
                                format!("{what} is not a finite number (a component evaluates to {x})"),
                            ));
                            }
                            out.push(Some(x));
                        }
                        out
                    }
                    _ => vec![Some(self.constant(e, what)?)],
                }
            }
            None if input => vec![Some(0.0)],
            None => vec![None],
        };
        let base = plain(name);
        let names: Vec<String> = if defaults.len() == 1 {
            vec![base.clone()]
        } else {
            ["x", "y", "z"][..defaults.len()]
                .iter()
                .map(|c| format!("{base}_{c}"))
                .collect()
        };
        let mut syms = Vec::new();
        for (n, d) in names.iter().zip(&defaults) {
            if parts.params.iter().any(|p| &p.name == n) {
                return Err(Error::new(
                    name.span(),
                    format!("`Params` already has a field `{n}` (a vector parameter `v` has the fields `v_x`, `v_y`, …): choose another name"),
                ));
            }
            let i = parts.params.len();
            syms.push(self.arena.sym(Sym::Param(i as u32)));
            parts.params.push(Param {
                name: n.clone(),
                default: *d,
                docs: docs.to_vec(),
                span: name.span(),
                input,
            });
        }
        let v = Value::from_vec(&syms);
        let kind = if input { Kind::Input } else { Kind::Param };
        self.scope
            .declare(name, kind, v, parts.params.len() - syms.len())
    }

    /// `const NAME = value;`: folded to constants (a rotation matrix kept as it is).
    fn const_item(&mut self, name: &Ident, value: &Expr) -> Result<()> {
        let v = self.about(format!("the constant `{}`", plain(name)), |l| l.expr(value))?;
        let mut comps = Vec::new();
        for c in v.exprs() {
            let syms = self.arena.symbols(&[c]);
            if !syms.is_empty() {
                return Err(Error::spanned(&value, "a `const` must be a constant expression (numbers, `pi` and other consts); use `param` or `let` for values that depend on parameters or coordinates"));
            }
            let x = self.arena.eval(&[c], &|_| 0.0f64)[0];
            if !x.is_finite() {
                return Err(Error::spanned(
                    &value,
                    format!("the constant `{name}` is not a finite number (it evaluates to {x})"),
                ));
            }
            comps.push(self.arena.constant(x));
        }
        let folded = match v {
            Value::Mat3(_) => v,
            _ => v.with_exprs(&comps),
        };
        self.scope.declare(name, Kind::Const, folded, 0)
    }

    /// `coord NAME = nominal;`
    fn coord(&mut self, name: &Ident, nominal: Option<&Expr>, parts: &mut Parts) -> Result<()> {
        let n = match nominal {
            Some(e) => self.constant(e, "a coordinate's nominal value")?,
            None => 0.0,
        };
        let i = parts.coords.len();
        let v = Value::Scalar(self.arena.sym(Sym::Coord(i as u32)));
        self.scope.declare(name, Kind::Coord, v, i)?;
        parts.coords.push(Coord {
            name: plain(name),
            nominal: n,
            span: name.span(),
        });
        Ok(())
    }

    /// `constraint lhs == rhs;`: one scalar equation per component.
    fn constraint(&mut self, equation: &Expr, parts: &mut Parts) -> Result<()> {
        let Expr::Binary(b) = equation else {
            let message = if matches!(equation, Expr::Assign(_)) {
                "a constraint must be an equation `lhs == rhs`; `=` is assignment, write `==`"
            } else {
                "a constraint must be an equation `lhs == rhs`"
            };
            return Err(Error::spanned(&equation, message));
        };
        if !matches!(b.op, BinOp::Eq(_)) {
            return Err(Error::spanned(
                &equation,
                "a constraint must be an equation `lhs == rhs`",
            ));
        }
        let (lc, rc) = self.sides(b, "equation", " == ")?;
        let text = source_text(equation);
        let axes = ["x", "y", "z"];
        for (k, (&x, &y)) in lc.iter().zip(&rc).enumerate() {
            let e = self.arena.sub(x, y);
            let label = if lc.len() == 1 {
                text.clone()
            } else {
                format!("{text} [{}]", axes[k])
            };
            parts.constraints.push(Equation {
                expr: e,
                label,
                span: joined(equation),
            });
        }
        Ok(())
    }

    /// `velocity_constraint lhs == rhs;`: one row of `A q̇ + a₀ = 0` per component, checked
    /// to be linear in the velocities and free of inputs.
    fn velocity_constraint(&mut self, equation: &Expr, parts: &mut Parts) -> Result<()> {
        let Expr::Binary(b) = equation else {
            return Err(Error::spanned(
                equation,
                "a velocity constraint must be an equation `lhs == rhs` in the velocities `der(q)`",
            ));
        };
        if !matches!(b.op, BinOp::Eq(_)) {
            return Err(Error::spanned(
                equation,
                "a velocity constraint must be an equation `lhs == rhs` in the velocities `der(q)`",
            ));
        }
        self.allow_velocity = true;
        let sides = self.sides(b, "velocity constraint", " == ");
        self.allow_velocity = false;
        let (lc, rc) = sides?;
        let text = source_text(equation);
        let axes = ["x", "y", "z"];
        for (k, (&x, &y)) in lc.iter().zip(&rc).enumerate() {
            let g = self.arena.sub(x, y);
            let syms = self.arena.symbols(&[g]);
            if let Some(i) = syms.iter().find_map(|s| match s {
                Sym::Param(i) if parts.params.get(*i as usize).is_some_and(|p| p.input) => {
                    Some(*i as usize)
                }
                _ => None,
            }) {
                return Err(Error::spanned(
                    equation,
                    format!("the input `{}` cannot be used in a velocity constraint (only in `force` and `generalized_force`)", parts.params[i].name),
                ));
            }
            let vels: Vec<u32> = syms
                .iter()
                .filter_map(|s| match s {
                    Sym::Vel(i) => Some(*i),
                    _ => None,
                })
                .collect();
            if vels.is_empty() {
                return Err(Error::spanned(
                    equation,
                    "this velocity constraint has no velocity `der(q)`: a relation between coordinates is a `constraint`",
                ));
            }
            let mut row = Vec::new();
            for &i in &vels {
                let coef = self.arena.diff(g, Sym::Vel(i));
                if self
                    .arena
                    .symbols(&[coef])
                    .iter()
                    .any(|s| matches!(s, Sym::Vel(_)))
                {
                    let name = &parts.coords[i as usize].name;
                    return Err(Error::spanned(
                        equation,
                        format!("a velocity constraint must be linear in the velocities: the factor of `der({name})` depends on velocities"),
                    ));
                }
                row.push((i as usize, coef));
            }
            let zero = self.arena.constant(0.0);
            let rest = self
                .arena
                .subst(&[g], &|s| matches!(s, Sym::Vel(_)).then_some(zero))[0];
            let label = if lc.len() == 1 {
                format!("velocity constraint {text}")
            } else {
                format!("velocity constraint {text} [{}]", axes[k])
            };
            parts.velocity_constraints.push(super::VelocityEquation {
                row,
                rest,
                label,
                span: joined(equation),
            });
        }
        Ok(())
    }

    /// `independent a, b;` (once per module).
    fn independent(&mut self, names: &[Ident], span: Span, parts: &mut Parts) -> Result<()> {
        if parts.independent_span.is_some() {
            return Err(Error::new(
                span,
                "only one `independent` item is allowed; list all coordinates in it",
            ));
        }
        parts.independent_span = Some(span);
        for n in names {
            let i = self.scope.coord_index(n)?;
            if parts.independent.contains(&i) {
                return Err(Error::new(n.span(), format!("`{n}` is listed twice")));
            }
            parts.independent.push(i);
        }
        Ok(())
    }

    /// `independent NAME: a, b;`: a named chart.
    fn named_chart(&mut self, chart: &Ident, names: &[Ident], parts: &mut Parts) -> Result<()> {
        let name = plain(chart);
        let digits = name
            .strip_prefix("chart")
            .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()));
        if super::RESERVED_CHART_NAMES.contains(&name.as_str()) || digits {
            return Err(Error::new(
                chart.span(),
                format!("`{name}` cannot name a chart: the generated `null_space_{name}` (or type) would collide with a generated item; choose another name"),
            ));
        }
        if parts.charts.iter().any(|c| c.name == name) {
            return Err(Error::new(
                chart.span(),
                format!("a chart named `{name}` is already declared"),
            ));
        }
        // The chart's type and constant must be identifiers free in the module (a type
        // `Self` from `self_`, none at all from `__` or `_1`, panicked or did not compile).
        let (ty, konst) = super::chart_item_names(&name);
        let ident = |s: &str| syn::parse_str::<syn::Ident>(s).is_ok();
        if !ident(&ty) || !ident(&konst) || super::GENERATED_TYPES.contains(&ty.as_str()) {
            let why = if ty.is_empty() {
                String::from("it gives no type name")
            } else {
                format!("its type would be `{ty}`, which is not a free type name of the module")
            };
            return Err(Error::new(
                chart.span(),
                format!("`{name}` cannot name a chart: {why}; choose another name (a chart's type is its name in camel case)"),
            ));
        }
        if let Some(other) = parts.charts.iter().find(|c| {
            super::chart_item_names(&c.name).0 == ty || super::chart_item_names(&c.name).1 == konst
        }) {
            return Err(Error::new(
                chart.span(),
                format!("the chart `{name}` would have the type `{ty}` or the constant `{konst}` of the chart `{}`; choose another name", other.name),
            ));
        }
        let mut independent = Vec::new();
        for n in names {
            let i = self.scope.coord_index(n)?;
            if independent.contains(&i) {
                return Err(Error::new(n.span(), format!("`{n}` is listed twice")));
            }
            independent.push(i);
        }
        parts.charts.push(super::NamedChart {
            name,
            independent,
            span: chart.span(),
        });
        Ok(())
    }

    /// `body NAME { mass, com, angle | rotation, inertia }` or `body NAME { mass, frame,
    /// inertia }` (the frame at the centre of mass gives `com` and the orientation).
    fn body(&mut self, name: &Ident, fields: &[Field], parts: &mut Parts) -> Result<()> {
        let m = field_map(
            fields,
            &["mass", "inertia", "com", "angle", "rotation", "frame"],
            "body",
        )?;
        let get = |k: &str| m.get(k).copied();
        let mass_f = get("mass")
            .ok_or_else(|| Error::new(name.span(), format!("body `{name}` needs a `mass`")))?;
        let mass = self.expr(&mass_f.value)?.scalar(joined(&mass_f.value))?;
        // A constant mass must be positive (one that depends on parameters is the user's
        // to keep so); a zero or negative mass makes the mass matrix singular or indefinite.
        if let Some(m) = self.arena.as_const(mass).filter(|&m| m <= 0.0) {
            return Err(Error::spanned(
                &mass_f.value,
                format!(
                    "body `{}` has the mass {m}: a body's mass must be positive",
                    plain(name)
                ),
            ));
        }
        let (com, orientation, com_f) = if let Some(f) = get("frame") {
            if let Some(other) = ["com", "angle", "rotation"].into_iter().find_map(get) {
                return Err(Error::new(
                    other.name.span(),
                    format!("body `{name}` has a `frame` (its centre of mass and orientation): `{}` cannot be given too", other.name),
                ));
            }
            let (com, orientation) = match self.expr(&f.value)? {
                Value::Frame2 { angle, origin } => (origin.to_vec(), Orientation::Angle(angle)),
                Value::Frame3 { rot, origin } => (origin.to_vec(), Orientation::Rotation(rot)),
                other => {
                    return Err(Error::spanned(
                        &f.value,
                        format!(
                        "a body's `frame` must be a frame (`translate(v) * rot(θ)`, …), found {}",
                        other.kind()
                    ),
                    ))
                }
            };
            (com, Some(orientation), f)
        } else {
            let com_f = get("com").ok_or_else(|| {
                Error::new(
                    name.span(),
                    format!("body `{name}` needs a `com` (centre-of-mass position) or a `frame`"),
                )
            })?;
            let com = self.expr(&com_f.value)?.vector(joined(&com_f.value))?;
            (com, self.orientation(get("angle"), get("rotation"))?, com_f)
        };
        let inertia = match get("inertia") {
            None => None,
            Some(f) => Some(self.inertia(f, &orientation)?),
        };
        match (&orientation, com.len()) {
            (Some(Orientation::Angle(_)), 3) => return Err(Error::spanned(&com_f.value, format!("body `{name}` is planar (it has an `angle`) but its `com` is a 3-vector: give a 2-vector, or a `rotation` for a spatial body"))),
            (Some(Orientation::Rotation(_)), 2) => return Err(Error::spanned(&com_f.value, format!("body `{name}` is spatial (it has a `rotation`) but its `com` is a 2-vector: give a 3-vector, or an `angle` for a planar body"))),
            _ => {}
        }
        parts.dynamics.bodies.push(Body {
            name: plain(name),
            mass,
            inertia,
            com,
            orientation,
            span: name.span(),
        });
        Ok(())
    }

    /// A body's `angle` (planar) or `rotation` (spatial), at most one of them.
    fn orientation(
        &mut self,
        angle: Option<&Field>,
        rotation: Option<&Field>,
    ) -> Result<Option<Orientation>> {
        Ok(match (angle, rotation) {
            (Some(f), None) => {
                let angle = self.expr(&f.value)?.scalar(joined(&f.value))?;
                Some(Orientation::Angle(angle))
            }
            (None, Some(f)) => match self.expr(&f.value)? {
                Value::Mat3(r) => Some(Orientation::Rotation(r)),
                other => {
                    let message = format!(
                        "`rotation` must be a 3×3 rotation matrix (`rot_z(a) * rot_x(b)`), found {}",
                        other.kind()
                    );
                    return Err(Error::spanned(&f.value, message));
                }
            },
            (Some(f), Some(_)) => {
                return Err(Error::new(
                    f.name.span(),
                    "give either `angle` (planar) or `rotation` (spatial), not both",
                ))
            }
            (None, None) => None,
        })
    }

    /// A body's `inertia`: a scalar for a planar body, principal moments for a spatial one.
    fn inertia(&mut self, f: &Field, orientation: &Option<Orientation>) -> Result<Inertia> {
        let v = self.expr(&f.value)?;
        // A constant moment (planar, or principal) that is negative makes the mass matrix
        // indefinite (zero is allowed: a point mass that also has an orientation).
        if matches!(v, Value::Scalar(_) | Value::Vec3(_)) {
            if let Some(m) = v
                .exprs()
                .iter()
                .find_map(|&e| self.arena.as_const(e).filter(|&m| m < 0.0))
            {
                return Err(Error::spanned(
                    &f.value,
                    format!("a moment of inertia cannot be negative, found {m}"),
                ));
            }
        }
        Ok(match (v, orientation) {
            (Value::Scalar(i), Some(Orientation::Angle(_))) => Inertia::Planar(i),
            (Value::Vec3(i), Some(Orientation::Rotation(_))) => Inertia::Principal(i),
            (Value::Mat3(i), Some(Orientation::Rotation(_))) => {
                let pairs = [(0, 1), (0, 2), (1, 2)];
                if let Some((r, c)) = pairs.into_iter().find(|&(r, c)| i[r][c] != i[c][r]) {
                    return Err(Error::spanned(
                        &f.value,
                        format!(
                            "an inertia tensor is symmetric: write the same expression at \
                             ({r}, {c}) and ({c}, {r})"
                        ),
                    ));
                }
                Inertia::Full(i)
            }
            (v, Some(Orientation::Angle(_))) => {
                return Err(Error::spanned(
                    &f.value,
                    format!("a planar body's inertia is a scalar, found {}", v.kind()),
                ))
            }
            (v, Some(Orientation::Rotation(_))) => {
                return Err(Error::spanned(
                    &f.value,
                    format!(
                        "a spatial body's inertia is a 3-vector of principal moments or a 3×3 tensor (`mat3`, body axes), found {}",
                        v.kind()
                    ),
                ))
            }
            (_, None) => {
                return Err(Error::new(
                    f.name.span(),
                    "a body with `inertia` needs an `angle` (planar) or a `rotation` (spatial)",
                ))
            }
        })
    }

    /// `spring NAME { a, b, stiffness, length, damping }`.
    fn spring(&mut self, name: &Ident, fields: &[Field], parts: &mut Parts) -> Result<()> {
        let m = field_map(
            fields,
            &["a", "b", "stiffness", "length", "damping"],
            "spring",
        )?;
        let need = |k: &str| {
            m.get(k).copied().ok_or_else(|| {
                Error::new(
                    name.span(),
                    format!(
                        "spring `{name}` needs `{k}` (fields: a, b, stiffness, length, damping)"
                    ),
                )
            })
        };
        let (fa, fb, fk, fl) = (need("a")?, need("b")?, need("stiffness")?, need("length")?);
        let a = self.expr(&fa.value)?.vector(joined(&fa.value))?;
        let b = self.expr(&fb.value)?.vector(joined(&fb.value))?;
        if a.len() != b.len() {
            return Err(Error::spanned(
                &fb.value,
                "the two end points of a spring must have the same dimension",
            ));
        }
        let stiffness = self.expr(&fk.value)?.scalar(joined(&fk.value))?;
        let length = self.expr(&fl.value)?.scalar(joined(&fl.value))?;
        let damping = match m.get("damping") {
            Some(f) => self.expr(&f.value)?.scalar(joined(&f.value))?,
            None => self.arena.constant(0.0),
        };
        parts.dynamics.springs.push(Spring {
            name: plain(name),
            a,
            b,
            stiffness,
            length,
            damping,
            span: name.span(),
        });
        Ok(())
    }

    /// A scalar force expression, where `der(q)` is allowed.
    fn force(&mut self, value: &Expr) -> Result<ExprId> {
        self.allow_velocity = true;
        let v = self.expr(value).and_then(|v| v.scalar(joined(value)));
        self.allow_velocity = false;
        v
    }

    /// `mass_matrix { (r, c): value, ... }`: symmetric, each pair once.
    fn mass_matrix(&mut self, entries: &[(Ident, Ident, Expr)], parts: &mut Parts) -> Result<()> {
        for (r, c, e) in entries {
            let (i, j) = (self.scope.coord_index(r)?, self.scope.coord_index(c)?);
            let v = self.expr(e)?.scalar(joined(e))?;
            let (i, j) = if i <= j { (i, j) } else { (j, i) };
            if parts
                .dynamics
                .explicit_mass
                .iter()
                .any(|&(a, b, _)| (a, b) == (i, j))
            {
                return Err(Error::new(r.span(), format!("mass matrix entry ({r}, {c}) is given twice (the matrix is symmetric: give each pair once)")));
            }
            parts.dynamics.explicit_mass.push((i, j, v));
        }
        Ok(())
    }
}

/// The fields of a `body` or `spring` by name: each one known (in `allowed`) and given once.
fn field_map<'f>(
    fields: &'f [Field],
    allowed: &[&str],
    owner: &str,
) -> Result<HashMap<String, &'f Field>> {
    let mut map = HashMap::new();
    for f in fields {
        let n = plain(&f.name);
        if !allowed.contains(&n.as_str()) {
            return Err(Error::new(
                f.name.span(),
                format!(
                    "unknown field `{n}` of a {owner}; expected: {}",
                    allowed.join(", ")
                ),
            ));
        }
        if map.insert(n.clone(), f).is_some() {
            return Err(Error::new(
                f.name.span(),
                format!("field `{n}` given twice"),
            ));
        }
    }
    Ok(map)
}
