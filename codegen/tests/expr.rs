//! Derivatives against central finite differences on random expression trees over every
//! node kind; complex evaluation against f64 evaluation; hash-consing.

use mechgen_codegen::expr::{Arena, ExprId, Func, Node, Sym};
use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const NVARS: u32 = 3;

/// A random expression whose value stays inside the domain of every function used:
/// arguments of sqrt/ln are made positive, of asin/acos squeezed into (−1, 1), tan's kept
/// away from its poles, divisors kept away from zero.
fn random_expr(a: &mut Arena, rng: &mut ChaCha8Rng, depth: u32) -> ExprId {
    if depth == 0 || rng.random_range(0..10) < 2 {
        return if rng.random_range(0..3) == 0 {
            a.constant(rng.random_range(-2.0..2.0))
        } else {
            a.sym(Sym::Coord(rng.random_range(0..NVARS)))
        };
    }
    let x = random_expr(a, rng, depth - 1);
    let positive = |a: &mut Arena, e: ExprId| {
        // 1.5 + sin(e)^2 ∈ [1.5, 2.5]: positive, bounded.
        let s = a.sin(e);
        let s2 = a.powi(s, 2);
        let c = a.constant(1.5);
        a.add(c, s2)
    };
    let unit = |a: &mut Arena, e: ExprId| {
        // 0.8 sin(e) ∈ [−0.8, 0.8].
        let s = a.sin(e);
        let c = a.constant(0.8);
        a.mul(c, s)
    };
    match rng.random_range(0..17) {
        0 | 1 => {
            let y = random_expr(a, rng, depth - 1);
            a.add(x, y)
        }
        2 => {
            let y = random_expr(a, rng, depth - 1);
            a.sub(x, y)
        }
        3 | 4 => {
            let y = random_expr(a, rng, depth - 1);
            a.mul(x, y)
        }
        5 => {
            let y = random_expr(a, rng, depth - 1);
            let d = positive(a, y);
            a.div(x, d)
        }
        6 => a.neg(x),
        7 => {
            let n = rng.random_range(-3..5);
            let b = positive(a, x);
            a.powi(b, n)
        }
        8 => a.sin(x),
        9 => a.cos(x),
        10 => {
            let u = unit(a, x);
            a.func(Func::Tan, u)
        }
        11 => {
            let u = unit(a, x);
            let f = if rng.random_range(0..2) == 0 {
                Func::Asin
            } else {
                Func::Acos
            };
            a.func(f, u)
        }
        12 => a.func(Func::Atan, x),
        13 => {
            let b = positive(a, x);
            a.sqrt(b)
        }
        14 => {
            let u = unit(a, x);
            if rng.random_range(0..2) == 0 {
                a.func(Func::Exp, u)
            } else {
                let b = positive(a, x);
                a.func(Func::Ln, b)
            }
        }
        15 => {
            // |x + 3| with x bounded away from −3 by construction below: abs of a positive-
            // or negative-definite argument keeps the finite difference smooth.
            let b = positive(a, x);
            let nb = a.neg(b);
            let e = if rng.random_range(0..2) == 0 { b } else { nb };
            a.func(Func::Abs, e)
        }
        _ => {
            let y = random_expr(a, rng, depth - 1);
            let b = positive(a, y);
            a.atan2(x, b)
        }
    }
}

fn point(rng: &mut ChaCha8Rng) -> [f64; NVARS as usize] {
    [
        rng.random_range(-1.5..1.5),
        rng.random_range(-1.5..1.5),
        rng.random_range(-1.5..1.5),
    ]
}

fn eval(a: &Arena, e: ExprId, x: &[f64]) -> f64 {
    a.eval(&[e], &|s| match s {
        Sym::Coord(i) => x[i as usize],
        _ => 0.0,
    })[0]
}

#[test]
fn derivatives_match_central_differences_on_random_trees() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut checked = 0;
    let mut kinds = std::collections::HashSet::new();
    for _ in 0..1200 {
        let mut a = Arena::new();
        let e = random_expr(&mut a, &mut rng, 5);
        for n in a.nodes() {
            kinds.insert(std::mem::discriminant(n));
            if let Node::Func(f, _) = n {
                kinds.insert(std::mem::discriminant(&Node::Func(*f, e)));
            }
        }
        let x = point(&mut rng);
        let v = eval(&a, e, &x);
        assert!(v.is_finite(), "value not finite");
        for var in 0..NVARS {
            let d = a.diff(e, Sym::Coord(var));
            let dv = eval(&a, d, &x);
            let h = 1e-5;
            let mut xp = x;
            let mut xm = x;
            xp[var as usize] += h;
            xm[var as usize] -= h;
            let fd = (eval(&a, e, &xp) - eval(&a, e, &xm)) / (2.0 * h);
            let scale = dv.abs().max(fd.abs()).max(1.0);
            assert!(
                (dv - fd).abs() <= 1e-6 * scale,
                "d/dx{var}: symbolic {dv} vs central difference {fd}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 1200);
    // Every node kind occurred (Const, Sym, Add, Mul, Div, Neg, Powi, Func, Atan2).
    assert!(
        kinds.len() >= 9,
        "only {} node kinds generated",
        kinds.len()
    );
}

#[test]
fn complex_evaluation_at_real_points_equals_f64() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for _ in 0..1000 {
        let mut a = Arena::new();
        let e = random_expr(&mut a, &mut rng, 5);
        let x = point(&mut rng);
        let v = eval(&a, e, &x);
        let c = a.eval(&[e], &|s| match s {
            Sym::Coord(i) => Complex64::new(x[i as usize], 0.0),
            _ => Complex64::new(0.0, 0.0),
        })[0];
        assert!(
            (c.re - v).abs() <= 1e-12 * v.abs().max(1.0) && c.im.abs() <= 1e-12 * v.abs().max(1.0),
            "complex {c} vs real {v}"
        );
    }
}

#[test]
fn hash_consing_gives_equal_ids() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..200 {
        let mut a = Arena::new();
        let mut r1 = ChaCha8Rng::seed_from_u64(rng.random());
        let mut r2 = r1.clone();
        let e1 = random_expr(&mut a, &mut r1, 5);
        let n = a.len();
        let e2 = random_expr(&mut a, &mut r2, 5);
        assert_eq!(e1, e2);
        assert_eq!(a.len(), n, "building the same expression again added nodes");
    }
    let mut a = Arena::new();
    let x = a.sym(Sym::Coord(0));
    let y = a.sym(Sym::Coord(1));
    let s1 = a.mul(x, y);
    let s2 = a.mul(y, x);
    assert_eq!(s1, s2);
    let zero = a.constant(0.0);
    let one = a.constant(1.0);
    assert_eq!(a.add(x, zero), x);
    assert_eq!(a.mul(x, one), x);
    assert_eq!(a.mul(x, zero), zero);
    let nx = a.neg(x);
    assert_eq!(a.neg(nx), x);
    assert_eq!(a.div(x, one), x);
    assert_eq!(a.powi(x, 0), one);
    assert_eq!(a.powi(x, 1), x);
    assert_eq!(a.sub(x, x), zero);
    let nz = a.constant(-0.0);
    assert_eq!(nz, zero);
}

/// A nest `f_{k+1} = sin(f_k) · cos(f_k) + f_k²`: each level uses the previous one three
/// times, so the expression *tree* doubles in size per level while the DAG grows by a
/// constant. The Jacobian of a vector of such nests must grow linearly too.
#[test]
fn jacobian_of_shared_nest_grows_linearly() {
    let sizes: Vec<usize> = [8, 16, 32, 64]
        .iter()
        .map(|&depth| {
            let mut a = Arena::new();
            let x = a.sym(Sym::Coord(0));
            let y = a.sym(Sym::Coord(1));
            let mut f = a.mul(x, y);
            for _ in 0..depth {
                let s = a.sin(f);
                let c = a.cos(f);
                let sc = a.mul(s, c);
                let f2 = a.powi(f, 2);
                f = a.add(sc, f2);
            }
            let g = a.add(f, x);
            let jac: Vec<ExprId> = [f, g]
                .iter()
                .flat_map(|&e| [a.diff(e, Sym::Coord(0)), a.diff(e, Sym::Coord(1))])
                .collect();
            a.dag_size(&jac)
        })
        .collect();
    for w in sizes.windows(2) {
        let ratio = w[1] as f64 / w[0] as f64;
        assert!(
            ratio < 2.2,
            "DAG sizes {sizes:?}: doubling depth multiplied size by {ratio}"
        );
    }
    assert!(sizes[3] < 64 * 40, "sizes {sizes:?}");
}

#[test]
fn substitution_folds_constants() {
    let mut a = Arena::new();
    let x = a.sym(Sym::Coord(0));
    let p = a.sym(Sym::Param(0));
    let e = a.mul(p, x);
    let two = a.constant(2.0);
    let r = a.subst(&[e], &|s| (s == Sym::Param(0)).then_some(two))[0];
    let expect = a.mul(two, x);
    assert_eq!(r, expect);
    let zero = a.constant(0.0);
    let r0 = a.subst(&[e], &|s| (s == Sym::Param(0)).then_some(zero))[0];
    assert_eq!(r0, zero);
}
