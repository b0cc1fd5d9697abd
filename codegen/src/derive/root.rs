//! Bodies carried by a floating root: their velocities in the root's axes.
//!
//! A floating base (a free joint: a position `p₀` and a unit quaternion `(w, x, y, z)` with
//! the constraint `w² + x² + y² + z² = 1`) places every body of the tree under it at
//! `c = p₀ + R₀ c_rel` with orientation `R = R₀ A`, where `R₀ = rot_quat(w, x, y, z)` and
//! `c_rel`, `A` do not contain the base coordinates. Written in world axes, the mass matrix
//! `Σ m JᵀJ + WᵀIW` carries `R₀` into every entry of the joint block: `R₀ᵀ R₀ = I` holds
//! only on the norm constraint, which the symbolic products do not use. In the root's axes
//! the body's velocity is `u = R₀ᵀ ṗ₀ + Ω c_rel + ċ_rel` (with `Ω = R₀ᵀ Ṙ₀`) and its
//! angular velocity the entries of `Aᵀ Ω A + Aᵀ Ȧ`: only the base's own velocity map carries
//! the quaternion, and the joint block is the fixed-base one.
//!
//! **Exactness.** On consistent states (the quaternion of unit norm, its rate tangent:
//! `w ẇ + x ẋ + y ẏ + z ż = 0`), the only states the constrained dynamics is defined on,
//! every entry of the mass matrix, every generalised force and the kinetic energy equal the
//! world-axes ones exactly: `R₀ R₀ᵀ = I` gives `∂u/∂q̇ = R₀ᵀ ∂v/∂q̇` column by column (so
//! `M` agrees entrywise, also against accelerations off the constraint's tangent), and
//! `Ṙ₀ᵀ R₀ + R₀ᵀ Ṙ₀ = 0` gives the acceleration `R₀ᵀ a = u̇ + ω₀ × u`. Off the
//! constraint the two formulations are different smooth extensions of the same dynamics,
//! apart by the constraint's residual.
//!
//! **When it applies** is decided from the model, body by body: a constraint that is
//! `±(w² + x² + y² + z² − 1)` in four coordinates names the quaternion (its order is the
//! one for which the identities below hold); coordinates whose partials of every body's
//! centre of mass are one constant vector and which no rotation contains are the base's
//! translation; a body is rooted when `c = p₀ + R₀ c_rel` and `R = R₀ A` hold at random
//! points (the base coordinates off their constraint too, every parameter and time
//! random), where `c_rel` and `A` are the body's position and rotation with the base at
//! the origin and the identity quaternion. The identities are polynomial in the base
//! coordinates, so a random check off the constraint does not pass by accident; a body
//! for which they fail keeps the world-axes formulation.

use super::motion::{add_joint_forces, add_mass, body_angular_velocity, cross, dot};
use super::recursion::{body_motions, Motion};
use super::tree::{composite_mass, Tree, TreeBody};
use crate::expr::{Arena, ExprId, Sym};
use crate::model::dynamics::{Body, Inertia, Orientation};
use crate::model::Model;

/// Random points at which the identities are checked.
pub(super) const POINTS: u64 = 4;

/// The floating root found in a model, and the bodies it carries.
#[derive(Clone, Debug)]
pub struct Root {
    /// The quaternion's coordinates, in `(w, x, y, z)` order.
    pub quat: [u32; 4],
    /// The base's translation coordinates and their (constant) world directions.
    pub translation: Vec<(u32, [ExprId; 3])>,
    /// For each body of the model: whether the root carries it.
    pub rooted: Vec<bool>,
}

/// A rooted body's placement relative to the root: centre of mass and rotation.
#[derive(Clone, Debug)]
pub struct RelativeBody {
    /// `c_rel`: the centre of mass with the base at the origin and unrotated.
    pub com: [ExprId; 3],
    /// `A`: the rotation with the base unrotated (absent for a point mass).
    pub rot: Option<[[ExprId; 3]; 3]>,
}

/// A deterministic value in `[lo, hi)` for `(seed, key)` (splitmix64).
fn random(seed: u64, key: u64, lo: f64, hi: f64) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(key.wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(0x94D0_49BB_1331_11EB);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    lo + (hi - lo) * ((z >> 11) as f64 / (1u64 << 53) as f64)
}

/// The value of symbol `s` at random point `seed`.
pub(super) fn point(seed: u64, s: Sym) -> f64 {
    match s {
        Sym::Coord(i) => random(seed, 4 * i as u64, -1.3, 1.3),
        Sym::Vel(i) => random(seed, 4 * i as u64 + 1, -1.3, 1.3),
        Sym::Param(i) => random(seed, 4 * i as u64 + 2, 0.3, 1.3),
        Sym::Time => random(seed, 3, 0.0, 1.0),
        Sym::Rhs(i) | Sym::Weight(i) => random(seed, 4 * i as u64 + 3, -1.0, 1.0),
    }
}

pub(super) fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * (1.0 + x.abs() + y.abs())
}

/// `rot_quat(w, x, y, z)` as the language builds it (`1 − 2(y² + z²)` on the diagonal).
fn quaternion_values(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [w, x, y, z] = q;
    let p = |u: f64, v: f64| 2.0 * (u * v);
    let (xx, yy, zz) = (p(x, x), p(y, y), p(z, z));
    let (xy, xz, yz) = (p(x, y), p(x, z), p(y, z));
    let (wx, wy, wz) = (p(w, x), p(w, y), p(w, z));
    [
        [1.0 - (yy + zz), xy - wz, xz + wy],
        [xy + wz, 1.0 - (xx + zz), yz - wx],
        [xz - wy, yz + wx, 1.0 - (xx + yy)],
    ]
}

/// The four coordinates of a constraint `±(w² + x² + y² + z² − 1)`, if `e` is one.
fn norm_constraint(a: &Arena, e: ExprId) -> Option<[u32; 4]> {
    let cs = a.coords_of(e);
    let quat: [u32; 4] = cs.as_slice().try_into().ok()?;
    let mut sign = 0.0;
    for seed in 0..POINTS {
        let v = a.eval(&[e], &|s| point(seed, s))[0];
        let n: f64 = quat
            .iter()
            .map(|&k| point(seed, Sym::Coord(k)).powi(2))
            .sum::<f64>()
            - 1.0;
        let s = if close(v, n) {
            1.0
        } else if close(v, -n) {
            -1.0
        } else {
            return None;
        };
        if sign != 0.0 && s != sign {
            return None;
        }
        sign = s;
    }
    Some(quat)
}

/// The coordinates of every unit-quaternion constraint of the model (`±(w² + x² + y² + z² −
/// 1)`), each in the constraint's coordinate order.
pub fn quaternions(model: &Model, a: &mut Arena) -> Vec<[u32; 4]> {
    model
        .constraints
        .iter()
        .filter_map(|c| norm_constraint(a, c.expr))
        .collect()
}

/// The 3-D bodies' centres of mass and rotations, 12 roots per body (a point mass repeats
/// its first centre-of-mass entry for the rotation).
fn body_roots(bodies: &[Body]) -> Vec<Option<Vec<ExprId>>> {
    bodies
        .iter()
        .map(|b| {
            if b.com.len() != 3 {
                return None;
            }
            let mut r = b.com.clone();
            match &b.orientation {
                Some(Orientation::Rotation(m)) => r.extend(m.iter().flatten()),
                Some(Orientation::Angle(_)) => return None,
                None => r.extend([b.com[0]; 9]),
            }
            Some(r)
        })
        .collect()
}

/// The base's translation coordinates: every body's centre of mass moves along one
/// constant world direction with them and no rotation contains them.
fn translation(a: &mut Arena, model: &Model, quat: &[u32; 4]) -> Vec<(u32, [ExprId; 3])> {
    let roots: Vec<Vec<ExprId>> = body_roots(&model.dynamics.bodies)
        .into_iter()
        .flatten()
        .collect();
    // Coordinates some rotation contains are not translations.
    let mut in_rotation = vec![false; model.coords.len()];
    for r in &roots {
        for &e in &r[3..] {
            for k in a.coords_of(e) {
                in_rotation[k as usize] = true;
            }
        }
    }
    let mut found = Vec::new();
    for k in 0..model.coords.len() as u32 {
        if quat.contains(&k) || in_rotation[k as usize] {
            continue;
        }
        let s = Sym::Coord(k);
        let mut dir: Option<[ExprId; 3]> = None;
        let mut ok = true;
        for r in &roots {
            let d: Vec<ExprId> = r[..3].iter().map(|&c| a.diff(c, s)).collect();
            if d.iter().any(|&e| a.as_const(e).is_none()) {
                ok = false;
                break;
            }
            if d.iter().all(|&e| a.is_zero(e)) {
                continue;
            }
            match dir {
                None => dir = Some([d[0], d[1], d[2]]),
                Some(x) if x[..] == d[..] => {}
                Some(_) => {
                    ok = false;
                    break;
                }
            }
        }
        if let (true, Some(d)) = (ok, dir) {
            found.push((k, d));
        }
    }
    found
}

/// Which bodies `c = p₀ + R₀ c_rel`, `R = R₀ A` holds for, with the quaternion `quat`.
fn rooted_bodies(
    a: &Arena,
    model: &Model,
    quat: [u32; 4],
    translation: &[(u32, [ExprId; 3])],
) -> Vec<bool> {
    let roots = body_roots(&model.dynamics.bodies);
    let flat: Vec<ExprId> = roots.iter().flatten().flatten().copied().collect();
    let mut ok: Vec<bool> = roots
        .iter()
        .map(|r| {
            r.as_ref().is_some_and(|r| {
                r.iter()
                    .any(|&e| a.coords_of(e).iter().any(|k| quat.contains(k)))
            })
        })
        .collect();
    let dirs: Vec<(u32, [f64; 3])> = translation
        .iter()
        .map(|&(k, d)| (k, d.map(|e| a.as_const(e).unwrap_or(f64::NAN))))
        .collect();
    let reference = |seed: u64, s: Sym| match s {
        Sym::Coord(k) if k == quat[0] => 1.0,
        Sym::Coord(k) if quat.contains(&k) || translation.iter().any(|t| t.0 == k) => 0.0,
        _ => point(seed, s),
    };
    for seed in 0..POINTS {
        let at = a.eval(&flat, &|s| point(seed, s));
        let rel = a.eval(&flat, &|s| reference(seed, s));
        let q = quat.map(|k| point(seed, Sym::Coord(k)));
        let r0 = quaternion_values(q);
        let mut p0 = [0.0; 3];
        for &(k, d) in &dirs {
            let v = point(seed, Sym::Coord(k));
            for i in 0..3 {
                p0[i] += d[i] * v;
            }
        }
        let mut n = 0;
        for (b, r) in roots.iter().enumerate() {
            let Some(_) = r else { continue };
            let (x, y) = (&at[n..n + 12], &rel[n..n + 12]);
            n += 12;
            if !ok[b] {
                continue;
            }
            let com = (0..3).all(|i| {
                let c = p0[i] + (0..3).map(|j| r0[i][j] * y[j]).sum::<f64>();
                close(x[i], c)
            });
            let has_rot = matches!(
                model.dynamics.bodies[b].orientation,
                Some(Orientation::Rotation(_))
            );
            let rot = !has_rot
                || (0..3).all(|i| {
                    (0..3).all(|j| {
                        let c = (0..3).map(|k| r0[i][k] * y[3 + 3 * k + j]).sum::<f64>();
                        close(x[3 + 3 * i + j], c)
                    })
                });
            ok[b] = com && rot;
        }
    }
    ok
}

/// The floating root carrying the most bodies, if the model has one (see the module
/// docs for when).
pub fn find_root(model: &Model, a: &mut Arena) -> Option<Root> {
    let mut best: Option<Root> = None;
    let mut best_count = 0;
    for c in &model.constraints {
        let Some(coords) = norm_constraint(a, c.expr) else {
            continue;
        };
        let translation = translation(a, model, &coords);
        for w in 0..4 {
            let rest: Vec<u32> = (0..4).filter(|&i| i != w).map(|i| coords[i]).collect();
            for perm in [
                [0, 1, 2],
                [0, 2, 1],
                [1, 0, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0],
            ] {
                let quat = [coords[w], rest[perm[0]], rest[perm[1]], rest[perm[2]]];
                let rooted = rooted_bodies(a, model, quat, &translation);
                let count = rooted.iter().filter(|&&r| r).count();
                if count > best_count {
                    best_count = count;
                    best = Some(Root {
                        quat,
                        translation: translation.clone(),
                        rooted,
                    });
                }
            }
        }
    }
    best
}

/// The rooted bodies' placements relative to the root (`None` for the others), all by one
/// substitution of the base's coordinates by the origin and the identity quaternion.
pub fn relative_bodies(
    a: &mut Arena,
    model: &Model,
    root: &Root,
    used: &[bool],
) -> Vec<Option<RelativeBody>> {
    let roots = body_roots(&model.dynamics.bodies);
    let take: Vec<bool> = root
        .rooted
        .iter()
        .zip(used)
        .map(|(&r, &u)| r && u)
        .collect();
    let flat: Vec<ExprId> = roots
        .iter()
        .zip(&take)
        .filter(|(_, &r)| r)
        .flat_map(|(r, _)| r.iter().flatten().copied())
        .collect();
    let quat = root.quat;
    let trans: Vec<u32> = root.translation.iter().map(|t| t.0).collect();
    let w = quat[0];
    let (zero, one) = (a.constant(0.0), a.constant(1.0));
    let sub = a.subst(&flat, &|s| match s {
        Sym::Coord(k) if k == w => Some(one),
        Sym::Coord(k) if quat.contains(&k) || trans.contains(&k) => Some(zero),
        _ => None,
    });
    let mut n = 0;
    model
        .dynamics
        .bodies
        .iter()
        .zip(&take)
        .map(|(b, &r)| {
            if !r {
                return None;
            }
            let x = &sub[n..n + 12];
            n += 12;
            let rot = matches!(b.orientation, Some(Orientation::Rotation(_)))
                .then(|| [0, 1, 2].map(|i| [0, 1, 2].map(|j| x[3 + 3 * i + j])));
            Some(RelativeBody {
                com: [x[0], x[1], x[2]],
                rot,
            })
        })
        .collect()
}

/// The rooted bodies in the root's axes, as a tree's bodies.
fn tree_bodies<'m>(model: &'m Model, rel: &[Option<RelativeBody>]) -> Vec<Option<TreeBody<'m>>> {
    model
        .dynamics
        .bodies
        .iter()
        .zip(rel)
        .map(|(b, rel)| {
            let rel = rel.as_ref()?;
            TreeBody::new(b.mass, b.inertia.as_ref(), rel.com, rel.rot)
        })
        .collect()
}

/// `x + y` entrywise.
fn add3(a: &mut Arena, x: [ExprId; 3], y: &[ExprId]) -> [ExprId; 3] {
    [0, 1, 2].map(|i| a.add(x[i], y[i]))
}

/// `M x` for a 3×3 `M`.
fn mat_vec(a: &mut Arena, m: &[[ExprId; 3]; 3], x: &[ExprId]) -> Vec<ExprId> {
    m.iter().map(|row| dot(a, row, x)).collect()
}

/// Column `j` of a 3×3 matrix.
fn col(m: &[[ExprId; 3]; 3], j: usize) -> [ExprId; 3] {
    [m[0][j], m[1][j], m[2][j]]
}

/// The base's rotation terms: its quaternion's symbols, `R₀`, the axial vectors `p_k` of
/// the skew parts of `R₀ᵀ ∂R₀/∂q_k`, `K = R₀ + R₀ᵀ − 2I` and, per translation coordinate,
/// its world direction `e_a` and `t_a = R₀ᵀ e_a`.
struct Base {
    q: [ExprId; 4],
    r0: [[ExprId; 3]; 3],
    p: Vec<[ExprId; 3]>,
    kmat: [[ExprId; 3]; 3],
    /// `4 v` with `v = (x, y, z)`, the quaternion's vector part: `K = 4 (v vᵀ − |v|² I)`.
    v4: [ExprId; 3],
    /// The axial vector of `N − K`'s skew part (`N = 2 L(K)`): `(−K₁₂, −K₀₂, −K₀₁)`.
    s: [ExprId; 3],
    trans: Vec<(usize, [ExprId; 3], [ExprId; 3])>,
}

fn base(a: &mut Arena, root: &Root) -> Base {
    let half = a.constant(0.5);
    let two = a.constant(2.0);
    let q = root.quat.map(|k| a.sym(Sym::Coord(k)));
    // Built as the language's `rot_quat` builds it, so the nodes are shared with the
    // model's own.
    let r0 = crate::model::quaternion(a, q);
    let p: Vec<[ExprId; 3]> = root
        .quat
        .iter()
        .map(|&k| {
            let dr = r0.map(|row| row.map(|e| a.diff(e, Sym::Coord(k))));
            let pm = |a: &mut Arena, i: usize, j: usize| dot(a, &col(&r0, i), &col(&dr, j));
            let axial = |a: &mut Arena, (i, j): (usize, usize)| {
                let x = pm(a, i, j);
                let y = pm(a, j, i);
                let d = a.sub(x, y);
                a.mul(half, d)
            };
            [axial(a, (2, 1)), axial(a, (0, 2)), axial(a, (1, 0))]
        })
        .collect();
    let kmat: [[ExprId; 3]; 3] = [0, 1, 2].map(|i| {
        [0, 1, 2].map(|j| {
            let s = a.add(r0[i][j], r0[j][i]);
            if i == j {
                a.sub(s, two)
            } else {
                s
            }
        })
    });
    let trans: Vec<(usize, [ExprId; 3], [ExprId; 3])> = root
        .translation
        .iter()
        .map(|&(k, e)| {
            let t = [0, 1, 2].map(|i| dot(a, &col(&r0, i), &e));
            (k as usize, e, t)
        })
        .collect();
    let four = a.constant(4.0);
    let v4 = [1, 2, 3].map(|k| a.mul(four, q[k]));
    let s = [(1, 2), (0, 2), (0, 1)].map(|(i, j)| a.neg(kmat[i][j]));
    Base {
        q,
        r0,
        p,
        kmat,
        v4,
        s,
        trans,
    }
}

/// `κ`: the entries `(2, 1)`, `(0, 2)`, `(1, 0)` of `Aᵀ K A` for a body's rotation `A`. With
/// `K = R₀ + R₀ᵀ − 2I = 4 (v vᵀ − |v|² I)` (the language's `rot_quat`, `v` the quaternion's
/// vector part: an identity) and `AᵀA = I` (on consistent states), those entries are
/// `4 (Aᵀv)_i (Aᵀv)_j`.
fn kappa(a: &mut Arena, base: &Base, r: &[[ExprId; 3]; 3]) -> [ExprId; 3] {
    let q = [base.q[1], base.q[2], base.q[3]];
    let av = [0, 1, 2].map(|i| dot(a, &col(r, i), &q));
    let av4 = [0, 1, 2].map(|i| dot(a, &col(r, i), &base.v4));
    [(2, 1), (0, 2), (1, 0)].map(|(i, j)| a.mul(av4[i], av[j]))
}

/// The mass matrix of the bodies the root carries (`used` and rooted), added to `mass`.
///
/// The joint block is the fixed-base one: `m JᵀJ + WᵀIW` with `J = ∂c_rel/∂q` and `W`
/// from `Aᵀ Ȧ`. The base's columns, in the root's axes: a translation `a` (world direction
/// `e_a`) moves every body by `t_a = R₀ᵀ e_a`; a quaternion coordinate `k` by
/// `P_k c_rel` and turns it by the entries `(2, 1)`, `(0, 2)`, `(1, 0)` of `Aᵀ P_k A`, with
/// `P_k = R₀ᵀ ∂R₀/∂q_k = S(p_k) − q_k K` on the norm constraint (`p_k` the axial vector of
/// its skew part, `K = R₀ + R₀ᵀ − 2I`: `R₀ᵀR₀ = I + (s² − s⁴)(R̂ + R̂ᵀ − 2I)` for the
/// quaternion `s q̂`, whose derivative at `s = 1` is `−2 q_k K`). So the body's base
/// columns are `J_k = p_k × c − q_k K c` and `W_k = Aᵀ p_k − q_k κ` (`κ` the three entries of
/// `Aᵀ K A`), and every base entry is a sum over bodies of a few composite quantities
/// (total mass, first moment, rotational inertia about the root's origin, and the joints'
/// momentum columns), as in the composite-rigid-body algorithm, instead of one product per
/// body and pair of coordinates.
pub fn rooted_mass(
    a: &mut Arena,
    model: &Model,
    root: &Root,
    used: &[bool],
    mass: &mut [Vec<ExprId>],
) -> Tree {
    let nq = mass.len();
    let rel = relative_bodies(a, model, root, used);
    if rel.iter().all(Option::is_none) {
        return Tree::empty(nq);
    }
    let zero = a.constant(0.0);
    let base = base(a, root);
    let Base {
        q,
        ref p,
        kmat,
        ref trans,
        ..
    } = base;
    // Composites over the bodies.
    let mut m_total = zero;
    let mut first = [zero; 3];
    let mut inertia = [[zero; 3]; 3];
    let mut v_sum = [zero; 3];
    let mut s_sum = zero;
    let mut lin = vec![[zero; 3]; nq];
    let mut ang = vec![[zero; 3]; nq];
    let mut rad = vec![zero; nq];
    // The joint block's nested pairs from composite bodies ([`super::tree`]).
    let quats = quaternions(model, a);
    let tree = composite_mass(a, &tree_bodies(model, &rel), &quats, mass);
    let covered = Some(tree.covered.as_slice());
    // The total mass, first moment and inertia about the root's origin from the tree's
    // composites, where every rooted body is one of its members.
    let shared = tree.total_inertia().filter(|_| {
        rel.iter()
            .enumerate()
            .all(|(n, r)| r.is_none() || tree.has_body(n))
    });
    // Per body, the radial terms' vector `m c × K c + A I κ`, summed per joint below.
    let mut radial: Vec<Option<[ExprId; 3]>> = vec![None; rel.len()];
    for (n, (b, rel)) in model.dynamics.bodies.iter().zip(&rel).enumerate() {
        let Some(rel) = rel else { continue };
        let m = b.mass;
        let c = rel.com;
        // The joint block, as on a fixed base.
        let jac: Vec<Vec<ExprId>> = (0..nq)
            .map(|i| c.iter().map(|&e| a.diff(e, Sym::Coord(i as u32))).collect())
            .collect();
        add_mass(a, mass, &jac, covered, |a, u, v| {
            let d = dot(a, u, v);
            a.mul(m, d)
        });
        let rot = match (&b.inertia, &rel.rot) {
            (Some(Inertia::Principal(_) | Inertia::Full(_)), Some(r)) => {
                Some((b.inertia.as_ref(), r))
            }
            _ => None,
        };
        let apply = |a: &mut Arena, x: &[ExprId]| -> Vec<ExprId> {
            match &b.inertia {
                Some(Inertia::Principal(im)) => (0..3).map(|k| a.mul(im[k], x[k])).collect(),
                Some(Inertia::Full(im)) => (0..3).map(|k| dot(a, &im[k], x)).collect(),
                _ => vec![zero; 3],
            }
        };
        let wj: Option<Vec<Vec<ExprId>>> = rot.map(|(_, r)| {
            let w = body_angular_velocity(a, r, nq);
            (0..nq)
                .map(|i| w.iter().map(|&e| a.diff(e, Sym::Vel(i as u32))).collect())
                .collect()
        });
        if let Some(wj) = &wj {
            add_mass(a, mass, wj, covered, |a, u, v| {
                let iv = apply(a, v);
                dot(a, u, &iv)
            });
        }
        // Composites: mass, first moment, inertia about the root's origin, and the
        // radial terms.
        let kc = mat_vec(a, &kmat, &c);
        let kappa: Option<[ExprId; 3]> = rot.map(|(_, r)| kappa(a, &base, r));
        let mc = c.map(|e| a.mul(m, e));
        if shared.is_none() {
            m_total = a.add(m_total, m);
            first = add3(a, first, &mc);
            let c2 = dot(a, &c, &c);
            for i in 0..3 {
                for j in 0..3 {
                    let cc = a.mul(c[i], c[j]);
                    let mut e = if i == j { a.sub(c2, cc) } else { a.neg(cc) };
                    e = a.mul(m, e);
                    inertia[i][j] = a.add(inertia[i][j], e);
                }
            }
        }
        let ckc = cross(a, &mc, &kc);
        v_sum = add3(a, v_sum, &ckc);
        let mut v_body = [ckc[0], ckc[1], ckc[2]];
        let kc2 = dot(a, &kc, &kc);
        let mkc2 = a.mul(m, kc2);
        s_sum = a.add(s_sum, mkc2);
        if let (Some((_, r)), Some(kappa)) = (rot, &kappa) {
            // A I Aᵀ, A I κ, κᵀ I κ.
            if shared.is_none() {
                let rows: Vec<Vec<ExprId>> = (0..3).map(|i| r[i].to_vec()).collect();
                let iat: Vec<Vec<ExprId>> = (0..3).map(|i| apply(a, &rows[i])).collect();
                for i in 0..3 {
                    for j in 0..3 {
                        let e = dot(a, &rows[i], &iat[j]);
                        inertia[i][j] = a.add(inertia[i][j], e);
                    }
                }
            }
            let ik = apply(a, kappa);
            let aik = [0, 1, 2].map(|i| dot(a, &r[i], &ik));
            v_sum = add3(a, v_sum, &aik);
            v_body = add3(a, v_body, &aik);
            let kik = dot(a, kappa, &ik);
            s_sum = a.add(s_sum, kik);
        }
        radial[n] = Some(v_body);
        // The joints' momentum columns (the tree's joints' from their composites, below).
        for j in 0..nq {
            if tree.joints[j].is_some() {
                continue;
            }
            let jw = wj.as_ref().map(|w| &w[j]);
            let moving = jac[j].iter().any(|&e| !a.is_zero(e))
                || jw.is_some_and(|w| w.iter().any(|&e| !a.is_zero(e)));
            if !moving {
                continue;
            }
            let mj: Vec<ExprId> = jac[j].iter().map(|&e| a.mul(m, e)).collect();
            lin[j] = add3(a, lin[j], &mj);
            let cm = cross(a, &c, &mj);
            ang[j] = add3(a, ang[j], &cm);
            let kcm = dot(a, &kc, &mj);
            rad[j] = a.add(rad[j], kcm);
            if let (Some((_, r)), Some(jw), Some(kappa)) = (rot, jw, &kappa) {
                let iw = apply(a, jw);
                let aiw = [0, 1, 2].map(|i| dot(a, &r[i], &iw));
                ang[j] = add3(a, ang[j], &aiw);
                let kiw = dot(a, kappa, &iw);
                rad[j] = a.add(rad[j], kiw);
            }
        }
    }
    if let Some(t) = shared {
        m_total = t[0];
        first = [t[1], t[2], t[3]];
        inertia = [[t[4], t[7], t[8]], [t[7], t[5], t[9]], [t[8], t[9], t[6]]];
    }
    // The tree's joints: `p_j`, `L_j`, and `v_j · K h_j + ω_j · V_j` with `V_j` the sum of
    // the radial vectors over the bodies the joint moves.
    let radial_sums = tree.set_sums(a, &radial);
    for (j, joint) in tree.joints.iter().enumerate() {
        let Some(joint) = joint else { continue };
        lin[j] = joint.lin;
        ang[j] = joint.ang;
        let kh = mat_vec(a, &kmat, &joint.first);
        let x = dot(a, &joint.vel, &kh);
        let v = tree.joint_sum(&radial_sums, joint);
        let y = dot(a, &joint.omega, &v);
        rad[j] = a.add(x, y);
    }
    // The base's entries.
    let is_base = |j: usize| {
        root.quat.contains(&(j as u32)) || root.translation.iter().any(|t| t.0 as usize == j)
    };
    let put = |a: &mut Arena, mass: &mut [Vec<ExprId>], i: usize, j: usize, e: ExprId| {
        let x = a.add(mass[i][j], e);
        mass[i][j] = x;
        mass[j][i] = x;
    };
    let kfirst = mat_vec(a, &kmat, &first);
    for (n, &(ai, ea, ta)) in trans.iter().enumerate() {
        for &(aj, eb, _) in &trans[n..] {
            let d = dot(a, &ea, &eb);
            let e = a.mul(m_total, d);
            put(a, mass, ai, aj, e);
        }
        for (k, &qk) in root.quat.iter().enumerate() {
            let pc = cross(a, &p[k], &first);
            let qkf: Vec<ExprId> = kfirst.iter().map(|&e| a.mul(q[k], e)).collect();
            let jk: Vec<ExprId> = (0..3).map(|i| a.sub(pc[i], qkf[i])).collect();
            let e = dot(a, &ta, &jk);
            put(a, mass, ai, qk as usize, e);
        }
        for j in (0..nq).filter(|&j| !is_base(j)) {
            let e = dot(a, &ta, &lin[j]);
            put(a, mass, ai, j, e);
        }
    }
    for (k, &qk) in root.quat.iter().enumerate() {
        let ip = mat_vec(a, &inertia, &p[k]);
        let pv_k = dot(a, &p[k], &v_sum);
        for (l, &ql) in root.quat.iter().enumerate().skip(k) {
            // p_kᵀ Ic p_l − q_l p_k·V − q_k p_l·V + q_k q_l s.
            let x = dot(a, &p[l], &ip);
            let pv_l = dot(a, &p[l], &v_sum);
            let y = a.mul(q[l], pv_k);
            let z = a.mul(q[k], pv_l);
            let qq = a.mul(q[k], q[l]);
            let w = a.mul(qq, s_sum);
            let xy = a.sub(x, y);
            let xyz = a.sub(xy, z);
            let e = a.add(xyz, w);
            put(a, mass, qk as usize, ql as usize, e);
        }
        for j in (0..nq).filter(|&j| !is_base(j)) {
            let x = dot(a, &p[k], &ang[j]);
            let y = a.mul(q[k], rad[j]);
            let e = a.sub(x, y);
            put(a, mass, qk as usize, j, e);
        }
    }
    tree
}

/// `∂V/∂q_i` of the weights of `tree`'s members (bodies the root carries) for the root's own
/// coordinates `i` (`None` for the others): with `c = p₀ + R₀ c_rel`, `V = −Σ m g·c = −M g·p₀
/// − g·R₀ h` (`M`, `h` the members' mass and first moment about the root's origin in its
/// axes), so a translation `a` (world direction `e_a`) gives `−M g·e_a` and a quaternion
/// coordinate `k` gives `−g·(∂R₀/∂q_k) h`: two sums over the bodies instead of each body's
/// chain differentiated by the base's coordinates.
pub fn base_weight(
    a: &mut Arena,
    model: &Model,
    root: &Root,
    used: &[bool],
    tree: &Tree,
    g: [ExprId; 3],
) -> Vec<Option<ExprId>> {
    let nq = model.coords.len();
    let rel = relative_bodies(a, model, root, used);
    let zero = a.constant(0.0);
    let (mut m_total, mut h) = (zero, [zero; 3]);
    for (n, (b, rel)) in model.dynamics.bodies.iter().zip(&rel).enumerate() {
        let Some(rel) = rel else { continue };
        if !tree.has_body(n) {
            continue;
        }
        m_total = a.add(m_total, b.mass);
        let mc = rel.com.map(|e| a.mul(b.mass, e));
        h = add3(a, h, &mc);
    }
    let mut rows = vec![None; nq];
    for &(k, e) in &root.translation {
        let ge = dot(a, &g, &e);
        let x = a.mul(m_total, ge);
        rows[k as usize] = Some(a.neg(x));
    }
    let q = root.quat.map(|k| a.sym(Sym::Coord(k)));
    let r0 = crate::model::quaternion(a, q);
    for &k in &root.quat {
        let dr = r0.map(|row| row.map(|e| a.diff(e, Sym::Coord(k))));
        let drh = mat_vec(a, &dr, &h);
        let x = dot(a, &g, &drh);
        rows[k as usize] = Some(a.neg(x));
    }
    rows
}

/// The generalised forces of the bodies the root carries (`used` and rooted): the
/// quadratic-velocity terms `−Jᵀ m a − Wᵀ(I ω̇ + ω × Iω)` in the root's axes.
///
/// The body's velocity is `u = R₀ᵀ ṗ₀ + ω₀ × c_rel + ċ_rel` and its angular velocity
/// `Aᵀ ω₀ + ω_rel`, with `ω₀` the entries `(2, 1)`, `(0, 2)`, `(1, 0)` of `Ω = R₀ᵀ Ṙ₀`;
/// its acceleration at `q̈ = 0` is `u̇ + ω₀ × u − |q̇_quat|² N c_rel` and its angular one
/// `d/dt(Aᵀ ω₀ + ω_rel) − |q̇_quat|² κ_N`. The last terms are exact on consistent states:
/// `Ω − S(ω₀) = L(Ġ)` (`G = R₀ᵀ R₀`, `L` keeping the diagonal halved and the entries
/// `(0, 1)`, `(1, 2)`, `(2, 0)`) vanishes there but its rate does not: along the constraint
/// `G̈ = −(∂G/∂q) q̈ = 2 K (q·q̈) = −2 K |q̇_quat|²`, so `N = 2 L(K)` and `κ_N` the entries
/// `(2, 1)`, `(0, 2)`, `(1, 0)` of `Aᵀ N A`. Joint rows are `−J_jᵀ m a − W_jᵀ h` with the
/// fixed-base `J_j`, `W_j`; the base rows come from three sums over the bodies (force,
/// moment about the root's origin, and the radial term), as for [`rooted_mass`]. With
/// the tree's `recursion` flag off, every body's velocity products come from its placement differentiated
/// by time (the same values; [`super::motion::equations_of_motion`] keeps the smaller).
pub fn rooted_forces(
    a: &mut Arena,
    model: &Model,
    root: &Root,
    used: &[bool],
    (tree, recursion): (&Tree, bool),
    gravity: Option<[ExprId; 3]>,
    forces: &mut [ExprId],
) {
    let nq = forces.len();
    let rel = relative_bodies(a, model, root, used);
    if rel.iter().all(Option::is_none) {
        return;
    }
    let rigid = |j: usize| tree.joints[j].is_some();
    let mut wrenches: Vec<Option<[ExprId; 6]>> = vec![None; rel.len()];
    let zero = a.constant(0.0);
    let base = base(a, root);
    let Base {
        q,
        r0,
        ref p,
        kmat,
        ref trans,
        s: skew,
        ..
    } = base;
    // ω₀, R₀ᵀ ṗ₀, |q̇_quat|² and N = 2 L(K).
    let rd = r0.map(|row| row.map(|e| super::motion::time_derivative(a, e, nq)));
    let om = |a: &mut Arena, i: usize, j: usize| dot(a, &col(&r0, i), &col(&rd, j));
    let w0 = [om(a, 2, 1), om(a, 0, 2), om(a, 1, 0)];
    let mut pdot = [zero; 3];
    for &(k, e) in &root.translation {
        let v = a.sym(Sym::Vel(k));
        for i in 0..3 {
            let t = a.mul(e[i], v);
            pdot[i] = a.add(pdot[i], t);
        }
    }
    let v0 = [0, 1, 2].map(|i| dot(a, &col(&r0, i), &pdot));
    let qv: Vec<ExprId> = root.quat.iter().map(|&k| a.sym(Sym::Vel(k))).collect();
    let qd2 = dot(a, &qv, &qv);
    // The bodies the forward recursion covers ([`body_motions`]): the root's twist in its
    // own axes and its rate at q̈ = 0 start it.
    let quats = quaternions(model, a);
    let seed = Motion {
        omega: w0,
        vel: v0,
        domega: w0.map(|e| super::motion::time_derivative(a, e, nq)),
        dvel: v0.map(|e| super::motion::time_derivative(a, e, nq)),
    };
    let bodies = tree_bodies(model, &rel);
    let motions = if recursion {
        body_motions(a, tree, &bodies, &quats, nq, Some(seed))
    } else {
        vec![None; bodies.len()]
    };
    let mut force = [zero; 3];
    let mut moment = [zero; 3];
    let mut radial = zero;
    for (n, (b, rel)) in model.dynamics.bodies.iter().zip(&rel).enumerate() {
        let Some(rel) = rel else { continue };
        let m = b.mass;
        let c = rel.com;
        let motion = motions[n];
        // The centre of mass's acceleration in the root's axes at q̈ = 0, but for the norm
        // term: by the recursion's total motion (`V̇ + Ω̇ × c + Ω × u`, `u = V + Ω × c`),
        // else `u̇ + ω₀ × u` with `u = v₀ + ω₀ × c + ċ` differentiated by time.
        let acc: Vec<ExprId> = match &motion {
            Some(mo) => {
                let u = mo.point_velocity(a, &c);
                mo.point_acceleration(a, &c, &u)
            }
            None => {
                let cdot: Vec<ExprId> = c
                    .iter()
                    .map(|&e| super::motion::time_derivative(a, e, nq))
                    .collect();
                let wc = cross(a, &w0, &c);
                let u: Vec<ExprId> = (0..3)
                    .map(|i| {
                        let x = a.add(v0[i], wc[i]);
                        a.add(x, cdot[i])
                    })
                    .collect();
                let wu = cross(a, &w0, &u);
                (0..3)
                    .map(|i| {
                        let du = super::motion::time_derivative(a, u[i], nq);
                        a.add(du, wu[i])
                    })
                    .collect()
            }
        };
        // N c = K c + s × c (N = 2 L(K) is K plus the skew matrix of s).
        let kc = mat_vec(a, &kmat, &c);
        let sc = cross(a, &skew, &c);
        let nc: Vec<ExprId> = (0..3).map(|i| a.add(kc[i], sc[i])).collect();
        let ma: Vec<ExprId> = (0..3)
            .map(|i| {
                let r = a.mul(qd2, nc[i]);
                let x = a.sub(acc[i], r);
                a.mul(m, x)
            })
            .collect();
        // The rows of coordinates that are not the tree's rigid joints (none moves a body
        // the recursion covers).
        let jac: Vec<Vec<ExprId>> = match motion {
            Some(_) => Vec::new(),
            None => (0..nq)
                .map(|i| c.iter().map(|&e| a.diff(e, Sym::Coord(i as u32))).collect())
                .collect(),
        };
        for (j, f) in forces.iter_mut().enumerate() {
            if motion.is_some() || rigid(j) || jac[j].iter().all(|&e| a.is_zero(e)) {
                continue;
            }
            let g = dot(a, &jac[j], &ma);
            *f = a.sub(*f, g);
        }
        force = add3(a, force, &ma);
        let cma = cross(a, &c, &ma);
        moment = add3(a, moment, &cma);
        wrenches[n] = Some([cma[0], cma[1], cma[2], ma[0], ma[1], ma[2]]);
        let kcma = dot(a, &kc, &ma);
        radial = a.add(radial, kcma);
        let apply = |a: &mut Arena, x: &[ExprId]| -> Option<Vec<ExprId>> {
            match &b.inertia {
                Some(Inertia::Principal(im)) => Some((0..3).map(|k| a.mul(im[k], x[k])).collect()),
                Some(Inertia::Full(im)) => Some((0..3).map(|k| dot(a, &im[k], x)).collect()),
                _ => None,
            }
        };
        let Some(r) = &rel.rot else { continue };
        if apply(a, &c).is_none() {
            continue;
        }
        // In body axes: by the recursion's total motion, w = AᵀΩ and ẇ = AᵀΩ̇ at q̈ = 0
        // (Ȧ = S(Ω − ω₀) A); else w = Aᵀω₀ + w_rel, differentiated by time.
        let (w_rel, w, dw) = match &motion {
            Some(mo) => {
                let at = |a: &mut Arena, x: &[ExprId]| -> Vec<ExprId> {
                    (0..3).map(|i| dot(a, &col(r, i), x)).collect()
                };
                let w = at(a, &mo.omega);
                let dw = at(a, &mo.domega);
                (None, w, Some(dw))
            }
            None => {
                let w_rel = body_angular_velocity(a, r, nq);
                let atw: Vec<ExprId> = (0..3).map(|i| dot(a, &col(r, i), &w0)).collect();
                let w: Vec<ExprId> = (0..3).map(|i| a.add(atw[i], w_rel[i])).collect();
                (Some(w_rel), w, None)
            }
        };
        // κ_N, the entries (2, 1), (0, 2), (1, 0) of Aᵀ N A: κ + Aᵀ s (A orthogonal).
        let kap = kappa(a, &base, r);
        let kn: Vec<ExprId> = (0..3)
            .map(|i| {
                let x = dot(a, &col(r, i), &skew);
                a.add(kap[i], x)
            })
            .collect();
        let wdot: Vec<ExprId> = (0..3)
            .map(|i| {
                let d = match &dw {
                    Some(dw) => dw[i],
                    None => super::motion::time_derivative(a, w[i], nq),
                };
                let r = a.mul(qd2, kn[i]);
                a.sub(d, r)
            })
            .collect();
        let (Some(iwdot), Some(iw)) = (apply(a, &wdot), apply(a, &w)) else {
            continue;
        };
        let gyro = cross(a, &w, &iw);
        let h: Vec<ExprId> = (0..3).map(|i| a.add(iwdot[i], gyro[i])).collect();
        for (j, f) in forces.iter_mut().enumerate() {
            let Some(w_rel) = &w_rel else { break };
            if rigid(j) {
                continue;
            }
            let wj: Vec<ExprId> = w_rel
                .iter()
                .map(|&e| a.diff(e, Sym::Vel(j as u32)))
                .collect();
            if wj.iter().all(|&e| a.is_zero(e)) {
                continue;
            }
            let g = dot(a, &wj, &h);
            *f = a.sub(*f, g);
        }
        let ah = [0, 1, 2].map(|i| dot(a, &r[i], &h));
        moment = add3(a, moment, &ah);
        if let Some(x) = &mut wrenches[n] {
            for i in 0..3 {
                x[i] = a.add(x[i], ah[i]);
            }
        }
        let kh = dot(a, &kap, &h);
        radial = a.add(radial, kh);
    }
    // The tree's joints from their composites, with the weights in the root's axes
    // (`R₀ᵀ g`).
    let g_root = gravity.map(|g| [0, 1, 2].map(|i| dot(a, &col(&r0, i), &g)));
    add_joint_forces(
        a,
        tree,
        &tree_bodies(model, &rel),
        &wrenches,
        g_root,
        forces,
    );
    // The base's rows: −t_a·F, −(p_k·moment − q_k radial).
    for &(ai, _, ta) in trans {
        let g = dot(a, &ta, &force);
        forces[ai] = a.sub(forces[ai], g);
    }
    for (k, &qk) in root.quat.iter().enumerate() {
        let x = dot(a, &p[k], &moment);
        let y = a.mul(q[k], radial);
        let g = a.sub(x, y);
        forces[qk as usize] = a.sub(forces[qk as usize], g);
    }
}

#[cfg(test)]
mod tests {
    use super::find_root;
    use crate::derive::motion::equations_of_motion_rooted;
    use crate::expr::{Arena, ExprId, Sym};
    use crate::model::{lower, Model};
    use rand::{RngExt, SeedableRng};

    /// A torso on a free joint, an arm on a revolute joint with an offset axis, a forearm
    /// on a ball joint (a quaternion inside the tree), a point mass on the forearm, and a
    /// pendulum on a ball joint to the world (not carried by the torso).
    const FLOATING: &str = "
        param g = 9.81;
        coord px = 0.1; coord py = 0.2; coord pz = 0.3;
        coord w = 1.0; coord x = 0.0; coord y = 0.0; coord z = 0.0;
        coord a = 0.0;
        coord bw = 1.0; coord bx = 0.0; coord by = 0.0; coord bz = 0.0;
        coord sw = 1.0; coord sx = 0.0; coord sy = 0.0; coord sz = 0.0;
        constraint w * w + x * x + y * y + z * z == 1.0;
        constraint bw * bw + bx * bx + by * by + bz * bz == 1.0;
        constraint sw * sw + sx * sx + sy * sy + sz * sz == 1.0;
        let torso = frame(vec3(px, py, pz), rot_quat(w, x, y, z));
        let arm = torso * translate(vec3(0.2, -0.1, 0.05)) * frame(vec3(0.0, 0.0, 0.0), rpy(0.3, -0.2, 0.7)) * rot_y(a);
        let fore = arm * translate(vec3(0.4, 0.0, 0.0)) * rot_quat(bw, bx, by, bz);
        let pend = translate(vec3(1.0, 0.0, 1.0)) * rot_quat(sw, sx, sy, sz);
        body torso { mass = 3.0, inertia = mat3(0.3, 0.01, -0.02, 0.01, 0.4, 0.03, -0.02, 0.03, 0.5), frame = torso * translate(vec3(0.01, 0.02, -0.03)) }
        body arm { mass = 1.2, inertia = mat3(0.02, 0.0, 0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 0.06), frame = arm * translate(vec3(0.2, 0.01, 0.0)) }
        body fore { mass = 0.7, inertia = mat3(0.01, 0.002, 0.0, 0.002, 0.03, -0.001, 0.0, -0.001, 0.02), frame = fore * translate(vec3(0.15, 0.0, 0.02)) }
        body tip { mass = 0.3, frame = fore * translate(vec3(0.3, 0.0, 0.0)) }
        body pend { mass = 0.5, inertia = mat3(0.01, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.002), frame = pend * translate(vec3(0.0, 0.0, -0.4)) }
        gravity = vec3(0.0, 0.0, -g);
    ";

    fn model(items: &str) -> (Model, Arena) {
        let src = format!("mod m {{ {items} }}");
        let file = crate::parse::parse_file(src.parse().expect("tokens")).expect("parses");
        lower(&file.modules[0]).expect("lowers")
    }

    /// A random state: every quaternion of unit norm and its rate tangent to the sphere.
    fn state(rng: &mut impl RngExt, nq: usize, quats: &[[usize; 4]]) -> (Vec<f64>, Vec<f64>) {
        let mut q: Vec<f64> = (0..nq).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut v: Vec<f64> = (0..nq).map(|_| rng.random_range(-2.0..2.0)).collect();
        for quat in quats {
            let n = quat.iter().map(|&k| q[k] * q[k]).sum::<f64>().sqrt();
            quat.iter().for_each(|&k| q[k] /= n);
            let r = quat.iter().map(|&k| q[k] * v[k]).sum::<f64>();
            quat.iter().for_each(|&k| v[k] -= r * q[k]);
        }
        (q, v)
    }

    fn values(arena: &Arena, roots: &[ExprId], q: &[f64], v: &[f64]) -> Vec<f64> {
        arena.eval(roots, &|s| match s {
            Sym::Coord(i) => q[i as usize],
            Sym::Vel(i) => v[i as usize],
            Sym::Param(_) => 9.81,
            _ => 0.0,
        })
    }

    /// The root is the torso's quaternion and position; it carries the torso, the arm, the
    /// forearm and the tip, not the pendulum.
    #[test]
    fn the_free_joint_is_found_and_carries_its_tree() {
        let (m, mut arena) = model(FLOATING);
        let root = find_root(&m, &mut arena).expect("a root");
        assert_eq!(root.quat, [3, 4, 5, 6]);
        assert_eq!(
            root.translation.iter().map(|t| t.0).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(root.rooted, [true, true, true, true, false]);
        // A fixed-base arm has none.
        let (m, mut arena) = model(
            "coord a = 0.0; let f = rot_z(a) * translate(vec3(0.3, 0.0, 0.0));
             body b { mass = 1.0, inertia = mat3(0.1, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.1), frame = f }",
        );
        assert!(find_root(&m, &mut arena).is_none());
    }

    /// The mass matrix and the forces in the root's axes equal the world-axes ones entry by
    /// entry (all of `M`, not only its restriction to the constraint's tangent) at 200
    /// random consistent states (unit quaternions, tangent rates), to 1e-12 of each one's
    /// largest magnitude; the energy too.
    #[test]
    fn rooted_dynamics_equals_the_world_axes_one() {
        let (m, mut arena) = model(FLOATING);
        let nq = m.coords.len();
        let rooted = equations_of_motion_rooted(&m, &mut arena, true);
        let world = equations_of_motion_rooted(&m, &mut arena, false);
        let flat = |e: &crate::derive::motion::EquationsOfMotion| -> Vec<ExprId> {
            let mut r: Vec<ExprId> = e.mass.iter().flatten().copied().collect();
            r.extend(&e.forces);
            r.extend(e.energy);
            r
        };
        let (ra, wa) = (flat(&rooted), flat(&world));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(35);
        let quats = [[3, 4, 5, 6], [8, 9, 10, 11], [12, 13, 14, 15]];
        let mut worst = 0.0f64;
        for _ in 0..200 {
            let (q, v) = state(&mut rng, nq, &quats);
            let (x, y) = (values(&arena, &ra, &q, &v), values(&arena, &wa, &q, &v));
            // Each of M, f and the energy against its own largest magnitude.
            let block = |i: usize| match i {
                _ if i < nq * nq => 0..nq * nq,
                _ if i < nq * nq + nq => nq * nq..nq * nq + nq,
                _ => i..i + 1,
            };
            for (i, (a, b)) in x.iter().zip(&y).enumerate() {
                let scale = y[block(i)].iter().fold(0.0f64, |s, e| s.max(e.abs()));
                let err = (a - b).abs() / scale;
                assert!(err <= 1e-12, "entry {i}: {a} vs {b} at q = {q:?}");
                worst = worst.max(err);
            }
        }
        assert!(
            worst > 0.0,
            "different expressions agree to rounding, not identically"
        );
    }
}
