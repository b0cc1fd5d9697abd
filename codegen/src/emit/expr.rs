//! Writing DAG nodes as Rust expressions.

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};

use super::ops::OpCount;
use super::schedule::{Binding, Schedule};
use crate::expr::{Arena, ExprId, Node, Sym};

/// The scalar type generated code computes in: `f64` (the default), `f32`, or the type
/// parameter `S` of the generic family (`#![generic]`), whose functions take any
/// `S: runtime::Real` (dual numbers, …). Types and literals are spelled through here.
#[derive(Clone, Debug)]
pub struct ScalarType {
    /// The type, e.g. `f64`, or `S` for the generic family.
    pub ty: TokenStream,
    /// The generic family's bound on `S` (`::mechgen::runtime::Real`); `None` for a
    /// concrete type.
    pub bound: Option<TokenStream>,
}

impl Default for ScalarType {
    fn default() -> Self {
        Self {
            ty: quote!(f64),
            bound: None,
        }
    }
}

impl ScalarType {
    /// A concrete scalar type (`f64`, `f32`).
    pub fn concrete(ty: TokenStream) -> Self {
        Self { ty, bound: None }
    }

    /// The type parameter `S: bound` of the generic family.
    pub fn generic(bound: TokenStream) -> Self {
        Self {
            ty: quote!(S),
            bound: Some(bound),
        }
    }

    /// Whether this is the generic family's type parameter.
    pub fn is_generic(&self) -> bool {
        self.bound.is_some()
    }

    /// The generic parameter list of a function (`<S: Real>`), empty for a concrete type.
    pub fn generics(&self) -> TokenStream {
        match &self.bound {
            Some(b) => quote!(<S: #b>),
            None => TokenStream::new(),
        }
    }

    /// The type of health figures: `f64` for the generic family (computed from the values
    /// of its pivots), the scalar itself otherwise.
    pub fn health_ty(&self) -> TokenStream {
        if self.is_generic() {
            quote!(f64)
        } else {
            self.ty.clone()
        }
    }

    /// A zero-filled `target` (`SMatrix::<T, R, C>`): `zeros()`, or for the generic
    /// family `from_fn` (the bound has no `Zero`; `from_element` goes through an iterator
    /// of clones that the compiler did not turn into a fill for `F64x4`: 5,700
    /// instructions for the Stewart platform's mass matrix).
    pub fn zeros(&self, target: &TokenStream) -> TokenStream {
        if self.is_generic() {
            quote!(#target::from_fn(|_, _| S::from_f64(0.0)))
        } else {
            quote!(#target::zeros())
        }
    }

    /// A non-negative literal of this type (of `|v|`), or `None` when `v` is not finite:
    /// infinities and NaN have no literal, and emission reports them as errors. For the
    /// generic family, the `f64` literal converted: `S::from_f64(1.5)`.
    pub fn literal(&self, v: f64) -> Option<TokenStream> {
        if !v.is_finite() {
            return None;
        }
        let a = v.abs();
        // The shortest text that reads back as the value in this type: an f64 written for an
        // f32 would carry digits the type cannot hold.
        let plain = |lit: proc_macro2::Literal| {
            if self.is_generic() {
                quote!(S::from_f64(#lit))
            } else {
                quote!(#lit)
            }
        };
        let integer = a == a.trunc() && a < 1e15;
        if integer || (1e-4..1e15).contains(&a) && self.ty.to_string() != "f32" {
            // `{a:.1}` for an integer, `{a}` otherwise: the text `f64_unsuffixed` writes
            // (`to_string`, with `.0` where it has no point), without parsing it back.
            return Some(plain(proc_macro2::Literal::f64_unsuffixed(a)));
        }
        // Left: an `f32` that is not an integer, or an `f64` outside [1e-4, 1e15).
        let s = if self.ty.to_string() == "f32" {
            let b = a as f32;
            if !b.is_finite() {
                return None;
            }
            if b == b.trunc() && b < 1e15 {
                // An f64 just off an integer that rounds to one in f32 (2.00000001 -> 2):
                // `{b}` would print `2`, an integer literal (E0277 in an f32 sum).
                format!("{b:.1}")
            } else if (1e-4..1e15).contains(&a) {
                format!("{b}")
            } else {
                format!("{b:e}")
            }
        } else {
            format!("{a:e}")
        };
        let lit = syn::LitFloat::new(&s, Span::call_site());
        Some(plain(lit.token()))
    }
}

/// Precedence of a written expression, to parenthesise only where needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Prec {
    Sum,
    Product,
    Unary,
    Atom,
}

/// Local names of input symbols in generated functions.
#[derive(Clone, Debug)]
pub(crate) struct SymNames {
    pub coord: Vec<Ident>,
    pub vel: Vec<Ident>,
    pub param: Vec<Ident>,
    /// Fields of `Params`, the parameters' names as written (raw where a keyword).
    pub field: Vec<Ident>,
}

impl SymNames {
    pub fn ident(&self, s: Sym) -> Ident {
        match s {
            Sym::Coord(i) => self.coord[i as usize].clone(),
            Sym::Vel(i) => self.vel[i as usize].clone(),
            Sym::Param(i) => self.param[i as usize].clone(),
            Sym::Time => format_ident!("t"),
            Sym::Rhs(i) => format_ident!("b_{}", i),
            Sym::Weight(i) => format_ident!("w_{}", i),
        }
    }
}

/// Writes the nodes of one schedule, counting the operations it writes.
pub(crate) struct ExprWriter<'a> {
    pub arena: &'a Arena,
    pub sched: &'a Schedule,
    pub names: &'a SymNames,
    pub scalar: &'a ScalarType,
    pub let_names: &'a [Option<Ident>],
    pub ops: OpCount,
    pub used_syms: std::collections::BTreeSet<Sym>,
    /// The first constant met that has no literal (not finite); emission fails on it.
    pub nonfinite: Option<ExprId>,
}

fn wrap(ts: TokenStream, prec: Prec, min: Prec) -> TokenStream {
    if prec < min {
        TokenStream::from(TokenTree::Group(Group::new(Delimiter::Parenthesis, ts)))
    } else {
        ts
    }
}

// Expressions are joined by moving their tokens: `quote!(#lhs + #rhs)` would copy every
// token of both sides (proc_macro2 copies an interpolated stream it does not own alone),
// once per level of a sum or product.

/// `lhs op rhs`, moving both sides.
pub(crate) fn binary(mut lhs: TokenStream, op: char, rhs: TokenStream) -> TokenStream {
    lhs.extend(std::iter::once(TokenTree::Punct(Punct::new(
        op,
        Spacing::Alone,
    ))));
    lhs.extend(rhs);
    lhs
}

/// `op x` (a unary minus), moving `x`.
fn unary(op: char, x: TokenStream) -> TokenStream {
    let mut ts = TokenStream::from(TokenTree::Punct(Punct::new(op, Spacing::Alone)));
    ts.extend(x);
    ts
}

/// A `{ … }` block of `parts` in order, moving them (interpolating a large body with
/// `quote!` copies all of its statements).
pub(crate) fn block(parts: impl IntoIterator<Item = TokenStream>) -> Group {
    let mut inner = TokenStream::new();
    for part in parts {
        inner.extend(part);
    }
    Group::new(Delimiter::Brace, inner)
}

/// `let name = e;`, moving `e`.
pub(crate) fn let_stmt(name: &Option<Ident>, e: TokenStream) -> TokenStream {
    let mut ts = quote!(let #name =);
    ts.extend(e);
    ts.extend(std::iter::once(TokenTree::Punct(Punct::new(
        ';',
        Spacing::Alone,
    ))));
    ts
}

impl ExprWriter<'_> {
    /// The expression to write where `id` is used.
    pub fn reference(&mut self, id: ExprId) -> (TokenStream, Prec) {
        match self.sched.binding[id.index()] {
            Some(Binding::Let) => match &self.let_names[id.index()] {
                Some(name) => (quote!(#name), Prec::Atom),
                None => self.definition(id),
            },
            _ => self.definition(id),
        }
    }

    fn operand(&mut self, id: ExprId, min: Prec) -> TokenStream {
        let (ts, p) = self.reference(id);
        wrap(ts, p, min)
    }

    /// The full expression computing node `id` from its children.
    pub fn definition(&mut self, id: ExprId) -> (TokenStream, Prec) {
        match self.arena.node(id) {
            Node::Const(bits) => {
                let v = f64::from_bits(bits);
                let Some(lit) = self.scalar.literal(v) else {
                    // Reported by the caller (`Body::nonfinite`); the placeholder is
                    // never returned to the user.
                    self.nonfinite.get_or_insert(id);
                    let ty = &self.scalar.health_ty();
                    return (quote!(#ty::NAN), Prec::Atom);
                };
                if v < 0.0 {
                    (quote!(-#lit), Prec::Unary)
                } else {
                    (lit, Prec::Atom)
                }
            }
            Node::Sym(s) => {
                self.used_syms.insert(s);
                let name = self.names.ident(s);
                (quote!(#name), Prec::Atom)
            }
            Node::Add(a, b) => {
                self.ops.add += 1;
                let (a, b) = match (self.arena.node(a), self.arena.node(b)) {
                    (Node::Neg(_), Node::Neg(_)) | (_, Node::Neg(_)) => (a, b),
                    (Node::Neg(_), _) => (b, a),
                    _ => (a, b),
                };
                let lhs = self.operand(a, Prec::Sum);
                if let Node::Neg(x) = self.arena.node(b) {
                    if self.sched.binding[b.index()] != Some(Binding::Let) {
                        let rhs = self.operand(x, Prec::Product);
                        return (binary(lhs, '-', rhs), Prec::Sum);
                    }
                }
                let rhs = self.operand(b, Prec::Product);
                (binary(lhs, '+', rhs), Prec::Sum)
            }
            Node::Mul(a, b) => {
                self.ops.mul += 1;
                let lhs = self.operand(a, Prec::Product);
                let rhs = self.operand(b, Prec::Unary);
                (binary(lhs, '*', rhs), Prec::Product)
            }
            Node::Div(a, b) => {
                self.ops.div += 1;
                let lhs = self.operand(a, Prec::Product);
                let rhs = self.operand(b, Prec::Unary);
                (binary(lhs, '/', rhs), Prec::Product)
            }
            Node::Neg(a) => {
                self.ops.other += 1;
                let x = self.operand(a, Prec::Unary);
                (unary('-', x), Prec::Unary)
            }
            Node::Powi(a, n) => {
                let x = self.operand(a, Prec::Atom);
                if n == i32::MIN {
                    // `|i32::MIN|` is no `i32`: the power is written as it stands.
                    self.ops.other += 1;
                    return (quote!(#x.powi(i32::MIN)), Prec::Atom);
                }
                let m = n.unsigned_abs();
                let prod = match m {
                    2 => {
                        self.ops.mul += 1;
                        (quote!(#x * #x), Prec::Product)
                    }
                    3 => {
                        self.ops.mul += 2;
                        (quote!(#x * #x * #x), Prec::Product)
                    }
                    4 => {
                        self.ops.mul += 2;
                        (quote!((#x * #x) * (#x * #x)), Prec::Product)
                    }
                    _ => {
                        self.ops.other += 1;
                        let lit = proc_macro2::Literal::i32_unsuffixed(m as i32);
                        (quote!(#x.powi(#lit)), Prec::Atom)
                    }
                };
                if n < 0 {
                    self.ops.div += 1;
                    let one = self.scalar.literal(1.0).unwrap_or_default();
                    let den = wrap(prod.0, prod.1, Prec::Unary);
                    (binary(quote!(#one), '/', den), Prec::Product)
                } else {
                    prod
                }
            }
            Node::Func(f, a) => {
                self.ops.count_call(f);
                let x = self.operand(a, Prec::Atom);
                let m = format_ident!("{}", f.name());
                (quote!(#x.#m()), Prec::Atom)
            }
            Node::Atan2(y, x) => {
                self.ops.trig += 1;
                let y = self.operand(y, Prec::Atom);
                let (x, _) = self.reference(x);
                (quote!(#y.atan2(#x)), Prec::Atom)
            }
        }
    }
}

/// An index literal without a type suffix (`q[3]`, not `q[3usize]`).
pub(crate) fn idx(i: usize) -> proc_macro2::Literal {
    proc_macro2::Literal::usize_unsuffixed(i)
}
