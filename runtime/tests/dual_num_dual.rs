//! `runtime::Dual` against `num-dual` (an independent forward-mode implementation): every
//! elementary function of [`Real`] and the arithmetic, on random arguments in each
//! function's domain, give the same value and derivative to 4 ulp-ish (1e-14 relative to
//! the derivative's size), and a composite expression (the kind generated code evaluates:
//! a slider crank's residual row with `sin_cos`, `atan2`, `sqrt`, `powi`, a quotient)
//! agrees to the same.

use mechgen_runtime::{Dual, Real};
use num_dual::{Dual64, DualNum};
use rand::{RngExt, SeedableRng};

type D1 = Dual<1>;

fn close(ours: D1, theirs: Dual64, what: &str, x: f64) {
    let scale = 1.0 + theirs.eps.abs();
    assert!(
        (ours.re - theirs.re).abs() <= 1e-14 * (1.0 + theirs.re.abs()),
        "{what}({x}): value {} vs {}",
        ours.re,
        theirs.re
    );
    assert!(
        (ours.eps[0] - theirs.eps).abs() <= 1e-14 * scale,
        "{what}({x}): derivative {} vs {}",
        ours.eps[0],
        theirs.eps
    );
}

#[test]
fn elementary_functions_have_num_duals_derivatives() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for _ in 0..1000 {
        let x: f64 = rng.random_range(-3.0..3.0);
        let u: f64 = rng.random_range(-0.99..0.99);
        let pos: f64 = rng.random_range(0.01..5.0);
        let (a, b) = (D1::variable(x, 0), Dual64::new(x, 1.0));
        close(a.sin(), b.sin(), "sin", x);
        close(a.cos(), b.cos(), "cos", x);
        let (s, c) = a.sin_cos();
        close(s, b.sin(), "sin_cos.0", x);
        close(c, b.cos(), "sin_cos.1", x);
        close(a.tan(), b.tan(), "tan", x);
        close(a.atan(), b.atan(), "atan", x);
        close(a.exp(), b.exp(), "exp", x);
        for n in [-3, -1, 2, 3, 7] {
            if x.abs() > 1e-3 {
                close(a.powi(n), b.powi(n), "powi", x);
            }
        }
        // |x| (num-dual has no `abs` on its scalar dual): x · sign(x).
        close(a.abs(), b * x.signum(), "abs", x);
        let (au, bu) = (D1::variable(u, 0), Dual64::new(u, 1.0));
        close(au.asin(), bu.asin(), "asin", u);
        close(au.acos(), bu.acos(), "acos", u);
        let (ap, bp) = (D1::variable(pos, 0), Dual64::new(pos, 1.0));
        close(ap.sqrt(), bp.sqrt(), "sqrt", pos);
        close(ap.ln(), bp.ln(), "ln", pos);
        // atan2 in both arguments (a second seed direction through the first argument).
        let y: f64 = rng.random_range(-2.0..2.0);
        close(
            D1::variable(y, 0).atan2(D1::constant(x)),
            Dual64::new(y, 1.0).atan2(Dual64::from(x)),
            "atan2 (∂y)",
            y,
        );
        close(
            D1::constant(y).atan2(D1::variable(x, 0)),
            Dual64::from(y).atan2(Dual64::new(x, 1.0)),
            "atan2 (∂x)",
            x,
        );
        // Arithmetic.
        let c = D1::constant(pos);
        let d = Dual64::from(pos);
        close(
            a * a * c - a / c + c / (a * a + c),
            b * b * d - b / d + d / (b * b + d),
            "arith",
            x,
        );
    }
}

#[test]
fn a_generated_style_expression_has_num_duals_derivative() {
    // The slider crank's residual and an angle from its coupler: l1 cos θ + sqrt(l2² − (l1 sin θ)²) − s,
    // atan2(−l1 sin θ, sqrt(…)), with θ the variable.
    // The functions are passed per scalar type (num-dual's and ours share no trait).
    #[allow(clippy::too_many_arguments)]
    fn f<
        T: Copy + std::ops::Mul<Output = T> + std::ops::Sub<Output = T> + std::ops::Add<Output = T>,
    >(
        th: T,
        s: T,
        l1: T,
        l2: T,
        sin: impl Fn(T) -> T,
        cos: impl Fn(T) -> T,
        sqrt: impl Fn(T) -> T,
        atan2: impl Fn(T, T) -> T,
    ) -> (T, T) {
        let r = sqrt(l2 * l2 - l1 * sin(th) * (l1 * sin(th)));
        (l1 * cos(th) + r - s, atan2(l1 * sin(th), r))
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for _ in 0..200 {
        let th: f64 = rng.random_range(-3.0..3.0);
        let (o0, o1) = f(
            D1::variable(th, 0),
            D1::constant(0.35),
            D1::constant(0.1),
            D1::constant(0.3),
            |x| x.sin(),
            |x| x.cos(),
            |x| x.sqrt(),
            |y, x| y.atan2(x),
        );
        let (t0, t1) = f(
            Dual64::new(th, 1.0),
            Dual64::from(0.35),
            Dual64::from(0.1),
            Dual64::from(0.3),
            |x| x.sin(),
            |x| x.cos(),
            |x| x.sqrt(),
            |y, x| y.atan2(x),
        );
        close(o0, t0, "residual", th);
        close(o1, t1, "angle", th);
    }
}
