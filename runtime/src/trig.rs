//! `sin` and `cos` of one argument together, for generated code.
//!
//! `f64::sin_cos` calls the C library's `sin` and `cos` separately: two argument
//! reductions and two calls that cannot be inlined. Generated kinematics compute the sine
//! and cosine of every angle coordinate, and for small mechanisms those calls are most of
//! the time. This is fdlibm's algorithm (FreeBSD `e_rem_pio2.c`, `k_sin.c`, `k_cos.c`):
//! Cody–Waite reduction by π/2 in up to three steps (exact enough for |x| < 2²⁰·π/2),
//! then the two minimax kernels on the same reduced argument. Its error is that of
//! fdlibm (under one ulp); larger and non-finite arguments go to `f64::sin_cos`.
#![allow(clippy::excessive_precision)]

// fdlibm's constants, digits as published (the compiler rounds them to the same bits).
pub(crate) const INV_PIO2: f64 = core::f64::consts::FRAC_2_PI;
pub(crate) const PIO2_1: f64 = 1.570_796_326_734_125_614_17e+00;
pub(crate) const PIO2_1T: f64 = 6.077_100_506_506_192_249_32e-11;
const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
const PIO2_2T: f64 = 2.022_266_248_795_950_631_54e-21;
const PIO2_3: f64 = 2.022_266_248_711_166_455_80e-21;
const PIO2_3T: f64 = 8.478_427_660_368_899_569_97e-32;

const S1: f64 = -1.666_666_666_666_663_243_48e-01;
const S2: f64 = 8.333_333_333_322_489_461_24e-03;
const S3: f64 = -1.984_126_982_985_794_931_34e-04;
const S4: f64 = 2.755_731_370_707_006_767_89e-06;
const S5: f64 = -2.505_076_025_340_686_341_95e-08;
const S6: f64 = 1.589_690_995_211_550_102_21e-10;

const C1: f64 = 4.166_666_666_666_660_190_37e-02;
const C2: f64 = -1.388_888_888_887_410_957_49e-03;
const C3: f64 = 2.480_158_728_947_672_941_78e-05;
const C4: f64 = -2.755_731_435_139_066_330_35e-07;
const C5: f64 = 2.087_572_321_298_174_827_90e-09;
const C6: f64 = -1.135_964_755_778_819_482_65e-11;

/// `1.5·2⁵²`: adding and removing it rounds to the nearest integer.
pub(crate) const SHIFT: f64 = 6_755_399_441_055_744.0;
/// Largest `|x|` the three-step reduction serves.
pub(crate) const REDUCTION_LIMIT: f64 = 1_647_099.0;

/// `sin(x + y)` for `|x + y| ≤ π/4`, `y` the tail of the reduced argument.
#[inline(always)]
pub(crate) fn kernel_sin(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * x;
    x - ((z * (0.5 * y - v * r) - y) - v * S1)
}

/// `cos(x + y)` for `|x + y| ≤ π/4`.
#[inline(always)]
pub(crate) fn kernel_cos(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let one_minus = 1.0 - hz;
    one_minus + (((1.0 - one_minus) - hz) + (z * r - x * y))
}

/// `2⁻¹⁵`: below `2⁻¹⁵ |x|` the first reduction step's `|y0|` takes a second step.
pub(crate) const ONE_STEP: f64 = 1.0 / 32_768.0;
/// `2⁻⁴⁸`: below `2⁻⁴⁸ |x|` the second step's `|y0|` takes a third.
const TWO_STEPS: f64 = 1.0 / 281_474_976_710_656.0;

/// `(sin x, cos x)`, correctly rounded or within one ulp like the C library's, in one
/// argument reduction.
///
/// Inlined into the caller (generated code calls it once per angle, or [`sin_cos_pair`] for
/// two): the common path is the reduction's first step and the two kernels; arguments
/// beyond the three-step reduction's range and the reduction's rare extra steps are out of
/// line.
///
/// ```
/// let (s, c) = mechgen_runtime::sin_cos(2.5);
/// assert!((s - 2.5f64.sin()).abs() <= f64::EPSILON);
/// assert!((c - 2.5f64.cos()).abs() <= f64::EPSILON);
/// ```
#[inline(always)]
pub fn sin_cos(x: f64) -> (f64, f64) {
    let ax = x.abs();
    if ax <= core::f64::consts::FRAC_PI_4 {
        return (kernel_sin(x, 0.0), kernel_cos(x, 0.0));
    }
    // Beyond 2^20·π/2 the three-step reduction loses bits; NaN (which fails every
    // comparison) and ∞ land here too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // `ax >= LIMIT` would let NaN through
    if !(ax < REDUCTION_LIMIT) {
        return large(x);
    }
    // Round to the nearest integer by adding and removing 1.5·2⁵²: no libm call (the
    // sum's low bits are the quadrant).
    let biased = x * INV_PIO2 + SHIFT;
    let f = biased - SHIFT;
    let quadrant = biased.to_bits() & 3;
    let mut r = x - f * PIO2_1;
    let mut w = f * PIO2_1T;
    let mut y0 = r - w;
    // fdlibm takes a second (third) step when the first (second) cancelled more than 16
    // (49) bits, `exponent(x) − exponent(y0) > 16`; `|y0| < 2⁻¹⁵ |x|` (`2⁻⁴⁸`) holds
    // whenever that does, so it takes the extra step in every case fdlibm does (and in a
    // few more, where the step only adds bits) with one comparison of `f64`s instead of two
    // exponent extractions. `sin_cos_lanes` uses the same test.
    if y0.abs() < ax * ONE_STEP {
        (r, w, y0) = more_steps(ax, f, r);
    }
    let y1 = (r - y0) - w;
    let (s, c) = (kernel_sin(y0, y1), kernel_cos(y0, y1));
    match quadrant {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// `((sin a, cos a), (sin b, cos b))`, bitwise equal to [`sin_cos`] of each: one
/// reduction and one pair of kernels for both angles, two angles per SSE2 instruction on
/// x86-64 (about 60 % of two `sin_cos` calls' instructions). Generated code computes the
/// sines and cosines of a function's angle coordinates two at a time with it.
///
/// ```
/// let ((sa, ca), (sb, cb)) = mechgen_runtime::sin_cos_pair(0.3, -7.0);
/// assert_eq!((sa, ca), mechgen_runtime::sin_cos(0.3));
/// assert_eq!((sb, cb), mechgen_runtime::sin_cos(-7.0));
/// ```
#[inline(always)]
pub fn sin_cos_pair(a: f64, b: f64) -> ((f64, f64), (f64, f64)) {
    let ([sa, sb], [ca, cb]) = sin_cos_n([a, b]);
    ((sa, ca), (sb, cb))
}

/// `(sin x, cos x)` of every angle of `x` together, bitwise equal to [`sin_cos`] of each:
/// the same reduction and kernels on all of them at once (branch-free over the angles, so
/// that the compiler vectorises them), when every angle needs only the reduction's first
/// step (`|x| < 2²⁰·π/2`, not near a multiple of π/2, or within π/4); angle by angle
/// otherwise. (Three angles vectorise worse than a pair and a single: `sin_cos_pair`.)
#[inline(always)]
pub(crate) fn sin_cos_n<const N: usize>(x: [f64; N]) -> ([f64; N], [f64; N]) {
    if x.iter().all(|v| v.abs() <= core::f64::consts::FRAC_PI_4) {
        // Every angle within π/4 (the scalar's shortcut, e.g. orientation angles near 0):
        // the kernels alone.
        return (
            core::array::from_fn(|l| kernel_sin(x[l], 0.0)),
            core::array::from_fn(|l| kernel_cos(x[l], 0.0)),
        );
    }
    let mut y0 = [0.0; N];
    let mut y1 = [0.0; N];
    let mut quadrant = [0u64; N];
    let mut one_step = true;
    for l in 0..N {
        // Angles within π/4 take the scalar shortcut's values: with f = 0 and quadrant 0
        // the arithmetic below gives y0 = x, y1 = 0 exactly.
        let ax = x[l].abs();
        let small = ax <= core::f64::consts::FRAC_PI_4;
        let biased = x[l] * INV_PIO2 + SHIFT;
        let f = if small { 0.0 } else { biased - SHIFT };
        quadrant[l] = biased.to_bits() & 3 & (u64::from(small)).wrapping_sub(1);
        let r = x[l] - f * PIO2_1;
        let w = f * PIO2_1T;
        y0[l] = r - w;
        y1[l] = (r - y0[l]) - w;
        // NaN and infinite angles fail the first comparison.
        one_step &= (ax < REDUCTION_LIMIT) & (y0[l].abs() >= ax * ONE_STEP);
    }
    if !one_step {
        return each(x);
    }
    let mut s = [0.0; N];
    let mut c = [0.0; N];
    for l in 0..N {
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
    (s, c)
}

/// [`sin_cos_n`] angle by angle, out of line (an angle near a multiple of π/2, huge, or not
/// finite).
#[cold]
#[inline(never)]
fn each<const N: usize>(x: [f64; N]) -> ([f64; N], [f64; N]) {
    let mut s = [0.0; N];
    let mut c = [0.0; N];
    for l in 0..N {
        (s[l], c[l]) = sin_cos(x[l]);
    }
    (s, c)
}

/// `sin_cos` beyond the reduction's range, and of NaN and ∞: the C library's.
#[cold]
#[inline(never)]
fn large(x: f64) -> (f64, f64) {
    (crate::Real::sin(x), crate::Real::cos(x))
}

/// The reduction's second (and third) step after the first cancelled many bits: `(r, w, y0)`
/// from the first step's `r`, fdlibm's arithmetic.
#[cold]
#[inline(never)]
fn more_steps(ax: f64, f: f64, mut r: f64) -> (f64, f64, f64) {
    let t = r;
    let mut w = f * PIO2_2;
    r = t - w;
    w = f * PIO2_2T - ((t - r) - w);
    let mut y0 = r - w;
    if y0.abs() < ax * TWO_STEPS {
        let t = r;
        w = f * PIO2_3;
        r = t - w;
        w = f * PIO2_3T - ((t - r) - w);
        y0 = r - w;
    }
    (r, w, y0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::sin_cos;

    /// The states of a xorshift generator seeded with `seed` (nonzero): deterministic test
    /// inputs.
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Uniform numbers in `[0, 1)` from [`xorshift`] seeded with `seed` (its top 53 bits).
    pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut next = xorshift(seed);
        move || (next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Distance in units in the last place.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        let key = |v: f64| {
            let i = v.to_bits() as i64;
            if i < 0 {
                i64::MIN - i
            } else {
                i
            }
        };
        key(a).abs_diff(key(b))
    }

    #[test]
    fn agrees_with_libm_within_an_ulp() {
        // Deterministic xorshift over several ranges, including near multiples of π/2.
        let mut next = crate::trig::tests::uniform(0x9e37_79b9_7f4a_7c15);
        let mut worst = 0;
        for &range in &[0.8, 4.0, 100.0, 1e4, 1.6e6, 1e9] {
            for _ in 0..200_000 {
                let x = (2.0 * next() - 1.0) * range;
                let (s, c) = sin_cos(x);
                let (ls, lc) = x.sin_cos();
                worst = worst.max(ulps(s, ls)).max(ulps(c, lc));
                assert!(
                    ulps(s, ls) <= 1 && ulps(c, lc) <= 1,
                    "x = {x:e}: ({s:e}, {c:e}) vs ({ls:e}, {lc:e})"
                );
            }
        }
        for k in -2000i64..2000 {
            let x = k as f64 * std::f64::consts::FRAC_PI_2;
            for x in [x, x.next_up(), x.next_down()] {
                let (s, c) = sin_cos(x);
                let (ls, lc) = x.sin_cos();
                assert!(
                    (s - ls).abs() <= 1e-16 * (1.0 + x.abs())
                        && (c - lc).abs() <= 1e-16 * (1.0 + x.abs()),
                    "x = {x:e}: ({s:e}, {c:e}) vs ({ls:e}, {lc:e})"
                );
            }
        }
        // Near multiples of π/2, where the reduction takes its second and third steps: offsets
        // `2⁻ᵏ |x|` around the test's `2⁻¹⁵ |x|` and `2⁻⁴⁸ |x|` thresholds, within one ulp
        // (absolute 1e-16 (1 + |x|) where the result is smaller than an ulp of `x` allows).
        for k in (1i64..200_000).step_by(997) {
            let x = k as f64 * std::f64::consts::FRAC_PI_2;
            for e in 10..60 {
                let d = x * (-(e as f64)).exp2();
                for x in [x + d, x - d, x + 1.5 * d, x - 0.75 * d] {
                    let (s, c) = sin_cos(x);
                    let (ls, lc) = x.sin_cos();
                    let close = |a: f64, b: f64| {
                        ulps(a, b) <= 1 || (a - b).abs() <= 1e-16 * (1.0 + x.abs())
                    };
                    assert!(
                        close(s, ls) && close(c, lc),
                        "x = {x:e}: ({s:e}, {c:e}) vs ({ls:e}, {lc:e})"
                    );
                }
            }
        }
        println!("worst ulps vs libm: {worst}");
    }

    /// `sin_cos_pair` is `sin_cos` of each angle bit for bit: both angles on the one-step
    /// path, one or both near multiples of π/2 or beyond the reduction's range (the angle
    /// by angle path), within π/4, NaN and ∞.
    #[test]
    fn pairs_equal_single_angles() {
        let mut next = crate::trig::tests::uniform(0x2545_f491_4f6c_dd1d);
        let same = |a: (f64, f64), b: (f64, f64)| {
            a.0.to_bits() == b.0.to_bits() && a.1.to_bits() == b.1.to_bits()
        };
        let special = [
            0.0,
            -0.0,
            std::f64::consts::FRAC_PI_2,
            3.0 * std::f64::consts::FRAC_PI_2 + 1e-12,
            2e6,
            1e300,
            f64::NAN,
            f64::INFINITY,
        ];
        for k in 0..100_000 {
            let range = [0.7, 4.0, 40.0, 1e4, 1.6e6][k % 5];
            let a = (2.0 * next() - 1.0) * range;
            let b = if k % 7 == 0 {
                special[k / 7 % special.len()]
            } else {
                (2.0 * next() - 1.0) * range
            };
            for (a, b) in [(a, b), (b, a)] {
                let (pa, pb) = super::sin_cos_pair(a, b);
                assert!(
                    same(pa, sin_cos(a)) && same(pb, sin_cos(b)),
                    "({a:e}, {b:e}): {pa:?} {pb:?}"
                );
            }
        }
    }

    #[test]
    fn special_values() {
        assert_eq!(sin_cos(0.0), (0.0, 1.0));
        assert!(sin_cos(-0.0).0.is_sign_negative());
        let (s, c) = sin_cos(f64::NAN);
        assert!(s.is_nan() && c.is_nan());
        let (s, c) = sin_cos(f64::INFINITY);
        assert!(s.is_nan() && c.is_nan());
    }
}
