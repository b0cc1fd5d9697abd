//! The table of elementary functions (`impl Func`), function by function: the derivative
//! rule (as `diff`, `tangent` and `gradient` build it) against a central finite
//! difference, complex evaluation against f64 evaluation on the real axis, the probes'
//! rounding gain against the derivative's magnitude, and the identities the arena applies.

use mechgen_codegen::expr::{Arena, CostClass, Func, Node, Parity, Sym};
use num_complex::Complex64;

/// Points inside the domain of `f`, away from poles and kinks.
fn points(f: Func) -> &'static [f64] {
    match f {
        Func::Asin | Func::Acos => &[-0.7, -0.2, 0.3, 0.8],
        Func::Sqrt | Func::Ln => &[0.3, 1.1, 2.5, 7.0],
        _ => &[-1.3, -0.4, 0.6, 1.7],
    }
}

const X: Sym = Sym::Coord(0);

/// `f'(x0)` by central difference of `Func::eval` over f64.
fn central_difference(f: Func, x0: f64) -> f64 {
    let h = 1e-6 * x0.abs().max(1.0);
    (f.eval(x0 + h) - f.eval(x0 - h)) / (2.0 * h)
}

#[test]
fn derivative_rule_matches_central_difference_for_every_function() {
    for f in Func::ALL {
        for &x0 in points(f) {
            let mut a = Arena::new();
            let x = a.sym(X);
            let e = a.func(f, x);
            let d = a.diff(e, X);
            let t = a.tangent(e, &|s| (s == X).then_some(Sym::Vel(0)));
            let g = a.gradient(e, &[0])[0];
            let env = |s: Sym| if s == X { x0 } else { 1.0 };
            let v: Vec<f64> = a.eval(&[d, t, g], &env);
            let fd = central_difference(f, x0);
            let tol = 1e-7 * fd.abs().max(1.0);
            assert!(
                (v[0] - fd).abs() <= tol,
                "{f:?}'({x0}) = {} by the rule, {fd} by central difference",
                v[0]
            );
            // One rule: forward tangent and reverse gradient agree with `diff` exactly.
            assert_eq!(v[1], v[0], "{f:?}: tangent at {x0}");
            assert_eq!(v[2], v[0], "{f:?}: gradient at {x0}");
        }
    }
}

#[test]
fn derivative_rules_give_the_textbook_values() {
    // A few exact values, so a rule that is merely consistent cannot pass.
    let cases: [(Func, f64, f64); 11] = [
        (Func::Sin, 0.0, 1.0),
        (Func::Cos, 0.0, 0.0),
        (Func::Tan, 0.0, 1.0),
        (Func::Asin, 0.0, 1.0),
        (Func::Acos, 0.0, -1.0),
        (Func::Atan, 1.0, 0.5),
        (Func::Sqrt, 4.0, 0.25),
        (Func::Exp, 0.0, 1.0),
        (Func::Ln, 2.0, 0.5),
        (Func::Abs, -3.0, -1.0),
        (Func::Sign, -3.0, 0.0),
    ];
    for (f, x0, want) in cases {
        let mut a = Arena::new();
        let x = a.sym(X);
        let e = a.func(f, x);
        let d = a.diff(e, X);
        let v: f64 = a.eval(&[d], &|_| x0)[0];
        assert_eq!(v, want, "{f:?}'({x0})");
    }
}

#[test]
fn complex_evaluation_equals_f64_evaluation_on_the_real_axis() {
    for f in Func::ALL {
        for &x0 in points(f) {
            let r = f.eval(x0);
            let c = f.eval(Complex64::new(x0, 0.0));
            // Complex tan goes through sin 2x / (cos 2x + cosh 0): a few ulps from libm's
            // tan near its pole (7 ulps at 1.7).
            let tol = 16.0 * f64::EPSILON * r.abs().max(1.0);
            assert!(
                (c.re - r).abs() <= tol && c.im.abs() <= tol,
                "{f:?}({x0}) = {r} over f64, {c} over complex"
            );
        }
    }
}

#[test]
fn rounding_gain_is_the_magnitude_of_the_derivative() {
    let zs = [
        Complex64::new(0.3, 0.2),
        Complex64::new(-0.6, 0.5),
        Complex64::new(0.8, -0.9),
    ];
    for f in Func::ALL {
        let mut a = Arena::new();
        let x = a.sym(X);
        let e = a.func(f, x);
        let d = a.diff(e, X);
        for z in zs {
            let want = a.eval(&[d], &|_| z)[0].norm();
            let gain = f.rounding_gain(z, f.eval(z));
            assert!(
                (gain - want).abs() <= 1e-12 * want.max(1.0),
                "{f:?} at {z}: rounding gain {gain}, |f'| = {want}"
            );
        }
    }
}

#[test]
fn parity_and_idempotence_hold_numerically_and_in_the_arena() {
    for f in Func::ALL {
        for &x0 in &[0.3, 0.7] {
            let (p, m) = (f.eval(x0), f.eval(-x0));
            match f.parity() {
                Parity::Even => assert_eq!(m, p, "{f:?} is even"),
                Parity::Odd => assert_eq!(m, -p, "{f:?} is odd"),
                Parity::Neither => {}
            }
        }
        let mut a = Arena::new();
        let x = a.sym(X);
        let nx = a.neg(x);
        let fx = a.func(f, x);
        let fnx = a.func(f, nx);
        let want = match f.parity() {
            Parity::Even => fx,
            Parity::Odd => a.neg(fx),
            Parity::Neither => {
                assert_eq!(a.node(fnx), Node::Func(f, nx), "{f:?}(−x) kept");
                continue;
            }
        };
        assert_eq!(fnx, want, "{f:?}(−x)");
        let ffx = a.func(f, fx);
        assert_eq!(ffx == fx, f.idempotent(), "{f:?}({f:?}(x))");
    }
}

#[test]
fn names_cost_classes_and_constant_folding() {
    let names: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(
        names,
        ["sin", "cos", "tan", "asin", "acos", "atan", "sqrt", "exp", "ln", "abs", "signum"]
    );
    for f in Func::ALL {
        match f.source_name() {
            Some(n) => assert_eq!(Func::from_source_name(n), Some(f)),
            None => assert_eq!(f, Func::Sign),
        }
    }
    assert_eq!(Func::from_source_name("signum"), None);
    let trig: Vec<Func> = Func::ALL
        .into_iter()
        .filter(|f| f.cost() == CostClass::Trig)
        .collect();
    assert_eq!(
        trig,
        [
            Func::Sin,
            Func::Cos,
            Func::Tan,
            Func::Asin,
            Func::Acos,
            Func::Atan
        ]
    );
    assert_eq!(Func::Sqrt.cost(), CostClass::Sqrt);
    // A constant argument folds to `eval`'s value, unless that is not finite.
    let mut a = Arena::new();
    let c = a.constant(0.5);
    for f in Func::ALL {
        let e = a.func(f, c);
        assert_eq!(a.as_const(e), Some(f.eval(0.5)), "{f:?}(0.5)");
    }
    let z = a.constant(0.0);
    let l = a.func(Func::Ln, z);
    assert_eq!(a.node(l), Node::Func(Func::Ln, z));
}
