//! Lowering: AST → scalar model (vectors to scalars, `let` inlined, `const` folded).
//!
//! Expressions may use: numbers, names declared earlier (`param`, `const`, `coord`,
//! `let`), `t` (time), `pi`; `+ - * /`, unary minus, parentheses; the functions `sin cos
//! tan asin acos atan atan2 sqrt exp ln abs powi` in call or method form (`sin(x)`,
//! `x.sin()`, `y.atan2(x)`, `x.powi(2)`); `vec2(a, b)`, `vec3(a, b, c)`, `v.x`, `v.y`,
//! `v.z`, `dot`, `cross`, `norm`, `norm_squared`, `rotate2d(v, θ)`, `rot_x/rot_y/rot_z(θ)`
//! (3×3 matrices, multiplied with `*`), `mat3`, the frames (`translate`, `rot`, `frame`,
//! `*`, `F.point(v)`, `F.apply(v)`, `inverse`, `F.origin`, …: `frame.rs`) and in force
//! expressions `der(q)` (the velocity of coordinate `q`). `joint` items lower to
//! constraint equations (`joint.rs`).
//!
//! Names are compared without the `r#` of a raw identifier (`r#y` and `y` are one name);
//! a name spelled like a Rust keyword of any edition (`gen`, `r#match`) is emitted as a
//! raw identifier; `None`, `Some`, `Ok`, `Err`, `true` and `false` cannot be names (they
//! would be patterns in the generated `let`s), nor can `t`, `pi` and `PI`. Every number
//! and every constant part of an expression must be finite, folded (`1e200 * 1e200`) or
//! not (`1.0 / 0.0`, `sqrt(-1.0)`), reported where it arises (`lower_expr.rs`). `powi`
//! exponents are integer literals with `|n| <= 1024`
//! ([`MAX_POWI`](super::builtin::MAX_POWI)).
//!
//! The items of a module are lowered one by one: the error of an item is recorded and
//! lowering goes on, so independent mistakes are reported together; uses of a name whose
//! declaration failed are not reported again.

use crate::error::{Error, Errors, Result};
use crate::expr::Arena;
use crate::parse::ast;

use super::items::Parts;
use super::scope::{plain, Scope};
use super::Model;

/// The state of lowering one module: the arena the expressions go to and the scope of
/// names. Its methods live by concern: expressions in `lower_expr.rs`, calls in `call.rs`,
/// items in `items.rs`, names in `scope.rs`.
pub(super) struct Lowerer {
    /// The DAG every lowered expression goes to (the model's arena in the end).
    pub(super) arena: Arena,
    /// The names declared so far.
    pub(super) scope: Scope,
    /// Whether `der(...)` is allowed in the expression being lowered.
    pub(super) allow_velocity: bool,
    /// The value of each arena node checked so far for a non-finite constant (`None`: it
    /// depends on a symbol); the nodes past its end are unchecked.
    pub(super) consts: Vec<Option<f64>>,
    /// What a non-finite constant is reported as ("the constant `c`") while an item that
    /// must be a number is lowered; `None`: "this expression".
    pub(super) subject: Option<String>,
}

/// Lowers one parsed `mod` block to a [`Model`].
pub fn lower(module: &ast::Module) -> Result<(Model, Arena)> {
    let mut l = Lowerer {
        arena: Arena::new(),
        scope: Scope::new(&module.items),
        allow_velocity: false,
        consts: Vec::new(),
        subject: None,
    };
    let mut errors = Errors::new();
    let mut parts = Parts::default();
    for (k, item) in module.items.iter().enumerate() {
        l.scope.enter(k, item);
        // Each item is lowered on its own: its error is recorded and lowering goes on
        // with the next item, so that independent mistakes are reported together.
        if let Err(e) = l.item(item, &mut parts) {
            errors.push(e);
            l.scope.poison(item);
        }
    }
    parts.check_gravity(&mut errors);
    parts.check_joint_friction(&mut errors);
    errors.finish()?;
    if parts.coords.is_empty() {
        return Err(Error::new(
            module.span,
            format!(
                "mechanism `{}` has no coordinates: declare them with `coord NAME = nominal;`",
                module.name
            ),
        ));
    }
    // No constraints is a tree in minimal coordinates (a pendulum by its angle): D = I.
    let model = Model {
        name: plain(&module.name),
        vis: module.vis.clone(),
        docs: module.docs.clone(),
        coords: parts.coords,
        params: parts.params,
        constraints: parts.constraints,
        independent: parts.independent,
        independent_span: parts.independent_span,
        charts: parts.charts,
        velocity_constraints: parts.velocity_constraints,
        span: module.span,
        dynamics: parts.dynamics,
        outputs: parts.outputs,
        inequalities: parts.inequalities,
        joint_friction: parts.joint_friction,
    };
    Ok((model, l.arena))
}
