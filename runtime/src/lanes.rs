//! [`F64x4`]: four `f64` lanes, a [`Real`] for batch evaluation of the generic family (four
//! configurations per call: Monte Carlo, sampling, finite-difference stencils).
//!
//! The lanes are a plain `[f64; 4]` with lane-wise operations written so that the compiler
//! vectorises them (two SSE2 operations per lane-wise operation on the baseline x86-64
//! target, one AVX operation with `-C target-cpu=…` that has it). `sin_cos` runs fdlibm's
//! reduction and kernels on the four lanes together ([`sin_cos_lanes`], bitwise equal to
//! the scalar [`sin_cos`](crate::sin_cos)); the other elementary functions go lane by lane.
//! A basis's health figure is computed lane-wise (`Real::Part` is `F64x4`) and reported as
//! the worst lane's.
//!
//! Measured (`bench/RESULTS.md`, step benchmark): four configurations per call cost 0.50–0.67× four
//! `f64` calls on the baseline target. Two things had made lanes several times *slower*:
//! nalgebra's `from_element` (an iterator of clones, not turned into a fill for a 32-byte
//! element) and health figures read through `Real::value` per pivot (a branchy reduction
//! over lanes, 121 of them in the Stewart platform's basis).

use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::real::{unary_methods, Real};

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

/// `(sin x, cos x)` of each lane, bitwise equal to the scalar
/// [`sin_cos`](crate::sin_cos): the same fdlibm reduction and kernels, computed on the four
/// lanes together by [`crate::trig`]'s branch-free routine for several angles (the kernels
/// alone when every lane is within π/4, the first Cody–Waite step and the kernels when every
/// lane needs only that step; lane by lane otherwise).
#[inline]
pub fn sin_cos_lanes(x: F64x4) -> (F64x4, F64x4) {
    let (s, c) = crate::trig::sin_cos_n(x.0);
    (F64x4(s), F64x4(c))
}

impl Real for F64x4 {
    type Part = F64x4;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        Self::splat(v)
    }
    #[inline(always)]
    fn part(self) -> Self {
        self
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        self.zip(other, f64::min)
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
    unary_methods!(
        sin => |x| sin_cos_lanes(x).0,
        cos => |x| sin_cos_lanes(x).1,
        tan => |x: Self| x.map(f64::tan),
        asin => |x: Self| x.map(f64::asin),
        acos => |x: Self| x.map(f64::acos),
        atan => |x: Self| x.map(f64::atan),
        sqrt => |x: Self| x.map(f64::sqrt),
        exp => |x: Self| x.map(f64::exp),
        ln => |x: Self| x.map(f64::ln),
        abs => |x: Self| x.map(f64::abs),
        signum => |x: Self| x.map(f64::signum),
    );
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        sin_cos_lanes(self)
    }
    #[inline(always)]
    fn atan2(self, x: Self) -> Self {
        self.zip(x, f64::atan2)
    }
    #[inline(always)]
    fn powi(self, n: i32) -> Self {
        self.map(|a| a.powi(n))
    }
}

#[cfg(test)]
mod tests {
    use super::{sin_cos_lanes, F64x4};

    /// The lanes equal the scalar `sin_cos` bit for bit, on the fast path (all lanes of
    /// moderate size), near π/4 and multiples of π/2 (where the reduction needs more steps),
    /// and with large, infinite and NaN lanes mixed in (the lane-by-lane path).
    #[test]
    fn lanes_equal_the_scalar_bit_for_bit() {
        let mut next = crate::trig::tests::uniform(0x2545_f491_4f6c_dd1d);
        let pio4 = core::f64::consts::FRAC_PI_4;
        let mut specials = vec![
            0.0,
            -0.0,
            pio4,
            -pio4,
            pio4.next_up(),
            pio4.next_down(),
            1e-300,
        ];
        for k in -50i32..50 {
            let x = f64::from(k) * core::f64::consts::FRAC_PI_2;
            specials.extend([x, x.next_up(), x.next_down()]);
        }
        specials.extend([1e7, -3e9, f64::INFINITY, f64::NAN, 1_647_098.9]);
        let mut checked = 0;
        let mut check = |lanes: [f64; 4]| {
            let (sv, cv) = sin_cos_lanes(F64x4(lanes));
            for (l, &x) in lanes.iter().enumerate() {
                let (ss, cs) = crate::sin_cos(x);
                assert_eq!(sv.0[l].to_bits(), ss.to_bits(), "sin {x:e}");
                assert_eq!(cv.0[l].to_bits(), cs.to_bits(), "cos {x:e}");
            }
            checked += 1;
        };
        for &range in &[0.5, 0.8, 4.0, 100.0, 1e5] {
            for _ in 0..50_000 {
                check(core::array::from_fn(|_| (2.0 * next() - 1.0) * range));
            }
        }
        for (i, &x) in specials.iter().enumerate() {
            check([x, 0.3 * i as f64, -1.2, x * 0.5]);
            check([x; 4]);
        }
        assert!(checked > 250_000);
    }
}
