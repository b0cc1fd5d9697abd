//! Numeric evaluation of the DAG over `f64` and over complex numbers.

use num_complex::Complex64;

use super::arena::Arena;
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

/// A precomputed evaluation plan: the nodes a set of roots needs, in id order.
/// Reuse it to evaluate the same roots at many points (Newton iterations, probes).
#[derive(Clone, Debug)]
pub struct Evaluator {
    needed: Vec<u32>,
    roots: Vec<ExprId>,
    slot: Vec<u32>,
}

impl Evaluator {
    /// The expressions this evaluator computes, in the order of its results.
    pub fn roots(&self) -> &[ExprId] {
        &self.roots
    }

    /// Plans the evaluation of `roots` in `arena`.
    pub fn new(arena: &Arena, roots: &[ExprId]) -> Self {
        let mask = arena.reachable(roots);
        let needed: Vec<u32> = (0..mask.len() as u32)
            .filter(|&i| mask[i as usize])
            .collect();
        let mut slot = vec![u32::MAX; mask.len()];
        for (k, &i) in needed.iter().enumerate() {
            slot[i as usize] = k as u32;
        }
        Self {
            needed,
            roots: roots.to_vec(),
            slot,
        }
    }

    /// Evaluates the roots, with symbol values from `sym`.
    pub fn eval<T: Scalar>(&self, arena: &Arena, sym: &dyn Fn(Sym) -> T) -> Vec<T> {
        let mut vals: Vec<T> = Vec::with_capacity(self.needed.len());
        let at = |vals: &Vec<T>, c: ExprId| vals[self.slot[c.index()] as usize];
        for &i in &self.needed {
            let v = match arena.nodes()[i as usize] {
                Node::Const(bits) => T::from_f64(f64::from_bits(bits)),
                Node::Sym(s) => sym(s),
                Node::Add(a, b) => at(&vals, a) + at(&vals, b),
                Node::Mul(a, b) => at(&vals, a) * at(&vals, b),
                Node::Div(a, b) => at(&vals, a) / at(&vals, b),
                Node::Neg(a) => -at(&vals, a),
                Node::Powi(a, n) => at(&vals, a).powi(n),
                Node::Func(f, a) => f.eval(at(&vals, a)),
                Node::Atan2(y, x) => at(&vals, y).atan2(at(&vals, x)),
            };
            vals.push(v);
        }
        self.roots.iter().map(|&r| at(&vals, r)).collect()
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
