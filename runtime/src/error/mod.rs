//! Error types of the runtime solvers.
//!
//! Every fallible routine returns one of these enums; none of them panics on bad input,
//! and non-finite values are always reported instead of being passed on.

use std::fmt;

use nalgebra::allocator::Allocator;
use nalgebra::{DefaultAllocator, Dim, OVector};

mod simulation;
mod solvers;
pub use simulation::SimError;
pub use solvers::{ContactError, StepError};

/// One entry of a vector named in an error message: its index, the coordinate name where
/// the vector is indexed by coordinates (`None` for constraint equations), and its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Located {
    /// Index in the vector (coordinate or equation number).
    pub index: usize,
    /// Coordinate name ([`crate::Mechanism::COORD_NAMES`]), `None` for equations.
    pub name: Option<&'static str>,
    /// The value (a residual, a force, a component of a direction, …).
    pub value: f64,
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(n) => write!(f, "{n} (#{}) = {:.3e}", self.index, self.value),
            None => write!(f, "equation {} = {:.3e}", self.index, self.value),
        }
    }
}

/// Writes `a, b, c` (or `none`).
fn list(f: &mut fmt::Formatter<'_>, items: &[Located]) -> fmt::Result {
    if items.is_empty() {
        return write!(f, "none");
    }
    for (k, it) in items.iter().enumerate() {
        if k > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{it}")?;
    }
    Ok(())
}

/// How many entries an error message names at most.
pub const NAMED_ENTRIES: usize = 3;

/// The non-finite entries of `v` (at most three of them), named by `names`
/// when it has one name per entry.
pub(crate) fn non_finite_entries(v: &[f64], names: &[&'static str]) -> Vec<Located> {
    v.iter()
        .enumerate()
        .filter(|(_, x)| !x.is_finite())
        .take(NAMED_ENTRIES)
        .map(|(i, &x)| Located {
            index: i,
            name: (names.len() == v.len()).then(|| names[i]),
            value: x,
        })
        .collect()
}

/// The entries of `v` of largest magnitude (NaN first; at most three, zeros
/// left out), named by `names` when it has one name per entry.
pub(crate) fn largest_entries(v: &[f64], names: &[&'static str]) -> Vec<Located> {
    let mut idx: Vec<usize> = (0..v.len()).filter(|&i| v[i] != 0.0).collect();
    let key = |x: f64| if x.is_nan() { f64::INFINITY } else { x.abs() };
    idx.sort_by(|&a, &b| key(v[b]).total_cmp(&key(v[a])).then(a.cmp(&b)));
    idx.truncate(NAMED_ENTRIES);
    idx.into_iter()
        .map(|i| Located {
            index: i,
            name: (names.len() == v.len()).then(|| names[i]),
            value: v[i],
        })
        .collect()
}

/// [`largest_entries`] of the motion `m` scaled to unit length (a zero motion as it is):
/// the direction a failed reduced-mass solve names (`D v` on the projection route, `N v` on
/// the Lagrange route).
pub(crate) fn largest_of_motion<D>(m: OVector<f64, D>, names: &[&'static str]) -> Vec<Located>
where
    D: Dim,
    DefaultAllocator: Allocator<D>,
{
    let n = m.norm();
    let m = if n > 0.0 { m / n } else { m };
    largest_entries(m.as_slice(), names)
}

/// Failure of a kinematic computation: null-space basis, dependent solve, velocity
/// projection.
#[derive(Debug, Clone, PartialEq)]
pub enum KinematicsError {
    /// A generated function (or the input) produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite (`"jacobian"`, `"q"`, …).
        what: &'static str,
        /// Time of the evaluation.
        t: f64,
    },
    /// The independent coordinates do not parametrise the mechanism here: the Jacobian
    /// restricted to the dependent coordinates is (numerically) singular, so neither the
    /// static LU nor the numeric LU of the dependent columns can be used.
    SingularPartition {
        /// Time of the evaluation.
        t: f64,
        /// Smallest relative pivot of the generated (static) LU; NaN for a chart served by a
        /// numeric factorisation (no static LU).
        static_pivot: f64,
        /// Health `σ_min / σ_max` (or `min |U_kk| / max |U_kk|`) of the dependent columns.
        health: f64,
    },
    /// The model's constants are inconsistent (e.g. `INDEPENDENT` out of range).
    InvalidModel(&'static str),
    /// Unusable options (a pivot threshold that is NaN or outside `[0, 1]`).
    InvalidOptions(&'static str),
    /// A numeric decomposition failed (SVD did not converge, LU rank too low).
    DecompositionFailed {
        /// Which decomposition failed.
        what: &'static str,
    },
}

impl fmt::Display for KinematicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KinematicsError::NonFinite { what, t } => {
                write!(f, "non-finite value in {what} at t = {t}")
            }
            KinematicsError::SingularPartition {
                t,
                static_pivot,
                health,
            } if static_pivot.is_nan() => write!(
                // A chart served by a numeric factorisation has no static pivot (NaN marks
                // it): say so instead of printing a NaN that looks like a computed pivot.
                f,
                "the independent coordinates do not parametrise the mechanism at t = {t}: \
                 no static pivot (numeric chart), dependent-column health {health:.3e}"
            ),
            KinematicsError::SingularPartition {
                t,
                static_pivot,
                health,
            } => write!(
                f,
                "the independent coordinates do not parametrise the mechanism at t = {t}: \
                 static relative pivot {static_pivot:.3e}, dependent-column health {health:.3e}"
            ),
            KinematicsError::InvalidModel(why) => write!(f, "invalid model: {why}"),
            KinematicsError::InvalidOptions(why) => write!(f, "invalid options: {why}"),
            KinematicsError::DecompositionFailed { what } => {
                write!(f, "numeric decomposition failed: {what}")
            }
        }
    }
}

impl std::error::Error for KinematicsError {}

/// Failure of Newton assembly ([`crate::assemble::assemble`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AssemblyError {
    /// The options are unusable (non-positive or non-finite tolerance, zero iterations).
    InvalidOptions(&'static str),
    /// The model's constants are inconsistent (e.g. `INDEPENDENT` out of range).
    InvalidModel(&'static str),
    /// The input or a generated function produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite.
        what: &'static str,
        /// Newton iteration at which it was found.
        iteration: usize,
    },
    /// The Jacobian restricted to the dependent coordinates is singular and the residual
    /// cannot be reduced further.
    SingularJacobian {
        /// Newton iterations performed.
        iterations: usize,
        /// Euclidean norm of the residual at the last iterate.
        residual_norm: f64,
        /// Reciprocal condition `σ_min / σ_max` of the dependent columns.
        rcond: f64,
        /// The equations with the largest `|C|` at the last iterate (at most
        /// three).
        worst: Vec<Located>,
        /// The last iterate.
        q: Vec<f64>,
    },
    /// The requested independent coordinates are unreachable: with them held fixed, the
    /// least-squares point of `‖C‖` over the dependent coordinates leaves a residual above
    /// the tolerance (a four-bar's rocker beyond its toggle, a Cartesian pendulum with
    /// `|x| > l`).
    Unreachable {
        /// The independent coordinates held fixed, with their requested values.
        independent: Vec<Located>,
        /// `‖C‖` (Euclidean) at the least-squares point.
        residual_norm: f64,
        /// The equations with the largest `|C|` there (at most three).
        worst: Vec<Located>,
        /// The least-squares point.
        q: Vec<f64>,
    },
    /// Newton did not reach the tolerance (iteration limit, or no further decrease).
    NotConverged {
        /// Newton iterations performed.
        iterations: usize,
        /// Euclidean norm of the residual at the last iterate.
        residual_norm: f64,
        /// The equations with the largest `|C|` at the last iterate (at most
        /// three).
        worst: Vec<Located>,
        /// The last iterate.
        q: Vec<f64>,
    },
}

impl fmt::Display for AssemblyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssemblyError::InvalidOptions(why) => write!(f, "invalid assembly options: {why}"),
            AssemblyError::InvalidModel(why) => write!(f, "invalid model: {why}"),
            AssemblyError::NonFinite { what, iteration } => {
                write!(f, "non-finite {what} in assembly iteration {iteration}")
            }
            AssemblyError::SingularJacobian {
                iterations,
                residual_norm,
                rcond,
                worst,
                ..
            } => {
                write!(
                    f,
                    "assembly failed: singular Jacobian of the dependent coordinates \
                     (rcond {rcond:.3e}) after {iterations} iterations, |C| = {residual_norm:.3e}; \
                     largest residuals: "
                )?;
                list(f, worst)
            }
            AssemblyError::Unreachable {
                independent,
                residual_norm,
                worst,
                ..
            } => {
                write!(f, "the requested independent coordinates ")?;
                list(f, independent)?;
                write!(
                    f,
                    " are unreachable: the closest configuration leaves |C| = {residual_norm:.3e}; \
                     largest residuals: "
                )?;
                list(f, worst)
            }
            AssemblyError::NotConverged {
                iterations,
                residual_norm,
                worst,
                ..
            } => {
                write!(
                    f,
                    "assembly did not converge in {iterations} iterations, |C| = {residual_norm:.3e}; \
                     largest residuals: "
                )?;
                list(f, worst)
            }
        }
    }
}

impl std::error::Error for AssemblyError {}

/// Failure of a dynamics right-hand side (projection method or Lagrange multipliers).
///
/// The messages name at most three coordinates; the full state is kept in the
/// fields.
#[derive(Debug, Clone, PartialEq)]
pub enum DynamicsError {
    /// Unusable options (e.g. a non-positive Baumgarte time constant).
    InvalidOptions(&'static str),
    /// The null-space basis or a dependent solve failed (displayed as the kinematic error
    /// itself: this variant is transparent, [`std::error::Error::source`] gives the
    /// kinematic error's own cause).
    Kinematics(KinematicsError),
    /// The reduced mass matrix `Dᵀ M D` (projection method) or `Nᵀ M N` (Lagrange
    /// multipliers, `N` an orthonormal basis of the null space of `C_J`) is singular: some
    /// motion allowed by the constraints has no inertia.
    SingularReducedMass {
        /// Time of the evaluation.
        t: f64,
        /// Coordinates.
        q: Vec<f64>,
        /// Velocities: independent velocities `u` (projection method) or `q̇` (Lagrange).
        u: Vec<f64>,
        /// The largest components of the inertia-free motion `D w` (unit length).
        direction: Vec<Located>,
    },
    /// The augmented matrix `[M −C_Jᵀ; C_J 0]` is singular although `M` is positive
    /// definite on the null space of `C_J` (kept for callers that match on it; the
    /// Lagrange route reports rank loss of `C_J` by solving on its row space instead).
    SingularAugmented {
        /// Time of the evaluation.
        t: f64,
        /// Coordinates.
        q: Vec<f64>,
        /// Velocities.
        qd: Vec<f64>,
        /// The largest components of the inertia-free motion (unit length).
        direction: Vec<Located>,
    },
    /// The mass matrix is not positive definite on the motions the constraints allow: the
    /// reduced mass (`Dᵀ M D` or `Nᵀ M N`) has a negative (or NaN) eigenvalue — a negative
    /// mass or inertia.
    IndefiniteMass {
        /// Time of the evaluation.
        t: f64,
        /// Which reduced matrix was tested: `"DᵀMD"` or `"NᵀMN"`.
        matrix: &'static str,
        /// Its smallest eigenvalue.
        min_eigenvalue: f64,
        /// Its largest eigenvalue.
        max_eigenvalue: f64,
        /// The largest components of the motion with negative inertia (unit length).
        direction: Vec<Located>,
        /// Coordinates.
        q: Vec<f64>,
    },
    /// A generated function or the solve produced a NaN or infinite value.
    NonFinite {
        /// Which quantity was not finite (`"forces"`, `"accelerations"`, …).
        what: &'static str,
        /// Time of the evaluation.
        t: f64,
        /// The first non-finite entries (at most three).
        entries: Vec<Located>,
    },
}

impl fmt::Display for DynamicsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynamicsError::InvalidOptions(why) => write!(f, "invalid dynamics options: {why}"),
            DynamicsError::Kinematics(e) => fmt::Display::fmt(e, f),
            DynamicsError::SingularReducedMass { t, direction, .. } => {
                write!(
                    f,
                    "reduced mass matrix DᵀMD is singular at t = {t}: a motion allowed by the \
                     constraints has no inertia, largest components "
                )?;
                list(f, direction)
            }
            DynamicsError::SingularAugmented { t, direction, .. } => {
                write!(
                    f,
                    "augmented Lagrange matrix [M -C_Jᵀ; C_J 0] is singular at t = {t}, \
                     largest components of the singular direction "
                )?;
                list(f, direction)
            }
            DynamicsError::IndefiniteMass {
                t,
                matrix,
                min_eigenvalue,
                max_eigenvalue,
                direction,
                ..
            } => {
                write!(
                    f,
                    "mass matrix is not positive definite on the constrained motions at t = {t}: \
                     {matrix} has eigenvalues in [{min_eigenvalue:.3e}, {max_eigenvalue:.3e}] \
                     (negative mass or inertia?), largest components of the offending motion "
                )?;
                list(f, direction)
            }
            DynamicsError::NonFinite { what, t, entries } => {
                write!(f, "non-finite {what} at t = {t}")?;
                if !entries.is_empty() {
                    write!(f, ": ")?;
                    list(f, entries)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for DynamicsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the kinematic error's text is this error's text.
            DynamicsError::Kinematics(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<KinematicsError> for DynamicsError {
    fn from(e: KinematicsError) -> Self {
        DynamicsError::Kinematics(e)
    }
}

/// Failure of an ODE integration ([`crate::ode`]); `E` is the error type of the system.
#[derive(Debug, Clone, PartialEq)]
pub enum OdeError<E> {
    /// The options or the time span are unusable.
    InvalidOptions(&'static str),
    /// The step size fell below the smallest step the time resolution allows.
    StepSizeUnderflow {
        /// Time at which the integration stopped.
        t: f64,
        /// The step size that was too small.
        h: f64,
    },
    /// The maximum number of steps was reached before the end time.
    MaxSteps {
        /// Time at which the integration stopped.
        t: f64,
        /// Steps taken (accepted + rejected).
        steps: usize,
    },
    /// The state became NaN or infinite with a step that cannot be reduced (fixed-step
    /// methods) or at the initial point.
    NonFinite {
        /// Time at which it was detected.
        t: f64,
    },
    /// The right-hand side or the post-step projection failed (the message says when;
    /// [`std::error::Error::source`] gives the system's error).
    System {
        /// Time of the failing evaluation.
        t: f64,
        /// The system's error.
        source: E,
    },
}

impl<E: fmt::Display> fmt::Display for OdeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OdeError::InvalidOptions(why) => write!(f, "invalid integrator options: {why}"),
            OdeError::StepSizeUnderflow { t, h } => {
                write!(f, "step size underflow at t = {t} (h = {h:.3e})")
            }
            OdeError::MaxSteps { t, steps } => {
                write!(f, "maximum number of steps ({steps}) reached at t = {t}")
            }
            OdeError::NonFinite { t } => write!(f, "non-finite state at t = {t}"),
            // The cause is returned by `source()`, not repeated here.
            OdeError::System { t, .. } => write!(f, "the system failed at t = {t}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for OdeError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OdeError::System { source, .. } => Some(source),
            _ => None,
        }
    }
}
