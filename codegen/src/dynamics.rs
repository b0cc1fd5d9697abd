//! Equations of motion from the model's dynamics: the mass matrix, the generalised
//! forces (applied, gravity, springs and the quadratic-velocity terms of the kinetic
//! energy) and the total energy — all symbolic, as DAG roots.
//!
//! With kinetic energy `T(q, q̇, t)`, momenta `p_i = ∂T/∂q̇_i`:
//! `M_ij = ∂p_i/∂q̇_j` and `f_i = ∂T/∂q_i − Σ_k ∂p_i/∂q_k q̇_k − ∂p_i/∂t + Q_i`,
//! so that `M q̈ = f + C_Jᵀ λ` is Lagrange's equation. This holds for rheonomic bodies
//! (positions depending on `t`) as well.

use crate::expr::{Arena, ExprId, Sym};
use crate::model::dynamics::{Body, Dynamics, Inertia, Orientation};
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

fn dot(a: &mut Arena, x: &[ExprId], y: &[ExprId]) -> ExprId {
    let terms: Vec<ExprId> = x.iter().zip(y).map(|(&u, &v)| a.mul(u, v)).collect();
    sum(a, terms)
}

/// Total time derivative of `e` along `q̇` (velocity symbols) and `t`.
pub fn time_derivative(a: &mut Arena, e: ExprId, nq: usize) -> ExprId {
    let coords: Vec<usize> = (0..nq).collect();
    time_derivative_over(a, e, &coords)
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
            // Body angular velocity: ω̃ = Rᵀ Ṙ.
            let rd: Vec<Vec<ExprId>> = r
                .iter()
                .map(|row| row.iter().map(|&e| time_derivative(a, e, nq)).collect())
                .collect();
            let w_skew = |a: &mut Arena, i: usize, j: usize| {
                let col_i: Vec<ExprId> = (0..3).map(|k| r[k][i]).collect();
                let col_j: Vec<ExprId> = (0..3).map(|k| rd[k][j]).collect();
                dot(a, &col_i, &col_j)
            };
            let w = [w_skew(a, 2, 1), w_skew(a, 0, 2), w_skew(a, 1, 0)];
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

/// Builds `M`, `f` and the energy of the model's dynamics.
pub fn equations_of_motion(model: &mut Model, dynamics: &Dynamics) -> EquationsOfMotion {
    let nq = model.coords.len();
    let a = &mut model.arena;
    let zero = a.constant(0.0);
    // Kinetic energy of the bodies.
    let tk: Vec<ExprId> = dynamics
        .bodies
        .iter()
        .map(|b| body_kinetic_energy(a, b, nq))
        .collect();
    let t_kin = sum(a, tk);
    let momenta: Vec<ExprId> = (0..nq).map(|i| a.diff(t_kin, Sym::Vel(i as u32))).collect();
    let mut mass = vec![vec![zero; nq]; nq];
    for i in 0..nq {
        for j in i..nq {
            let m = a.diff(momenta[i], Sym::Vel(j as u32));
            mass[i][j] = m;
            mass[j][i] = m;
        }
    }
    for &(i, j, e) in &dynamics.explicit_mass {
        let m = a.add(mass[i][j], e);
        mass[i][j] = m;
        mass[j][i] = m;
    }
    // Quadratic-velocity terms: ∂T/∂q_i − Σ_k ∂p_i/∂q_k q̇_k − ∂p_i/∂t.
    let mut forces = Vec::with_capacity(nq);
    for (i, &p) in momenta.iter().enumerate() {
        let dtdq = a.diff(t_kin, Sym::Coord(i as u32));
        let pdot = time_derivative(a, p, nq);
        forces.push(a.sub(dtdq, pdot));
    }
    // Potential energy of gravity and springs; their forces are −∂V/∂q (springs add damping).
    let mut potential = zero;
    if let Some(g) = &dynamics.gravity {
        for b in &dynamics.bodies {
            let n = g.len().min(b.com.len());
            let gr = dot(a, &g[..n], &b.com[..n]);
            let mgr = a.mul(b.mass, gr);
            potential = a.sub(potential, mgr);
        }
    }
    let mut spring_forces = vec![zero; nq];
    for s in &dynamics.springs {
        let diff: Vec<ExprId> = s.a.iter().zip(&s.b).map(|(&x, &y)| a.sub(y, x)).collect();
        let l2 = dot(a, &diff, &diff);
        let l = a.sqrt(l2);
        let ext = a.sub(l, s.length);
        let ext2 = a.powi(ext, 2);
        let half = a.constant(0.5);
        let ke = a.mul(s.stiffness, ext2);
        let v = a.mul(half, ke);
        potential = a.add(potential, v);
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
        let dv = a.diff(potential, Sym::Coord(i as u32));
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
