//! The scalar generated code can compute in: [`Real`], implemented for `f64`, `f32` and
//! the forward-mode dual numbers [`Dual`](crate::Dual).
//!
//! A module generated with `#![generic]` holds, besides its `f64` functions, a `generic`
//! submodule whose functions take any `S: Real` (`generic::residual::<Dual<4>>(…)`). The
//! trait is what their straight-line bodies need: the four operations and negation,
//! constants from `f64` literals, the elementary functions of the language, and the
//! value (real part) that health figures and convergence tests read.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// The smaller of `a` and `b` by `<`: `b` unless `a < b`.
///
/// Generated health figures take the smallest pivot with it: one `minsd` on x86-64, where
/// `f64::min` (which returns the other operand for a NaN) costs four instructions more.
/// Their inputs are checked finite beside it, so NaN handling is not needed there.
///
/// ```
/// assert_eq!(mechgen_runtime::__generated::lesser(2.0, -1.0), -1.0);
/// assert_eq!(mechgen_runtime::__generated::lesser(1.5f32, 3.0), 1.5);
/// ```
#[inline(always)]
pub fn lesser<T: PartialOrd>(a: T, b: T) -> T {
    if a < b {
        a
    } else {
        b
    }
}

/// The health figure of a generated null-space basis: `lesser(min_pivot / scale, 1)` when
/// `check` (the sum of the basis's inputs: its variable pivots, the angles of its folded
/// entries and `scale`) is finite and `scale` (the norm of the pivot rows' entries) is
/// positive, else 0. A call in place of an `if`, so that the generated body stays a
/// sequence of statements (printed without a syntax tree; the same instructions once
/// inlined).
///
/// ```
/// use mechgen_runtime::__generated::health;
/// assert_eq!(health(3.0, 2.0, 1.0), 0.5);
/// assert_eq!(health(3.0, 2.0, 4.0), 1.0);
/// assert_eq!(health(f64::NAN, 2.0, 1.0), 0.0);
/// assert_eq!(health(3.0, 0.0, 1.0), 0.0);
/// ```
#[inline(always)]
pub fn health(check: f64, scale: f64, min_pivot: f64) -> f64 {
    if check.is_finite() && scale > 0.0 {
        lesser(min_pivot / scale, 1.0)
    } else {
        0.0
    }
}

/// [`health`] in `f32` (modules generated with `#![scalar = f32]`).
///
/// ```
/// use mechgen_runtime::__generated::health_f32;
/// assert_eq!(health_f32(3.0, 2.0, 1.0), 0.5);
/// assert_eq!(health_f32(f32::INFINITY, 2.0, 1.0), 0.0);
/// ```
#[inline(always)]
pub fn health_f32(check: f32, scale: f32, min_pivot: f32) -> f32 {
    if check.is_finite() && scale > 0.0 {
        lesser(min_pivot / scale, 1.0)
    } else {
        0.0
    }
}

/// The smallest of `first` and `rest` by [`lesser`], left to right.
///
/// ```
/// assert_eq!(mechgen_runtime::__generated::smallest(3.0, [1.0, 2.0, -0.5]), -0.5);
/// assert_eq!(mechgen_runtime::__generated::smallest(3.0, []), 3.0);
/// ```
#[inline(always)]
pub fn smallest<T: PartialOrd + Copy, const N: usize>(first: T, rest: [T; N]) -> T {
    let mut m = first;
    for v in rest {
        m = lesser(m, v);
    }
    m
}

/// A real scalar for generated code: `f64`, `f32`, or [`Dual`](crate::Dual) numbers
/// carrying derivatives.
///
/// Every method has the meaning of the `f64` method of the same name (`atan2` is
/// `self.atan2(x)` = atan2(self, x)); [`Real::value`] is the number itself for `f64`
/// and `f32`, the real part for a dual number.
///
/// ```
/// use mechgen_runtime::{Dual, Real};
/// // d/dx (x sin x) at x = 2, by one evaluation over a dual number.
/// let x = Dual::<1>::variable(2.0, 0);
/// let y = x * x.sin();
/// assert!((y.eps[0] - (2f64.sin() + 2.0 * 2f64.cos())).abs() < 1e-15);
/// assert_eq!(y.value(), 2.0 * 2f64.sin());
/// ```
pub trait Real:
    Copy
    + Debug
    + PartialEq
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// Whether the type carries derivatives (dual numbers): iterations that converge on the
    /// values then take one step in this type to get exact derivatives (see
    /// [`step_generic`](crate::step::step_generic)).
    const DERIVATIVES: bool = false;
    /// The type that value-level figures (a basis's health) are computed in: `f64` for the
    /// scalars and dual numbers (their values), the lanes themselves for
    /// [`F64x4`](crate::F64x4) (a figure per lane; its [`Real::value`] is the worst lane's).
    type Part: Real;
    /// The constant `v` (generated code writes every literal through this).
    fn from_f64(v: f64) -> Self;
    /// `self` as a [`Real::Part`]: the value, or the lanes.
    fn part(self) -> Self::Part;
    /// The smaller of the two (by value for dual numbers, lane by lane for lanes; as
    /// `f64::min`, a NaN operand gives the other).
    fn min(self, other: Self) -> Self;
    /// The value as an `f64`: the number itself, or a dual number's real part.
    fn value(self) -> f64;
    /// Whether the number is exactly zero (for a dual number: its value and every
    /// derivative), so that products with it can be skipped.
    #[inline(always)]
    fn is_zero(self) -> bool {
        self.value() == 0.0
    }
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// `(sin x, cos x)` from one argument reduction where the type can.
    fn sin_cos(self) -> (Self, Self);
    /// Tangent.
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Four-quadrant arctangent of `self / x`.
    fn atan2(self, x: Self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Exponential.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `±1` by the sign bit (as `f64::signum`).
    fn signum(self) -> Self;
    /// Integer power.
    fn powi(self, n: i32) -> Self;
}

/// One-argument methods `name(self) -> Self` of an implementation of [`Real`], each
/// `name => f` as `f(self)`, always inlined.
macro_rules! unary_methods {
    ($($name:ident => $f:expr),* $(,)?) => {$(
        #[inline(always)]
        fn $name(self) -> Self {
            $f(self)
        }
    )*};
}
pub(crate) use unary_methods;

/// `Real` for a primitive float: the inherent methods with `std`, the `libm` functions
/// without (`no_std`); `sin_cos` by the given function.
macro_rules! float_real {
    ($t:ty, $sin_cos:expr, $libm:ident, [$sin:ident, $cos:ident, $tan:ident, $asin:ident, $acos:ident,
     $atan:ident, $atan2:ident, $sqrt:ident, $exp:ident, $ln:ident, $powi:ident]) => {
        impl Real for $t {
            type Part = f64;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn part(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline(always)]
            fn value(self) -> f64 {
                self as f64
            }
            unary_methods!(
                sin => $libm::$sin,
                cos => $libm::$cos,
                tan => $libm::$tan,
                asin => $libm::$asin,
                acos => $libm::$acos,
                atan => $libm::$atan,
                sqrt => $libm::$sqrt,
                exp => $libm::$exp,
                ln => $libm::$ln,
                abs => <$t>::abs,
                signum => <$t>::signum,
            );
            #[inline(always)]
            fn sin_cos(self) -> (Self, Self) {
                $sin_cos(self)
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                $libm::$atan2(self, x)
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                $libm::$powi(self, n)
            }
        }
    };
}

/// The elementary functions of `f64` and `f32` under one spelling: the inherent methods
/// (which call the platform's C library or LLVM intrinsics).
#[cfg(feature = "std")]
mod float {
    macro_rules! forward {
        ($t:ty: $($name:ident => $method:ident),*) => {
            $(
                #[inline(always)]
                pub fn $name(x: $t) -> $t {
                    x.$method()
                }
            )*
        };
    }
    forward!(f64: sin => sin, cos => cos, tan => tan, asin => asin, acos => acos, atan => atan,
        sqrt => sqrt, exp => exp, log => ln);
    forward!(f32: sinf => sin, cosf => cos, tanf => tan, asinf => asin, acosf => acos,
        atanf => atan, sqrtf => sqrt, expf => exp, logf => ln);
    #[inline(always)]
    pub fn atan2(y: f64, x: f64) -> f64 {
        y.atan2(x)
    }
    #[inline(always)]
    pub fn atan2f(y: f32, x: f32) -> f32 {
        y.atan2(x)
    }
    #[inline(always)]
    pub fn powi(x: f64, n: i32) -> f64 {
        x.powi(n)
    }
    #[inline(always)]
    pub fn powif(x: f32, n: i32) -> f32 {
        x.powi(n)
    }
}

/// The elementary functions of `f64` and `f32` without `std`: the `libm` crate (a port of
/// musl's), and integer powers by repeated squaring.
#[cfg(not(feature = "std"))]
mod float {
    pub use libm::{
        acos, acosf, asin, asinf, atan, atan2, atan2f, atanf, cos, cosf, exp, expf, log, logf, sin,
        sinf, sqrt, sqrtf, tan, tanf,
    };
    /// `x^n` by repeated squaring (`1/x^|n|` for negative `n`).
    #[inline]
    pub fn powi(x: f64, n: i32) -> f64 {
        powi_any(x, n)
    }
    /// `x^n` for `f32`.
    #[inline]
    pub fn powif(x: f32, n: i32) -> f32 {
        powi_any(x, n)
    }
    #[inline]
    fn powi_any<T>(x: T, n: i32) -> T
    where
        T: Copy + core::ops::Mul<Output = T> + core::ops::Div<Output = T> + From<i8>,
    {
        let mut base = x;
        let mut m = n.unsigned_abs();
        let mut acc = T::from(1);
        while m > 0 {
            if m & 1 == 1 {
                acc = acc * base;
            }
            base = base * base;
            m >>= 1;
        }
        if n < 0 {
            T::from(1) / acc
        } else {
            acc
        }
    }
}

float_real!(
    f64,
    crate::trig::sin_cos,
    float,
    [sin, cos, tan, asin, acos, atan, atan2, sqrt, exp, log, powi]
);
float_real!(
    f32,
    |x: f32| (float::sinf(x), float::cosf(x)),
    float,
    [sinf, cosf, tanf, asinf, acosf, atanf, atan2f, sqrtf, expf, logf, powif]
);
