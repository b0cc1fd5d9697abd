//! Lowering: AST → scalar model (vectors to scalars, `let` inlined, `const` folded).
//!
//! Expressions may use: numbers, names declared earlier (`param`, `const`, `coord`,
//! `let`), `t` (time), `pi`; `+ - * /`, unary minus, parentheses; the functions `sin cos
//! tan asin acos atan atan2 sqrt exp ln abs powi` in call or method form (`sin(x)`,
//! `x.sin()`, `y.atan2(x)`, `x.powi(2)`); `vec2(a, b)`, `vec3(a, b, c)`, `v.x`, `v.y`,
//! `v.z`, `dot`, `cross`, `norm`, `norm_squared`, `rotate2d(v, θ)`, `rot_x/rot_y/rot_z(θ)`
//! (3×3 matrices, multiplied with `*`), and in force expressions `der(q)` (the velocity
//! of coordinate `q`).
//!
//! Names are compared without the `r#` of a raw identifier (`r#y` and `y` are one name);
//! a name spelled like a Rust keyword of any edition (`gen`, `r#match`) is emitted as a
//! raw identifier; `None`, `Some`, `Ok`, `Err`, `true` and `false` cannot be names (they
//! would be patterns in the generated `let`s), nor can `t`, `pi` and `PI`. Every number
//! and every constant folded from numbers must be finite. `powi` exponents are integer
//! literals with `|n| <= 1024` ([`MAX_POWI`]).
//!
//! The items of a module are lowered one by one: the error of an item is recorded and
//! lowering goes on, so independent mistakes are reported together; uses of a name whose
//! declaration failed are not reported again.

use std::collections::{HashMap, HashSet};

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, UnOp};

use super::dynamics::{Body, Dynamics, Inertia, Orientation, Spring};
use super::value::{self, Value};
use super::{Coord, Equation, Model, Param};
use crate::error::{nearest, Error, Errors, Result};
use crate::expr::{Arena, Func, Sym};
use crate::parse::ast::{self, Field, Item};

/// What a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Param,
    Const,
    Coord,
    Let,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Param => "a parameter",
            Kind::Const => "a constant",
            Kind::Coord => "a coordinate",
            Kind::Let => "a `let` binding",
        }
    }
}

struct Binding {
    kind: Kind,
    value: Value,
    index: usize,
}

/// A function of the language: its name, arity and meaning in one place, for the
/// lowering of calls, the "unknown function … did you mean" suggestion and the list of
/// supported functions in that message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Builtin {
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
    /// `der(q)`: the velocity of coordinate `q` (in forces only).
    Der,
}

impl Builtin {
    /// Every function of the language, in the order error messages list them.
    const ALL: [Builtin; 23] = [
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
        Builtin::Der,
    ];

    /// The name a call uses.
    fn name(self) -> &'static str {
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
            Builtin::Der => "der",
        }
    }

    /// The number of arguments.
    fn arity(self) -> usize {
        match self {
            Builtin::Func(_) => Func::ARITY,
            Builtin::Norm
            | Builtin::NormSquared
            | Builtin::RotX
            | Builtin::RotY
            | Builtin::RotZ
            | Builtin::Der => 1,
            Builtin::Atan2
            | Builtin::Powi
            | Builtin::Vec2
            | Builtin::Dot
            | Builtin::Cross
            | Builtin::Rotate2d => 2,
            Builtin::Vec3 => 3,
        }
    }

    /// The function a call names, if any.
    fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Names that cannot be declared.
const RESERVED: &[&str] = &["t", "pi", "PI"];

struct Lowerer {
    arena: Arena,
    names: HashMap<String, Binding>,
    order: Vec<String>,
    /// Whether `der(...)` is allowed in the expression being lowered.
    allow_velocity: bool,
    /// Names declared by items further down (with the span of the declaration), for
    /// "defined later" instead of "unknown".
    later: HashMap<String, (usize, Span)>,
    /// Names whose declaration was in error: their uses are not reported again.
    poisoned: HashSet<String>,
    /// Arena nodes already checked for non-finite constants.
    checked: usize,
}

/// A user's name as mechgen compares it: without the `r#` of a raw identifier (`r#y` and
/// `y` are one Rust identifier, so one name).
pub(crate) fn plain(id: &Ident) -> String {
    id.unraw().to_string()
}

/// The name an item declares, if any.
fn declared(item: &Item) -> Option<&Ident> {
    match item {
        Item::Param { name, .. }
        | Item::Const { name, .. }
        | Item::Coord { name, .. }
        | Item::Let { name, .. } => Some(name),
        _ => None,
    }
}

fn function_list() -> String {
    Builtin::ALL
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The source text of `e` (for labels), found without recursing along a long binary
/// chain: syn's `Spanned` and `ToTokens` recurse once per operator, so a sum of 20,000
/// terms would overflow the stack there.
///
/// Where the span does not cover the whole expression (in a proc macro on stable, a span
/// is only the first token's), the tokens printed.
fn source_text(e: &Expr) -> String {
    if deeper_than(e, crate::parse::depth::MAX_NESTING) {
        return span_of(e)
            .source_text()
            .unwrap_or_else(|| "(a long expression)".to_string());
    }
    let tokens = quote::ToTokens::to_token_stream(e).to_string();
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    match span_of(e).source_text() {
        Some(text) if squash(&text) == squash(&tokens) => text,
        _ => tokens,
    }
}

/// Whether the syntax tree of `e` is deeper than `limit` (an explicit stack: printing or
/// cloning a tree, which syn does recursively, overflows the stack on a long chain such as
/// a 20,000-term sum, also inside parentheses).
fn deeper_than(e: &Expr, limit: usize) -> bool {
    let mut stack = vec![(e, 0usize)];
    while let Some((e, d)) = stack.pop() {
        if d > limit {
            return true;
        }
        match e {
            Expr::Binary(b) => {
                stack.push((&b.left, d + 1));
                stack.push((&b.right, d + 1));
            }
            Expr::Paren(p) => stack.push((&p.expr, d + 1)),
            Expr::Group(g) => stack.push((&g.expr, d + 1)),
            Expr::Unary(u) => stack.push((&u.expr, d + 1)),
            Expr::Field(f) => stack.push((&f.base, d + 1)),
            Expr::Call(c) => {
                stack.push((&c.func, d + 1));
                stack.extend(c.args.iter().map(|a| (a, d + 1)));
            }
            Expr::MethodCall(m) => {
                stack.push((&m.receiver, d + 1));
                stack.extend(m.args.iter().map(|a| (a, d + 1)));
            }
            _ => {}
        }
    }
    false
}

/// The span of `e`, from its first to its last token where spans join (else the first
/// token), like syn's `Spanned` but with loops down the operands of binary, unary, call,
/// method and field nodes instead of printing the whole tree (which recurses once per
/// operator of a long sum).
fn span_of(e: &Expr) -> Span {
    let mut first = e;
    let first_span = loop {
        match first {
            Expr::Binary(b) => first = &b.left,
            Expr::MethodCall(m) => first = &m.receiver,
            Expr::Field(f) => first = &f.base,
            Expr::Call(c) => first = &c.func,
            Expr::Unary(u) => break u.op.span(),
            Expr::Paren(p) => break p.paren_token.span.open(),
            Expr::Lit(l) => break l.lit.span(),
            Expr::Path(p) => break p.span(),
            other => break other.span(),
        }
    };
    let mut last = e;
    let last_span = loop {
        match last {
            Expr::Binary(b) => last = &b.right,
            Expr::Unary(u) => last = &u.expr,
            Expr::MethodCall(m) => break m.paren_token.span.close(),
            Expr::Call(c) => break c.paren_token.span.close(),
            Expr::Field(f) => break f.member.span(),
            Expr::Paren(p) => break p.paren_token.span.close(),
            Expr::Lit(l) => break l.lit.span(),
            Expr::Path(p) => break p.span(),
            other => break other.span(),
        }
    };
    first_span.join(last_span).unwrap_or(first_span)
}

impl Lowerer {
    fn declare(&mut self, name: &Ident, kind: Kind, value: Value, index: usize) -> Result<()> {
        let s = plain(name);
        if super::PATTERN_NAMES.contains(&s.as_str()) {
            return Err(Error::new(
                name.span(),
                format!("`{s}` cannot be a name: generated code binds names with `let`, where `{s}` is a pattern or a keyword; choose another name"),
            ));
        }
        if s.starts_with("__mechgen") {
            return Err(Error::new(
                name.span(),
                format!("`{s}`: names starting with `__mechgen` are reserved for generated code; choose another name"),
            ));
        }
        if RESERVED.contains(&s.as_str()) {
            return Err(Error::new(
                name.span(),
                format!("`{s}` is reserved (`t` is time, `pi` is π); choose another name"),
            ));
        }
        if let Some(b) = self.names.get(&s) {
            return Err(Error::new(
                name.span(),
                format!(
                    "`{s}` is declared twice: it is already {}",
                    b.kind.describe()
                ),
            ));
        }
        self.order.push(s.clone());
        self.names.insert(s, Binding { kind, value, index });
        Ok(())
    }

    fn unknown(&self, id: &Ident) -> Error {
        let s = plain(id);
        if self.poisoned.contains(&s) {
            return Error::cascade(id.span(), format!("`{s}` is in error above"));
        }
        if let Some((_, at)) = self.later.get(&s) {
            let line = at.start().line;
            let where_ = if line > 0 {
                format!(" (line {line})")
            } else {
                String::new()
            };
            return Error::new(
                id.span(),
                format!(
                    "`{s}` is used before its declaration{where_}: declare it above its first use"
                ),
            );
        }
        let mut known: Vec<&str> = self.order.iter().map(|s| s.as_str()).collect();
        known.extend(["t", "pi"]);
        let hint = match nearest(&s, known.iter().copied()) {
            Some(n) => format!("; did you mean `{n}`?"),
            None => String::new(),
        };
        let fun = if Builtin::from_name(&s).is_some() {
            format!(" (`{s}` is a function: call it, e.g. `{s}(x)`)")
        } else {
            String::new()
        };
        Error::new(id.span(), format!("unknown name `{s}`{hint}{fun}"))
    }

    fn expr(&mut self, e: &Expr) -> Result<Value> {
        let a = &mut self.arena;
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Float(f) => Ok(Value::Scalar(a.constant(finite_literal(f.base10_parse::<f64>()?, l)?))),
                Lit::Int(i) => Ok(Value::Scalar(a.constant(finite_literal(i.base10_parse::<f64>()?, l)?))),
                other => Err(Error::spanned(
                    &other,
                    "unsupported literal: only numbers (like `2`, `0.5`, `1e-3`) are supported",
                )),
            },
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Path(p) => {
                let Some(id) = p.path.get_ident() else {
                    return Err(Error::new(p.span(), "unsupported path: use a plain name"));
                };
                let s = plain(id);
                match s.as_str() {
                    "t" => Ok(Value::Scalar(a.sym(Sym::Time))),
                    "pi" | "PI" => Ok(Value::Scalar(a.constant(std::f64::consts::PI))),
                    _ => match self.names.get(&s) {
                        Some(b) => Ok(b.value.clone()),
                        None => Err(self.unknown(id)),
                    },
                }
            }
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    let v = self.expr(&u.expr)?;
                    Ok(value::negate(&mut self.arena, &v))
                }
                _ => Err(Error::new(u.op.span(), "unsupported operator: only unary `-` is supported")),
            },
            Expr::Binary(b) => self.binary(b),
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else {
                    return Err(Error::spanned(&c.func, "only named functions can be called"));
                };
                let Some(id) = p.path.get_ident() else {
                    return Err(Error::new(p.span(), "unsupported path: use a plain function name"));
                };
                let args: Vec<&Expr> = c.args.iter().collect();
                self.call(id, &args, c.span())
            }
            Expr::MethodCall(m) => {
                let mut args: Vec<&Expr> = vec![&m.receiver];
                args.extend(m.args.iter());
                if m.turbofish.is_some() {
                    return Err(Error::new(m.method.span(), "turbofish is not supported"));
                }
                self.call(&m.method, &args, m.span())
            }
            Expr::Field(f) => {
                let v = self.expr(&f.base)?;
                let name = match &f.member {
                    syn::Member::Named(n) => n.to_string(),
                    syn::Member::Unnamed(i) => i.index.to_string(),
                };
                let idx = match name.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => {
                        return Err(Error::new(
                            f.member.span(),
                            format!("unknown component `.{name}`: vectors have `.x`, `.y` and (3-vectors) `.z`"),
                        ))
                    }
                };
                let comps = v.vector(span_of(&f.base))?;
                comps.get(idx).map(|&c| Value::Scalar(c)).ok_or_else(|| {
                    Error::new(f.member.span(), format!("`.{name}` of {}: a 2-vector has only `.x` and `.y`", v.kind()))
                })
            }
            Expr::Assign(asg) => Err(Error::spanned(
                &asg,
                "`=` is not an equation: write `lhs == rhs` in a constraint",
            )),
            other => Err(Error::spanned(
                &other,
                "unsupported syntax; expressions may use numbers, names, `t`, `pi`, `+ - * /`, unary `-`, parentheses, function calls (`sin(x)` or `x.sin()`) and `.x`/`.y`/`.z`",
            )),
        }
    }

    /// Checks that `b`'s operator is one the language supports (`+ - * /`).
    fn check_op(b: &syn::ExprBinary) -> Result<()> {
        let span = b.op.span();
        match b.op {
            BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) => {}
            BinOp::BitXor(_) => {
                return Err(Error::new(
                    span,
                    "`^` is not a power in Rust; write `powi(x, 2)` or `x.powi(2)`",
                ))
            }
            BinOp::Eq(_) => {
                return Err(Error::new(
                    span,
                    "`==` is only allowed once, at the top of a `constraint`",
                ))
            }
            _ => return Err(Error::new(
                span,
                "unsupported operator; supported are `+`, `-`, `*`, `/` (and `==` in constraints)",
            )),
        }
        Ok(())
    }

    /// Lowers a binary expression. A left-nested chain of arithmetic (`a + b - c + ...`,
    /// `a * b * ...`, which syn builds as a tree as deep as the chain is long) is lowered
    /// iteratively (see [`arithmetic_spine`]), so its length does not consume stack;
    /// right operands and the innermost left operand recurse as usual (their depth is
    /// bounded by the nesting check of the parser).
    fn binary(&mut self, b: &syn::ExprBinary) -> Result<Value> {
        let spine = arithmetic_spine(b);
        for node in &spine {
            Self::check_op(node)?;
        }
        // `spine` runs from `b` inwards (never empty); the innermost left operand is not
        // an arithmetic binary node.
        let innermost = spine.last().copied().unwrap_or(b);
        let mut acc = self.expr(&innermost.left)?;
        let first = span_of(&innermost.left);
        for node in spine.iter().rev() {
            let y = self.expr(&node.right)?;
            acc = self.binary_op(node, acc, y)?;
            // A constant that overflowed is reported at the smallest sub-chain holding it.
            let last = span_of(&node.right);
            acc = self.finite(acc, first.join(last).unwrap_or(first))?;
        }
        Ok(acc)
    }

    /// `x op y` for the operator of `b` (checked by [`Self::check_op`]).
    fn binary_op(&mut self, b: &syn::ExprBinary, x: Value, y: Value) -> Result<Value> {
        let span = b.op.span();
        let a = &mut self.arena;
        match b.op {
            BinOp::Add(_) => value::zip(a, &x, &y, span, "add", Arena::add),
            BinOp::Sub(_) => value::zip(a, &x, &y, span, "subtract", Arena::sub),
            BinOp::Mul(_) => match (&x, &y) {
                (Value::Scalar(s), v) | (v, Value::Scalar(s)) => Ok(value::scale(a, *s, v)),
                (Value::Mat3(m), v) => value::mat_mul(a, m, v, span),
                _ => Err(Error::new(
                    span,
                    format!(
                        "cannot multiply {} by {}; use `dot(a, b)` or `cross(a, b)` for vectors",
                        x.kind(),
                        y.kind()
                    ),
                )),
            },
            _ => {
                let d = y.scalar(span_of(&b.right)).map_err(|_| {
                    Error::new(
                        span,
                        format!(
                            "cannot divide by {}: the divisor must be a scalar",
                            y.kind()
                        ),
                    )
                })?;
                // A constant numerator over zero is left to the finiteness checks of
                // `const` and `param` (which name the item); anything else over a zero
                // constant would emit a division by zero.
                if a.as_const(d) == Some(0.0) && !x.exprs().iter().all(|&e| a.as_const(e).is_some())
                {
                    return Err(Error::spanned(
                        &b.right,
                        "division by zero: the divisor is the constant 0",
                    ));
                }
                match &x {
                    Value::Scalar(s) => Ok(Value::Scalar(a.div(*s, d))),
                    v => {
                        let one = a.constant(1.0);
                        let inv = a.div(one, d);
                        Ok(value::scale(a, inv, v))
                    }
                }
            }
        }
    }

    /// Fails at `at` when lowering it created a constant that is not finite (folding
    /// `1e200 * 1e200`, say); each arena node is inspected once.
    fn finite(&mut self, v: Value, at: Span) -> Result<Value> {
        let nodes = self.arena.nodes();
        let bad = nodes[self.checked.min(nodes.len())..]
            .iter()
            .find_map(|n| match n {
                crate::expr::Node::Const(bits) if !f64::from_bits(*bits).is_finite() => {
                    Some(f64::from_bits(*bits))
                }
                _ => None,
            });
        self.checked = nodes.len();
        match bad {
            Some(x) => Err(Error::new(
                at,
                format!("this expression is not a finite number: a constant in it evaluates to {x} (beyond the range of f64)"),
            )),
            None => Ok(v),
        }
    }

    fn call(&mut self, name: &Ident, args: &[&Expr], span: Span) -> Result<Value> {
        let v = self.call_value(name, args, span)?;
        self.finite(v, span)
    }

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
                let x = self.expr(args[0])?.scalar(span_of(args[0]))?;
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
        let scalar = |i: usize| vals[i].scalar(span_of(args[i]));
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
                let (x, y) = (vals[0].vector(span_of(args[0]))?, vals[1].vector(span_of(args[1]))?);
                if x.len() != y.len() {
                    return Err(Error::new(span, format!("`dot` of {} and {}: both must have the same size", vals[0].kind(), vals[1].kind())));
                }
                Ok(Value::Scalar(value::dot(a, &x, &y)))
            }
            Builtin::Cross => match (&vals[0], &vals[1]) {
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
                    format!("`cross` takes two 3-vectors (or two 2-vectors, giving the scalar z component), found {} and {}", vals[0].kind(), vals[1].kind()),
                )),
            },
            Builtin::Norm | Builtin::NormSquared => {
                let x = vals[0].vector(span_of(args[0]))?;
                let n2 = value::dot(a, &x, &x);
                Ok(Value::Scalar(if builtin == Builtin::Norm { a.sqrt(n2) } else { n2 }))
            }
            Builtin::Rotate2d => {
                let Value::Vec2(v) = &vals[0] else {
                    return Err(Error::new(span_of(args[0]), format!("`rotate2d` rotates a 2-vector, found {}", vals[0].kind())));
                };
                let th = scalar(1)?;
                let (c, sn) = (a.cos(th), a.sin(th));
                let xc = a.mul(v[0], c);
                let ys = a.mul(v[1], sn);
                let xs = a.mul(v[0], sn);
                let yc = a.mul(v[1], c);
                Ok(Value::Vec2([a.sub(xc, ys), a.add(xs, yc)]))
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
            // Lowered by `call_value` before their arguments are.
            Builtin::Der | Builtin::Powi => Err(Error::new(name.span(), format!("unknown function `{s}`"))),
        }
    }

    fn der(&mut self, arg: &Expr) -> Result<Value> {
        if !self.allow_velocity {
            return Err(Error::spanned(
                &arg,
                "`der(...)` (a velocity) is only allowed in forces: constraints, positions and orientations depend on coordinates and time only",
            ));
        }
        let coord = match arg {
            Expr::Path(p) => p.path.get_ident().and_then(|id| {
                self.names
                    .get(&plain(id))
                    .filter(|b| b.kind == Kind::Coord)
                    .map(|b| b.index)
            }),
            _ => None,
        };
        match coord {
            Some(i) => Ok(Value::Scalar(self.arena.sym(Sym::Vel(i as u32)))),
            None => Err(Error::spanned(
                &arg,
                "`der` takes a coordinate name: `der(theta)` is the velocity of `theta`",
            )),
        }
    }

    /// A constant expression (literals, consts, `pi`) evaluated to a finite number.
    fn constant(&mut self, e: &Expr, what: &str) -> Result<f64> {
        let v = self.expr(e)?.scalar(span_of(e))?;
        let syms = self.arena.symbols(&[v]);
        if let Some(s) = syms.first() {
            let name = match s {
                Sym::Coord(i) | Sym::Vel(i) => self.name_of(Kind::Coord, *i as usize),
                Sym::Param(i) => self.name_of(Kind::Param, *i as usize),
                _ => "t".to_string(),
            };
            return Err(Error::spanned(
                &e,
                format!("{what} must be a constant expression, but it depends on `{name}`"),
            ));
        }
        let x = self.arena.eval(&[v], &|_| 0.0f64)[0];
        if !x.is_finite() {
            return Err(Error::spanned(
                &e,
                format!("{what} is not a finite number (it evaluates to {x})"),
            ));
        }
        Ok(x)
    }

    fn name_of(&self, kind: Kind, index: usize) -> String {
        self.names
            .iter()
            .find(|(_, b)| b.kind == kind && b.index == index)
            .map(|(n, _)| n.clone())
            .unwrap_or_default()
    }

    fn coord_index(&self, id: &Ident) -> Result<usize> {
        let s = plain(id);
        if s == "t" {
            return Err(Error::new(
                id.span(),
                "`t` is time, not a coordinate: name a coordinate declared with `coord`",
            ));
        }
        match self.names.get(&s) {
            Some(b) if b.kind == Kind::Coord => Ok(b.index),
            Some(b) => Err(Error::new(
                id.span(),
                format!("`{id}` is {}, not a coordinate", b.kind.describe()),
            )),
            None => Err(self.unknown(id)),
        }
    }

    fn field_map<'f>(
        &self,
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
}

/// Largest `|n|` accepted in `x.powi(n)`: `2^1024` overflows `f64`, so larger exponents
/// only make sense for bases in (1/2, 2); products of powers (`x^a · x^b`) may exceed it,
/// with checked arithmetic.
pub const MAX_POWI: i32 = 1024;

/// A literal's value, which must be finite (`1e400` is not).
fn finite_literal(x: f64, lit: &syn::ExprLit) -> Result<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(Error::spanned(
            lit,
            format!(
                "the number `{}` is beyond the range of f64 (it would be {x})",
                quote::ToTokens::to_token_stream(lit)
            ),
        ))
    }
}

/// The left spine of a chain of supported arithmetic (`+ - * /`): `b`, then its left
/// operand while that is a binary `+ - * /` node, and so on, outermost first. Walked with
/// a loop, so a sum of 20,000 terms costs no stack.
fn arithmetic_spine(b: &syn::ExprBinary) -> Vec<&syn::ExprBinary> {
    let mut spine = vec![b];
    let mut cur = b;
    while let Expr::Binary(inner) = &*cur.left {
        if !matches!(
            inner.op,
            BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
        ) {
            break;
        }
        spine.push(inner);
        cur = inner;
    }
    spine
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

/// Lowers one parsed `mod` block to a [`Model`].
pub fn lower(module: &ast::Module) -> Result<Model> {
    let mut l = Lowerer {
        arena: Arena::new(),
        names: HashMap::new(),
        order: Vec::new(),
        allow_velocity: false,
        later: HashMap::new(),
        poisoned: HashSet::new(),
        checked: 0,
    };
    for (k, item) in module.items.iter().enumerate() {
        if let Some(n) = declared(item) {
            l.later.entry(plain(n)).or_insert((k, n.span()));
        }
    }
    let mut errors = Errors::new();
    let mut gravity_expr: Option<&Expr> = None;
    let mut coords: Vec<Coord> = Vec::new();
    let mut params: Vec<Param> = Vec::new();
    let mut constraints = Vec::new();
    let mut independent = Vec::new();
    let mut independent_span = None;
    let mut dynamics = Dynamics::default();
    for (k, item) in module.items.iter().enumerate() {
        if let Some(n) = declared(item) {
            // From here on the name is no longer "declared later".
            let s = plain(n);
            if l.later.get(&s).is_some_and(|&(at, _)| at == k) {
                l.later.remove(&s);
            }
        }
        // Each item is lowered on its own: its error is recorded and lowering goes on
        // with the next item, so that independent mistakes are reported together.
        let mut lower_item = || -> Result<()> {
            match item {
                Item::Param {
                    docs,
                    name,
                    default,
                } => {
                    let d = match default {
                        Some(e) => Some(l.constant(e, "a parameter default")?),
                        None => None,
                    };
                    let i = params.len();
                    let v = Value::Scalar(l.arena.sym(Sym::Param(i as u32)));
                    l.declare(name, Kind::Param, v, i)?;
                    params.push(Param {
                        name: plain(name),
                        default: d,
                        docs: docs.clone(),
                        span: name.span(),
                    });
                }
                Item::Const { name, value } => {
                    let v = l.expr(value)?;
                    let mut comps = Vec::new();
                    for c in v.exprs() {
                        let syms = l.arena.symbols(&[c]);
                        if !syms.is_empty() {
                            return Err(Error::spanned(&value, "a `const` must be a constant expression (numbers, `pi` and other consts); use `param` or `let` for values that depend on parameters or coordinates"));
                        }
                        let x = l.arena.eval(&[c], &|_| 0.0f64)[0];
                        if !x.is_finite() {
                            return Err(Error::spanned(&value, format!("the constant `{name}` is not a finite number (it evaluates to {x})")));
                        }
                        comps.push(l.arena.constant(x));
                    }
                    let folded = match v {
                        Value::Mat3(_) => v,
                        _ => Value::from_vec(&comps),
                    };
                    l.declare(name, Kind::Const, folded, 0)?;
                }
                Item::Coord { name, nominal } => {
                    let n = match nominal {
                        Some(e) => l.constant(e, "a coordinate's nominal value")?,
                        None => 0.0,
                    };
                    let i = coords.len();
                    let v = Value::Scalar(l.arena.sym(Sym::Coord(i as u32)));
                    l.declare(name, Kind::Coord, v, i)?;
                    coords.push(Coord {
                        name: plain(name),
                        nominal: n,
                        span: name.span(),
                    });
                }
                Item::Let { name, value } => {
                    let v = l.expr(value)?;
                    l.declare(name, Kind::Let, v, 0)?;
                }
                Item::Constraint { equation } => {
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
                    let lhs = l.expr(&b.left)?;
                    let rhs = l.expr(&b.right)?;
                    let text = source_text(equation);
                    let (lc, rc) = match (lhs.components(), rhs.components()) {
                        (Some(x), Some(y)) if x.len() == y.len() => (x, y),
                        _ => {
                            return Err(Error::new(
                                b.op.span(),
                                format!(
                                    "the two sides of the equation differ: {} == {}",
                                    lhs.kind(),
                                    rhs.kind()
                                ),
                            ))
                        }
                    };
                    let axes = ["x", "y", "z"];
                    for (k, (&x, &y)) in lc.iter().zip(&rc).enumerate() {
                        let e = l.arena.sub(x, y);
                        let label = if lc.len() == 1 {
                            text.clone()
                        } else {
                            format!("{text} [{}]", axes[k])
                        };
                        constraints.push(Equation {
                            expr: e,
                            label,
                            span: span_of(equation),
                        });
                    }
                }
                Item::Independent { names, span } => {
                    if independent_span.is_some() {
                        return Err(Error::new(
                            *span,
                            "only one `independent` item is allowed; list all coordinates in it",
                        ));
                    }
                    independent_span = Some(*span);
                    for n in names {
                        let i = l.coord_index(n)?;
                        if independent.contains(&i) {
                            return Err(Error::new(n.span(), format!("`{n}` is listed twice")));
                        }
                        independent.push(i);
                    }
                }
                Item::Body { name, fields } => {
                    let m = l.field_map(
                        fields,
                        &["mass", "inertia", "com", "angle", "rotation"],
                        "body",
                    )?;
                    let get = |k: &str| m.get(k).copied();
                    let mass_f = get("mass").ok_or_else(|| {
                        Error::new(name.span(), format!("body `{name}` needs a `mass`"))
                    })?;
                    let com_f = get("com").ok_or_else(|| {
                        Error::new(
                            name.span(),
                            format!("body `{name}` needs a `com` (centre-of-mass position)"),
                        )
                    })?;
                    let mass = l.expr(&mass_f.value)?.scalar(span_of(&mass_f.value))?;
                    let com = l.expr(&com_f.value)?.vector(span_of(&com_f.value))?;
                    let orientation = match (get("angle"), get("rotation")) {
                    (Some(f), None) => Some(Orientation::Angle(l.expr(&f.value)?.scalar(span_of(&f.value))?)),
                    (None, Some(f)) => match l.expr(&f.value)? {
                        Value::Mat3(r) => Some(Orientation::Rotation(r)),
                        other => return Err(Error::spanned(&f.value, format!("`rotation` must be a 3×3 rotation matrix (`rot_z(a) * rot_x(b)`), found {}", other.kind()))),
                    },
                    (Some(f), Some(_)) => return Err(Error::new(f.name.span(), "give either `angle` (planar) or `rotation` (spatial), not both")),
                    (None, None) => None,
                };
                    let inertia = match get("inertia") {
                    None => None,
                    Some(f) => Some(match (l.expr(&f.value)?, &orientation) {
                        (Value::Scalar(i), Some(Orientation::Angle(_))) => Inertia::Planar(i),
                        (Value::Vec3(i), Some(Orientation::Rotation(_))) => Inertia::Principal(i),
                        (v, Some(Orientation::Angle(_))) => return Err(Error::spanned(&f.value, format!("a planar body's inertia is a scalar, found {}", v.kind()))),
                        (v, Some(Orientation::Rotation(_))) => return Err(Error::spanned(&f.value, format!("a spatial body's inertia is a 3-vector of principal moments, found {}", v.kind()))),
                        (_, None) => return Err(Error::new(f.name.span(), "a body with `inertia` needs an `angle` (planar) or a `rotation` (spatial)")),
                    }),
                };
                    match (&orientation, com.len()) {
                    (Some(Orientation::Angle(_)), 3) => return Err(Error::spanned(&com_f.value, format!("body `{name}` is planar (it has an `angle`) but its `com` is a 3-vector: give a 2-vector, or a `rotation` for a spatial body"))),
                    (Some(Orientation::Rotation(_)), 2) => return Err(Error::spanned(&com_f.value, format!("body `{name}` is spatial (it has a `rotation`) but its `com` is a 2-vector: give a 3-vector, or an `angle` for a planar body"))),
                    _ => {}
                }
                    dynamics.bodies.push(Body {
                        name: plain(name),
                        mass,
                        inertia,
                        com,
                        orientation,
                        span: name.span(),
                    });
                }
                Item::Gravity { value, span } => {
                    if dynamics.gravity.is_some() {
                        return Err(Error::new(*span, "gravity is given twice"));
                    }
                    dynamics.gravity = Some(l.expr(value)?.vector(span_of(value))?);
                    gravity_expr = Some(value);
                }
                Item::Spring { name, fields } => {
                    let m = l.field_map(
                        fields,
                        &["a", "b", "stiffness", "length", "damping"],
                        "spring",
                    )?;
                    let need = |k: &str| {
                        m.get(k).copied().ok_or_else(|| Error::new(name.span(), format!("spring `{name}` needs `{k}` (fields: a, b, stiffness, length, damping)")))
                    };
                    let (fa, fb, fk, fl) =
                        (need("a")?, need("b")?, need("stiffness")?, need("length")?);
                    let a = l.expr(&fa.value)?.vector(span_of(&fa.value))?;
                    let b = l.expr(&fb.value)?.vector(span_of(&fb.value))?;
                    if a.len() != b.len() {
                        return Err(Error::spanned(
                            &fb.value,
                            "the two end points of a spring must have the same dimension",
                        ));
                    }
                    let stiffness = l.expr(&fk.value)?.scalar(span_of(&fk.value))?;
                    let length = l.expr(&fl.value)?.scalar(span_of(&fl.value))?;
                    let damping = match m.get("damping") {
                        Some(f) => l.expr(&f.value)?.scalar(span_of(&f.value))?,
                        None => l.arena.constant(0.0),
                    };
                    dynamics.springs.push(Spring {
                        name: plain(name),
                        a,
                        b,
                        stiffness,
                        length,
                        damping,
                        span: name.span(),
                    });
                }
                Item::Force { coord, value } => {
                    let i = l.coord_index(coord)?;
                    l.allow_velocity = true;
                    let v = l.expr(value).and_then(|v| v.scalar(span_of(value)));
                    l.allow_velocity = false;
                    dynamics.coord_forces.push((i, v?));
                }
                Item::MassMatrix { entries } => {
                    for (r, c, e) in entries {
                        let (i, j) = (l.coord_index(r)?, l.coord_index(c)?);
                        let v = l.expr(e)?.scalar(span_of(e))?;
                        let (i, j) = if i <= j { (i, j) } else { (j, i) };
                        if dynamics
                            .explicit_mass
                            .iter()
                            .any(|&(a, b, _)| (a, b) == (i, j))
                        {
                            return Err(Error::new(r.span(), format!("mass matrix entry ({r}, {c}) is given twice (the matrix is symmetric: give each pair once)")));
                        }
                        dynamics.explicit_mass.push((i, j, v));
                    }
                }
                Item::GeneralizedForce { entries } => {
                    for f in entries {
                        let i = l.coord_index(&f.name)?;
                        l.allow_velocity = true;
                        let v = l.expr(&f.value).and_then(|v| v.scalar(span_of(&f.value)));
                        l.allow_velocity = false;
                        dynamics.explicit_force.push((i, v?));
                    }
                }
            }
            Ok(())
        };
        if let Err(e) = lower_item() {
            errors.push(e);
            if let Some(n) = declared(item) {
                let s = plain(n);
                if !l.names.contains_key(&s) {
                    l.poisoned.insert(s);
                }
            }
        }
    }
    if let (Some(g), Some(gexpr)) = (&dynamics.gravity, gravity_expr) {
        // Gravity acts on every body: its dimension must be each body's.
        for b in &dynamics.bodies {
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
    errors.finish()?;
    if coords.is_empty() {
        return Err(Error::new(
            module.span,
            format!(
                "mechanism `{}` has no coordinates: declare them with `coord NAME = nominal;`",
                module.name
            ),
        ));
    }
    // No constraints is a tree in minimal coordinates (a pendulum by its angle): D = I.
    Ok(Model {
        name: plain(&module.name),
        vis: module.vis.clone(),
        docs: module.docs.clone(),
        coords,
        params,
        constraints,
        independent,
        independent_span,
        span: module.span,
        dynamics,
        arena: l.arena,
    })
}

#[cfg(test)]
mod builtin_tests {
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
             cross, norm, norm_squared, rotate2d, rot_x, rot_y, rot_z, der"
        );
    }
}
