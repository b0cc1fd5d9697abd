//! Index-1 Lagrange-multiplier dynamics (seed 002): with state `(q, q̇)`, solve
//!
//! ```text
//! [ M    −C_Jᵀ ] [ q̈ ]   [ f ]
//! [ C_J    0   ] [ λ  ] = [ d ],    d = γ − (2/τ) Ċ − (1/τ²) C,   Ċ = C_J q̇ + C_t
//! ```
//!
//! (`d = γ` without Baumgarte stabilisation), so that `M q̈ = f + C_Jᵀ λ`.
//!
//! # One rank decision
//!
//! The system is solved through the SVD `C_J = U Σ Vᵀ`, and every decision uses the same
//! numerical rank `r = #{σ_i > RANK_RTOL · σ_max}` ([`RANK_RTOL`] `= √ε ≈ 1.5e-8`):
//!
//! * the constraint rows kept are `Σ_r V_rᵀ q̈ = U_rᵀ d` (the other `NC − r` combinations of
//!   the rows are treated as dependent: redundant constraints, or a rank loss such as the flat
//!   position of a parallelogram);
//! * `Z = V_{r+1..NQ}` are the motions those rows allow. While `r ≥ NQ − DOF` (the model's
//!   generic rank) all of `Z` is free: `N = Z`. Below it the configuration is singular (a
//!   flat position), not more mobile: `N` keeps `DOF` directions of `Z` — the velocity's
//!   component first, so that the motion continues along its branch — and the other lost
//!   directions get zero acceleration (what the lost rows impose in the limit along a
//!   branch that does not turn into them: the windows of a parallelogram chain stay
//!   parallelograms). With `q̇` orthogonal to `Z` (at rest at the singular point) all of `Z`
//!   is free, the accelerations of the linkage with the lost rows released;
//! * `q̈ = V_r Σ_r⁻¹ U_rᵀ d + N w` with `(Nᵀ M N) w = Nᵀ (f − M V_r Σ_r⁻¹ U_rᵀ d)`;
//! * `λ = U_r Σ_r⁻¹ V_rᵀ (M q̈ − f)`, the minimum-norm multipliers of the kept rows. Within
//!   the cut of a rank loss the force along a lost direction (`σ_s λ_s`, `O(σ_s)` along a
//!   branch) is not carried by `λ`.
//!
//! With full rank this is the augmented system above; at and near a rank loss there is no
//! singular window and no error. Why `√ε`: at a Runge–Kutta stage state the
//! constraints hold only to the local error (`|C| ≈ 1e-6` at moderate tolerances), so `d`
//! is inconsistent with `C_J` by that much; a kept singular value `σ` turns it into an
//! acceleration error `≈ |C|·‖d‖/σ`. A cut at `1e-10 σ_max` amplified that by up to 1e10 (the
//! issue reports the Bricard loop stopping on it); at `√ε` the amplification stays bounded by `1/√ε` and is
//! left to the error control, while rounding in a kept `σ` (absolute `ε σ_max`) stays
//! below `√ε` relative, and a true rank (a singular value `O(σ_max)`) is never cut.
//! Limitation: off the manifold the right-hand side near a flat position is stiff (its
//! off-manifold part grows like `‖γ‖/σ_s²`); an error-controlled integration whose stage
//! lands there at a tight tolerance can end in a step-size underflow (reported, never
//! silent).
//!
//! # Through the generated code
//!
//! The right-hand side of [`crate::simulate::simulate_lagrange`] is [`lagrange_qdd`]: where a
//! generated chart is healthy (health `≥` [`CHART_RHS_HEALTH`]) the accelerations come from
//! its straight-line basis and dependent solve with a static Cholesky of `Dᵀ M D` (the
//! Whipple bicycle: 2.4 µs against 6.3 µs for the SVD solve, `cargo bench -p mechgen
//! --bench bicycle`); the SVD solve above takes every other state, with the same rank decision.
//! [`lagrange_accelerations`] takes the same chart for the multipliers too, `C_Jᵀ λ = M q̈ − f`
//! on the chart's dependent columns (a regular square block there; models without redundant
//! rows), and the SVD solve everywhere else.
//!
//! # Mass check
//!
//! `M` is tested on the constraint null space, `Nᵀ M N` (the same test as the projection
//! method's `Dᵀ M D`: `D` and `N` span the same space): a negative eigenvalue is
//! [`DynamicsError::IndefiniteMass`], one below `1e-14 λ_max` is
//! [`DynamicsError::SingularAugmented`]. `M` itself may be singular in directions the
//! constraints forbid (massless coordinates fixed by constraints).

use nalgebra::{DMatrix, DVector, SMatrix, SVector};

use crate::error::{largest_of_motion, non_finite_entries, DynamicsError};
use crate::linalg::{self, MassFailure};
use crate::mechanism::Dynamics;
use crate::null_space::{healthy_generated_partition, NullSpacePath};

/// Relative cut of the numerical rank of `C_J`: singular values `≤ RANK_RTOL · σ_max` are
/// treated as zero (`√ε`, see the [module documentation](self)).
pub const RANK_RTOL: f64 = 1.4901161193847656e-8;

/// The cut of the rank-drop guard of [`crate::simulate::simulate_lagrange`] on the ratio
/// `σ_r / σ_max` of `C_J` (`r = NQ − DOF`, the model's generic rank): `√RANK_RTOL = 2⁻¹³ ≈
/// 1.2e-4`, the same cut [`RANK_RTOL`] applied to the squared singular values (the
/// eigenvalues of `C_J C_Jᵀ`).
///
/// Why squared: the index-1 formulation keeps whatever constraint defect `c = C(q)` a step
/// leaves (the post-step projection removes it only at accepted states), so within a step
/// the motion follows the level set `C = c`. Near a bifurcation (two branches crossing, a
/// rank drop of `C_J`) that level set is two hyperbola-like curves that do not meet: it keeps
/// a distance `≈ √|c|` from the crossing, where `σ_r ∝` that distance, and it turns onto
/// the other branch. Measured on A02 (N = 1, rtol 1e-6 and 1e-8): at every flat position
/// the accepted states reach `σ_r / σ_max = 2.6e-7 … 6.8e-7` (never the solve's cut
/// `1.5e-8`: the step size collapses first, to ~4e-8 s), the multipliers grow from ~13 to
/// 1e12 … 1e14, and the run continues on either branch. A regular motion of a regular
/// mechanism does not come near `σ_r / σ_max = 1.2e-4`.
pub const RANK_DROP_RATIO: f64 = 1.220703125e-4;

/// The leading singular triplets of `C_J` up to a rank `r`: `u` (`NC × r`), `v` (`NQ × r`),
/// `sigma` (descending), and `ratio = σ_r / σ_max` (0 for a vanishing Jacobian).
pub(crate) struct RowSpace {
    pub(crate) u: DMatrix<f64>,
    pub(crate) v: DMatrix<f64>,
    pub(crate) sigma: Vec<f64>,
    pub(crate) ratio: f64,
}

/// The SVD of `j` (padded to at least `NQ` rows so that `V` is complete), the singular
/// values ordered by decreasing size: `(U, Vᵀ, σ, order)`. `None` when the SVD fails.
#[allow(clippy::type_complexity)]
fn ordered_svd<const NQ: usize, const NC: usize>(
    j: &SMatrix<f64, NC, NQ>,
) -> Option<(DMatrix<f64>, DMatrix<f64>, DVector<f64>, Vec<usize>)> {
    let rows = NC.max(NQ);
    let mut jp = DMatrix::<f64>::zeros(rows, NQ);
    jp.view_mut((0, 0), (NC, NQ)).copy_from(j);
    let svd = linalg::svd(jp)?;
    let (u, vt) = (svd.u?, svd.v_t?);
    let sv = svd.singular_values;
    if vt.nrows() != NQ || sv.len() != NQ {
        return None;
    }
    // Order by decreasing singular value (nalgebra does not promise an order).
    let mut order: Vec<usize> = (0..NQ).collect();
    order.sort_by(|&a, &b| sv[b].total_cmp(&sv[a]).then(a.cmp(&b)));
    Some((u, vt, sv, order))
}

/// The leading `r` singular triplets of `j` (`1 ≤ r ≤ min(NC, NQ)`); `None` for a
/// non-finite `j` or a failed SVD.
pub(crate) fn row_space<const NQ: usize, const NC: usize>(
    j: &SMatrix<f64, NC, NQ>,
    r: usize,
) -> Option<RowSpace> {
    if r == 0 || r > NC.min(NQ) || !linalg::finite(j.as_slice()) {
        return None;
    }
    let (u, vt, sv, order) = ordered_svd::<NQ, NC>(j)?;
    let lead = &order[..r];
    let sigma: Vec<f64> = lead.iter().map(|&k| sv[k]).collect();
    let smax = sigma[0];
    let ratio = if smax > 0.0 { sigma[r - 1] / smax } else { 0.0 };
    Some(RowSpace {
        u: DMatrix::<f64>::from_fn(NC, r, |i, a| u[(i, lead[a])]),
        v: DMatrix::<f64>::from_fn(NQ, r, |c, a| vt[(lead[a], c)]),
        sigma,
        ratio,
    })
}

/// The leading `r` singular values of `j` (`1 ≤ r ≤ min(NC, NQ)`), decreasing, from the
/// eigenvalues of `j jᵀ` (`NC × NC`, symmetric): an order cheaper than [`row_space`]'s SVD
/// with its singular vectors (IFToMM A02 with 40 windows: 14 million instructions per
/// `80 × 81` SVD, half of its simulation by projection). Squaring costs digits of the small
/// ones: `σ_r / σ_1` is accurate to about `NC ε / (σ_r / σ_1)²` relative (1e-6 at a
/// ratio of 1e-5), enough to compare with the rank-drop thresholds (1.2e-4 and above);
/// below `~1e-7` it only says "small". `None` for a non-finite `j` or eigenvalues.
pub(crate) fn leading_singular_values<const NQ: usize, const NC: usize>(
    j: &SMatrix<f64, NC, NQ>,
    r: usize,
) -> Option<Vec<f64>> {
    if r == 0 || r > NC.min(NQ) || !linalg::finite(j.as_slice()) {
        return None;
    }
    let g = linalg::dmatrix(j);
    let gram = &g * g.transpose();
    let mut lambda: Vec<f64> = gram.symmetric_eigenvalues().iter().copied().collect();
    if !linalg::finite(&lambda) {
        return None;
    }
    lambda.sort_by(|a, b| b.total_cmp(a));
    Some(lambda[..r].iter().map(|&l| l.max(0.0).sqrt()).collect())
}

/// What [`lagrange_qdd`] returns: the accelerations and the chart that served them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LagrangeQdd<const NQ: usize> {
    /// `q̈`.
    pub qdd: SVector<f64, NQ>,
    /// The generated chart that computed `q̈` ([`NullSpacePath::Static`] or
    /// [`NullSpacePath::Atlas`], with its health); `None` where the SVD solve did.
    pub path: Option<NullSpacePath>,
}

/// Accelerations and multipliers of the Lagrange formulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LagrangeAccelerations<const NQ: usize, const NC: usize> {
    /// `q̈`.
    pub qdd: SVector<f64, NQ>,
    /// `λ` (`M q̈ = f + C_Jᵀ λ`), minimum-norm when `C_J` has lost rank.
    pub lambda: SVector<f64, NC>,
    /// The numerical rank of `C_J` used (`NC` for independent constraints).
    pub rank: usize,
}

/// Non-finite error for a vector indexed by coordinates (`names`) or equations (`&[]`).
pub(crate) fn nonfinite(
    what: &'static str,
    t: f64,
    v: &[f64],
    names: &[&'static str],
) -> DynamicsError {
    DynamicsError::NonFinite {
        what,
        t,
        entries: non_finite_entries(v, names),
    }
}

/// Checks a vector or matrix (rows indexed by `names`, or equations) for non-finite values.
pub(crate) fn check_finite(
    what: &'static str,
    t: f64,
    v: &[f64],
    rows: usize,
    names: &[&'static str],
) -> Result<(), DynamicsError> {
    if linalg::finite(v) {
        return Ok(());
    }
    // Column-major: entry k is row k % rows; name the row.
    let mut per_row = vec![0.0f64; rows.max(1)];
    for (k, &x) in v.iter().enumerate() {
        if !x.is_finite() {
            let r = k % rows.max(1);
            if per_row[r].is_finite() {
                per_row[r] = x;
            }
        }
    }
    Err(nonfinite(what, t, &per_row, names))
}

/// Solves the augmented Lagrange system at `(q, q̇)` with one rank decision (see the
/// [module documentation](self)); `baumgarte_tau = Some(τ)` adds the stabilisation terms
/// `−(2/τ) Ċ − (1/τ²) C` to the right-hand side. Where a generated chart serves
/// ([`lagrange_qdd`]) and the model has no redundant rows, `q̈` and `λ` come from it (full rank:
/// the unique solution, equal to the SVD solve's to rounding, `rank = NC`); elsewhere from
/// the SVD solve ([`lagrange_accelerations_svd`]).
///
/// Like every right-hand side here it is defined at any `(q, q̇)`, on the constraints or
/// off them (the Lagrange route integrates states that drift off them; Baumgarte's terms
/// pull them back). Off them the numbers are those of the same formulas, not the
/// accelerations of an assembled state: check `M::residual(q, p, t)` and
/// `M::jacobian(q, p, t) · q̇`, or assemble (`crate::assemble::assemble`) first when the
/// state does not come from a simulation.
///
/// Errors: [`DynamicsError::IndefiniteMass`] (negative mass on the allowed motions),
/// [`DynamicsError::SingularAugmented`] (a motion without inertia), naming the largest
/// components of the offending motion; [`DynamicsError::NonFinite`] naming the entries of
/// the inputs, generated terms or accelerations that are NaN or infinite;
/// [`DynamicsError::InvalidOptions`] for `τ ≤ 0`;
/// [`DynamicsError::Kinematics`] when the SVD fails.
pub fn lagrange_accelerations<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    baumgarte_tau: Option<f64>,
) -> Result<LagrangeAccelerations<NQ, NC>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let terms = Terms::<NQ, NC>::of::<M, DOF>(q, qd, p, t, baumgarte_tau)?;
    if NC + DOF == NQ {
        if let Some((qdd, _, independent)) = terms.chart_qdd::<M, DOF>(q, p, t) {
            let j = match terms.j {
                Some(j) => j,
                None => Terms::<NQ, NC>::jacobian::<M, DOF>(q, p, t)?,
            };
            if let Some(lambda) = chart_multipliers(&j, &independent, &(terms.mass * qdd - terms.f))
            {
                return Ok(LagrangeAccelerations {
                    qdd,
                    lambda,
                    rank: NC,
                });
            }
        }
    }
    terms.svd_solve::<M, DOF>(q, qd, p, t)
}

/// [`lagrange_accelerations`] by the SVD solve always (no generated chart): the reference the
/// chart route is tested against.
#[doc(hidden)]
pub fn lagrange_accelerations_svd<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    baumgarte_tau: Option<f64>,
) -> Result<LagrangeAccelerations<NQ, NC>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let terms = Terms::<NQ, NC>::of::<M, DOF>(q, qd, p, t, baumgarte_tau)?;
    terms.svd_solve::<M, DOF>(q, qd, p, t)
}

/// The multipliers from a healthy chart without redundant rows: `C_Jᵀ λ = M q̈ − f` on the
/// chart's dependent columns, a square block that is regular where the chart is healthy
/// (the other columns hold by `Dᵀ (M q̈ − f) = 0`). `None` when the block's LU fails or the
/// result is not finite.
fn chart_multipliers<const NQ: usize, const NC: usize, const DOF: usize>(
    j: &SMatrix<f64, NC, NQ>,
    independent: &[usize; DOF],
    r: &SVector<f64, NQ>,
) -> Option<SVector<f64, NC>> {
    if NC == 0 {
        return Some(SVector::zeros());
    }
    let dep: Vec<usize> = (0..NQ).filter(|c| !independent.contains(c)).collect();
    if dep.len() != NC {
        return None;
    }
    let jdep_t = SMatrix::<f64, NC, NC>::from_fn(|k, i| j[(i, dep[k])]);
    let r_dep = SVector::<f64, NC>::from_fn(|k, _| r[dep[k]]);
    let lambda = crate::linalg::lu_solve(jdep_t, r_dep).ok()?;
    linalg::finite(lambda.as_slice()).then_some(lambda)
}

/// The accelerations `q̈` of [`lagrange_accelerations`] without the multipliers, the
/// right-hand side of [`crate::simulate::simulate_lagrange`]. Where a generated chart (the primary
/// one, then the pivot atlas's) has health at least [`CHART_RHS_HEALTH`], `q̈` comes from
/// the generated straight-line code as in the projection method — `C_J z = d` by the
/// chart's dependent solve (zero independent part; with redundant constraints on the rows
/// the chart keeps, the others being consistent with them on the manifold),
/// `(Dᵀ M D) w = Dᵀ (f − M z)` by a static Cholesky, `q̈ = D w + z` — with no SVD and no
/// heap allocation. That is the same `q̈` as the SVD solve's (the unique solution of
/// `C_J q̈ = d`, `Dᵀ (M q̈ − f) = 0`, `D` spanning the null space): a chart that healthy
/// has a regular dependent block, so `C_J` has full rank and the SVD's cut keeps every row
/// (`tests/lagrange_chart.rs` checks both at states approaching singular ones). Off the
/// manifold (a Runge–Kutta stage) the two differ by the state's constraint defect. Anywhere
/// else (no healthy chart, a reduced mass the Cholesky test does not accept) the SVD solve decides, and reports errors, as in [`lagrange_accelerations`].
/// Returns `q̈` and the chart that served it.
///
/// Errors as [`lagrange_accelerations`].
pub fn lagrange_qdd<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    baumgarte_tau: Option<f64>,
) -> Result<LagrangeQdd<NQ>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let terms = Terms::<NQ, NC>::of::<M, DOF>(q, qd, p, t, baumgarte_tau)?;
    if let Some((qdd, path, _)) = terms.chart_qdd::<M, DOF>(q, p, t) {
        return Ok(LagrangeQdd {
            qdd,
            path: Some(path),
        });
    }
    terms.svd_solve::<M, DOF>(q, qd, p, t).map(|a| LagrangeQdd {
        qdd: a.qdd,
        path: None,
    })
}

/// The health a generated chart must show for [`lagrange_qdd`] to compute `q̈` through it:
/// `1e-3`, the level below which the generated `null_space` consults the atlas's further
/// charts (a thousand times the projection method's [`crate::null_space::DEFAULT_PIVOT_THRESHOLD`]: the
/// SVD solve takes over well before a chart degrades).
pub const CHART_RHS_HEALTH: f64 = 1e-3;

/// The checked terms of the augmented system at one state: `M`, `f`, `d` and (when computed)
/// `C_J`.
struct Terms<const NQ: usize, const NC: usize> {
    mass: SMatrix<f64, NQ, NQ>,
    f: SVector<f64, NQ>,
    d: SVector<f64, NC>,
    /// Computed with the Baumgarte terms, else on demand by the SVD solve.
    j: Option<SMatrix<f64, NC, NQ>>,
}

impl<const NQ: usize, const NC: usize> Terms<NQ, NC> {
    fn of<M, const DOF: usize>(
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
        baumgarte_tau: Option<f64>,
    ) -> Result<Self, DynamicsError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        let names: &[&'static str] = &M::COORD_NAMES;
        if let Some(tau) = baumgarte_tau {
            if !(tau.is_finite() && tau > 0.0) {
                return Err(DynamicsError::InvalidOptions(
                    "Baumgarte time constant must be positive and finite",
                ));
            }
        }
        check_finite("q", t, q.as_slice(), NQ, names)?;
        check_finite("qd", t, qd.as_slice(), NQ, names)?;
        let mass = M::mass_matrix(q, p, t);
        check_finite("mass matrix", t, mass.as_slice(), NQ, names)?;
        let f = M::forces(q, qd, p, t);
        check_finite("forces", t, f.as_slice(), NQ, names)?;
        let mut d = M::gamma(q, qd, p, t);
        check_finite("gamma", t, d.as_slice(), NC, &[])?;
        let mut j = None;
        if let Some(tau) = baumgarte_tau {
            let jq = Self::jacobian::<M, DOF>(q, p, t)?;
            let c = M::residual(q, p, t);
            let cdot = jq * qd + M::jacobian_t(q, p, t);
            d -= cdot * (2.0 / tau) + c * (1.0 / (tau * tau));
            check_finite("Baumgarte right-hand side", t, d.as_slice(), NC, &[])?;
            j = Some(jq);
        }
        Ok(Terms { mass, f, d, j })
    }

    fn jacobian<M, const DOF: usize>(
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Result<SMatrix<f64, NC, NQ>, DynamicsError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        let j = M::jacobian(q, p, t);
        check_finite("jacobian", t, j.as_slice(), NC, &[])?;
        Ok(j)
    }

    /// `q̈` through a healthy generated chart ([`lagrange_qdd`]); `None` where that route
    /// does not apply or any of its steps fails, leaving the SVD solve to decide.
    fn chart_qdd<M, const DOF: usize>(
        &self,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Option<(SVector<f64, NQ>, NullSpacePath, [usize; DOF])>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        if NC + DOF < NQ {
            return None;
        }
        let part = healthy_generated_partition::<M, NQ, NC, DOF>(q, p, t, CHART_RHS_HEALTH)?;
        let z = part.solve_dependent::<M, NC>(q, p, t, &self.d).ok()?;
        let dm = &part.d;
        let nz = M::MASS_NONZEROS;
        let r = self.f - linalg::mass_mul(nz, &self.mass, &z);
        let (a, b) = linalg::reduced_system(nz, &self.mass, dm, &part.independent, &r);
        // The projection method's definiteness test and solve.
        let qdd = dm * linalg::definite_solve(&a, &b)? + z;
        linalg::finite(qdd.as_slice()).then_some((qdd, part.path, part.independent))
    }

    fn svd_solve<M, const DOF: usize>(
        &self,
        q: &SVector<f64, NQ>,
        qd: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
    ) -> Result<LagrangeAccelerations<NQ, NC>, DynamicsError>
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        let j = match self.j {
            Some(j) => j,
            None => Self::jacobian::<M, DOF>(q, p, t)?,
        };
        let names: &[&'static str] = &M::COORD_NAMES;
        solve::<NQ, NC>(&self.mass, &self.f, &j, &self.d, t, q, qd, names, DOF)
    }
}

/// The SVD-based solve of the module documentation.
#[allow(clippy::too_many_arguments)]
fn solve<const NQ: usize, const NC: usize>(
    mass: &SMatrix<f64, NQ, NQ>,
    f: &SVector<f64, NQ>,
    j: &SMatrix<f64, NC, NQ>,
    d: &SVector<f64, NC>,
    t: f64,
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    names: &[&'static str],
    dof: usize,
) -> Result<LagrangeAccelerations<NQ, NC>, DynamicsError> {
    if dof > NQ {
        return Err(DynamicsError::Kinematics(
            crate::error::KinematicsError::InvalidModel("DOF exceeds NQ"),
        ));
    }
    let svd_failed = || {
        DynamicsError::Kinematics(crate::error::KinematicsError::DecompositionFailed {
            what: "SVD of the constraint Jacobian",
        })
    };
    let (u, vt, sv, order) = ordered_svd::<NQ, NC>(j).ok_or_else(svd_failed)?;
    let (u, vt) = (&u, &vt);
    let smax = sv[order[0]];
    // Never above the model's generic rank NQ − DOF: with redundant rows, a further
    // singular value is the stage state's distance from the manifold, not a constraint.
    let rank = order
        .iter()
        .take_while(|&&k| sv[k] > RANK_RTOL * smax && sv[k] > 0.0)
        .count()
        .min(NC)
        .min(NQ.saturating_sub(dof));
    let (range, null) = order.split_at(rank);
    // Particular solution V_r Σ_r⁻¹ U_rᵀ d.
    let mut qdd_p = SVector::<f64, NQ>::zeros();
    for &k in range {
        let coef = (0..NC).map(|i| u[(i, k)] * d[i]).sum::<f64>() / sv[k];
        for c in 0..NQ {
            qdd_p[c] += coef * vt[(k, c)];
        }
    }
    // The directions the kept rows leave free: Z = V_{r+1..NQ}.
    let z = DMatrix::<f64>::from_fn(NQ, null.len(), |c, a| vt[(null[a], c)]);
    let nb = free_directions(&z, qd, NQ.saturating_sub(dof), dof, rank);
    let md = linalg::dmatrix(mass);
    let reduced = nb.tr_mul(&(&md * &nb));
    let rhs_full = f - mass * qdd_p;
    let rhs = nb.tr_mul(&DVector::from_column_slice(rhs_full.as_slice()));
    if !linalg::finite(rhs.as_slice()) || !linalg::finite(qdd_p.as_slice()) {
        // Forces or γ too large to combine (e.g. a stiffness of 1e308).
        let mut v = rhs_full;
        for (x, y) in v.iter_mut().zip(qdd_p.iter()) {
            if !y.is_finite() {
                *x = *y;
            }
        }
        return Err(nonfinite("accelerations", t, v.as_slice(), names));
    }
    let direction = |v: &DVector<f64>| largest_of_motion(&nb * v, names);
    let w = linalg::reduced_mass_solve(reduced, &rhs).map_err(|e| match e {
        MassFailure::NonFinite => nonfinite("accelerations", t, rhs_full.as_slice(), names),
        MassFailure::Indefinite(lmin, lmax, v) => DynamicsError::IndefiniteMass {
            t,
            matrix: "NᵀMN",
            min_eigenvalue: lmin,
            max_eigenvalue: lmax,
            direction: direction(&v),
            q: q.as_slice().to_vec(),
        },
        MassFailure::Singular(v) => DynamicsError::SingularAugmented {
            t,
            q: q.as_slice().to_vec(),
            qd: qd.as_slice().to_vec(),
            direction: direction(&v),
        },
    })?;
    let nw = &nb * w;
    let qdd = SVector::<f64, NQ>::from_fn(|i, _| qdd_p[i] + nw[i]);
    if !linalg::finite(qdd.as_slice()) {
        return Err(nonfinite("accelerations", t, qdd.as_slice(), names));
    }
    // λ = U_r Σ_r⁻¹ V_rᵀ (M q̈ − f).
    let res = mass * qdd - f;
    let mut lambda = SVector::<f64, NC>::zeros();
    for &k in range {
        let coef = (0..NQ).map(|c| vt[(k, c)] * res[c]).sum::<f64>() / sv[k];
        for i in 0..NC {
            lambda[i] += coef * u[(i, k)];
        }
    }
    if !linalg::finite(lambda.as_slice()) {
        return Err(nonfinite("multipliers", t, lambda.as_slice(), &[]));
    }
    Ok(LagrangeAccelerations { qdd, lambda, rank })
}

/// The motions left free among the directions `Z` (orthonormal columns, `NQ × nz`) that the
/// kept rows of `C_J` do not constrain.
///
/// With `rank ≥ r0 = NQ − DOF` (independent or redundant rows, no rank loss) all of `Z` is
/// free. Below the model's generic rank the configuration is singular (a flat position), not
/// more mobile: `DOF` free directions are kept — the velocity's component in `Z` first, so
/// that the motion continues along its branch — and the other `r0 − rank` get zero
/// acceleration, as the lost rows would impose in the limit along a branch that does not
/// turn into them (the parallelogram's windows stay parallelograms). With `q̇` (nearly)
/// orthogonal to `Z` there is no branch to follow and all of `Z` is free (the released
/// linkage's accelerations).
fn free_directions<const NQ: usize>(
    z: &DMatrix<f64>,
    qd: &SVector<f64, NQ>,
    r0: usize,
    dof: usize,
    rank: usize,
) -> DMatrix<f64> {
    let nz = z.ncols();
    if rank >= r0 || dof >= nz {
        return z.clone();
    }
    let c = z.tr_mul(&DVector::from_column_slice(qd.as_slice()));
    let cn = c.norm();
    if !(cn.is_finite() && cn > 1e-8 * qd.norm() && cn > 0.0) {
        return z.clone();
    }
    // Householder reflector H (nz × nz) with H e₁ = ĉ: its columns are an orthonormal basis
    // of R^nz starting with ĉ.
    let w = c / cn;
    let mut v = w.clone();
    v[0] -= 1.0;
    let vn = v.norm();
    let h = if vn > 1e-12 {
        let v = v / vn;
        DMatrix::<f64>::identity(nz, nz) - &v * v.transpose() * 2.0
    } else {
        DMatrix::<f64>::identity(nz, nz)
    };
    z * h.columns(0, dof)
}

/// The Lagrange right-hand side `(q̇, q̈)` of the state `(q, q̇)`, `q̈` by [`lagrange_qdd`].
///
/// Errors as [`lagrange_accelerations`].
pub fn lagrange_rhs<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    baumgarte_tau: Option<f64>,
) -> Result<(SVector<f64, NQ>, SVector<f64, NQ>), DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    lagrange_qdd::<M, NQ, NC, DOF>(q, qd, p, t, baumgarte_tau).map(|a| (*qd, a.qdd))
}
