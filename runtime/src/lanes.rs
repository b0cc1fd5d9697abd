//! [`F64x4`]: four `f64` lanes, a [`Real`] for batch evaluation of the generic family (four
//! configurations per call: Monte Carlo, sampling, finite-difference stencils).
//!
//! The lanes are a plain `[f64; 4]` with lane-wise operations written so that the compiler
//! vectorises them (two SSE2 operations per lane-wise operation on the baseline x86-64
//! target, one AVX operation with `-C target-cpu=…` that has it). Elementary functions are
//! evaluated lane by lane (the runtime's `sin_cos`, the C library otherwise), so each lane
//! is bitwise the scalar result.
//!
//! Measured (README, step benchmark): lanes pay only on the smallest mechanisms. On the
//! Stewart platform's mass matrix the generic function over `F64x4` executes about twice
//! the instructions of four `f64` calls (callgrind: 19,100 against 10,000 per four
//! configurations); `wide::f64x4` and `wide::f64x2` with their vectorised sin/cos were tried
//! in its place and did no better, so the runtime keeps no dependency for it.

use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::real::Real;

/// Four `f64` lanes computed together.
///
/// ```
/// use mechgen_runtime::{F64x4, Real};
/// let x = F64x4([0.0, 1.0, 2.0, 3.0]);
/// let y = x * x + F64x4::splat(1.0);
/// assert_eq!(y.0, [1.0, 2.0, 5.0, 10.0]);
/// assert_eq!(x.sin().0[1], 1f64.sin());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[repr(align(32))]
pub struct F64x4(pub [f64; 4]);

impl F64x4 {
    /// The four lanes.
    #[inline(always)]
    pub fn new(lanes: [f64; 4]) -> Self {
        Self(lanes)
    }

    /// All four lanes `v`.
    #[inline(always)]
    pub fn splat(v: f64) -> Self {
        Self([v; 4])
    }

    /// The lanes as an array.
    #[inline(always)]
    pub fn to_array(self) -> [f64; 4] {
        self.0
    }

    /// Lane `k` (0–3).
    #[inline(always)]
    pub fn lane(self, k: usize) -> f64 {
        self.0[k]
    }

    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Self([f(self.0[0]), f(self.0[1]), f(self.0[2]), f(self.0[3])])
    }

    #[inline(always)]
    fn zip(self, o: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        Self([
            f(self.0[0], o.0[0]),
            f(self.0[1], o.0[1]),
            f(self.0[2], o.0[2]),
            f(self.0[3], o.0[3]),
        ])
    }
}

macro_rules! lanewise {
    ($tr:ident, $m:ident, $op:tt, $atr:ident, $am:ident) => {
        impl $tr for F64x4 {
            type Output = Self;
            #[inline(always)]
            fn $m(self, o: Self) -> Self {
                self.zip(o, |a, b| a $op b)
            }
        }
        impl $atr for F64x4 {
            #[inline(always)]
            fn $am(&mut self, o: Self) {
                *self = *self $op o;
            }
        }
    };
}
lanewise!(Add, add, +, AddAssign, add_assign);
lanewise!(Sub, sub, -, SubAssign, sub_assign);
lanewise!(Mul, mul, *, MulAssign, mul_assign);
lanewise!(Div, div, /, DivAssign, div_assign);

impl Neg for F64x4 {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|a| -a)
    }
}

impl Real for F64x4 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Self::splat(v)
    }
    /// The smallest lane by modulus with its sign (a health figure or a convergence test on
    /// lanes must hold for every lane); NaN if any lane is NaN.
    #[inline(always)]
    fn value(self) -> f64 {
        let mut v = self.0[0];
        for &x in &self.0[1..] {
            if x.is_nan() || x.abs() < v.abs() {
                v = x;
            }
        }
        v
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        self.0 == [0.0; 4]
    }
    #[inline(always)]
    fn sin(self) -> Self {
        self.map(|a| crate::trig::sin_cos(a).0)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        self.map(|a| crate::trig::sin_cos(a).1)
    }
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        let r = self.0.map(crate::trig::sin_cos);
        (
            Self([r[0].0, r[1].0, r[2].0, r[3].0]),
            Self([r[0].1, r[1].1, r[2].1, r[3].1]),
        )
    }
    #[inline(always)]
    fn tan(self) -> Self {
        self.map(f64::tan)
    }
    #[inline(always)]
    fn asin(self) -> Self {
        self.map(f64::asin)
    }
    #[inline(always)]
    fn acos(self) -> Self {
        self.map(f64::acos)
    }
    #[inline(always)]
    fn atan(self) -> Self {
        self.map(f64::atan)
    }
    #[inline(always)]
    fn atan2(self, x: Self) -> Self {
        self.zip(x, f64::atan2)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(f64::sqrt)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        self.map(f64::exp)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        self.map(f64::ln)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.map(f64::abs)
    }
    #[inline(always)]
    fn signum(self) -> Self {
        self.map(f64::signum)
    }
    #[inline(always)]
    fn powi(self, n: i32) -> Self {
        self.map(|a| a.powi(n))
    }
}
