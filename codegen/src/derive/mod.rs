//! Derivatives of the model: `C_J = ∂C/∂q` and `C_t = ∂C/∂t`, the velocity constraints'
//! rows ([`velocity`]), the equations of motion and, after pivoting, the derivatives that
//! need the null-space basis ([`outputs`], [`sensitivity`]).

pub mod cancel;
pub mod inequality;
pub mod matrix;
pub mod motion;
pub mod outputs;
pub mod recursion;
pub mod root;
pub mod sensitivity;
pub mod tree;
pub mod trig;
pub mod velocity;

pub use matrix::SymMatrix;

use crate::expr::{Arena, ExprId, Sym};
use crate::model::Model;

/// Equations over more coordinates than this get their Jacobian row by one reverse pass
/// ([`crate::expr::Arena::gradient`]); smaller ones (every shipped example) by forward
/// derivatives, whose generated code is unchanged.
pub const GRADIENT_ABOVE: usize = 64;

/// What the differentiation stage returns for the constraints: `C_J`, `C_t` and `γ`.
#[derive(Clone, Debug)]
pub struct Kinematics {
    /// `C_J = ∂C/∂q` (`NC × NQ`, sparse).
    pub jacobian: SymMatrix,
    /// `C_t = ∂C/∂t` (`NC` entries).
    pub jacobian_t: Vec<ExprId>,
    /// `γ` of `C_J q̈ = γ` (expressions of `q`, `q̇`, `p`, `t`; see [`gamma`]).
    pub gamma: Vec<ExprId>,
}

/// The constraints' derivatives: [`jacobian`], [`jacobian_t`] and [`gamma`].
pub fn kinematics(model: &Model, arena: &mut Arena) -> Kinematics {
    let jacobian = jacobian(model, arena);
    let jacobian_t = jacobian_t(model, arena);
    let mut gamma = gamma(arena, &jacobian, &jacobian_t);
    let exprs: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    if let Some(nested) = smaller_gamma(arena, &exprs, &gamma) {
        gamma = nested;
    }
    Kinematics {
        jacobian,
        jacobian_t,
        gamma,
    }
}

/// What the dynamics stages return: the equations of motion and, with `#![derivatives]`,
/// their derivatives.
#[derive(Clone, Debug)]
pub struct Dynamics {
    /// Mass matrix, forces and energy.
    pub eom: motion::EquationsOfMotion,
    /// The derivatives of the dynamics terms, when `#![derivatives]` asks for them.
    pub derivatives: Option<sensitivity::DynamicsDerivatives>,
}

/// What differentiation adds once the pivot stage has chosen the independent coordinates:
/// the outputs' derivatives (their manipulator Jacobian needs the null-space basis), the
/// inequalities' and the dynamics (with, under `#![derivatives]`, their derivatives).
#[derive(Clone, Debug)]
pub struct Pivoted {
    /// The named outputs' derivatives, when the model has any.
    pub outputs: Option<outputs::OutputDerivatives>,
    /// The inequality constraints' derivatives, when the model has any.
    pub inequalities: Option<inequality::InequalityDerivatives>,
    /// The slips of the joints with dry friction, when the model has any.
    pub joint_slips: Option<inequality::JointSlipDerivatives>,
    /// The equations of motion and their derivatives, when the model has dynamics.
    pub dynamics: Option<Dynamics>,
}

/// The differentiation after pivoting (see [`Pivoted`]): `eom` are the model's equations
/// of motion, `basis` and `solve` the primary chart's null-space basis and dependent solve.
pub fn pivoted(
    model: &Model,
    arena: &mut Arena,
    kin: &Kinematics,
    eom: Option<motion::EquationsOfMotion>,
    basis: &[Vec<ExprId>],
    solve: &[ExprId],
    derivatives: bool,
) -> Pivoted {
    let outputs = (!model.outputs.is_empty()).then(|| outputs::outputs(model, arena, basis));
    let inequalities =
        (!model.inequalities.is_empty()).then(|| inequality::inequalities(model, arena));
    let joint_slips =
        (!model.joint_friction.is_empty()).then(|| inequality::joint_slips(model, arena));
    let dynamics = eom.map(|eom| {
        let derivatives = derivatives.then(|| {
            // The derivatives are taken of `f` and `M` in a smaller form where there is one
            // (the angular velocities in trigonometric normal form).
            let simpler = motion::equations_of_motion_for_derivatives(model, arena, &eom);
            sensitivity::dynamics_derivatives(
                model,
                arena,
                simpler.as_ref().unwrap_or(&eom),
                &kin.jacobian,
                &kin.gamma,
                basis,
                solve,
            )
        });
        Dynamics { eom, derivatives }
    });
    Pivoted {
        outputs,
        inequalities,
        joint_slips,
        dynamics,
    }
}

/// The constraint Jacobian `C_J` (`NC × NQ`, sparse: only the coordinates a row contains
/// can have a nonzero partial), as DAG roots.
pub fn jacobian(model: &Model, arena: &mut Arena) -> SymMatrix {
    let nq = model.coords.len();
    let rows: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    rows_jacobian(arena, nq, &rows)
}

/// The Jacobian (`rows.len() × nq`, sparse) of the expressions `rows`: forward partial
/// derivatives ([`Arena::diff`], sharing the partials the rest of the model takes), or for
/// a row over more than [`GRADIENT_ABOVE`] coordinates one reverse pass
/// ([`Arena::gradient`]). Where the forward partials come out at more than
/// [`REVERSE_TRIAL_ABOVE`] times the rows' own size — loops closed through long chains of
/// rotations, whose partials each repeat the chain — the reverse pass is tried for every row
/// as well, and kept where its DAG is smaller (otherwise the arena is rolled back, and the
/// trial leaves no trace in what is generated after it).
pub fn rows_jacobian(a: &mut Arena, nq: usize, rows: &[ExprId]) -> SymMatrix {
    let coords: Vec<Vec<u32>> = rows.iter().map(|&e| a.coords_of(e)).collect();
    let reverse = |a: &mut Arena, e: ExprId, c: &[u32]| -> Vec<(usize, ExprId)> {
        let g = a.gradient(e, c);
        c.iter().map(|&j| j as usize).zip(g).collect()
    };
    let mut entries: Vec<Vec<(usize, ExprId)>> = rows
        .iter()
        .zip(&coords)
        .map(|(&e, c)| {
            if c.len() > GRADIENT_ABOVE {
                reverse(a, e, c)
            } else {
                c.iter()
                    .map(|&j| (j as usize, a.diff(e, Sym::Coord(j))))
                    .collect()
            }
        })
        .collect();
    let roots = |entries: &[Vec<(usize, ExprId)>]| -> Vec<ExprId> {
        entries.iter().flatten().map(|&(_, e)| e).collect()
    };
    let forward: Vec<usize> = (0..rows.len())
        .filter(|&i| !coords[i].is_empty() && coords[i].len() <= GRADIENT_ABOVE)
        .collect();
    let size = a.dag_size(&roots(&entries));
    if !forward.is_empty() && size > REVERSE_TRIAL_ABOVE * a.dag_size(rows) {
        let mark = a.mark();
        let mut trial = entries.clone();
        for &i in &forward {
            trial[i] = reverse(a, rows[i], &coords[i]);
        }
        if a.dag_size(&roots(&trial)) < size {
            entries = trial;
        } else {
            a.rollback(mark);
        }
    }
    let mut m = SymMatrix::new(nq);
    for row in entries {
        m.push_row(a, row);
    }
    m
}

/// How many times the rows' own DAG the forward partials may reach before
/// [`rows_jacobian`] tries the reverse pass.
pub const REVERSE_TRIAL_ABOVE: usize = 3;

/// The partial time derivative `C_t` (`NC` entries), as DAG roots.
pub fn jacobian_t(model: &Model, arena: &mut Arena) -> Vec<ExprId> {
    model
        .constraints
        .iter()
        .map(|c| arena.diff(c.expr, Sym::Time))
        .collect()
}

/// The right-hand side `γ` of the acceleration constraint `C_J q̈ = γ`:
/// `γ = −(C_J q̇)_q q̇ − 2 C_{qt} q̇ − C_tt`, i.e. minus the total time derivative of
/// `w = C_J q̇ + C_t` with `q̇` held fixed. Entries are expressions of `q`, `q̇`
/// (`Sym::Vel`), `p` and `t`.
pub fn gamma(arena: &mut Arena, jacobian: &SymMatrix, jacobian_t: &[ExprId]) -> Vec<ExprId> {
    rows_gamma(arena, jacobian, jacobian_t)
}

/// `γ` of position constraints `exprs` (rows `C(q, p, t) = 0`, or inequalities' `g`) as minus their second total time derivative with `q̈`
/// and `C_t`'s rate held: two forward tangent passes over each constraint `C` along
/// `(q → q̇, t → 1)` (the first is `w = C_J q̇ + C_t`, the second its rate), equal in value to
/// [`gamma`] (`rows`, their Jacobian-row form). Returned only where its DAG is smaller than `rows`' (the Jacobian-row form
/// wins where the Jacobian's partials are cheap and shared; the nested tangents where a
/// constraint is a long chain of rotations — a loop closed far from the root, whose
/// Jacobian rows each repeat the chain); otherwise the arena is rolled back, so the choice
/// leaves no trace in what is generated after it.
pub fn smaller_gamma(arena: &mut Arena, exprs: &[ExprId], rows: &[ExprId]) -> Option<Vec<ExprId>> {
    if exprs.is_empty() || rows.len() != exprs.len() {
        return None;
    }
    let mark = arena.mark();
    let nested = nested_rows(arena, exprs);
    if arena.dag_size(&nested) < arena.dag_size(rows) {
        Some(nested)
    } else {
        arena.rollback(mark);
        None
    }
}

/// The nested-tangent form of [`smaller_gamma`], always built.
fn nested_rows(arena: &mut Arena, exprs: &[ExprId]) -> Vec<ExprId> {
    let along = |a: &mut Arena, s: Sym| match s {
        Sym::Coord(k) => Some(a.sym(Sym::Vel(k))),
        Sym::Time => Some(a.constant(1.0)),
        _ => None,
    };
    exprs
        .iter()
        .map(|&c| {
            let w = arena.tangent_with(c, &mut { along });
            let wd = arena.tangent_with(w, &mut { along });
            arena.neg(wd)
        })
        .collect()
}

/// [`gamma`] of any rows given their Jacobian and partial time derivative.
pub fn rows_gamma(
    a: &mut crate::expr::Arena,
    jacobian: &SymMatrix,
    jacobian_t: &[ExprId],
) -> Vec<ExprId> {
    jacobian
        .rows()
        .zip(jacobian_t)
        .map(|(row, &ct)| {
            // w depends only on the coordinates of its own equation (the nonzeros of its
            // Jacobian row) and on time.
            let mut w = ct;
            for &(k, e) in row {
                let v = a.sym(Sym::Vel(k as u32));
                let ev = a.mul(e, v);
                w = a.add(w, ev);
            }
            // dw/dt with q̇ fixed: one forward tangent pass along (q → q̇, t → 1), not
            // one partial derivative per coordinate (NQ² of them for dense rows).
            let wd = a.tangent_with(w, &mut |a, s| match s {
                Sym::Coord(k) => Some(a.sym(Sym::Vel(k))),
                Sym::Time => Some(a.constant(1.0)),
                _ => None,
            });
            a.neg(wd)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{gamma, jacobian, jacobian_t, kinematics, nested_rows, rows_jacobian};
    use crate::derive::tree::tests::{largest_error, model, random_state, ARM_TREE};
    use crate::expr::Sym;
    use rand::{RngExt, SeedableRng};

    /// The tree tests' arm with its fingers' tips tied together (a loop closed through six
    /// joints, one of them prismatic, and a ball joint's quaternion row), a rheonomic row
    /// with `C_qt` and `C_tt` terms: the nested tangents equal the Jacobian-row form of `γ`
    /// at 200 random states and times to 1e-12 of the largest entry, and `kinematics` keeps
    /// the smaller (here the nested one: 687 nodes against 951).
    #[test]
    fn nested_tangents_equal_the_jacobian_row_form() {
        let items = format!(
            "{ARM_TREE}
            constraint fa.point(vec3(0.0, 0.01, 0.0)) == fb.point(vec3(0.02, 0.0, -0.01));
            constraint a * sin(2.0 * t) + s * t * t == 0.1;"
        );
        let (m, mut arena) = model(&items);
        let a = &mut arena;
        let jac = jacobian(&m, a);
        let jt = jacobian_t(&m, a);
        let rows = gamma(a, &jac, &jt);
        let exprs: Vec<_> = m.constraints.iter().map(|c| c.expr).collect();
        let nested = nested_rows(a, &exprs);
        assert_eq!(rows.len(), 5);
        let nq = m.coords.len() as u32;
        let mut rng = rand::rngs::StdRng::seed_from_u64(17);
        let mut worst = 0.0f64;
        for _ in 0..200 {
            let (q, v) = random_state(&mut rng, nq as usize);
            let t: f64 = rng.random_range(-2.0..2.0);
            let at = |s: Sym| match s {
                Sym::Coord(k) => q[k as usize],
                Sym::Vel(k) => v[k as usize],
                Sym::Time => t,
                _ => 0.0,
            };
            let x = a.eval(&nested, &at);
            let y = a.eval(&rows, &at);
            worst = worst.max(largest_error(&x, &y, 1e-12));
        }
        assert!(worst < 1e-12, "{worst}");
        let (m2, mut fresh) = model(&items);
        let kin = kinematics(&m2, &mut fresh);
        assert_eq!(fresh.dag_size(&kin.gamma), a.dag_size(&nested));
        let (n, r) = (a.dag_size(&nested), a.dag_size(&rows));
        assert!(n < r, "nested {n} nodes, rows {r}");
    }

    /// Where the nested form is not smaller (a circle: both forms are the same few nodes),
    /// `kinematics` keeps the Jacobian-row form and rolls the arena back: the arena ends
    /// exactly as if the trial had not been made.
    #[test]
    fn a_rejected_trial_leaves_the_arena_as_it_was() {
        let items = "coord x = 1.0; coord y = 0.0; constraint x * x + y * y == 1.0;";
        let (m, mut with_trial) = model(items);
        let kin = kinematics(&m, &mut with_trial);
        let (m2, mut without) = model(items);
        let jac = jacobian(&m2, &mut without);
        let jt = jacobian_t(&m2, &mut without);
        let rows = gamma(&mut without, &jac, &jt);
        assert_eq!(kin.gamma, rows);
        assert_eq!(with_trial.len(), without.len());
        assert_eq!(with_trial.nodes(), without.nodes());
    }

    /// A loop closed through a chain of eight tilted revolute joints: the forward partials
    /// repeat the chain per coordinate, so `rows_jacobian` takes the reverse pass (a smaller
    /// DAG), whose entries equal the forward ones at 200 random states to 1e-12 of the
    /// largest; a short chain keeps its forward partials.
    #[test]
    fn long_chains_take_the_reverse_pass_with_equal_entries() {
        let mut items = String::from("let f0 = translate(vec3(0.0, 0.0, 0.0));");
        for k in 1..=8 {
            let axis = ["rot_x", "rot_y", "rot_z"][k % 3];
            items += &format!(
                "coord a{k} = 0.{k}; let f{k} = f{} * {axis}(a{k}) * translate(vec3(0.3, 0.1, 0.0{k}));",
                k - 1
            );
        }
        items += "constraint f8.point(vec3(0.1, 0.0, 0.0)) == vec3(0.5, 0.4, 0.3);";
        let (m, mut arena) = model(&items);
        let a = &mut arena;
        let exprs: Vec<_> = m.constraints.iter().map(|c| c.expr).collect();
        let chosen = rows_jacobian(a, 8, &exprs);
        let forward: Vec<Vec<(usize, crate::expr::ExprId)>> = exprs
            .iter()
            .map(|&e| {
                a.coords_of(e)
                    .into_iter()
                    .map(|j| (j as usize, a.diff(e, Sym::Coord(j))))
                    .collect()
            })
            .collect();
        let roots = |rows: &[Vec<(usize, crate::expr::ExprId)>]| -> Vec<crate::expr::ExprId> {
            rows.iter().flatten().map(|&(_, e)| e).collect()
        };
        let chosen_rows: Vec<Vec<(usize, crate::expr::ExprId)>> =
            chosen.rows().map(|r| r.to_vec()).collect();
        let (c, f) = (
            a.dag_size(&roots(&chosen_rows)),
            a.dag_size(&roots(&forward)),
        );
        assert!(2 * c < f, "reverse {c} nodes, forward {f}");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for _ in 0..200 {
            let q: Vec<f64> = (0..8).map(|_| rng.random_range(-3.0..3.0)).collect();
            let at = |s: Sym| match s {
                Sym::Coord(k) => q[k as usize],
                _ => 0.0,
            };
            for (x, y) in chosen_rows.iter().zip(&forward) {
                assert_eq!(
                    x.iter().map(|e| e.0).collect::<Vec<_>>(),
                    y.iter().map(|e| e.0).collect::<Vec<_>>()
                );
                let xv = a.eval(&roots(std::slice::from_ref(x)), &at);
                let yv = a.eval(&roots(std::slice::from_ref(y)), &at);
                largest_error(&xv, &yv, 1e-12);
            }
        }
        // The circle's partials (2x, 2y) are no larger than the row: no trial.
        let (m, mut small) =
            model("coord x = 1.0; coord y = 0.0; constraint x * x + y * y == 1.0;");
        let exprs: Vec<_> = m.constraints.iter().map(|c| c.expr).collect();
        let before = small.len();
        let j = rows_jacobian(&mut small, 2, &exprs);
        let two_x = small.diff(exprs[0], Sym::Coord(0));
        assert_eq!(j.rows().next().map(|r| r[0].1), Some(two_x));
        assert!(small.len() >= before);
    }
}
