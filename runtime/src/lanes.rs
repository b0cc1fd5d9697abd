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
/// lanes together (branch-free over the lanes, so that the compiler vectorises the loops):
/// the kernels alone when every lane is within π/4 (the scalar's shortcut), the first
/// Cody–Waite step and the kernels when every lane needs only that step (`|x| < 2²⁰·π/2`,
/// not near a multiple of π/2); lane by lane otherwise.
#[inline]
pub fn sin_cos_lanes(x: F64x4) -> (F64x4, F64x4) {
    use crate::trig::{
        kernel_cos, kernel_sin, INV_PIO2, ONE_STEP, PIO2_1, PIO2_1T, REDUCTION_LIMIT, SHIFT,
    };
    // `|y0| ≥ 2⁻¹⁵ |x|` is the scalar reduction's own test for stopping after one step (as a
    // comparison of `f64`s, which the compiler vectorises); a lane that needs more steps, a
    // NaN, an infinite or a huge lane goes to the lane-by-lane path.
    let x = x.0;
    if x.iter().all(|v| v.abs() <= core::f64::consts::FRAC_PI_4) {
        // Every lane within π/4 (the scalar's shortcut): the kernels alone.
        return (
            F64x4(core::array::from_fn(|l| kernel_sin(x[l], 0.0))),
            F64x4(core::array::from_fn(|l| kernel_cos(x[l], 0.0))),
        );
    }
    let mut y0 = [0.0; 4];
    let mut y1 = [0.0; 4];
    let mut quadrant = [0u64; 4];
    let mut one_step = [false; 4];
    // Branch-free over the lanes (selects, bit operations), so that the loops vectorise.
    for l in 0..4 {
        // Lanes within π/4 take the scalar shortcut's values: with f = 0 and quadrant 0 the
        // arithmetic below gives y0 = x, y1 = 0 exactly.
        let ax = x[l].abs();
        let small = ax <= core::f64::consts::FRAC_PI_4;
        let biased = x[l] * INV_PIO2 + SHIFT;
        let f = if small { 0.0 } else { biased - SHIFT };
        quadrant[l] = biased.to_bits() & 3 & (u64::from(small)).wrapping_sub(1);
        let r = x[l] - f * PIO2_1;
        let w = f * PIO2_1T;
        y0[l] = r - w;
        y1[l] = (r - y0[l]) - w;
        // NaN and infinite lanes fail the first comparison.
        one_step[l] = (ax < REDUCTION_LIMIT) & (y0[l].abs() >= ax * ONE_STEP);
    }
    if !(one_step[0] & one_step[1] & one_step[2] & one_step[3]) {
        let f = crate::trig::sin_cos;
        let r = [f(x[0]), f(x[1]), f(x[2]), f(x[3])];
        return (
            F64x4([r[0].0, r[1].0, r[2].0, r[3].0]),
            F64x4([r[0].1, r[1].1, r[2].1, r[3].1]),
        );
    }
    let mut s = [0.0; 4];
    let mut c = [0.0; 4];
    for l in 0..4 {
        let ks = kernel_sin(y0[l], y1[l]).to_bits();
        let kc = kernel_cos(y0[l], y1[l]).to_bits();
        // Quadrant q: sin = (s, c, −s, −c)[q], cos = (c, −s, −c, s)[q]: swap the kernels
        // for odd q (by a mask), then flip the signs.
        let q = quadrant[l];
        let swap = (q & 1).wrapping_neg();
        let a = (ks & !swap) | (kc & swap);
        let b = (kc & !swap) | (ks & swap);
        s[l] = f64::from_bits(a ^ ((q >> 1) << 63));
        c[l] = f64::from_bits(b ^ ((((q + 1) >> 1) & 1) << 63));
    }
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
        let mut s: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
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
