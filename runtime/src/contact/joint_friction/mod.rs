//! Dry (Coulomb) friction in joints (`constraint NAME: lhs == rhs, friction = μ, slip = v
//! (, radius = r)?;`).
//!
//! **Model.** A joint with friction names a group `G` of constraint rows (one equation, or
//! the components of a vector equation): their multipliers `λ_G` are the joint's reaction
//! `N`, and its slip `v = J_s q̇ + s₀` the relative velocity the friction opposes. Sliding
//! (`v ≠ 0`, or leaving rest along `σ = ±1`), the friction is the generalised force
//! `−μ r ‖λ_G‖ σ J_sᵀ` (`r` the radius: a pin's friction torque is `μ r ‖N‖`; 1 by
//! default). Sticking, `v̇ = 0` is one more row of the system with its multiplier `λ_t` (the
//! generalised friction force along `J_sᵀ`), valid while `|λ_t| ≤ μ r ‖λ_G‖`.
//!
//! **Solve.** With each joint's mode (stick, slide along `σ`) and each sliding joint's
//! normal direction `n̂` fixed, `‖λ_G‖ = n̂ᵀ λ_G` makes the system linear:
//! `M q̈ − C_Jᵀ λ − Σ_stick J_sᵀ λ_t + Σ_slide μ r σ J_sᵀ n̂ᵀ λ_G = f`, `C_J q̈ = γ`,
//! `J_s q̈ = γ_s` on the sticking joints. For a one-row group `n̂ = ±1`: both signs are
//! tried and the solution is consistent when `n̂ λ_G ≥ 0`. For a vector group (a pin's two
//! or three force components) `n̂ ← λ_G / ‖λ_G‖` is iterated to a fixed point (a contraction
//! when the friction is small against the inertia; [`JointFrictionOptions::max_iterations`]
//! bounds it, and non-convergence is [`JointFrictionError::NoConvergence`]). The modes are
//! enumerated in a fixed order (stick, slide `+`, slide `−`: sticking preferred), and the
//! first consistent assignment is taken; none consistent is the Painlevé-type inconsistency,
//! [`JointFrictionError::Inconsistent`], never a silent answer. Where several are consistent
//! (the indeterminate case) the first in that order is taken, the normal signs first tried
//! being those of the frictionless reaction.
//!
//! **Simulation.** [`simulate_joint_friction_adaptive`] integrates each phase (fixed modes
//! and one-row normal signs: a smooth right-hand side) with DOPRI5 and locates on the dense
//! output a sticking joint's force reaching `μ r ‖N‖` ([`JointFrictionEvent::Slip`]), a
//! sliding joint's slip reaching zero ([`JointFrictionEvent::Stop`]) and a one-row normal
//! changing sign ([`JointFrictionEvent::Reverse`]). A sticking joint's slip acceleration is
//! zero to rounding (an equality of the solve) and its slip velocity is set to zero when it
//! starts sticking, so sticking does not creep.

use nalgebra::{DMatrix, DVector, SVector};

use super::{assignments, dmat, dvec, first_assignment, hold, solve_saddle, Motion, Point};
use crate::mechanism::JointFriction;

/// The state of one joint's friction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointMode {
    /// Frictionless (`μ = 0`).
    Free,
    /// Sticking: the slip held (`v̇ = 0`), the friction force free within `μ r ‖N‖`.
    Stick,
    /// Sliding along `σ = ±1`: the friction force is `−μ r ‖N‖ σ`.
    Slide(f64),
}

/// Options of the joint-friction solver and simulator.
#[derive(Clone, Copy, Debug)]
pub struct JointFrictionOptions {
    /// Baumgarte's `α` (velocity feedback `2α`) and `β` (position feedback `β²`) on the
    /// constraints.
    pub baumgarte: (f64, f64),
    /// A joint whose slip speed is at most this may stick; above it, it slides along its slip.
    pub slip_tol: f64,
    /// Tolerance of the consistency checks, relative to the largest of `|f|`, `|γ|`, `|γ_s|`
    /// and 1.
    pub tendency_tol: f64,
    /// Most fixed-point iterations on a vector normal's direction.
    pub max_iterations: usize,
    /// The fixed point is reached when no normal direction moves by more than this.
    pub iteration_tol: f64,
    /// Most mode assignments tried in one solve before [`JointFrictionError::TooManyJoints`].
    pub max_combinations: usize,
}

impl Default for JointFrictionOptions {
    fn default() -> Self {
        Self {
            baumgarte: (0.0, 0.0),
            slip_tol: 1e-9,
            tendency_tol: 1e-12,
            max_iterations: 100,
            iteration_tol: 1e-15,
            max_combinations: 4096,
        }
    }
}

/// Errors of the joint-friction solver and simulator.
#[derive(Clone, Debug, PartialEq)]
pub enum JointFrictionError {
    /// No mode assignment satisfies Coulomb's law (the Painlevé-type inconsistency of a
    /// joint whose friction is too large for its geometry).
    Inconsistent {
        /// Time.
        t: f64,
        /// The joints that have friction.
        joints: Vec<usize>,
    },
    /// The fixed point on a vector normal's direction did not converge.
    NoConvergence {
        /// Time.
        t: f64,
        /// The joint.
        joint: usize,
    },
    /// More mode assignments than [`JointFrictionOptions::max_combinations`].
    TooManyJoints {
        /// Time.
        t: f64,
    },
    /// The system of the equations of motion is singular.
    Singular {
        /// Time.
        t: f64,
    },
    /// A model function returned a non-finite value, or the state became non-finite.
    NonFinite {
        /// Time.
        t: f64,
    },
    /// The integrator failed (step size underflow, too many steps).
    Integrator {
        /// Time.
        t: f64,
    },
    /// More events than the options allow.
    TooManyEvents {
        /// Time.
        t: f64,
    },
    /// Unusable options or arguments.
    InvalidOptions(&'static str),
}

impl std::fmt::Display for JointFrictionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JointFrictionError::Inconsistent { t, joints } => write!(
                f,
                "no joint forces satisfy Coulomb's law at t = {t} (joints {joints:?}): the \
                 friction is too large for the configuration (Painlevé-type inconsistency)"
            ),
            JointFrictionError::NoConvergence { t, joint } => write!(
                f,
                "the direction of joint {joint}'s reaction did not converge at t = {t} \
                 (friction too large against the inertia; raise max_iterations)"
            ),
            JointFrictionError::TooManyJoints { t } => write!(
                f,
                "too many mode assignments of the joints with friction at t = {t} (raise \
                 JointFrictionOptions::max_combinations)"
            ),
            JointFrictionError::Singular { t } => {
                write!(f, "singular equations of motion at t = {t}")
            }
            JointFrictionError::NonFinite { t } => write!(f, "non-finite values at t = {t}"),
            JointFrictionError::Integrator { t } => write!(f, "the integrator failed at t = {t}"),
            JointFrictionError::TooManyEvents { t } => write!(f, "too many events at t = {t}"),
            JointFrictionError::InvalidOptions(why) => write!(f, "invalid options: {why}"),
        }
    }
}

impl std::error::Error for JointFrictionError {}

/// The result of one joint-friction solve.
#[derive(Clone, Debug, PartialEq)]
pub struct JointFrictionSolve<const NQ: usize> {
    /// Accelerations `q̈`.
    pub qdd: SVector<f64, NQ>,
    /// The mode of each joint.
    pub modes: Vec<JointMode>,
    /// The constraint multipliers `λ` (`M q̈ = f + C_Jᵀ λ + friction`).
    pub lambda: Vec<f64>,
    /// Each joint's normal force `‖λ_G‖` (before the radius).
    pub normal: Vec<f64>,
    /// Each joint's friction force along `J_sᵀ` (sticking: `λ_t`; sliding: `−μ r ‖N‖ σ`).
    pub friction: Vec<f64>,
    /// Linear solves made.
    pub solves: usize,
}

/// The data of one problem at `(q, q̇, t)`.
struct Pb {
    motion: Motion,
    js: DMatrix<f64>,
    ds: DVector<f64>,
    vs: DVector<f64>,
    mu: Vec<f64>,
    radius: Vec<f64>,
    rows: Vec<(usize, usize)>,
}

/// One linear solve's accelerations, multipliers and sticking forces.
type Linear = (DVector<f64>, DVector<f64>, Vec<f64>);

/// The solution of one mode assignment.
struct Sol {
    a: DVector<f64>,
    lambda: DVector<f64>,
    /// Sticking joints' `λ_t` (0 elsewhere).
    stick: Vec<f64>,
    /// Each joint's normal direction used.
    nhat: Vec<Vec<f64>>,
    solves: usize,
}

impl Pb {
    fn new<M, const NQ: usize, const NC: usize, const DOF: usize, const NS: usize>(
        at: Point<'_, M::Params, NQ>,
        opts: &JointFrictionOptions,
    ) -> Result<Self, JointFrictionError>
    where
        M: JointFriction<NQ, NC, DOF, NS>,
    {
        let Point { q, qd, p, t } = at;
        let js = M::slip_jacobian(q, p, t);
        let vs = js * qd + M::slip_jacobian_t(q, p, t);
        let pb = Pb {
            motion: Motion::at::<M, NQ, NC, DOF>(at, opts.baumgarte),
            js: dmat(&js),
            ds: dvec(&M::slip_gamma(q, qd, p, t)),
            vs: dvec(&vs),
            mu: M::JOINT_FRICTION.to_vec(),
            radius: M::FRICTION_RADIUS.to_vec(),
            rows: M::FRICTION_ROWS.to_vec(),
        };
        if !pb.motion.finite(&[
            pb.motion.cj.as_slice(),
            pb.js.as_slice(),
            pb.ds.as_slice(),
            pb.vs.as_slice(),
        ]) {
            return Err(JointFrictionError::NonFinite { t });
        }
        if pb.rows.iter().any(|&(a, n)| n == 0 || a + n > NC) {
            return Err(JointFrictionError::InvalidOptions(
                "a joint's normal rows lie outside the constraints",
            ));
        }
        Ok(pb)
    }

    fn scale(&self) -> f64 {
        self.motion.scale(&[&self.ds])
    }

    /// `λ_G` of joint `k`.
    fn group(&self, lambda: &DVector<f64>, k: usize) -> Vec<f64> {
        let (a, n) = self.rows[k];
        lambda.rows(a, n).iter().copied().collect()
    }

    /// The linear solve for `modes` with the sliding joints' normal directions `nhat`.
    fn linear(&self, modes: &[JointMode], nhat: &[Vec<f64>]) -> Result<Linear, JointFrictionError> {
        let nq = self.motion.m.nrows();
        let nc = self.motion.cj.nrows();
        let stick: Vec<usize> = (0..modes.len())
            .filter(|&k| modes[k] == JointMode::Stick)
            .collect();
        let (mut k, mut rhs) = self.motion.saddle(stick.len());
        for (s, &g) in modes.iter().enumerate() {
            if let JointMode::Slide(sigma) = g {
                let c = self.mu[s] * self.radius[s] * sigma;
                let (a, _) = self.rows[s];
                for (i, &ni) in nhat[s].iter().enumerate() {
                    for j in 0..nq {
                        k[(j, nq + a + i)] += c * self.js[(s, j)] * ni;
                    }
                }
            }
        }
        for (c, &s) in stick.iter().enumerate() {
            hold(&mut k, &mut rhs, nq + nc + c, (&self.js, s), self.ds[s]);
        }
        let t = self.motion.t;
        let x = solve_saddle(&k, &rhs).ok_or(JointFrictionError::Singular { t })?;
        let mut st = vec![0.0; modes.len()];
        for (c, &s) in stick.iter().enumerate() {
            st[s] = x[nq + nc + c];
        }
        Ok((x.rows(0, nq).into_owned(), x.rows(nq, nc).into_owned(), st))
    }

    /// The solution of `modes` with the sliding vector normals iterated to their fixed
    /// point from `nhat` (one-row normals are kept as given). `Ok(None)`: a vector normal
    /// vanished or did not converge (reported as `Err` only by the caller, when no other
    /// assignment is consistent).
    fn solve(
        &self,
        modes: &[JointMode],
        mut nhat: Vec<Vec<f64>>,
        opts: &JointFrictionOptions,
    ) -> Result<Result<Sol, usize>, JointFrictionError> {
        let vector: Vec<usize> = (0..modes.len())
            .filter(|&k| matches!(modes[k], JointMode::Slide(_)) && self.rows[k].1 > 1)
            .collect();
        let limit = if vector.is_empty() {
            1
        } else {
            opts.max_iterations.max(1)
        };
        for solves in 1..=limit {
            let (a, lambda, stick) = self.linear(modes, &nhat)?;
            let mut moved = 0.0f64;
            for &k in &vector {
                let g = self.group(&lambda, k);
                let n = g.iter().map(|x| x * x).sum::<f64>().sqrt();
                if !(n > 0.0 && n.is_finite()) {
                    continue;
                }
                let new: Vec<f64> = g.iter().map(|x| x / n).collect();
                let d = new
                    .iter()
                    .zip(&nhat[k])
                    .map(|(x, y)| (x - y) * (x - y))
                    .sum::<f64>()
                    .sqrt();
                moved = moved.max(d);
                nhat[k] = new;
            }
            if moved <= opts.iteration_tol {
                return Ok(Ok(Sol {
                    a,
                    lambda,
                    stick,
                    nhat,
                    solves,
                }));
            }
        }
        Ok(Err(vector.first().copied().unwrap_or(0)))
    }

    /// Whether `sol` of `modes` satisfies Coulomb's law.
    fn valid(&self, modes: &[JointMode], sol: &Sol, tol: f64, slip_tol: f64) -> bool {
        (0..modes.len()).all(|k| {
            let n = self.group(&sol.lambda, k);
            let norm = n.iter().map(|x| x * x).sum::<f64>().sqrt();
            match modes[k] {
                JointMode::Free => true,
                JointMode::Stick => sol.stick[k].abs() <= self.mu[k] * self.radius[k] * norm + tol,
                JointMode::Slide(sigma) => {
                    // The normal's sign as assumed (a one-row group; a vector group's
                    // direction is its fixed point).
                    let along: f64 = n.iter().zip(&sol.nhat[k]).map(|(x, y)| x * y).sum();
                    if along < -tol {
                        return false;
                    }
                    if self.vs[k].abs() > slip_tol {
                        return true;
                    }
                    // From rest: the slip must accelerate along σ.
                    let acc = (self.js.row(k) * &sol.a)[0] - self.ds[k];
                    sigma * acc >= -tol
                }
            }
        })
    }
}

/// The modes of joint `k`, preferred first.
fn candidates(pb: &Pb, k: usize, stick_allowed: bool, slip_tol: f64) -> Vec<JointMode> {
    if pb.mu[k] == 0.0 {
        return vec![JointMode::Free];
    }
    let v = pb.vs[k];
    if v.abs() > slip_tol {
        return vec![JointMode::Slide(v.signum())];
    }
    let mut out = Vec::new();
    if stick_allowed {
        out.push(JointMode::Stick);
    }
    out.push(JointMode::Slide(1.0));
    out.push(JointMode::Slide(-1.0));
    out
}

/// The normal directions to start from: those of the frictionless reaction (`+1`, or the
/// first axis, where it vanishes).
fn initial_normals(pb: &Pb) -> Result<Vec<Vec<f64>>, JointFrictionError> {
    let free = vec![JointMode::Free; pb.mu.len()];
    let none: Vec<Vec<f64>> = pb.rows.iter().map(|&(_, n)| vec![0.0; n]).collect();
    let (_, lambda, _) = pb.linear(&free, &none)?;
    Ok((0..pb.mu.len())
        .map(|k| {
            let g = pb.group(&lambda, k);
            let n = g.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 0.0 && n.is_finite() {
                g.iter().map(|x| x / n).collect()
            } else {
                let mut e = vec![0.0; g.len()];
                e[0] = 1.0;
                e
            }
        })
        .collect())
}

/// The enumeration: the first consistent assignment of modes (and one-row normal signs).
fn enumerate(
    pb: &Pb,
    opts: &JointFrictionOptions,
    no_stick: &[bool],
) -> Result<(Vec<JointMode>, Sol), JointFrictionError> {
    let ns = pb.mu.len();
    let tol = opts.tendency_tol * pb.scale();
    // The frictionless reaction's directions, solved for only when an assignment slides.
    let mut start: Option<Vec<Vec<f64>>> = None;
    let one_row = |k: usize| pb.rows[k].1 == 1 && pb.mu[k] > 0.0;
    let cands: Vec<Vec<JointMode>> = (0..ns)
        .map(|k| candidates(pb, k, !no_stick[k], opts.slip_tol))
        .collect();
    // One-row sliding joints also choose their normal's sign (two ways each): digit `d`
    // of joint `k` is its mode `d % n` and its sign flip `d / n` (`n` its modes).
    let radices: Vec<usize> = (0..ns)
        .map(|k| cands[k].len() * if one_row(k) { 2 } else { 1 })
        .collect();
    let total = assignments(&radices, opts.max_combinations)
        .ok_or(JointFrictionError::TooManyJoints { t: pb.motion.t })?;
    let mut modes = vec![JointMode::Free; ns];
    let mut flip = vec![false; ns];
    let mut stuck = None;
    let found = first_assignment(&radices, total, |digits| {
        for k in 0..ns {
            let n = cands[k].len();
            modes[k] = cands[k][digits[k] % n];
            flip[k] = digits[k] / n == 1;
        }
        // A one-row sign only matters while sliding: skip the flipped duplicates.
        if (0..ns).any(|k| flip[k] && !matches!(modes[k], JointMode::Slide(_))) {
            return Ok(None);
        }
        let nhat = if modes.iter().any(|m| matches!(m, JointMode::Slide(_))) {
            let base = match &start {
                Some(s) => s.clone(),
                None => {
                    let s = initial_normals(pb)?;
                    start = Some(s.clone());
                    s
                }
            };
            base.into_iter()
                .zip(&flip)
                .map(|(n, &f)| if f { n.iter().map(|x| -x).collect() } else { n })
                .collect()
        } else {
            // Unused: no joint slides.
            pb.rows
                .iter()
                .map(|&(_, n)| {
                    let mut e = vec![0.0; n];
                    e[0] = 1.0;
                    e
                })
                .collect()
        };
        Ok(match pb.solve(&modes, nhat, opts)? {
            Ok(sol) => pb.valid(&modes, &sol, tol, opts.slip_tol).then_some(sol),
            Err(k) => {
                stuck = Some(k);
                None
            }
        })
    })?;
    if let Some(sol) = found {
        return Ok((modes, sol));
    }
    match stuck {
        Some(joint) => Err(JointFrictionError::NoConvergence {
            t: pb.motion.t,
            joint,
        }),
        None => Err(JointFrictionError::Inconsistent {
            t: pb.motion.t,
            joints: (0..ns).filter(|&k| pb.mu[k] > 0.0).collect(),
        }),
    }
}

fn finish<const NQ: usize>(pb: &Pb, modes: Vec<JointMode>, sol: Sol) -> JointFrictionSolve<NQ> {
    let ns = modes.len();
    let normal: Vec<f64> = (0..ns)
        .map(|k| {
            pb.group(&sol.lambda, k)
                .iter()
                .map(|x| x * x)
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    let friction = (0..ns)
        .map(|k| match modes[k] {
            JointMode::Free => 0.0,
            JointMode::Stick => sol.stick[k],
            JointMode::Slide(sigma) => {
                let along: f64 = pb
                    .group(&sol.lambda, k)
                    .iter()
                    .zip(&sol.nhat[k])
                    .map(|(x, y)| x * y)
                    .sum();
                -pb.mu[k] * pb.radius[k] * sigma * along
            }
        })
        .collect();
    JointFrictionSolve {
        qdd: SVector::<f64, NQ>::from_iterator(sol.a.iter().copied()),
        modes,
        lambda: sol.lambda.iter().copied().collect(),
        normal,
        friction,
        solves: sol.solves,
    }
}

fn check(opts: &JointFrictionOptions) -> Result<(), JointFrictionError> {
    // The tolerances, in the order they are checked.
    let tolerances = [
        (opts.slip_tol, "slip_tol must be non-negative and finite"),
        (
            opts.tendency_tol,
            "tendency_tol must be non-negative and finite",
        ),
        (
            opts.iteration_tol,
            "iteration_tol must be non-negative and finite",
        ),
    ];
    for (tol, why) in tolerances {
        if !(tol >= 0.0 && tol.is_finite()) {
            return Err(JointFrictionError::InvalidOptions(why));
        }
    }
    if !(opts.baumgarte.0.is_finite() && opts.baumgarte.1.is_finite()) {
        return Err(JointFrictionError::InvalidOptions(
            "the Baumgarte terms must be finite",
        ));
    }
    Ok(())
}

/// The accelerations with dry friction in the joints at `(q, q̇, t)`: the first consistent
/// mode assignment (see the module's documentation), sticking preferred.
///
/// Errors: [`JointFrictionError::Inconsistent`] when no assignment satisfies Coulomb's law,
/// [`JointFrictionError::NoConvergence`], [`JointFrictionError::TooManyJoints`],
/// [`JointFrictionError::Singular`], [`JointFrictionError::NonFinite`] and
/// [`JointFrictionError::InvalidOptions`].
pub fn joint_friction_accelerations<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NS: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &JointFrictionOptions,
) -> Result<JointFrictionSolve<NQ>, JointFrictionError>
where
    M: JointFriction<NQ, NC, DOF, NS>,
{
    check(opts)?;
    let pb = Pb::new::<M, NQ, NC, DOF, NS>(Point { q, qd, p, t }, opts)?;
    let (modes, sol) = enumerate(&pb, opts, &[false; NS])?;
    Ok(finish(&pb, modes, sol))
}

mod linearise;
mod simulate;
pub use linearise::{joint_friction_step_generic, joint_friction_step_jacobians};
pub use simulate::{
    simulate_joint_friction_adaptive, AdaptiveJointFrictionOptions, JointFrictionEvent,
    JointFrictionTrajectory,
};
