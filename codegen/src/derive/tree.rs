//! Composite bodies: the mass matrix and the forces of a kinematic tree by the
//! composite-rigid-body algorithm, the tree found from the model.
//!
//! Summed body by body, the mass matrix `Σ_b m Jᵀ J + Wᵀ I W` costs one product per body
//! and pair of the coordinates that move it: `O(n · d²)` over a tree of depth `d`. Where a
//! coordinate `q_j` moves every body it moves rigidly — one spatial velocity `S_j = (ω_j,
//! v_j)` for all of them (`ω_j` the angular velocity, `v_j` the velocity of the body point at
//! the frame's origin, both per unit rate), as a revolute or prismatic joint of a tree does —
//! the entries of two such coordinates whose sets of moved bodies nest (`B_j ⊆ B_i`) are
//! `M_ij = S_iᵀ I_j S_j`, with `I_j` the spatial inertia of the bodies `q_j` moves (their
//! composite: mass, first moment and inertia about the origin, summed once per subtree and
//! shared by the subtrees that contain it). That is `O(n · d)` products. The same joint's
//! generalised force is `−S_jᵀ` times the sum of the inertial wrenches and weights of the
//! bodies it moves (`motion::add_joint_forces`), one product per joint instead of
//! one per body and joint.
//!
//! **Found from the model, checked.** Which bodies a coordinate moves is read from their
//! placements' expressions; `S_j` is taken from the moved body with the fewest coordinates
//! (`ω_j` from `∂R/∂q_j Rᵀ`, `v_j = ∂c/∂q_j − ω_j × c`), and the identities `∂c_b/∂q_j =
//! v_j + ω_j × c_b` and `∂R_b/∂q_j = S(ω_j) R_b` are checked for every moved body `b` at
//! random points (every coordinate, parameter and time random, the coordinates of each
//! unit-quaternion constraint scaled to unit norm). They are trigonometric and polynomial
//! identities, so a check at random points does not pass by accident. A coordinate that
//! fails (a quaternion's own coordinates, a body placed by an expression that is not a rigid
//! motion of its parent) and every pair whose sets do not nest keep the body-by-body sum.
//! The result is the same mass matrix and forces, entry by entry, to rounding, wherever the
//! quaternions are of unit norm (the states the constrained dynamics is defined on; with no
//! quaternion below a joint, everywhere) — as for the floating root ([`super::root`]).

use super::motion::{cross, dot};
use super::root::{close, point, POINTS};
use crate::expr::{Arena, ExprId, Sym};
use crate::model::dynamics::Inertia;

/// A joint's spatial velocity per unit rate: `(ω, v)`.
type Column = ([ExprId; 3], [ExprId; 3]);

/// A body of constant mass and inertia placed in 3-D: its centre of mass and, unless it
/// is a point mass, its rotation and inertia tensor (body axes).
#[derive(Clone, Debug)]
pub struct TreeBody<'a> {
    /// The mass.
    pub mass: ExprId,
    /// The inertia tensor about the centre of mass, in body axes (`None`: a point mass).
    pub inertia: Option<&'a Inertia>,
    /// The centre of mass.
    pub com: [ExprId; 3],
    /// The rotation (body axes to the frame's), `None` for a point mass.
    pub rot: Option<[[ExprId; 3]; 3]>,
}

impl<'a> TreeBody<'a> {
    /// The body of mass `mass` at `com`, turned by `rot`, as a tree's body: a spatial
    /// inertia with a rotation, or none (a point mass); `None` for a planar inertia or an
    /// inertia without a rotation.
    pub fn new(
        mass: ExprId,
        inertia: Option<&'a Inertia>,
        com: [ExprId; 3],
        rot: Option<[[ExprId; 3]; 3]>,
    ) -> Option<Self> {
        match (inertia, rot) {
            (Some(Inertia::Planar(_)), _) | (Some(_), None) => None,
            _ => Some(TreeBody {
                mass,
                inertia,
                com,
                rot,
            }),
        }
    }
}

/// A coordinate that moves the bodies it moves rigidly.
#[derive(Clone, Debug)]
pub struct Joint {
    /// `ω_j`: the angular velocity per unit rate.
    pub omega: [ExprId; 3],
    /// `v_j`: the velocity of the body point at the origin per unit rate.
    pub vel: [ExprId; 3],
    /// `L_j`: the angular momentum about the origin of the bodies it moves, per unit rate.
    pub ang: [ExprId; 3],
    /// `p_j`: their linear momentum per unit rate.
    pub lin: [ExprId; 3],
    /// `h_j`: their first moment of mass about the origin.
    pub first: [ExprId; 3],
    /// Which set of moved bodies (an index into the tree's sets).
    set: usize,
}

/// The tree found among a set of bodies: which coordinates move their bodies rigidly, and
/// which entries of the mass matrix the composites gave.
#[derive(Clone, Debug)]
pub struct Tree {
    /// Per coordinate: the joint, where it moves its bodies rigidly.
    pub joints: Vec<Option<Joint>>,
    /// `covered[i][j]`: entry `(i, j)` is summed from the composites; the bodies' own sums
    /// must leave it out.
    pub covered: Vec<Vec<bool>>,
    /// The distinct sets of moved bodies, by size (each a membership mask).
    sets: Vec<Vec<bool>>,
    /// Which of the bodies given take part.
    members: Vec<bool>,
    /// The composite spatial inertia `[m, h (3), I_O (6)]` over all the members.
    total_inertia: Option<[ExprId; 10]>,
    /// Per set: the smaller sets its sum is made of, and the bodies added to them.
    plan: Vec<(Vec<usize>, Vec<usize>)>,
}

impl Tree {
    /// A tree of no joints over `nq` coordinates.
    pub fn empty(nq: usize) -> Tree {
        Tree {
            joints: vec![None; nq],
            covered: vec![vec![false; nq]; nq],
            sets: Vec::new(),
            members: Vec::new(),
            plan: Vec::new(),
            total_inertia: None,
        }
    }

    /// Sums a per-body vector over each set of moved bodies, each set's sum built from the
    /// sums of the largest disjoint sets inside it (a subtree's composite is computed once).
    pub fn set_sums<const N: usize>(
        &self,
        a: &mut Arena,
        values: &[Option<[ExprId; N]>],
    ) -> Vec<[ExprId; N]> {
        let zero = a.constant(0.0);
        let mut sums: Vec<[ExprId; N]> = Vec::with_capacity(self.plan.len());
        for (subsets, bodies) in &self.plan {
            let mut s = [zero; N];
            for &k in subsets {
                let x = sums[k];
                for n in 0..N {
                    s[n] = a.add(s[n], x[n]);
                }
            }
            for &b in bodies {
                if let Some(x) = values[b] {
                    for n in 0..N {
                        s[n] = a.add(s[n], x[n]);
                    }
                }
            }
            sums.push(s);
        }
        sums
    }

    /// The sum of a per-body vector over every member: the largest disjoint sets' sums
    /// (from [`Tree::set_sums`]) and the bodies in none of them.
    pub fn total<const N: usize>(
        &self,
        a: &mut Arena,
        sums: &[[ExprId; N]],
        values: &[Option<[ExprId; N]>],
    ) -> [ExprId; N] {
        let zero = a.constant(0.0);
        let mut taken = vec![false; self.members.len()];
        let mut s = [zero; N];
        for (k, set) in self.sets.iter().enumerate().rev() {
            if (0..taken.len()).any(|b| set[b] && taken[b]) {
                continue;
            }
            (0..taken.len())
                .filter(|&b| set[b])
                .for_each(|b| taken[b] = true);
            for n in 0..N {
                s[n] = a.add(s[n], sums[k][n]);
            }
        }
        for (b, x) in values.iter().enumerate() {
            if let (false, true, Some(x)) = (taken[b], self.members[b], x) {
                for n in 0..N {
                    s[n] = a.add(s[n], x[n]);
                }
            }
        }
        s
    }

    /// The composite spatial inertia `[m, h (3), I_O (6)]` (`I_O` as `[xx, yy, zz, xy, xz,
    /// yz]`, about the origin) of every member, where the tree has joints.
    pub fn total_inertia(&self) -> Option<[ExprId; 10]> {
        self.total_inertia
    }

    /// Whether body `n` (of the bodies the tree was found among) takes part in it.
    pub fn has_body(&self, n: usize) -> bool {
        self.members.get(n).copied().unwrap_or(false)
    }

    /// Which bodies joint `j` moves (a mask over the bodies the tree was found among).
    pub fn moved(&self, j: &Joint) -> &[bool] {
        &self.sets[j.set]
    }

    /// The sum (from [`Tree::set_sums`]) over the bodies joint `j` moves.
    pub fn joint_sum<const N: usize>(&self, sums: &[[ExprId; N]], j: &Joint) -> [ExprId; N] {
        sums[j.set]
    }
}

/// The coordinates each body's placement contains, as a mask over the `nq` coordinates.
pub(super) fn moved_by(a: &Arena, body: &TreeBody, nq: usize) -> Vec<bool> {
    let mut mask = vec![false; nq];
    let mut roots: Vec<ExprId> = body.com.to_vec();
    if let Some(r) = &body.rot {
        roots.extend(r.iter().flatten());
    }
    for e in roots {
        for k in a.coords_of(e) {
            if let Some(m) = mask.get_mut(k as usize) {
                *m = true;
            }
        }
    }
    mask
}

/// `R I Rᵀ` (symmetric: `[xx, yy, zz, xy, xz, yz]`) for the body's inertia in body axes.
fn rotated_inertia(a: &mut Arena, inertia: &Inertia, r: &[[ExprId; 3]; 3]) -> Option<[ExprId; 6]> {
    // Rows of R I.
    let ri: [[ExprId; 3]; 3] = match inertia {
        Inertia::Principal(d) => r.map(|row| [0, 1, 2].map(|k| a.mul(row[k], d[k]))),
        Inertia::Full(m) => r.map(|row| {
            [0, 1, 2].map(|k| {
                let col = [m[0][k], m[1][k], m[2][k]];
                dot(a, &row, &col)
            })
        }),
        Inertia::Planar(_) => return None,
    };
    let e = |a: &mut Arena, i: usize, j: usize| dot(a, &ri[i], &r[j]);
    Some([
        e(a, 0, 0),
        e(a, 1, 1),
        e(a, 2, 2),
        e(a, 0, 1),
        e(a, 0, 2),
        e(a, 1, 2),
    ])
}

/// The body's spatial inertia about the origin: `[m, h (3), I_O (6)]` with `h = m c` and
/// `I_O = R I Rᵀ + m (|c|² 1 − c cᵀ)` (`[xx, yy, zz, xy, xz, yz]`).
fn spatial_inertia(a: &mut Arena, body: &TreeBody) -> Option<[ExprId; 10]> {
    let m = body.mass;
    let c = body.com;
    let h = c.map(|e| a.mul(m, e));
    let mut io = match (body.inertia, &body.rot) {
        (Some(inertia), Some(r)) => rotated_inertia(a, inertia, r)?,
        (None, _) => [a.constant(0.0); 6],
        (Some(_), None) => return None,
    };
    // m (|c|² 1 − c cᵀ) = h-weighted: diagonal h_j c_j + h_k c_k, off-diagonal −h_i c_j.
    let hc = [0, 1, 2].map(|i| a.mul(h[i], c[i]));
    let diag = [(1, 2), (0, 2), (0, 1)];
    for (n, &(j, k)) in diag.iter().enumerate() {
        let s = a.add(hc[j], hc[k]);
        io[n] = a.add(io[n], s);
    }
    for (n, &(i, j)) in [(0, 1), (0, 2), (1, 2)].iter().enumerate() {
        let x = a.mul(h[i], c[j]);
        io[3 + n] = a.sub(io[3 + n], x);
    }
    Some([
        m, h[0], h[1], h[2], io[0], io[1], io[2], io[3], io[4], io[5],
    ])
}

/// `I_O x` for the symmetric `[xx, yy, zz, xy, xz, yz]`.
fn sym_apply(a: &mut Arena, s: &[ExprId], x: &[ExprId; 3]) -> [ExprId; 3] {
    let rows = [[s[0], s[3], s[4]], [s[3], s[1], s[5]], [s[4], s[5], s[2]]];
    rows.map(|row| dot(a, &row, x))
}

/// The joint's spatial velocity `(ω, v)` from body `body`: `ω` the axial entries of
/// `∂R/∂q_j Rᵀ`, `v = ∂c/∂q_j − ω × c`.
fn spatial_column(a: &mut Arena, body: &TreeBody, j: usize) -> Option<([ExprId; 3], [ExprId; 3])> {
    let r = body.rot?;
    let s = Sym::Coord(j as u32);
    let dr = r.map(|row| row.map(|e| a.diff(e, s)));
    let w = |a: &mut Arena, i: usize, k: usize| dot(a, &dr[i], &r[k]);
    let omega = [w(a, 2, 1), w(a, 0, 2), w(a, 1, 0)];
    let dc = body.com.map(|e| a.diff(e, s));
    let wc = cross(a, &omega, &body.com);
    let vel = [0, 1, 2].map(|i| a.sub(dc[i], wc[i]));
    Some((omega, vel))
}

/// The value of symbol `s` at random point `seed`, every quaternion in `quats` (the
/// coordinates of a norm constraint) scaled to unit norm.
pub(super) fn unit_point(seed: u64, s: Sym, quats: &[[u32; 4]]) -> f64 {
    let x = point(seed, s);
    let Sym::Coord(k) = s else { return x };
    match quats.iter().find(|q| q.contains(&k)) {
        Some(q) => {
            let n = q
                .iter()
                .map(|&i| point(seed, Sym::Coord(i)).powi(2))
                .sum::<f64>()
                .sqrt();
            x / n
        }
        None => x,
    }
}

/// What the rigidity check of coordinate `j` evaluates: `(ω, v)`, then for every body in
/// `moved` its centre of mass and its derivative by `q_j`, and its rotation and that one's
/// derivative (`None` if a moved body takes no part).
fn check_roots(
    a: &mut Arena,
    bodies: &[Option<TreeBody>],
    moved: &[usize],
    j: usize,
    (omega, vel): ([ExprId; 3], [ExprId; 3]),
) -> Option<Vec<ExprId>> {
    let s = Sym::Coord(j as u32);
    let mut roots: Vec<ExprId> = omega.iter().chain(&vel).copied().collect();
    for &b in moved {
        let body = bodies[b].as_ref()?;
        roots.extend(body.com);
        for &c in &body.com {
            let d = a.diff(c, s);
            roots.push(d);
        }
        if let Some(r) = &body.rot {
            roots.extend(r.iter().flatten());
            for &e in r.iter().flatten() {
                let d = a.diff(e, s);
                roots.push(d);
            }
        }
    }
    Some(roots)
}

/// Whether the values `x` of [`check_roots`] at one point say every body in `moved` moves
/// by `(ω, v)`: `∂c/∂q_j = v + ω × c` and `∂R/∂q_j = S(ω) R`.
fn moves_rigidly(x: &[f64], bodies: &[Option<TreeBody>], moved: &[usize]) -> bool {
    let cross = |w: &[f64], c: &[f64]| {
        [
            w[1] * c[2] - w[2] * c[1],
            w[2] * c[0] - w[0] * c[2],
            w[0] * c[1] - w[1] * c[0],
        ]
    };
    let (w, v) = (&x[0..3], &x[3..6]);
    let mut n = 6;
    for &b in moved {
        let Some(body) = &bodies[b] else { return false };
        let (c, dc) = (&x[n..n + 3], &x[n + 3..n + 6]);
        n += 6;
        let wc = cross(w, c);
        if !(0..3).all(|i| close(dc[i], v[i] + wc[i])) {
            return false;
        }
        if body.rot.is_some() {
            let (r, dr) = (&x[n..n + 9], &x[n + 9..n + 18]);
            n += 18;
            // S(ω) R, column by column.
            for col in 0..3 {
                let wr = cross(w, &[r[col], r[3 + col], r[6 + col]]);
                if !(0..3).all(|i| close(dr[3 * i + col], wr[i])) {
                    return false;
                }
            }
        }
    }
    true
}

/// Finds the coordinates that move `bodies` rigidly and adds the mass-matrix entries of
/// every nested pair of them, from the composites, to `mass` (`None` bodies take no part).
/// The returned tree says which entries it added: the bodies' own sums leave those out.
pub fn composite_mass(
    a: &mut Arena,
    bodies: &[Option<TreeBody>],
    quats: &[[u32; 4]],
    mass: &mut [Vec<ExprId>],
) -> Tree {
    let nq = mass.len();
    let masks: Vec<Option<Vec<bool>>> = bodies
        .iter()
        .map(|b| b.as_ref().map(|b| moved_by(a, b, nq)))
        .collect();
    let moved: Vec<Vec<usize>> = (0..nq)
        .map(|j| {
            (0..bodies.len())
                .filter(|&b| masks[b].as_ref().is_some_and(|m| m[j]))
                .collect()
        })
        .collect();
    // The joints: a spatial column from the moved body with the fewest coordinates, checked
    // against every moved body.
    let mut columns: Vec<Option<Column>> = vec![None; nq];
    // Every candidate's check evaluated together, once per point (the bodies' placements are
    // shared among the coordinates that move them).
    let mut roots: Vec<ExprId> = Vec::new();
    let mut spans: Vec<(usize, std::ops::Range<usize>, Column)> = Vec::new();
    for j in 0..nq {
        let rep = moved[j]
            .iter()
            .filter(|&&b| bodies[b].as_ref().is_some_and(|b| b.rot.is_some()))
            .min_by_key(|&&b| {
                masks[b]
                    .as_ref()
                    .map_or(usize::MAX, |m| m.iter().filter(|&&x| x).count())
            });
        let Some(&rep) = rep else { continue };
        let Some(body) = &bodies[rep] else { continue };
        let Some(column) = spatial_column(a, body, j) else {
            continue;
        };
        if let Some(r) = check_roots(a, bodies, &moved[j], j, column) {
            spans.push((j, roots.len()..roots.len() + r.len(), column));
            roots.extend(r);
        }
    }
    let mut ok = vec![true; spans.len()];
    for seed in 0..POINTS {
        let x = a.eval(&roots, &|s| unit_point(seed, s, quats));
        for (k, (j, span, _)) in spans.iter().enumerate() {
            ok[k] = ok[k] && moves_rigidly(&x[span.clone()], bodies, &moved[*j]);
        }
    }
    for ((j, _, column), ok) in spans.into_iter().zip(ok) {
        if ok {
            columns[j] = Some(column);
        }
    }
    // The distinct sets of moved bodies, smallest first, each planned from smaller ones.
    let nb = bodies.len();
    let mut sets: Vec<Vec<bool>> = Vec::new();
    let mut order: Vec<usize> = (0..nq).filter(|&j| columns[j].is_some()).collect();
    order.sort_by_key(|&j| (moved[j].len(), j));
    let mut set_of = vec![usize::MAX; nq];
    for &j in &order {
        let mut mask = vec![false; nb];
        moved[j].iter().for_each(|&b| mask[b] = true);
        set_of[j] = match sets.iter().position(|s| *s == mask) {
            Some(k) => k,
            None => {
                sets.push(mask);
                sets.len() - 1
            }
        };
    }
    let plan: Vec<(Vec<usize>, Vec<usize>)> = (0..sets.len())
        .map(|k| {
            let mut taken = vec![false; nb];
            let mut subsets = Vec::new();
            for l in (0..k).rev() {
                let inside = (0..nb).all(|b| !sets[l][b] || (sets[k][b] && !taken[b]));
                if inside {
                    (0..nb)
                        .filter(|&b| sets[l][b])
                        .for_each(|b| taken[b] = true);
                    subsets.push(l);
                }
            }
            let rest = (0..nb).filter(|&b| sets[k][b] && !taken[b]).collect();
            (subsets, rest)
        })
        .collect();
    let mut tree = Tree {
        joints: vec![None; nq],
        covered: vec![vec![false; nq]; nq],
        sets,
        members: bodies.iter().map(Option::is_some).collect(),
        plan,
        total_inertia: None,
    };
    if order.is_empty() {
        return tree;
    }
    // Composite spatial inertias and each joint's momentum per unit rate.
    let inertias: Vec<Option<[ExprId; 10]>> = bodies
        .iter()
        .map(|b| b.as_ref().and_then(|b| spatial_inertia(a, b)))
        .collect();
    if inertias
        .iter()
        .zip(bodies)
        .any(|(i, b)| b.is_some() && i.is_none())
    {
        return Tree {
            joints: vec![None; nq],
            ..tree
        };
    }
    let sums = tree.set_sums(a, &inertias);
    tree.total_inertia = Some(tree.total(a, &sums, &inertias));
    for &j in &order {
        let Some((omega, vel)) = columns[j] else {
            continue;
        };
        let s = sums[set_of[j]];
        let (m, h) = (s[0], [s[1], s[2], s[3]]);
        let iw = sym_apply(a, &s[4..10], &omega);
        let hv = cross(a, &h, &vel);
        let ang = [0, 1, 2].map(|i| a.add(iw[i], hv[i]));
        let hw = cross(a, &h, &omega);
        let lin = [0, 1, 2].map(|i| {
            let mv = a.mul(m, vel[i]);
            a.sub(mv, hw[i])
        });
        tree.joints[j] = Some(Joint {
            omega,
            vel,
            ang,
            lin,
            first: h,
            set: set_of[j],
        });
    }
    // Nested pairs: M_ij = ω_i · L_j + v_i · p_j with B_j ⊆ B_i.
    let subset = |x: usize, y: usize| {
        let (x, y) = (&tree.sets[x], &tree.sets[y]);
        (0..nb).all(|b| !x[b] || y[b])
    };
    for (n, &i) in order.iter().enumerate() {
        for &j in &order[n..] {
            let (Some(ji), Some(jj)) = (&tree.joints[i], &tree.joints[j]) else {
                continue;
            };
            let (outer, inner) = if subset(jj.set, ji.set) {
                (ji, jj)
            } else if subset(ji.set, jj.set) {
                (jj, ji)
            } else {
                continue;
            };
            let x = dot(a, &outer.omega, &inner.ang);
            let y = dot(a, &outer.vel, &inner.lin);
            let e = a.add(x, y);
            let m = a.add(mass[i][j], e);
            mass[i][j] = m;
            mass[j][i] = m;
            tree.covered[i][j] = true;
            tree.covered[j][i] = true;
        }
    }
    tree
}

#[cfg(test)]
pub(crate) mod tests {
    use super::composite_mass;
    use crate::derive::motion::{equations_of_motion_rooted, tree_body, EquationsOfMotion};
    use crate::expr::{Arena, ExprId, Sym};
    use crate::model::{lower, Model};
    use rand::{RngExt, SeedableRng};

    /// A fixed-base arm with offsets and full inertias (revolute joints about tilted axes,
    /// a prismatic joint, a universal joint of two coordinates moving the same bodies, a
    /// branch of two fingers, a point mass), and a pendulum on a ball joint (a quaternion:
    /// not one rigid motion of what it moves) with a hinged body below it. Shared with
    /// [`crate::derive::recursion`]'s tests.
    pub(crate) const ARM_TREE: &str = "
        coord a = 0.1; coord b = 0.2; coord s = 0.3; coord u1 = 0.1; coord u2 = -0.2;
        coord f1 = 0.01; coord f2 = 0.02;
        coord bw = 1.0; coord bx = 0.0; coord by = 0.0; coord bz = 0.0; coord h = 0.2;
        constraint bw * bw + bx * bx + by * by + bz * bz == 1.0;
        let l1 = translate(vec3(0.0, 0.0, 0.3)) * rot_z(a);
        let l2 = l1 * frame(vec3(0.05, -0.1, 0.2), rpy(0.3, -0.2, 0.7)) * rot_y(b);
        let l3 = l2 * translate(vec3(0.4, 0.0, 0.0)) * translate(vec3(0.0, 0.0, s));
        let l4 = l3 * rot_x(u1) * rot_y(u2);
        let hand = l4 * translate(vec3(0.1, 0.02, 0.0));
        let fa = hand * translate(vec3(0.0, f1, 0.05));
        let fb = hand * rpy(0.0, 0.0, 0.5) * translate(vec3(0.0, -f2, 0.05));
        let pend = l2 * translate(vec3(0.1, 0.0, 0.0)) * rot_quat(bw, bx, by, bz);
        let pend2 = pend * translate(vec3(0.0, 0.05, -0.4)) * rot_x(h);
        body b1 { mass = 4.0, inertia = mat3(0.7, -0.01, 0.02, -0.01, 0.7, 0.019, 0.02, 0.019, 0.09), frame = l1 * translate(vec3(0.003, 0.002, -0.04)) }
        body b2 { mass = 0.6, inertia = mat3(0.08, -0.004, 0.01, -0.004, 0.028, 0.0007, 0.01, 0.0007, 0.026), frame = l2 * translate(vec3(-0.003, -0.03, 0.003)) }
        body b3 { mass = 3.2, inertia = mat3(0.04, 0.0, 0.0, 0.0, 0.036, 0.0, 0.0, 0.0, 0.011), frame = l3 * translate(vec3(0.02, 0.04, -0.06)) }
        body b4 { mass = 1.1, inertia = mat3(0.01, 0.001, 0.0, 0.001, 0.02, 0.0, 0.0, 0.0, 0.03), frame = l4 }
        body hand { mass = 0.73, inertia = mat3(0.001, 0.0, 0.0, 0.0, 0.0025, 0.0, 0.0, 0.0, 0.0017), frame = hand * translate(vec3(-0.01, 0.0, 0.03)) }
        body fa { mass = 0.015, inertia = mat3(0.0002, 0.0, 0.0, 0.0, 0.0002, 0.0, 0.0, 0.0, 0.0001), frame = fa }
        body fb { mass = 0.015, inertia = mat3(0.0002, 0.0, 0.0, 0.0, 0.0002, 0.0, 0.0, 0.0, 0.0001), frame = fb }
        body tip { mass = 0.3, frame = hand * translate(vec3(0.2, 0.0, 0.0)) }
        body pend { mass = 0.5, inertia = mat3(0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.002), frame = pend * translate(vec3(0.0, 0.0, -0.4)) }
        body pend2 { mass = 0.4, inertia = mat3(0.02, 0.001, 0.0, 0.001, 0.01, 0.0, 0.0, 0.0, 0.003), frame = pend2 * translate(vec3(0.0, 0.0, -0.2)) }
    ";

    /// [`ARM_TREE`] with weights, and a body placed by an expression that is not a rigid
    /// motion (with a coordinate `e` of its own).
    fn arm() -> String {
        format!(
            "{ARM_TREE}
            param g = 9.81;
            coord e = 0.4;
            body odd {{ mass = 0.2, inertia = mat3(0.01, 0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.0, 0.03), frame = frame(vec3(cos(a), e * e, sin(e)), rot_z(a)) }}
            gravity = vec3(0.0, 0.0, -g);"
        )
    }

    /// A random state of [`ARM_TREE`]'s coordinates and velocities, its quaternion (the
    /// coordinates 7 to 10) of unit norm.
    pub(crate) fn random_state(rng: &mut impl RngExt, nq: usize) -> (Vec<f64>, Vec<f64>) {
        let mut q: Vec<f64> = (0..nq).map(|_| rng.random_range(-1.5..1.5)).collect();
        let v: Vec<f64> = (0..nq).map(|_| rng.random_range(-2.0..2.0)).collect();
        let n = (7..11).map(|k| q[k] * q[k]).sum::<f64>().sqrt();
        (7..11).for_each(|k| q[k] /= n);
        (q, v)
    }

    /// The largest error of `x` against `y` relative to `y`'s largest magnitude, asserted to
    /// be at most `tol`.
    pub(crate) fn largest_error(x: &[f64], y: &[f64], tol: f64) -> f64 {
        let scale = y.iter().fold(0.0f64, |s, e| s.max(e.abs()));
        let mut worst = 0.0f64;
        for (i, (a, b)) in x.iter().zip(y).enumerate() {
            let err = (a - b).abs() / scale;
            assert!(err <= tol, "entry {i}: {a} vs {b}");
            worst = worst.max(err);
        }
        worst
    }

    /// The model of `items` in a module `m`, lowered.
    pub(crate) fn model(items: &str) -> (Model, Arena) {
        let src = format!("mod m {{ {items} }}");
        let file = crate::parse::parse_file(src.parse().expect("tokens")).expect("parses");
        lower(&file.modules[0]).expect("lowers")
    }

    fn flat(e: &EquationsOfMotion) -> Vec<ExprId> {
        let mut r: Vec<ExprId> = e.mass.iter().flatten().copied().collect();
        r.extend(&e.forces);
        r.extend(e.energy);
        r
    }

    /// Which coordinates the tree finds rigid: every joint of the arm, `e` (it moves one
    /// body alone) and `h` (below the ball joint: rigid where its quaternion is a rotation),
    /// not the quaternion's coordinates, not `a` (it places `odd` by an expression that is
    /// not one rigid motion with the arm's bodies).
    #[test]
    fn the_tree_finds_the_rigid_joints_and_only_them() {
        let (m, mut arena) = model(&arm());
        let nq = m.coords.len();
        let bodies: Vec<_> = m.dynamics.bodies.iter().map(tree_body).collect();
        let zero = arena.constant(0.0);
        let mut mass = vec![vec![zero; nq]; nq];
        let quats = crate::derive::root::quaternions(&m, &mut arena);
        let tree = composite_mass(&mut arena, &bodies, &quats, &mut mass);
        let rigid: Vec<usize> = (0..nq).filter(|&j| tree.joints[j].is_some()).collect();
        assert_eq!(rigid, [1, 2, 3, 4, 5, 6, 11, 12]);
        let covered = tree.covered.iter().flatten().filter(|&&c| c).count();
        // The pairs among b, s, u1, u2 (all nested: 16 entries), f1 and f2 each with those
        // four (8 entries) and itself (1), not f1 with f2 (disjoint sets); e with itself; h
        // with b (whose bodies include the pendulum's) and itself.
        assert_eq!(covered, 16 + 2 * 9 + 1 + 3);
    }

    /// The mass matrix and the forces with composite bodies equal the body-by-body ones
    /// entry by entry at 200 random states (the ball joint's quaternion of unit norm), to
    /// 1e-12 of each one's largest magnitude; the energy too.
    #[test]
    fn composite_mass_equals_the_body_by_body_sum() {
        let (m, mut arena) = model(&arm());
        let nq = m.coords.len();
        let tree = equations_of_motion_rooted(&m, &mut arena, true);
        let sum = equations_of_motion_rooted(&m, &mut arena, false);
        let (ta, sa) = (flat(&tree), flat(&sum));
        assert_ne!(
            ta[..nq * nq],
            sa[..nq * nq],
            "the composites changed nothing"
        );
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(37);
        let mut worst = 0.0f64;
        for _ in 0..200 {
            let (q, v) = random_state(&mut rng, nq);
            let at = |roots: &[ExprId]| {
                arena.eval(roots, &|s| match s {
                    Sym::Coord(i) => q[i as usize],
                    Sym::Vel(i) => v[i as usize],
                    Sym::Param(_) => 9.81,
                    _ => 0.0,
                })
            };
            let (x, y) = (at(&ta), at(&sa));
            // M, f and the energy, each against its own largest magnitude.
            for block in [0..nq * nq, nq * nq..nq * nq + nq, nq * nq + nq..x.len()] {
                worst = worst.max(largest_error(&x[block.clone()], &y[block], 1e-12));
            }
        }
        assert!(
            worst > 0.0,
            "different expressions agree to rounding, not identically"
        );
    }
}
