//! Coulomb friction on an inequality: `inequality NAME: lhs >= rhs, friction = μ, tangent =
//! v;`. The tangent `v` names the contact's slip: either a velocity expression in `der(q)`
//! (linear in the velocities, the slip velocity itself, `der(x) + r * der(th)`), or an
//! expression of the coordinates (and time) whose rate is the slip velocity (`x + r * th`).
//! A scalar tangent is a planar contact (one slip direction); a `vec2` a spatial one (two
//! orthogonal slip components in the contact plane, in the same length unit).

use syn::Expr;

use super::lower::Lowerer;
use super::Tangent;
use crate::error::{joined, Error, Result};
use crate::expr::Sym;

impl Lowerer {
    /// The friction coefficient and the slip rows of one scalar inequality (`vector`: the
    /// inequality has several components, which cannot share one contact's friction;
    /// `inputs[i]`: the name of parameter `i` if it is an input).
    pub(super) fn contact_friction(
        &mut self,
        name: &syn::Ident,
        friction: Option<&Expr>,
        tangent: Option<&Expr>,
        vector: bool,
        inputs: &[Option<String>],
    ) -> Result<(f64, Vec<Tangent>)> {
        let (f, t) = match (friction, tangent) {
            (None, None) => return Ok((0.0, Vec::new())),
            (None, Some(t)) => {
                return Err(Error::spanned(
                    t,
                    "a `tangent` is only used with a friction coefficient: add `friction = μ`",
                ))
            }
            (Some(f), None) => {
                return Err(Error::spanned(
                    f,
                    format!(
                        "friction on `{}` needs the contact's slip: add `tangent = v`, the slip \
                         velocity in `der(q)` (e.g. `der(x) + r * der(th)`) or a coordinate \
                         expression whose rate it is (`x + r * th`; `vec2(…)` for a spatial \
                         contact)",
                        super::scope::plain(name)
                    ),
                ))
            }
            (Some(f), Some(t)) => (f, t),
        };
        if vector {
            return Err(Error::spanned(
                f,
                "friction needs a scalar inequality (one contact): write one `inequality` per \
                 contact",
            ));
        }
        let mu = self.constant(f, "the friction coefficient")?;
        if !(mu >= 0.0 && mu.is_finite()) {
            return Err(Error::spanned(
                f,
                format!("the friction coefficient must be finite and ≥ 0, found {mu}"),
            ));
        }
        let shape = "a scalar (planar contact) or a `vec2` (spatial contact)";
        let rows = self.slip_rows(t, "tangent", (2, shape), inputs)?;
        Ok((mu, rows))
    }

    /// The slip rows of `t` (a `tangent` or a joint's `slip`, named `what` in errors; at
    /// most `max` components, else an error saying it must be `shape`): one per scalar
    /// component, each `J q̇ + a₀`, from a velocity expression linear in `der(q)` or from a
    /// coordinate expression (its rate).
    pub(super) fn slip_rows(
        &mut self,
        t: &Expr,
        what: &str,
        (max, shape): (usize, &str),
        inputs: &[Option<String>],
    ) -> Result<Vec<Tangent>> {
        self.allow_velocity = true;
        let value = self.expr(t);
        self.allow_velocity = false;
        let value = value?;
        let comps = match value.components() {
            Some(c) if c.len() <= max => c,
            _ => {
                return Err(Error::spanned(
                    t,
                    format!("the {what} must be {shape}, found {}", value.kind()),
                ))
            }
        };
        let mut rows = Vec::new();
        for e in comps {
            let syms = self.arena.symbols(&[e]);
            if let Some(name) = syms.iter().find_map(|s| match s {
                Sym::Param(i) => inputs.get(*i as usize).and_then(|n| n.as_deref()),
                _ => None,
            }) {
                return Err(Error::spanned(
                    t,
                    format!(
                        "the input `{name}` cannot be used in a {what} (only in `force` and \
                         `generalized_force`)"
                    ),
                ));
            }
            let velocity = syms.iter().any(|s| matches!(s, Sym::Vel(_)));
            let mut row = Vec::new();
            let rest = if velocity {
                for s in &syms {
                    if let Sym::Vel(i) = *s {
                        let coef = self.arena.diff(e, Sym::Vel(i));
                        if self
                            .arena
                            .symbols(&[coef])
                            .iter()
                            .any(|s| matches!(s, Sym::Vel(_)))
                        {
                            return Err(Error::spanned(
                                t,
                                format!("a {what} in `der(q)` must be linear in the velocities"),
                            ));
                        }
                        row.push((i as usize, coef));
                    }
                }
                let zero = self.arena.constant(0.0);
                self.arena
                    .subst(&[e], &|s| matches!(s, Sym::Vel(_)).then_some(zero))[0]
            } else {
                for s in &syms {
                    if let Sym::Coord(i) = *s {
                        let d = self.arena.diff(e, Sym::Coord(i));
                        row.push((i as usize, d));
                    }
                }
                self.arena.diff(e, Sym::Time)
            };
            if row.is_empty() {
                return Err(Error::new(
                    joined(t),
                    format!("the {what} involves no coordinate (or velocity): it cannot be a slip"),
                ));
            }
            row.sort_by_key(|&(i, _)| i);
            rows.push(Tangent { row, rest });
        }
        Ok(rows)
    }
}
impl Lowerer {
    /// Dry friction in the joint of `constraint NAME: lhs == rhs, friction = μ, slip = v
    /// (, radius = r)?;`: the constraint's `rows` (first, count) are the joint's normal,
    /// their multipliers its reaction. Without `friction` the constraint is plain (and may
    /// have no name, `slip` or `radius`).
    pub(super) fn joint_friction(
        &mut self,
        name: Option<&syn::Ident>,
        [friction, slip, radius]: [Option<&Expr>; 3],
        rows: (usize, usize),
        parts: &mut super::items::Parts<'_>,
    ) -> Result<()> {
        let Some(f) = friction else {
            if let Some(e) = slip.or(radius) {
                return Err(Error::spanned(
                    e,
                    "`slip` and `radius` are only used with a friction coefficient: add \
                     `friction = μ`",
                ));
            }
            if let Some(n) = name {
                return Err(Error::spanned(
                    n,
                    "a constraint's name is only used with dry friction: add `friction = μ, \
                     slip = v`, or drop the name",
                ));
            }
            return Ok(());
        };
        let Some(name) = name else {
            return Err(Error::spanned(
                f,
                "a constraint with friction needs a name: `constraint NAME: lhs == rhs, \
                 friction = μ, slip = v;`",
            ));
        };
        let base = super::scope::plain(name);
        let Some(t) = slip else {
            return Err(Error::spanned(
                f,
                format!(
                    "friction in `{base}` needs the joint's slip: add `slip = v`, the sliding \
                     velocity in `der(q)` (e.g. `der(s)`) or a coordinate expression whose rate \
                     it is (`s`; a pin's relative angle `th2 - th1`)"
                ),
            ));
        };
        let mu = self.constant(f, "the friction coefficient")?;
        if !(mu >= 0.0 && mu.is_finite()) {
            return Err(Error::spanned(
                f,
                format!("the friction coefficient must be finite and ≥ 0, found {mu}"),
            ));
        }
        let r = match radius {
            Some(e) => {
                let r = self.constant(e, "the friction radius")?;
                if !(r > 0.0 && r.is_finite()) {
                    return Err(Error::spanned(
                        e,
                        format!("the friction radius must be finite and > 0, found {r}"),
                    ));
                }
                r
            }
            None => 1.0,
        };
        let inputs: Vec<Option<String>> = parts
            .params
            .iter()
            .map(|p| p.input.then(|| p.name.clone()))
            .collect();
        let shape = "a scalar (the joint's one sliding direction)";
        let mut slips = self.slip_rows(t, "slip", (1, shape), &inputs)?;
        let Some(slip) = slips.pop() else {
            return Err(Error::spanned(t, format!("the slip must be {shape}")));
        };
        if parts.joint_friction.iter().any(|j| j.name == base) {
            return Err(Error::spanned(
                name,
                format!("the friction of `{base}` is declared twice"),
            ));
        }
        if parts.inequalities.iter().any(|g| g.name == base) {
            return Err(Error::spanned(
                name,
                format!("`{base}` already names an inequality"),
            ));
        }
        parts.joint_friction.push(super::JointFriction {
            name: base,
            rows,
            friction: mu,
            radius: r,
            slip,
            span: name.span(),
        });
        Ok(())
    }
}
