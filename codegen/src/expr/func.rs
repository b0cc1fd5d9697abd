//! The elementary functions and everything mechgen knows about each, in one place (as
//! CasADi's `calculus.hpp`): names, evaluation over any [`Scalar`], the derivative rule,
//! the rounding gain of the probes, the cost class of the operation counts and the
//! algebraic identities local to the function.
//!
//! Adding a function means adding a variant and answering every `match` in this file;
//! no other file matches on [`Func`] for these facts.

use num_complex::Complex64;

use super::arena::Arena;
use super::eval::Scalar;
use super::node::ExprId;

/// A unary elementary function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    /// `sin x`
    Sin,
    /// `cos x`
    Cos,
    /// `tan x`
    Tan,
    /// `asin x`
    Asin,
    /// `acos x`
    Acos,
    /// `atan x`
    Atan,
    /// `sqrt x`
    Sqrt,
    /// `exp x`
    Exp,
    /// `ln x`
    Ln,
    /// `|x|`
    Abs,
    /// `sign x` (`f64::signum`: `±1` by the sign bit): the derivative of `|x|`.
    Sign,
}

/// How a function treats a negated argument: the identity `f(−x) = ±f(x)` the smart
/// constructor [`Arena::func`] applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parity {
    /// `f(−x) = f(x)`.
    Even,
    /// `f(−x) = −f(x)`.
    Odd,
    /// Neither (or not used as an identity).
    Neither,
}

/// The column of the operation counts ([`OpCount`](crate::emit::OpCount)) a call counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostClass {
    /// A square root.
    Sqrt,
    /// A trigonometric function or its inverse.
    Trig,
    /// Everything else (`exp`, `ln`, `abs`, `signum`).
    Other,
}

impl Func {
    /// All functions, for tests and tables.
    pub const ALL: [Func; 11] = [
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Asin,
        Func::Acos,
        Func::Atan,
        Func::Sqrt,
        Func::Exp,
        Func::Ln,
        Func::Abs,
        Func::Sign,
    ];

    /// The number of arguments (every `Func` is unary; two-argument functions such as
    /// `atan2` are nodes of their own).
    pub const ARITY: usize = 1;

    /// The rounding error of one call, in units of `EPS·|f(x)|`, that the probes'
    /// error bound adds (a correctly rounded result would be 1; libm gives ~2).
    pub const ROUNDING_ULPS: f64 = 2.0;

    /// The name of the `f64` method generated code calls (`x.sin()`, `x.signum()`).
    pub fn name(self) -> &'static str {
        match self {
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Asin => "asin",
            Func::Acos => "acos",
            Func::Atan => "atan",
            Func::Sqrt => "sqrt",
            Func::Exp => "exp",
            Func::Ln => "ln",
            Func::Abs => "abs",
            Func::Sign => "signum",
        }
    }

    /// The name in the `.mech` language, `None` for functions that only derivatives
    /// produce (`signum`).
    pub fn source_name(self) -> Option<&'static str> {
        match self {
            Func::Sign => None,
            f => Some(f.name()),
        }
    }

    /// The function a language name calls, if any.
    pub fn from_source_name(name: &str) -> Option<Func> {
        Func::ALL
            .into_iter()
            .find(|f| f.source_name() == Some(name))
    }

    /// `f(x)` over any [`Scalar`]: the one evaluation rule for `f64` (constant folding,
    /// Newton projection) and complex numbers (probes).
    pub fn eval<T: Scalar>(self, x: T) -> T {
        match self {
            Func::Sin => x.sin(),
            Func::Cos => x.cos(),
            Func::Tan => x.tan(),
            Func::Asin => x.asin(),
            Func::Acos => x.acos(),
            Func::Atan => x.atan(),
            Func::Sqrt => x.sqrt(),
            Func::Exp => x.exp(),
            Func::Ln => x.ln(),
            Func::Abs => x.abs(),
            Func::Sign => x.signum(),
        }
    }

    /// The derivative `f'(x)` as an expression, given the nodes `x` and `fx = f(x)`
    /// (reused where the derivative is a function of the value: `tan`, `sqrt`, `exp`).
    /// The one rule of [`Arena::diff`], [`Arena::tangent`] and [`Arena::gradient`].
    pub fn derivative(self, a: &mut Arena, x: ExprId, fx: ExprId) -> ExprId {
        let one = a.constant(1.0);
        match self {
            Func::Sin => a.cos(x),
            Func::Cos => {
                let s = a.sin(x);
                a.neg(s)
            }
            Func::Tan => {
                // 1 + tan² x
                let t2 = a.powi(fx, 2);
                a.add(one, t2)
            }
            Func::Asin | Func::Acos => {
                // ±1 / sqrt(1 − x²)
                let x2 = a.powi(x, 2);
                let r = a.sub(one, x2);
                let sq = a.sqrt(r);
                let inv = a.div(one, sq);
                if self == Func::Asin {
                    inv
                } else {
                    a.neg(inv)
                }
            }
            Func::Atan => {
                // 1 / (1 + x²)
                let x2 = a.powi(x, 2);
                let den = a.add(one, x2);
                a.div(one, den)
            }
            Func::Sqrt => {
                // 1 / (2 sqrt x)
                let two = a.constant(2.0);
                let den = a.mul(two, fx);
                a.div(one, den)
            }
            Func::Exp => fx,
            Func::Ln => a.div(one, x),
            Func::Abs => a.func(Func::Sign, x),
            Func::Sign => a.constant(0.0),
        }
    }

    /// `|f'(x)|` at a complex probe value `x` with `fx = f(x)`: how much an error in the
    /// argument grows through `f`, for the probes' rounding-error bound. The same
    /// derivative as [`Func::derivative`], written with magnitudes (`|sign|` taken as 1).
    pub fn rounding_gain(self, x: Complex64, fx: Complex64) -> f64 {
        let one = Complex64::new(1.0, 0.0);
        match self {
            Func::Sin => x.cos().norm(),
            Func::Cos => x.sin().norm(),
            Func::Tan => (one + fx * fx).norm(),
            Func::Asin | Func::Acos => 1.0 / (one - x * x).sqrt().norm(),
            Func::Atan => 1.0 / (one + x * x).norm(),
            Func::Sqrt => 0.5 / fx.norm(),
            Func::Exp => fx.norm(),
            Func::Ln => 1.0 / x.norm(),
            Func::Abs => 1.0,
            Func::Sign => 0.0,
        }
    }

    /// The column of the operation counts a call counts in.
    pub fn cost(self) -> CostClass {
        match self {
            Func::Sqrt => CostClass::Sqrt,
            Func::Sin | Func::Cos | Func::Tan | Func::Asin | Func::Acos | Func::Atan => {
                CostClass::Trig
            }
            Func::Exp | Func::Ln | Func::Abs | Func::Sign => CostClass::Other,
        }
    }

    /// The identity `f(−x) = ±f(x)` the arena applies.
    pub fn parity(self) -> Parity {
        match self {
            Func::Cos | Func::Abs => Parity::Even,
            Func::Sin | Func::Tan | Func::Asin | Func::Atan | Func::Sign => Parity::Odd,
            // acos(−x) = π − acos x: not a sign flip.
            Func::Acos | Func::Sqrt | Func::Exp | Func::Ln => Parity::Neither,
        }
    }

    /// Whether `f(f(x)) = f(x)`, an identity the arena applies (`||x|| = |x|`).
    pub fn idempotent(self) -> bool {
        matches!(self, Func::Abs)
    }

    /// Whether the argument is an angle (the function is periodic): the probes put the
    /// coordinates under such a function on the unit circle through their half-angle
    /// tangent.
    pub fn takes_angle(self) -> bool {
        matches!(self, Func::Sin | Func::Cos | Func::Tan)
    }
}
