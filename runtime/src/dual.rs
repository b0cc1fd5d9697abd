//! Forward-mode dual numbers: a value and `N` directional derivatives, carried through
//! generated code (`generic::…::<Dual<N>>`) to get exact first derivatives of anything
//! computed from it, `N` directions per evaluation.

use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::real::Real;

/// `re + Σ eps[k] ε_k` with `ε_j ε_k = 0`: the value `re` of a function and its
/// derivatives along `N` seed directions.
///
/// Arithmetic costs `O(N)` per operation, all on the stack (`N` is a const generic).
///
/// ```
/// use mechgen_runtime::{Dual, Real};
/// // ∂/∂x and ∂/∂y of atan2(y, x) at (x, y) = (1, 2).
/// let (x, y) = (Dual::<2>::variable(1.0, 0), Dual::<2>::variable(2.0, 1));
/// let a = y.atan2(x);
/// assert!((a.eps[0] - (-2.0 / 5.0)).abs() < 1e-15);
/// assert!((a.eps[1] - (1.0 / 5.0)).abs() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dual<const N: usize> {
    /// The value.
    pub re: f64,
    /// The derivatives along the seed directions.
    pub eps: [f64; N],
}

impl<const N: usize> Default for Dual<N> {
    fn default() -> Self {
        Self::constant(0.0)
    }
}

impl<const N: usize> Dual<N> {
    /// A constant: all derivatives zero.
    #[inline(always)]
    pub fn constant(re: f64) -> Self {
        Self { re, eps: [0.0; N] }
    }

    /// The variable of seed direction `k`: derivative 1 along `k`, 0 along the others
    /// (`k ≥ N` gives a constant).
    #[inline]
    pub fn variable(re: f64, k: usize) -> Self {
        let mut d = Self::constant(re);
        if let Some(e) = d.eps.get_mut(k) {
            *e = 1.0;
        }
        d
    }

    /// The chain rule: value `f` and derivative `df` of a function at `self.re`.
    #[inline(always)]
    fn chain(self, f: f64, df: f64) -> Self {
        let mut eps = self.eps;
        for e in &mut eps {
            *e *= df;
        }
        Self { re: f, eps }
    }
}

impl<const N: usize> Add for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        let mut eps = self.eps;
        for (e, b) in eps.iter_mut().zip(o.eps) {
            *e += b;
        }
        Self {
            re: self.re + o.re,
            eps,
        }
    }
}

impl<const N: usize> Sub for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        let mut eps = self.eps;
        for (e, b) in eps.iter_mut().zip(o.eps) {
            *e -= b;
        }
        Self {
            re: self.re - o.re,
            eps,
        }
    }
}

// The product rule adds.
#[allow(clippy::suspicious_arithmetic_impl)]
impl<const N: usize> Mul for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let eps = core::array::from_fn(|k| self.eps[k] * o.re + self.re * o.eps[k]);
        Self {
            re: self.re * o.re,
            eps,
        }
    }
}

#[allow(clippy::suspicious_arithmetic_impl)]
impl<const N: usize> Div for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        let inv = 1.0 / o.re;
        let re = self.re * inv;
        let eps = core::array::from_fn(|k| (self.eps[k] - re * o.eps[k]) * inv);
        Self { re, eps }
    }
}

impl<const N: usize> Neg for Dual<N> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        let mut eps = self.eps;
        for e in &mut eps {
            *e = -*e;
        }
        Self { re: -self.re, eps }
    }
}

macro_rules! assign {
    ($tr:ident, $m:ident, $op:tt) => {
        impl<const N: usize> $tr for Dual<N> {
            #[inline(always)]
            fn $m(&mut self, o: Self) {
                *self = *self $op o;
            }
        }
    };
}
assign!(AddAssign, add_assign, +);
assign!(SubAssign, sub_assign, -);
assign!(MulAssign, mul_assign, *);
assign!(DivAssign, div_assign, /);

impl<const N: usize> Real for Dual<N> {
    const DERIVATIVES: bool = true;
    type Part = f64;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Self::constant(v)
    }
    #[inline(always)]
    fn part(self) -> f64 {
        self.re
    }
    /// The operand with the smaller value, derivatives included (a NaN value gives the
    /// other, as `f64::min`).
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        if other.re < self.re || self.re.is_nan() {
            other
        } else {
            self
        }
    }
    #[inline(always)]
    fn value(self) -> f64 {
        self.re
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        // Branch-free: the bits of every part or-ed together, the sign bits shifted out
        // (±0.0 are zero). The early-exit form was 15 % of a Stewart step's Jacobian.
        let mut bits = self.re.to_bits();
        for e in self.eps {
            bits |= e.to_bits();
        }
        bits << 1 == 0
    }
    #[inline(always)]
    fn sin(self) -> Self {
        let (s, c) = crate::trig::sin_cos(self.re);
        self.chain(s, c)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        let (s, c) = crate::trig::sin_cos(self.re);
        self.chain(c, -s)
    }
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        let (s, c) = crate::trig::sin_cos(self.re);
        (self.chain(s, c), self.chain(c, -s))
    }
    #[inline(always)]
    fn tan(self) -> Self {
        let t = self.re.tan();
        self.chain(t, 1.0 + t * t)
    }
    #[inline(always)]
    fn asin(self) -> Self {
        self.chain(self.re.asin(), 1.0 / (1.0 - self.re * self.re).sqrt())
    }
    #[inline(always)]
    fn acos(self) -> Self {
        self.chain(self.re.acos(), -1.0 / (1.0 - self.re * self.re).sqrt())
    }
    #[inline(always)]
    fn atan(self) -> Self {
        self.chain(self.re.atan(), 1.0 / (1.0 + self.re * self.re))
    }
    #[inline(always)]
    fn atan2(self, x: Self) -> Self {
        // d atan2(y, x) = (x dy − y dx) / (x² + y²)
        let inv = 1.0 / (x.re * x.re + self.re * self.re);
        let eps = core::array::from_fn(|k| (x.re * self.eps[k] - self.re * x.eps[k]) * inv);
        Self {
            re: self.re.atan2(x.re),
            eps,
        }
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        let s = self.re.sqrt();
        self.chain(s, 0.5 / s)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        let e = self.re.exp();
        self.chain(e, e)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        self.chain(self.re.ln(), 1.0 / self.re)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.chain(self.re.abs(), self.re.signum())
    }
    #[inline(always)]
    fn signum(self) -> Self {
        self.chain(self.re.signum(), 0.0)
    }
    #[inline(always)]
    fn powi(self, n: i32) -> Self {
        if n == 0 {
            return Self::constant(1.0);
        }
        self.chain(self.re.powi(n), f64::from(n) * self.re.powi(n - 1))
    }
}
