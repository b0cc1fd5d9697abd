//! Checks of a lowered model before probing: equations that cannot constrain the
//! coordinates, contradictory equations, and a nominal configuration that is off the
//! constraint manifold.
//!
//! What is checked, and the bounds:
//!
//! * An equation whose Jacobian row is structurally zero (it involves only parameters,
//!   constants and time) is an error: it cannot restrict the coordinates, and it is either
//!   false (`1.0 == 2.0`) or says nothing.
//! * The nominal coordinates are Newton-projected onto `C(q, p, 0) = 0` (parameters at their
//!   defaults, as for probing). When that fails and a Levenberg–Marquardt minimisation of
//!   `‖C‖²` from the nominal and perturbed starts stops with an equation still off by at least
//!   [`INCONSISTENT_REL`] of its own size, the equations are **inconsistent** (`x² + y² == 1`
//!   and `x² + y² == 4`): an error naming the equations in conflict. A smaller leftover is
//!   only a note (a local method proves nothing there).
//! * Each equation's *relative* residual at the nominal, `|C_i(q₀)| / Σ|terms of C_i(q₀)|`
//!   (the terms of its top-level sum, so `lhs − rhs` relative to the size of both sides), is
//!   in `[0, 1]`. Above [`NOTE_REL`] the nominal is reported in a note (shown in the
//!   module docs and as a `cargo:warning` from build.rs) with the coordinates that the
//!   projection moved most. When the projection turns an angle (a coordinate inside `sin`,
//!   `cos` or `tan`) by more than [`ANGLE_ERROR`] radians it is an error: the nominal is
//!   not a rough guess of a configuration but a different one (a sign error, another
//!   assembly branch), and probing from it would silently analyse another configuration.
//!   Positions are not bounded: leaving them at placeholder values for assembly to fill in
//!   is common.

use crate::derive::SymMatrix;
use crate::error::{Error, Result};
use crate::expr::{Arena, Evaluator, ExprId, Node, Sym};
use crate::model::Model;
use crate::pivot::probe::{self, SparseJacobian};

/// Relative residual of an equation at the nominal above which a note is written.
pub const NOTE_REL: f64 = 1e-9;
/// Change of an angle coordinate (radians) by the assembly of the nominal above which
/// generation stops.
pub const ANGLE_ERROR: f64 = 0.5;
/// Relative residual (of the most violated equation, at the least-squares point) from
/// which equations that do not assemble are reported as inconsistent.
pub const INCONSISTENT_REL: f64 = 0.05;
/// Starts of the least-squares search for a configuration when Newton's method from the
/// nominal coordinates fails: the nominal and perturbed ones.
const LS_STARTS: usize = 6;
/// `‖C‖` below which a point counts as on the manifold (as in probing's projection).
const ON_MANIFOLD: f64 = 1e-13;

/// What the checks found that is worth telling but not an error.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// Notes for the module docs and build warnings.
    pub notes: Vec<String>,
}

/// Runs the checks (see the module docs). `jacobian` is `C_J`, `NC × NQ`, row-major;
/// `seed` the probe seed (parameters without a default get the same values as in probing).
pub fn check(model: &Model, arena: &Arena, jacobian: &SymMatrix, seed: u64) -> Result<Checked> {
    let mut out = Checked::default();
    let nq = model.coords.len();
    if model.constraints.is_empty() {
        return Ok(out);
    }
    let params = probe::real_params(model, &mut probe::rng(seed));
    // Equations that involve no coordinate.
    for (i, eq) in model.constraints.iter().enumerate() {
        if jacobian.row(i).is_empty() {
            let v = eval1(arena, eq.expr, &model.coords_nominal(), &params, 0.0);
            let truth = if arena.depends_on(eq.expr, Sym::Time) {
                String::from("it depends only on time and parameters")
            } else if v.abs() > 1e-12 {
                format!("it is false at the default parameters (residual {v:.3e})")
            } else {
                String::from("it holds for the default parameters and says nothing")
            };
            return Err(Error::new(
                eq.span,
                format!(
                    "constraint `{}` does not involve any coordinate: {truth}; a constraint must restrict the coordinates",
                    short(&eq.label)
                ),
            ));
        }
    }
    let roots: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    let res = Evaluator::new(arena, &roots);
    let jac = SparseJacobian::new(arena, jacobian);
    let q0 = model.coords_nominal();
    let c0 = eval_env(&res, arena, &q0, &params, 0.0);
    if c0.iter().any(|v| !v.is_finite()) {
        let i = c0.iter().position(|v| !v.is_finite()).unwrap_or(0);
        return Err(Error::new(
            model.constraints[i].span,
            format!(
                "constraint `{}` is not finite at the nominal coordinates ({}): check the nominal values (a division by zero or a function outside its domain)",
                short(&model.constraints[i].label), c0[i]
            ),
        ));
    }
    let sizes = term_sizes(arena, &roots, &q0, &params);
    let rel: Vec<f64> = sizes
        .iter()
        .zip(&c0)
        .map(|(&size, &c)| {
            if c == 0.0 {
                0.0
            } else if size > 0.0 {
                (c.abs() / size).min(1.0)
            } else {
                1.0
            }
        })
        .collect();
    let (worst, worst_rel) =
        rel.iter()
            .copied()
            .enumerate()
            .fold((0, 0.0), |b, (i, r)| if r > b.1 { (i, r) } else { b });
    let projected = probe::project(arena, &res, &jac, &q0, &params, 0.0);
    match projected {
        Some(q) => {
            // Positions are often left at placeholder values for assembly to fill in; an
            // angle moved by more than ANGLE_ERROR is another configuration.
            let angles = probe::angle_coords(model, arena);
            let turned = (0..nq)
                .filter(|&j| angles[j])
                .map(|j| (j, (q[j] - q0[j]).abs()))
                .fold(None, |b: Option<(usize, f64)>, (j, d)| match b {
                    Some((_, bd)) if bd >= d => b,
                    _ => Some((j, d)),
                });
            if let Some((j, d)) = turned.filter(|&(_, d)| d > ANGLE_ERROR) {
                return Err(Error::new(
                    model.coords[j].span,
                    format!(
                        "the nominal coordinates are far off the constraints: assembling them turns angle `{}` by {d:.2} rad ({:.4} → {:.4}; at most {ANGLE_ERROR} rad is accepted), so the analysis would describe another configuration (`{}` is off by {:.3e} at the nominal). Fix the nominal values (a sign error?)",
                        model.coords[j].name,
                        q0[j],
                        q[j],
                        short(&model.constraints[worst].label),
                        c0[worst].abs(),
                    ),
                ));
            }
            if worst_rel > NOTE_REL {
                out.notes.push(format!(
                    "the nominal coordinates are off the constraints by up to {:.3e} (`{}`, {:.2e} of its size); probing starts from the assembled configuration ({})",
                    c0[worst].abs(),
                    short(&model.constraints[worst].label),
                    worst_rel,
                    moved(model, &q0, &q)
                ));
            }
        }
        None => {
            // Does any configuration satisfy the equations? Minimise ‖C‖² from the nominal
            // and from perturbed starts.
            let mut rng = probe::rng(seed ^ 0x636865636b);
            let mut best: Option<(f64, Vec<f64>)> = None;
            for attempt in 0..LS_STARTS {
                let start: Vec<f64> = if attempt == 0 {
                    q0.clone()
                } else {
                    use rand::RngExt;
                    q0.iter()
                        .map(|&v| v + 0.5 * (1.0 + v.abs()) * rng.random_range(-1.0..1.0))
                        .collect()
                };
                let (norm, q) = least_squares(arena, &res, &jac, &start, &params);
                if norm <= ON_MANIFOLD {
                    best = None;
                    out.notes.push(format!(
                        "the nominal coordinates do not assemble by Newton's method (`{}` is off by {:.3e}); a configuration on the constraints was found from a perturbed start ({})",
                        short(&model.constraints[worst].label),
                        c0[worst].abs(),
                        moved(model, &q0, &q)
                    ));
                    break;
                }
                if best.as_ref().is_none_or(|b| norm < b.0) {
                    best = Some((norm, q));
                }
            }
            if let Some((norm, q)) = best {
                let c = eval_env(&res, arena, &q, &params, 0.0);
                let i = c
                    .iter()
                    .enumerate()
                    .fold(
                        (0, 0.0),
                        |b, (i, v)| if v.abs() > b.1 { (i, v.abs()) } else { b },
                    )
                    .0;
                let labels: Vec<String> = c
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.abs() > 1e-3 * norm)
                    .take(4)
                    .map(|(k, _)| format!("`{}`", short(&model.constraints[k].label)))
                    .collect();
                // A local method proves nothing small: only an equation left off by a good
                // part of its own size is evidence of a contradiction.
                let size = term_sizes(arena, &roots[i..=i], &q, &params)[0];
                let rel = if size > 0.0 { c[i].abs() / size } else { 1.0 };
                if rel < INCONSISTENT_REL {
                    out.notes.push(format!(
                        "the nominal coordinates do not assemble by Newton's method, and least squares from them and perturbed starts stops at a residual of {norm:.3e} (`{}` {:.1e} of its size): probing starts from perturbed points; check the nominal values",
                        short(&model.constraints[i].label),
                        rel
                    ));
                    return Ok(out);
                }
                return Err(Error::new(
                    model.constraints[i].span,
                    format!(
                        "the constraints look inconsistent: no configuration found satisfies them all — least squares from the nominal coordinates and {} perturbed starts stops at a residual of {norm:.3e}, with `{}` off by {rel:.1e} of its own size (in conflict: {}); if they have a solution far from the nominal values, put the nominal coordinates near it",
                        LS_STARTS - 1,
                        short(&model.constraints[i].label),
                        labels.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

impl Model {
    /// The nominal coordinates, in order.
    pub fn coords_nominal(&self) -> Vec<f64> {
        self.coords.iter().map(|c| c.nominal).collect()
    }
}

/// An equation's label for a message: at most 80 characters.
fn short(label: &str) -> String {
    if label.chars().count() <= 80 {
        label.to_string()
    } else {
        let head: String = label.chars().take(77).collect();
        format!("{head}…")
    }
}

fn eval_env(res: &Evaluator, arena: &Arena, q: &[f64], p: &[f64], t: f64) -> Vec<f64> {
    let env = |s: Sym| match s {
        Sym::Coord(i) => q[i as usize],
        Sym::Param(i) => p[i as usize],
        Sym::Time => t,
        _ => 0.0,
    };
    res.eval(arena, &env)
}

fn eval1(arena: &Arena, e: ExprId, q: &[f64], p: &[f64], t: f64) -> f64 {
    eval_env(&Evaluator::new(arena, &[e]), arena, q, p, t)[0]
}

/// `Σ |term|` over the terms of the top-level sum of each of `roots`, at `(q, p, 0)`
/// (one evaluation for all of them: one per row would cost the arena's size per row).
fn term_sizes(arena: &Arena, roots: &[ExprId], q: &[f64], p: &[f64]) -> Vec<f64> {
    let mut terms = Vec::new();
    let mut ends = Vec::with_capacity(roots.len());
    for &e in roots {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            match arena.node(x) {
                Node::Add(a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
                Node::Neg(a) => stack.push(a),
                _ => terms.push(x),
            }
        }
        ends.push(terms.len());
    }
    let vals = eval_env(&Evaluator::new(arena, &terms), arena, q, p, 0.0);
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let s = vals[start..end].iter().map(|v| v.abs()).sum();
            start = end;
            s
        })
        .collect()
}

/// Up to three coordinates the projection moved most: "`x` -5.000e-2 to 0.250000, …".
fn moved(model: &Model, q0: &[f64], q: &[f64]) -> String {
    let mut d: Vec<(usize, f64)> = q0
        .iter()
        .zip(q)
        .map(|(a, b)| (b - a).abs())
        .enumerate()
        .filter(|(_, v)| *v > 0.0)
        .collect();
    d.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if d.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = d
        .iter()
        .take(3)
        .map(|&(j, _)| {
            format!(
                "`{}` {:+.3e} to {}",
                model.coords[j].name,
                q[j] - q0[j],
                value(q[j])
            )
        })
        .collect();
    parts.join(", ")
}

/// A coordinate's value for a note: six decimals where that reads well, scientific
/// notation for magnitudes of a million and more or below 10⁻⁴ (a fixed-point
/// `1.5e28` would print 29 digits).
fn value(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:.6e}")
    } else {
        format!("{v:.6}")
    }
}

/// Levenberg–Marquardt on `½‖C(q)‖²` (steps `Δq = −Jᵀ (J Jᵀ + μI)⁻¹ C`, μ adapted):
/// `(‖C‖, q)` at the best point found.
fn least_squares(
    arena: &Arena,
    res: &Evaluator,
    jac: &SparseJacobian,
    q0: &[f64],
    p: &[f64],
) -> (f64, Vec<f64>) {
    let norm = |c: &[f64]| c.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut q = q0.to_vec();
    let mut c = eval_env(res, arena, &q, p, 0.0);
    let mut nc = norm(&c);
    if !nc.is_finite() {
        return (f64::INFINITY, q);
    }
    let mut mu = 1e-3;
    for _ in 0..200 {
        if nc <= ON_MANIFOLD {
            break;
        }
        let vals = jac.values(arena, &q, p, 0.0);
        // Gradient Jᵀ C: stationary with a nonzero residual means no solution nearby.
        let g = jac.mul_t(&vals, &c);
        let gn = norm(&g);
        let jn = norm(&vals);
        if gn <= 1e-12 * jn * nc || jn == 0.0 {
            break;
        }
        let Some(f) = jac.damped_factor(&vals, mu) else {
            break;
        };
        let y = f.solve(&c);
        let step = jac.mul_t(&vals, &y);
        let trial: Vec<f64> = q.iter().zip(&step).map(|(a, d)| a - d).collect();
        let ct = eval_env(res, arena, &trial, p, 0.0);
        let nt = norm(&ct);
        if nt.is_finite() && nt < nc {
            q = trial;
            c = ct;
            nc = nt;
            mu = (mu * 0.3).max(1e-15);
        } else {
            mu *= 10.0;
            if mu > 1e12 {
                break;
            }
        }
    }
    (nc, q)
}

#[cfg(test)]
mod tests {
    use super::value;

    #[test]
    fn note_values_switch_to_scientific_notation_outside_readable_magnitudes() {
        assert_eq!(value(0.271228), "0.271228");
        assert_eq!(value(-2.5), "-2.500000");
        assert_eq!(value(0.0), "0.000000");
        assert_eq!(value(123456.0), "123456.000000");
        assert_eq!(value(-1.5385436527590937e28), "-1.538544e28");
        assert_eq!(value(2.0e-7), "2.000000e-7");
        assert_eq!(value(f64::NAN), "NaN");
    }
}
