//! Numeric evaluation of the DAG over `f64` and over complex numbers.

use num_complex::Complex64;

use super::arena::Arena;
use super::func::Func;
use super::node::{ExprId, Node, Sym};

/// A number type the DAG can be evaluated over: `f64` for real probes and Newton
/// projection, [`Complex64`] for the unit-circle probes of static pivoting. It supplies
/// the arithmetic and the elementary functions; [`Func::eval`](super::Func::eval) picks among them, so
/// real and complex evaluation are one rule.
pub trait Scalar:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// Embeds a real constant.
    fn from_f64(v: f64) -> Self;
    /// Integer power.
    fn powi(self, n: i32) -> Self;
    /// Two-argument arctangent `atan2(self, x)`.
    fn atan2(self, x: Self) -> Self;
    /// Magnitude (absolute value or complex modulus).
    fn magnitude(self) -> f64;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Square root (principal branch).
    fn sqrt(self) -> Self;
    /// Exponential.
    fn exp(self) -> Self;
    /// Natural logarithm (principal branch).
    fn ln(self) -> Self;
    /// Absolute value: `sign(x)·x`, analytic near the point for complex numbers.
    fn abs(self) -> Self;
    /// Sign, `±1` (`f64::signum`; for complex numbers by the real part, see `csign`).
    fn signum(self) -> Self;
}

impl Scalar for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn powi(self, n: i32) -> Self {
        f64::powi(self, n)
    }
    fn atan2(self, x: Self) -> Self {
        f64::atan2(self, x)
    }
    fn magnitude(self) -> f64 {
        f64::abs(self)
    }
    fn sin(self) -> Self {
        f64::sin(self)
    }
    fn cos(self) -> Self {
        f64::cos(self)
    }
    fn tan(self) -> Self {
        f64::tan(self)
    }
    fn asin(self) -> Self {
        f64::asin(self)
    }
    fn acos(self) -> Self {
        f64::acos(self)
    }
    fn atan(self) -> Self {
        f64::atan(self)
    }
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn ln(self) -> Self {
        f64::ln(self)
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn signum(self) -> Self {
        f64::signum(self)
    }
}

/// Complex sign: `±1` by the sign of the real part (imaginary part on ties), so that
/// `|z| := sign(z)·z` is analytic near the point and agrees with `f64::abs` on the real line.
fn csign(z: Complex64) -> Complex64 {
    let s = if z.re > 0.0 || (z.re == 0.0 && z.im > 0.0) {
        1.0
    } else if z.re < 0.0 || z.im < 0.0 {
        -1.0
    } else {
        0.0
    };
    Complex64::new(s, 0.0)
}

impl Scalar for Complex64 {
    fn from_f64(v: f64) -> Self {
        Complex64::new(v, 0.0)
    }
    fn powi(self, n: i32) -> Self {
        Complex64::powi(&self, n)
    }
    fn atan2(self, x: Self) -> Self {
        // atan2(y, x) = −i ln((x + i y) / sqrt(x² + y²)); equals f64::atan2 on the real plane.
        if self.im == 0.0 && x.im == 0.0 {
            return Complex64::new(self.re.atan2(x.re), 0.0);
        }
        let i = Complex64::new(0.0, 1.0);
        let r = (x * x + self * self).sqrt();
        -i * ((x + i * self) / r).ln()
    }
    fn magnitude(self) -> f64 {
        self.norm()
    }
    fn sin(self) -> Self {
        Complex64::sin(self)
    }
    fn cos(self) -> Self {
        Complex64::cos(self)
    }
    fn tan(self) -> Self {
        Complex64::tan(self)
    }
    fn asin(self) -> Self {
        Complex64::asin(self)
    }
    fn acos(self) -> Self {
        Complex64::acos(self)
    }
    fn atan(self) -> Self {
        Complex64::atan(self)
    }
    fn sqrt(self) -> Self {
        Complex64::sqrt(self)
    }
    fn exp(self) -> Self {
        Complex64::exp(self)
    }
    fn ln(self) -> Self {
        Complex64::ln(self)
    }
    fn abs(self) -> Self {
        csign(self) * self
    }
    fn signum(self) -> Self {
        csign(self)
    }
}

/// A precomputed evaluation plan: the nodes a set of roots needs, in id order, each with
/// its operands resolved to the places of their values (the loop reads no arena node and
/// no id-to-place table per node). Reuse it to evaluate the same roots at many points
/// (Newton iterations, probes).
#[derive(Clone, Debug)]
pub struct Evaluator {
    steps: Vec<Step>,
    roots: Vec<ExprId>,
    /// Place of each root's value.
    root_slots: Vec<u32>,
    /// Nodes of the arena the plan was made from (its ids are below this).
    arena_len: usize,
}

/// One node of a plan: a [`Node`] whose operands are places of earlier values.
#[derive(Clone, Copy, Debug)]
enum Step {
    Const(f64),
    Sym(Sym),
    Add(u32, u32),
    Mul(u32, u32),
    Div(u32, u32),
    Neg(u32),
    Powi(u32, i32),
    Func(Func, u32),
    Atan2(u32, u32),
}

impl Evaluator {
    /// The expressions this evaluator computes, in the order of its results.
    pub fn roots(&self) -> &[ExprId] {
        &self.roots
    }

    /// Plans the evaluation of `roots` in `arena`.
    pub fn new(arena: &Arena, roots: &[ExprId]) -> Self {
        let mask = arena.reachable(roots);
        let mut slot = vec![u32::MAX; mask.len()];
        let mut steps = Vec::new();
        for (i, node) in arena.nodes().iter().enumerate() {
            if !mask.get(i).copied().unwrap_or(false) {
                continue;
            }
            let at = |c: ExprId| slot[c.index()];
            let step = match *node {
                Node::Const(bits) => Step::Const(f64::from_bits(bits)),
                Node::Sym(s) => Step::Sym(s),
                Node::Add(a, b) => Step::Add(at(a), at(b)),
                Node::Mul(a, b) => Step::Mul(at(a), at(b)),
                Node::Div(a, b) => Step::Div(at(a), at(b)),
                Node::Neg(a) => Step::Neg(at(a)),
                Node::Powi(a, n) => Step::Powi(at(a), n),
                Node::Func(f, a) => Step::Func(f, at(a)),
                Node::Atan2(y, x) => Step::Atan2(at(y), at(x)),
            };
            slot[i] = steps.len() as u32;
            steps.push(step);
        }
        Self {
            steps,
            roots: roots.to_vec(),
            root_slots: roots.iter().map(|r| slot[r.index()]).collect(),
            arena_len: arena.len(),
        }
    }

    /// Evaluates the roots, with symbol values from `sym`. `arena` is the arena the plan
    /// was made from, or that arena grown since (nodes never change once made).
    pub fn eval<T: Scalar>(&self, arena: &Arena, sym: &dyn Fn(Sym) -> T) -> Vec<T> {
        debug_assert!(arena.len() >= self.arena_len, "a plan of another arena");
        let mut vals: Vec<T> = Vec::with_capacity(self.steps.len());
        for step in &self.steps {
            let v = match *step {
                Step::Const(c) => T::from_f64(c),
                Step::Sym(s) => sym(s),
                Step::Add(a, b) => vals[a as usize] + vals[b as usize],
                Step::Mul(a, b) => vals[a as usize] * vals[b as usize],
                Step::Div(a, b) => vals[a as usize] / vals[b as usize],
                Step::Neg(a) => -vals[a as usize],
                Step::Powi(a, n) => vals[a as usize].powi(n),
                Step::Func(f, a) => f.eval(vals[a as usize]),
                Step::Atan2(y, x) => vals[y as usize].atan2(vals[x as usize]),
            };
            vals.push(v);
        }
        self.root_slots.iter().map(|&k| vals[k as usize]).collect()
    }
}

impl Arena {
    /// Evaluates `roots` once, with symbol values from `sym`.
    ///
    /// ```
    /// use mechgen_codegen::expr::{Arena, Sym};
    /// let mut a = Arena::new();
    /// let x = a.sym(Sym::Coord(0));
    /// let e = a.powi(x, 3);
    /// let v: Vec<f64> = a.eval(&[e], &|_| 2.0);
    /// assert_eq!(v, vec![8.0]);
    /// ```
    pub fn eval<T: Scalar>(&self, roots: &[ExprId], sym: &dyn Fn(Sym) -> T) -> Vec<T> {
        Evaluator::new(self, roots).eval(self, sym)
    }
}
