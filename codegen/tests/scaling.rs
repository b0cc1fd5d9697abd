//! Scaling (issue 9.5): the reverse-mode Jacobian rows and the tangent-pass `γ` equal the
//! per-coordinate derivatives they replace, at random points; long chains generate.

use std::fmt::Write;
use std::str::FromStr;

use mechgen_codegen::derive::{self, motion as dynamics};
use mechgen_codegen::expr::{Arena, ExprId, Sym};
use mechgen_codegen::proc_macro2::TokenStream;
use mechgen_codegen::{generate_str, models, Options};

/// A closed chain of `n` unit links pinned at both ends: one vector equation (two scalar
/// ones) over all `n` coordinates, plus a time-dependent term so that `C_t` and `C_tt`
/// are not zero.
fn one_constraint(n: usize) -> String {
    let mut s = format!("pub mod one_constraint_{n} {{\n    param span = 1.0;\n");
    for i in 0..n {
        let t = 1.0 - 2.0 * i as f64 / (n as f64 - 1.0);
        let _ = writeln!(s, "    coord th{i} = {t:?};");
    }
    let terms: Vec<String> = (0..n)
        .map(|i| {
            format!("vec2(cos(th{i}) * (1.0 + 0.01 * th{i} * th{i}), sin(th{i}) / (2.0 + sin(t)))")
        })
        .collect();
    // The right-hand side holds at the nominal (t = 0): generation rejects nominals far off.
    let x0: f64 = (0..n)
        .map(|i| {
            let t = 1.0 - 2.0 * i as f64 / (n as f64 - 1.0);
            t.cos() * (1.0 + 0.01 * t * t)
        })
        .sum();
    let _ = writeln!(
        s,
        "    constraint {} == vec2(span * {x0:?}, 0.1 * t);\n}}",
        terms.join(" + ")
    );
    s
}

/// A chain of `k` pendulum-like links joined by distance constraints: a banded Jacobian
/// (equation `i` couples coordinates `i − 1`, `i`, `i + 1`), `NQ = k + 2`, `NC = k`.
pub fn banded_chain(k: usize) -> String {
    let mut s = format!("pub mod banded_{k} {{\n    param l = 1.0;\n");
    for i in 0..k + 2 {
        let _ = writeln!(s, "    coord q{i} = {:?};", 0.1 * i as f64);
    }
    for i in 1..=k {
        let _ = writeln!(
            s,
            "    constraint (q{a} - q{b}) * (q{a} - q{b}) + l * sin(q{i}) == (0.1 * 0.1) * 2.0 + l * sin({x:?});",
            a = i + 1,
            b = i - 1,
            x = 0.1 * i as f64
        );
    }
    s.push_str("}\n");
    s
}

/// A lowered model and its DAG (the engine keeps them apart; read as one here).
struct Lowered {
    model: mechgen_codegen::model::Model,
    arena: mechgen_codegen::expr::Arena,
}

impl std::ops::Deref for Lowered {
    type Target = mechgen_codegen::model::Model;
    fn deref(&self) -> &Self::Target {
        &self.model
    }
}

fn model(src: &str) -> Lowered {
    let ts = TokenStream::from_str(src).unwrap_or_else(|e| panic!("{e}"));
    let (mut ms, _) = models(ts).unwrap_or_else(|e| panic!("{e}"));
    let (model, arena) = ms.remove(0);
    Lowered { model, arena }
}

/// A small deterministic generator (xorshift) for random points.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

fn eval_at(a: &Arena, roots: &[ExprId], q: &[f64], v: &[f64], t: f64) -> Vec<f64> {
    a.eval(roots, &|s| match s {
        Sym::Coord(i) => q[i as usize],
        Sym::Vel(i) => v[i as usize],
        Sym::Param(_) => 1.3,
        Sym::Time => t,
        Sym::Rhs(_) | Sym::Weight(_) => 0.0,
    })
}

#[track_caller]
fn assert_close(x: &[f64], y: &[f64], what: &str) {
    assert_eq!(x.len(), y.len());
    for (k, (a, b)) in x.iter().zip(y).enumerate() {
        assert!(
            (a - b).abs() <= 1e-11 * (1.0 + a.abs().max(b.abs())),
            "{what}[{k}]: {a} vs {b}"
        );
    }
}

#[test]
fn gradient_rows_equal_forward_derivatives() {
    // 100 coordinates in one equation: above the bound where rows switch to the reverse
    // pass.
    let n = 100;
    assert!(n > derive::GRADIENT_ABOVE);
    let mut m = model(&one_constraint(n));
    let jm = derive::jacobian(&m.model, &mut m.arena);
    let zero = m.arena.constant(0.0);
    let jac: Vec<Vec<ExprId>> = (0..jm.nrows()).map(|i| jm.dense_row(i, zero)).collect();
    let a = &mut m.arena;
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for (r, row) in jac.iter().enumerate() {
        let e = m_constraint(r, &m.model.constraints);
        let forward: Vec<ExprId> = (0..n).map(|k| a.diff(e, Sym::Coord(k as u32))).collect();
        for _ in 0..3 {
            let q: Vec<f64> = (0..n).map(|_| rng.next()).collect();
            let t = rng.next();
            let g = eval_at(a, row, &q, &[], t);
            let f = eval_at(a, &forward, &q, &[], t);
            assert_close(&g, &f, "gradient");
            // Not all zero: the comparison means something.
            assert!(g.iter().filter(|v| v.abs() > 1e-3).count() > n / 2);
        }
    }
}

fn m_constraint(r: usize, cs: &[mechgen_codegen::model::Equation]) -> ExprId {
    cs[r].expr
}

/// `γ` from the tangent pass against `−(Σ_k ∂w/∂q_k q̇_k + ∂w/∂t)`, the formula it
/// replaced, at random `(q, q̇, t)`.
fn check_gamma(src: &str) {
    let mut m = model(src);
    let nq = m.coords.len();
    let jac = derive::jacobian(&m.model, &mut m.arena);
    let jac_t = derive::jacobian_t(&m.model, &mut m.arena);
    let gamma = derive::gamma(&mut m.arena, &jac, &jac_t);
    let a = &mut m.arena;
    let old: Vec<ExprId> = jac
        .rows()
        .zip(&jac_t)
        .map(|(row, &ct)| {
            let mut w = ct;
            let mut coords = Vec::new();
            for &(k, e) in row {
                coords.push(k);
                let v = a.sym(Sym::Vel(k as u32));
                let ev = a.mul(e, v);
                w = a.add(w, ev);
            }
            let wd = dynamics::time_derivative_over(a, w, &coords);
            a.neg(wd)
        })
        .collect();
    let mut rng = Rng(0x0bad_cafe_f00d_1234);
    for _ in 0..4 {
        let q: Vec<f64> = (0..nq).map(|_| rng.next()).collect();
        let v: Vec<f64> = (0..nq).map(|_| 2.0 * rng.next()).collect();
        let t = rng.next();
        let new_vals = eval_at(a, &gamma, &q, &v, t);
        let old_vals = eval_at(a, &old, &q, &v, t);
        assert_close(&new_vals, &old_vals, "gamma");
        assert!(new_vals.iter().any(|x| x.abs() > 1e-3));
    }
}

#[test]
fn gamma_by_tangent_equals_the_partial_derivative_formula() {
    check_gamma(&one_constraint(80));
    check_gamma(&banded_chain(30));
    check_gamma(
        "pub mod sc { param l1 = 0.1; param l2 = 0.3; coord th = 0.3; coord be = 0.46; coord s = 0.31;
         constraint vec2(l1 * cos(th + t), l1 * sin(th)) + vec2(l2 * sin(be), -l2 * cos(be)) == vec2(s, 0.1 * atan2(s, 2.0 + th));
         constraint s.powi(3) / (2.0 + be.sin()) == (th * th * t * t + 1.0).sqrt() + 0.1; }",
    );
}

#[test]
fn one_constraint_over_500_coordinates_generates() {
    let src = one_constraint(500);
    let g = generate_str(&src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.modules.len(), 1);
}

/// Generates `banded_chain(k)` and checks its sizes.
fn check_banded(k: usize) {
    let src = banded_chain(k);
    let g = generate_str(&src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let m = &g.modules[0];
    assert_eq!((m.nq, m.nc, m.rank, m.dof), (k + 2, k, k, 2));
}

#[test]
fn banded_chain_of_400_coordinates_generates() {
    check_banded(398);
}

/// About 30 s in a debug build on a loaded machine (the release figure is in the bench):
/// `cargo test -p mechgen-codegen --release --test scaling -- --ignored`.
#[test]
#[ignore = "bench size; run with --release -- --ignored"]
fn banded_chain_of_2000_coordinates_generates() {
    check_banded(1_998);
}

/// Lines of the pretty-printed module generated from `src`.
fn lines(src: &str) -> usize {
    let g = generate_str(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    mechgen_codegen::pretty(&g.tokens).lines().count()
}

/// Generated text grows linearly with a banded chain: long bodies are split into chunks
/// that hand values on through one scratch buffer, each value read only where it is used
/// (handing the whole live set from chunk to chunk, and every finished output with it,
/// made the text grow with chunks × live values: 3.2× the lines for 2× the coordinates
/// on a four-bar chain of 2,000 coordinates).
#[test]
fn generated_text_grows_linearly_with_a_banded_chain() {
    let (small, large) = (lines(&banded_chain(600)), lines(&banded_chain(1200)));
    let ratio = large as f64 / small as f64;
    assert!(
        ratio <= 2.15,
        "{small} lines for 602 coordinates, {large} for 1,202: ratio {ratio:.2}"
    );
}

/// A chain of `k` four-bar loops placed side by side from `origin` (ground pivots up to
/// `origin + 4k`): `bench/src/families.rs::four_bar_chain` at `origin = 0`.
fn four_bar_chain(k: usize, origin: f64) -> String {
    let (a, b, c, g) = (1.0f64, 3.0f64, 2.5f64, 3.0f64);
    let mut s = format!("pub mod chain_{k} {{\n    param la = {a:?};\n    param lb = {b:?};\n    param lc = {c:?};\n    param lg = {g:?};\n");
    let mut theta = 1.0f64;
    let _ = writeln!(s, "    coord th0 = {theta:?};");
    let mut cons = String::new();
    for i in 1..=k {
        let x0 = origin + 4.0 * (i as f64 - 1.0);
        let p = (x0 + a * theta.cos(), a * theta.sin());
        let r = (x0 + g, 0.0);
        let (dx, dy) = (r.0 - p.0, r.1 - p.1);
        let d = (dx * dx + dy * dy).sqrt();
        let l = (b * b - c * c + d * d) / (2.0 * d);
        let h = (b * b - l * l).max(0.0).sqrt();
        let q = (p.0 + l * dx / d - h * dy / d, p.1 + l * dy / d + h * dx / d);
        let phi = (q.1 - p.1).atan2(q.0 - p.0);
        let th = (q.1 - r.1).atan2(q.0 - r.0);
        let _ = writeln!(s, "    coord ph{i} = {phi:?};\n    coord th{i} = {th:?};");
        let _ = writeln!(
            cons,
            "    constraint vec2({x0:?} + la * cos(th{p}), la * sin(th{p})) + vec2(lb * cos(ph{i}), lb * sin(ph{i})) == vec2({x0:?} + lg + lc * cos(th{i}), lc * sin(th{i}));",
            p = i - 1
        );
        theta = th;
    }
    s.push_str(&cons);
    s.push_str("}\n");
    s
}

/// Projection onto the constraints reaches the rounding floor of large terms: with ground
/// pivots 10⁶ from the origin, ‖C‖ cannot go below ~1e-10, and an absolute 1e-13 made
/// every projection run its 60 iterations and fail (the probes then fell back on
/// perturbed points, the walk stopped).
#[test]
fn projection_accepts_the_rounding_floor_of_a_large_model() {
    use mechgen_codegen::expr::Evaluator;
    use mechgen_codegen::pivot::probe::{project, SparseJacobian};
    let mut m = model(&four_bar_chain(50, 1e6));
    let jac = derive::jacobian(&m.model, &mut m.arena);
    let roots: Vec<ExprId> = m.constraints.iter().map(|c| c.expr).collect();
    let res = Evaluator::new(&m.arena, &roots);
    let sj = SparseJacobian::new(&m.arena, &jac);
    let p: Vec<f64> = vec![1.0, 3.0, 2.5, 3.0];
    let mut rng = Rng(0x0dd_ba11);
    let q0: Vec<f64> = m
        .coords
        .iter()
        .map(|c| c.nominal + 0.01 * rng.next())
        .collect();
    let q = project(&m.arena, &res, &sj, &q0, &p, 0.0).expect("projects");
    let worst = res
        .eval(&m.arena, &|s| match s {
            Sym::Coord(i) => q[i as usize],
            Sym::Param(i) => p[i as usize],
            _ => 0.0,
        })
        .iter()
        .fold(0.0f64, |w, v| w.max(v.abs()));
    assert!(worst <= 1e-8, "|C|_max = {worst:e} after projection");
}
