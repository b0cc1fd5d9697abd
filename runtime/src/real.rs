//! The scalar generated code can compute in: [`Real`], implemented for `f64`, `f32` and
//! the forward-mode dual numbers [`Dual`](crate::Dual).
//!
//! A module generated with `#![generic]` holds, besides its `f64` functions, a `generic`
//! submodule whose functions take any `S: Real` (`generic::residual::<Dual<4>>(…)`). The
//! trait is what their straight-line bodies need: the four operations and negation,
//! constants from `f64` literals, the elementary functions of the language, and the
//! value (real part) that health figures and convergence tests read.

use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

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
    /// [`step_generic`](crate::step_generic)).
    const DERIVATIVES: bool = false;
    /// The constant `v` (generated code writes every literal through this).
    fn from_f64(v: f64) -> Self;
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

macro_rules! float_real {
    ($t:ty, $sin_cos:expr) => {
        impl Real for $t {
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn value(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn sin_cos(self) -> (Self, Self) {
                $sin_cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                <$t>::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                <$t>::atan(self)
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn signum(self) -> Self {
                <$t>::signum(self)
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                <$t>::powi(self, n)
            }
        }
    };
}

float_real!(f64, crate::trig::sin_cos);
float_real!(f32, f32::sin_cos);
