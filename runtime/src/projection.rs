//! Projection-method dynamics (Blajer): the state is `(q, u)` with `u` the independent
//! velocities, and
//!
//! ```text
//! q̇ = D u + x_t,               C_J x_t = −C_t        (x_t = 0 for scleronomic constraints)
//! Dᵀ M D u̇ = Dᵀ (f − M Ḋu),    C_J Ḋu = γ(q, q̇)      (zero independent part)
//! q̈ = D u̇ + Ḋu
//! ```
//!
//! `C_J q̈ = γ` holds because `C_J D = 0`; `Ḋu` (which here also carries the rheonomic
//! terms) has zero independent part because `D` has constant identity rows there.
//! `Dᵀ M D` is tested for definiteness by its eigenvalues (a negative one is
//! [`DynamicsError::IndefiniteMass`], one below `1e-14 λ_max` [`DynamicsError::SingularReducedMass`])
//! and solved. The multipliers follow from `M q̈ = f + C_Jᵀ λ`.
//!
//! [`projection_accelerations_numeric`] is an independent numeric route (SVD basis of
//! `C_J`, minimum-norm particular solution) for cross-checks and benchmarks.

use nalgebra::{DMatrix, DVector, SMatrix, SVector};

use crate::error::{
    largest_entries, largest_of_motion, non_finite_entries, DynamicsError, KinematicsError,
};
use crate::lagrange::check_finite;
use crate::linalg::{self, DependentFactor, MassFailure};
use crate::mechanism::Dynamics;
use crate::null_space::{partition, partition_in, Chart, NullSpacePath, Partition};

/// Velocities and accelerations of the projection method at one state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProjectionAccelerations<const NQ: usize, const DOF: usize> {
    /// Full velocity `q̇ = D u + x_t`.
    pub qd: SVector<f64, NQ>,
    /// Full acceleration `q̈ = D u̇ + Ḋu`.
    pub qdd: SVector<f64, NQ>,
    /// Independent accelerations `u̇`.
    pub ud: SVector<f64, DOF>,
    /// How the null-space basis was obtained (`None` on the numeric route).
    pub path: Option<NullSpacePath>,
}

fn nonfinite(what: &'static str, t: f64) -> DynamicsError {
    DynamicsError::NonFinite {
        what,
        t,
        entries: Vec::new(),
    }
}

/// Solves `Dᵀ M D x = Dᵀ rhs`, given `a = Dᵀ M D` and `b = Dᵀ rhs`, after the definiteness test of
/// [`linalg::reduced_mass_solve`]
/// (the same test as the Lagrange route's `Nᵀ M N`), with errors that name the largest
/// components of the offending motion `D v` (and the non-finite entries of `b`).
#[allow(clippy::too_many_arguments)]
fn reduced_solve<const NQ: usize, const DOF: usize>(
    d: &SMatrix<f64, NQ, DOF>,
    (a, b): (SMatrix<f64, DOF, DOF>, SVector<f64, DOF>),
    rhs: &SVector<f64, NQ>,
    names: &[&'static str],
    t: f64,
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
) -> Result<SVector<f64, DOF>, DynamicsError> {
    if !linalg::finite(rhs.as_slice()) {
        return Err(DynamicsError::NonFinite {
            what: "generalised forces f − M Ḋu",
            t,
            entries: non_finite_entries(rhs.as_slice(), names),
        });
    }
    if !linalg::finite(b.as_slice()) {
        // Finite forces too large to combine (e.g. a stiffness of 1e308): name the largest.
        return Err(DynamicsError::NonFinite {
            what: "reduced forces Dᵀ(f − M Ḋu) (overflow); largest forces",
            t,
            entries: largest_entries(rhs.as_slice(), names),
        });
    }
    // Fast path, no allocation: a static Cholesky that proves DᵀMD definite. Anything else
    // takes the eigenvalue path below, which classifies the failure (indefinite, singular,
    // NaN).
    if let Some(x) = linalg::definite_solve(&a, &b) {
        return Ok(x);
    }
    let direction =
        |v: &DVector<f64>| largest_of_motion(d * SVector::<f64, DOF>::from_fn(|i, _| v[i]), names);
    let x = linalg::reduced_mass_solve(
        linalg::dmatrix(&a),
        &DVector::from_column_slice(b.as_slice()),
    )
    .map_err(|e| match e {
        MassFailure::NonFinite => DynamicsError::NonFinite {
            what: "reduced mass matrix DᵀMD",
            t,
            entries: Vec::new(),
        },
        MassFailure::Indefinite(lmin, lmax, v) => DynamicsError::IndefiniteMass {
            t,
            matrix: "DᵀMD",
            min_eigenvalue: lmin,
            max_eigenvalue: lmax,
            direction: direction(&v),
            q: q.as_slice().to_vec(),
        },
        MassFailure::Singular(v) => DynamicsError::SingularReducedMass {
            t,
            q: q.as_slice().to_vec(),
            u: u.as_slice().to_vec(),
            direction: direction(&v),
        },
    })?;
    let x = SVector::<f64, DOF>::from_fn(|i, _| x[i]);
    if !linalg::finite(x.as_slice()) {
        return Err(DynamicsError::NonFinite {
            what: "independent accelerations",
            t,
            entries: non_finite_entries(x.as_slice(), &[]),
        });
    }
    Ok(x)
}

/// Projection-method accelerations at `(q, u)`.
///
/// This is a right-hand side: it is defined, and computed without complaint, at any `q`,
/// on the constraints or off them (an integrator's stages are off them by its local error;
/// the projection route projects after each step). At a `q` off the constraints the
/// numbers are those of the same formulas there, not the accelerations of any assembled
/// state: check `M::residual(q, p, t)` or assemble (`crate::assemble::assemble`) first
/// when `q` does not come from a simulation.
///
/// `threshold` is the smallest relative static pivot trusted (below it the numeric
/// same-coordinate partition is used; see [`crate::null_space`]).
///
/// Errors: [`DynamicsError::SingularReducedMass`] (with time and state) when `DᵀMD` is
/// not positive definite, [`DynamicsError::Kinematics`] when the independent coordinates
/// do not parametrise the mechanism at `q`, [`DynamicsError::NonFinite`].
pub fn projection_accelerations<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<ProjectionAccelerations<NQ, DOF>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if !linalg::finite(u.as_slice()) {
        return Err(nonfinite("u", t));
    }
    let part = partition::<M, NQ, NC, DOF>(q, p, t, threshold)?;
    let mut mass = SMatrix::<f64, NQ, NQ>::zeros();
    accelerations_with::<M, NQ, NC, DOF>(&part, q, u, p, t, &mut mass)
}

/// [`projection_accelerations`] in the chart `chart`: `u` are the velocities of
/// `chart.independent()`, and `u̇` is returned in the same order. The generated code serves
/// the generated chart (when healthy); any other chart uses a numeric factorisation of its
/// dependent Jacobian columns ([`crate::null_space::Chart`]).
///
/// Errors as [`projection_accelerations`].
pub fn projection_accelerations_in<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<ProjectionAccelerations<NQ, DOF>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let mut mass = SMatrix::<f64, NQ, NQ>::zeros();
    accelerations_in_buffer::<M, NQ, NC, DOF>(chart, q, u, p, t, threshold, &mut mass)
}

/// [`projection_accelerations_in`] with the mass matrix written into `mass`, a buffer the
/// caller zeroed once and reuses for the same model (the simulation routes: generated
/// models write only the structural nonzeros, [`Dynamics::mass_matrix_into`]).
pub(crate) fn accelerations_in_buffer<M, const NQ: usize, const NC: usize, const DOF: usize>(
    chart: &Chart<DOF>,
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    threshold: f64,
    mass: &mut SMatrix<f64, NQ, NQ>,
) -> Result<ProjectionAccelerations<NQ, DOF>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if !linalg::finite(u.as_slice()) {
        return Err(nonfinite("u", t));
    }
    let part = partition_in::<M, NQ, NC, DOF>(chart, q, p, t, threshold)?;
    accelerations_with::<M, NQ, NC, DOF>(&part, q, u, p, t, mass)
}

fn accelerations_with<M, const NQ: usize, const NC: usize, const DOF: usize>(
    part: &Partition<NQ, DOF>,
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    mass: &mut SMatrix<f64, NQ, NQ>,
) -> Result<ProjectionAccelerations<NQ, DOF>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let d = part.d;
    let ct = M::jacobian_t(q, p, t);
    if !linalg::finite(ct.as_slice()) {
        return Err(nonfinite("jacobian_t", t));
    }
    let qd = part.velocity::<M, NC>(q, u, p, t, &ct)?;
    let gamma = M::gamma(q, &qd, p, t);
    if !linalg::finite(gamma.as_slice()) {
        return Err(nonfinite("gamma", t));
    }
    let du = part.solve_dependent::<M, NC>(q, p, t, &gamma)?;
    M::mass_matrix_into(q, p, t, mass);
    let mass = &*mass;
    let f = M::forces(q, &qd, p, t);
    let names: &[&'static str] = &M::COORD_NAMES;
    let nz = M::MASS_NONZEROS;
    if nz.is_none() {
        // The dense product skips exact zeros of the vector it multiplies, so a NaN in a
        // column of `M` against a zero could vanish: checked before it is used.
        check_finite("mass matrix", t, mass.as_slice(), NQ, names)?;
    }
    let rhs = f - linalg::mass_mul(nz, mass, &du);
    let system = linalg::reduced_system(nz, mass, &d, &part.independent, &rhs);
    // With the listed nonzeros, a non-finite entry of `M` (`mass_mul` multiplies each
    // listed entry by every column, zeros included) or of `f` makes `rhs` or `DᵀMD`
    // non-finite, which `reduced_solve` refuses; only then are `M` and `f` checked, to name
    // what was not finite (the checks cost 5 % of a Stewart right-hand side when done up
    // front on every call).
    let ud = reduced_solve(&d, system, &rhs, names, t, q, u).map_err(|e| {
        let named = if !linalg::mass_finite(nz, mass) {
            check_finite("mass matrix", t, mass.as_slice(), NQ, names).err()
        } else {
            check_finite("forces", t, f.as_slice(), NQ, names).err()
        };
        named.unwrap_or(e)
    })?;
    Ok(ProjectionAccelerations {
        qd,
        qdd: d * ud + du,
        ud,
        path: Some(part.path),
    })
}

/// The projection-method right-hand side `(q̇, u̇)` of the state `(q, u)`.
///
/// Errors as [`projection_accelerations`].
pub fn projection_rhs<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    threshold: f64,
) -> Result<(SVector<f64, NQ>, SVector<f64, DOF>), DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    projection_accelerations::<M, NQ, NC, DOF>(q, u, p, t, threshold).map(|a| (a.qd, a.ud))
}

/// Constraint forces: the multipliers `λ` of `M q̈ = f + C_Jᵀ λ`, given the accelerations
/// (least squares `C_Jᵀ λ = M q̈ − f` by SVD: minimum-norm `λ` with redundant
/// constraints).
///
/// Errors: non-finite values, SVD failure.
pub fn multipliers<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    qd: &SVector<f64, NQ>,
    qdd: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
) -> Result<SVector<f64, NC>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let j = M::jacobian(q, p, t);
    let mass = M::mass_matrix(q, p, t);
    let f = M::forces(q, qd, p, t);
    if !linalg::finite(j.as_slice())
        || !linalg::finite(mass.as_slice())
        || !linalg::finite(f.as_slice())
        || !linalg::finite(qdd.as_slice())
    {
        return Err(nonfinite(
            "jacobian, mass matrix, forces or accelerations",
            t,
        ));
    }
    let r = mass * qdd - f;
    let jt = linalg::dmatrix(&j.transpose());
    let (l, _) = linalg::lstsq(&jt, &DMatrix::from_column_slice(NQ, 1, r.as_slice()), 1e-13)
        .ok_or(DynamicsError::Kinematics(
            KinematicsError::DecompositionFailed {
                what: "SVD of the transposed Jacobian",
            },
        ))?;
    Ok(SVector::<f64, NC>::from_fn(|i, _| l[(i, 0)]))
}

/// The same right-hand side as [`projection_accelerations`] computed without the
/// generated null space or dependent solve: `q̇` from a numeric (full-pivot LU / least
/// squares) solve on the dependent columns of [`crate::Mechanism::jacobian`], `D` an
/// orthonormal basis from nalgebra's SVD of `C_J`, `q̈ = D w + z` with `z = C_J⁺ γ` and
/// `Dᵀ M D w = Dᵀ (f − M z)`, `u̇ = q̈[INDEPENDENT]`.
///
/// For cross-checks and as a benchmark baseline. Errors as [`projection_accelerations`];
/// [`KinematicsError::SingularPartition`] (wrapped) when the dependent columns are
/// singular (rcond below `1e-12`).
pub fn projection_accelerations_numeric<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
) -> Result<ProjectionAccelerations<NQ, DOF>, DynamicsError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    if !linalg::finite(q.as_slice()) || !linalg::finite(u.as_slice()) {
        return Err(nonfinite("q or u", t));
    }
    let j = M::jacobian(q, p, t);
    let ct = M::jacobian_t(q, p, t);
    if !linalg::finite(j.as_slice()) || !linalg::finite(ct.as_slice()) {
        return Err(nonfinite("jacobian or jacobian_t", t));
    }
    let jd = linalg::dmatrix(&j);
    let dep = linalg::dependent_indices(NQ, &M::INDEPENDENT).ok_or(
        KinematicsError::InvalidModel("INDEPENDENT has out-of-range or repeated indices"),
    )?;
    let factor = DependentFactor::new(&jd, dep).ok_or(KinematicsError::DecompositionFailed {
        what: "factorisation of the dependent Jacobian columns",
    })?;
    if factor.health < 1e-12 {
        return Err(KinematicsError::SingularPartition {
            t,
            static_pivot: M::null_space(q, p, t).1,
            health: factor.health,
        }
        .into());
    }
    // q̇: independent part u, dependent part from J_dep q̇_dep = −J_ind u − C_t.
    let mut qd = SVector::<f64, NQ>::zeros();
    for (k, &i) in M::INDEPENDENT.iter().enumerate() {
        qd[i] = u[k];
    }
    let rhs = -(j * qd) - ct;
    let xd = factor
        .solve(&DMatrix::from_column_slice(NC, 1, rhs.as_slice()))
        .ok_or(nonfinite("numeric dependent solve", t))?;
    for (k, &i) in factor.dep.iter().enumerate() {
        qd[i] = xd[(k, 0)];
    }
    let d = crate::null_space::svd_null_space::<NC, NQ, DOF>(&j)?;
    let gamma = M::gamma(q, &qd, p, t);
    if !linalg::finite(gamma.as_slice()) {
        return Err(nonfinite("gamma", t));
    }
    let (z, _) = linalg::lstsq(
        &jd,
        &DMatrix::from_column_slice(NC, 1, gamma.as_slice()),
        1e-13,
    )
    .ok_or(KinematicsError::DecompositionFailed {
        what: "SVD of the constraint Jacobian",
    })?;
    let z = SVector::<f64, NQ>::from_fn(|i, _| z[(i, 0)]);
    let mass = M::mass_matrix(q, p, t);
    let f = M::forces(q, &qd, p, t);
    let names: &[&'static str] = &M::COORD_NAMES;
    check_finite("mass matrix", t, mass.as_slice(), NQ, names)?;
    check_finite("forces", t, f.as_slice(), NQ, names)?;
    let rhs = f - mass * z;
    let system = (d.tr_mul(&(mass * d)), d.transpose() * rhs);
    let w = reduced_solve(&d, system, &rhs, names, t, q, u)?;
    let qdd = d * w + z;
    let mut ud = SVector::<f64, DOF>::zeros();
    for (k, &i) in M::INDEPENDENT.iter().enumerate() {
        ud[k] = qdd[i];
    }
    Ok(ProjectionAccelerations {
        qd,
        qdd,
        ud,
        path: None,
    })
}
