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

use super::{contact_accelerations, dmat, dvec, ContactOptions};
use crate::error::ContactError;
use crate::mechanism::Friction;
use crate::ode::{dopri5, Dopri5Options, OdeSystem, Pair};

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
    m: DMatrix<f64>,
    f: DVector<f64>,
    cj: DMatrix<f64>,
    dc: DVector<f64>,
    jg: DMatrix<f64>,
    dg: DVector<f64>,
    g: DVector<f64>,
    jt: DMatrix<f64>,
    dt: DVector<f64>,
    vt: DVector<f64>,
    mu: Vec<f64>,
    /// The slip rows of each contact.
    rows: Vec<Vec<usize>>,
    t: f64,
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
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
        opts: &FrictionOptions,
    ) -> Result<Self, FrictionError>
    where
        M: Friction<NQ, NC, DOF, NI, NT>,
    {
        let (alpha, beta) = opts.contact.baumgarte;
        let cj = M::jacobian(q, p, t);
        let w = cj * qd + M::jacobian_t(q, p, t);
        let dc = M::gamma(q, qd, p, t) - w * (2.0 * alpha) - M::residual(q, p, t) * (beta * beta);
        let g = M::inequality(q, p, t);
        let jg = M::inequality_jacobian(q, p, t);
        let vn = jg * qd + M::inequality_jacobian_t(q, p, t);
        let dg = M::inequality_gamma(q, qd, p, t) - vn * (2.0 * alpha) - g * (beta * beta);
        let jt = M::tangent_jacobian(q, p, t);
        let vt = jt * qd + M::tangent_jacobian_t(q, p, t);
        let dt = M::tangent_gamma(q, qd, p, t);
        let pb = Pb {
            m: dmat(&M::mass_matrix(q, p, t)),
            f: dvec(&M::forces(q, qd, p, t)),
            cj: dmat(&cj),
            dc: dvec(&dc),
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
            t,
        };
        let finite = crate::linalg::finite;
        let all = [
            pb.m.as_slice(),
            pb.f.as_slice(),
            pb.dc.as_slice(),
            pb.jg.as_slice(),
            pb.dg.as_slice(),
            pb.jt.as_slice(),
            pb.dt.as_slice(),
            pb.vt.as_slice(),
        ];
        if !all.iter().all(|s| finite(s)) {
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
        self.f
            .amax()
            .max(self.dg.amax())
            .max(self.dc.amax())
            .max(self.dt.amax())
            .max(1.0)
    }

    /// The solution for `modes` (one per inequality).
    fn solve(&self, modes: &[ContactMode]) -> Result<Sol, FrictionError> {
        let nq = self.m.nrows();
        let nc = self.cj.nrows();
        let closed: Vec<usize> = (0..modes.len())
            .filter(|&k| modes[k] != ContactMode::Open)
            .collect();
        let stick: Vec<usize> = closed
            .iter()
            .filter(|&&k| modes[k] == ContactMode::Stick)
            .flat_map(|&k| self.rows[k].iter().copied())
            .collect();
        let n = nq + nc + closed.len() + stick.len();
        let mut k = DMatrix::<f64>::zeros(n, n);
        let mut rhs = DVector::<f64>::zeros(n);
        k.view_mut((0, 0), (nq, nq)).copy_from(&self.m);
        rhs.rows_mut(0, nq).copy_from(&self.f);
        for i in 0..nc {
            for j in 0..nq {
                k[(nq + i, j)] = self.cj[(i, j)];
                k[(j, nq + i)] = -self.cj[(i, j)];
            }
            rhs[nq + i] = self.dc[i];
        }
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
            for j in 0..nq {
                k[(row, j)] = self.jt[(r, j)];
                k[(j, row)] = -self.jt[(r, j)];
            }
            rhs[row] = self.dt[r];
        }
        let t = self.t;
        let x = match k.clone().lu().solve(&rhs) {
            Some(x) if x.iter().all(|v| v.is_finite()) => x,
            _ => {
                let svd = crate::linalg::svd(k.clone()).ok_or(ContactError::Singular { t })?;
                let x = svd
                    .solve(&rhs, 1e-12 * svd.singular_values.max())
                    .map_err(|_| ContactError::Singular { t })?;
                let res = (&k * &x - &rhs).norm();
                if res.is_nan() || res > 1e-8 * rhs.norm().max(1.0) {
                    return Err(ContactError::Singular { t }.into());
                }
                x
            }
        };
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
    let total = cands
        .iter()
        .try_fold(1usize, |acc, c| acc.checked_mul(c.len()))
        .filter(|&n| n <= opts.max_combinations)
        .ok_or(FrictionError::TooManyContacts {
            t: pb.t,
            active: active.len(),
        })?;
    let mut modes = vec![ContactMode::Open; ni];
    let mut last_err = None;
    for mut code in 0..total {
        for (i, &k) in active.iter().enumerate() {
            let n = cands[i].len();
            modes[k] = cands[i][code % n].clone();
            code /= n;
        }
        solves += 1;
        match pb.solve(&modes) {
            Ok(sol) => {
                if pb.valid(&modes, &sol, &active, tol, opts.slip_tol) {
                    return Ok((modes, sol, solves));
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    match last_err {
        Some(e) if total == 1 => Err(e),
        _ => Err(FrictionError::Inconsistent {
            t: pb.t,
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
    let pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(q, qd, p, t, opts)?;
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
    let pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(q, qd, p, t, opts)?;
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
    impact_modes::<M, NQ, NC, DOF, NI, NT>(q, qd, p, t, opts, &[false; NI])
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
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    opts: &FrictionOptions,
    plastic: &[bool; NI],
) -> Result<FrictionSolve<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    let mut pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(q, qd, p, t, opts)?;
    // On impulses: M Δq̇ = impulses, C_J Δq̇ = −(C_J q̇ + C_t), J_n Δq̇ = −v_n − e min(v_n, 0)
    // (equality on closed contacts, a lower bound on open ones), J_t Δq̇ = −v_t on sticking
    // slip rows; with the slip "at rest" so that a sliding contact's post-impact slip is
    // checked along its direction.
    let vn = dvec(&(M::inequality_jacobian(q, p, t) * qd + M::inequality_jacobian_t(q, p, t)));
    let cv = dvec(&(M::jacobian(q, p, t) * qd + M::jacobian_t(q, p, t)));
    pb.f.fill(0.0);
    pb.dc = -cv;
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
    if !(opts.contact.active_tol > 0.0 && opts.contact.active_tol.is_finite()) {
        return Err(ContactError::InvalidOptions("active_tol must be positive and finite").into());
    }
    if !(opts.slip_tol >= 0.0 && opts.slip_tol.is_finite()) {
        return Err(
            ContactError::InvalidOptions("slip_tol must be non-negative and finite").into(),
        );
    }
    Ok(())
}

/// Options of [`simulate_friction_adaptive`].
#[derive(Clone, Debug)]
pub struct AdaptiveFrictionOptions {
    /// The frictional solver's options.
    pub friction: FrictionOptions,
    /// The integrator's tolerances and step limits.
    pub dopri5: Dopri5Options,
    /// Times at which to report the state besides `t0`, `t1` and the events (ascending,
    /// inside `(t0, t1)`).
    pub output_times: Vec<f64>,
    /// An impact slower than `v² < 2 |a_n| rest_height` is plastic (as in
    /// [`AdaptiveContactOptions::rest_height`](super::AdaptiveContactOptions::rest_height)).
    pub rest_height: f64,
    /// Most events over the whole run before [`ContactError::TooManyEvents`].
    pub max_events: usize,
}

impl Default for AdaptiveFrictionOptions {
    fn default() -> Self {
        Self {
            friction: FrictionOptions::default(),
            dopri5: Dopri5Options {
                rtol: 1e-10,
                atol: 1e-12,
                ..Dopri5Options::default()
            },
            output_times: Vec::new(),
            rest_height: 1e-6,
            max_events: 10_000,
        }
    }
}

/// What ended a phase of [`simulate_friction_adaptive`] at a contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrictionEvent {
    /// An open contact reached its boundary (an impact with friction follows).
    Touch,
    /// A closed contact's normal force reached zero (lift-off).
    Release,
    /// A sticking contact's force reached its cone (stick → slide).
    Slip,
    /// A sliding contact's slip velocity reached zero (slide → stick or reversal).
    Stop,
}

/// A simulated motion with frictional contacts.
#[derive(Clone, Debug, Default)]
pub struct FrictionTrajectory<const NQ: usize> {
    /// Times: `t0`, the output times, each event and `t1`.
    pub t: Vec<f64>,
    /// Coordinates.
    pub q: Vec<SVector<f64, NQ>>,
    /// Velocities.
    pub qd: Vec<SVector<f64, NQ>>,
    /// The events: time, contact and kind.
    pub events: Vec<(f64, usize, FrictionEvent)>,
    /// Each phase's start time and contact modes.
    pub phases: Vec<(f64, Vec<ContactMode>)>,
    /// Impacts applied (with friction: [`friction_impact`]).
    pub impacts: usize,
}

/// One smooth phase: fixed contact modes, one event function per contact.
struct Phase<
    'a,
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
> where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    p: &'a M::Params,
    opts: &'a AdaptiveFrictionOptions,
    modes: Vec<ContactMode>,
    /// Open contacts clear of their boundary, sliding contacts clear of rest.
    armed: [bool; NI],
    leaving: [bool; NI],
    /// Added to each contact's normal (`2k`) and friction (`2k + 1`) event functions: the
    /// consistency tolerance where the phase started with the condition met only within it
    /// (a normal force at zero, a sticking force at its cone), so that the event fires once
    /// the condition fails by more than the tolerance instead of never (the function would
    /// start at or below zero, where no crossing is seen); else 0.
    offset: Vec<[f64; 2]>,
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize, const NI: usize, const NT: usize>
    OdeSystem<Pair<NQ, NQ>> for Phase<'_, M, NQ, NC, DOF, NI, NT>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    type Error = FrictionError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, FrictionError> {
        let s = friction_accelerations_with_modes::<M, NQ, NC, DOF, NI, NT>(
            &y.a,
            &y.b,
            self.p,
            t,
            &self.opts.friction,
            &self.modes,
        )?;
        Ok(Pair::new(y.b, s.qdd))
    }
    fn events(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Option<Vec<f64>>, FrictionError> {
        let s = friction_accelerations_with_modes::<M, NQ, NC, DOF, NI, NT>(
            &y.a,
            &y.b,
            self.p,
            t,
            &self.opts.friction,
            &self.modes,
        )?;
        let g = M::inequality(&y.a, self.p, t);
        let vt =
            M::tangent_jacobian(&y.a, self.p, t) * y.b + M::tangent_jacobian_t(&y.a, self.p, t);
        let tol = self.opts.friction.contact.active_tol;
        let slip_tol = self.opts.friction.slip_tol;
        let rows = |k: usize| (0..NT).filter(move |&r| M::TANGENT_CONTACT[r] == k);
        // Two event functions per contact: `2k` its normal condition (an open contact's gap:
        // `Touch`; a closed one's force: `Release`), `2k + 1` its friction condition (a
        // sticking force reaching the cone: `Slip`; a sliding contact's slip reaching zero:
        // `Stop`), so that each event is named by the condition that caused it.
        let mut out = Vec::with_capacity(2 * NI);
        for k in 0..NI {
            let (normal, friction) = match &self.modes[k] {
                ContactMode::Open => {
                    if g[k] > 2.0 * tol {
                        self.armed[k] = true;
                    }
                    let gap = if self.leaving[k] {
                        g[k] + 0.5 * tol
                    } else if self.armed[k] {
                        g[k]
                    } else {
                        1.0
                    };
                    (gap, 1.0)
                }
                ContactMode::Closed => (s.normal[k], 1.0),
                ContactMode::Stick => {
                    let ft = rows(k).map(|r| s.tangential[r].powi(2)).sum::<f64>().sqrt();
                    (s.normal[k], M::FRICTION[k] * s.normal[k] - ft)
                }
                ContactMode::Slide(u) => {
                    let along: f64 = rows(k).zip(u).map(|(r, &ur)| ur * vt[r]).sum();
                    if along > 2.0 * slip_tol {
                        self.armed[k] = true;
                    }
                    (s.normal[k], if self.armed[k] { along } else { 1.0 })
                }
            };
            out.push(normal + self.offset[k][0]);
            out.push(friction + self.offset[k][1]);
        }
        Ok(Some(out))
    }
}

/// `q̇` with the velocity rows of the equality constraints, the closed contacts' normal
/// velocities and the sticking contacts' slip velocities set to zero by the smallest change
/// in kinetic energy (`Δq̇ = M⁻¹ Aᵀ (A M⁻¹ Aᵀ)⁻¹ (−A q̇ − a₀)`).
fn hold_velocities<
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
    modes: &[ContactMode],
) -> Result<SVector<f64, NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    let cj = M::jacobian(q, p, t);
    let ct = M::jacobian_t(q, p, t);
    let jg = M::inequality_jacobian(q, p, t);
    let gt = M::inequality_jacobian_t(q, p, t);
    let jt = M::tangent_jacobian(q, p, t);
    let tt = M::tangent_jacobian_t(q, p, t);
    let mut rows: Vec<(Vec<f64>, f64)> = Vec::new();
    for i in 0..NC {
        rows.push((cj.row(i).iter().copied().collect(), ct[i]));
    }
    for k in 0..NI {
        if modes[k] != ContactMode::Open {
            rows.push((jg.row(k).iter().copied().collect(), gt[k]));
        }
        if modes[k] == ContactMode::Stick {
            for r in (0..NT).filter(|&r| M::TANGENT_CONTACT[r] == k) {
                rows.push((jt.row(r).iter().copied().collect(), tt[r]));
            }
        }
    }
    if rows.is_empty() {
        return Ok(*qd);
    }
    let a = DMatrix::from_fn(rows.len(), NQ, |i, j| rows[i].0[j]);
    let r = DVector::from_fn(rows.len(), |i, _| -((a.row(i) * dvec(qd))[0] + rows[i].1));
    let m = dmat(&M::mass_matrix(q, p, t));
    let minv_at = m
        .lu()
        .solve(&a.transpose())
        .ok_or(ContactError::Singular { t })?;
    let s = &a * &minv_at;
    let svd = crate::linalg::svd(s.clone()).ok_or(ContactError::Singular { t })?;
    let lam = svd
        .solve(&r, 1e-12 * svd.singular_values.max())
        .map_err(|_| ContactError::Singular { t })?;
    let dq = minv_at * lam;
    let out = qd + SVector::<f64, NQ>::from_iterator(dq.iter().copied());
    if out.iter().all(|v| v.is_finite()) {
        Ok(out)
    } else {
        Err(ContactError::NonFinite { t }.into())
    }
}

/// Simulates from `(q0, q̇0)` over `[t0, t1]` with Coulomb friction at the contacts, on
/// DOPRI5: each phase keeps its contact modes (an exact, smooth right-hand side), and the
/// mode changes are events located on the dense output — a contact touching
/// ([`FrictionEvent::Touch`], an impact with friction follows, [`friction_impact`]), releasing
/// ([`FrictionEvent::Release`]), a sticking contact's force reaching `μ λ_n`
/// ([`FrictionEvent::Slip`]) and a sliding contact's slip velocity reaching zero
/// ([`FrictionEvent::Stop`]). At each phase start the modes are chosen again by
/// [`friction_accelerations`]' enumeration (a contact that just slipped may not stick at
/// once), and a sticking contact's slip velocity (at most `slip_tol`) is set to zero.
///
/// Errors: as [`friction_accelerations`], [`ContactError::TooManyEvents`] past
/// `max_events`, [`ContactError::InvalidOptions`], and [`ContactError::Singular`] when the
/// integrator fails.
pub fn simulate_friction_adaptive<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NI: usize,
    const NT: usize,
>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &AdaptiveFrictionOptions,
) -> Result<FrictionTrajectory<NQ>, FrictionError>
where
    M: Friction<NQ, NC, DOF, NI, NT>,
{
    check(&opts.friction)?;
    if !(t0.is_finite() && t1.is_finite() && t1 > t0) {
        return Err(ContactError::InvalidOptions("need finite t0 < t1").into());
    }
    if !(opts.rest_height >= 0.0 && opts.rest_height.is_finite()) {
        return Err(
            ContactError::InvalidOptions("rest_height must be non-negative and finite").into(),
        );
    }
    let mut grid: Vec<f64> = opts
        .output_times
        .iter()
        .copied()
        .filter(|&x| x > t0 && x < t1)
        .collect();
    if grid.windows(2).any(|w| w[1] <= w[0]) {
        return Err(ContactError::InvalidOptions("output times must be strictly ascending").into());
    }
    grid.push(t1);
    let copts = &opts.friction.contact;
    let tol = copts.active_tol;
    let mut out = FrictionTrajectory::<NQ>::default();
    let (mut q, mut qd, mut t) = (*q0, *qd0, t0);
    let record = |out: &mut FrictionTrajectory<NQ>, t: f64, q: &SVector<f64, NQ>, qd| {
        out.t.push(t);
        out.q.push(*q);
        out.qd.push(qd);
    };
    record(&mut out, t, &q, qd);
    let mut no_stick = [false; NI];
    // A contact whose normal force just reached zero (`Release`) starts the next phase open:
    // at the event its force is zero to rounding, and re-enumerating would let it close again
    // with a force of −0 (tolerated) that then grows negative unseen (a floor that holds on).
    let mut released = [false; NI];
    let mut events = 0usize;
    let mut h0 = opts.dopri5.h0;
    loop {
        // An active contact approaching: the (frictionless) impact first.
        let g = M::inequality(&q, p, t);
        let vn = M::inequality_jacobian(&q, p, t) * qd + M::inequality_jacobian_t(&q, p, t);
        let vtol = 1e-12 * (1.0 + vn.amax());
        if (0..NI).any(|k| g[k].abs() <= tol && vn[k] < -vtol) {
            let free = ContactOptions {
                active_tol: -1.0,
                ..*copts
            };
            let s = contact_accelerations::<M, NQ, NC, DOF, NI>(&q, &qd, p, t, &[], &free)?;
            let an = M::inequality_jacobian(&q, p, t) * s.qdd - M::inequality_gamma(&q, &qd, p, t);
            let plastic: [bool; NI] = std::array::from_fn(|k| {
                vn[k] < 0.0 && an[k] < 0.0 && vn[k] * vn[k] <= -2.0 * an[k] * opts.rest_height
            });
            let imp =
                impact_modes::<M, NQ, NC, DOF, NI, NT>(&q, &qd, p, t, &opts.friction, &plastic)?;
            if imp.normal.iter().any(|&l| l != 0.0) {
                out.impacts += 1;
            }
            qd += imp.qdd;
        }
        q = super::adaptive::onto_boundaries::<M, NQ, NC, DOF, NI>(&q, p, t, tol)?;
        let rest: Vec<f64> = grid.iter().copied().filter(|&x| x > t).collect();
        if rest.is_empty() {
            break;
        }
        let g = M::inequality(&q, p, t);
        let vn = M::inequality_jacobian(&q, p, t) * qd + M::inequality_jacobian_t(&q, p, t);
        let vtol = 1e-9 * (1.0 + vn.amax());
        let leaving: [bool; NI] =
            std::array::from_fn(|k| g[k].abs() <= tol && (vn[k] > vtol || released[k]));
        let pb = Pb::new::<M, NQ, NC, DOF, NI, NT>(&q, &qd, p, t, &opts.friction)?;
        let (modes, sol, _) = enumerate(&pb, &opts.friction, &no_stick, &leaving)?;
        let ttol = opts.friction.contact.tendency_tol * pb.scale();
        let vt0 = M::tangent_jacobian(&q, p, t) * qd + M::tangent_jacobian_t(&q, p, t);
        let offset = (0..NI)
            .map(|k| {
                let ft = pb.rows[k]
                    .iter()
                    .map(|&r| sol.tangential[r] * sol.tangential[r])
                    .sum::<f64>()
                    .sqrt();
                let closed = modes[k] != ContactMode::Open;
                let cone = pb.mu[k] * sol.normal[k] - ft;
                [
                    if closed && sol.normal[k] <= 0.0 {
                        ttol
                    } else {
                        0.0
                    },
                    if modes[k] == ContactMode::Stick && cone <= 0.0 {
                        ttol
                    } else {
                        0.0
                    },
                ]
            })
            .collect();
        if modes.contains(&ContactMode::Stick) {
            qd = hold_velocities::<M, NQ, NC, DOF, NI, NT>(&q, &qd, p, t, &modes)?;
        }
        out.phases.push((t, modes.clone()));
        let mut sys = Phase::<M, NQ, NC, DOF, NI, NT> {
            p,
            opts,
            // Open contacts clear of their boundary watch it at once; a contact sliding at the
            // start (faster than `slip_tol`) watches its stop at once, one leaving rest once
            // its slip exceeds twice that.
            armed: std::array::from_fn(|k| {
                g[k] > tol
                    || leaving[k]
                    || match &modes[k] {
                        ContactMode::Slide(u) => {
                            let along: f64 =
                                pb.rows[k].iter().zip(u).map(|(&r, &ur)| ur * vt0[r]).sum();
                            along > opts.friction.slip_tol
                        }
                        _ => false,
                    }
            }),
            leaving,
            modes,
            offset,
        };
        let dopts = Dopri5Options { h0, ..opts.dopri5 };
        let sol = dopri5(&mut sys, t, Pair::new(q, qd), &rest, &dopts).map_err(|e| match e {
            crate::error::OdeError::System { source, .. } => source,
            crate::error::OdeError::NonFinite { t } => ContactError::NonFinite { t }.into(),
            _ => ContactError::Singular { t }.into(),
        })?;
        for (tt, y) in sol.t.iter().zip(&sol.y) {
            if *tt != t1 {
                record(&mut out, *tt, &y.a, y.b);
            }
        }
        match (sol.stopped, sol.event) {
            (Some((te, ye)), Some(e)) => {
                events += 1;
                if events > opts.max_events {
                    return Err(ContactError::TooManyEvents { t: te }.into());
                }
                // By the condition that crossed (see `Phase::events`).
                let k = e / 2;
                let kind = match (&sys.modes[k], e % 2) {
                    (ContactMode::Open, _) => FrictionEvent::Touch,
                    (_, 0) => FrictionEvent::Release,
                    (ContactMode::Stick, _) => FrictionEvent::Slip,
                    _ => FrictionEvent::Stop,
                };
                no_stick = [false; NI];
                released = [false; NI];
                match kind {
                    FrictionEvent::Slip => no_stick[k] = true,
                    FrictionEvent::Release => released[k] = true,
                    _ => {}
                }
                let steps = sol.stats.steps.max(1) as f64;
                h0 = Some(((te - t) / steps).max(f64::EPSILON * te.abs().max(1.0)));
                t = te;
                q = ye.a;
                qd = ye.b;
                out.events.push((t, k, kind));
                record(&mut out, t, &q, qd);
            }
            _ => {
                let last = sol.y.last().copied().unwrap_or(Pair::new(q, qd));
                record(&mut out, t1, &last.a, last.b);
                break;
            }
        }
    }
    Ok(out)
}
