//! The velocities and velocity-product accelerations of a tree's bodies by the forward
//! recursion of the Newton–Euler algorithm, instead of differentiating each body's
//! placement by time.
//!
//! A body moved only by rigid joints ([`super::tree`]) has the spatial velocity `V_b = Σ_j
//! S_j q̇_j` over the joints that move it (`S_j = (ω_j, v_j)`). Where a joint's axis is
//! carried by the joints above it — `∂S_j/∂q_i = S_i ×̂ S_j` for each joint `i` above `j`
//! and zero for every other coordinate (`×̂` the spatial cross product of motions: `(ω_i ×
//! ω_j, ω_i × v_j + v_i × ω_j)`) — the rate of `V_b` at `q̈ = 0` is `Σ_j V_{p(j)} ×̂ S_j
//! q̇_j`, with `V_{p(j)}` the velocity of the joints above `j`. Along the tree both sums are
//! one step per joint: `V_j = V_{p(j)} + S_j q̇_j` and `A_j = A_{p(j)} + V_{p(j)} ×̂ S_j
//! q̇_j`, and a body's pair is that of the deepest joint moving it. Differentiating each
//! body's placement instead rebuilds its chain's rotations' derivatives body by body.
//!
//! **Checked, not assumed.** Which joints are above `j` is read from the sets of bodies
//! the joints move (a strictly larger set; of two joints moving the same bodies, the one
//! `S_j` depends on, as for a universal joint's first axis), and the identity is checked
//! for every coordinate `S_j`'s expressions contain at random points, the quaternions
//! normalised, as [`super::tree`] checks rigidity. A joint that fails, and every body moved
//! by one or by any coordinate that is not a checked joint (or placed by an expression of
//! time), gets no recursion: its caller differentiates it as before.

use super::motion::cross;
use super::root::{close, POINTS};
use super::tree::{moved_by, unit_point, Tree, TreeBody};
use crate::expr::{Arena, ExprId, Sym};

/// A body's spatial velocity relative to the tree's axes, `(Ω, V)` (`V` the velocity of
/// the body point at the origin), and its rate at `q̈ = 0`, `(Ω̇, V̇)`.
#[derive(Clone, Copy, Debug)]
pub struct Motion {
    /// `Ω`: the angular velocity.
    pub omega: [ExprId; 3],
    /// `V`: the velocity of the body point at the origin.
    pub vel: [ExprId; 3],
    /// `Ω̇` at `q̈ = 0`.
    pub domega: [ExprId; 3],
    /// `V̇` at `q̈ = 0`.
    pub dvel: [ExprId; 3],
}

impl Motion {
    /// The velocity of the body point `c`: `V + Ω × c`.
    pub fn point_velocity(&self, a: &mut Arena, c: &[ExprId]) -> Vec<ExprId> {
        let wc = cross(a, &self.omega, c);
        (0..3).map(|i| a.add(self.vel[i], wc[i])).collect()
    }

    /// The acceleration of the body point `c` at `q̈ = 0`, given its velocity `cd`:
    /// `V̇ + Ω̇ × c + Ω × ċ`.
    pub fn point_acceleration(&self, a: &mut Arena, c: &[ExprId], cd: &[ExprId]) -> Vec<ExprId> {
        let x = cross(a, &self.domega, c);
        let y = cross(a, &self.omega, cd);
        (0..3)
            .map(|i| {
                let s = a.add(self.dvel[i], x[i]);
                a.add(s, y[i])
            })
            .collect()
    }
}

/// `(ω_i × ω_j, ω_i × v_j + v_i × ω_j)` of two spatial motions (values).
fn cross_motion(si: &[f64], sj: &[f64]) -> [f64; 6] {
    let c = |x: &[f64], y: &[f64]| {
        [
            x[1] * y[2] - x[2] * y[1],
            x[2] * y[0] - x[0] * y[2],
            x[0] * y[1] - x[1] * y[0],
        ]
    };
    let w = c(&si[0..3], &sj[0..3]);
    let v1 = c(&si[0..3], &sj[3..6]);
    let v2 = c(&si[3..6], &sj[0..3]);
    [
        w[0],
        w[1],
        w[2],
        v1[0] + v2[0],
        v1[1] + v2[1],
        v1[2] + v2[2],
    ]
}

/// The motion of every body of `bodies` (indexed as the tree's) that the recursion covers;
/// `None` for the others. `nq` coordinates, `quats` the coordinates of each unit-quaternion
/// constraint (normalised at the check's points). With `seed`, the motion of the tree's
/// axes themselves (a floating root's twist `(ω₀, v₀)` in its own axes and its rate), each
/// body's motion is its total one: `V₀ + V_b`, and the rate `V̇₀ + V̇_b + V₀ ×̂ V_b` — with
/// which `V̇ + Ω̇ × c + Ω × ċ` ([`Motion::point_acceleration`]) is the acceleration of the
/// body point `c` in the rotating axes (the recursion's first step starts from `V₀`).
pub fn body_motions(
    a: &mut Arena,
    tree: &Tree,
    bodies: &[Option<TreeBody>],
    quats: &[[u32; 4]],
    nq: usize,
    seed: Option<Motion>,
) -> Vec<Option<Motion>> {
    let none = vec![None; bodies.len()];
    let cols: Vec<Option<[ExprId; 6]>> = tree
        .joints
        .iter()
        .map(|jt| {
            jt.as_ref().map(|jt| {
                [
                    jt.omega[0],
                    jt.omega[1],
                    jt.omega[2],
                    jt.vel[0],
                    jt.vel[1],
                    jt.vel[2],
                ]
            })
        })
        .collect();
    let joints: Vec<usize> = (0..nq)
        .filter(|&j| cols.get(j).is_some_and(Option::is_some))
        .collect();
    if joints.is_empty() {
        return none;
    }
    let zero = a.constant(0.0);
    let column = |j: usize| cols[j].unwrap_or([zero; 6]);
    // Every joint's column, then per joint and per coordinate its column contains, the
    // column's derivative by that coordinate.
    let mut roots: Vec<ExprId> = Vec::new();
    let mut at = vec![usize::MAX; nq];
    for &j in &joints {
        at[j] = roots.len();
        roots.extend(column(j));
    }
    let mut derivs: Vec<(usize, usize, usize)> = Vec::new();
    let mut timed = vec![false; nq];
    for &j in &joints {
        let col = column(j);
        let mut coords: Vec<u32> = col.iter().flat_map(|&e| a.coords_of(e)).collect();
        coords.sort_unstable();
        coords.dedup();
        for k in coords {
            let d = col.map(|e| a.diff(e, Sym::Coord(k)));
            derivs.push((j, k as usize, roots.len()));
            roots.extend(d);
        }
        timed[j] = col.iter().any(|&e| {
            let d = a.diff(e, Sym::Time);
            !a.is_zero(d)
        });
    }
    let values: Vec<Vec<f64>> = (0..POINTS)
        .map(|seed| a.eval(&roots, &|s| unit_point(seed, s, quats)))
        .collect();
    let s_of = |x: &[f64], j: usize| -> [f64; 6] {
        let mut s = [0.0; 6];
        s.copy_from_slice(&x[at[j]..at[j] + 6]);
        s
    };
    let is_zero = |d: &[f64]| d.iter().all(|&x| close(x, 0.0));
    let equal = |d: &[f64], c: &[f64]| d.iter().zip(c).all(|(&x, &y)| close(x, y));
    // Joints above j: a strictly larger set of moved bodies, or the same set and S_j
    // depending on it.
    let nb = bodies.len();
    let set = |j: usize| tree.joints[j].as_ref().map(|jt| tree.moved(jt));
    let contains = |x: &[bool], y: &[bool]| (0..nb).all(|b| !y[b] || x[b]);
    let mut above: Vec<Vec<usize>> = vec![Vec::new(); nq];
    let mut valid = vec![false; nq];
    for &j in &joints {
        let Some(sj) = set(j) else { continue };
        let depends = |i: usize| {
            derivs
                .iter()
                .filter(|&&(jj, k, _)| jj == j && k == i)
                .any(|&(_, _, r)| values.iter().any(|x| !is_zero(&x[r..r + 6])))
        };
        above[j] = joints
            .iter()
            .copied()
            .filter(|&i| i != j)
            .filter(|&i| {
                set(i).is_some_and(|si| contains(si, sj) && (!contains(sj, si) || depends(i)))
            })
            .collect();
        // The identity for every coordinate S_j contains, and S_i ×̂ S_j = 0 for the
        // joints above whose coordinate it does not contain.
        let mut ok = !timed[j];
        for &(jj, k, r) in &derivs {
            if jj != j || !ok {
                continue;
            }
            ok = if above[j].contains(&k) {
                values
                    .iter()
                    .all(|x| equal(&x[r..r + 6], &cross_motion(&s_of(x, k), &s_of(x, j))))
            } else {
                values.iter().all(|x| is_zero(&x[r..r + 6]))
            };
        }
        for &i in &above[j] {
            if ok && !derivs.iter().any(|&(jj, k, _)| jj == j && k == i) {
                ok = values
                    .iter()
                    .all(|x| is_zero(&cross_motion(&s_of(x, i), &s_of(x, j))));
            }
        }
        valid[j] = ok;
    }
    // The parent: the joint above j whose own joints above are the rest of j's.
    let mut parent: Vec<Option<usize>> = vec![None; nq];
    for &j in &joints {
        if above[j].is_empty() {
            continue;
        }
        let p = above[j].iter().copied().find(|&i| {
            above[i].len() + 1 == above[j].len() && above[i].iter().all(|k| above[j].contains(k))
        });
        match p {
            Some(p) => parent[j] = Some(p),
            None => valid[j] = false,
        }
    }
    // The recursion, parents first (fewer joints above).
    let mut order = joints.clone();
    order.sort_by_key(|&j| (above[j].len(), j));
    let mut motion: Vec<Option<Motion>> = vec![None; nq];
    for &j in &order {
        let up = match parent[j] {
            Some(p) => match motion[p] {
                Some(m) => Some(m),
                None => continue,
            },
            None => seed,
        };
        if !valid[j] {
            continue;
        }
        let col = column(j);
        let qd = a.sym(Sym::Vel(j as u32));
        let s: [ExprId; 6] = col.map(|e| a.mul(e, qd));
        let (sw, sv) = ([s[0], s[1], s[2]], [s[3], s[4], s[5]]);
        motion[j] = Some(match up {
            None => Motion {
                omega: sw,
                vel: sv,
                domega: [zero; 3],
                dvel: [zero; 3],
            },
            Some(m) => {
                let ww = cross(a, &m.omega, &sw);
                let wv = cross(a, &m.omega, &sv);
                let vw = cross(a, &m.vel, &sw);
                Motion {
                    omega: [0, 1, 2].map(|i| a.add(m.omega[i], sw[i])),
                    vel: [0, 1, 2].map(|i| a.add(m.vel[i], sv[i])),
                    domega: [0, 1, 2].map(|i| a.add(m.domega[i], ww[i])),
                    dvel: [0, 1, 2].map(|i| {
                        let x = a.add(wv[i], vw[i]);
                        a.add(m.dvel[i], x)
                    }),
                }
            }
        });
    }
    // Each body: the deepest joint moving it, if its joints above are the body's others.
    bodies
        .iter()
        .map(|b| {
            let b = b.as_ref()?;
            let mask = moved_by(a, b, nq);
            let by: Vec<usize> = (0..nq).filter(|&k| mask[k]).collect();
            let mut roots: Vec<ExprId> = b.com.to_vec();
            if let Some(r) = &b.rot {
                roots.extend(r.iter().flatten());
            }
            if roots.iter().any(|&e| {
                let d = a.diff(e, Sym::Time);
                !a.is_zero(d)
            }) {
                return None;
            }
            let Some(&k) = by.iter().max_by_key(|&&k| above[k].len()) else {
                return Some(seed.unwrap_or(Motion {
                    omega: [zero; 3],
                    vel: [zero; 3],
                    domega: [zero; 3],
                    dvel: [zero; 3],
                }));
            };
            let m = motion[k]?;
            let same = above[k].len() + 1 == by.len() && above[k].iter().all(|i| mask[*i]);
            same.then_some(m)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::body_motions;
    use crate::derive::motion::{dot, time_derivative, tree_body};
    use crate::derive::tree::composite_mass;
    use crate::derive::tree::tests::{largest_error, model, random_state, ARM_TREE};
    use crate::expr::{ExprId, Sym};
    use rand::{RngExt, SeedableRng};

    /// The tree tests' arm and pendulum, and a body turned by an expression of time.
    fn arm() -> String {
        format!(
            "{ARM_TREE}
            body drv {{ mass = 0.2, inertia = mat3(0.01, 0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.0, 0.03), frame = l2 * rot_x(0.5 * t) * translate(vec3(0.0, 0.1, 0.0)) }}"
        )
    }

    /// The recursion covers the arm's bodies and only them (not those below the ball joint,
    /// not the one turned by time), and its velocities and rates equal the time derivatives
    /// of the bodies' placements at 200 random states to 1e-12 of their largest magnitude:
    /// `V + Ω × c = ċ`, `V̇ + Ω̇ × c + Ω × ċ = c̈`, `Ω` the axial vector of `Ṙ Rᵀ` and `Ω̇`
    /// its rate.
    #[test]
    fn the_recursion_equals_the_time_derivatives() {
        let (m, mut arena) = model(&arm());
        let a = &mut arena;
        let nq = m.coords.len();
        let bodies: Vec<_> = m.dynamics.bodies.iter().map(tree_body).collect();
        let zero = a.constant(0.0);
        let mut mass = vec![vec![zero; nq]; nq];
        let quats = crate::derive::root::quaternions(&m, a);
        let tree = composite_mass(a, &bodies, &quats, &mut mass);
        let motions = body_motions(a, &tree, &bodies, &quats, nq, None);
        let covered: Vec<usize> = (0..motions.len())
            .filter(|&n| motions[n].is_some())
            .collect();
        assert_eq!(covered, [0, 1, 2, 3, 4, 5, 6, 7]);
        // Per covered body: recursion values, then the derivatives they must equal.
        let mut ours: Vec<ExprId> = Vec::new();
        let mut theirs: Vec<ExprId> = Vec::new();
        for &n in &covered {
            let (Some(mo), Some(b)) = (motions[n], &bodies[n]) else {
                continue;
            };
            let cd = mo.point_velocity(a, &b.com);
            let cdd = mo.point_acceleration(a, &b.com, &cd);
            ours.extend(&cd);
            ours.extend(&cdd);
            for &c in &b.com {
                let d = time_derivative(a, c, nq);
                let dd = time_derivative(a, d, nq);
                theirs.extend([d, dd]);
            }
            let Some(r) = b.rot else { continue };
            ours.extend(mo.omega);
            ours.extend(mo.domega);
            let rd = r.map(|row| row.map(|e| time_derivative(a, e, nq)));
            // Ṙ Rᵀ's axial vector: entries (2, 1), (0, 2), (1, 0) of Ṙ Rᵀ.
            let w = [(2, 1), (0, 2), (1, 0)].map(|(i, j)| dot(a, &rd[i], &r[j]));
            let dw = w.map(|e| time_derivative(a, e, nq));
            theirs.extend(w);
            theirs.extend(dw);
        }
        // Reorder `theirs` to `ours`: per body ċ (3), c̈ (3), then Ω (3), Ω̇ (3).
        let mut want: Vec<ExprId> = Vec::new();
        let mut k = 0;
        for &n in &covered {
            let Some(b) = &bodies[n] else { continue };
            let c: Vec<ExprId> = theirs[k..k + 6].to_vec();
            k += 6;
            want.extend([c[0], c[2], c[4], c[1], c[3], c[5]]);
            if b.rot.is_some() {
                want.extend(&theirs[k..k + 6]);
                k += 6;
            }
        }
        assert_eq!(want.len(), ours.len());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(45);
        let mut worst = 0.0f64;
        for _ in 0..200 {
            let (q, v) = random_state(&mut rng, nq);
            let t = rng.random_range(0.0..3.0);
            let at = |roots: &[ExprId]| {
                arena.eval(roots, &|s| match s {
                    Sym::Coord(i) => q[i as usize],
                    Sym::Vel(i) => v[i as usize],
                    Sym::Time => t,
                    _ => 0.0,
                })
            };
            let (x, y) = (at(&ours), at(&want));
            worst = worst.max(largest_error(&x, &y, 1e-12));
        }
        assert!(
            worst > 0.0,
            "two formulations agree to rounding, not identically"
        );
    }

    /// `equations_of_motion` keeps whichever of the two forms of the forces is smaller, and
    /// both are equal: the tree tests' arm (with the body turned by time; and with gravity)
    /// at 100 random states, 1e-12 of the largest entry.
    #[test]
    fn the_kept_forces_are_the_smaller_of_two_equal_forms() {
        use crate::derive::motion::{equations_of_motion, equations_of_motion_with};
        for items in [
            arm(),
            format!("{ARM_TREE} gravity = vec3(0.0, 0.0, -9.81);"),
        ] {
            let (m, mut arena) = model(&items);
            let a = &mut arena;
            let by_recursion = equations_of_motion_with(&m, a, true, true);
            let by_time = equations_of_motion_with(&m, a, true, false);
            let (r, t) = (
                a.dag_size(&by_recursion.forces),
                a.dag_size(&by_time.forces),
            );
            let (m2, mut fresh) = model(&items);
            let kept = equations_of_motion(&m2, &mut fresh);
            assert_eq!(
                fresh.dag_size(&kept.forces),
                r.min(t),
                "recursion {r}, time {t}"
            );
            let nq = m.coords.len();
            let mut rng = rand::rngs::StdRng::seed_from_u64(3);
            for _ in 0..100 {
                let (q, v) = random_state(&mut rng, nq);
                let tt: f64 = rng.random_range(-1.0..1.0);
                let at = |s: Sym| match s {
                    Sym::Coord(k) => q[k as usize],
                    Sym::Vel(k) => v[k as usize],
                    Sym::Time => tt,
                    _ => 0.0,
                };
                let x = a.eval(&by_recursion.forces, &at);
                let y = a.eval(&by_time.forces, &at);
                largest_error(&x, &y, 1e-12);
            }
        }
    }
}
