//! The dynamics' symbolic derivatives (`#![derivatives]`) against central differences of
//! the expressions they differentiate, evaluated by the engine's own evaluator at a model's
//! assembled nominal: `∂f/∂q`, `∂f/∂q̇`, `∂f/∂p`, `∂(M a)/∂q`, `∂(f − M a)/∂q`, `∂γ/∂q`,
//! `∂γ/∂q̇`, `∂γ/∂p`, `∂C/∂p`, and the weighted reductions `Wᵀ ∂(f − M a)/∂q`, `Wᵀ ∂f/∂q̇`,
//! `Wᵀ ∂γ/∂q`, `Wᵀ ∂γ/∂q̇` (velocities, `a` and `W` drawn at random).
//!
//! A column is compared only where the differences are trustworthy: central differences
//! with steps `h` and `h/4` agree (a kink, a branch of `abs`/`min`, a pole nearby make
//! them disagree) and the symbolic entry is finite (`√x` at `x = 0` has no derivative).
//! An entry is wrong when it differs from the `h/4` difference by more than
//! `1e-4 (|symbolic| + |difference|) + 1e-6 s` plus ten times the two differences' spread,
//! `s` the largest magnitude in the matrix and the column's differences (at least `1e-3`).

use mechgen_codegen::derive::sensitivity::dynamics_derivatives;
use mechgen_codegen::derive::{self, SymMatrix};
use mechgen_codegen::expr::{Arena, ExprId, Sym};
use mechgen_codegen::model::Model;
use mechgen_codegen::pivot::{self, PivotOptions};

use crate::oracle::{Finding, Kind};

/// Machine epsilons of the larger value differenced that rounding may have left in a
/// difference (its noise is this over the step).
const NOISE: f64 = 16.0 * f64::EPSILON;

/// The largest magnitude of a variable that differences are taken along.
const MAX_VALUE: f64 = 1e3;

/// The values of every input symbol, one of them perturbed.
#[derive(Clone, Copy)]
struct Values<'a> {
    q: &'a [f64],
    qd: &'a [f64],
    p: &'a [f64],
    rhs: &'a [f64],
    w: &'a [f64],
    t: f64,
    shift: Option<(Sym, f64)>,
}

impl Values<'_> {
    fn get(&self, s: Sym) -> f64 {
        let v = match s {
            Sym::Coord(i) => self.q[i as usize],
            Sym::Vel(i) => self.qd[i as usize],
            Sym::Param(i) => self.p[i as usize],
            Sym::Rhs(i) => self.rhs.get(i as usize).copied().unwrap_or(0.0),
            Sym::Weight(i) => self.w.get(i as usize).copied().unwrap_or(0.0),
            Sym::Time => self.t,
        };
        match self.shift {
            Some((t, d)) if t == s => v + d,
            _ => v,
        }
    }

    fn eval(&self, arena: &Arena, roots: &[ExprId]) -> Vec<f64> {
        arena.eval(roots, &|s| self.get(s))
    }
}

/// A little deterministic generator (xorshift) for the random velocities and weights.
fn draws(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// What one symbolic matrix is checked against.
struct Case<'a> {
    name: &'static str,
    /// The symbolic derivative (`rows × nvars`, or `DOF × nvars` for a reduction).
    derivative: &'a SymMatrix,
    /// The expressions differentiated (`rows` of them).
    base: &'a [ExprId],
    /// The variable of column `k`.
    var: fn(usize) -> Sym,
    nvars: usize,
    /// For a reduction `Wᵀ ∂base/∂x`: the number of weight columns (`W` the symbols
    /// `Sym::Weight(i + base.len() j)`).
    weights: Option<usize>,
}

/// Checks the constraints' derivatives of model `m` at the assembled configuration `q` and
/// parameters `p`, at `t = 0`: the Jacobian `C_J` and `C_t` against central differences of
/// the residual, and `γ` (of `C_J q̈ = γ`) at random velocities `v` against the second
/// difference of `s ↦ C(q + s v, p, s)` (whose second derivative at `q̈ = 0` is `−γ`).
pub(crate) fn kinematics(
    m: &Model,
    arena: &mut Arena,
    kin: &derive::Kinematics,
    q: &[f64],
    p: &[f64],
) -> Result<(), Finding> {
    let residual: Vec<ExprId> = m.constraints.iter().map(|c| c.expr).collect();
    let nq = m.coords.len();
    let qd = draws(0x9a33a ^ nq as u64, nq);
    let values = Values {
        q,
        qd: &qd,
        p,
        rhs: &[],
        w: &[],
        t: 0.0,
        shift: None,
    };
    let mut c_t = SymMatrix::new(1);
    for &e in &kin.jacobian_t {
        c_t.push_row(arena, vec![(0, e)]);
    }
    let cases = [
        Case {
            name: "jacobian",
            derivative: &kin.jacobian,
            base: &residual,
            var: |k| Sym::Coord(k as u32),
            nvars: nq,
            weights: None,
        },
        Case {
            name: "jacobian_t",
            derivative: &c_t,
            base: &residual,
            var: |_| Sym::Time,
            nvars: 1,
            weights: None,
        },
    ];
    for c in &cases {
        compare(arena, &values, c)?;
    }
    if q.iter().any(|x| x.abs() > MAX_VALUE) {
        return Ok(());
    }
    let gamma = values.eval(arena, &kin.gamma);
    let second = |h: f64| -> (Vec<f64>, Vec<f64>) {
        let at = |s: f64| {
            let qs: Vec<f64> = q.iter().zip(values.qd).map(|(x, v)| x + s * v).collect();
            let v = Values {
                q: &qs,
                t: s,
                ..values
            };
            v.eval(arena, &residual)
        };
        let (up, mid, down) = (at(h), at(0.0), at(-h));
        up.iter()
            .zip(&mid)
            .zip(&down)
            .map(|((u, m), d)| {
                let size = u.abs().max(m.abs()).max(d.abs());
                (-(u - 2.0 * m + d) / (h * h), 4.0 * NOISE * size / (h * h))
            })
            .unzip()
    };
    let ((g1, _), (g2, noise)) = (second(1e-3), second(5e-4));
    // The h/2 difference's error is about a third of the spread (O(h²)).
    if let Some((i, g, a, b)) = mismatch(&gamma, &g1, &g2, &noise, floor(&gamma, &g2), 1e-2, 2.0) {
        return Err(Finding::new(
            Kind::WrongDerivative,
            format!("gamma[{i}] = {g:.9e}, second differences {b:.9e} (h = 1e-3: {a:.9e})"),
        ));
    }
    Ok(())
}

/// The first entry `(i, symbolic, coarse, fine)` where `symbolic` differs from the fine
/// difference by more than `1e-4 (|symbolic| + |fine|) + 1e-6 floor + spread_weight ·
/// |coarse − fine|`, among the entries that are finite and whose differences have settled
/// (`|coarse − fine| ≤ settle (floor + |fine|)`: a kink or a pole nearby leaves them apart),
/// with the fine difference's rounding `noise` added to the bound.
fn mismatch(
    symbolic: &[f64],
    coarse: &[f64],
    fine: &[f64],
    noise: &[f64],
    floor: f64,
    settle: f64,
    spread_weight: f64,
) -> Option<(usize, f64, f64, f64)> {
    symbolic
        .iter()
        .zip(coarse)
        .zip(fine)
        .zip(noise)
        .enumerate()
        .map(|(i, (((&s, &a), &b), &n))| (i, s, a, b, n))
        .filter(|&(_, s, a, b, n)| s.is_finite() && a.is_finite() && b.is_finite() && n.is_finite())
        .filter(|&(_, _, a, b, _)| (a - b).abs() <= settle * (floor + b.abs()))
        .find(|&(_, s, a, b, n)| {
            (s - b).abs()
                > 1e-4 * (s.abs() + b.abs()) + 1e-6 * floor + spread_weight * (a - b).abs() + n
        })
        .map(|(i, s, a, b, _)| (i, s, a, b))
}

/// The scale below which differences are rounding: the largest finite magnitude among
/// the symbolic values and their references, and at least `1e-3`.
fn floor(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .chain(b)
        .filter(|v| v.is_finite())
        .fold(1e-3f64, |m, v| m.max(v.abs()))
}

/// Checks the derivatives of model `m` (with dynamics, without velocity constraints) at
/// the assembled configuration `q` and parameters `p`.
pub(crate) fn check(
    m: &Model,
    arena: &mut Arena,
    kin: &derive::Kinematics,
    q: &[f64],
    p: &[f64],
    seed: u64,
) -> Result<(), Finding> {
    let nq = m.coords.len();
    let eom = derive::motion::equations_of_motion(m, arena);
    // The analysis the engine ran already succeeded; a failure here (another seed) only
    // means the weighted reductions cannot be formed the same way: nothing to check.
    let Ok(ns) = pivot::analyze(m, arena, &kin.jacobian, &PivotOptions::new(seed)) else {
        return Ok(());
    };
    let dof = ns.basis.first().map_or(0, Vec::len);
    let d = dynamics_derivatives(
        m,
        arena,
        &eom,
        &kin.jacobian,
        &kin.gamma,
        &ns.basis,
        &ns.solve,
    );
    // `M a` and `f − M a` for the symbols `a = Sym::Rhs(0..NQ)`.
    let a: Vec<ExprId> = (0..nq).map(|j| arena.sym(Sym::Rhs(j as u32))).collect();
    let mut ma = Vec::with_capacity(nq);
    let mut dyn_ = Vec::with_capacity(nq);
    for i in 0..nq {
        let mut s = arena.constant(0.0);
        for (j, &aj) in a.iter().enumerate() {
            let t = arena.mul(eom.mass[i][j], aj);
            s = arena.add(s, t);
        }
        ma.push(s);
        let neg = arena.neg(s);
        dyn_.push(arena.add(eom.forces[i], neg));
    }
    let residual: Vec<ExprId> = m.constraints.iter().map(|c| c.expr).collect();
    let np = m.params.len();
    let coord: fn(usize) -> Sym = |k| Sym::Coord(k as u32);
    let vel: fn(usize) -> Sym = |k| Sym::Vel(k as u32);
    let param: fn(usize) -> Sym = |k| Sym::Param(k as u32);
    let case = |name, derivative, base, var, nvars, weights| Case {
        name,
        derivative,
        base,
        var,
        nvars,
        weights,
    };
    let cases = [
        case("forces_q", &d.forces_q, &eom.forces, coord, nq, None),
        case("forces_qd", &d.forces_qd, &eom.forces, vel, nq, None),
        case("forces_p", &d.forces_p, &eom.forces, param, np, None),
        case("mass_a_q", &d.mass_a_q, &ma, coord, nq, None),
        case("dynamics_q", &d.dynamics_q, &dyn_, coord, nq, None),
        case("gamma_q", &d.gamma_q, &kin.gamma, coord, nq, None),
        case("gamma_qd", &d.gamma_qd, &kin.gamma, vel, nq, None),
        case("gamma_p", &d.gamma_p, &kin.gamma, param, np, None),
        case("residual_p", &d.residual_p, &residual, param, np, None),
        case("dynamics_wq", &d.dynamics_wq, &dyn_, coord, nq, Some(dof)),
        case("forces_wqd", &d.forces_wqd, &eom.forces, vel, nq, Some(dof)),
        case("gamma_wq", &d.gamma_wq, &kin.gamma, coord, nq, Some(dof)),
        case("gamma_wqd", &d.gamma_wqd, &kin.gamma, vel, nq, Some(dof)),
    ];
    let n_w = nq.max(m.constraints.len()) * dof.max(1);
    let (qd, rhs, w) = (
        draws(seed ^ 0x71d, nq),
        draws(seed ^ 0xb0b, nq),
        draws(seed ^ 0x3e1, n_w),
    );
    let values = Values {
        q,
        qd: &qd,
        p,
        rhs: &rhs,
        w: &w,
        t: 0.0,
        shift: None,
    };
    for c in &cases {
        compare(arena, &values, c)?;
    }
    Ok(())
}

fn compare(arena: &Arena, values: &Values<'_>, c: &Case<'_>) -> Result<(), Finding> {
    let rows = c.base.len();
    let out_rows = c.weights.unwrap_or(rows);
    // The symbolic matrix, dense, by columns.
    let mut sym = vec![vec![0.0; out_rows]; c.nvars];
    let nz: Vec<(usize, usize, ExprId)> = c.derivative.nonzeros().collect();
    let roots: Vec<ExprId> = nz.iter().map(|&(_, _, e)| e).collect();
    for (&(i, j, _), v) in nz.iter().zip(values.eval(arena, &roots)) {
        if i >= out_rows || j >= c.nvars {
            return Err(Finding::new(
                Kind::WrongDerivative,
                format!(
                    "{}: entry ({i}, {j}) outside {out_rows} × {}",
                    c.name, c.nvars
                ),
            ));
        }
        sym[j][i] = v;
    }
    let all: Vec<f64> = sym.iter().flatten().copied().collect();
    for (k, column) in sym.iter().enumerate() {
        let var = (c.var)(k);
        let x = values.get(var);
        // Beyond a thousand the steps (10⁻⁵ of the value) are no longer small against a
        // period of the trigonometry: differences there say nothing (a nominal angle of
        // 9.2·10¹⁸, fuzzer seed 6).
        if x.abs() > MAX_VALUE {
            continue;
        }
        let h = 1e-5 * (1.0 + x.abs());
        // Central differences at step `h`, and the rounding noise of each: a few ulps of the
        // values differenced, over the step (a sum of large terms, a spring force of 10⁸,
        // quantises the difference so coarsely that two steps can agree on a wrong value).
        let central = |h: f64| -> (Vec<f64>, Vec<f64>) {
            let at = |d: f64| {
                let v = Values {
                    shift: Some((var, d)),
                    ..*values
                };
                v.eval(arena, c.base)
            };
            let (up, down) = (at(h), at(-h));
            up.iter()
                .zip(&down)
                .map(|(u, d)| ((u - d) / (2.0 * h), NOISE * u.abs().max(d.abs()) / h))
                .unzip()
        };
        let ((f1, _), (f4, n4)) = (central(h), central(h / 4.0));
        // Reduced by the weights where the case is a reduction.
        let reduce = |f: &[f64]| -> Vec<f64> {
            match c.weights {
                None => f.to_vec(),
                Some(n) => (0..n)
                    .map(|j| {
                        (0..rows)
                            .map(|i| values.get(Sym::Weight((i + rows * j) as u32)) * f[i])
                            .sum()
                    })
                    .collect(),
            }
        };
        let (f1, f4) = (reduce(&f1), reduce(&f4));
        let noise: Vec<f64> = match c.weights {
            None => n4,
            Some(n) => (0..n)
                .map(|j| {
                    (0..rows)
                        .map(|i| (values.get(Sym::Weight((i + rows * j) as u32)) * n4[i]).abs())
                        .sum()
                })
                .collect(),
        };
        if let Some((i, s, a, b)) = mismatch(column, &f1, &f4, &noise, floor(&all, &f4), 1e-3, 10.0)
        {
            return Err(Finding::new(
                Kind::WrongDerivative,
                format!(
                    "{}[{i}, {k}] = {s:.9e}, central differences {b:.9e} (h = {h:.1e}: {a:.9e})",
                    c.name,
                    h = h / 4.0
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{check_with, OracleOptions};

    fn full() -> OracleOptions {
        OracleOptions {
            generation: mechgen_codegen::Options {
                generic: true,
                derivatives: true,
                ..mechgen_codegen::Options::default()
            },
            ..OracleOptions::default()
        }
    }

    #[test]
    fn the_shipped_mechanisms_derivatives_match_central_differences() {
        for path in [
            "../examples/seven_body/andrews.mech",
            "../examples/iftomm/a04.mech",
        ] {
            let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            check_with(&src, &full()).unwrap_or_else(|f| panic!("{path}: {f}"));
        }
    }

    #[test]
    fn a_wrong_derivative_is_reported() {
        // `∂(x²)/∂x` claimed to be `x`.
        let mut arena = Arena::new();
        let x = arena.sym(Sym::Coord(0));
        let x2 = arena.mul(x, x);
        let mut wrong = SymMatrix::new(1);
        wrong.push_row(&arena, vec![(0, x)]);
        let q = [0.7];
        let values = Values {
            q: &q,
            qd: &[0.0],
            p: &[],
            rhs: &[],
            w: &[],
            t: 0.0,
            shift: None,
        };
        let base = [x2];
        let case = |d| Case {
            name: "square",
            derivative: d,
            base: &base,
            var: |k| Sym::Coord(k as u32),
            nvars: 1,
            weights: None,
        };
        let f = compare(&arena, &values, &case(&wrong)).expect_err("x is not 2x");
        assert_eq!(f.kind, Kind::WrongDerivative);
        assert!(f.detail.starts_with("square[0, 0] = 7.0"), "{}", f.detail);
        let two = arena.constant(2.0);
        let right_expr = arena.mul(two, x);
        let mut right = SymMatrix::new(1);
        right.push_row(&arena, vec![(0, right_expr)]);
        compare(&arena, &values, &case(&right)).expect("2x is right");
    }
}
