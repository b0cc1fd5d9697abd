//! Expression lowering: numbers, names, `t`, `pi`, operators, parentheses, calls (lowered
//! in `call.rs`) and `.x`/`.y`/`.z` components, to a [`Value`] of scalar roots in the
//! model's arena. Constants that fold to a non-finite number are reported where they
//! arise.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Lit, UnOp};

use super::lower::Lowerer;
use super::scope::Kind;
use super::value::{self, Value};
use crate::error::{joined, Located};
use crate::error::{Error, Result};
use crate::expr::{Arena, ExprId, Node, Sym};

impl Lowerer {
    /// Lowers one expression.
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Value> {
        match e {
            Expr::Lit(l) => self.literal(l),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Path(p) => self.path(p),
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    let v = self.expr(&u.expr)?;
                    if v.is_frame() {
                        return Err(Error::new(u.op.span(), format!("cannot negate {}: invert a frame with `inverse(F)`", v.kind())));
                    }
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
                self.call(id, &args, c.bounds())
            }
            Expr::MethodCall(m) => {
                let mut args: Vec<&Expr> = vec![&m.receiver];
                args.extend(m.args.iter());
                if m.turbofish.is_some() {
                    return Err(Error::new(m.method.span(), "turbofish is not supported"));
                }
                self.call(&m.method, &args, m.bounds())
            }
            Expr::Field(f) => self.field(f),
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

    /// A number literal (finite).
    fn literal(&mut self, l: &syn::ExprLit) -> Result<Value> {
        let a = &mut self.arena;
        match &l.lit {
            Lit::Float(f) => Ok(Value::Scalar(
                a.constant(finite_literal(f.base10_parse::<f64>()?, l)?),
            )),
            Lit::Int(i) => Ok(Value::Scalar(
                a.constant(finite_literal(i.base10_parse::<f64>()?, l)?),
            )),
            other => Err(Error::spanned(
                &other,
                "unsupported literal: only numbers (like `2`, `0.5`, `1e-3`) are supported",
            )),
        }
    }

    /// A name: `t`, `pi`/`PI` or one declared above.
    fn path(&mut self, p: &syn::ExprPath) -> Result<Value> {
        let Some(id) = p.path.get_ident() else {
            return Err(Error::new(p.span(), "unsupported path: use a plain name"));
        };
        let s = super::scope::plain(id);
        match s.as_str() {
            "t" => Ok(Value::Scalar(self.arena.sym(Sym::Time))),
            "pi" | "PI" => Ok(Value::Scalar(self.arena.constant(std::f64::consts::PI))),
            _ => match self.scope.get(&s) {
                Some(b) if b.kind == Kind::Input && !self.allow_velocity => Err(Error::new(
                    id.span(),
                    format!(
                        "the input `{s}` can only be used in `force` and `generalized_force` items (a controller sets it between intervals: constraints, bodies, outputs and `let`s cannot follow a value that jumps)"
                    ),
                )),
                Some(b) => Ok(b.value.clone()),
                None => Err(self.scope.unknown(id)),
            },
        }
    }

    /// A component `v.x`, `v.y` or `v.z` of a vector.
    fn field(&mut self, f: &syn::ExprField) -> Result<Value> {
        let v = self.expr(&f.base)?;
        let name = match &f.member {
            syn::Member::Named(n) => n.to_string(),
            syn::Member::Unnamed(i) => i.index.to_string(),
        };
        if v.is_frame() {
            return super::frame::part(&mut self.arena, &v, &name, f.member.span());
        }
        let idx = match name.as_str() {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => {
                return Err(Error::new(
                    f.member.span(),
                    format!(
                        "unknown component `.{name}`: vectors have `.x`, `.y` and (3-vectors) `.z`"
                    ),
                ))
            }
        };
        let comps = v.vector(joined(&f.base))?;
        comps.get(idx).map(|&c| Value::Scalar(c)).ok_or_else(|| {
            Error::new(
                f.member.span(),
                format!(
                    "`.{name}` of {}: a 2-vector has only `.x` and `.y`",
                    v.kind()
                ),
            )
        })
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
        let first = innermost.left.bounds().0;
        for node in spine.iter().rev() {
            let y = self.expr(&node.right)?;
            acc = self.binary_op(node, acc, y)?;
            // A constant that is not finite is reported at the smallest sub-chain holding it.
            let last = node.right.bounds().1;
            acc = self.finite(acc, (first, last))?;
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
                (f, g) if f.is_frame() || g.is_frame() => super::frame::compose(a, f, g, span),
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
                if x.is_frame() {
                    return Err(Error::new(span, format!("cannot divide {}", x.kind())));
                }
                let d = y.scalar(joined(&b.right)).map_err(|_| {
                    Error::new(
                        span,
                        format!(
                            "cannot divide by {}: the divisor must be a scalar",
                            y.kind()
                        ),
                    )
                })?;
                // A constant numerator over zero is a constant that is not finite,
                // reported by [`Self::finite`] after this operation (naming the `const` or
                // `param` when it is one); anything else over a zero constant would emit a
                // division by zero.
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

    /// Fails at `at` when lowering it created a node that is constant (it depends on no
    /// symbol) and not finite: a fold that overflowed (`1e200 * 1e200`), a constant over
    /// zero (`1.0 / 0.0`, `1.0 / sin(0.0)`), a function outside its domain (`sqrt(-1.0)`,
    /// `ln(0.0)`). The arena keeps the last two unfolded, so the value of every new node is
    /// computed from its children's (each node once, cached in `consts`). `at`, the first
    /// and the last token of the smallest expression lowered since the last check, is the
    /// offending sub-expression.
    pub(super) fn finite(&mut self, v: Value, at: (Span, Span)) -> Result<Value> {
        let nodes = self.arena.nodes();
        let mut bad = None;
        for k in self.consts.len()..nodes.len() {
            let n = nodes[k];
            let x = fold(n, &self.consts);
            if let Some(x) = x.filter(|x| !x.is_finite()) {
                bad = bad.or(Some((n, x)));
            }
            self.consts.push(x);
        }
        let Some((n, x)) = bad else { return Ok(v) };
        let cause = cause(n, &self.consts);
        let message = match &self.subject {
            Some(s) => format!(
                "{s} is not a finite number (it evaluates to {x}){}",
                cause.map(|c| format!(": {c}")).unwrap_or_default()
            ),
            None => format!(
                "this expression is not a finite number: a constant in it evaluates to {x}{}",
                cause.map(|c| format!(" ({c})")).unwrap_or_default()
            ),
        };
        Err(Error::spanned(&at, message))
    }

    /// `f(self)` with non-finite constants reported as `subject` ("the constant `c`").
    pub(super) fn about<T>(
        &mut self,
        subject: String,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let outer = self.subject.replace(subject);
        let r = f(self);
        self.subject = outer;
        r
    }

    /// A constant expression (literals, consts, `pi`) evaluated to a finite number.
    pub(super) fn constant(&mut self, e: &Expr, what: &str) -> Result<f64> {
        let v = self
            .about(what.to_string(), |l| l.expr(e))?
            .scalar(joined(e))?;
        let syms = self.arena.symbols(&[v]);
        if let Some(s) = syms.first() {
            let name = match s {
                Sym::Coord(i) | Sym::Vel(i) => self.scope.name_of(Kind::Coord, *i as usize),
                Sym::Param(i) => self.scope.name_of(Kind::Param, *i as usize),
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
}

/// The value of node `n` when it is a constant, from the values `consts` of the nodes
/// before it (`None` when it depends on a symbol).
fn fold(n: Node, consts: &[Option<f64>]) -> Option<f64> {
    let c = |id: ExprId| consts.get(id.index()).copied().flatten();
    Some(match n {
        Node::Const(bits) => f64::from_bits(bits),
        Node::Sym(_) => return None,
        Node::Add(a, b) => c(a)? + c(b)?,
        Node::Mul(a, b) => c(a)? * c(b)?,
        Node::Div(a, b) => c(a)? / c(b)?,
        Node::Neg(a) => -c(a)?,
        Node::Powi(a, k) => c(a)?.powi(k),
        Node::Func(f, a) => f.eval(c(a)?),
        Node::Atan2(y, x) => c(y)?.atan2(c(x)?),
    })
}

/// Why the constant node `n` (whose children are finite) is not finite, for the message.
fn cause(n: Node, consts: &[Option<f64>]) -> Option<String> {
    let c = |id: ExprId| consts.get(id.index()).copied().flatten();
    match n {
        Node::Const(_) => Some("beyond the range of f64".into()),
        Node::Div(_, b) if c(b) == Some(0.0) => Some("a division by zero".into()),
        Node::Func(f, a) => c(a).map(|x| format!("`{}` of {x}", f.name())),
        Node::Powi(a, k) => c(a).map(|x| format!("{x} to the power {k}")),
        _ => None,
    }
}

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
