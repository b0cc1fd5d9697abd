//! Equations of motion from the model's dynamics: the mass matrix, the generalised
//! forces (applied, gravity, springs and the quadratic-velocity terms of the kinetic
//! energy) and the total energy — all symbolic, as DAG roots.
//!
//! Bodies of constant mass and inertia are projected one by one (Kane's form): with
//! `J = ∂r/∂q` of the centre of mass and `W = ∂ω/∂q̇` of the body-frame angular
//! velocity, `M += m JᵀJ + WᵀIW` and `f −= m Jᵀ a_c + Wᵀ(I ω̇_c + ω × Iω)`, where `a_c`
//! and `ω̇_c` are the accelerations at `q̈ = 0`. Anything else goes through the kinetic
//! energy `T(q, q̇, t)` and momenta `p_i = ∂T/∂q̇_i`: `M_ij = ∂p_i/∂q̇_j` and
//! `f_i = ∂T/∂q_i − Σ_k ∂p_i/∂q_k q̇_k − ∂p_i/∂t`. Either way `M q̈ = f + Q + C_Jᵀ λ` is
//! Lagrange's equation, for rheonomic bodies (positions depending on `t`) as well.

use super::recursion::{body_motions, Motion};
use super::tree::{Tree, TreeBody};
use crate::expr::{Arena, ExprId, Sym};
use crate::model::dynamics::{Body, Inertia, Orientation};
use crate::model::Model;

/// The symbolic equations of motion.
#[derive(Clone, Debug)]
pub struct EquationsOfMotion {
    /// `M`, `NQ × NQ`, symmetric (entry `(j, i)` is the same node as `(i, j)`).
    pub mass: Vec<Vec<ExprId>>,
    /// `f(q, q̇, t)`, `NQ` entries.
    pub forces: Vec<ExprId>,
    /// Kinetic plus potential energy (gravity and springs), where the model has bodies.
    pub energy: Option<ExprId>,
}

fn sum(a: &mut Arena, terms: impl IntoIterator<Item = ExprId>) -> ExprId {
    let zero = a.constant(0.0);
    terms.into_iter().fold(zero, |acc, t| a.add(acc, t))
}

pub(super) fn dot(a: &mut Arena, x: &[ExprId], y: &[ExprId]) -> ExprId {
    let terms: Vec<ExprId> = x.iter().zip(y).map(|(&u, &v)| a.mul(u, v)).collect();
    sum(a, terms)
}

/// Total time derivative of `e` along `q̇` (velocity symbols) and `t`, with `q̈ = 0`: one
/// forward tangent pass over `e`'s DAG (`q_k → q̇_k`, `t → 1`, velocities held) that takes
/// the partial derivative `∂n/∂q_k · q̇_k` at every node `n` depending on one coordinate
/// only ([`Arena::tangent_sharing_partials`]). A body's velocity and acceleration then share
/// the single-joint partials of the Jacobian at the leaves and the tangents of the frames
/// along the chain above them — the parent's velocity propagated link by link, as in a
/// recursive Newton–Euler pass — where a sum of partial derivatives
/// (`Σ_k ∂e/∂q_k q̇_k`, [`time_derivative_over`]) rebuilds the chain once per coordinate
/// (the Panda's `forces`: 8,839 instructions per call instead of 32,387).
pub fn time_derivative(a: &mut Arena, e: ExprId, nq: usize) -> ExprId {
    a.tangent_sharing_partials(e, &mut |a, s| match s {
        Sym::Coord(k) if (k as usize) < nq => Some(a.sym(Sym::Vel(k))),
        Sym::Time => Some(a.constant(1.0)),
        _ => None,
    })
}

/// Total time derivative of `e`, which depends on the coordinates `coords` only (and
/// on `t`).
pub fn time_derivative_over(a: &mut Arena, e: ExprId, coords: &[usize]) -> ExprId {
    let mut terms = Vec::with_capacity(coords.len() + 1);
    for &k in coords {
        let d = a.diff(e, Sym::Coord(k as u32));
        if !a.is_zero(d) {
            let v = a.sym(Sym::Vel(k as u32));
            terms.push(a.mul(d, v));
        }
    }
    terms.push(a.diff(e, Sym::Time));
    sum(a, terms)
}

/// Kinetic energy of one body.
fn body_kinetic_energy(a: &mut Arena, body: &Body, nq: usize) -> ExprId {
    let vel: Vec<ExprId> = body
        .com
        .iter()
        .map(|&c| time_derivative(a, c, nq))
        .collect();
    let v2 = dot(a, &vel, &vel);
    let half = a.constant(0.5);
    let mv2 = a.mul(body.mass, v2);
    let mut t = a.mul(half, mv2);
    match (&body.inertia, &body.orientation) {
        (Some(Inertia::Planar(i)), Some(Orientation::Angle(phi))) => {
            let w = time_derivative(a, *phi, nq);
            let w2 = a.powi(w, 2);
            let iw2 = a.mul(*i, w2);
            let r = a.mul(half, iw2);
            t = a.add(t, r);
        }
        (Some(inertia), Some(Orientation::Rotation(r))) => {
            let w = body_angular_velocity(a, r, nq);
            let iw: Vec<ExprId> = match inertia {
                Inertia::Principal(m) => (0..3).map(|k| a.mul(m[k], w[k])).collect(),
                Inertia::Full(m) => (0..3).map(|k| dot(a, &m[k], &w)).collect(),
                Inertia::Planar(_) => Vec::new(),
            };
            if iw.len() == 3 {
                let e = dot(a, &w, &iw);
                let r = a.mul(half, e);
                t = a.add(t, r);
            }
        }
        _ => {}
    }
    t
}

/// Whether `e` is constant in time: no coordinate, velocity or `t` in it.
fn is_fixed(a: &mut Arena, e: ExprId, nq: usize) -> bool {
    let dt = a.diff(e, Sym::Time);
    a.is_zero(dt)
        && (0..nq).all(|k| {
            let dq = a.diff(e, Sym::Coord(k as u32));
            let dv = a.diff(e, Sym::Vel(k as u32));
            a.is_zero(dq) && a.is_zero(dv)
        })
}

/// Adds `m · (uᵢ · vⱼ)`-shaped contributions to the symmetric mass matrix: entry
/// `(i, j)` gains `entry(i, j)` where both partials are nonzero, except the entries
/// `covered` marks (summed from composite bodies, [`super::tree`]).
pub(super) fn add_mass(
    a: &mut Arena,
    mass: &mut [Vec<ExprId>],
    partials: &[Vec<ExprId>],
    covered: Option<&[Vec<bool>]>,
    mut entry: impl FnMut(&mut Arena, &[ExprId], &[ExprId]) -> ExprId,
) {
    let nq = mass.len();
    let active: Vec<usize> = (0..nq)
        .filter(|&i| partials[i].iter().any(|&e| !a.is_zero(e)))
        .collect();
    for (n, &i) in active.iter().enumerate() {
        for &j in &active[n..] {
            if covered.is_some_and(|c| c[i][j]) {
                continue;
            }
            let e = entry(a, &partials[i], &partials[j]);
            let m = a.add(mass[i][j], e);
            mass[i][j] = m;
            mass[j][i] = m;
        }
    }
}

/// Mass-matrix and quadratic-velocity contributions of one body of constant mass and
/// inertia, projected body by body (Kane's form of Lagrange's equations):
/// `M += m Jᵀ J + Wᵀ I W`, `f −= m Jᵀ a_c + Wᵀ (I ω̇_c + ω × I ω)`, with `J = ∂r/∂q`,
/// `W = ∂ω/∂q̇` and `a_c`, `ω̇_c` the accelerations at `q̈ = 0`. Each body costs
/// `O(NQ)` entries instead of the `O(NQ³)` of differentiating the momenta.
/// With `tree` (the body is one of a tree's, [`super::tree`]), the mass-matrix entries it
/// covers and the rows of its rigid joints are left out, and the body's inertial wrench
/// about the origin, `(c × m a + R h, m a)`, is returned for the joints' composite sums.
/// With `simplify`, a body-frame angular velocity taken by time is brought to its
/// trigonometric normal form ([`super::trig`]) where that is smaller.
fn body_terms(
    a: &mut Arena,
    body: &Body,
    tree: Option<&Tree>,
    motion: Option<Motion>,
    simplify: bool,
    mass: &mut [Vec<ExprId>],
    forces: &mut [ExprId],
) -> (ExprId, Option<[ExprId; 6]>) {
    let covered = tree.map(|t| t.covered.as_slice());
    let rigid = |j: usize| tree.is_some_and(|t| t.joints[j].is_some());
    let nq = mass.len();
    let half = a.constant(0.5);
    // Translation: the velocity and acceleration by the tree's recursion where it covers
    // the body, else by time.
    let vel: Vec<ExprId> = match &motion {
        Some(mo) => mo.point_velocity(a, &body.com),
        None => body
            .com
            .iter()
            .map(|&c| time_derivative(a, c, nq))
            .collect(),
    };
    let acc: Vec<ExprId> = match &motion {
        Some(mo) => mo.point_acceleration(a, &body.com, &vel),
        None => vel.iter().map(|&v| time_derivative(a, v, nq)).collect(),
    };
    let jac: Vec<Vec<ExprId>> = (0..nq)
        .map(|i| {
            body.com
                .iter()
                .map(|&c| a.diff(c, Sym::Coord(i as u32)))
                .collect()
        })
        .collect();
    let m = body.mass;
    add_mass(a, mass, &jac, covered, |a, u, v| {
        let d = dot(a, u, v);
        a.mul(m, d)
    });
    let ma: Vec<ExprId> = acc.iter().map(|&x| a.mul(m, x)).collect();
    for (i, f) in forces.iter_mut().enumerate() {
        if rigid(i) {
            continue;
        }
        let g = dot(a, &jac[i], &ma);
        *f = a.sub(*f, g);
    }
    let mut wrench = tree.map(|_| {
        let c = cross(a, &body.com, &ma);
        [c[0], c[1], c[2], ma[0], ma[1], ma[2]]
    });
    let v2 = dot(a, &vel, &vel);
    let mv2 = a.mul(m, v2);
    let mut kinetic = a.mul(half, mv2);
    // Rotation.
    match (&body.inertia, &body.orientation) {
        (Some(Inertia::Planar(inertia)), Some(Orientation::Angle(phi))) => {
            let w = time_derivative(a, *phi, nq);
            let alpha = time_derivative(a, w, nq);
            let ia = a.mul(*inertia, alpha);
            let jphi: Vec<Vec<ExprId>> = (0..nq)
                .map(|i| vec![a.diff(*phi, Sym::Coord(i as u32))])
                .collect();
            let i0 = *inertia;
            add_mass(a, mass, &jphi, covered, |a, u, v| {
                let d = a.mul(u[0], v[0]);
                a.mul(i0, d)
            });
            for (i, f) in forces.iter_mut().enumerate() {
                let g = a.mul(jphi[i][0], ia);
                *f = a.sub(*f, g);
            }
            let w2 = a.powi(w, 2);
            let iw2 = a.mul(*inertia, w2);
            let r = a.mul(half, iw2);
            kinetic = a.add(kinetic, r);
        }
        (Some(inertia), Some(Orientation::Rotation(r))) => {
            // Body axes: ω = RᵀΩ and, by the recursion (Ṙ = S(Ω) R), ω̇ = RᵀΩ̇.
            let (w, wdot) = match &motion {
                Some(mo) => {
                    let at = |a: &mut Arena, x: &[ExprId; 3]| -> Vec<ExprId> {
                        (0..3)
                            .map(|i| {
                                let col = [r[0][i], r[1][i], r[2][i]];
                                dot(a, &col, x)
                            })
                            .collect()
                    };
                    (at(a, &mo.omega), Some(at(a, &mo.domega)))
                }
                None => {
                    let w = body_angular_velocity(a, r, nq);
                    if simplify {
                        (
                            w.iter().map(|&e| super::trig::simplify(a, e)).collect(),
                            None,
                        )
                    } else {
                        (w, None)
                    }
                }
            };
            if let Some((e, h)) = rotation_terms(a, inertia, &w, wdot, tree, mass, forces) {
                kinetic = a.add(kinetic, e);
                if let Some(x) = &mut wrench {
                    for i in 0..3 {
                        let rh = dot(a, &r[i], &h);
                        x[i] = a.add(x[i], rh);
                    }
                }
            }
        }
        _ => {}
    }
    (kinetic, wrench)
}

/// The rotational mass-matrix and quadratic-velocity contributions of a body of constant
/// inertia whose body-frame angular velocity is `w` (`M += WᵀIW`, `f −= Wᵀ(I ω̇_c + ω × Iω)`
/// with `W = ∂ω/∂q̇`; without `tree`'s covered entries and rigid joints' rows); returns its
/// kinetic energy `½ ωᵀIω` and `h = I ω̇_c + ω × Iω` (`None` for a planar inertia).
fn rotation_terms(
    a: &mut Arena,
    inertia: &Inertia,
    w: &[ExprId],
    wdot: Option<Vec<ExprId>>,
    tree: Option<&Tree>,
    mass: &mut [Vec<ExprId>],
    forces: &mut [ExprId],
) -> Option<(ExprId, Vec<ExprId>)> {
    let covered = tree.map(|t| t.covered.as_slice());
    let nq = mass.len();
    let half = a.constant(0.5);
    let apply = |a: &mut Arena, x: &[ExprId]| -> Vec<ExprId> {
        match inertia {
            Inertia::Principal(m) => (0..3).map(|k| a.mul(m[k], x[k])).collect(),
            Inertia::Full(m) => (0..3).map(|k| dot(a, &m[k], x)).collect(),
            Inertia::Planar(_) => Vec::new(),
        }
    };
    let iw = apply(a, w);
    if iw.len() != 3 {
        return None;
    }
    let wdot: Vec<ExprId> =
        wdot.unwrap_or_else(|| w.iter().map(|&e| time_derivative(a, e, nq)).collect());
    let iwdot = apply(a, &wdot);
    let gyro = cross(a, w, &iw);
    let h: Vec<ExprId> = iwdot
        .iter()
        .zip(&gyro)
        .map(|(&x, &y)| a.add(x, y))
        .collect();
    let wj: Vec<Vec<ExprId>> = (0..nq)
        .map(|i| w.iter().map(|&e| a.diff(e, Sym::Vel(i as u32))).collect())
        .collect();
    add_mass(a, mass, &wj, covered, |a, u, v| {
        let iv = apply(a, v);
        dot(a, u, &iv)
    });
    for (i, f) in forces.iter_mut().enumerate() {
        if tree.is_some_and(|t| t.joints[i].is_some()) {
            continue;
        }
        let g = dot(a, &wj[i], &h);
        *f = a.sub(*f, g);
    }
    let e = dot(a, w, &iw);
    Some((a.mul(half, e), h))
}

/// Body-frame angular velocity `ω` with `ω̃ = Rᵀ Ṙ`.
pub(super) fn body_angular_velocity(a: &mut Arena, r: &[[ExprId; 3]; 3], nq: usize) -> Vec<ExprId> {
    let rd: Vec<Vec<ExprId>> = r
        .iter()
        .map(|row| row.iter().map(|&e| time_derivative(a, e, nq)).collect())
        .collect();
    let w_skew = |a: &mut Arena, i: usize, j: usize| {
        let col_i: Vec<ExprId> = (0..3).map(|k| r[k][i]).collect();
        let col_j: Vec<ExprId> = (0..3).map(|k| rd[k][j]).collect();
        dot(a, &col_i, &col_j)
    };
    vec![w_skew(a, 2, 1), w_skew(a, 0, 2), w_skew(a, 1, 0)]
}

pub(super) fn cross(a: &mut Arena, x: &[ExprId], y: &[ExprId]) -> Vec<ExprId> {
    let c = |a: &mut Arena, i: usize, j: usize| {
        let p = a.mul(x[i], y[j]);
        let q = a.mul(x[j], y[i]);
        a.sub(p, q)
    };
    vec![c(a, 1, 2), c(a, 2, 0), c(a, 0, 1)]
}

/// Adds the rows of `tree`'s rigid joints: `Q_j −= ω_j · Σ (moment − h × g) + v_j · Σ (force −
/// m g)` over the bodies joint `j` moves, from each body's inertial wrench about the origin
/// `(c × m a + R h, m a)` and its weight (`gravity`, in the tree's axes).
pub(super) fn add_joint_forces(
    a: &mut Arena,
    tree: &Tree,
    bodies: &[Option<TreeBody>],
    wrenches: &[Option<[ExprId; 6]>],
    gravity: Option<[ExprId; 3]>,
    forces: &mut [ExprId],
) {
    let sums = tree.set_sums(a, wrenches);
    let weights: Vec<Option<[ExprId; 4]>> = bodies
        .iter()
        .map(|b| {
            let b = b.as_ref()?;
            let h = b.com.map(|c| a.mul(b.mass, c));
            Some([b.mass, h[0], h[1], h[2]])
        })
        .collect();
    let weight_sums = gravity.map(|_| tree.set_sums(a, &weights));
    for (j, joint) in tree.joints.iter().enumerate() {
        let Some(joint) = joint else { continue };
        let w = tree.joint_sum(&sums, joint);
        let (mut moment, mut force) = ([w[0], w[1], w[2]], [w[3], w[4], w[5]]);
        if let (Some(g), Some(ws)) = (gravity, &weight_sums) {
            let s = tree.joint_sum(ws, joint);
            let hg = cross(a, &[s[1], s[2], s[3]], &g);
            for i in 0..3 {
                moment[i] = a.sub(moment[i], hg[i]);
                let mg = a.mul(s[0], g[i]);
                force[i] = a.sub(force[i], mg);
            }
        }
        let x = dot(a, &joint.omega, &moment);
        let y = dot(a, &joint.vel, &force);
        let e = a.add(x, y);
        forces[j] = a.sub(forces[j], e);
    }
}

/// The body as a tree's body ([`TreeBody::new`]), in world axes: 3-D.
pub(super) fn tree_body(b: &Body) -> Option<TreeBody<'_>> {
    let com: [ExprId; 3] = b.com.as_slice().try_into().ok()?;
    let rot = match &b.orientation {
        Some(Orientation::Rotation(r)) => Some(*r),
        Some(Orientation::Angle(_)) => return None,
        None => None,
    };
    TreeBody::new(b.mass, b.inertia.as_ref(), com, rot)
}

/// Builds `M`, `f` and the energy of the model's dynamics. The forces' velocity-product
/// terms come from the forward recursion ([`super::recursion`]) or from the bodies'
/// placements differentiated by time, whichever gives the smaller forces DAG (equal in
/// value; the recursion wins on serial robots, the time derivatives on short parallel
/// chains such as the Stewart platform's legs); a form not kept is rolled back.
pub fn equations_of_motion(model: &Model, arena: &mut Arena) -> EquationsOfMotion {
    let by_recursion = equations_of_motion_with(model, arena, true, true);
    let mark = arena.mark();
    let by_time = equations_of_motion_with(model, arena, true, false);
    if arena.dag_size(&by_time.forces) < arena.dag_size(&by_recursion.forces) {
        by_time
    } else {
        arena.rollback(mark);
        by_recursion
    }
}

/// [`equations_of_motion`], with the bodies a floating root carries ([`super::root`])
/// summed in the root's axes when `rooted`, in world axes otherwise (the forward recursion
/// on).
#[cfg(test)]
pub(crate) fn equations_of_motion_rooted(
    model: &Model,
    arena: &mut Arena,
    rooted: bool,
) -> EquationsOfMotion {
    equations_of_motion_with(model, arena, rooted, true)
}

/// [`equations_of_motion_rooted`], with the forward recursion for the velocity products
/// when `recursion`, the time derivatives of the placements otherwise.
pub(crate) fn equations_of_motion_with(
    model: &Model,
    arena: &mut Arena,
    rooted: bool,
    recursion: bool,
) -> EquationsOfMotion {
    equations_of_motion_opts(model, arena, rooted, recursion, false)
}

/// The equations of motion the derivatives (`#![derivatives]`) are taken of: those of
/// [`equations_of_motion`], with the body-frame angular velocities taken by time brought to
/// their trigonometric normal form ([`super::trig`]), where that makes `f` and `M` smaller
/// (otherwise `None`, the arena rolled back). Equal in value up to rounding; built apart, so
/// that the functions of `M` and `f` themselves are generated as without the derivatives.
pub fn equations_of_motion_for_derivatives(
    model: &Model,
    arena: &mut Arena,
    eom: &EquationsOfMotion,
) -> Option<EquationsOfMotion> {
    let roots = |e: &EquationsOfMotion| -> Vec<ExprId> {
        e.mass.iter().flatten().chain(&e.forces).copied().collect()
    };
    let before = arena.dag_size(&roots(eom));
    let mark = arena.mark();
    let by_recursion = equations_of_motion_opts(model, arena, true, true, true);
    let by_time = equations_of_motion_opts(model, arena, true, false, true);
    let mut best = [by_recursion, by_time]
        .into_iter()
        .min_by_key(|e| arena.dag_size(&roots(e)))?;
    let nq = best.forces.len();
    let new = super::trig::simplify_roots(arena, &roots(&best));
    for (k, row) in best.mass.iter_mut().enumerate() {
        row.copy_from_slice(&new[k * nq..(k + 1) * nq]);
    }
    best.forces.copy_from_slice(&new[nq * nq..]);
    if arena.dag_size(&roots(&best)) < before {
        Some(best)
    } else {
        arena.rollback(mark);
        None
    }
}

/// [`equations_of_motion_with`], with the body-frame angular velocities taken by time in
/// trigonometric normal form when `simplify`.
fn equations_of_motion_opts(
    model: &Model,
    arena: &mut Arena,
    rooted: bool,
    recursion: bool,
    simplify: bool,
) -> EquationsOfMotion {
    let nq = model.coords.len();
    let dynamics = &model.dynamics;
    let a = &mut *arena;
    let zero = a.constant(0.0);
    let mut mass = vec![vec![zero; nq]; nq];
    let mut forces = vec![zero; nq];
    // Bodies of constant mass and inertia, projected one by one; the others (a mass or
    // inertia that varies with q or t) through Lagrange's equations of their energy.
    let mut tk = Vec::new();
    let mut varying = Vec::new();
    // Bodies carried by a floating root: their mass matrix and forces in the root's axes.
    let root = rooted.then(|| super::root::find_root(model, a)).flatten();
    let fixed: Vec<bool> = dynamics
        .bodies
        .iter()
        .map(|b| {
            let inertia_fixed = match &b.inertia {
                None => true,
                Some(Inertia::Planar(i)) => is_fixed(a, *i, nq),
                Some(Inertia::Principal(m)) => m.iter().all(|&e| is_fixed(a, e, nq)),
                Some(Inertia::Full(m)) => m.iter().flatten().all(|&e| is_fixed(a, e, nq)),
            };
            inertia_fixed && is_fixed(a, b.mass, nq)
        })
        .collect();
    let in_root: Vec<bool> = (0..dynamics.bodies.len())
        .map(|n| fixed[n] && root.as_ref().is_some_and(|r| r.rooted[n]))
        .collect();
    // The world-axes bodies of a tree: their joint pairs from composite bodies.
    let tree_bodies: Vec<Option<TreeBody>> = dynamics
        .bodies
        .iter()
        .enumerate()
        .map(|(n, b)| (fixed[n] && !in_root[n]).then(|| tree_body(b)).flatten())
        .collect();
    let tree = (rooted && tree_bodies.iter().any(Option::is_some)).then(|| {
        let quats = super::root::quaternions(model, a);
        let tree = super::tree::composite_mass(a, &tree_bodies, &quats, &mut mass);
        let motions = if recursion {
            body_motions(a, &tree, &tree_bodies, &quats, nq, None)
        } else {
            vec![None; tree_bodies.len()]
        };
        (tree, motions)
    });
    let (tree, motions) = match tree {
        Some((t, m)) => (Some(t), m),
        None => (None, vec![None; dynamics.bodies.len()]),
    };
    let mut wrenches: Vec<Option<[ExprId; 6]>> = vec![None; dynamics.bodies.len()];
    for (n, b) in dynamics.bodies.iter().enumerate() {
        if fixed[n] {
            let member = tree.as_ref().filter(|_| tree_bodies[n].is_some());
            tk.push(if in_root[n] {
                body_kinetic_energy(a, b, nq)
            } else {
                let (t, w) = body_terms(a, b, member, motions[n], simplify, &mut mass, &mut forces);
                wrenches[n] = w;
                t
            });
        } else {
            let t = body_kinetic_energy(a, b, nq);
            tk.push(t);
            varying.push(t);
        }
    }
    // The world tree's rigid joints: `−(ω_j · Σ moment + v_j · Σ force)` over the bodies
    // each moves, the weights' wrench `(h × g, m g)` included.
    let gravity3: Option<[ExprId; 3]> = dynamics
        .gravity
        .as_ref()
        .and_then(|g| g.as_slice().try_into().ok());
    if let Some(tree) = &tree {
        add_joint_forces(a, tree, &tree_bodies, &wrenches, gravity3, &mut forces);
    }
    let root_tree = root.as_ref().map(|root| {
        let tree = super::root::rooted_mass(a, model, root, &in_root, &mut mass);
        super::root::rooted_forces(
            a,
            model,
            root,
            &in_root,
            (&tree, recursion),
            gravity3,
            &mut forces,
        );
        tree
    });
    let t_kin = sum(a, tk);
    if !varying.is_empty() {
        let t_var = sum(a, varying);
        let momenta: Vec<ExprId> = (0..nq).map(|i| a.diff(t_var, Sym::Vel(i as u32))).collect();
        for i in 0..nq {
            for j in i..nq {
                let d = a.diff(momenta[i], Sym::Vel(j as u32));
                let m = a.add(mass[i][j], d);
                mass[i][j] = m;
                mass[j][i] = m;
            }
        }
        // Quadratic-velocity terms: ∂T/∂q_i − Σ_k ∂p_i/∂q_k q̇_k − ∂p_i/∂t.
        for (i, &p) in momenta.iter().enumerate() {
            let dtdq = a.diff(t_var, Sym::Coord(i as u32));
            let pdot = time_derivative(a, p, nq);
            let d = a.sub(dtdq, pdot);
            forces[i] = a.add(forces[i], d);
        }
    }
    for &(i, j, e) in &dynamics.explicit_mass {
        let m = a.add(mass[i][j], e);
        mass[i][j] = m;
        mass[j][i] = m;
    }
    // Potential energy of gravity and springs; their forces are −∂V/∂q (springs add damping).
    // The bodies of the world tree and of the root's tree have their weights' forces on
    // their trees' rigid joints from the composites above: those rows leave their potential
    // out.
    let mut potential = zero;
    let mut rest_potential = zero;
    let mut tree_potential = [zero; 2];
    if let Some(g) = &dynamics.gravity {
        for (k, b) in dynamics.bodies.iter().enumerate() {
            let n = g.len().min(b.com.len());
            let gr = dot(a, &g[..n], &b.com[..n]);
            let mgr = a.mul(b.mass, gr);
            potential = a.sub(potential, mgr);
            let part = if tree.is_some() && tree_bodies[k].is_some() {
                Some(0)
            } else if root_tree.as_ref().is_some_and(|t| t.has_body(k)) {
                Some(1)
            } else {
                None
            };
            match (part, gravity3) {
                (Some(p), Some(_)) => tree_potential[p] = a.sub(tree_potential[p], mgr),
                _ => rest_potential = a.sub(rest_potential, mgr),
            }
        }
    }
    let trees = [tree.as_ref(), root_tree.as_ref()];
    // The weights' rows of the floating root's own coordinates, from the totals of the bodies
    // it carries (`−∂V/∂q` with `V = −M g·p₀ − g·R₀ h`).
    let base_weight: Vec<Option<ExprId>> = match (&root, &root_tree, gravity3) {
        (Some(root), Some(t), Some(g)) if t.joints.iter().any(Option::is_some) => {
            super::root::base_weight(a, model, root, &in_root, t, g)
        }
        _ => vec![None; nq],
    };
    let mut spring_forces = vec![zero; nq];
    for s in &dynamics.springs {
        let diff: Vec<ExprId> = s.a.iter().zip(&s.b).map(|(&x, &y)| a.sub(y, x)).collect();
        let l2 = dot(a, &diff, &diff);
        let l = a.sqrt(l2);
        // A zero-length spring's potential ½ k l² is smooth: written without the square
        // root, its force −k (b − a)·∂(b − a)/∂q stays finite where the ends meet (through
        // √(l²) the force would be k l·∂l/∂q with ∂l/∂q = 0/0 there). With l0 ≠ 0 the force
        // direction at l = 0 is undefined; the runtime reports the non-finite force.
        let ext2 = if a.is_zero(s.length) {
            l2
        } else {
            let ext = a.sub(l, s.length);
            a.powi(ext, 2)
        };
        let half = a.constant(0.5);
        let ke = a.mul(s.stiffness, ext2);
        let v = a.mul(half, ke);
        potential = a.add(potential, v);
        rest_potential = a.add(rest_potential, v);
        if !a.is_zero(s.damping) {
            let ldot = time_derivative(a, l, nq);
            let cl = a.mul(s.damping, ldot);
            for (i, f) in spring_forces.iter_mut().enumerate() {
                let dl = a.diff(l, Sym::Coord(i as u32));
                let fi = a.mul(cl, dl);
                *f = a.sub(*f, fi);
            }
        }
    }
    for (i, f) in forces.iter_mut().enumerate() {
        let mut dv = a.diff(rest_potential, Sym::Coord(i as u32));
        for (n, (t, &v)) in trees.iter().zip(&tree_potential).enumerate() {
            if t.is_some_and(|t| t.joints[i].is_some()) {
                continue;
            }
            let d = match base_weight[i] {
                Some(w) if n == 1 => w,
                _ => a.diff(v, Sym::Coord(i as u32)),
            };
            dv = a.add(dv, d);
        }
        let x = a.sub(*f, dv);
        *f = a.add(x, spring_forces[i]);
    }
    for &(i, e) in dynamics.coord_forces.iter().chain(&dynamics.explicit_force) {
        forces[i] = a.add(forces[i], e);
    }
    let energy = if dynamics.bodies.is_empty() {
        None
    } else {
        Some(a.add(t_kin, potential))
    };
    EquationsOfMotion {
        mass,
        forces,
        energy,
    }
}
