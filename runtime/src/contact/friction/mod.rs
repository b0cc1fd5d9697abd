//! Coulomb friction at contacts (`inequality NAME: g >= 0, friction = μ, tangent = v;`).
//!
//! **Formulation.** Each active contact `k` is in one *mode*: open, closed without friction,
//! sticking (its slip rows held: `v̇_t = 0`, the tangential force `f_t` free), or sliding
//! along a unit direction `u` (`f_t = −μ λ_n u`). For given modes the accelerations, the
//! equality multipliers, the normal forces `λ_n` and the sticking forces solve one linear
//! system (the equations of motion with `C_J q̈ = d_C`, `J_n q̈ = d_n` on the closed contacts
//! and `J_t q̈ = γ_t` on the sticking slip rows). A mode assignment is *valid* when its
//! solution satisfies the Coulomb conditions: `λ_n ≥ 0` on the closed contacts, `J_n q̈ ≥
//! d_n` on the open ones, `|f_t| ≤ μ λ_n` (the exact cone: the Euclidean norm of the one or
//! two slip components) on the sticking ones, and on a contact that starts sliding from rest
//! the slip accelerating along `u` (maximal dissipation: the force opposes the slip).
//! [`friction_accelerations`] enumerates the mode assignments of the active contacts (in a
//! fixed order: stick, slide, open, so that sticking is preferred when both hold) and takes
//! the first valid one; none valid is the Painlevé paradox's inconsistent case, reported as
//! [`FrictionError::Inconsistent`], never a wrong answer.
//!
//! Why enumeration rather than a polyhedral-cone LCP by principal pivoting: the sliding
//! contacts' forces make the problem's matrix nonsymmetric (`J_n − μ u J_t` against `J_n`),
//! where principal pivoting has no guarantee and may cycle, and the polyhedral cone is an
//! approximation in 3-D while the enumeration checks the exact cone. In 2-D (one slip row)
//! enumeration is the exact Coulomb law: the cone *is* two directions. The cost is `4^n`
//! solves in the worst case for `n` active frictional contacts, bounded by
//! [`FrictionOptions::max_combinations`]: this is for mechanisms with few contacts.
//!
//! Sticking does not creep: a sticking slip row is an equality of the linear system, so its
//! slip acceleration is zero to rounding, and [`simulate_friction_adaptive`] sets the slip
//! velocity of each sticking contact to zero (a minimum-kinetic-energy velocity correction,
//! of the size of [`FrictionOptions::slip_tol`] at most) when it starts sticking.
//!
//! Limitations: a spatial contact (two slip rows) that starts sliding from rest slides
//! opposite to the force that sticking would need (exact where the contact's tangential
//! response is isotropic, as for a ball on a plane); its slide→stick event is the slip
//! velocity's component along the direction it had when the phase started reaching zero
//! (exact for straight slip paths). Impacts ([`friction_impact`]) use Newton's restitution
//! on the normal velocity and a one-shot Coulomb law on the tangential impulse (not Routh's
//! integration along the impact).

use nalgebra::{DMatrix, DVector, SVector};

use super::{
    assignments, dmat, dvec, first_assignment, hold, solve_saddle, ContactOptions, Motion, Point,
};
use crate::error::ContactError;
use crate::mechanism::Friction;

/// The state of one contact in a frictional solve.
#[derive(Clone, Debug, PartialEq)]
pub enum ContactMode {
    /// Not pushing (inactive, separating, or released: `λ_n = 0`).
    Open,
    /// Closed, without friction (`μ = 0`).
    Closed,
    /// Closed and sticking: the slip rows held, `|f_t| ≤ μ λ_n`.
    Stick,
    /// Closed and sliding along the unit direction `u` (one entry per slip row):
    /// `f_t = −μ λ_n u`.
    Slide(Vec<f64>),
}

/// Options of the frictional solver and simulator.
#[derive(Clone, Copy, Debug)]
pub struct FrictionOptions {
    /// The contact options (`active_tol`, `tendency_tol`, Baumgarte's terms).
    pub contact: ContactOptions,
    /// A contact whose slip speed `|v_t|` is at most this may stick (in the model's velocity
    /// unit); above it, it slides along its slip.
    pub slip_tol: f64,
    /// Most mode assignments tried in one solve before [`FrictionError::TooManyContacts`].
    pub max_combinations: usize,
}

impl Default for FrictionOptions {
    fn default() -> Self {
        Self {
            contact: ContactOptions::default(),
            slip_tol: 1e-9,
            max_combinations: 4096,
        }
    }
}

/// Errors of the frictional solver and simulator.
#[derive(Clone, Debug, PartialEq)]
pub enum FrictionError {
    /// An error of the contact machinery (singular system, non-finite values, options).
    Contact(ContactError),
    /// No mode assignment of the active contacts satisfies Coulomb's law: the inconsistent
    /// case of the Painlevé paradox (friction too large for the configuration; a tangential
    /// impact would be needed).
    Inconsistent {
        /// Time.
        t: f64,
        /// The active contacts.
        contacts: Vec<usize>,
    },
    /// More mode assignments than [`FrictionOptions::max_combinations`].
    TooManyContacts {
        /// Time.
        t: f64,
        /// Active contacts.
        active: usize,
    },
}

impl std::fmt::Display for FrictionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrictionError::Contact(e) => write!(f, "{e}"),
            FrictionError::Inconsistent { t, contacts } => write!(
                f,
                "no contact forces satisfy Coulomb's law at t = {t} (contacts {contacts:?}): \
                 the Painlevé paradox's inconsistent case (friction too large for the \
                 configuration)"
            ),
            FrictionError::TooManyContacts { t, active } => write!(
                f,
                "{active} active frictional contacts at t = {t}: too many mode assignments to \
                 enumerate (raise FrictionOptions::max_combinations)"
            ),
        }
    }
}

impl std::error::Error for FrictionError {}

impl From<ContactError> for FrictionError {
    fn from(e: ContactError) -> Self {
        FrictionError::Contact(e)
    }
}

/// The result of one frictional solve.
#[derive(Clone, Debug, PartialEq)]
pub struct FrictionSolve<const NQ: usize> {
    /// Accelerations `q̈`.
    pub qdd: SVector<f64, NQ>,
    /// The mode of each inequality (open where inactive).
    pub modes: Vec<ContactMode>,
    /// Normal force `λ_n` of each inequality (0 where open).
    pub normal: Vec<f64>,
    /// Tangential force of each slip row (`f_t`, in the slip rows' directions).
    pub tangential: Vec<f64>,
    /// Multipliers of the equality constraints.
    pub mu: Vec<f64>,
    /// Linear solves made.
    pub solves: usize,
}

/// The data of one frictional problem at `(q, q̇, t)`.
struct Pb {
    motion: Motion,
    jg: DMatrix<f64>,
    dg: DVector<f64>,
    g: DVector<f64>,
    jt: DMatrix<f64>,
    dt: DVector<f64>,
    vt: DVector<f64>,
    mu: Vec<f64>,
    /// The slip rows of each contact.
    rows: Vec<Vec<usize>>,
}

/// The solution of one mode assignment.
struct Sol {
    a: DVector<f64>,
    mu: Vec<f64>,
    normal: Vec<f64>,
    tangential: Vec<f64>,
}

impl Pb {
    fn new<
        M,
        const NQ: usize,
        const NC: usize,
        const DOF: usize,
        const NI: usize,
        const NT: usize,
    >(
        at: Point<'_, M::Params, NQ>,
        opts: &FrictionOptions,
    ) -> Result<Self, FrictionError>
    where
        M: Friction<NQ, NC, DOF, NI, NT>,
    {
        let baumgarte = opts.contact.baumgarte;
        let Point { q, qd, p, t } = at;
        let (g, jg, dg) = at.inequalities::<M, NC, DOF, NI>(baumgarte);
        let jt = M::tangent_jacobian(q, p, t);
        let vt = jt * qd + M::tangent_jacobian_t(q, p, t);
        let dt = M::tangent_gamma(q, qd, p, t);
        let pb = Pb {
            motion: Motion::at::<M, NQ, NC, DOF>(at, baumgarte),
            jg: dmat(&jg),
            dg: dvec(&dg),
            g: dvec(&g),
            jt: dmat(&jt),
            dt: dvec(&dt),
            vt: dvec(&vt),
            mu: M::FRICTION.to_vec(),
            rows: (0..NI)
                .map(|k| (0..NT).filter(|&r| M::TANGENT_CONTACT[r] == k).collect())
                .collect(),
        };
        let more = [
            pb.jg.as_slice(),
            pb.dg.as_slice(),
            pb.jt.as_slice(),
            pb.dt.as_slice(),
            pb.vt.as_slice(),
        ];
        if !pb.motion.finite(&more) {
            return Err(ContactError::NonFinite { t }.into());
        }
        Ok(pb)
    }

    /// Whether contact `k` has friction.
    fn frictional(&self, k: usize) -> bool {
        self.mu[k] > 0.0 && !self.rows[k].is_empty()
    }

    /// Slip speed of contact `k`.
    fn slip(&self, k: usize) -> f64 {
        self.rows[k]
            .iter()
            .map(|&r| self.vt[r] * self.vt[r])
            .sum::<f64>()
            .sqrt()
    }

    /// The scale of the tolerances.
    fn scale(&self) -> f64 {
        self.motion.scale(&[&self.dg, &self.dt])
    }

    /// The solution for `modes` (one per inequality).
    fn solve(&self, modes: &[ContactMode]) -> Result<Sol, FrictionError> {
        let nq = self.motion.m.nrows();
        let nc = self.motion.cj.nrows();
        let closed: Vec<usize> = (0..modes.len())
            .filter(|&k| modes[k] != ContactMode::Open)
            .collect();
        let stick: Vec<usize> = closed
            .iter()
            .filter(|&&k| modes[k] == ContactMode::Stick)
            .flat_map(|&k| self.rows[k].iter().copied())
            .collect();
        let (mut k, mut rhs) = self.motion.saddle(closed.len() + stick.len());
        for (c, &g) in closed.iter().enumerate() {
            let row = nq + nc + c;
            for j in 0..nq {
                k[(row, j)] = self.jg[(g, j)];
                let mut w = self.jg[(g, j)];
                if let ContactMode::Slide(u) = &modes[g] {
                    for (&r, &ur) in self.rows[g].iter().zip(u) {
                        w -= self.mu[g] * ur * self.jt[(r, j)];
                    }
                }
                k[(j, row)] = -w;
            }
            rhs[row] = self.dg[g];
        }
        for (s, &r) in stick.iter().enumerate() {
            let row = nq + nc + closed.len() + s;
            hold(&mut k, &mut rhs, row, (&self.jt, r), self.dt[r]);
        }
        let x = solve_saddle(&k, &rhs).ok_or(ContactError::Singular { t: self.motion.t })?;
        let mut normal = vec![0.0; modes.len()];
        let mut tangential = vec![0.0; self.jt.nrows()];
        for (c, &g) in closed.iter().enumerate() {
            normal[g] = x[nq + nc + c];
            if let ContactMode::Slide(u) = &modes[g] {
                for (&r, &ur) in self.rows[g].iter().zip(u) {
                    tangential[r] = -self.mu[g] * normal[g] * ur;
                }
            }
        }
        for (s, &r) in stick.iter().enumerate() {
            tangential[r] = x[nq + nc + closed.len() + s];
        }
        Ok(Sol {
            a: x.rows(0, nq).into_owned(),
            mu: x.rows(nq, nc).iter().copied().collect(),
            normal,
            tangential,
        })
    }

    /// Whether `sol` of `modes` satisfies Coulomb's law on the `active` contacts.
    fn valid(
        &self,
        modes: &[ContactMode],
        sol: &Sol,
        active: &[usize],
        tol: f64,
        slip_tol: f64,
    ) -> bool {
        active.iter().all(|&k| match &modes[k] {
            ContactMode::Open => (self.jg.row(k) * &sol.a)[0] - self.dg[k] >= -tol,
            ContactMode::Closed => sol.normal[k] >= -tol,
            ContactMode::Stick => {
                let ft: f64 = self.rows[k]
                    .iter()
                    .map(|&r| sol.tangential[r] * sol.tangential[r])
                    .sum::<f64>()
                    .sqrt();
                sol.normal[k] >= -tol && ft <= self.mu[k] * sol.normal[k] + tol
            }
            ContactMode::Slide(u) => {
                if sol.normal[k] < -tol {
                    return false;
                }
                if self.slip(k) > slip_tol {
                    return true;
                }
                // From rest: the slip must accelerate along u (the force opposes it).
                let at: f64 = self.rows[k]
                    .iter()
                    .zip(u)
                    .map(|(&r, &ur)| ur * ((self.jt.row(r) * &sol.a)[0] - self.dt[r]))
                    .sum();
                at >= -tol
            }
        })
    }
}

/// The candidate modes of active contact `k`, preferred first.
fn candidates(
    pb: &Pb,
    k: usize,
    stick_allowed: bool,
    stick_force: Option<&[f64]>,
    slip_tol: f64,
) -> Vec<ContactMode> {
    if !pb.frictional(k) {
        return vec![ContactMode::Closed, ContactMode::Open];
    }
    let rows = &pb.rows[k];
    let s = pb.slip(k);
    if s > slip_tol {
        let u = rows.iter().map(|&r| pb.vt[r] / s).collect();
        return vec![ContactMode::Slide(u), ContactMode::Open];
    }
    let mut out = Vec::new();
    if stick_allowed {
        out.push(ContactMode::Stick);
    }
    if rows.len() == 1 {
        out.push(ContactMode::Slide(vec![1.0]));
        out.push(ContactMode::Slide(vec![-1.0]));
    } else {
        // Opposite to the force sticking would need (isotropic contacts: exact).
        let f = stick_force.unwrap_or(&[]);
        let n = f.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 0.0 && n.is_finite() {
            out.push(ContactMode::Slide(f.iter().map(|x| -x / n).collect()));
        }
    }
    out.push(ContactMode::Open);
    out
}

/// The enumeration of [`friction_accelerations`]; `no_stick[k]`: contact `k` may not stick
/// (it just reached its cone's boundary), `leaving[k]`: it is open (separating).
fn enumerate(
    pb: &Pb,
    opts: &FrictionOptions,
    no_stick: &[bool],
    leaving: &[bool],
) -> Result<(Vec<ContactMode>, Sol, usize), FrictionError> {
    let ni = pb.g.len();
    let tol = opts.contact.tendency_tol * pb.scale();
    let active: Vec<usize> = (0..ni)
        .filter(|&k| pb.g[k].abs() <= opts.contact.active_tol && !leaving[k])
        .collect();
    let mut solves = 0;
    // The force each resting spatial contact would need to stick (all active closed and
    // sticking), for the direction it slides along when it cannot.
    let mut stick_force: Vec<Option<Vec<f64>>> = vec![None; ni];
    if active
        .iter()
        .any(|&k| pb.frictional(k) && pb.rows[k].len() > 1)
    {
        let modes: Vec<ContactMode> = (0..ni)
            .map(|k| {
                if !active.contains(&k) {
                    ContactMode::Open
                } else if pb.frictional(k) {
                    ContactMode::Stick
                } else {
                    ContactMode::Closed
                }
            })
            .collect();
        solves += 1;
        if let Ok(sol) = pb.solve(&modes) {
            for &k in &active {
                stick_force[k] = Some(pb.rows[k].iter().map(|&r| sol.tangential[r]).collect());
            }
        }
    }
    let cands: Vec<Vec<ContactMode>> = active
        .iter()
        .map(|&k| {
            candidates(
                pb,
                k,
                !no_stick[k],
                stick_force[k].as_deref(),
                opts.slip_tol,
            )
        })
        .collect();
    let radices: Vec<usize> = cands.iter().map(Vec::len).collect();
    let total =
        assignments(&radices, opts.max_combinations).ok_or(FrictionError::TooManyContacts {
            t: pb.motion.t,
            active: active.len(),
        })?;
    let mut modes = vec![ContactMode::Open; ni];
    let mut last_err = None;
    let found = first_assignment(&radices, total, |digits| {
        for (i, &k) in active.iter().enumerate() {
            modes[k] = cands[i][digits[i]].clone();
        }
        solves += 1;
        Ok::<_, FrictionError>(match pb.solve(&modes) {
            Ok(sol) => pb
                .valid(&modes, &sol, &active, tol, opts.slip_tol)
                .then_some(sol),
            Err(e) => {
                last_err = Some(e);
                None
            }
        })
    })?;
    if let Some(sol) = found {
        return Ok((modes, sol, solves));
    }
    match last_err {
        Some(e) if total == 1 => Err(e),
        _ => Err(FrictionError::Inconsistent {
            t: pb.motion.t,
            contacts: active,
        }),
    }
}

fn finish<const NQ: usize>(modes: Vec<ContactMode>, sol: Sol, solves: usize) -> FrictionSolve<NQ> {
    FrictionSolve {
        qdd: SVector::<f64, NQ>::from_iterator(sol.a.iter().copied()),
        modes,
        normal: sol.normal,
        tangential: sol.tangential,
        mu: sol.mu,
        solves,
    }
}

/// The accelerations with Coulomb friction at the active contacts (`|g_k| ≤ active_tol`):
/// the first valid mode assignment (see the module's documentation), sticking preferred.
///
/// Errors: [`FrictionError::Inconsistent`] when no assignment satisfies Coulomb's law
/// (Painlevé), [`FrictionError::TooManyContacts`], and the contact errors (non-finite
/// values, a singular system).
pub fn friction_accelerations<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &FrictionOptions,
) -> Result<FrictionSolve<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    check(opts)?;
    let pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(Point { q, qd, p, t }, opts)?;
    let (modes, sol, solves) = enumerate(&pb, opts, &[false; NI], &[false; NI])?;
    Ok(finish(modes, sol, solves))
}

/// The accelerations for given contact modes (one per inequality), without checking
/// Coulomb's conditions: the smooth right-hand side of a phase of
/// [`simulate_friction_adaptive`].
pub fn friction_accelerations_with_modes<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &FrictionOptions,
    modes: &[ContactMode],
) -> Result<FrictionSolve<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    if modes.len() != NI {
        return Err(ContactError::InvalidOptions("one contact mode per inequality").into());
    }
    let pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(Point { q, qd, p, t }, opts)?;
    let sol = pb.solve(modes)?;
    Ok(finish(modes.to_vec(), sol, 1))
}

/// The impact at `(q, q̇)` with Coulomb friction: the velocity change `Δq̇` (in `qdd`), the
/// normal impulses (in `normal`) and the tangential impulses (in `tangential`) of the active
/// contacts. Each contact's post-impact normal velocity is at least `−e v_n` (`v_n < 0` the
/// approach; `e` its restitution), its tangential impulse inside the cone `|P_t| ≤ μ P_n`,
/// and either its post-impact slip is zero (sticking) or the impulse is `−μ P_n u` with the
/// post-impact slip along `u` (maximal dissipation), by the same enumeration of modes as
/// [`friction_accelerations`] on impulses. A one-shot Coulomb law with Newton's
/// restitution: it dissipates for `e = 0`; with `e > 0` and friction the combination is
/// not guaranteed to (Kane's example), which is not checked.
pub fn friction_impact<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &FrictionOptions,
) -> Result<FrictionSolve<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    check(opts)?;
    impact_modes::<M, NQ, NC, DOF, NI, NT>(Point { q, qd, p, t }, opts, &[false; NI])
}

/// [`friction_impact`] with the contacts marked `plastic` taken with restitution 0.
fn impact_modes<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    here: Point<'_, M::Params, NQ>,
    opts: &FrictionOptions,
    plastic: &[bool; NI],
) -> Result<FrictionSolve<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    let mut pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(here, opts)?;
    let Point { q, qd, p, t } = here;
    // On impulses: M Δq̇ = impulses, C_J Δq̇ = −(C_J q̇ + C_t), J_n Δq̇ = −v_n − e min(v_n, 0)
    // (equality on closed contacts, a lower bound on open ones), J_t Δq̇ = −v_t on sticking
    // slip rows; with the slip "at rest" so that a sliding contact's post-impact slip is
    // checked along its direction.
    let vn = dvec(&(M::inequality_jacobian(q, p, t) * qd + M::inequality_jacobian_t(q, p, t)));
    let cv = dvec(&(M::jacobian(q, p, t) * qd + M::jacobian_t(q, p, t)));
    pb.motion.f.fill(0.0);
    pb.motion.dc = -cv;
    pb.dg = DVector::from_fn(NI, |k, _| {
        let e = if plastic[k] { 0.0 } else { M::RESTITUTION[k] };
        -vn[k] - e * vn[k].min(0.0)
    });
    pb.dt = -pb.vt.clone();
    pb.vt.fill(0.0);
    let (modes, sol, solves) = enumerate(&pb, opts, &[false; NI], &[false; NI])?;
    Ok(finish(modes, sol, solves))
}

fn check(opts: &FrictionOptions) -> Result<(), FrictionError> {
    crate::contact::check_active_tol(opts.contact.active_tol)?;
    if !(opts.slip_tol >= 0.0 && opts.slip_tol.is_finite()) {
        return Err(
            ContactError::InvalidOptions("slip_tol must be non-negative and finite").into(),
        );
    }
    Ok(())
}

mod linearise;
mod simulate;
pub use linearise::{friction_step_generic, friction_step_jacobians};
pub use simulate::{
    simulate_friction_adaptive, AdaptiveFrictionOptions, FrictionEvent, FrictionTrajectory,
};
